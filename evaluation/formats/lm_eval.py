"""lm-evaluation-harness `--log_samples` files: `samples_<task>_<date>.jsonl`, one line per document
with `doc_id`, `doc` (the document as the task read it), `target`, `arguments`, `resps` (per request,
the list of model outputs), `filtered_resps`, `filter`, `metrics`, `doc_hash`, ... and a
`results_<date>.json` beside it whose `model_name` (or `config.model_args`) names the model.

A run over these requests reads the `prompts` file as its dataset, so `doc` is a request line and
`doc["id"]` its request id; the response is the raw generation `resps[0][0]`.
"""

from __future__ import annotations

import json
from pathlib import Path

from ctxrobust.canonical import iter_jsonl


def is_samples_line(line: dict) -> bool:
    return isinstance(line, dict) and "doc_id" in line and "resps" in line and "doc" in line


def model_name(path: Path) -> str | None:
    """The model named by a results_*.json beside the samples file (the newest), if any."""
    for results in sorted(path.parent.glob("results_*.json"), reverse=True):
        try:
            data = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            name = data.get("model_name") or (data.get("config") or {}).get("model_args") or (data.get("config") or {}).get("model")
            if isinstance(name, str) and name:
                return name
    return None


def records(path: Path):
    """(line, request id, text, failure) per sample line."""
    for number, line in iter_jsonl(path):
        if not is_samples_line(line):
            yield number, None, None, "not an lm-eval sample (expected doc_id, doc, resps)"
            continue
        doc = line.get("doc")
        custom_id = doc.get("id") if isinstance(doc, dict) else None
        if not isinstance(custom_id, str):
            yield number, None, None, "its doc has no request 'id'; run lm-eval over the `ctxrobust prompts` file"
            continue
        resps = line.get("resps")
        text = None
        if isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0]:
            text = resps[0][0]
        elif isinstance(resps, list) and resps and isinstance(resps[0], str):
            text = resps[0]
        if not isinstance(text, str):
            yield number, custom_id, None, "no generated text in 'resps'"
            continue
        yield number, custom_id, text, None
