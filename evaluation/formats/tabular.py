"""Predictions as a table: a CSV or Parquet file whose columns are the dataset's native predictions fields
(`model`, `id`, and per dataset `response` / `answer` / `sample`, `condition` / `prompt` / `option_order`,
`context` / `trial` / `correct` / `score`), read into the same native rows its JSON Lines twin holds.

Cells are typed by the dataset's predictions JSON Schema (schemas/predictions.<dataset>.schema.json):

- an empty CSV cell (a Parquet null, or NaN) is no value: a field the schema requires is null where it may be
  null (pseudowords `context`: the no-context baseline) and the empty string where it is text (MisleadQA
  `response`: an empty response, invalid but counted); any other field is left out (its default). A row
  that gives none of its row kind's fields (GSM-IC `response` / `answer`; pseudowords `correct` / `score` /
  `response`) gets the empty `response` (a failed request, counted as wrong) where the file has that column,
  else a null `answer`;
- integers and numbers are parsed (`1.0` is the integer 1, as pandas writes an integer column with gaps);
  booleans from true / false in any case; `correct` from 1 / 0 or true / false;
- text is kept as written: an id `007` stays the string "007", `=1+1` is text (CSV injection concerns
  spreadsheets that run formulas, not this reader), and a field that may be text or a number (GSM-IC
  `answer`) keeps its text, whose number the scorer reads as it reads `"answer": "9"`. In Parquet, a
  numeric column is numbers and a text column text (a text column of a numeric field is read as CSV cells).

A cell that cannot be read as its field's type keeps its text in the row, so the scorer refuses that row
exactly as it refuses its JSON Lines twin (`"sample": "x"`): one problem of its row, counted as excluded,
refused under --strict; the report says it of the table, at the CSV line the row starts on (the header is
line 1; for Parquet "row N"), naming the column. What the schema's other rules say of a
row (an unknown id, a sample below 0) is the scorer's to report, as for a JSON Lines row. A row that cannot
be split into cells (a quote never closed, too few or too many cells, a line not UTF-8 or over its bound) is
one problem of the conversion, and the other rows are still read. A file that cannot be read as a whole (a
header without `model` or `id`, columns that are not predictions fields, a Parquet column of another type,
a file over its bounds) is refused in one line.

Bounds: a CSV is streamed line by line (at most MAX_RECORD bytes of one row, MAX_CELL of one cell, through
the csv module); a Parquet file's footer and metadata (row count, row-group sizes, columns and their types)
are checked before any row is read, then rows are read in record batches. Both are read as regular files
(files.open_regular: a FIFO or device is refused without waiting), and at most MAX_ROWS rows.
"""

from __future__ import annotations

import csv
import math
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Callable, Iterator

from ctxrobust.errors import PredictionsError
from ctxrobust.evaluation.formats.files import BOM, MAX_LINE, NOT_UTF8, long_line, open_regular, size_text
from ctxrobust.evaluation.report import plain

FORMS = ("csv", "parquet")
MAX_CELL = MAX_LINE  # characters of one CSV cell (csv.field_size_limit while a file is read)
MAX_RECORD = MAX_LINE  # bytes of one CSV row (its lines, a quoted cell may span several) held at once
MAX_ROWS = 10_000_000  # rows of one table: its converted rows are held in memory until scored
MAX_FOOTER = 64 * 1024 * 1024  # bytes of a Parquet footer (its metadata)
MAX_ROW_GROUP = 1 << 30  # uncompressed bytes of one Parquet row group (read a batch at a time from it)
BATCH = 8192  # Parquet rows converted at once
SNIFF = 4096
HEADER_SNIFF = 64 * 1024  # bytes of a first line that detection reads as a possible CSV header
PARQUET_MAGIC = b"PAR1"
MAX_NAMED = 8  # columns named in one message
EMPTY = object()  # a cell without a value: an empty CSV cell, a Parquet null

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_BOOLEANS = {"true": True, "false": False}


# ----------------------------------------------------------------------------- the row shape, from the schema


@dataclass(frozen=True)
class Field:
    name: str
    types: frozenset[str]  # JSON Schema types: "string", "integer", "number", "boolean", "null"
    required: bool
    flag: bool  # an integer 0 or 1 (pseudowords `correct`): also read from true / false

    @property
    def expected(self) -> str:
        """What a cell of this field must hold, for a problem's message."""
        kinds = []
        if "string" in self.types:
            kinds.append("text")
        if "integer" in self.types and "number" not in self.types:
            kinds.append("0 or 1 (or true / false)" if self.flag else "an integer")
        if "number" in self.types:
            kinds.append("a number")
        if "boolean" in self.types:
            kinds.append("true or false")
        return " or ".join(kinds) or "a value"


