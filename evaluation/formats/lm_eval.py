"""lm-evaluation-harness `--log_samples` files: `samples_<task>_<date>.jsonl`, one line per document
with `doc_id`, `doc` (the document as the task read it), `target`, `arguments`, `resps` (per request,
the list of model outputs), `filtered_resps`, `filter`, `metrics`, `doc_hash`, ... and a
`results_<date>.json` beside it whose `model_name` (or `config.model_args`) names the model.

A run over these requests reads the `prompts` file as its dataset, so `doc` is a request line and
`doc["id"]` its request id; the response is the raw generation `resps[0][0]`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ctxrobust.evaluation.formats.files import MAX_LINE, lines, long_line, open_regular, parse, read_regular
from ctxrobust.evaluation.report import plain

MAX_RESULTS = 64 * 1024 * 1024  # bytes of a results_*.json read into memory (lm-eval's are tens of KB)
DEFAULT_MODEL = "lm-eval"


def is_samples_line(line: dict) -> bool:
    return isinstance(line, dict) and "doc_id" in line and "resps" in line and "doc" in line


def run_of(path: Path) -> str | None:
    """The run a samples file is of: the date lm-eval writes into `samples_<task>_<date>.jsonl` and into the
    `results_<date>.json` of the same run; None for a file not so named."""
    name = path.name
    if not name.startswith("samples_") or not name.endswith(".jsonl") or "_" not in name[len("samples_") :]:
        return None
    return name[name.rfind("_") + 1 : -len(".jsonl")] or None


def model_name(path: Path, notes: list[str] | None = None) -> str | None:
    """The model named by a results_*.json beside the samples file, if any: the run's own (the same date), else
    the newest that names one.

    Each results file is read as a regular file of at most MAX_RESULTS bytes: a FIFO, device, folder or larger
    file there is refused (PredictionsError), since it would block, never end or fill memory. A results file
    that is not JSON (or nests too deep) is passed over, with a note in `notes`."""
    run = run_of(path)
    found = sorted(path.parent.glob("results_*.json"), reverse=True)
    for results in sorted(found, key=lambda p: p.name != f"results_{run}.json"):  # the run's own first
        try:
            if stat.S_ISDIR(os.stat(results).st_mode):
                continue  # a folder so named holds no results
        except OSError as exc:  # a dangling link, no permission: as before, no model name from it
            if notes is not None:
                notes.append(f"{plain(results.name)} beside it: cannot read ({exc.strerror or exc}); passed over when naming the model")
            continue
        data, problem = parse(
            read_regular(
                results,
                MAX_RESULTS,
                f" (an lm-eval results file beside {plain(path.name)}, read for its model name)",
                "; remove it, or move the samples file to a folder of its own run",
            )
        )
        if problem is not None:
            if notes is not None:
                notes.append(f"{plain(results.name)} beside it: {problem}; passed over when naming the model")
            continue
        if isinstance(data, dict):
            config = data.get("config") if isinstance(data.get("config"), dict) else {}
            name = data.get("model_name") or config.get("model_args") or config.get("model")
            if isinstance(name, str) and name:
                return name
    return None


def records(path: Path):
    """(line, request id, text, failure) per sample line; a line that is not JSON, too long or nested too
    deep gives (line, None, None, why) and the other lines are still read."""
    with open_regular(path) as handle:
        for number, raw in lines(handle):
            if raw is None:
                yield number, None, None, long_line(MAX_LINE)
                continue
            line, problem = parse(raw)
            if problem is not None:
                yield number, None, None, problem
                continue
            yield (number, *_record(line))


def _record(line) -> tuple[str | None, str | None, str | None]:
    if not is_samples_line(line):
        return None, None, "not an lm-eval sample (expected doc_id, doc, resps)"
    doc = line.get("doc")
    custom_id = doc.get("id") if isinstance(doc, dict) else None
    if not isinstance(custom_id, str):
        return None, None, "its doc has no request 'id'; run lm-eval over the `ctxrobust prompts` file"
    resps = line.get("resps")
    text = None
    if isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0]:
        text = resps[0][0]
    elif isinstance(resps, list) and resps and isinstance(resps[0], str):
        text = resps[0]
    if not isinstance(text, str):
        return custom_id, None, "no generated text in 'resps'"
    return custom_id, text, None
