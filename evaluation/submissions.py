"""Several submissions scored together: prediction files concatenated into one stream for the dataset's
own scorer, so every model shares the same bootstrap draws, with each file's problems reported under
its name, clashing model names kept apart, `--strict` applied per file, and a leaderboard.

Generic over datasets: the scorer sees one predictions file; this layer only relabels and maps back.
A model name found in more than one file is renamed "<name> [<file label>]" in every file that has
it, and the report says so. A file with no valid row, or under `--strict` with any problem, is refused
and the others are scored without it. Each dataset's leaderboard spec (its registry entry) names the
headline figures, whether higher or lower is better, its invalid-response rate and, where its scorer
shares draws across models, the paired differences between models.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ctxrobust.errors import CtxRobustError, PredictionsError
from ctxrobust.evaluation.report import DIFFERENCE, fmt_metric, markdown_table

SUFFIXES = (".jsonl", ".json", ".ndjson")


@dataclass
class Submission:
    path: Path
    label: str  # unique among the submissions: the file name, with folders prepended where names repeat
    rows: int = 0  # non-blank lines
    sha256: str = ""
    models: dict[str, str] = field(default_factory=dict)  # model name in the file -> name in the report
    problems: list[dict] = field(default_factory=list)  # {"line", "message"}; line None: about the file
    status: str = "scored"
    reason: str = ""

    def as_dict(self) -> dict:
        return {
            "file": str(self.path),
            "label": self.label,
            "sha256": self.sha256,
            "rows": self.rows,
            "status": self.status,
            "reason": self.reason,
            "models": dict(sorted(self.models.items())),
            "problems": self.problems,
        }


def expand(paths: list[Path]) -> list[Path]:
    """The prediction files named: files as given, folders as their *.jsonl files (sorted); each once."""
    found: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES and not p.name.startswith("."))
            if not inside:
                raise CtxRobustError(f"{path}: a folder with no predictions file (*.jsonl) in it")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise CtxRobustError(f"{path}: no such predictions file or folder")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return [next(p for p in found if p.resolve() == r) for r in unique]


def labels(paths: list[Path]) -> list[str]:
    """Short unique names: the file name, or as many parent folders as make it unique."""
    depth = 1
    while True:
        names = ["/".join(p.resolve().parts[-depth:]) for p in paths]
        if len(set(names)) == len(names) or depth > 64:
            return names
        depth += 1


def _lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.split(b"\n") if not data.endswith(b"\n") else data[:-1].split(b"\n")


def _model_of(raw: bytes) -> str | None:
    try:
        row = json.loads(raw)
    except ValueError:
        return None
    return row.get("model") if isinstance(row, dict) and isinstance(row.get("model"), str) else None


def read(paths: list[Path]) -> tuple[list[Submission], dict[int, list[bytes]]]:
    """Each submission with its model names (clashes renamed) and its lines."""
    subs = [Submission(path, label) for path, label in zip(paths, labels(paths))]
    contents: dict[int, list[bytes]] = {}
    owners: dict[str, list[int]] = {}
    for k, sub in enumerate(subs):
        lines = _lines(sub.path)
        contents[k] = lines
        sub.sha256 = hashlib.sha256(sub.path.read_bytes()).hexdigest()
        sub.rows = sum(1 for line in lines if line.strip())
        for name in dict.fromkeys(m for m in map(_model_of, lines) if m is not None):
            owners.setdefault(name, []).append(k)
    for name, holders in owners.items():
        for k in holders:
            subs[k].models[name] = name if len(holders) == 1 else f"{name} [{subs[k].label}]"
    return subs, contents


def _combined(subs: list[Submission], contents: dict[int, list[bytes]], keep: list[int], target: Path) -> list[tuple[int, int]]:
    """Write the kept submissions as one stream; returns, per combined line, (submission index, its own line number)."""
    where: list[tuple[int, int]] = []
    with open(target, "wb") as out:
        for k in keep:
            renames = {a: b for a, b in subs[k].models.items() if a != b}
            for number, raw in enumerate(contents[k], start=1):
                if renames and raw.strip():
                    try:
                        row = json.loads(raw)
                    except ValueError:
                        row = None
                    if isinstance(row, dict) and row.get("model") in renames:
                        row["model"] = renames[row["model"]]
                        raw = json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8")
                out.write(raw.replace(b"\n", b" ") + b"\n")
                where.append((k, number))
    return where


def _attribute(report: dict, subs: list[Submission], where: list[tuple[int, int]]) -> list[str]:
    """Move the scorer's problems to the submissions they come from; returns problems of no one file."""
    general = []
    for problem in report["predictions"]["problems"]:
        line, message = problem["line"], problem["message"]
        if line is not None and 1 <= line <= len(where):
            k, own = where[line - 1]
            subs[k].problems.append({"line": own, "message": message})
            continue
        named = [k for k, sub in enumerate(subs) if any(repr(name) in message for name in sub.models.values())]
        for k in named:
            subs[k].problems.append({"line": None, "message": message})
        if not named:
            general.append(message)
    return general


