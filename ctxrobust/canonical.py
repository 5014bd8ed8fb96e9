"""Canonical JSON: the one byte representation every hashed file uses."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from ctxrobust import jsontext
from ctxrobust.errors import CtxRobustError


def dumps(obj: Any) -> str:
    """Sorted keys, no insignificant whitespace, UTF-8 text, no NaN."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps_pretty(obj: Any) -> str:
    """Canonical but indented, for files people read (manifest.json)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def sort_by_id(rows: Iterable[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: str(row["id"]))


def write_jsonl(path: Path, rows: Iterable[dict]) -> int:
    """Write rows sorted by id, one canonical object per line; returns the row count."""
    ordered = sort_by_id(rows)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for row in ordered:
            handle.write(dumps(row))
            handle.write("\n")
    return len(ordered)


def write_json(path: Path, value: Any) -> int | None:
    """Write a JSON file: a list as a JSON array with one canonical record per line (readable with plain
    `json.load`, and diffable), anything else indented; returns the record count of a list, else None."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        if not isinstance(value, list):
            handle.write(dumps_pretty(value))
            return None
        handle.write("[")
        for number, record in enumerate(value):
            handle.write(",\n" if number else "\n")
            handle.write(dumps(record))
        handle.write("\n]\n")
    return len(value)


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (1-based line number, object); a bad line is an error naming file and line."""
    with open(path, "rb") as handle:
        yield from parse_jsonl(enumerate(handle, start=1), path)


def parse_jsonl(lines: Iterable[tuple[int, bytes]], path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) of numbered raw lines; a bad line is an error naming file and line."""
    for number, raw in lines:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CtxRobustError(f"{path}:{number}: not UTF-8; convert the file to UTF-8") from None
        if not line.strip():
            continue
        try:
            yield number, jsontext.loads(line)
        except ValueError as exc:  # not JSON, or nested deeper than any record (a nesting bomb)
            raise CtxRobustError(f"{path}:{number}: not valid JSON ({getattr(exc, 'msg', exc)}); fix or remove the line") from None


def read_jsonl(path: Path) -> list[Any]:
    return [obj for _, obj in iter_jsonl(path)]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
