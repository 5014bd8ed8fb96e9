"""The run's resumable cache: one JSON line per finished request, appended and flushed as each
answer arrives, keyed by the sha256 of the request (its id and its chat-completions body), so a
killed run resumes without resending what it finished and a changed request is asked again."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path

from ctxrobust.canonical import dumps
from ctxrobust.errors import CtxRobustError

SYNC_SECONDS = 1.0  # fsync at most this often (every line is flushed at once)


def request_key(request_id: str, body: dict) -> str:
    return hashlib.sha256(dumps({"id": request_id, "body": body}).encode("utf-8")).hexdigest()


class Cache:
    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._synced = time.monotonic()
        self._load()
        self._handle = open(path, "a", encoding="utf-8", newline="\n")

    def _load(self) -> None:
        if not self.path.exists():
            return
        if not self.path.is_file():
            raise CtxRobustError(f"{self.path}: the cache is not a regular file; give --cache a file path")
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):  # a line cut short when the last run was killed: drop it
            with open(self.path, "r+b") as handle:
                handle.truncate(end)
        for number, raw in enumerate(data[:end].splitlines(), start=1):
            try:
                entry = json.loads(raw)
                self.entries[entry["key"]] = entry
            except (ValueError, KeyError, TypeError):
                raise CtxRobustError(f"{self.path}:{number}: not a cache line; delete the cache file to start the run afresh") from None

    def get(self, key: str) -> dict | None:
        return self.entries.get(key)

    def put(self, key: str, request_id: str, text: str, served_model: str | None, finish_reason: str | None) -> None:
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
                self._handle.flush()
                os.fsync(self._handle.fileno())
                self._handle.close()