def _quiet_score(scorer: Callable, release, path: Path, options) -> tuple[dict | None, str]:
    """Score with the reader's stderr lines held back (they name the combined stream, not the files)."""
    held = io.StringIO()
    with contextlib.redirect_stderr(held):
        report = scorer(release, path, options)
    return report, held.getvalue()


def _notices(held: str, combined: Path, report: dict) -> list[str]:
    """The scorer's own stderr lines other than its problem lines (each file's problems are logged by file),
    naming the submissions instead of the combined stream."""
    messages = {p["message"] for p in report["predictions"]["problems"]}
    prefix = f"{combined}:"
    out = []
    for line in held.splitlines():
        rest = line[len(prefix) :].strip() if line.startswith(prefix) else None
        if rest is not None and (re.match(r"\d+:", rest) or rest in messages or rest.startswith("scored ") or rest.startswith("...")):
            continue
        out.append(line.replace(str(combined), "submissions"))
    return out


def _bad_lines(sub: Submission) -> int:
    return len({p["line"] for p in sub.problems if p["line"] is not None})


def score_submissions(release, dataset, paths: list[Path], options, strict: bool, log: Callable[[str], None]) -> dict:
    """The dataset's report over every accepted submission, with `submissions`, `leaderboard` and, where the
    dataset has them, `differences` added. `options` is the dataset's ScoreOptions (its `strict` is ignored:
    `strict` here applies to each file)."""
    scorer = dataset.load("scorer")
    if "strict" in type(options).model_fields:
        options = options.model_copy(update={"strict": False})
    subs, contents = read(expand(paths))
    for name in sorted({n for s in subs for n, r in s.models.items() if n != r}):
        holders = [s.label for s in subs if name in s.models]
        log(
            f"model name {name!r} is in {len(holders)} submissions ({', '.join(holders)}): kept apart as "
            + ", ".join(repr(f"{name} [{h}]") for h in holders)
        )
    with tempfile.TemporaryDirectory(prefix="ctxrobust-submissions-") as tmp:
        combined = Path(tmp) / "submissions.jsonl"
        keep = [k for k, s in enumerate(subs) if s.rows]
        for s in subs:
            if not s.rows:
                s.status, s.reason = "refused", "no prediction rows (the file is empty)"
        report, general = None, []
        for _ in range(len(subs) + 1):  # each pass finds every file's problems; a refused file leaves the next pass
            if not keep:
                raise PredictionsError(
                    f"none of the {len(subs)} submission(s) can be scored: " + "; ".join(f"{s.label}: {s.reason}" for s in subs)
                )
            for k in keep:
                subs[k].problems = []
            where = _combined(subs, contents, keep, combined)
            try:
                report, held = _quiet_score(scorer, release, combined, options)
            except CtxRobustError as exc:
                named = "the submissions (" + ", ".join(subs[k].label for k in keep) + ")"
                raise PredictionsError(str(exc).replace(str(combined), named)) from None
            general = _attribute(report, subs, where)
            refused = []
            for k in keep:
                sub = subs[k]
                if _bad_lines(sub) >= sub.rows:
                    sub.status, sub.reason = "refused", f"none of its {sub.rows} row(s) is a valid prediction"
                elif strict and sub.problems:
                    sub.status, sub.reason = "refused", f"{len(sub.problems)} problem(s) and --strict"
                if sub.status == "refused":
                    refused.append(k)
            if not refused:
                break
            keep = [k for k in keep if k not in refused]
        for line in _notices(held, combined, report):
            log(line)
        for sub in subs:
            for problem in sub.problems[:200]:
                where_text = f"{sub.path}:{problem['line']}" if problem["line"] is not None else f"{sub.path}"
                log(f"{where_text}: {problem['message']}")
            if sub.status == "refused":
                log(f"{sub.path}: refused: {sub.reason}; the other submissions are scored without it")
        differences = None
        spec = dataset.load("leaderboard") if dataset.leaderboard else {}
        if spec.get("differences"):
            module, _, attribute = spec["differences"].partition(":")
            import importlib

            function = getattr(importlib.import_module(module), attribute)
            with contextlib.redirect_stderr(io.StringIO()):
                takes_report = "report" in inspect.signature(function).parameters
                differences = function(release, combined, options, report=report) if takes_report else function(release, combined, options)
        combined_sha = hashlib.sha256(combined.read_bytes()).hexdigest()
    scored = [s for s in subs if s.status == "scored"]
    block = report["predictions"]
    report["predictions"] = {
        "path": f"{len(scored)} submission(s): " + ", ".join(s.label for s in scored),
        "sha256": combined_sha,
        "rows": sum(s.rows for s in scored),
        "excluded": block["excluded"],
        "problems": [
            {"line": None, "message": f"{s.label}" + (f" line {p['line']}" if p["line"] is not None else "") + f": {p['message']}"}
            for s in subs
            for p in s.problems
        ]
        + [{"line": None, "message": m} for m in general],
    }
    report["submissions"] = [s.as_dict() for s in subs]
    report["leaderboard"] = leaderboard(report, spec, subs)
    if differences is not None:
        report["differences"] = differences
        prefix = differences.get("metric_prefix", "difference.")
        report.setdefault("units", {}).update(
            {
                name: DIFFERENCE
                for pair in differences["by_pair"].values()
                for figures in pair.values()
                for name in figures
                if name.startswith(prefix)
            }
        )
        report["units"] = dict(sorted(report["units"].items()))
    return report


