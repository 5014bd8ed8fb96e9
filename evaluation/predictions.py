"""Streaming predictions reader: every bad line reported by number, nothing silently dropped.

A line is read by pydantic's JSON parser (`parse_line` is the same parser for a caller that must judge a
line before the reader does): a document nested deeper than it reads (a nesting bomb) is one problem of
its line, never a RecursionError. File names in messages are written with `plain` (no terminal escape
reaches stderr)."""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Generic, Hashable, Iterator, TypeVar

from pydantic import BaseModel, ValidationError

from ctxrobust.errors import PredictionsError
from ctxrobust.evaluation.report import MAX_SHOWN, has_control, path_text, plain
from ctxrobust.evaluation.rows import (  # noqa: F401 (the file-level readers, named here too for the modules that import them from here)
    NOT_JSON,
    NOT_REGULAR,
    NOT_UTF8,
    SNIFF,
    TOO_DEEP,
    encoding_problem,
    json_problem,
    open_regular,
    parse_line,
)

Row = TypeVar("Row", bound=BaseModel)
MAX_LISTED = 200
MAX_MESSAGE = 400  # characters of one problem message; a long value in it is cut, with its length
MAX_MODEL_NAME = MAX_SHOWN
_KEY = re.compile(rb'"\s*:')
NOT_OBJECT = "not a JSON object (expected one predictions row per line)"
# model names a caller vouches for (the submissions layer's "<name> [<file>]"): made from a name that passed
# model_name_problem, they may be longer than MAX_MODEL_NAME
_VOUCHED: contextvars.ContextVar[Collection[str]] = contextvars.ContextVar("vouched_model_names", default=frozenset())


def to_stderr(line: str) -> None:
    """Print one of a scorer's lines for the person running it (the command's standard error)."""
    print(line, file=sys.stderr)


def scored_line(valid: int, excluded: int) -> str:
    """The notice of how many rows were scored; it points at the report's problems only when rows were left out."""
    if not excluded:
        return f"scored {valid} valid row(s); none excluded"
    return f"scored {valid} valid row(s); {excluded} excluded, see 'problems' in the report"


@dataclass
class Findings:
    """What a scorer finds in its rows, in the order found: typed problems and notices. `echo`, if given,
    gets each listed one as a line as soon as it is found (the command prints them before any figure)."""

    echo: Callable[[str], None] | None = None
    problems: list[Any] = field(default_factory=list)  # evaluation.rows.Problem
    notices: list[Any] = field(default_factory=list)  # evaluation.rows.Notice

    def problem(self, problem, listed: bool = True) -> None:
        self.problems.append(problem)
        if listed and self.echo is not None:
            self.echo(problem.render())

    def notice(self, file: str, kind: str, message: str) -> None:
        from ctxrobust.evaluation.rows import Notice

        notice = Notice(file, kind, message)
        self.notices.append(notice)
        if self.echo is not None:
            self.echo(notice.render())

    def scored(self, report: dict):
        """The scorer's result (`evaluation.rows.Scored`): `report` with what was found."""
        from ctxrobust.evaluation.rows import Scored

        return Scored(report, self.problems, self.notices)


def rows_scorer(scorer: Callable) -> Callable:
    """(release, rows, options, echo) -> Scored for a dataset's `score`: its module's `score_rows`, or, for a
    scorer without one (it prints its own lines), its report with the problems its entries hold
    ({"line", "message", "model"?, "same_as"?}; kind "row" with a line, else "file")."""
    import importlib

    found = getattr(importlib.import_module(scorer.__module__), "score_rows", None)
    if found is not None:
        return found

    def plain_scorer(release, rows, options, echo=None):
        from ctxrobust.evaluation.rows import as_rows

        report = scorer(release, rows, options)
        block = report.get("predictions") if isinstance(report, dict) else None
        entries = block.get("problems", []) if isinstance(block, dict) else []
        label = as_rows(rows).label
        typed = [
            Problem(e.get("line"), str(e.get("message", "")), e.get("model"), e.get("same_as")).typed(label)
            for e in entries
            if isinstance(e, dict)
        ]
        return Findings(None, typed).scored(report)

    return plain_scorer


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


