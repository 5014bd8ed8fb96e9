"""Paired differences between models (Section 2 figures, Appendix B question bootstrap): for every pair of
units of one context group and input kind, A minus B on the questions both have, each replicate resampling
those questions once for both (a stream of its own, so the per-model intervals are unchanged).

The noise-adjusted figures subtract each model's noise floor, a constant of its report (Section 2), so
their difference is the observed difference shifted by the difference of the floors. Like the adjusted
figures themselves (scorer.ADJUSTED_NO_CI), that difference is reported without an interval: the
observed difference's interval shifted by the floors' difference is centred on a biased estimate of the
noise-free difference (each floor overstates the noise where context does change answers, by an amount
that differs between models), so it does not cover it. The difference of WTD has a BCa interval, as
WTD itself (wtd_interval.py), with the paired jackknife (question i left out of both models)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ctxrobust.evaluation import question_bootstrap
from ctxrobust.evaluation.pseudowords import instability, wtd_interval
from ctxrobust.evaluation.pseudowords.options import ScoreOptions
from ctxrobust.evaluation.pseudowords.scorer import ResponseGrader, _unit_input, build_units, parameters, read_cells
from ctxrobust.evaluation.report import metric
from ctxrobust.evaluation.rows import read_requests
from ctxrobust.options import parse_options
from ctxrobust.release import Release

PREFIX = "difference."
STREAM = "differences"


def _changes(unit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s_i0, s_ic, Delta_i) per question of a unit, as the scorer computes them (Section 2)."""
    s_i0 = instability.condition_means(unit.base_total, unit.base_n)
    s_ic = instability.context_mean(instability.condition_means(unit.context_total, unit.context_n))
    return s_i0, s_ic, s_ic - s_i0


ADJUSTED_DIFFERENCE_NO_CI = (
    "no interval: the difference of two floor-subtracted metrics is the observed difference shifted by the "
    "difference of the floors, a biased estimate of the noise-free difference; the observed difference's interval "
    "shifted by it does not cover that (as for the adjusted metrics themselves, see their note); read it as a point "
    "estimate beside difference.INS and difference.WTD"
)
FIGURES = ("accuracy.baseline", "accuracy.context", "delta", "INS", "WTD")


def _interval(values: np.ndarray):
    return question_bootstrap.percentile_interval(values[1:]) if values.size > 1 else None


def pair_figures(a, b, p, floors: dict[str, dict[str, float]]) -> dict | None:
    """difference.<figure> of units a and b on the questions both have (None with fewer than 3), one
    question resampling for both; `floors[name]["INS" | "WTD"]` are the models' noise floors."""
    common = sorted(set(a.ids) & set(b.ids))
    if len(common) < 3:
        return None
    n = len(common)
    weights = question_bootstrap.multiplicities(question_bootstrap.stream(p.seed, STREAM, f"{a.name}\x00{b.name}"), n, p.replicates)
    both = np.vstack([np.ones((1, n)), weights])
    series, deltas = [], []
    for unit in (a, b):
        position = {qid: k for k, qid in enumerate(unit.ids)}
        s_i0, s_ic, delta = (x[[position[q] for q in common]] for x in _changes(unit))
        deltas.append(delta)
        series.append(
            {
                "accuracy.baseline": both @ s_i0 / n,
                "accuracy.context": both @ s_ic / n,
                "delta": both @ delta / n,
                "INS": instability.weighted_ins(both, delta),
                "WTD": instability.weighted_wtd(both, delta, p.k),
            }
        )
    figures = {}
    for name in FIGURES:
        values = series[0][name] - series[1][name]
        if name == "WTD" and values.size > 1:  # BCa with the paired jackknife (wtd_interval.py)
            jack = wtd_interval.jackknife_wtd(deltas[0], p.k) - wtd_interval.jackknife_wtd(deltas[1], p.k)
            figures[PREFIX + name] = metric(float(values[0]), wtd_interval.bca_interval(float(values[0]), values[1:], jack), n)
        else:
            figures[PREFIX + name] = metric(float(values[0]), _interval(values), n)
    for name in ("INS", "WTD"):  # Section 2: adjusted = observed - the model's own floor
        if not (a.binary or b.binary):  # probability scores (Appendix G): no floor, adjusted = observed
            figures[f"{PREFIX}{name}.adjusted"] = dict(figures[PREFIX + name])
            continue
        shift = floors[a.name][name] - floors[b.name][name]
        figures[f"{PREFIX}{name}.adjusted"] = {
            **metric(figures[PREFIX + name]["estimate"] - shift, None, n),
            "note": ADJUSTED_DIFFERENCE_NO_CI,
        }
    return figures


def paired_differences(release: Release, predictions: Path, options: ScoreOptions | dict | None = None, report: dict | None = None) -> dict:
    """{"by_pair": {A: {B: {"difference.<figure>": figure}}}} for every pair of units sharing a context group and input."""
    options = parse_options(ScoreOptions, options, "pseudowords score")
    p = parameters(options)
    requested = None if options.requests is None else read_requests(options.requests, "pseudowords")
    table, _ = read_cells(release, predictions, grader=ResponseGrader(options.benchmark, str(predictions)), requested=requested)
    units, _, _ = build_units(table)
    floors = {}
    for unit in units:
        metrics = ((report or {}).get("models", {}).get(unit.name) or {}).get("metrics", {})
        floors[unit.name] = {name: (metrics.get(f"noise_floor.{name}") or {}).get("estimate") or 0.0 for name in ("INS", "WTD")}
    result = {
        "metric_prefix": PREFIX,
        "resampled": "the questions both models have, the same draws for both",
        "level": question_bootstrap.LEVEL,
        "by_pair": {},
    }
    ordered = sorted(units, key=lambda u: u.name)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if (a.group, _unit_input(a)) != (b.group, _unit_input(b)):
                continue
            figures = pair_figures(a, b, p, floors)
            if figures is not None:
                result["by_pair"].setdefault(a.name, {})[b.name] = figures
    return result