@dataclass(frozen=True)
class Shape:
    """The columns a dataset's predictions table may have, with their types."""

    dataset: str
    fields: dict[str, Field]  # in the schema's order
    kinds: tuple[tuple[str, ...], ...]  # the schema's oneOf: the fields each kind of row needs beyond the required ones
    choosers: tuple[str, ...]  # fields that tell a row's kind (needed by one kind only); () when there is one kind

    @property
    def required(self) -> list[str]:
        return [name for name, f in self.fields.items() if f.required]

    @property
    def listing(self) -> str:
        return ", ".join(self.fields)


def _types(spec: dict) -> set[str]:
    kind = spec.get("type")
    found = {kind} if isinstance(kind, str) else set(kind or ())
    for key in ("anyOf", "oneOf"):
        for branch in spec.get(key, ()):
            found |= _types(branch)
    if not found and "enum" in spec:
        found = {"null" if v is None else "string" if isinstance(v, str) else "number" for v in spec["enum"]}
    return found


def shape_from_schema(dataset: str, schema: dict) -> Shape:
    required = set(schema.get("required", ()))
    fields = {}
    for name, spec in schema.get("properties", {}).items():
        types = frozenset(_types(spec))
        flag = types == {"integer"} and spec.get("minimum") == 0 and spec.get("maximum") == 1
        fields[name] = Field(name, types, name in required, flag)
    kinds = tuple(tuple(n for n in branch.get("required", ()) if n not in required) for branch in schema.get("oneOf", ()))
    choosers = tuple(n for n in fields if sum(n in kind for kind in kinds) == 1)
    return Shape(dataset, fields, kinds, choosers)


def _predictions_stem(dataset) -> str | None:
    return next((s for s in dataset.schemas if s.startswith("predictions.")), None)


@cache
def shape_of(dataset: str) -> Shape:
    """The predictions row shape of a registered dataset."""
    from ctxrobust import registry
    from ctxrobust.schemas import load_schema

    stem = _predictions_stem(registry.get(dataset))
    if stem is None:
        raise PredictionsError(f"dataset {dataset} publishes no predictions schema; its predictions cannot be read from a table")
    return shape_from_schema(dataset, load_schema(stem))


def dataset_of(prediction: Callable) -> str:
    """The dataset whose prompts module made `prediction` (the row maker convert() is given)."""
    from ctxrobust import registry

    module = getattr(prediction, "__module__", None)
    for dataset in registry.datasets():
        if dataset.prompts == module:
            return dataset.name
    raise PredictionsError(f"no dataset's prompts module is {module!r}; its predictions cannot be read from a table")


@cache
def known_columns() -> frozenset[str]:
    """Every dataset's predictions fields: what a CSV header may name (for detection, which knows no dataset)."""
    from ctxrobust import registry

    names: set[str] = set()
    for dataset in registry.datasets():
        if _predictions_stem(dataset) is not None:
            try:
                names |= set(shape_of(dataset.name).fields)
            except Exception:  # a plugin's unreadable schema: its columns are not known, the others still are
                continue
    return frozenset(names)


# ----------------------------------------------------------------------------- detection


def looks_like_header(line: bytes) -> bool:
    """Whether a first line is a CSV header of predictions fields: at least two columns, `model` or `id` among
    them, every one a predictions field of some dataset."""
    try:
        text = line[len(BOM) :] if line.startswith(BOM) else line
        cells = next(csv.reader([text.decode("utf-8").rstrip("\r\n")], strict=True))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return False
    names = [c.strip() for c in cells]
    return len(names) >= 2 and bool({"model", "id"} & set(names)) and set(names) <= known_columns()


