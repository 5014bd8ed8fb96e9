"""Prediction rows from anywhere, each with its origin, and the problems found in them.

A `Rows` source yields `(origin, raw JSON bytes)` one row at a time; the scorers' reader
(`evaluation.predictions.PredictionsReader`) validates every row the same way whatever the source:

- `JsonlRows`: a native JSON Lines file, streamed line by line (never held whole); origin the line number;
- `RecordRows`: dicts (a Python caller's list, a DataFrame's records, a runner file's converted rows);
  origin "row N" or the origin each record came with ("sample <id>", a line of the runner's file).

A `Problem` is one structured finding: the file (or input label), the line or row, its kind and the message;
a `Notice` is a scorer's line that is no problem (rows scored, a warning about the figures); a scorer's
`score_rows` returns both with its report as a `Scored`.
`RequestIds` reads the request ids that `ctxrobust prompts` writes (`item/condition/sample`) as the item,
condition and sample they name.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Literal

from pydantic_core import from_json

from ctxrobust.errors import PredictionsError
from ctxrobust.evaluation.formats import files
from ctxrobust.evaluation.formats.files import MAX_LINE, NOT_JSON, NOT_UTF8, TOO_DEEP, lines, long_line
from ctxrobust.evaluation.report import plain

ProblemKind = Literal["row", "file", "missing", "refused"]
SNIFF = 4096  # bytes of a file's head that tell another encoding or a compressed file
NOT_REGULAR = "is not a regular file (a FIFO, device or standard input cannot be scored); give the predictions JSON Lines file"


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


def open_regular(path: Path) -> BinaryIO:
    """A predictions file opened for binary reading, if it is a regular file (`formats.files.open_regular`: the
    open never waits, and a FIFO or device is refused before anything is read), with one PredictionsError
    naming it."""
    try:
        return files.open_regular(path)
    except files.NotRegular:
        raise PredictionsError(f"{plain(path)}: {NOT_REGULAR}") from None


def encoding_problem(head: bytes) -> str | None:
    """What a file's first bytes say it is when it is not UTF-8 JSON Lines text (UTF-16, gzip, binary)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) >= 2 and (head[1:2] == b"\0" or head[0:1] == b"\0") and b"{" in head[:4]):
        return "is UTF-16 text, not UTF-8; convert it (e.g. `iconv -f UTF-16 -t UTF-8`) and score the converted file"
    if head.startswith(b"\x1f\x8b"):
        return "is gzip-compressed; decompress it (e.g. `gunzip`) and score the JSON Lines file"
    if head.startswith((b"PK\x03\x04", b"PAR1", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd")) or b"\0" in head:
        return "is a binary file, not JSON Lines text; give the predictions as UTF-8 JSON Lines (one object per line)"
    return None


MAX_EXAMPLES = 3  # request ids of another release shown in their one line


@dataclass(frozen=True)
class Problem:
    """One problem of the predictions: `line` is a line number, "row N", "sample <id>" or None (the input as a
    whole); `kind` is "row" (a row left out), "file" (about the input), "missing" (items without a
    prediction) or "refused" (the input was not scored)."""

    file: str
    line: int | str | None
    kind: ProblemKind
    message: str
    model: str | None = None  # the model a problem about the file is of
    same_as: int | str | None = None  # a duplicate row: where the row with the same key is
    at: tuple = ()  # a problem of several rows said in one line (request ids of another release): their lines

    def render(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line is not None else f"{self.file}: {self.message}"

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "kind": self.kind,
            "message": self.message,
            "model": self.model,
            "same_as": self.same_as,
        }


NoticeKind = Literal["scored", "more", "note", "warning"]


@dataclass(frozen=True)
class Notice:
    """A line for the person running a scorer that is no problem of the predictions: "scored" (how many rows
    were scored), "more" (problems not listed on standard error), "note" or "warning" (about the figures)."""

    file: str
    kind: NoticeKind
    message: str

    def render(self) -> str:
        return f"{self.file}: {self.message}"


@dataclass
class Scored:
    """A scorer's result: its JSON report, every problem of the predictions and its notices, in the order found."""

    report: dict
    problems: list[Problem] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)


class Rows:
    """A source of prediction rows: `label` names it in messages, `raw()` yields (origin, bytes) per row,
    `sha256` is known once it has been read."""

    label: str = "rows"
    path: Path | None = None  # the file behind it, if any
    sha256: str = ""

    def raw(self) -> Iterator[tuple[int | str, bytes]]:
        raise NotImplementedError


@dataclass
class JsonlRows(Rows):
    """A native JSON Lines file, read in a stream: a FIFO or device, another encoding (UTF-16, gzip) or a
    binary file is refused in one line before any row; blank lines are skipped; a UTF-8 byte-order mark
    on the first line is ignored."""

    path: Path
    label: str = ""
    sha256: str = ""

    def __post_init__(self):
        self.path = Path(self.path)
        self.label = self.label or plain(self.path)

    def raw(self) -> Iterator[tuple[int | str, bytes]]:
        with open_regular(self.path) as handle:
            problem = encoding_problem(handle.peek(SNIFF)[:SNIFF])
            if problem:
                raise PredictionsError(f"{self.label}: {problem}")
            hashed = Hashed(handle)
            for number, line in lines(hashed, MAX_LINE):  # a line over MAX_LINE is read past, never held whole
                yield number, line if line is not None else Unreadable(long_line(MAX_LINE))
        self.sha256 = hashed.digest.hexdigest()


class Hashed:
    """A binary file read line by line, every byte read added to its SHA-256."""

    def __init__(self, handle: BinaryIO):
        self.handle = handle
        self.digest = hashlib.sha256()

    def readline(self, limit: int = -1) -> bytes:
        data = self.handle.readline(limit)
        self.digest.update(data)
        return data


@dataclass
class RecordRows(Rows):
    """Rows given as dicts, each serialised to JSON and read like a file's line. `origins` (one per record)
    names where each came from; without them a record is "row N" (N from 1)."""

    records: Iterable[Any]
    label: str = "rows"
    origins: list[int | str] | None = None
    sha256: str = ""

    def raw(self) -> Iterator[tuple[int | str, bytes]]:
        digest = hashlib.sha256()
        for k, record in enumerate(self.records):
            origin = self.origins[k] if self.origins is not None else f"row {k + 1}"
            try:
                text = _dumps(record)
            except (TypeError, ValueError, RecursionError):
                problem = not_json(record)
                digest.update(problem.encode("utf-8", "surrogatepass") + b"\n")
                yield origin, Unreadable(problem)
                continue
            data = text.encode("utf-8", "surrogatepass") + b"\n"
            digest.update(data)
            yield origin, data
        self.sha256 = digest.hexdigest()


class Unreadable(bytes):
    """A row a `Rows` source could not write as JSON: no bytes, only why (the reader's problem of its row)."""

    def __new__(cls, problem: str):
        made = super().__new__(cls, b"")
        made.problem = problem
        return made


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_scalar)


