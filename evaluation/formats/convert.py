"""Detect a predictions file's format and turn other runners' files into the dataset's native rows.

Formats: "native" (the dataset's predictions JSONL), "openai-batch" (OpenAI Batch output or error
lines), "vllm-batch" (`vllm run-batch` output, the same lines), "lm-eval" (`--log_samples`
samples_*.jsonl), "inspect" (Inspect AI .eval or .json log). Responses come back through their
request ids (`custom_id`, lm-eval `doc.id`, Inspect sample id); a failed request becomes a row with
an empty response, so it stays in every denominator as invalid.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ctxrobust.canonical import dumps
from ctxrobust.errors import PredictionsError
from ctxrobust.evaluation.formats import inspect_log, lm_eval, openai_batch
from ctxrobust.evaluation.run.requests import decode

FORMATS = ("native", "openai-batch", "vllm-batch", "lm-eval", "inspect")
FAILED = ""  # the response written for a request that failed: no answer, so invalid


def _first_object(path: Path):
    with open(path, "rb") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    return json.loads(raw.lstrip(b"\xef\xbb\xbf"))
                except ValueError:
                    return None
    return None


def detect(path: Path) -> str:
    """The format of `path`, from its first line (or its zip / JSON-object shape)."""
    if zipfile.is_zipfile(path):
        return "inspect"
    first = _first_object(path)
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
    problems: list[tuple[int | str | None, str]] = field(default_factory=list)
    failed: int = 0
    dropped: int = 0  # source records that gave no row (each has a problem)


def convert(path: Path, form: str, prediction: Callable, aliases: dict[str, str]) -> Converted:
    """Native rows of a non-native file. `prediction(key, model, text)` is the dataset's row maker."""
    out = Converted()
    records: list[tuple[int | str, str | None, str | None, str | None, str | None]] = []  # origin, id, model, text, failure
    if form in ("openai-batch", "vllm-batch"):
        for number, raw in openai_batch.iter_lines(path):
            try:
                line = json.loads(raw.lstrip(b"\xef\xbb\xbf"))
            except ValueError:
                out.problems.append((number, "not valid JSON"))
                continue
            if not isinstance(line, dict) or not openai_batch.is_output_line(line):
                out.problems.append((number, "not a batch output line (expected custom_id with response or error)"))
                continue
            custom_id, model, text, failure = openai_batch.output_record(line)
            records.append((number, custom_id, model, text, failure))
        default_model = None
    elif form == "lm-eval":
        default_model = lm_eval.model_name(path) or "lm-eval"
        for number, custom_id, text, failure in lm_eval.records(path):
            if custom_id is None:
                out.problems.append((number, failure))
                continue
            records.append((number, custom_id, None, text, failure))
    elif form == "inspect":
        try:
            default_model, samples = inspect_log.read_log(path)
        except (ValueError, zipfile.BadZipFile) as exc:
            raise PredictionsError(f"{path}: {exc}") from None
        for sample in samples:
            sid = sample.get("id") if isinstance(sample, dict) else None
            origin = f"sample {sid}"
            if not isinstance(sid, str):
                out.problems.append((origin, "sample id is not a request id string; use the `ctxrobust prompts` ids as sample ids"))
                continue
            text, failure = inspect_log.sample_text(sample)
            if isinstance(sample.get("epoch"), int) and sample["epoch"] > 1:
                out.problems.append((origin, f"epoch {sample['epoch']}: only epoch 1 is read (ask for samples through the request ids)"))
                continue
            records.append(
                (
                    origin,
                    sid,
                    ((sample.get("output") or {}).get("model") if isinstance(sample.get("output"), dict) else None),
                    text,
                    failure,
                )
            )
    else:
        raise PredictionsError(f"--input-format {form}: choose one of {', '.join(FORMATS)}")
    out.dropped = len(out.problems)
    models = [m for _, _, m, _, _ in records if m]
    counts = Counter(models)
    fallback = default_model or (
        min(counts, key=lambda m: (-counts[m], m)) if counts else "unknown-model"
    )  # failed lines: the file's usual model
    for origin, custom_id, model, text, failure in records:
        key = decode(custom_id, aliases) if custom_id else None
        if key is None:
            out.problems.append((origin, f"request id {custom_id!r} is not one `ctxrobust prompts` wrote (item/condition/sample)"))
            out.dropped += 1
            continue
        if failure:
            out.failed += 1
            out.problems.append((origin, f"{failure}; counted as an invalid response"))
        try:
            row = prediction(key, default_model or model or fallback, FAILED if text is None else text)
        except ValueError as exc:
            out.problems.append((origin, f"request id {custom_id!r}: {exc}"))
            out.dropped += 1
            continue
        out.rows.append(row)
        out.origins.append(origin)
    return out


def write_native(converted: Converted, target: Path) -> None:
    with open(target, "w", encoding="utf-8", newline="\n") as handle:
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
        origin = converted.origins[line - 1] if isinstance(line, int) and 0 < line <= len(converted.origins) else line
        moved.append(_problem(origin, problem.get("message", "")))
    own = [_problem(origin, message) for origin, message in converted.problems]
    block.update(
        {
            "path": str(path),
            "sha256": sha256,
            "input_format": form,
            "rows": block.get("rows", 0) + sum(1 for origin, _ in converted.problems if origin is not None) - converted.failed,
            "failed_requests": converted.failed,
            "problems": own + moved,
        }
    )
    block["excluded"] = block.get("excluded", 0) + len(converted.problems) - converted.failed
    return report


def _problem(origin, message: str) -> dict:
    if isinstance(origin, str):
        return {"line": None, "message": f"{origin}: {message}"}
    return {"line": origin, "message": message}