def leaderboard(report: dict, spec: dict, subs: list[Submission]) -> dict:
    """Models ranked by the first headline figure any of them has (direction from the spec); ties by name."""
    models = report["models"]
    headline = [(name, better) for name, better in spec.get("headline", []) if any(name in m.get("metrics", {}) for m in models.values())]
    owner = {reported: s.label for s in subs if s.status == "scored" for reported in s.models.values()}
    invalid_names = spec.get("invalid", [])
    rows = []
    for name, block in models.items():
        metrics = block.get("metrics", {})
        invalid = next((metrics[i] for i in invalid_names if i in metrics), None)
        rows.append(
            {
                "model": name,
                "submission": owner.get(name, ""),
                "metrics": {m: metrics[m] for m, _ in headline if m in metrics},
                "invalid": invalid,
            }
        )
    if headline:
        first, better = headline[0]

        def order(row: dict) -> tuple:
            figure = row["metrics"].get(first)
            value = figure["estimate"] if figure else None
            missing = value is None
            return (missing, 0 if missing else (-value if better == "higher" else value), row["model"])

        rows.sort(key=order)
    else:
        first, better = None, None
        rows.sort(key=lambda r: r["model"])
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return {
        "ranked_by": first,
        "better": better,
        "columns": [m for m, _ in headline],
        "shared_draws": bool(spec.get("shared_draws")),
        "invalid_metric": next((i for i in invalid_names if any(i in m.get("metrics", {}) for m in models.values())), None),
        "rows": rows,
    }


# -- renderings --------------------------------------------------------------------------------------


def _percent(units: dict, name: str) -> bool:
    return units.get(name, "fraction") in ("fraction", "difference of fractions")


