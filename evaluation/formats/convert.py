"""Detect a predictions file's format and turn other runners' files into the dataset's native rows.

Formats: "native" (the dataset's predictions JSONL), "openai-batch" (OpenAI Batch output or error
lines), "vllm-batch" (`vllm run-batch` output, the same lines), "lm-eval" (`--log_samples`
samples_*.jsonl), "inspect" (Inspect AI .eval or .json log), and "csv" / "parquet" (the native rows as a
table, one column per predictions field: tabular.py). Responses come back through their
request ids (`custom_id`, lm-eval `doc.id`, Inspect sample id); a failed request becomes a row with
an empty response, so it stays in every denominator as invalid. A table's rows are the native rows
themselves, their cells typed by the dataset's predictions JSON Schema.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ctxrobust.canonical import dumps
from ctxrobust.errors import CtxRobustError, PredictionsError
from ctxrobust.evaluation.formats import inspect_log, lm_eval, openai_batch, tabular
from ctxrobust.evaluation.formats.files import MAX_LINE, TOO_DEEP, long_line, open_regular, parse
from ctxrobust.evaluation.formats.files import lines as read_lines
from ctxrobust.evaluation.report import MAX_SHOWN, plain
from ctxrobust.evaluation.run.requests import decode

FORMATS = ("native", "openai-batch", "vllm-batch", "lm-eval", "inspect", *tabular.FORMS)
FAILED = ""  # the response written for a request that failed: no answer, so invalid
SNIFF = 4096  # bytes that tell another encoding or a compressed file
MAX_PASSED = 1000  # lines nested too deep that detection reads past before it gives up
MAX_MESSAGE = 400  # characters of one problem message (as the native reader's)
_SAME_KEY = re.compile(r"\(same key as line (\d+)\)")  # the scorer's duplicate row: a line of the converted rows


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
    dropped: int = 0  # source records that gave no row (each has a problem)
    cells: dict[int, str] = field(default_factory=dict)  # row index -> a table's bad cell, which the scorer rejects: said so


def _text_file(path: Path) -> None:
    """Refuse at once a JSON Lines file in another encoding or compressed (one line, not one per line)."""
    from ctxrobust.evaluation.predictions import encoding_problem

    with open_regular(path) as handle:
        head = handle.read(SNIFF)
    problem = encoding_problem(head)
    if problem:
        raise PredictionsError(f"{plain(path)}: {problem}")


def convert(path: Path, form: str, prediction: Callable, aliases: dict[str, str], dataset: str | None = None) -> Converted:
    """Native rows of a non-native file. `prediction(key, model, text)` is the dataset's row maker.

    The file is read as a regular file; a line (or Inspect member) that is not JSON, too long or nested too
    deep is one problem of its own and the others are still converted. A file that cannot be read as a whole
    (not a regular file, another encoding, an Inspect log over its bounds) is one PredictionsError.

    A CSV or Parquet table ("csv", "parquet") holds the native rows themselves: its cells are typed by the
    predictions schema of `dataset` (by default the dataset whose prompts module `prediction` is from), a
    row with a cell that cannot be is one problem at its CSV line (or "row N"), naming the column."""
    if tabular.is_table(form):
        return _table(path, form, dataset or tabular.dataset_of(prediction))
    out = Converted()
    notes: list[tuple[None, str]] = []  # about the file as a whole: no record lost
    records: list[tuple[int | str, str | None, str | None, str | None, str | None]] = []  # origin, id, model, text, failure
    if form in ("openai-batch", "vllm-batch"):
        _text_file(path)
        for number, raw in openai_batch.iter_lines(path):
            if raw is None:
                out.problems.append((number, long_line(MAX_LINE)))
                continue
            line, problem = parse(raw)
            if problem is not None:
                out.problems.append((number, problem))
                continue
            if not isinstance(line, dict) or not openai_batch.is_output_line(line):
                out.problems.append((number, "not a batch output line (expected custom_id with response or error)"))
                continue
            custom_id, model, text, failure = openai_batch.output_record(line)
            records.append((number, custom_id, model, text, failure))
        default_model = None
    elif form == "lm-eval":
        _text_file(path)
        found: list[str] = []
        default_model = lm_eval.model_name(path, found) or lm_eval.DEFAULT_MODEL
        notes += [(None, note) for note in found]
        for number, custom_id, text, failure in lm_eval.records(path):
            if custom_id is None:
                out.problems.append((number, failure))
                continue
            records.append((number, custom_id, None, text, failure))
    elif form == "inspect":
        try:
            log = inspect_log.read_log(path)
        except (ValueError, zipfile.BadZipFile) as exc:
            raise PredictionsError(f"{plain(path)}: {exc}") from None
        default_model = log.model
        for origin, message in log.problems:
            (out.problems if origin is not None else notes).append((origin, message))
        for sample in log.samples:
            sid = sample.get("id") if isinstance(sample, dict) else None
            origin = f"sample {plain(sid, 80)}"
            if not isinstance(sid, str):
                out.problems.append((origin, "sample id is not a request id string; use the `ctxrobust prompts` ids as sample ids"))
                continue
            text, failure = inspect_log.sample_text(sample)
            if isinstance(sample.get("epoch"), int) and sample["epoch"] > 1:
                out.problems.append((origin, f"epoch {sample['epoch']}: only epoch 1 is read (ask for samples through the request ids)"))
                continue
            output = sample.get("output")
            model = output.get("model") if isinstance(output, dict) else None
            records.append((origin, sid, model if isinstance(model, str) else None, text, failure))
    else:
        raise PredictionsError(f"--input-format {plain(form)}: choose one of {', '.join(FORMATS)}")
    out.dropped = len(out.problems)
    models = [m for _, _, m, _, _ in records if m]
    counts = Counter(models)
    fallback = default_model or (
        min(counts, key=lambda m: (-counts[m], m)) if counts else "unknown-model"
    )  # failed lines: the file's usual model
    for origin, custom_id, model, text, failure in records:
        key = decode(custom_id, aliases) if custom_id else None
        if key is None:
            out.problems.append(
                (origin, f"request id {plain(repr(custom_id), MAX_SHOWN)} is not one `ctxrobust prompts` wrote (item/condition/sample)")
            )
            out.dropped += 1
            continue
        if failure:
            out.failed += 1
            out.problems.append((origin, f"{failure}; counted as an invalid response"))
        try:
            row = prediction(key, default_model or model or fallback, FAILED if text is None else text)
        except ValueError as exc:
            out.problems.append((origin, f"request id {plain(repr(custom_id), MAX_SHOWN)}: {plain(exc)}"))
            out.dropped += 1
            continue
        out.rows.append(row)
        out.origins.append(origin)
    out.problems += notes
    return out


def _table(path: Path, form: str, dataset: str) -> Converted:
    table = tabular.read(path, form, tabular.shape_of(dataset))
    return Converted(rows=table.rows, origins=table.origins, problems=list(table.problems), dropped=len(table.problems), cells=table.cells)


def write_native(converted: Converted, target: Path) -> None:
    """The rows as a native predictions file at a new path (created exclusively: never through a link)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
        for row in converted.rows:
            handle.write(dumps(row) + "\n")


