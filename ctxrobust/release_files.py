"""The one place that opens a release's files.

A release file is named by a plain file name directly inside the release folder (no folder part,
no `..`, no control characters) and is a regular file: never a symbolic link, FIFO, device, socket
or folder. Both are checked before the file is opened, and the open itself refuses to follow a
link or to wait on a FIFO, so a hostile release cannot make a command read outside its folder or
hang. `validate`, `prompts`, `score`, `push` and the build read release files through here only.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

from ctxrobust.errors import CtxRobustError

PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,254}")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def shown(name: object, limit: int = 80) -> str:
    """A name as it can be printed on one line: repr-escaped, cut with its length when long."""
    text = repr(str(name)) if not isinstance(name, str) else repr(name)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(str(name))} characters)"


def printable(text: str, limit: int = 4000) -> str:
    """One line for a terminal: control and format characters as escapes, cut (with its length) past `limit`."""
    cut = len(text) > limit
    shown_text = text[:limit] if cut else text
    if not shown_text.isprintable():
        shown_text = "".join(c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") for c in shown_text)
    return shown_text + (f"... ({len(text)} characters)" if cut else "")


def name_problem(name: object) -> str | None:
    """Why `name` is not a plain file name directly inside a release folder, or None if it is one."""
    if not isinstance(name, str):
        return f"file name {shown(name)} is not a string"
    if "/" in name or "\\" in name or name in (".", ".."):
        return f"file name {shown(name)} is not a plain file name inside the release folder (it has a folder part)"
    if not PLAIN_NAME.fullmatch(name):
        return f"file name {shown(name)} is not a plain file name (letters, digits, '.', '_', '+', '-', starting with a letter or digit)"
    return None


def kind_of(mode: int) -> str | None:
    """What a file is when it is not a regular file ("a symbolic link", "a FIFO", ...), else None."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def entry_problem(folder: Path, name: str) -> str | None:
    """Why folder/name cannot be read as a release file (bad name, special file, missing), or None."""
    problem = name_problem(name)
    if problem:
        return problem
    try:
        mode = os.lstat(Path(folder) / name).st_mode
    except FileNotFoundError:
        return "missing from the release"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    kind = kind_of(mode)
    return f"is {kind}; a release holds regular files only" if kind else None


def path_of(folder: Path, name: str) -> Path:
    """folder/name after checking the name (not the file): for messages and for existence tests."""
    problem = name_problem(name)
    if problem:
        raise CtxRobustError(f"{folder}: {problem}; the release is corrupted, rebuild it")
    return Path(folder) / name


def exists(folder: Path, name: str) -> bool:
    """Whether folder/name is there at all (a link or special file counts: opening it is refused)."""
    return os.path.lexists(path_of(folder, name))


def open_binary(folder: Path, name: str) -> BinaryIO:
    """Open a release file for reading, refusing bad names and anything but a regular file."""
    path = path_of(folder, name)
    problem = entry_problem(folder, name)
    if problem:
        raise CtxRobustError(f"{path}: {problem}; the release is corrupted, rebuild it")
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise CtxRobustError(f"{path}: cannot be read ({exc.strerror}); the release is corrupted, rebuild it") from None
    try:
        kind = kind_of(os.fstat(fd).st_mode)  # the file opened, not the name checked: nothing swapped in between
        if kind:
            raise CtxRobustError(f"{path}: is {kind}; a release holds regular files only; the release is corrupted, rebuild it")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(folder: Path, name: str, limit: int | None = None) -> bytes:
    """A release file's bytes; with `limit`, a file longer than that is refused before it fills memory."""
    with open_binary(folder, name) as handle:
        if limit is None:
            return handle.read()
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise CtxRobustError(
            f"{path_of(folder, name)}: more than {limit} bytes, far more than a release's {name} holds; the release is corrupted, rebuild it"
        )
    return data


def read_text(folder: Path, name: str, limit: int | None = None) -> str:
    path = path_of(folder, name)
    try:
        return read_bytes(folder, name, limit).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CtxRobustError(f"{path}: not UTF-8 (byte {exc.start}); the release is corrupted, rebuild it") from None


def read_json(folder: Path, name: str, limit: int | None = None):
    """A release's JSON file parsed (through the checked opener, with a depth limit and optionally a size
    limit); one line naming the file otherwise: a nesting bomb is refused like any other malformed file,
    never a RecursionError."""
    from ctxrobust.jsontext import MAX_DEPTH, TooDeep, loads

    path = path_of(folder, name)
    text = read_text(folder, name, limit)
    try:
        return loads(text)
    except TooDeep:
        raise CtxRobustError(f"{path}: JSON nested more than {MAX_DEPTH} levels deep; the release is corrupted, rebuild it") from None
    except ValueError as exc:
        raise CtxRobustError(f"{path}: not valid JSON ({exc}); the release is corrupted, rebuild it") from None


def sha256(folder: Path, name: str) -> str:
    digest = hashlib.sha256()
    with open_binary(folder, name) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def size(folder: Path, name: str) -> int:
    with open_binary(folder, name) as handle:
        return os.fstat(handle.fileno()).st_size


def iter_lines(folder: Path, name: str) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw line) of a release file."""
    with open_binary(folder, name) as handle:
        yield from enumerate(handle, start=1)


def copy(folder: Path, name: str, target: Path) -> None:
    """Copy a release file to `target` (a new file in a folder the caller made)."""
    with open_binary(folder, name) as source, open(target, "xb") as out:
        for block in iter(lambda: source.read(1 << 20), b""):
            out.write(block)
