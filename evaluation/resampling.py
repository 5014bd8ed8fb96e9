"""Resampling with replacement, stored as draw counts: row b of a (replicates, units) matrix says how many
times each unit (question, cluster, base problem) was drawn in replicate b, so a statistic that is a sum
over units is one matrix product for every replicate at once."""
from __future__ import annotations

import numpy as np


def draw_counts(rng: np.random.Generator, n_units: int, replicates: int) -> np.ndarray:
    """(replicates, n_units) int64: each row counts n_units draws with replacement,
    made as rng.integers(0, n_units, size=(replicates, n_units))."""
    draws = rng.integers(0, n_units, size=(replicates, n_units))
    flat = draws + n_units * np.arange(replicates, dtype=np.int64)[:, None]
    return np.bincount(flat.ravel(), minlength=replicates * n_units).reshape(replicates, n_units)