@contextlib.contextmanager
def vouched_model_names(names: Collection[str]):
    """Within the block, readers accept these model names whatever their length (each was made from a
    name that passed model_name_problem, with a suffix that tells submissions apart)."""
    token = _VOUCHED.set(names)
    try:
        yield
    finally:
        _VOUCHED.reset(token)


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
    line: int | str | None  # None: about the file as a whole (e.g. missing rows)
    message: str
    model: str | None = None  # the model a problem about the file is of (so a caller places it without reading the message)
    same_as: int | str | None = None  # a duplicate row: where the row with the same key is
    kind: str | None = None  # default: "row" with a line, else "file"; "missing" for items without a prediction
    at: tuple = ()  # a problem of several rows said in one line (request ids of another release): their lines

    def as_dict(self) -> dict:
        out = {"line": self.line, "message": self.message}
        if self.model is not None:
            out["model"] = self.model
        if self.same_as is not None:
            out["same_as"] = self.same_as
        return out

    def __post_init__(self):
        object.__setattr__(self, "message", plain(self.message, MAX_MESSAGE))

    def render(self, path: Path | str) -> str:
        shown = path if isinstance(path, str) else plain(path)
        return f"{shown}:{self.line}: {self.message}" if self.line is not None else f"{shown}: {self.message}"

    def typed(self, file: str):
        """This problem as an `evaluation.rows.Problem` of `file`."""
        from ctxrobust.evaluation.rows import Problem as Found

        kind = self.kind or ("row" if self.line is not None else "file")
        return Found(file, self.line, kind, self.message, self.model, self.same_as, self.at)


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
    """Iterate the valid rows of a predictions source (a JSON Lines path or an `evaluation.rows.Rows`) as
    `model` instances, collecting problems.

    `check(row)` returns a message for a row that is well-formed but wrong (unknown id, unknown
    condition); `key(row)` identifies a row for duplicate detection; `request_ids` reads the request
    ids `prompts` writes as the items they name.
    """

    path: Any
    model: type[Row]
    check: Callable[[Row], str | None] | None = None
    key: Callable[[Row], Hashable] | None = None
    request_ids: Any = None  # evaluation.rows.RequestIds
    problems: list[Problem] = field(default_factory=list)
    rows: int = 0
    valid: int = 0
    sha256: str = ""

    def __post_init__(self):
        from ctxrobust.evaluation.rows import as_rows

        self.source = as_rows(self.path)

    @property
    def label(self) -> str:
        return self.source.label

    def __iter__(self) -> Iterator[Row]:
        seen: dict[Hashable, int] = {}
        validate = self.model.model_validate_json
        vouched = _VOUCHED.get()
        requests = self.request_ids
        foreign: list[int | str] = []
        for number, raw in self.source.raw():
            self.rows += 1
            unreadable = getattr(raw, "problem", None)  # evaluation.rows.Unreadable: a record not JSON
            if unreadable is not None:
                self.problems.append(Problem(number, unreadable))
                continue
            checked = raw
            if requests is not None and b"/" in raw:
                value, problem = parse_line(raw)
                if problem is None:
                    native, message = requests.rewrite(value)
                    if message == "foreign":
                        foreign.append(number)
                        continue  # counted; one line for them all (finish)
                    if message:
                        self.problems.append(Problem(number, message))
                        continue
                    if native is not None:
                        repeated = duplicate_key(raw, len(value))
                        if repeated is not None:
                            self.problems.append(Problem(number, duplicate_message(repeated)))
                            continue
                        checked = json.dumps(native, ensure_ascii=False).encode("utf-8", "surrogatepass")
            try:
                row = validate(checked)
            except ValidationError as exc:
                self.problems.append(Problem(number, _describe(exc, raw)))
                continue
            if checked is raw:
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
                    first = seen[k]
                    where = f"line {first}" if isinstance(first, int) else first
                    self.problems.append(Problem(number, f"duplicate row (same key as {where})", same_as=first))
                    continue
                seen[k] = number
            self.valid += 1
            yield row
        self.sha256 = self.source.sha256
        if requests is not None and requests.foreign:
            self.problems.insert(0, Problem(None, requests.problem(), at=tuple(foreign)))

    @property
    def excluded(self) -> int:
        return self.rows - self.valid

    def finish(self, strict: bool, extra: list[Problem] | None = None, found: Findings | None = None) -> dict:
        """Hand every problem to `found` (default: printed on standard error), the first MAX_LISTED of them
        listed; under `strict`, refuse to go on if there are any. Returns the report's "predictions" block."""
        shown = self.label
        found = found if found is not None else Findings(to_stderr)
        if self.rows == 0:
            raise PredictionsError(f"{shown}: no prediction rows (the file is empty); write one JSON object per line")
        problems = self.problems + list(extra or [])
        for k, problem in enumerate(problems):
            found.problem(problem.typed(shown), listed=k < MAX_LISTED)
        if self.valid == 0:
            error = PredictionsError(
                f"{shown}: none of its {self.rows} row(s) is a valid prediction (problems listed above); nothing to score"
            )
            error.problems = [p.typed(shown) for p in problems]  # for a caller that places them
            raise error
        if len(problems) > MAX_LISTED:
            found.notice(shown, "more", f"... and {len(problems) - MAX_LISTED} more problem(s)")
        if strict and problems:
            if all(p.kind == "missing" for p in problems):  # every row is fine: items the run did not ask for
                hint = "pass --requests with the run's requests file to score only the items it asked for, or drop --strict"
            else:
                hint = "fix the rows, or drop --strict to score the valid ones"
            error = PredictionsError(f"{shown}: {len(problems)} problem(s) listed above; --strict refuses to score it ({hint})")
            error.problems = [p.typed(shown) for p in problems]
            raise error
        if problems:
            found.notice(shown, "scored", scored_line(self.valid, self.excluded))
        path = self.source.path
        return {
            "path": path_text(path) if path is not None else shown,
            "sha256": self.sha256,
            "rows": self.rows,
            "excluded": self.excluded,
            "problems": [p.as_dict() for p in problems],
        }
