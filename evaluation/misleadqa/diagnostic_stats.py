"""Point estimates and cluster-bootstrap intervals for the analyses on the diagnostic sample (paper §6.1,
§6.3, App. C.2 "Other resampling units", D.4, D.6): per model, figures are functions of per-item count
columns summed over the model's items; replicates weight those sums by the draws of the sample's own
source clusters (or dependency groups), the same draws for every model; model means weight models
equally and are undefined in a replicate where any model's figure is (App. C.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ctxrobust.evaluation import cluster_bootstrap as cb
from ctxrobust.evaluation import report as rp
from ctxrobust.evaluation import resampling


@dataclass(frozen=True)
class Figures:
    columns: tuple[str, ...]  # the per-item count columns
    formulas: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]  # summed columns -> figures (any leading shape)
    denominator: Callable[[str], str]  # figure -> the column its "n" counts


def _totals(figures: Figures, summed: np.ndarray) -> dict[str, np.ndarray]:
    return {name: summed[..., k] for k, name in enumerate(figures.columns)}


def points(figures: Figures, counts: np.ndarray, names: tuple[str, ...]) -> dict[str, dict]:
    """Every figure in `names` for one model from its (items, columns) counts, with its denominator as n."""
    summed = counts.sum(axis=0)
    values = figures.formulas(_totals(figures, summed))
    index = {name: k for k, name in enumerate(figures.columns)}
    return {name: rp.metric(float(values[name]), None, int(summed[index[figures.denominator(name)]])) for name in names}


def mean_points(per_model: list[dict[str, dict]], names: tuple[str, ...]) -> dict[str, dict]:
    """Equal-weight means over models; undefined if any model's figure is (App. C.2)."""
    out = {}
    for name in names:
        values = [m[name]["estimate"] for m in per_model]
        defined = values and all(v is not None for v in values)
        out[name] = rp.metric(float(np.mean(values)) if defined else None, None, len(values))
    return out


def intervals(
    figures: Figures,
    counts: list[np.ndarray],
    unit: np.ndarray,
    n_units: int,
    names: tuple[str, ...],
    replicates: int,
    seed: int,
    level: float = cb.LEVEL,
) -> tuple[list[dict], dict]:
    """([{name: (lo, hi, undefined)} per model], {name: (lo, hi, undefined)} for the model mean)."""
    stacked = np.stack(counts, axis=1)  # (items, M, columns)
    weights = cb.multiplicities(n_units, replicates, seed)
    totals = cb.weighted_totals(weights, cb.per_unit_sums(stacked, unit, n_units))  # (R, M, columns)
    reps = figures.formulas(_totals(figures, totals))
    n_models = len(counts)
    columns = np.concatenate([np.concatenate([reps[n], reps[n].mean(axis=1, keepdims=True)], axis=1) for n in names], axis=1)
    lo, hi, undefined = resampling.percentile_intervals(columns, np.full(columns.shape[1], level))
    return cb.intervals_by_name(lo, hi, undefined, names, n_models)