def relabel(report: dict, path: Path, form: str, converted: Converted, sha256: str) -> dict:
    """The report of the converted rows, about the file given: its path, hash and format, the
    conversion's problems, and the scorer's problems placed at their original lines."""
    block = report.get("predictions")
    if not isinstance(block, dict):
        return report
    moved = []
    for problem in block.get("problems", []):
        line = problem.get("line")
        origin = _origin_of(converted, line)
        message = _SAME_KEY.sub(lambda match: _same_key(converted, int(match.group(1))), problem.get("message", ""))
        if isinstance(line, int) and line - 1 in converted.cells:  # a table's cell of another type: said of its column
            message = plain(converted.cells[line - 1], MAX_MESSAGE)
        moved.append(_problem(origin, message, None))  # the scorer's, already escaped and cut
    own = [_problem(origin, message) for origin, message in converted.problems]
    lost = sum(1 for origin, _ in converted.problems if origin is not None)  # a record each (a note about the file is none)
    block.update(
        {
            "path": str(path),
            "sha256": sha256,
            "input_format": form,
            "rows": block.get("rows", 0) + lost - converted.failed,
            "failed_requests": converted.failed,
            "problems": own + moved,
        }
    )
    block["excluded"] = block.get("excluded", 0) + lost - converted.failed
    return report


def _origin_of(converted: Converted, line):
    """Where the converted file's line `line` came from in the file given (its line, "row N", "sample <id>")."""
    return converted.origins[line - 1] if isinstance(line, int) and 0 < line <= len(converted.origins) else line


def _same_key(converted: Converted, line: int) -> str:
    """The scorer's "(same key as line N)", N a line of the converted rows, said of the file given."""
    origin = _origin_of(converted, line)
    return f"(same key as line {origin})" if isinstance(origin, int) else f"(same key as {plain(origin, 80)})"


def _problem(origin, message: str, limit: int | None = MAX_MESSAGE) -> dict:
    text = f"{origin}: {message}" if isinstance(origin, str) else message
    return {"line": origin if not isinstance(origin, str) else None, "message": plain(text, limit)}
