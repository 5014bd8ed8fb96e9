"""Where a command may write, and how: paths checked before any work, files written atomically.

An output is never one of the command's own inputs (the predictions, a benchmark file) nor inside a
release folder (frozen once built), and never a folder, FIFO or device. It is written to a temporary
file beside it, flushed to disk and renamed over the old file, so a failure midway (a full disk, an
interrupt) leaves the old file as it was and no partial file behind; the error names the path.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ctxrobust.errors import CtxRobustError

RELEASE_MARKERS = ("manifest.json", "SHA256SUMS")


def release_folder_above(path: Path) -> Path | None:
    """The release folder (one holding manifest.json and SHA256SUMS) that `path` is in or is, if any."""
    for folder in [Path(path), *Path(path).parents]:
        if all(os.path.lexists(folder / marker) for marker in RELEASE_MARKERS):
            return folder
    return None


def _same_file(a: Path, b: Path) -> bool:
    """The same file, or (when one is not written yet) the same path once links are resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output(output: str | Path, flag: str = "-o", inputs: Iterable[str | Path | None] = ()) -> Path:
    """An output path, checked before any work: its folder exists, it is no folder or special file, no input
    of the same command, and not inside a release folder."""
    target = Path(output)
    if not target.parent.is_dir():
        raise CtxRobustError(f"{target}: the folder {target.parent} does not exist; create it or write elsewhere")
    if os.path.lexists(target) and not target.is_symlink() and not target.is_file():
        kind = "a folder" if target.is_dir() else "not a regular file"
        raise CtxRobustError(f"{flag} {target}: is {kind}; give a file name to write")
    for given in inputs:
        if given is not None and _same_file(target, Path(given)):
            raise CtxRobustError(
                f"{flag} {target}: is also an input of this command ({given}); writing it would destroy that input, write elsewhere"
            )
    frozen = release_folder_above(target.resolve().parent) or release_folder_above(target.parent.absolute())
    if frozen is not None:
        raise CtxRobustError(f"{flag} {target}: is inside the release folder {frozen}, which is frozen; write outside it")
    return target


def _fail(target: Path, exc: OSError) -> CtxRobustError:
    return CtxRobustError(f"{target}: cannot write ({exc.strerror or exc}); the previous file, if any, is unchanged")


@contextmanager
def atomic_open(target: Path, mode: str = "w") -> Iterator[IO]:
    """A file handle whose content replaces `target` only when the block ends without error."""
    target = Path(target)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as exc:
        raise _fail(target, exc) from None
    done = False
    try:
        kwargs = {"encoding": "utf-8", "newline": "\n"} if "b" not in mode else {}
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
        done = True
    except OSError as exc:
        raise _fail(target, exc) from None
    finally:
        if not done:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def write_text(target: Path, text: str) -> None:
    with atomic_open(target, "w") as handle:
        handle.write(text)


def write_bytes(target: Path, data: bytes) -> None:
    with atomic_open(target, "wb") as handle:
        handle.write(data)