def _why(value: Any) -> str:
    if isinstance(value, float) and value != value:
        return "a float NaN is not JSON"
    if isinstance(value, float):
        return f"a float {value!r} is not JSON (no infinity in JSON)"
    if isinstance(value, dict):
        return "a mapping whose keys are not all text is not JSON"
    return f"a value of type {type(value).__name__} is not a JSON value"


def not_json(record: Any) -> str:
    """Why a record is not JSON: the first field whose value is not (a float NaN, a set, bytes), by name."""
    if isinstance(record, dict):
        for key, value in record.items():
            if not isinstance(key, (str, int, float, bool, type(None))):
                return f"key {plain(repr(key), 60)}: a key of type {type(key).__name__} is not text (JSON keys are text)"
            try:
                _dumps(value)
            except (TypeError, ValueError, RecursionError):
                return f"field {plain(key, 60)!r}: {_why(value)}"
        return "not a JSON object"
    return f"the row: {_why(record)} (give one dict per row)"


def _scalar(value: Any) -> Any:
    """numpy and pandas scalars as plain Python values; a missing cell (NaN, NA, None) as null."""
    item = getattr(value, "item", None)
    if callable(item):
        value = item()
        if isinstance(value, float) and value != value:
            return None
        return value
    if value.__class__.__name__ in ("NAType", "NaTType"):
        return None
    raise TypeError(f"a value of type {type(value).__name__} is not a JSON value")