def leaderboard_markdown(report: dict) -> str:
    board, units = report["leaderboard"], report.get("units", {})
    headers = (
        ["Rank", "Model", "Submission"] + [f"{m} [95% CI]" for m in board["columns"]] + (["Invalid"] if board["invalid_metric"] else [])
    )
    rows = []
    for row in board["rows"]:
        cells = [row["rank"], row["model"].replace("|", "\\|"), row["submission"].replace("|", "\\|")]
        cells += [fmt_metric(row["metrics"].get(m), _percent(units, m), 1 if _percent(units, m) else 3) for m in board["columns"]]
        if board["invalid_metric"]:
            cells.append(fmt_metric(row["invalid"], True, 1) if row["invalid"] else "n/a")
        rows.append(cells)
    better = f"; {board['better']} is better" if board["better"] else ""
    draws = (
        "Intervals use the same resamples for every model."
        if board["shared_draws"]
        else "Each model's intervals come from its own resamples, so they are not paired across models."
    )
    note = (
        f"Ranked by {board['ranked_by']}{better}. Percentages ×100 for fractions. {draws}"
        if board["ranked_by"]
        else "No headline figure to rank by."
    )
    return markdown_table(headers, rows) + "\n" + note + "\n"


def leaderboard_csv(report: dict) -> str:
    import csv

    board = report["leaderboard"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["rank", "model", "submission"]
    for m in board["columns"]:
        header += [m, f"{m}.ci_low", f"{m}.ci_high", f"{m}.n"]
    if board["invalid_metric"]:
        header.append("invalid_rate")
    writer.writerow(header)
    cell = lambda v: "" if v is None else (repr(v) if isinstance(v, float) else str(v))  # noqa: E731
    for row in board["rows"]:
        line = [row["rank"], row["model"], row["submission"]]
        for m in board["columns"]:
            figure = row["metrics"].get(m) or {"estimate": None, "ci": None, "n": None}
            ci = figure["ci"] or [None, None]
            line += [cell(figure["estimate"]), cell(ci[0]), cell(ci[1]), cell(figure["n"])]
        if board["invalid_metric"]:
            line.append(cell(row["invalid"]["estimate"]) if row["invalid"] else "")
        writer.writerow(line)
    return buffer.getvalue()


def submissions_markdown(report: dict) -> str:
    """The leaderboard, the paired differences and each submission's status and problems, as Markdown sections."""
    parts = ["## Leaderboard\n\n" + leaderboard_markdown(report)]
    differences = report.get("differences")
    if differences and differences["by_pair"]:
        rows = []
        for a, pairs in sorted(differences["by_pair"].items()):
            for b, figures in sorted(pairs.items()):
                for name, figure in sorted(figures.items()):
                    rows.append(
                        [f"{a} − {b}".replace("|", "\\|"), name.removeprefix(differences.get("metric_prefix", "")), fmt_metric(figure)]
                    )
        parts.append(
            "## Differences between models\n\n"
            + markdown_table(["Pair (A − B)", "Metric", "Difference ×100 [95% CI]"], rows)
            + f"\nPaired: {differences['resampled']}.\n"
        )
    rows, problems = [], []
    for sub in report["submissions"]:
        renamed = [f"{a} → {b}" for a, b in sub["models"].items() if a != b]
        rows.append(
            [
                sub["label"].replace("|", "\\|"),
                sub["status"] + (f" ({sub['reason']})" if sub["reason"] else ""),
                sub["rows"],
                len(sub["problems"]),
                ", ".join(sub["models"].values()).replace("|", "\\|"),
                "; ".join(renamed).replace("|", "\\|") or "none",
            ]
        )
        problems += [
            f"- {sub['label']}" + (f" line {p['line']}" if p["line"] is not None else "") + f": {p['message']}"
            for p in sub["problems"][:50]
        ]
    parts.append(
        "## Submissions\n\n" + markdown_table(["File", "Status", "Rows", "Problems", "Models", "Renamed (name in several files)"], rows)
    )
    if problems:
        parts.append("### Problems by file\n\n" + "\n".join(problems) + "\n")
    return "\n".join(parts)


def with_submissions(text: str, report: dict, form: str) -> str:
    """A dataset's Markdown or HTML report with the submissions sections added."""
    if "submissions" not in report:
        return text
    sections = submissions_markdown(report)
    if form == "md":
        return text.rstrip("\n") + "\n\n" + sections
    import html

    block = "<h2>Submissions</h2><pre>" + html.escape(sections) + "</pre>"
    return re.sub(r"</body>", lambda _: block + "</body>", text, count=1) if "</body>" in text else text + block
