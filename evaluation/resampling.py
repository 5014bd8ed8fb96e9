"""Resampling with replacement, stored as draw counts: row b of a (replicates, units) matrix says how many
times each unit (question, cluster, base problem) was drawn in replicate b, so a statistic that is a sum
over units is one matrix product for every replicate at once."""

from __future__ import annotations

import warnings

import numpy as np

from ctxrobust.errors import CtxRobustError

MAX_CELLS = 250_000_000  # replicates x units of one count matrix (2 GB of float64): the work one command may ask for
DRAWS_PER_BLOCK = 4_000_000  # draws made (and counted) at a time


def check_size(n_units: int, replicates: int, flag: str = "--replicates", limit: int = MAX_CELLS) -> None:
    """Refuse, with the fix, a count matrix that would not fit in memory."""
    if replicates * n_units > limit:
        most = limit // max(1, n_units)
        raise CtxRobustError(
            f"{flag} {replicates}: resampling {n_units} units needs a {replicates} x {n_units} array "
            f"({replicates * n_units * 8 / 1e9:.1f} GB); give at most {most} for this file"
        )


def draw_counts(rng: np.random.Generator, n_units: int, replicates: int, dtype=np.int64) -> np.ndarray:
    """(replicates, n_units) counts: each row counts n_units draws with replacement, made as
    rng.integers(0, n_units, size=(replicates, n_units)) (drawn a block of rows at a time, which gives the
    same draws, so memory stays at the output)."""
    check_size(n_units, replicates)
    out = np.empty((replicates, n_units), dtype=dtype)
    if out.size == 0:
        return out
    rows = max(1, DRAWS_PER_BLOCK // n_units)
    for lo in range(0, replicates, rows):
        k = min(rows, replicates - lo)
        draws = rng.integers(0, n_units, size=(k, n_units))
        draws += n_units * np.arange(k, dtype=np.int64)[:, None]
        out[lo : lo + k] = np.bincount(draws.ravel(), minlength=k * n_units).reshape(k, n_units)
    return out


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
