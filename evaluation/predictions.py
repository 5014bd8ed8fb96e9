"""Streaming predictions reader: every bad line reported by number, nothing silently dropped.

A line is read by pydantic's JSON parser (`parse_line` is the same parser for a caller that must judge a
line before the reader does): a document nested deeper than it reads (a nesting bomb) is one problem of
its line, never a RecursionError. File names in messages are written with `plain` (no terminal escape
reaches stderr)."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Collection, Generic, Hashable, Iterator, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import from_json

from ctxrobust.errors import PredictionsError
from ctxrobust.evaluation.report import MAX_SHOWN, has_control, path_text, plain

Row = TypeVar("Row", bound=BaseModel)
MAX_LISTED = 200
MAX_MESSAGE = 400  # characters of one problem message; a long value in it is cut, with its length
MAX_MODEL_NAME = MAX_SHOWN
_KEY = re.compile(rb'"\s*:')
_SNIFF = 4096
SNIFF = _SNIFF  # bytes of a file's head that tell another encoding or a compressed file
NOT_JSON = "not valid JSON"
TOO_DEEP = "JSON nested more than 200 levels deep; not read"  # the parser's limit (a nesting bomb is one problem of its line)
NOT_UTF8 = "not UTF-8 text (convert the file to UTF-8)"
NOT_OBJECT = "not a JSON object (expected one predictions row per line)"
NOT_REGULAR = "is not a regular file (a FIFO, device or standard input cannot be scored); give the predictions JSON Lines file"
# model names a caller vouches for (the submissions layer's "<name> [<file>]"): made from a name that passed
# model_name_problem, they may be longer than MAX_MODEL_NAME
_VOUCHED: contextvars.ContextVar[Collection[str]] = contextvars.ContextVar("vouched_model_names", default=frozenset())


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)
    return dict(pairs)


def duplicate_key(raw: bytes, distinct: int) -> str | None:
    """A key that occurs twice in one object of the line, or None. `distinct` is the number of keys the
    row kept; a line with no more '"key":' marks than that cannot hold a duplicate, so it is not reparsed."""
    if len(_KEY.findall(raw)) <= distinct:
        return None
    try:
        json.loads(raw, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        return str(exc)
    except (ValueError, RecursionError):
        return None
    return None


def duplicate_message(key: str) -> str:
    return f"key {plain(key, 60)!r} occurs twice in the object; which value is meant is ambiguous, keep one"


def json_problem(message: str, raw: bytes) -> str:
    """The line's problem for a JSON parser's error `message` (pydantic's, which the readers use)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return NOT_UTF8
    return TOO_DEEP if "recursion limit" in message else NOT_JSON


def parse_line(raw: bytes) -> tuple[object, str | None]:
    """(value, None) of one JSON line, read by the parser the row models use (so a line is JSON here exactly
    when it is for them), or (None, the line's problem): not UTF-8, not JSON, or nested too deep (a
    nesting bomb is one problem of its line, never a RecursionError)."""
    try:
        return from_json(raw), None
    except ValueError as exc:
        return None, json_problem(str(exc), raw)


@contextlib.contextmanager
def vouched_model_names(names: Collection[str]):
    """Within the block, readers accept these model names whatever their length (each was made from a
    name that passed model_name_problem, with a suffix that tells submissions apart)."""
    token = _VOUCHED.set(names)
    try:
        yield
    finally:
        _VOUCHED.reset(token)


def open_regular(path: Path) -> BinaryIO:
    """A predictions file opened for binary reading, if it is a regular file: the open never waits
    (O_NONBLOCK: a FIFO without a writer does not block it) and a FIFO or device is refused before
    anything is read, with one PredictionsError naming it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise PredictionsError(f"{plain(path)}: cannot read ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PredictionsError(f"{plain(path)}: {NOT_REGULAR}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def encoding_problem(head: bytes) -> str | None:
    """What a file's first bytes say it is when it is not UTF-8 JSON Lines text (UTF-16, gzip, binary)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) >= 2 and (head[1:2] == b"\0" or head[0:1] == b"\0") and b"{" in head[:4]):
        return "is UTF-16 text, not UTF-8; convert it (e.g. `iconv -f UTF-16 -t UTF-8`) and score the converted file"
    if head.startswith(b"\x1f\x8b"):
        return "is gzip-compressed; decompress it (e.g. `gunzip`) and score the JSON Lines file"
    if head.startswith((b"PK\x03\x04", b"PAR1", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd")) or b"\0" in head:
        return "is a binary file, not JSON Lines text; give the predictions as UTF-8 JSON Lines (one object per line)"
    return None


def model_name_problem(name: str) -> str | None:
    """Why a model name cannot label a report's rows: empty after stripping spaces, control characters, too long."""
    if not name.strip():
        return "field 'model': empty after removing spaces; give the model a name"
    if has_control(name):
        return f"field 'model': {plain(name)!s} holds control or format characters; use a plain name"
    if len(name) > MAX_MODEL_NAME:
        return f"field 'model' is {len(name)} characters long, at most {MAX_MODEL_NAME}: {plain(name, 40)}"
    return None


@dataclass(frozen=True)
class Problem:
    line: int | None  # None: about the file as a whole (e.g. missing rows)
    message: str

    def __post_init__(self):
        object.__setattr__(self, "message", plain(self.message, MAX_MESSAGE))

    def render(self, path: Path) -> str:
        shown = plain(path)
        return f"{shown}:{self.line}: {self.message}" if self.line is not None else f"{shown}: {self.message}"


def _describe(error: ValidationError, raw: bytes) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if first["type"] == "json_invalid":
        return json_problem(str(first.get("msg", "")), raw)
    if not first["loc"]:
        return NOT_OBJECT
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
        handle = open_regular(self.path)
        vouched = _VOUCHED.get()
        with handle:
            problem = encoding_problem(handle.peek(_SNIFF)[:_SNIFF])
            if problem:
                raise PredictionsError(f"{plain(self.path)}: {problem}")
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
                repeated = duplicate_key(raw, len(row.model_fields_set))
                if repeated is not None:
                    self.problems.append(Problem(number, duplicate_message(repeated)))
                    continue
                name = getattr(row, "model", None)
                odd = model_name_problem(name) if isinstance(name, str) and name not in vouched else None
                if odd:
                    self.problems.append(Problem(number, odd))
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
        shown = plain(self.path)
        if self.rows == 0:
            raise PredictionsError(f"{shown}: no prediction rows (the file is empty); write one JSON object per line")
        problems = self.problems + list(extra or [])
        if self.valid == 0:
            for problem in problems[:MAX_LISTED]:
                print(problem.render(self.path), file=sys.stderr)
            error = PredictionsError(
                f"{shown}: none of its {self.rows} row(s) is a valid prediction (problems listed above); nothing to score"
            )
            error.problems = [{"line": p.line, "message": p.message} for p in problems]  # for a caller that places them
            raise error
        listed = [p.render(self.path) for p in problems[:MAX_LISTED]]
        if len(problems) > MAX_LISTED:
            listed.append(f"{shown}: ... and {len(problems) - MAX_LISTED} more problem(s)")
        for line in listed:
            print(line, file=sys.stderr)
        if strict and problems:
            raise PredictionsError(
                f"{shown}: {len(problems)} problem(s) listed above; --strict refuses to score it (fix the rows, or drop --strict to score the valid ones)"
            )
        if problems:
            print(f"{shown}: scored {self.valid} valid row(s); {self.excluded} excluded, see 'problems' in the report", file=sys.stderr)
        return {
            "path": path_text(self.path),
            "sha256": self.sha256,
            "rows": self.rows,
            "excluded": self.excluded,
            "problems": [{"line": p.line, "message": p.message} for p in problems],
        }
