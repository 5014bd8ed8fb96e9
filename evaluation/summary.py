"""The short summary `score` prints at a terminal: per model, the dataset's headline figures with their
95% intervals and the invalid-response rate, as a plain-text table.

The figures are those the dataset's leaderboard spec names (its registry entry: "headline" and
"invalid"), read from the report as they are; nothing is computed here. Units and directions are the
metric registry's; fractions are shown in %.
"""

from __future__ import annotations

from ctxrobust.evaluation import metrics
from ctxrobust.evaluation.report import fmt_metric


def _declared(report: dict, name: str) -> metrics.Metric | None:
    return metrics.find(report.get("dataset", ""), name)


def _percent(report: dict, name: str) -> bool:
    return metrics.percent(report.get("dataset", ""), name, report.get("units"))


def _cell(figure: dict | None, percent: bool) -> str:
    return fmt_metric(figure, percent, 1 if percent else 3)


def _models_in_order(report: dict) -> list[str]:
    """The models as ranked on the leaderboard (several submissions), else as the report lists them."""
    board = report.get("leaderboard") or {}
    ranked = [row["model"] for row in board.get("rows", []) if row.get("model") in report.get("models", {})]
    return ranked + [m for m in report.get("models", {}) if m not in ranked]


def summary_rows(report: dict, spec: dict) -> tuple[list[str], list[list[str]], str | None]:
    """(headers, one row per model, the invalid-rate figure shown): the headline figures the report
    holds, then the invalid rate if it has one."""
    models = report.get("models", {})
    figures_of = {name: block.get("metrics", {}) for name, block in models.items()}
    columns = [name for name in _headline(spec) if any(name in m for m in figures_of.values())]
    invalid = next((i for i in spec.get("invalid", []) if any(i in m for m in figures_of.values())), None)
    headers = ["model", *columns] + (["invalid"] if invalid else [])
    rows = []
    for model in _models_in_order(report):
        figures = figures_of[model]
        cells = [_cell(figures.get(c), _percent(report, c)) for c in columns]
        if invalid:
            cells.append(_cell(figures.get(invalid), True))
        rows.append([model, *cells])
    return headers, rows, invalid


def summary_table(report: dict, spec: dict) -> str:
    """The summary as aligned text lines, then a line saying how to read them."""
    from ctxrobust.release_files import printable

    headers, rows, invalid = summary_rows(report, spec)
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [headers, *rows]]
    if not rows:
        lines.append("(no model scored)")
    lines.append(_legend(report, headers[1 : len(headers) - bool(invalid)], spec, invalid))
    return "\n".join(lines) + "\n"


def _headline(spec: dict) -> list[str]:
    return [entry if isinstance(entry, str) else entry[0] for entry in spec.get("headline", [])]


def _better(report: dict, spec: dict, name: str) -> str | None:
    """ "higher" or "lower": the registry's direction (the spec's for a dataset the registry holds nothing for)."""
    declared = _declared(report, name)
    if declared is not None:
        return declared.better
    return next((e[1] for e in spec.get("headline", []) if not isinstance(e, str) and e[0] == name), None)


def _legend(report: dict, columns: list[str], spec: dict, invalid: str | None) -> str:
    """How to read the table: estimate [95% CI], fractions ×100, which way each figure is better."""
    better = {c: _better(report, spec, c) for c in columns}
    ways = []
    for way in ("higher", "lower"):
        named = [c for c in columns if better.get(c) == way]
        if named:
            ways.append(f"{way} is better: {', '.join(named)}")
    parts = ["estimate [95% CI], fractions in %", *ways]
    if invalid:
        parts.append(f"invalid: the {invalid} figure")
    return "; ".join(parts)
