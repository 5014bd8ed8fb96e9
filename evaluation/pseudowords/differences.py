"""Paired differences between models (Section 2 figures, Appendix B question bootstrap): for every pair of
units of one context group and input kind, A minus B on the questions both have, each replicate resampling
those questions once for both (a stream of its own, so the per-model intervals are unchanged).

The noise-adjusted figures subtract each model's noise floor, a constant of its report (Section 2), so
their difference is the observed difference shifted by the difference of the floors."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ctxrobust.evaluation import question_bootstrap
from ctxrobust.evaluation.pseudowords import instability
from ctxrobust.evaluation.pseudowords.options import ScoreOptions
from ctxrobust.evaluation.pseudowords.scorer import ResponseGrader, _unit_input, build_units, parameters, read_cells
from ctxrobust.evaluation.report import metric
from ctxrobust.options import parse_options
from ctxrobust.release import Release

PREFIX = "difference."
STREAM = "differences"


def _changes(unit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s_i0, s_ic, Delta_i) per question of a unit, as the scorer computes them (Section 2)."""
    s_i0 = instability.condition_means(unit.base_total, unit.base_n)
    s_ic = instability.context_mean(instability.condition_means(unit.context_total, unit.context_n))
    return s_i0, s_ic, s_ic - s_i0


def _interval(values: np.ndarray, shift: float = 0.0):
    found = question_bootstrap.percentile_interval(values[1:]) if values.size > 1 else None
    return None if found is None else (found[0] - shift, found[1] - shift)


def paired_differences(release: Release, predictions: Path, options: ScoreOptions | dict | None = None, report: dict | None = None) -> dict:
    """{"by_pair": {A: {B: {"difference.<figure>": figure}}}} for every pair of units sharing a context group and input."""
    options = parse_options(ScoreOptions, options, "pseudowords score")
    p = parameters(options)
    table, _ = read_cells(release, Path(predictions), grader=ResponseGrader(options.benchmark, Path(predictions)))
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
            common = sorted(set(a.ids) & set(b.ids))
            if len(common) < 3:
                continue
            n = len(common)
            weights = question_bootstrap.multiplicities(question_bootstrap.stream(p.seed, STREAM, f"{a.name}\x00{b.name}"), n, p.replicates)
            both = np.vstack([np.ones((1, n)), weights])
            figures = {}
            series = []
            for unit in (a, b):
                position = {qid: k for k, qid in enumerate(unit.ids)}
                s_i0, s_ic, delta = (x[[position[q] for q in common]] for x in _changes(unit))
                series.append(
                    {
                        "accuracy.baseline": both @ s_i0 / n,
                        "accuracy.context": both @ s_ic / n,
                        "delta": both @ delta / n,
                        "INS": instability.weighted_ins(both, delta),
                        "WTD": instability.weighted_wtd(both, delta, p.k),
                    }
                )
            for name in ("accuracy.baseline", "accuracy.context", "delta", "INS", "WTD"):
                values = series[0][name] - series[1][name]
                figures[PREFIX + name] = metric(float(values[0]), _interval(values), n)
            for name in ("INS", "WTD"):  # Section 2: adjusted = observed - the model's own floor
                shift = floors[a.name][name] - floors[b.name][name]
                observed = figures[PREFIX + name]
                ci = observed["ci"]
                figures[f"{PREFIX}{name}.adjusted"] = metric(
                    observed["estimate"] - shift, None if ci is None else (ci[0] - shift, ci[1] - shift), n
                )
            result["by_pair"].setdefault(a.name, {})[b.name] = figures
    return result
