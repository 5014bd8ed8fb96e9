"""Random trial splits: split-sample WTD (Appendix A) and the disjoint folds of Appendix F.

A split divides each question's trials at random, without replacement: the baseline trials into
halves B1, B2 and the context trials (pooled over contexts) into halves C1, C2. With binary trials
only the number of correct trials landing in each part matters, which is hypergeometric, so S
splits of N questions are a few (S, N) draws. Odd counts: the first half gets floor(n / 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctxrobust.evaluation import defaults
from ctxrobust.evaluation.pseudowords import instability

SPLITS = defaults.SPLITS  # Appendix B
ROWS_PER_BATCH = 5  # splits whose tails are computed at once (bounds the (B, levels) arrays)
SUM_GROUP = 25  # splits whose tails are added up before the running total (fixes the order of summation)


@dataclass(frozen=True)
class Counts:
    """Correct trials `k` out of `n` per split and question: (S, N) arrays."""

    k: np.ndarray
    n: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        return self.k / self.n


def draw(k: np.ndarray, n: np.ndarray, size: np.ndarray, splits: int, rng: np.random.Generator) -> tuple[Counts, Counts]:
    """Split each question's n trials (k correct) into a random part of `size` trials and the rest."""
    k = np.asarray(k, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    size = np.asarray(size, dtype=np.int64)
    first = rng.hypergeometric(k, n - k, size, size=(splits, k.size))
    shape = (splits, k.size)
    return Counts(first, np.broadcast_to(size, shape)), Counts(k - first, np.broadcast_to(n - size, shape))


def splittable(base_n: np.ndarray, context_n: np.ndarray) -> bool:
    """Halves need at least two baseline and two context trials per question."""
    return bool(np.all(np.asarray(base_n) >= 2) and np.all(np.asarray(context_n) >= 2))


def half_changes(
    base_k: np.ndarray,
    base_n: np.ndarray,
    context_k: np.ndarray,
    context_n: np.ndarray,
    splits: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """d1 = mean(C1) - mean(B1), d2 = mean(C2) - mean(B2) for `splits` random splits: (S, N) each (Appendix A, Eq. 1)."""
    b1, b2 = draw(base_k, base_n, np.asarray(base_n) // 2, splits, rng)
    c1, c2 = draw(context_k, context_n, np.asarray(context_n) // 2, splits, rng)
    return c1.mean - b1.mean, c2.mean - b2.mean


def split_sample_wtd(weights: np.ndarray, d1: np.ndarray, d2: np.ndarray, k: int = instability.K_DEFAULT) -> np.ndarray:
    """Split-sample WTD_K per replicate, averaged over the splits (Appendix A).

    In each split, S = the m questions with the smallest d1 and W = -(1/m) sum_{i in S} d2_i (Eq. 2),
    used symmetrically (select on d2, measure d1) and averaged; then averaged over splits."""
    m = instability.tail_count(d1.shape[1], k)
    splits = d1.shape[0]
    # tails of a few splits at a time (the replicates' level weights of a split are held for that
    # split only), summed in groups of SUM_GROUP splits, both directions, in a fixed order
    columns = np.ascontiguousarray(weights.T)  # (N, B), made once for every split's sums
    counts = instability.integer_columns(columns)  # the same, in int16 for the tails' counts (exact)
    tails = np.empty((weights.shape[0], 2 * splits))  # columns: per group, d1-selected then d2-selected
    for lo in range(0, splits, ROWS_PER_BATCH):
        part = slice(lo, min(lo + ROWS_PER_BATCH, splits))
        sums = instability.tail_sums(weights, np.vstack([d1[part], d2[part]]), np.vstack([d2[part], d1[part]]), m, columns, counts)
        group, size = lo // SUM_GROUP * SUM_GROUP, min(SUM_GROUP, splits - lo // SUM_GROUP * SUM_GROUP)
        count = part.stop - part.start
        at = 2 * group + (lo - group)
        tails[:, at : at + count] = sums[:, :count]
        tails[:, at + size : at + size + count] = sums[:, count:]
    total = np.zeros(weights.shape[0])
    for group in range(0, splits, SUM_GROUP):
        size = min(SUM_GROUP, splits - group)
        total += tails[:, 2 * group : 2 * group + 2 * size].sum(axis=1)
    return -total / (2 * splits) / m


@dataclass(frozen=True)
class Folds:
    """Appendix F: baseline trials in folds F, B1, B2; context trials in halves C1, C2."""

    f: Counts
    b1: Counts
    b2: Counts
    c1: Counts
    c2: Counts


def foldable(base_n: np.ndarray, context_n: np.ndarray) -> bool:
    """Three non-empty baseline folds and two non-empty context halves."""
    return bool(np.all(np.asarray(base_n) >= 3) and np.all(np.asarray(context_n) >= 2))


def folds(
    base_k: np.ndarray,
    base_n: np.ndarray,
    context_k: np.ndarray,
    context_n: np.ndarray,
    splits: int,
    rng: np.random.Generator,
) -> Folds:
    """|F| = floor(n_b / 3), the remaining baseline trials divided evenly between B1 and B2 (B1 gets
    the floor), context trials halved; all at random, per split (Appendix F)."""
    base_k = np.asarray(base_k, dtype=np.int64)
    base_n = np.asarray(base_n, dtype=np.int64)
    f, rest = draw(base_k, base_n, base_n // 3, splits, rng)
    rest_n = rest.n[0]
    first = rng.hypergeometric(rest.k, rest.n - rest.k, np.broadcast_to(rest_n // 2, rest.k.shape))
    shape = rest.k.shape
    b1 = Counts(first, np.broadcast_to(rest_n // 2, shape))
    b2 = Counts(rest.k - first, np.broadcast_to(rest_n - rest_n // 2, shape))
    c1, c2 = draw(context_k, context_n, np.asarray(context_n) // 2, splits, rng)
    return Folds(f, b1, b2, c1, c2)
