"""The run's resumable cache: one JSON line per finished request, appended and flushed as each
answer arrives, keyed by the sha256 of the request (its id and its chat-completions body), so a
killed run resumes without resending what it finished and a changed request is asked again.

The cache is opened without following a link (a link could point into a frozen release), must be a
regular file with no other hard link, and is locked while a run uses it: a second run on the same
cache is refused at once. A line whose answer is not text (a poisoned or hand-edited entry) is not
used: its request is asked again and the new line, appended later, is the one read next time.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
import time
from pathlib import Path

from ctxrobust import jsontext
from ctxrobust.canonical import dumps
from ctxrobust.errors import CtxRobustError

try:
    import fcntl
except ImportError:  # not POSIX: runs are not locked against each other
    fcntl = None

SYNC_SECONDS = 1.0  # fsync at most this often (every line is flushed at once)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def request_key(request_id: str, body: dict) -> str:
    return hashlib.sha256(dumps({"id": request_id, "body": body}).encode("utf-8")).hexdigest()


def _is_text(value) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _link(path: Path, what: str) -> CtxRobustError:
    return CtxRobustError(
        f"{what} {path}: is a symbolic link; a run never writes through a link (it could point into a frozen release); "
        "remove it or name a regular file"
    )


def refuse_link(path: Path, what: str) -> None:
    """One line if `path` is a symbolic link (dangling or not)."""
    if os.path.islink(path):
        raise _link(path, what)


def open_regular(path: Path, what: str, flags: int) -> int:
    """A descriptor of `path` opened (created if absent) without following a link: a link, a folder, a
    FIFO or device, or a file with another hard link is refused with one line naming `what`."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        found = None
    if found is not None and stat.S_ISLNK(found.st_mode):
        raise _link(path, what)
    if found is not None and not stat.S_ISREG(found.st_mode):
        kind = "a folder" if stat.S_ISDIR(found.st_mode) else "not a regular file (a FIFO or device)"
        raise CtxRobustError(f"{what} {path}: is {kind}; name a regular file")
    try:
        fd = os.open(path, flags | os.O_CREAT | NOFOLLOW | NONBLOCK | CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link(path, what) from None
        raise CtxRobustError(f"{what} {path}: cannot be opened ({exc.strerror or exc})") from None
    opened = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(opened.st_mode):
        problem = "is not a regular file (a FIFO or device); name a regular file"
    elif opened.st_nlink > 1:
        problem = "has another hard link (it could be a release's file); remove it or name another file"
    if problem is not None:
        os.close(fd)
        raise CtxRobustError(f"{what} {path}: {problem}")
    return fd


def try_lock(fd: int) -> bool:
    """An exclusive lock on an open file, without waiting; False if another process holds one."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:  # a file system without locks: runs there are not locked against each other
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL):
            return True
        raise
    return True


class Cache:
    def __init__(self, path: Path, what: str = "--cache"):
        self.path = path
        self.entries: dict[str, dict] = {}
        self.dropped: list[int] = []  # line numbers of entries without a text answer (asked again)
        self._lock = threading.Lock()
        self._synced = time.monotonic()
        fd = open_regular(path, what, os.O_RDWR | os.O_APPEND)
        try:
            if not try_lock(fd):
                raise CtxRobustError(
                    f"{what} {path}: another `ctxrobust run` is using this cache; wait for it to end, or give this run another --cache"
                )
            self._load(fd)
        except BaseException:
            os.close(fd)
            raise
        self._handle = os.fdopen(fd, "a", encoding="utf-8", newline="\n")

    def _load(self, fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        end = data.rfind(b"\n") + 1
        if end < len(data):  # a line cut short when the last run was killed: drop it
            os.ftruncate(fd, end)
        for number, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
            if not raw.strip():
                continue
            try:
                entry = jsontext.loads(raw)
            except ValueError:  # not JSON, or nested too deeply
                entry = None
            if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
                raise CtxRobustError(f"{self.path}:{number}: not a cache line; delete the cache file to start the run afresh")
            if not _is_text(entry.get("response")):
                self.dropped.append(number)
                continue
            self.entries[entry["key"]] = entry

    def get(self, key: str) -> dict | None:
        return self.entries.get(key)

    def put(self, key: str, request_id: str, text: str, served_model: str | None, finish_reason: str | None) -> None:
        if not _is_text(text):
            raise ValueError("a cached answer is text")
        entry = {"key": key, "id": request_id, "response": text, "served_model": served_model, "finish_reason": finish_reason}
        line = dumps(entry) + "\n"
        with self._lock:
            self._handle.write(line)
            self._handle.flush()
            if time.monotonic() - self._synced >= SYNC_SECONDS:
                os.fsync(self._handle.fileno())
                self._synced = time.monotonic()
            self.entries[key] = entry

    def close(self) -> None:
        with self._lock:
            if not self._handle.closed:
                try:
                    self._handle.flush()
                    os.fsync(self._handle.fileno())
                finally:
                    self._handle.close()