def sniff(handle, suffix: str) -> str | None:
    """The table format of a file that is one ("csv" or "parquet"), else None: Parquet by its magic bytes (PAR1
    at its start and its end) or a `.parquet` name, CSV by a `.csv` name or a first line that is a header of
    predictions fields. A file whose first line begins a JSON object is JSON whatever its name (a JSON Lines
    file named .csv, or the native rows a table was converted to, which keep the table's name). `handle` is
    at its start and is left anywhere."""
    head = handle.read(len(PARQUET_MAGIC))
    if head == PARQUET_MAGIC and _ends_parquet(handle):
        return "parquet"
    handle.seek(0)
    first = handle.readline(HEADER_SNIFF)
    while first and not first.strip() and len(first) < HEADER_SNIFF:
        first = handle.readline(HEADER_SNIFF)
    if first.removeprefix(BOM).lstrip().startswith(b"{"):
        return None
    if suffix in (".csv", ".parquet"):
        return suffix[1:]
    return "csv" if first and looks_like_header(first) else None


def _ends_parquet(handle) -> bool:
    """Whether a file that begins with PAR1 also ends with it, as a whole Parquet file does (so a text or binary
    file that merely begins with those bytes is judged by the JSON Lines reader)."""
    size = os.fstat(handle.fileno()).st_size
    if size < 12:
        return False
    handle.seek(size - len(PARQUET_MAGIC))
    return handle.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC


# ----------------------------------------------------------------------------- cells


def coerce(f: Field, text: str):
    """(value, None) of one CSV cell, EMPTY for an empty cell, or (the cell's text, why it is not the field's type)."""
    if text == "":
        return EMPTY, None
    types = f.types
    word = text.strip()
    if "boolean" in types or f.flag:
        truth = _BOOLEANS.get(word.lower())
        if truth is not None:
            return (int(truth) if f.flag else truth), None
    if "string" in types:  # text, or text or a number (GSM-IC `answer`): as written, the scorer reads its number
        return text, None
    if "integer" in types and "number" not in types:
        if _INTEGER.fullmatch(word):
            return int(word), None
        if _NUMBER.fullmatch(word):
            value = float(word)
            if value.is_integer():
                return int(value), None
        return text, f"{_shown(text)} is not {f.expected}"
    if "number" in types:
        if _INTEGER.fullmatch(word):
            return int(word), None
        if _NUMBER.fullmatch(word):
            value = float(word)
            if math.isfinite(value):
                return value, None
            return text, f"{_shown(text)} is not a finite number"
        return text, f"{_shown(text)} is not {f.expected}"
    return text, f"{_shown(text)} is not {f.expected}"


def coerce_value(f: Field, value):
    """(value, None) of one Parquet value, EMPTY for a null (or NaN), or (the value as JSON can hold it, why it
    is not the field's type)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return EMPTY, None
    types = f.types
    if isinstance(value, bool):
        if f.flag:
            return int(value), None
        if "boolean" in types:
            return value, None
        return value, f"{value!r} is not {f.expected}"
    if isinstance(value, int):
        if types & {"integer", "number"}:
            return value, None
        return value, f"{value!r} is not {f.expected}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value), f"{value!r} is not a finite number"  # JSON holds no infinity: its text
        if "number" in types:
            return value, None
        if "integer" in types and value.is_integer():
            return int(value), None
        return value, f"{value!r} is not {f.expected}"
    if isinstance(value, str):
        if "string" in types:
            return value, None
        return coerce(f, value) if value != "" else (EMPTY, None)  # a text column of numbers: read as a CSV cell
    return plain(value, 60), f"a {type(value).__name__} value is not {f.expected}"


def _shown(text: str) -> str:
    return repr(plain(text, 60))


def row_of(shape: Shape, columns: list[str], values: list) -> dict:
    """The native row of one table row's values (EMPTY: no value), by the empty-cell rules above."""
    row = {name: value for name, value in zip(columns, values) if value is not EMPTY}
    for name in columns:
        f = shape.fields[name]
        if name not in row and f.required:
            if "null" in f.types:
                row[name] = None
            elif "string" in f.types:
                row[name] = ""
    if shape.choosers and not any(name in row for name in shape.choosers):
        given = [shape.fields[n] for n in shape.choosers if n in columns]
        chosen = next((f for f in given if "string" in f.types and "null" not in f.types), None)  # the empty response
        chosen = chosen or next((f for f in given if "null" in f.types), None)  # else no answer
        if chosen is not None:
            row[chosen.name] = None if "null" in chosen.types else ""
    return row


# ----------------------------------------------------------------------------- the header


