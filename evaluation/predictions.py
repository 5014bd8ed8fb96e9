"""Streaming predictions reader: every bad line reported by number, nothing silently dropped."""
from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Generic, Hashable, Iterator, TypeVar

from pydantic import BaseModel, ValidationError

from ctxrobust.errors import PredictionsError

Row = TypeVar("Row", bound=BaseModel)
MAX_LISTED = 200


@dataclass(frozen=True)
class Problem:
    line: int | None  # None: about the file as a whole (e.g. missing rows)
    message: str

    def render(self, path: Path) -> str:
        return f"{path}:{self.line}: {self.message}" if self.line is not None else f"{path}: {self.message}"


def _describe(error: ValidationError, raw: bytes) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if first["type"] == "json_invalid":
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return "not UTF-8 text (convert the file to UTF-8)"
        return "not valid JSON"
    if not first["loc"]:
        return "not a JSON object (expected one predictions row per line)"
    if first["type"] == "missing":
        return f"missing field {where!r}"
    if first["type"] == "extra_forbidden":
        return f"unknown field {where!r}"
    return f"field {where!r}: {first['msg']}"


@dataclass
class PredictionsReader(Generic[Row]):
    """Iterate the valid rows of a JSONL predictions file as `model` instances, collecting problems.

    `check(row)` returns a message for a row that is well-formed but wrong (unknown id, unknown
    condition); `key(row)` identifies a row for duplicate detection.
    """

    path: Path
    model: type[Row]
    check: Callable[[Row], str | None] | None = None
    key: Callable[[Row], Hashable] | None = None
    problems: list[Problem] = field(default_factory=list)
    rows: int = 0
    valid: int = 0
    sha256: str = ""

    def __iter__(self) -> Iterator[Row]:
        digest = hashlib.sha256()
        seen: dict[Hashable, int] = {}
        validate = self.model.model_validate_json
        try:
            handle = open(self.path, "rb")
        except OSError as exc:
            raise PredictionsError(f"{self.path}: cannot read ({exc.strerror})") from None
        with handle:
            for number, raw in enumerate(handle, start=1):
                digest.update(raw)
                if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]  # a UTF-8 byte-order mark, as some editors write
                if not raw.strip():
                    continue
                self.rows += 1
                try:
                    row = validate(raw)
                except ValidationError as exc:
                    self.problems.append(Problem(number, _describe(exc, raw)))
                    continue
                message = self.check(row) if self.check else None
                if message:
                    self.problems.append(Problem(number, message))
                    continue
                if self.key is not None:
                    k = self.key(row)
                    if k in seen:
                        self.problems.append(Problem(number, f"duplicate row (same key as line {seen[k]})"))
                        continue
                    seen[k] = number
                self.valid += 1
                yield row
        self.sha256 = digest.hexdigest()

    @property
    def excluded(self) -> int:
        return self.rows - self.valid

    def finish(self, strict: bool, extra: list[Problem] | None = None) -> dict:
        """Report problems on stderr; under `strict`, refuse to go on if there are any. Returns the report's
        "predictions" block."""
        if self.rows == 0:
            raise PredictionsError(f"{self.path}: no prediction rows (the file is empty); write one JSON object per line")
        problems = self.problems + list(extra or [])
        if self.valid == 0:
            for problem in problems[:MAX_LISTED]:
                print(problem.render(self.path), file=sys.stderr)
            raise PredictionsError(f"{self.path}: none of its {self.rows} row(s) is a valid prediction (problems listed above); nothing to score")
        listed = [p.render(self.path) for p in problems[:MAX_LISTED]]
        if len(problems) > MAX_LISTED:
            listed.append(f"{self.path}: ... and {len(problems) - MAX_LISTED} more problem(s)")
        for line in listed:
            print(line, file=sys.stderr)
        if strict and problems:
            raise PredictionsError(f"{self.path}: {len(problems)} problem(s) listed above; --strict refuses to score it (fix the rows, or drop --strict to score the valid ones)")
        if problems:
            print(f"{self.path}: scored {self.valid} valid row(s); {self.excluded} excluded, see 'problems' in the report", file=sys.stderr)
        return {
            "path": str(self.path),
            "sha256": self.sha256,
            "rows": self.rows,
            "excluded": self.excluded,
            "problems": [{"line": p.line, "message": p.message} for p in problems],
        }
