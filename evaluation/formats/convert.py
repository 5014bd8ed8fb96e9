"""Detect a predictions file's format and turn other runners' files into the dataset's native rows.

Formats: "native" (the dataset's predictions JSONL), "openai-batch" (OpenAI Batch output or error
lines), "vllm-batch" (`vllm run-batch` output, the same lines), "lm-eval" (`--log_samples`
samples_*.jsonl), "inspect" (Inspect AI .eval or .json log), and "csv" / "parquet" (the native rows as a
table, one column per predictions field: tabular.py). Responses come back through their
request ids (`custom_id`, lm-eval `doc.id`, Inspect sample id); a failed request becomes a row with
an empty response, so it stays in every denominator as invalid. A table's rows are the native rows
themselves, their cells typed by the dataset's predictions JSON Schema.

`records` gives a file's rows one source record at a time (what a scorer streams); `convert` holds them all.
A file most of whose request ids this release cannot take (another release's or dataset's) is said in one
line, not one per row. grouping.py groups the files of one run into one submission.
"""

from __future__ import annotations

import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ctxrobust.errors import CtxRobustError, PredictionsError
from ctxrobust.evaluation.formats import inspect_log, lm_eval, openai_batch, tabular
from ctxrobust.evaluation.formats.files import MAX_LINE, TOO_DEEP, long_line, open_regular, parse
from ctxrobust.evaluation.formats.files import lines as read_lines
from ctxrobust.evaluation.report import MAX_SHOWN, plain
from ctxrobust.evaluation.run.requests import RequestKey, decode

FORMATS = ("native", "openai-batch", "vllm-batch", "lm-eval", "inspect", *tabular.FORMS)
FAILED = ""  # the response written for a request that failed: no answer, so invalid
SNIFF = 4096  # bytes that tell another encoding or a compressed file
MAX_PASSED = 1000  # lines nested too deep that detection reads past before it gives up
MAX_MESSAGE = 400  # characters of one problem message (as the native reader's)
MAX_HELD = 100_000  # problems of request ids this release cannot take, held back until the file's share of them is known
MAX_EXAMPLES = 3  # request ids shown in the line about a file of another release's ids
SHOWN_ID = 40  # characters of each of them shown
SHOWN_REASON = 120  # characters of the first one's reason shown
UNKNOWN_MODEL = "unknown-model"  # the model of rows whose file names none


def _first_object(handle):
    """The first line's object; a line nested too deep (a nesting bomb) is passed over, since it is one problem
    of its line whatever the format, and the next line tells the format. None for a first line that is not
    JSON (or too long to read)."""
    for passed, (_, raw) in enumerate(read_lines(handle)):
        if raw is None or passed >= MAX_PASSED:
            return None
        value, problem = parse(raw)
        if problem is None:
            return value
        if problem != TOO_DEEP:
            return None
    return None


def detect(path: Path) -> str:
    """The format of `path`, from its name, its first bytes or line (a `.csv` name or a CSV header of predictions
    fields; a `.parquet` name or PAR1), or its zip / JSON-object shape. A file that is not a regular file is
    "native": the predictions reader refuses it with its own line."""
    try:
        handle = open_regular(path)
    except CtxRobustError:
        return "native"
    with handle:
        table = tabular.sniff(handle, path.suffix.lower())
        if table is not None:
            return table
        handle.seek(0)
        if zipfile.is_zipfile(handle):
            return "inspect"
        handle.seek(0)
        first = _first_object(handle)
    if first is None and path.suffix.lower() == ".json":
        return "inspect"  # a pretty-printed JSON object: an Inspect .json log
    if isinstance(first, dict):
        if openai_batch.is_output_line(first):
            return "vllm-batch" if openai_batch.is_vllm(first) else "openai-batch"
        if lm_eval.is_samples_line(first):
            return "lm-eval"
        if inspect_log.is_json_log(first):
            return "inspect"
    return "native"