def _empty(value: Any) -> bool:
    """Whether a DataFrame cell holds no value (None, NaN, NA, NaT)."""
    return value is None or (isinstance(value, float) and value != value) or value.__class__.__name__ in ("NAType", "NaTType")


def frame_records(frame: Any, dataset: str | None = None) -> Iterator[dict]:
    """A DataFrame's rows as dicts. An empty cell (NaN, None) reads as an empty CSV cell does for `dataset`'s
    predictions schema (`evaluation.formats.tabular.row_of`): null in a required field that may be null
    (pseudowords `context`: the no-context baseline), null or empty in the field that tells a row's kind when
    the row gives none, else left out (a field not given). Without a dataset an empty cell is left out."""
    columns = [str(c) for c in frame.columns]
    shape = _shape(dataset)
    known = [k for k, c in enumerate(columns) if shape is not None and c in shape.fields]
    if shape is not None:
        from ctxrobust.evaluation.formats.tabular import EMPTY, row_of
    for values in frame.itertuples(index=False, name=None):
        row = {column: value for column, value in zip(columns, values) if not _empty(value)}
        if known:
            read = row_of(shape, [columns[k] for k in known], [EMPTY if _empty(values[k]) else values[k] for k in known])
            row.update({name: None for name, value in read.items() if value is None and name not in row})
            row.update({name: "" for name, value in read.items() if isinstance(value, str) and value == "" and name not in row})
        yield row


def _shape(dataset: str | None):
    """The predictions row shape of `dataset` (None: no dataset, or one without a predictions schema)."""
    if dataset is None:
        return None
    from ctxrobust.evaluation.formats.tabular import shape_of

    try:
        return shape_of(dataset)
    except PredictionsError:
        return None


class _Frame:
    """A DataFrame's rows, read again each time they are iterated (a scorer may read its rows twice)."""

    def __init__(self, frame: Any, dataset: str | None = None):
        self.frame = frame
        self.dataset = dataset

    def __iter__(self) -> Iterator[dict]:
        return frame_records(self.frame, self.dataset)


def as_rows(predictions: Any, dataset: str | None = None) -> Rows:
    """A scorer's `predictions` argument as a source: a Rows, a path of a native JSON Lines file, a
    DataFrame (its empty cells read by `dataset`'s predictions schema), or a list of dicts."""
    if isinstance(predictions, Rows):
        return predictions
    if isinstance(predictions, (str, Path)):
        return JsonlRows(Path(predictions))
    if hasattr(predictions, "itertuples") and hasattr(predictions, "columns"):
        return RecordRows(_Frame(predictions, dataset), label="DataFrame")
    if isinstance(predictions, dict):
        raise PredictionsError("predictions is one dict: give a list of rows (dicts), a DataFrame or a path")
    if isinstance(predictions, (list, tuple)) or hasattr(predictions, "__iter__"):
        return RecordRows(predictions)
    raise PredictionsError(f"predictions of type {type(predictions).__name__}: give a path, a list of dicts or a DataFrame")


# ------------------------------------------------------------------------------------------ request ids
@dataclass
class RequestIds:
    """Rows whose `id` is a request id of this release (`item/condition/sample`, as `prompts` writes it) are
    read as the item, condition and sample it names (`to_row(key, row)` gives the native row). Ids that
    look like request ids but name no item of this release are counted and reported in one line."""

    known: Callable[[str], bool]  # whether an id is an item id as it is
    to_row: Callable[[Any, dict], dict]
    aliases: dict[str, str] = field(default_factory=dict)
    item_known: Callable[[str], bool] | None = None  # whether a request id's item is one (default: `known`)
    foreign: int = 0
    examples: list[str] = field(default_factory=list)

    def rewrite(self, value: Any) -> tuple[dict | None, str | None]:
        """(the native row, None) for a row holding a request id of this release; (None, None) for a row
        to read as it is; (None, "foreign") for a request id of another release (counted here); (None, message)
        for a request id whose condition this dataset cannot read."""
        if not isinstance(value, dict):
            return None, None
        ident = value.get("id")
        if not isinstance(ident, str) or "/" not in ident or self.known(ident):
            return None, None
        from ctxrobust.evaluation.run.requests import HASHED, decode

        parts = ident.rsplit("/", 2)
        if len(parts) != 3 or not parts[0] or not parts[2].isdigit():
            return None, None
        key = decode(ident, self.aliases)
        if key is None or not (self.item_known or self.known)(key.item):
            if parts[0].startswith(HASHED) or key is not None:
                self.foreign += 1
                if len(self.examples) < MAX_EXAMPLES:
                    self.examples.append(ident)
                return None, "foreign"
            return None, None
        try:
            return self.to_row(key, value), None
        except ValueError as exc:
            return None, f"request id {ident!r}: {exc}"

    def problem(self):
        """The one line about request ids of another release, or None."""
        if not self.foreign:
            return None
        return foreign_message(self.foreign, self.examples)


