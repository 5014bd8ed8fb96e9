"""Per-cell counts of a pseudowords predictions file: rows are reduced, as they are read, to one entry
per (model, question, context) cell holding its number of trials, their sum and the set of trial
numbers seen (for duplicate detection). Memory grows with the cells, not with the rows.

Two readers fill the same `CellTable`:

- `read_columnar`: a clean file is parsed block by block by pyarrow's JSON reader and reduced with
  numpy. Anything it does not recognise as clean (a type it does not expect, a value out of range,
  an unknown context, a model mixing kinds, a duplicate, a blank line, a byte-order mark) makes it
  give up and return None, and the file is read again row by row.
- `RowAccumulator`: row by row through PredictionsReader, every problem reported by line.

Both read the same rows into the same cells; for binary trials the sums are exact integers, so the
two give identical figures.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ctxrobust.evaluation.formats.files import MAX_LINE

SQA_ID = re.compile(r"SQA-([0-9]{6})-([0-9]{3})")
BLOCK_BYTES = 32 << 20  # bytes parsed at a time by the columnar reader
MAX_TRIAL_BIT = 62  # the columnar reader tracks trials 0..62 in a 64-bit mask (bit 0: no trial number)
FIELD_BITS = 21  # model, question and context indices packed into one int64 cell code
FIELDS = ("model", "id", "context", "trial", "correct", "score")


def sqa_group(context: str, histories: int) -> str | None:
    """Group label of an SQA history id written by `ctxrobust prompts` (SQA-TURNS-INDEX, index below
    the release's contexts_per_length): "SQA 20"; None for anything else."""
    match = SQA_ID.fullmatch(context)
    if match and int(match.group(2)) < histories:
        return f"SQA {int(match.group(1))}"
    return None


@dataclass
class Strings:
    """Interned strings: each distinct value gets the next index."""

    values: list = field(default_factory=list)
    index: dict = field(default_factory=dict)

    def get(self, value) -> int:
        i = self.index.get(value)
        if i is None:
            i = self.index[value] = len(self.values)
            self.values.append(value)
        return i

    def lookup(self, values) -> np.ndarray:
        return np.fromiter((self.get(v) for v in values), dtype=np.int64, count=len(values))


@dataclass
class CellTable:
    """One entry per (model, question, context) cell; context index 0 is the baseline (context null)."""

    models: list[str]
    ids: list[str]
    contexts: list[str | None]
    model: np.ndarray  # (cells,) indices into models
    qid: np.ndarray
    context: np.ndarray
    n: np.ndarray  # trials
    total: np.ndarray  # sum of correct (or of scores)
    kind: dict[str, str]  # model -> "correct" | "score"
    groups: dict[str, str]  # context id -> "KIND LENGTH" (SQA ids included as met)


def _pack(model: np.ndarray, qid: np.ndarray, context: np.ndarray) -> np.ndarray:
    return (model << (2 * FIELD_BITS)) | (qid << FIELD_BITS) | context


def _unpack(code: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mask = (1 << FIELD_BITS) - 1
    return code >> (2 * FIELD_BITS), (code >> FIELD_BITS) & mask, code & mask


def _reduce(code: np.ndarray, n: np.ndarray, total: np.ndarray, bits: np.ndarray) -> tuple | None:
    """Sum entries of equal code; None if two of them share a trial (a duplicate row)."""
    order = np.argsort(code, kind="stable")
    code, n, total, bits = code[order], n[order], total[order], bits[order]
    start = np.flatnonzero(np.concatenate([[True], code[1:] != code[:-1]]))
    merged = np.bitwise_or.reduceat(bits, start)
    counts = np.add.reduceat(np.bitwise_count(bits).astype(np.int64), start)
    if np.any(np.bitwise_count(merged).astype(np.int64) != counts):
        return None
    return code[start], np.add.reduceat(n, start), np.add.reduceat(total, start), merged


class _Giveup(Exception):
    """The columnar reader met something it does not check itself: the row-by-row reader takes over."""


@dataclass
class _Columnar:
    groups: dict[str, str]
    histories: int
    models: Strings = field(default_factory=Strings)
    ids: Strings = field(default_factory=Strings)
    contexts: Strings = field(default_factory=lambda: Strings([None], {None: 0}))
    kind: dict[str, str] = field(default_factory=dict)
    merged: tuple | None = None
    pending: list = field(default_factory=list)
    pending_size: int = 0
    rows: int = 0

    def _encode(self, column, strings: Strings) -> np.ndarray:
        import pyarrow.compute as pc

        encoded = pc.dictionary_encode(column).combine_chunks()
        lookup = strings.lookup(encoded.dictionary.to_pylist())
        indices = encoded.indices.to_numpy(zero_copy_only=False)
        return lookup[np.asarray(indices, dtype=np.int64)]

    def block(self, raw: bytes) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.json as pj

        lines = raw.count(b"\n") + (0 if raw.endswith(b"\n") else 1)
        try:
            table = pj.read_json(io.BytesIO(raw))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            raise _Giveup from None
        rows = table.num_rows
        names = set(table.column_names)
        # every line one object; every object names its context (a missing key reads as null)
        if rows != lines or not names <= set(FIELDS) or not {"model", "id"} <= names or raw.count(b'"context":') != rows:
            raise _Giveup
        types = {name: table.schema.field(name).type for name in names}
        allowed = {
            "model": ("string",),
            "id": ("string",),
            "context": ("string", "null"),
            "trial": ("int64", "null"),
            "correct": ("int64", "null"),
            "score": ("double", "int64", "null"),
        }
        if any(str(types[name]) not in allowed[name] for name in names):
            raise _Giveup
        for name in ("model", "id"):
            if table[name].null_count or pc.min(pc.utf8_length(table[name])).as_py() < 1:
                raise _Giveup
        if pc.any(pc.match_substring(table["id"], "/")).as_py():  # a request id of `prompts`: the row reader reads it
            raise _Giveup

        def numbers(name: str, dtype) -> tuple[np.ndarray, np.ndarray]:
            if name not in names or str(types[name]) == "null":
                return np.zeros(rows, dtype=dtype), np.zeros(rows, dtype=bool)
            column = table[name].combine_chunks()
            present = ~np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            return np.asarray(column.fill_null(0).to_numpy(zero_copy_only=False), dtype=dtype), present

        trial, has_trial = numbers("trial", np.int64)
        correct, has_correct = numbers("correct", np.int64)
        score, has_score = numbers("score", np.float64)
        if np.any(has_correct == has_score) or np.any(has_correct & ~has_trial):
            raise _Giveup
        if np.any(has_trial & ((trial < 0) | (trial > MAX_TRIAL_BIT - 1))):
            raise _Giveup
        if np.any(has_correct & ((correct < 0) | (correct > 1))) or not np.all(~has_score | ((score >= 0) & (score <= 1))):
            raise _Giveup
        model = self._encode(table["model"], self.models)
        qid = self._encode(table["id"], self.ids)
        if "context" in names and str(types["context"]) == "string":
            before = len(self.contexts.values)
            encoded = pc.dictionary_encode(table["context"]).combine_chunks()
            lookup = self.contexts.lookup(encoded.dictionary.to_pylist())
            for value in self.contexts.values[before:]:
                if value not in self.groups:
                    group = sqa_group(value, self.histories)
                    if group is None:
                        raise _Giveup
                    self.groups[value] = group
            indices = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
            context = np.where(indices < 0, 0, lookup[np.maximum(np.asarray(indices, dtype=np.int64), 0)])
        else:
            context = np.zeros(rows, dtype=np.int64)
        limit = 1 << FIELD_BITS
        if len(self.models.values) >= limit or len(self.ids.values) >= limit or len(self.contexts.values) >= limit:
            raise _Giveup
        for m in np.unique(model):
            kinds = {"correct" if c else "score" for c in np.unique(has_correct[model == m])}
            name = self.models.values[int(m)]
            kinds.add(self.kind.setdefault(name, next(iter(kinds))))
            if len(kinds) > 1:
                raise _Giveup
        bits = np.where(has_trial, np.left_shift(np.uint64(1), (trial + 1).astype(np.uint64)), np.uint64(1)).astype(np.uint64)
        value = np.where(has_correct, correct.astype(np.float64), score)
        reduced = _reduce(_pack(model, qid, context), np.ones(rows, dtype=np.int64), value, bits)
        if reduced is None:
            raise _Giveup
        self.pending.append(reduced)
        self.pending_size += reduced[0].size
        self.rows += rows
        if self.pending_size > 2 * (0 if self.merged is None else self.merged[0].size) + 1_000_000:
            self.compact()

    def compact(self) -> None:
        parts = ([self.merged] if self.merged is not None else []) + self.pending
        if not parts:
            return
        merged = _reduce(*(np.concatenate([p[i] for p in parts]) for i in range(4)))
        if merged is None:
            raise _Giveup
        self.merged, self.pending, self.pending_size = merged, [], 0

    def table(self) -> CellTable:
        self.compact()
        code, n, total, _ = self.merged
        model, qid, context = _unpack(code)
        return CellTable(self.models.values, self.ids.values, self.contexts.values, model, qid, context, n, total, self.kind, self.groups)


def read_columnar(path: Path, groups: dict[str, str], histories: int) -> tuple[CellTable, dict] | None:
    """Cells and the report's "predictions" block of a clean file; None if the file has anything the
    row-by-row reader should report (or cannot be read here)."""
    state = _Columnar(dict(groups), histories)
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            carry = b""
            first = True
            while True:
                data = handle.read(BLOCK_BYTES)
                digest.update(data)
                if first and (data.startswith(b"\xef\xbb\xbf") or not data):
                    return None
                first = False
                if not data:
                    if carry.strip():
                        state.block(carry)
                    elif carry:
                        return None
                    break
                data = carry + data
                cut = data.rfind(b"\n")
                if cut < 0:
                    if len(data) > MAX_LINE:  # a line longer than any reader holds: the row reader reports it
                        return None
                    carry = data
                    continue
                carry = data[cut + 1 :]
                state.block(data[: cut + 1])
        cells = state.table()
    except (_Giveup, OSError):
        return None
    return cells, {"path": str(path), "sha256": digest.hexdigest(), "rows": state.rows, "excluded": 0, "problems": []}


@dataclass
class RowAccumulator:
    """Row-by-row reduction with the checks of every row (`check` before `add`, as PredictionsReader
    calls them). A duplicate's message names the earlier line once `resolve_duplicates` has run."""

    groups: dict[str, str]
    histories: int
    shape_problem: object  # row -> message | None
    models: Strings = field(default_factory=Strings)
    ids: Strings = field(default_factory=Strings)
    contexts: Strings = field(default_factory=lambda: Strings([None], {None: 0}))
    kind: dict[str, str] = field(default_factory=dict)
    cells: dict = field(default_factory=dict)  # (model, qid, context) indices -> [n, total, trial mask]
    duplicates: dict = field(default_factory=dict)  # (model, id, context, trial) -> None, filled by resolve

    DUPLICATE = "duplicate row (same key as an earlier line)"

    def _cell_key(self, row) -> tuple:
        return (self.models.get(row.model), self.ids.get(row.id), self.contexts.get(row.context))

    @staticmethod
    def _bit(row) -> int:
        return 1 if row.trial is None else 1 << (row.trial + 1)

    def check(self, row) -> str | None:
        problem = self.shape_problem(row)
        if problem:
            return problem
        if row.context is not None and row.context not in self.groups:
            group = sqa_group(row.context, self.histories)
            if group is None:
                return f"unknown context {row.context!r}: not in the release's contexts.jsonl nor an SQA history id (use the ids `ctxrobust prompts` wrote)"
            self.groups[row.context] = group
        kind = "score" if row.score is not None else "correct"  # a response row is graded into a 0/1 trial
        first = self.kind.setdefault(row.model, kind)
        if first != kind:
            return f"model {row.model!r} mixes 'correct' and 'score' rows (its earlier rows have {first!r}); use one kind per model"
        cell = self.cells.get(self._cell_key(row))
        if cell is not None and cell[2] & self._bit(row):
            self.duplicates[(row.model, row.id, row.context, row.trial)] = None
            return self.DUPLICATE
        return None

    def add(self, row) -> None:
        value = row.correct if row.correct is not None else row.score
        key = self._cell_key(row)
        cell = self.cells.get(key)
        if cell is None:
            self.cells[key] = [1, value, self._bit(row)]
        else:
            cell[0] += 1
            cell[1] += value
            cell[2] |= self._bit(row)

    def resolve_duplicates(self, reader, row_model) -> None:
        """Name the first line of every duplicated key in its duplicates' messages (a second pass over
        the file, only when there are duplicates)."""
        if not self.duplicates:
            return
        from pydantic import ValidationError

        from ctxrobust.evaluation.predictions import Problem

        first: dict = {}
        line_key: dict = {}
        for number, raw in reader.source.raw():
            try:
                row = row_model.model_validate_json(raw)
            except ValidationError:
                continue
            key = (row.model, row.id, row.context, row.trial)
            if key in self.duplicates:
                first.setdefault(key, number)
                line_key[number] = key
        for i, problem in enumerate(reader.problems):
            if problem.message == self.DUPLICATE and problem.line in line_key:
                earlier = first[line_key[problem.line]]
                where = f"line {earlier}" if isinstance(earlier, int) else earlier
                reader.problems[i] = Problem(problem.line, f"duplicate row (same key as {where})", same_as=earlier)

    def table(self) -> CellTable:
        keys = np.array(list(self.cells), dtype=np.int64).reshape(-1, 3)
        values = list(self.cells.values())
        n = np.fromiter((c[0] for c in values), dtype=np.int64, count=len(values))
        total = np.fromiter((c[1] for c in values), dtype=np.float64, count=len(values))
        return CellTable(
            self.models.values, self.ids.values, self.contexts.values, keys[:, 0], keys[:, 1], keys[:, 2], n, total, self.kind, self.groups
        )
