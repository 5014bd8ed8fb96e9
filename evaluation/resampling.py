"""Resampling with replacement, stored as draw counts: row b of a (replicates, units) matrix says how many
times each unit (question, cluster, base problem) was drawn in replicate b, so a statistic that is a sum
over units is one matrix product for every replicate at once."""

from __future__ import annotations

import warnings

import numpy as np


def draw_counts(rng: np.random.Generator, n_units: int, replicates: int) -> np.ndarray:
    """(replicates, n_units) int64: each row counts n_units draws with replacement,
    made as rng.integers(0, n_units, size=(replicates, n_units))."""
    draws = rng.integers(0, n_units, size=(replicates, n_units))
    flat = draws + n_units * np.arange(replicates, dtype=np.int64)[:, None]
    return np.bincount(flat.ravel(), minlength=replicates * n_units).reshape(replicates, n_units)


def percentile_intervals(samples: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-sided percentile intervals with linear interpolation, column by column, NaN replicates excluded.

    samples: (replicates, k); levels: (k,) e.g. 0.975 -> 1.25th and 98.75th percentiles (App. C.2).
    Returns (low, high, undefined count); low/high are NaN where every replicate is undefined.
    """
    levels = np.asarray(levels, dtype=np.float64)
    low, high = np.full(levels.shape, np.nan), np.full(levels.shape, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-undefined column stays NaN
        for level in np.unique(levels):
            cols = levels == level
            low[cols], high[cols] = np.nanquantile(samples[:, cols], [(1 - level) / 2, (1 + level) / 2], axis=0)
    return low, high, np.count_nonzero(np.isnan(samples), axis=0)
