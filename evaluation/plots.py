"""Interval plots every report shares: one row per model, the estimate as a point and its interval as a
bar, one panel per figure. Model names label the rows (no legend to cover anything), and the height
grows with the number of models, so 10 or 30 models stay legible."""

from __future__ import annotations

import math

ROW_INCHES = 0.32  # height per model row
PANEL_INCHES = 3.2  # width per panel
MAX_LABEL = 40  # characters of a model name shown


def _label(name: str) -> str:
    return name if len(name) <= MAX_LABEL else name[: MAX_LABEL - 1] + "…"


def interval_figure(report: dict, metrics: list[str], percent: set[str] | None = None, title: str = ""):
    """A matplotlib Figure: a panel per metric in `metrics` that some model has, a row per model (sorted by
    name), the point estimate and, where the report has one, its interval. None when nothing is plotted."""
    from matplotlib.figure import Figure

    models = sorted(report.get("models", {}))
    shown = [m for m in metrics if any(m in report["models"][n].get("metrics", {}) for n in models)]
    if not models or not shown:
        return None
    percent = set(shown) if percent is None else percent
    height = max(1.8, 0.9 + ROW_INCHES * len(models))
    figure = Figure(figsize=(1.6 + PANEL_INCHES * len(shown), height))
    axes = figure.subplots(1, len(shown), sharey=True, squeeze=False)[0]
    rows = list(range(len(models)))[::-1]  # the first model at the top
    for ax, name in zip(axes, shown):
        scale = 100.0 if name in percent else 1.0
        for y, model in zip(rows, models):
            figure_ = report["models"][model].get("metrics", {}).get(name)
            if not figure_ or figure_.get("estimate") is None or not math.isfinite(figure_["estimate"]):
                continue
            x = scale * figure_["estimate"]
            ci = figure_.get("ci")
            if ci:
                ax.plot([scale * ci[0], scale * ci[1]], [y, y], color="#4292c6", linewidth=2.2, solid_capstyle="butt")
            ax.plot([x], [y], marker="o", color="#08306b", markersize=4.5)
        ax.set_title(name + (" (%)" if name in percent else ""), fontsize=9)
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_ylim(-0.7, len(models) - 0.3)
    axes[0].set_yticks(rows, [_label(m) for m in models], fontsize=8)
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    return figure


def percent_figures(report: dict, names: list[str], units: dict | None = None) -> set[str]:
    """The figures of `names` shown ×100: fractions and their differences, as the metric registry declares
    them (a name it does not declare for a dataset it holds is an error); `units` (or the report's) serve a
    dataset it holds nothing for."""
    from ctxrobust.evaluation import metrics as registry

    dataset = report.get("dataset", "")
    if dataset in registry.datasets():
        for m in names:
            registry.lookup(dataset, m)  # an undeclared figure of a declared dataset is an error
    units = units if units is not None else report.get("units", {})
    return {m for m in names if registry.percent(dataset, m, units)}


def interval_section(report: dict, metrics: list[str], units: dict | None = None, title: str = "") -> str:
    """An <img> of `interval_figure` for an HTML report ("" when there is nothing to plot)."""
    from ctxrobust.evaluation.report import figure_data_uri

    percent = percent_figures(report, metrics, units)
    figure = interval_figure(report, metrics, percent, title)
    if figure is None:
        return ""
    return (
        f'<img alt="{title or "estimates and intervals"}" src="{figure_data_uri(figure)}">'
        "<p>Each row a model: the point is the estimate, the bar its interval (where the report has one).</p>"
    )
