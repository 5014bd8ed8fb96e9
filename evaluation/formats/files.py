"""Runners' files read as what they claim to be: a regular file (a FIFO would block and a device never
end), with a size bound on what is held at once, and JSON parsed with a depth limit.

A file that is not a regular file, or larger than its bound, is refused with one line naming it
(`PredictionsError`). Within a JSON Lines file each line is judged on its own: a line longer than
MAX_LINE, not JSON, or nested deeper than `ctxrobust.jsontext.MAX_DEPTH` (a nesting bomb) is one
problem of that line, and the other lines are still read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

from ctxrobust.errors import PredictionsError
from ctxrobust.evaluation.report import plain
from ctxrobust.jsontext import MAX_DEPTH, TooDeep, loads

MAX_LINE = 64 * 1024 * 1024  # bytes of one JSON line held in memory (a batch output line is a few KB)
BOM = b"\xef\xbb\xbf"
TOO_DEEP = f"JSON nested more than {MAX_DEPTH} levels deep; not read"  # a nesting bomb: one problem of its line
NOT_JSON = "not valid JSON"
NOT_UTF8 = "not UTF-8 text (convert the file to UTF-8)"
_SKIP = 1 << 20


def size_text(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


class NotRegular(PredictionsError):
    """The path names a FIFO, device, folder or other file that is not a regular file."""


def open_regular(path: Path, what: str = "", hint: str = "; give a regular file") -> BinaryIO:
    """`path` opened for binary reading, if it is a regular file: the open never waits (O_NONBLOCK, so a FIFO
    without a writer does not block it), and a FIFO, device or folder is refused before anything is read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise PredictionsError(f"{plain(path)}: cannot read{what} ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or other special file"
            raise NotRegular(f"{plain(path)}: is {kind}, not a regular file{what}{hint}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int, what: str = "", hint: str = "") -> bytes:
    """The whole of a regular file of at most `limit` bytes (checked before reading, and while reading, for a
    file that grows)."""
    with open_regular(path, what, hint or "; give a regular file") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(limit + 1) if size <= limit else b""
        if size > limit or len(data) > limit:
            raise PredictionsError(
                f"{plain(path)}: {size_text(max(size, len(data)))}{what}, more than the {size_text(limit)} read into memory" + hint
            )
    return data


def lines(handle: BinaryIO, limit: int = MAX_LINE) -> Iterator[tuple[int, bytes | None]]:
    """(1-based line number, raw line) of every non-blank line, the first one without a UTF-8 byte-order mark;
    None in place of a line longer than `limit` bytes (read past in blocks, never held whole)."""
    number = 0
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) > limit:
            while not raw.endswith(b"\n"):
                raw = handle.readline(_SKIP)
                if not raw:
                    break
            yield number, None
            continue
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        if raw.strip():
            yield number, raw


def long_line(limit: int = MAX_LINE) -> str:
    return f"longer than {size_text(limit)}; not read"


def parse(raw: bytes | str):
    """(value, None) of a JSON text, or (None, why not): not UTF-8, not JSON, or nested too deep."""
    try:
        return loads(raw), None
    except TooDeep:
        return None, TOO_DEEP
    except UnicodeDecodeError:
        return None, NOT_UTF8
    except ValueError:
        return None, NOT_JSON