@dataclass
class Converted:
    rows: list[dict] = field(default_factory=list)
    origins: list[int | str] = field(default_factory=list)  # per row: the line number or "sample <id>" it came from
    problems: list[tuple[int | str | None, str]] = field(default_factory=list)  # origin None: about the file, no record lost
    failed: int = 0
    dropped: int = 0  # source records that gave no row (each has a problem, or is one of the left_out)
    cells: dict[int, str] = field(default_factory=dict)  # row index -> a table's bad cell, which the scorer rejects: said so
    left_out: int = 0  # records left out without a problem of their own: said once, in a line about the file
    notes: list[tuple[None, str]] = field(default_factory=list)  # about the file as a whole: no record lost

    def take(self, origin, row: dict | None, problem: str | None) -> None:
        """One record of `records()`: a row (a failed request's with its problem), a record that gave no row,
        or, with no origin, a note about the file (added after the records' problems by `close`)."""
        if row is not None:
            self.rows.append(row)
            self.origins.append(origin)
            if problem:
                self.failed += 1
                self.problems.append((origin, problem))
        elif origin is None:
            self.notes.append((None, problem))
        else:
            self.dropped += 1
            if problem:
                self.problems.append((origin, problem))
            else:
                self.left_out += 1

    def close(self) -> Converted:
        self.problems += self.notes
        self.notes = []
        return self


def _text_file(path: Path) -> None:
    """Refuse at once a JSON Lines file in another encoding or compressed (one line, not one per line)."""
    from ctxrobust.evaluation.rows import encoding_problem

    with open_regular(path) as handle:
        head = handle.read(SNIFF)
    problem = encoding_problem(head)
    if problem:
        raise PredictionsError(f"{plain(path)}: {problem}")


def records(
    path: Path,
    form: str,
    prediction: Callable,
    aliases: dict[str, str],
    dataset: str | None = None,
    *,
    model: str | None = None,
    known: Callable[[RequestKey], bool] | None = None,
):
    """The native rows of a runner's file (or a CSV / Parquet table), one source record at a time, as
    (origin, row, problem): origin is the record's line number, "row N" of a Parquet table or "sample <id>" of an
    Inspect log, or None for a line about the file as a whole.

    - (origin, row, None): a row;
    - (origin, row, message): the row of a request that failed (an empty response, counted as invalid), and why;
    - (origin, None, message): a record that gives no row (not JSON, not a request id `prompts` wrote, a table row
      that cannot be read or a cell of another type, ...), and why;
    - (origin, None, None): a record left out that a line about the file accounts for (most of its request ids are
      of another release or dataset: one line says so, not one per row);
    - (None, None, message): a note about the file; no record is lost.

    `prediction(key, model, text)` is the dataset's row maker; `aliases` maps hashed item tokens back. `model`
    names the rows whose record names none (a Batch error file's failed requests: its group's model; by default
    the model most of the file's records name); `known(key)`, when given, says whether the release has a request,
    so a file of another release's ids is said in one line. The file is read as a regular file within bounds (see
    `convert`); one that cannot be read as a whole is one PredictionsError, raised before its first record."""
    for origin, _, row, problem in _records(path, form, prediction, aliases, dataset, model, known):
        yield origin, row, problem


