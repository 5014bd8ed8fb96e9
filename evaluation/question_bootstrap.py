"""Question bootstrap (Appendix B): resample questions with replacement, keep every condition and
trial of each drawn question, recompute the complete statistic; 95% percentile intervals.

A replicate is stored as question multiplicities: row b of a (B, N) matrix says how many times each
question was drawn, so a statistic linear in the questions is one matrix product for all replicates.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ctxrobust.evaluation import defaults
from ctxrobust.evaluation.resampling import draw_counts, percentile_intervals

REPLICATES = defaults.QUESTION_BOOTSTRAP_REPLICATES  # Appendix B
LEVEL = 0.95


def stream(seed: int, purpose: str, name: str = "") -> np.random.Generator:
    """An independent generator for one purpose and one model: the same seed, purpose and name always
    give the same stream (no Python hash, no dependence on which other models are in the file)."""
    digest = hashlib.sha256(f"{purpose}\x00{name}".encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng([int(seed), *words])


def multiplicities(rng: np.random.Generator, n: int, replicates: int = REPLICATES) -> np.ndarray:
    """(replicates, n) float matrix of draw counts: each row is n draws of questions with replacement."""
    return draw_counts(rng, n, replicates, np.float64)


def percentile_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float] | None:
    """Percentile interval of the replicates where the statistic is defined (NaN replicates skipped);
    None when none is."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    low, high, _ = percentile_intervals(values[:, None], np.array([level]))
    return float(low[0]), float(high[0])