def _named(names) -> str:
    names = list(names)
    shown = ", ".join(repr(plain(n, 40)) for n in names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def check_columns(path: Path, names: list[str], shape: Shape, what: str = "header") -> None:
    """Refuse, in one line, a table whose columns cannot make the dataset's rows."""
    shown = plain(path)
    if len(names) == 1 and any(mark in names[0] for mark in (";", "\t", "|")):
        raise PredictionsError(
            f"{shown}: the {what} is one column, {_named(names)}: the file is not comma-separated; "
            f"write it with commas between cells ({shape.listing})"
        )
    if names and names[0].lstrip().startswith(("{", "[")):
        raise PredictionsError(
            f"{shown}: the first line is JSON, not a CSV header: a JSON Lines file named .csv? "
            "rename it .jsonl or give --input-format native"
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise PredictionsError(
            f"{shown}: the {what} names column(s) {_named(repeated)} more than once; which is meant is ambiguous, keep one"
        )
    said = []
    missing = [n for n in shape.required if n not in names]
    if missing:
        said.append(f"the {what} lacks column(s) {_named(missing)}, which every {shape.dataset} predictions row needs")
    unknown = [n for n in names if n not in shape.fields]
    if unknown:
        hint = (
            " (an index column? write the table without it, e.g. to_csv(index=False))"
            if any(n == "" or n.startswith("Unnamed") or n in ("index", "__index_level_0__") for n in unknown)
            else ""
        )
        said.append(f"column(s) {_named(unknown)} are not {shape.dataset} predictions fields{hint}")
    if not said and shape.kinds and not any(all(n in names for n in kind) for kind in shape.kinds):
        options = " or ".join("(" + ", ".join(kind) + ")" for kind in shape.kinds)
        said.append(f"the {what} has the columns of no kind of {shape.dataset} row: give {options}")
    if said:
        raise PredictionsError(f"{shown}: {'; '.join(said)}; the columns are the predictions fields: {shape.listing}")


# ----------------------------------------------------------------------------- reading


@dataclass
class Table:
    rows: list[dict] = field(default_factory=list)
    origins: list[int | str] = field(default_factory=list)  # per row: its CSV line, or "row N" of a Parquet file
    problems: list[tuple[int | str, str]] = field(default_factory=list)  # one per row not split into cells (not read)
    cells: dict[int, str] = field(default_factory=dict)  # row index -> its first bad cell, said of the table

    def add(self, origin, values: list, columns: list[str], shape: Shape) -> None:
        """One table row as the native row of its cells. A cell that is not its field's type keeps its text (or
        value), so the scorer rejects the row as it rejects the JSON Lines twin (`"sample": "x"`), --strict
        included; `cells` says which cell, for the report."""
        bad = [(name, problem) for name, (_, problem) in zip(columns, values) if problem is not None]
        if bad:
            name, problem = bad[0]
            more = f" (and {len(bad) - 1} more cell(s) of this row)" if len(bad) > 1 else ""
            self.cells[len(self.rows)] = f"column {plain(name, 40)!r}: {problem}{more}"
        self.rows.append(row_of(shape, columns, [value for value, _ in values]))
        self.origins.append(origin)

    def count(self) -> int:
        return len(self.rows) + len(self.problems)


def read(path: Path, form: str, shape: Shape) -> Table:
    if form == "csv":
        table = read_csv(path, shape)
    elif form == "parquet":
        table = read_parquet(path, shape)
    else:
        raise PredictionsError(f"{plain(path)}: {plain(form)} is not a table format ({', '.join(FORMS)})")
    if len(table.cells) == len(table.rows):  # no row the scorer could take
        said = sorted([*table.problems, *((table.origins[k], m) for k, m in table.cells.items())], key=lambda p: _order(p[0]))
        if not said:
            raise PredictionsError(f"{plain(path)}: no prediction rows (only a header); write one row per prediction")
        first = "; ".join(f"{_origin(o)}: {m}" for o, m in said[:3])
        raise PredictionsError(f"{plain(path)}: none of its {len(said)} row(s) could be read ({first}); nothing to score")
    return table


def _order(origin) -> int:
    return origin if isinstance(origin, int) else int(str(origin).rpartition(" ")[2] or 0)


def _origin(origin) -> str:
    return f"line {origin}" if isinstance(origin, int) else str(origin)


def _too_many(path: Path) -> PredictionsError:
    return PredictionsError(
        f"{plain(path)}: more than {MAX_ROWS:,} rows, more than is read into memory; split the file, or give JSON Lines (streamed)"
    )


class _RecordTooLong(Exception):
    pass


class _Lines:
    """A binary file's lines as text for the csv module: each line bounded (a longer one is passed over and
    marked), bytes that are not UTF-8 marked, and the lines of one row bounded together."""

    def __init__(self, handle):
        self.handle = handle
        self.number = 0
        self.marked: dict[int, str] = {}  # line -> why its row cannot be read (the current row's lines only)
        self.held = 0  # bytes of the current row so far

    def __iter__(self) -> Iterator[str]:
        while True:
            raw = self.handle.readline(MAX_RECORD + 1)
            if not raw:
                return
            self.number += 1
            if len(raw) > MAX_RECORD:
                while not raw.endswith(b"\n"):
                    raw = self.handle.readline(1 << 20)
                    if not raw:
                        break
                self.marked.setdefault(self.number, long_line(MAX_RECORD))
                yield "\n"
                continue
            if self.number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            self.held += len(raw)
            if self.held > MAX_RECORD:
                raise _RecordTooLong(self.number)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                self.marked.setdefault(self.number, NOT_UTF8)
                text = raw.decode("utf-8", "replace")
            yield text


def _csv_problem(message: str) -> str:
    if "field limit" in message:
        return f"a cell longer than {size_text(MAX_CELL)}; not read"
    if "end of data" in message:
        return "a quoted cell opened on this row is never closed (the file ends inside it)"
    if "NUL" in message:
        return "holds a NUL character; not read"
    return f"not a CSV row ({plain(message, 120)}); a cell holding quotes, commas or line breaks is quoted, its quotes doubled"


def _text_head(path: Path, head: bytes) -> None:
    """Refuse at once a CSV in another encoding, compressed or binary (one line, not one per row)."""
    problem = None
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) >= 2 and b"\0" in head[:2]):
        problem = "is UTF-16 text, not UTF-8; convert it (e.g. `iconv -f UTF-16 -t UTF-8`) and score the converted file"
    elif head.startswith(b"\x1f\x8b"):
        problem = "is gzip-compressed; decompress it (e.g. `gunzip`) and score the CSV file"
    elif head.startswith(PARQUET_MAGIC):
        problem = "is a Parquet file, not CSV text; name it .parquet or give --input-format parquet"
    elif head.startswith((b"PK\x03\x04", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd")) or b"\0" in head:
        problem = "is a binary file (a spreadsheet workbook or an archive?), not CSV text; export the sheet as CSV (UTF-8)"
    if problem:
        raise PredictionsError(f"{plain(path)}: {problem}")


def read_csv(path: Path, shape: Shape) -> Table:
    table = Table()
    with open_regular(path) as handle:
        _text_head(path, handle.read(SNIFF))
        handle.seek(0)
        lines = _Lines(handle)
        limit = csv.field_size_limit()
        csv.field_size_limit(MAX_CELL)
        try:
            reader = csv.reader(lines, strict=True)
            columns = _csv_header(path, reader, lines, shape)
            fields = [shape.fields[name] for name in columns]
            previous = reader.line_num
            while True:
                lines.held = 0
                error = None
                try:
                    cells = next(reader)
                except StopIteration:
                    break
                except csv.Error as exc:
                    error, cells = str(exc), None
                except _RecordTooLong as exc:
                    raise PredictionsError(
                        f"{plain(path)}:{previous + 1}: a row longer than {size_text(MAX_RECORD)} (up to line {exc}): "
                        "a quote opened and never closed? nothing is read past it"
                    ) from None
                start, previous = previous + 1, reader.line_num
                marked = [lines.marked.pop(n) for n in sorted(lines.marked) if n <= previous]
                if error is None and not marked and (not cells or (len(cells) == 1 and not cells[0].strip())):
                    continue  # a blank line
                if table.count() >= MAX_ROWS:
                    raise _too_many(path)
                if marked:
                    table.problems.append((start, marked[0]))
                elif error is not None:
                    table.problems.append((start, _csv_problem(error)))
                elif len(cells) != len(columns):
                    table.problems.append((start, f"{len(cells)} cell(s), but the header names {len(columns)} column(s)"))
                else:
                    table.add(start, [coerce(f, cell) for f, cell in zip(fields, cells)], columns, shape)
        finally:
            csv.field_size_limit(limit)
    return table


def _csv_header(path: Path, reader, lines: _Lines, shape: Shape) -> list[str]:
    shown = plain(path)
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            raise PredictionsError(
                f"{shown}: empty; a CSV predictions file starts with a header naming its columns ({shape.listing})"
            ) from None
        except (csv.Error, _RecordTooLong) as exc:
            raise PredictionsError(f"{shown}: the header line cannot be read ({plain(exc, 120)})") from None
        if lines.marked:
            raise PredictionsError(f"{shown}:{min(lines.marked)}: the header {lines.marked[min(lines.marked)]}")
        if cells and any(c.strip() for c in cells):
            break
    names = [c.strip() for c in cells]
    check_columns(path, names, shape)
    return names


def _arrow_fits(f: Field, dtype) -> bool:
    import pyarrow as pa

    if pa.types.is_null(dtype):
        return True
    if pa.types.is_dictionary(dtype):
        dtype = dtype.value_type
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or getattr(pa.types, "is_string_view", lambda _: False)(dtype):
        return True  # text: a text field's value, or a number's written as text (read as a CSV cell)
    if pa.types.is_integer(dtype):
        return bool(f.types & {"integer", "number"})
    if pa.types.is_floating(dtype):
        return bool(f.types & {"integer", "number"})  # pandas writes an integer column with gaps as floats
    if pa.types.is_boolean(dtype):
        return f.flag or "boolean" in f.types
    return False


def _parquet_file(path: Path, handle):
    """The pyarrow ParquetFile of an open file, once its footer is known to be a Parquet footer within bounds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shown = plain(path)
    size = os.fstat(handle.fileno()).st_size
    head = handle.read(len(PARQUET_MAGIC))
    if size < 12 or head != PARQUET_MAGIC:
        raise PredictionsError(
            f"{shown}: not a Parquet file (it does not begin with PAR1); give the predictions as Parquet, CSV or JSON Lines"
        )
    handle.seek(size - 8)
    tail = handle.read(8)
    if tail[4:] == b"PARE":
        raise PredictionsError(f"{shown}: an encrypted Parquet file; write it without encryption")
    footer = int.from_bytes(tail[:4], "little")
    if tail[4:] != PARQUET_MAGIC or footer > size - 12:
        raise PredictionsError(f"{shown}: not a whole Parquet file (its footer is missing or cut); write it again")
    if footer > MAX_FOOTER:
        raise PredictionsError(f"{shown}: its Parquet metadata is {size_text(footer)}, more than the {size_text(MAX_FOOTER)} read")
    handle.seek(0)
    try:
        return pq.ParquetFile(handle)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise PredictionsError(f"{shown}: not a readable Parquet file ({plain(exc, 200)})") from None


def read_parquet(path: Path, shape: Shape) -> Table:
    import pyarrow as pa

    shown = plain(path)
    table = Table()
    with open_regular(path) as handle:
        parquet = _parquet_file(path, handle)
        meta = parquet.metadata
        if meta.num_rows > MAX_ROWS:
            raise _too_many(path)
        for index in range(meta.num_row_groups):
            group = meta.row_group(index)
            held = max(group.total_byte_size, sum(group.column(j).total_uncompressed_size for j in range(group.num_columns)))
            if held > MAX_ROW_GROUP:
                raise PredictionsError(
                    f"{shown}: row group {index} holds {size_text(held)} uncompressed, more than the {size_text(MAX_ROW_GROUP)} "
                    "read at once; write it with smaller row groups (e.g. row_group_size=100000)"
                )
        schema = parquet.schema_arrow
        columns = list(schema.names)
        check_columns(path, columns, shape, "table")
        fields = [shape.fields[name] for name in columns]
        wrong = [(f.name, schema.field(i).type) for i, f in enumerate(fields) if not _arrow_fits(f, schema.field(i).type)]
        if wrong:
            listed = ", ".join(
                f"{plain(name, 40)!r} is {plain(dtype, 60)} but must hold {shape.fields[name].expected}" for name, dtype in wrong
            )
            raise PredictionsError(f"{shown}: column(s) of the wrong type: {listed}")
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=BATCH, columns=columns, use_threads=False):
                for record in batch.to_pylist():
                    number += 1
                    if number > MAX_ROWS:
                        raise _too_many(path)
                    table.add(f"row {number}", [coerce_value(f, record[f.name]) for f in fields], columns, shape)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise PredictionsError(
                f"{shown}: rows after row {number} cannot be read ({plain(exc, 200)}); nothing is scored from a broken file"
            ) from None
    return table


def is_table(form: str) -> bool:
    return form in FORMS
