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

from ctxrobust.evaluation.formats.files import MAX_LINE, lines, long_line, open_regular, parse, size_text
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

    A results file that cannot be read as a regular file of at most MAX_RESULTS bytes (a link, which is never
    followed, a FIFO, device, folder or larger file) or that is not JSON (or nests too deep) is passed over,
    with a note naming it in `notes`: the samples are scored all the same."""
    run = run_of(path)
    found = sorted(path.parent.glob("results_*.json"), reverse=True)
    for results in sorted(found, key=lambda p: p.name != f"results_{run}.json"):  # the run's own first
        data, problem = _read_results(results)
        if problem is None:
            data, problem = parse(data)
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


def _read_results(results: Path) -> tuple[bytes, str | None]:
    """(the bytes of a results file, None), or (b"", why it is not read): never through a link, never from
    anything but a regular file, never more than MAX_RESULTS bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        if stat.S_ISLNK(os.lstat(results).st_mode):
            return b"", "a link (not followed)"
        fd = os.open(results, flags)
    except OSError as exc:
        return b"", f"cannot read ({exc.strerror or exc})"
    mode = os.fstat(fd)
    if not stat.S_ISREG(mode.st_mode):
        os.close(fd)
        special = "a FIFO, device or other special file, not a regular file"
        return b"", "a folder, not a results file" if stat.S_ISDIR(mode.st_mode) else special
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_RESULTS + 1) if mode.st_size <= MAX_RESULTS else b""
        if mode.st_size > MAX_RESULTS or len(data) > MAX_RESULTS:
            return b"", f"more than the {size_text(MAX_RESULTS)} read into memory"
    return data, None


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
