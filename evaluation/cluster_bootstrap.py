"""Cluster bootstrap with paired draws and percentile intervals (MisleadQA paper, Appendix C.2).

Each replicate draws as many resampling units (source clusters, or dependency groups for App. D.6) as
there are, with replacement, from numpy's Generator; an item's weight is the number of times its unit
was drawn. One (replicates x units) multiplicity matrix serves every model and condition, so all
comparisons stay paired. A rate whose weighted denominator is empty is undefined (NaN), not zero;
undefined replicates are left out of that metric's interval only, and counted.
"""
from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

REPLICATES = 10_000  # App. C.2
SEED = 2027  # App. C.2
PRIMARY_LEVEL = 0.975  # Bonferroni-adjusted, for the two primary contrasts (§4.3)
LEVEL = 0.95  # every other interval


def unit_index(keys: Sequence[Hashable]) -> tuple[np.ndarray, list]:
    """Each item's index into the sorted distinct unit keys, and those keys (sorted: the draw order)."""
    units = sorted(set(keys))
    position = {key: i for i, key in enumerate(units)}
    return np.fromiter((position[k] for k in keys), dtype=np.int64, count=len(keys)), units


def multiplicities(n_units: int, replicates: int, seed: int = SEED) -> np.ndarray:
    """(replicates, n_units): how many times each unit is drawn in each replicate.

    Draws: numpy.random.default_rng(seed).integers(0, n_units, size=(replicates, n_units)).
    """
    draws = np.random.default_rng(seed).integers(0, n_units, size=(replicates, n_units))
    flat = draws + n_units * np.arange(replicates, dtype=np.int64)[:, None]
    return np.bincount(flat.ravel(), minlength=replicates * n_units).reshape(replicates, n_units)


def per_unit_sums(values: np.ndarray, unit: np.ndarray, n_units: int) -> np.ndarray:
    """Sum item rows of `values` (items, ...) within each unit -> (n_units, ...)."""
    out = np.zeros((n_units,) + values.shape[1:], dtype=np.int64)
    np.add.at(out, unit, values)
    return out


def weighted_totals(weights: np.ndarray, per_unit: np.ndarray) -> np.ndarray:
    """sum_i w_i x_i for every replicate: (replicates, units) @ (units, ...) -> (replicates, ...).

    Integer-valued float64 products and sums are exact, so the result does not depend on BLAS order.
    """
    flat = per_unit.reshape(per_unit.shape[0], -1).astype(np.float64)
    return (weights.astype(np.float64) @ flat).reshape((weights.shape[0],) + per_unit.shape[1:])


def percentile_intervals(samples: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-sided percentile intervals with linear interpolation, column by column, NaN replicates excluded.

    samples: (replicates, k); levels: (k,) e.g. 0.975 -> 1.25th and 98.75th percentiles.
    Returns (low, high, undefined count); low/high are NaN where every replicate is undefined.
    """
    ordered = np.sort(samples, axis=0)  # NaN sorts last
    valid = np.count_nonzero(~np.isnan(samples), axis=0)
    tail = (1.0 - np.asarray(levels, dtype=np.float64)) / 2.0

    def quantile(p: np.ndarray) -> np.ndarray:
        h = np.maximum(valid - 1, 0) * p  # linear interpolation between order statistics
        lo = np.floor(h).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(valid - 1, 0))
        a = np.take_along_axis(ordered, lo[None, :], axis=0)[0]
        b = np.take_along_axis(ordered, hi[None, :], axis=0)[0]
        out = a + (h - lo) * (b - a)
        return np.where(valid > 0, out, np.nan)

    return quantile(tail), quantile(1.0 - tail), samples.shape[0] - valid