def _records(path, form, prediction, aliases, dataset=None, model=None, known=None):
    """`records`, each with the record's request id (None where it has none)."""
    if tabular.is_table(form):
        yield from _table_records(path, form, dataset or tabular.dataset_of(prediction))
        return
    if form == "native":
        raise PredictionsError(f"{plain(path)}: native predictions rows are read by the dataset's scorer, not converted")
    if form in ("openai-batch", "vllm-batch"):
        _text_file(path)
        source = _batch(path, model)
    elif form == "lm-eval":
        _text_file(path)
        source = _lm_eval(path, model)
    elif form == "inspect":
        source = _inspect(path, model)
    else:
        raise PredictionsError(f"--input-format {plain(form)}: choose one of {', '.join(FORMATS)}")
    foreign = _Foreign()
    for origin, custom_id, row_model, text, failure in source:
        if custom_id is None:  # a record without a request id (not JSON, ...), or a note (origin None)
            yield origin, None, None, failure
            continue
        key = decode(custom_id, aliases)
        if key is None:
            yield from foreign.add(
                origin, custom_id, f"request id {_shown(custom_id)} is not one `ctxrobust prompts` wrote (item/condition/sample)"
            )
            continue
        try:
            row = prediction(key, row_model, FAILED if text is None else text)
        except ValueError as exc:
            yield from foreign.add(origin, custom_id, f"request id {_shown(custom_id)}: {plain(exc)}")
            continue
        if known is not None and not known(key):
            yield from foreign.add(origin, custom_id, f"request id {_shown(custom_id)}: the release has no such request")
            continue
        foreign.total += 1
        yield origin, custom_id, row, (f"{failure}; counted as an invalid response" if failure else None)
    yield from foreign.flush()


def _shown(custom_id: str) -> str:
    return plain(repr(custom_id), MAX_SHOWN)


class _Foreign:
    """Records whose request id this release cannot take: one problem each, unless most of the file's request ids
    are such (another release's or dataset's file): then one line says so and each is left out without one. Their
    problems are held back until that is known (at most MAX_HELD; past that, the share so far decides)."""

    def __init__(self):
        self.total = 0  # records with a request id
        self.held: list[tuple] = []
        self.count = 0
        self.examples: list[str] = []
        self.first = ""
        self.mode: str | None = None  # None: not yet known; "each": one problem each; "summary": one line

    def add(self, origin, custom_id: str, message: str):
        self.total += 1
        self.count += 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(plain(repr(custom_id), SHOWN_ID))
        self.first = self.first or plain(message, SHOWN_REASON)
        if self.mode is None:
            self.held.append((origin, custom_id, message))
            if len(self.held) > MAX_HELD:
                yield from self._decide(2 * self.count > self.total)
            return
        yield origin, custom_id, None, (message if self.mode == "each" else None)

    def _decide(self, summary: bool):
        self.mode = "summary" if summary else "each"
        held, self.held = self.held, []
        for origin, custom_id, message in held:
            yield origin, custom_id, None, (message if self.mode == "each" else None)

    def flush(self):
        if self.mode is None:
            yield from self._decide(self.count >= 2 and 2 * self.count > self.total)
        if self.mode == "summary":
            more = ", ..." if self.count > len(self.examples) else ""
            yield (
                None,
                None,
                None,
                f"{self.count} of its {self.total} request ids look like request ids of another release or dataset "
                f"(e.g. {', '.join(self.examples)}{more}); their records are left out: score the file against the release "
                f"(and --benchmark) its requests were written from (the first: {self.first})",
            )


def _batch(path: Path, model: str | None):
    """(origin, request id, model, text, failure) of each line of a Batch output or error file."""
    fallback = model or _usual_model(path)  # failed lines name no model: the file's usual one
    for number, raw in openai_batch.iter_lines(path):
        if raw is None:
            yield number, None, None, None, long_line(MAX_LINE)
            continue
        line, problem = parse(raw)
        if problem is not None:
            yield number, None, None, None, problem
            continue
        if not isinstance(line, dict) or not openai_batch.is_output_line(line):
            yield number, None, None, None, "not a batch output line (expected custom_id with response or error)"
            continue
        custom_id, named, text, failure = openai_batch.output_record(line)
        if custom_id is None:
            yield (
                number,
                None,
                None,
                None,
                f"request id {_shown(line.get('custom_id'))} is not one `ctxrobust prompts` wrote (item/condition/sample)",
            )
            continue
        yield number, custom_id, named or fallback, text, failure


def _usual_model(path: Path) -> str:
    """The model most lines of a Batch file name (ties: the first by name), or "unknown-model"."""
    counts = Counter(name for _, name in openai_batch.line_models(path) if name)
    return min(counts, key=lambda m: (-counts[m], m)) if counts else UNKNOWN_MODEL


