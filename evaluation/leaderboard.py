"""The leaderboard of several submissions: models ranked on any declared figure, in the direction the metric
registry gives it, with the dataset's headline figures (its registry spec) as columns; as Markdown or CSV."""

from __future__ import annotations

import csv
import io
from typing import Any, Iterable

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import metrics
from ctxrobust.evaluation.report import csv_cell, fmt_metric, markdown_table, md_text


def headline(spec: dict) -> list[str]:
    """The headline figure names of a leaderboard spec (entries are names or (name, direction) pairs)."""
    return [entry if isinstance(entry, str) else entry[0] for entry in spec.get("headline", [])]


def _owner_label(name: str, owner: dict[str, str]) -> str:
    """The submission of a reported model: exact, else the longest reported name it extends with " [...]"
    (a scorer may split a model by a group of its own, e.g. "<model> [<group>]")."""
    if name in owner:
        return owner[name]
    cut = name.rfind(" [")
    while cut > 0:
        if name[:cut] in owner:
            return owner[name[:cut]]
        cut = name.rfind(" [", 0, cut)
    return ""


def _rank_figure(dataset: str, rank_by: str) -> metrics.Metric:
    """The declaration of the figure to rank on; one clear line when it cannot order models."""
    declared = metrics.lookup(dataset, rank_by)
    if declared.higher_is_better is None:
        raise CtxRobustError(f"{dataset}: {rank_by!r} has no better direction (it is {declared.description}); rank by another figure")
    return declared


def _direction(dataset: str, spec: dict, name: str) -> str | None:
    """ "higher" or "lower" as the registry declares it; for a dataset it holds nothing for, as the spec says."""
    if dataset in metrics.datasets():
        return metrics.lookup(dataset, name).better
    return next((entry[1] for entry in spec.get("headline", []) if not isinstance(entry, str) and entry[0] == name), None)


def leaderboard(report: dict, spec: dict, subs: Iterable[Any], rank_by: str | None = None) -> dict:
    """Models ranked by `rank_by` (any declared figure with a direction), by default the first headline figure
    any model has; ties and models without the figure by name, the latter last. Columns: the headline
    figures the models have, and the ranking figure if it is not one of them."""
    dataset = report.get("dataset", "")
    models = report["models"]

    def present(name: str) -> bool:
        return any(name in m.get("metrics", {}) for m in models.values())

    columns = [name for name in headline(spec) if present(name)]
    if rank_by is not None:
        if dataset in metrics.datasets():
            _rank_figure(dataset, rank_by)
        if rank_by not in columns:
            columns.append(rank_by)
    first = rank_by if rank_by is not None else (columns[0] if columns else None)
    better = _direction(dataset, spec, first) if first else None
    owner = {reported: s.label for s in subs if s.status == "scored" for reported in s.models.values()}
    invalid_names = spec.get("invalid", [])
    rows = []
    for name, block in models.items():
        figures = block.get("metrics", {})
        rows.append(
            {
                "model": name,
                "submission": _owner_label(name, owner),
                "metrics": {m: figures[m] for m in columns if m in figures},
                "invalid": next((figures[i] for i in invalid_names if i in figures), None),
            }
        )

    def order(row: dict) -> tuple:
        figure = row["metrics"].get(first) if first else None
        value = figure["estimate"] if figure else None
        missing = value is None
        return (missing, 0 if missing else (-value if better == "higher" else value), row["model"])

    rows.sort(key=order)
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return {
        "ranked_by": first,
        "better": better,
        "columns": columns,
        "shared_draws": bool(spec.get("shared_draws")),
        "invalid_metric": next((i for i in invalid_names if present(i)), None),
        "rows": rows,
    }


def _check_columns(report: dict) -> None:
    """Every column of a registered dataset's leaderboard must be declared: a renamed figure fails here."""
    dataset = report.get("dataset", "")
    if dataset in metrics.datasets():
        board = report["leaderboard"]
        for name in [*board["columns"], *filter(None, [board.get("ranked_by"), board.get("invalid_metric")])]:
            metrics.lookup(dataset, name)


def leaderboard_table(report: dict) -> tuple[list[str], list[list], str]:
    """(headers, rows, note) of the report's leaderboard; cells raw (each rendering escapes them)."""
    _check_columns(report)
    board, units, dataset = report["leaderboard"], report.get("units", {}), report.get("dataset", "")
    headers = (
        ["Rank", "Model", "Submission"] + [f"{m} [95% CI]" for m in board["columns"]] + (["Invalid"] if board["invalid_metric"] else [])
    )
    rows = []
    for row in board["rows"]:
        cells = [row["rank"], row["model"], row["submission"]]
        for m in board["columns"]:
            percent = metrics.percent(dataset, m, units)
            cells.append(fmt_metric(row["metrics"].get(m), percent, 1 if percent else 3))
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
    return headers, rows, note


def leaderboard_markdown(report: dict) -> str:
    headers, rows, note = leaderboard_table(report)
    return markdown_table(headers, rows) + "\n" + md_text(note, None) + "\n"


def leaderboard_csv(report: dict) -> str:
    """The leaderboard as CSV; every cell through `csv_cell` (a model named `=HYPERLINK(...)` is text)."""
    _check_columns(report)
    board = report["leaderboard"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["rank", "model", "submission"]
    for m in board["columns"]:
        header += [m, f"{m}.ci_low", f"{m}.ci_high", f"{m}.n"]
    if board["invalid_metric"]:
        header.append("invalid_rate")
    writer.writerow([csv_cell(h) for h in header])
    for row in board["rows"]:
        line = [row["rank"], row["model"], row["submission"]]
        for m in board["columns"]:
            figure = row["metrics"].get(m) or {"estimate": None, "ci": None, "n": None}
            ci = figure["ci"] or [None, None]
            line += [figure["estimate"], ci[0], ci[1], figure["n"]]
        if board["invalid_metric"]:
            line.append(row["invalid"]["estimate"] if row["invalid"] else None)
        writer.writerow([csv_cell(cell) for cell in line])
    return buffer.getvalue()


def rerank(report: dict, spec: dict, rank_by: str) -> dict:
    """The report's leaderboard ranked again on `rank_by`, keeping each row's submission label."""

    class _Scored:
        status = "scored"

        def __init__(self, label: str, model: str) -> None:
            self.label, self.models = label, {model: model}

    subs = [_Scored(row["submission"], row["model"]) for row in report.get("leaderboard", {}).get("rows", []) if row["submission"]]
    return leaderboard(report, spec, subs, rank_by=rank_by)


def headline_of(dataset: str) -> list[str]:
    """The headline figures of a dataset's leaderboard spec (its registry entry)."""
    from ctxrobust import registry

    entry = registry.get(dataset)
    return headline(entry.load("leaderboard")) if entry.leaderboard else []