def foreign_message(count: int, examples: list[str] = ()) -> str:
    """The one line about `count` rows whose ids are request ids of another release."""
    shown = " (e.g. " + ", ".join(repr(plain(e, 80)) for e in examples) + ")" if examples else ""
    return (
        f"{count} id(s) look like request ids of another release{shown}; they name no item of this "
        "release: score the predictions against the release whose `prompts` wrote them"
    )


def native_row(value: dict, fields: dict) -> dict:
    """`value` with the fields a request id named filled in (fields the row gives itself are kept)."""
    row = dict(value)
    for name, given in fields.items():
        if name == "id" or name not in row:
            row[name] = given
    return row


# ------------------------------------------------------------------------------------------ requests
MAX_RECORD = 64 << 20  # bytes of a run record (a JSON object of some kilobytes)


@dataclass
class Requested:
    """What a requests file asks for: its label, the item ids, and (item, condition) pairs (condition None
    for a request without one). `items` None: every item of the release (a run record of a full run)."""

    label: str
    items: set[str] | None
    pairs: set[tuple[str, str | None]] = field(default_factory=set)

    def asks(self, item: str) -> bool:
        return self.items is None or item in self.items


MAX_REQUESTS = 4 << 30  # bytes of a requests JSONL read for --requests
MAX_ID_CHARS = 4096  # the longest item id read from --requests (as for --items)
SHOWN = 3  # ids named in an error
REQUESTS_HINT = "give a requests JSONL written by `ctxrobust prompts` or a run record"


def _record_items(record: dict, label: str, limit: int | None) -> list[str] | None:
    """The item ids a run record's `subset` names (`run --limit/--sample/--items`), or None (no subset: the
    run asked for every item). Anything but a list of at most `limit` id strings is refused in one line."""
    subset = record.get("subset")
    if subset is None:
        return None
    field_name = "`subset.item_ids`"
    if not isinstance(subset, dict):
        raise PredictionsError(f"{label}: the run record's `subset` is not an object; {REQUESTS_HINT}")
    ids = subset.get("item_ids")
    if not isinstance(ids, list):
        raise PredictionsError(f"{label}: the run record's {field_name} is not a list of item ids; {REQUESTS_HINT}")
    if limit is not None and len(ids) > limit:
        raise PredictionsError(f"{label}: the run record's {field_name} names {len(ids)} ids, more than the release's {limit} items")
    for i in ids:
        if not isinstance(i, str) or not i:
            raise PredictionsError(f"{label}: the run record's {field_name} holds {plain(type(i).__name__)}, not item id strings")
        if len(i) > MAX_ID_CHARS:
            raise PredictionsError(f"{label}: the run record's {field_name} holds an id longer than {MAX_ID_CHARS} characters")
    return ids


def _check_known(label: str, items: set[str], known: Callable[[str], bool] | None) -> None:
    """Refuse request items the release does not have (as --items does), naming a few."""
    if known is None:
        return
    unknown = sorted(i for i in items if not known(i))
    if unknown:
        shown = ", ".join(repr(plain(i, 80)) for i in unknown[:SHOWN]) + (", ..." if len(unknown) > SHOWN else "")
        raise PredictionsError(
            f"{label}: {len(unknown)} of its {len(items)} item(s) are not in the release ({shown}); {REQUESTS_HINT} for this release"
        )