def _lm_eval(path: Path, model: str | None):
    found: list[str] = []
    named = lm_eval.model_name(path, found) or model or lm_eval.DEFAULT_MODEL
    for number, custom_id, text, failure in lm_eval.records(path):
        if custom_id is None:
            yield number, None, None, None, failure
            continue
        yield number, custom_id, named, text, failure
    for note in found:
        yield None, None, None, None, note


def _inspect(path: Path, model: str | None):
    log = inspect_log.Log(None)
    notes = []
    try:
        for member, sample, problem in inspect_log.entries(path, log):
            if sample is None:
                if member is None:
                    notes.append(problem)
                else:
                    yield member, None, None, None, problem
                continue
            sid = sample.get("id") if isinstance(sample, dict) else None
            origin = f"sample {plain(sid, 80)}"
            if not isinstance(sid, str):
                yield origin, None, None, None, "sample id is not a request id string; use the `ctxrobust prompts` ids as sample ids"
                continue
            if isinstance(sample.get("epoch"), int) and sample["epoch"] > 1:
                yield origin, None, None, None, f"epoch {sample['epoch']}: only epoch 1 is read (ask for samples through the request ids)"
                continue
            text, failure = inspect_log.sample_text(sample)
            output = sample.get("output")
            named = output.get("model") if isinstance(output, dict) else None
            yield origin, sid, log.model or (named if isinstance(named, str) and named else None) or model or UNKNOWN_MODEL, text, failure
    except (ValueError, zipfile.BadZipFile) as exc:
        raise PredictionsError(f"{plain(path)}: {exc}") from None
    for note in notes:
        yield None, None, None, None, note


def _table_records(path: Path, form: str, dataset: str):
    """A table's rows; a row with a cell of another type is left out here with its column named (the scorer would
    refuse it as it refuses its JSON Lines twin)."""
    table = tabular.read(path, form, tabular.shape_of(dataset))
    problems = dict(table.problems)
    by_origin = sorted([*((o, None) for o in problems), *((o, k) for k, o in enumerate(table.origins))], key=lambda p: _order(p[0]))
    for origin, index in by_origin:
        if index is None:
            yield origin, None, None, problems[origin]
        elif index in table.cells:
            yield origin, None, None, plain(table.cells[index], MAX_MESSAGE)
        else:
            yield origin, None, table.rows[index], None


def _order(origin) -> int:
    return origin if isinstance(origin, int) else int(str(origin).rpartition(" ")[2] or 0)


def convert(path: Path, form: str, prediction: Callable, aliases: dict[str, str], dataset: str | None = None) -> Converted:
    """Native rows of a non-native file, all held (`records` gives them one at a time). `prediction(key, model,
    text)` is the dataset's row maker.

    The file is read as a regular file; a line (or Inspect member) that is not JSON, too long or nested too
    deep is one problem of its own and the others are still converted. A file that cannot be read as a whole
    (not a regular file, another encoding, an Inspect log over its bounds) is one PredictionsError.

    A CSV or Parquet table ("csv", "parquet") holds the native rows themselves: its cells are typed by the
    predictions schema of `dataset` (by default the dataset whose prompts module `prediction` is from), a
    row with a cell that cannot be is one problem at its CSV line (or "row N"), naming the column."""
    if tabular.is_table(form):
        return _table(path, form, dataset or tabular.dataset_of(prediction))
    out = Converted()
    for origin, _, row, problem in _records(path, form, prediction, aliases, dataset):
        out.take(origin, row, problem)
    return out.close()


def _table(path: Path, form: str, dataset: str) -> Converted:
    table = tabular.read(path, form, tabular.shape_of(dataset))
    return Converted(rows=table.rows, origins=table.origins, problems=list(table.problems), dropped=len(table.problems), cells=table.cells)
