"""Semantic screening of the MisleadQA candidate pool (paper Appendix B.1 "Screening models and
criteria", "Screening flags", Table 9).

`ctxrobust prompts RELEASE --prompt screen` writes one request per candidate of candidates.jsonl
asking a model to judge the six criteria as pass, fail or uncertain with a short reason, in the JSON
answer format below. `ctxrobust screen RELEASE JUDGMENTS... -o flags.jsonl` reads one judgments file
per screening model (predictions format: `model`, `id`, `condition` "screen", `response`), flags a
candidate when a model marks any criterion fail, and writes the review sheet (flags.jsonl and
flags.csv: the item, each model's flags and reasons) and the Table 9 counts (flags.table9.md and the
JSON summary on standard output). An answer that cannot be parsed is reported with its file and
line, counted, and listed in the sheet; it is never dropped.

A judgments file is read as a regular file only (a FIFO or device is refused before it is opened for
good), of at most MAX_FILE_BYTES, a line at a time (a line over MAX_LINE_BYTES is one problem), and
each line and each answer is JSON of bounded depth. Every user string reaches the Markdown table as
literal text and the CSV sheet as a cell a spreadsheet shows, never runs.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import re
import stat
from collections import Counter
from pathlib import Path
from typing import BinaryIO, Iterator

from ctxrobust import jsontext
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.report import csv_cell, md_text, plain
from ctxrobust.output import write_text
from ctxrobust.release import Release

CANDIDATES = "candidates.jsonl"
CRITERIA = {  # App. B.1, criteria 1-6
    "1": (
        "source support",
        "G, S and both distractors are supported by their sources for the subject, queried property, scope and answer; restatements, aliases and format conversions keep the supported meaning and precision.",
    ),
    "2": (
        "explicit scopes",
        "The question states the target scope without revealing the gold answer or the lure. G and F state the target scope, and S states an alternative scope under which the lure holds.",
    ),
    "3": (
        "single-dimension change",
        "S differs from G in exactly one designated scope dimension and keeps the queried property and all other qualifiers.",
    ),
    "4": (
        "answer uniqueness",
        "Each scope supports a unique answer at the requested precision, and the gold answer is the only correct option among A-D for the target scope. Options A-D differ in meaning and stay distinct after normalization.",
    ),
    "5": (
        "F edits and fluency",
        "F equals G except for the registered gold-to-lure substitutions. It keeps the target qualifiers, is grammatical, and contains no remaining gold expression or other unintended contradiction.",
    ),
    "6": (
        "distractor validity",
        "Both distractors have documented support, follow the distractor rules, and are wrong for the target scope. They match the gold answer in type and precision and do not appear in the question or contexts.",
    ),
}
JUDGMENTS = ("pass", "fail", "uncertain")
MAX_FILE_BYTES = 1 << 30  # one judgments file: a few thousand answers of a few kilobytes each, with room to spare
MAX_LINE_BYTES = 1 << 20  # one judgment line: six short reasons
TABLE_COLUMNS = ("source", "items", "either")  # Table 9's own columns, beside one per model
ANSWER_FORMAT = '{"1": {"judgment": "pass", "reason": "..."}, "2": {...}, "3": {...}, "4": {...}, "5": {...}, "6": {...}}'
SCREEN_INSTRUCTION = (
    "You are screening a candidate item for a multiple-choice benchmark about misleading context. Each item has a "
    "question, options A-E (E is always Insufficient information), a gold context G (the gold answer at the target "
    "scope), a true but out-of-scope context S (the lure at an alternative scope) and a false context F (G with the "
    "gold answer replaced by the lure). Judge each criterion below as pass, fail or uncertain, with a short reason. "
    "fail marks a definite violation; uncertain marks missing evidence or an unclear interpretation.\n\n"
    + "\n".join(f"{number}. {name.capitalize()}. {text}" for number, (name, text) in CRITERIA.items())
    + f"\n\nAnswer with one JSON object and nothing else, in this format:\n{ANSWER_FORMAT}"
)


def screen_text(row: dict) -> str:
    """The request text for one candidate: the instruction, then the item with its answer key and scopes."""
    options = row["options"]
    marks = {row["gold"]: " (gold)", row["lure"]: " (lure)"}
    scopes = {k: {d: v for d, v in row[k].items() if v is not None} for k in ("target_scope", "alt_scope")}
    parts = [
        SCREEN_INSTRUCTION,
        f"Question:\n{row['question']}",
        "Options:\n" + "\n".join(f"{letter}. {options[letter]}{marks.get(letter, '')}" for letter in "ABCDE"),
        f"Scope dimension: {row['scope_dimension']}\nTarget scope: {json.dumps(scopes['target_scope'], ensure_ascii=False)}\n"
        f"Alternative scope: {json.dumps(scopes['alt_scope'], ensure_ascii=False)}",
        f"G:\n{row['contexts']['G']['text']}",
        f"S:\n{row['contexts']['S']['text']}",
        f"F:\n{row['contexts']['F']['text']}",
        "Registered substitutions (G to F): " + "; ".join(f"{s['old']!r} -> {s['new']!r}" for s in row.get("substitutions", [])),
    ]
    return "\n\n".join(parts)


def candidates(release: Release) -> list[dict]:
    if not release.file_path(CANDIDATES).exists():
        raise CtxRobustError(
            f"{release.path}: no {CANDIDATES}; screening reads the candidate pool, which releases built since the candidate stage carry: rebuild the release"
        )
    return sorted(release.iter_rows(CANDIDATES), key=lambda r: r["id"])


def screen_requests(release: Release) -> Iterator[dict]:
    """One request per candidate, sorted by id, in the request format of the other prompts."""
    for row in candidates(release):
        text = screen_text(row)
        yield {
            "id": row["id"],
            "split": "candidates",
            "condition": "screen",
            "prompt": "screen",
            "text": text,
            "messages": [{"role": "user", "content": text}],
        }


def parse_answer(response: str) -> dict[str, tuple[str, str]]:
    """criterion -> (judgment, reason) from a model's answer: one JSON object in the stated format, possibly
    inside a ```json fence; raises ValueError naming what is wrong."""
    text = response.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.DOTALL)
    if fenced:
        text = fenced.group(1)
    try:
        data = jsontext.loads(text)
    except ValueError as exc:  # not JSON, or nested deeper than any answer in the stated format
        raise ValueError(f"the answer is not JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    out = {}
    for number in CRITERIA:
        entry = data.get(number)
        if not isinstance(entry, dict) or entry.get("judgment") not in JUDGMENTS:
            raise ValueError(f"criterion {number} has no judgment pass, fail or uncertain")
        out[number] = (entry["judgment"], str(entry.get("reason", "")).strip())
    return out


def open_judgments(path: Path) -> BinaryIO:
    """A judgments file opened for reading: a regular file of at most MAX_FILE_BYTES, checked before any wait
    (a FIFO, device or standard input would block or never end)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise CtxRobustError(f"{path}: cannot read ({exc.strerror or exc}); give one JSON Lines file per screening model") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise CtxRobustError(
            f"{path}: is not a regular file (a FIFO, device or standard input cannot be read as judgments); "
            "give one JSON Lines file per screening model"
        )
    if info.st_size > MAX_FILE_BYTES:
        os.close(fd)
        raise CtxRobustError(
            f"{path}: {info.st_size} bytes, more than the {MAX_FILE_BYTES} a judgments file may hold; "
            "give one JSON Lines file per screening model, one answer a line"
        )
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def judgment_lines(path: Path) -> Iterator[tuple[int, str | None, str | None]]:
    """(line number, text, problem) of each non-empty line: the text, or why the line cannot be read (longer
    than MAX_LINE_BYTES, or not UTF-8). Reads at most MAX_FILE_BYTES, one bounded line at a time."""
    read = 0
    with open_judgments(path) as handle:
        for number in itertools.count(1):
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            read += len(raw)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n") and read <= MAX_FILE_BYTES:  # skip the rest of the line
                    raw = handle.readline(MAX_LINE_BYTES)
                    read += len(raw)
                yield number, None, f"longer than {MAX_LINE_BYTES} bytes; one judgment a line, six short reasons"
            else:
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    yield number, None, "not UTF-8; write the judgments as UTF-8 JSON Lines"
                else:
                    if text.strip():
                        yield number, text, None
            if read > MAX_FILE_BYTES:
                raise CtxRobustError(f"{path}: grew past the {MAX_FILE_BYTES} bytes a judgments file may hold while it was read")


def read_judgments(path: Path, known: set[str]) -> tuple[str, dict[str, dict], list[str]]:
    """(model, candidate id -> criterion judgments, problems 'file:line: ...'); one judgments file per model."""
    model, judged, problems = None, {}, []
    for number, line, problem in judgment_lines(path):
        where = f"{plain(path, None)}:{number}"  # a file name never writes control characters to the terminal
        if problem is not None:
            problems.append(f"{where}: {problem}")
            continue
        try:
            row = jsontext.loads(line)
        except ValueError as exc:  # not JSON, or nested too deep
            problems.append(f"{where}: not JSON ({getattr(exc, 'msg', exc)})")
            continue
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("response"), str):
            problems.append(f"{where}: a judgment needs a string id and a string response")
            continue
        model = model or str(row.get("model") or path.stem)
        if row.get("model") not in (None, model):
            problems.append(
                f"{where}: model {plain(repr(row['model']))} differs from {plain(repr(model))}; give one file per screening model"
            )
            continue
        shown = plain(row["id"])
        if row["id"] not in known:
            problems.append(f"{where}: {shown} is not a candidate of this release")
            continue
        if row["id"] in judged:
            problems.append(f"{where}: {shown} is judged twice by {plain(model)}; the first answer is kept")
            continue
        try:
            judged[row["id"]] = parse_answer(row["response"])
        except ValueError as exc:
            judged[row["id"]] = None  # unparseable: reported, counted and listed, never dropped
            problems.append(f"{where}: {shown}: {exc}")
    if model is None:
        raise CtxRobustError(f"{path}: holds no judgments; give one JSON Lines file per screening model")
    return model, judged, problems


def screen(release: Release, paths: list[Path], output: Path) -> dict:
    """Flags per candidate and model, the review sheet, and the Table 9 counts."""
    rows = candidates(release)
    by_id = {r["id"]: r for r in rows}
    models: dict[str, dict] = {}
    problems: list[str] = []
    for path in paths:
        model, judged, found = read_judgments(path, set(by_id))
        if model in TABLE_COLUMNS:
            raise CtxRobustError(
                f"{path}: model {model!r} is the name of a Table 9 column ({', '.join(TABLE_COLUMNS)}); give the model another name"
            )
        if model in models:
            raise CtxRobustError(f"{path}: model {model} already read from another file; give one file per screening model")
        models[model] = judged
        problems += found
    sheet = []
    for cid in sorted(by_id):
        row, flags, reasons, unparsed, missing = by_id[cid], {}, {}, [], []
        for model, judged in models.items():
            if cid not in judged:
                missing.append(model)
            elif judged[cid] is None:
                unparsed.append(model)
            else:
                failed = [n for n, (j, _) in judged[cid].items() if j == "fail"]
                if failed:
                    flags[model] = failed
                    reasons[model] = {n: judged[cid][n][1] for n in failed}
        if flags or unparsed or missing:
            sheet.append(
                {
                    "id": cid,
                    "item_sha256": row.get("item_sha256"),  # the item judged: an adjudication decision names it
                    "source": row["source"],
                    "scope_dimension": row["scope_dimension"],
                    "question": row["question"],
                    "flagged": bool(flags),
                    "flags": flags,
                    "reasons": reasons,
                    "unparseable": unparsed,
                    "not_judged": missing,
                }
            )
    table = _table9(rows, models, sheet)
    _write(output, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in sheet))
    _write(output.with_suffix(".csv"), _csv(sheet))
    _write(output.with_suffix(".table9.md"), _markdown(table, list(models)))
    return {
        "candidates": len(rows),
        "models": list(models),
        "flagged": sum(1 for r in sheet if r["flagged"]),
        "unparseable": sum(len(r["unparseable"]) for r in sheet),
        "problems": problems,
        "table9": table,
        "files": [str(output), str(output.with_suffix(".csv")), str(output.with_suffix(".table9.md"))],
    }


def _table9(rows: list[dict], models: dict, sheet: list[dict]) -> dict:
    """Table 9: per source, candidates and items flagged by each model and by either."""
    items = Counter(r["source"] for r in rows)
    flagged = {r["id"]: r for r in sheet if r["flagged"]}
    table = {}
    for source in sorted(items):
        in_source = [r for r in flagged.values() if r["source"] == source]
        table[source] = {
            "items": items[source],
            **{m: sum(1 for r in in_source if m in r["flags"]) for m in models},
            "either": len(in_source),
        }
    table["total"] = {"items": len(rows), **{m: sum(t[m] for t in table.values()) for m in models}, "either": len(flagged)}
    return table


def _markdown(table: dict, models: list[str]) -> str:
    """The Table 9 counts as a Markdown table; every model and source name literal text in its cell."""
    head = ["source", "items", *(md_text(m) for m in models), "either"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for source, counts in table.items():
        cells = [md_text(source), str(counts["items"]), *(str(counts[m]) for m in models), str(counts["either"])]
        lines.append("| " + " | ".join(cells) + " |")
    return (
        "Screening flags by source (an item is flagged if a model marks at least one criterion fail; paper Table 9)\n\n"
        + "\n".join(lines)
        + "\n"
    )


def _csv(sheet: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        ["id", "source", "scope_dimension", "question", "flagged", "model", "criteria_failed", "reasons", "unparseable", "not_judged"]
    )
    for row in sheet:
        models = sorted(row["flags"]) or [""]
        for model in models:
            failed = row["flags"].get(model, [])
            reasons = "; ".join(f"{n}: {row['reasons'][model][n]}" for n in failed) if model else ""
            cells = [
                row["id"],
                row["source"],
                row["scope_dimension"],
                row["question"],
                row["flagged"],
                model,
                " ".join(failed),
                reasons,
                " ".join(row["unparseable"]),
                " ".join(row["not_judged"]),
            ]
            writer.writerow([csv_cell(cell) for cell in cells])  # a model name or reason never runs as a formula
    return buffer.getvalue()


def _write(path: Path, text: str) -> None:
    """Atomically: a temp file beside the target, fsync, rename (a failure leaves the old file)."""
    write_text(path, text)


def main(release: Release, paths: list[Path], output: Path) -> dict:
    """The `ctxrobust screen` command: problems by file and line, then the summary."""
    if output.suffix != ".jsonl":
        raise CtxRobustError(f"-o {output}: give a .jsonl file; the CSV sheet and the Table 9 counts are written beside it")
    return screen(release, paths, output)