def read_requests(
    path: Path,
    dataset: str,
    aliases: dict[str, str] | None = None,
    known: Callable[[str], bool] | None = None,
    limit: int | None = None,
) -> Requested:
    """The items a requests JSONL written by `prompts` (chat lines or OpenAI Batch input lines) or a `run`
    record (`<predictions>.run.json`) asks for. A file of another dataset, an item the release does not
    have (`known`, when given) or a record naming more ids than the release's `limit` items is refused in
    one line; only the item ids are kept."""
    from ctxrobust.evaluation.run.requests import NO_CONDITION, decode

    label = f"--requests {plain(path)}"
    with open_regular(Path(path)) as handle:
        head = handle.peek(SNIFF)[:SNIFF]
        problem = encoding_problem(head)
        if problem:
            raise PredictionsError(f"{label}: {problem}")
        body = head.lstrip()
        if body.startswith(b"\xef\xbb\xbf"):
            body = body[3:].lstrip()
        if body[:1] == b"{" and _is_record(body):
            data = handle.read(MAX_RECORD + 1)
            if len(data) > MAX_RECORD:
                raise PredictionsError(f"{label}: over {MAX_RECORD >> 20} MB; a run record is a small JSON object; {REQUESTS_HINT}")
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            record, problem = parse_line(data)
            if problem or not isinstance(record, dict) or not ("sampling_plan" in record or "subset" in record):
                raise PredictionsError(f"{label}: not a requests JSONL nor a run record ({problem or 'no sampling_plan'}); {REQUESTS_HINT}")
            if record.get("dataset") not in (None, dataset):
                raise PredictionsError(f"{label}: a run record of {plain(record.get('dataset'))}, not of {dataset}")
            ids = _record_items(record, label, limit)
            if ids is None:
                return Requested(label, None)
            asked = set(ids)
            _check_known(label, asked, known)
            return Requested(label, asked)
        items: set[str] = set()
        pairs: set[tuple[str, str | None]] = set()
        read = 0
        for number, line in lines(handle, MAX_LINE):
            if line is None:
                raise PredictionsError(f"{label}:{number}: {long_line()}; {REQUESTS_HINT}")
            read += len(line)
            if read > MAX_REQUESTS:
                raise PredictionsError(f"{label}: over {MAX_REQUESTS >> 30} GB; {REQUESTS_HINT}")
            value, problem = parse_line(line)
            if problem or not isinstance(value, dict):
                raise PredictionsError(f"{label}:{number}: {problem or 'not a JSON object'}; {REQUESTS_HINT}")
            if value.get("dataset") not in (None, dataset):
                raise PredictionsError(f"{label}:{number}: a request of {plain(value.get('dataset'))}, not of {dataset}")
            item, condition = value.get("item"), value.get("condition")
            if not isinstance(item, str):  # an OpenAI Batch input line: the item is in its custom_id
                key = decode(str(value.get("custom_id", value.get("id", ""))), aliases)
                if key is None:
                    raise PredictionsError(f"{label}:{number}: names no item (no 'item' and no request id); {REQUESTS_HINT}")
                item, condition = key.item, key.condition
            if not item or len(item) > MAX_ID_CHARS:
                raise PredictionsError(
                    f"{label}:{number}: an item id that is empty or longer than {MAX_ID_CHARS} characters; {REQUESTS_HINT}"
                )
            items.add(item)
            pairs.add((item, None if condition in (None, NO_CONDITION) else str(condition)))
    if not items:
        raise PredictionsError(f"{label}: no requests in it; {REQUESTS_HINT}")
    _check_known(label, items, known)
    return Requested(label, items, pairs)


def _is_record(head: bytes) -> bool:
    """Whether a file's head is a run record: pretty-printed (a first line that does not close the
    object), or one compact JSON object with a `subset` or `sampling_plan` key."""
    first = head.split(b"\n", 1)[0].rstrip()
    if b"\n" in head and not first.endswith(b"}"):
        return True
    if first.endswith(b"}"):
        value, problem = parse_line(first)
        return problem is None and isinstance(value, dict) and ("subset" in value or "sampling_plan" in value) and "item" not in value
    return b"\n" not in head and (b'"subset"' in head or b'"sampling_plan"' in head) and b'"item"' not in head  # a long compact record


def not_asked(item: str, requested: Requested) -> str:
    return f"id {plain(item, 80)!r} was not asked for by {requested.label}; only the items asked are scored"
