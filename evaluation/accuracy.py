"""Accuracy over grouped items, majority vote and the base-problem bootstrap, as plain numpy functions.

Items belong to groups (GSM-IC: variants belong to base problems). Every statistic is a ratio of two
per-group count vectors, so a bootstrap over groups is one matrix product per replicate set.
"""
from __future__ import annotations

import numpy as np

LEVEL = 0.95


def group_counts(group: np.ndarray, hit: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group: (items hit, items). `group` holds each item's group index, `hit` a bool per item.
    Micro accuracy (Section 3.2), every item weighing the same, is sum(hits) / sum(items)."""
    total = np.bincount(group, minlength=n_groups)
    hits = np.bincount(group[hit], minlength=n_groups)
    return hits, total


def macro_counts(hits: np.ndarray, total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Macro accuracy (Section 3.2): a group counts as solved only if every one of its items is right;
    (solved groups, groups with at least one item)."""
    has = total > 0
    return (has & (hits == total)).astype(np.int64), has.astype(np.int64)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> float | None:
    """sum(numerator) / sum(denominator), or None when the denominator is zero."""
    den = int(np.sum(denominator))
    return None if den == 0 else int(np.sum(numerator)) / den


def majority_vote(group: np.ndarray, answer: np.ndarray, n_groups: int, rng: np.random.Generator) -> np.ndarray:
    """Self-consistency (Section 5.1): per group, the most frequent answer; a tie is broken by a uniform
    random choice among the top answers. `answer` holds non-negative answer codes, -1 for "no answer"
    (a vote for nothing: it wins only when a group has no other answer). Groups without any answer get -1.

    The result depends on the multiset of (group, answer) pairs and the generator, not on row order.
    """
    valid = answer >= 0
    g, a = group[valid], answer[valid]
    order = np.lexsort((a, g))
    g, a = g[order], a[order]
    starts = np.flatnonzero(np.r_[True, (g[1:] != g[:-1]) | (a[1:] != a[:-1])]) if g.size else np.zeros(0, np.int64)
    counts = np.diff(np.r_[starts, g.size])
    pair_group, pair_answer = g[starts], a[starts]
    best = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(best, pair_group, counts)
    top = counts == best[pair_group]
    cand_group, cand_answer = pair_group[top], pair_answer[top]
    keys = rng.random(cand_group.size)  # uniform keys: the largest key is a uniform choice among the tied
    order = np.lexsort((keys, cand_group))
    cand_group, cand_answer = cand_group[order], cand_answer[order]
    last = np.r_[cand_group[1:] != cand_group[:-1], True] if cand_group.size else np.zeros(0, bool)
    winner = np.full(n_groups, -1, dtype=np.int64)
    winner[cand_group[last]] = cand_answer[last]
    return winner


def bootstrap_weights(n_groups: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(replicates, n_groups) float matrix: how often each group is drawn in each resample of n_groups
    groups with replacement. Counts are small integers, so products with integer counts stay exact."""
    draws = rng.integers(0, n_groups, size=(replicates, n_groups))
    flat = (draws + np.arange(replicates)[:, None] * n_groups).ravel()
    return np.bincount(flat, minlength=replicates * n_groups).reshape(replicates, n_groups).astype(np.float64)


def ratio_replicates(weights: np.ndarray, numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """(replicates, K) bootstrap ratios from (n_groups, K) count matrices; NaN where a replicate has a
    zero denominator. Integer-valued float products are exact, so the result does not depend on BLAS."""
    num = weights @ numerators.astype(np.float64)
    den = weights @ denominators.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def percentile_intervals(replicates: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """(K, 2) percentile intervals of (replicates, K) values, ignoring NaN replicates; NaN where a column
    has no finite replicate."""
    alpha = (1.0 - level) / 2.0
    out = np.full((replicates.shape[1], 2), np.nan)
    finite = np.isfinite(replicates)
    full = finite.all(axis=0)
    if full.any():
        out[full] = np.quantile(replicates[:, full], [alpha, 1.0 - alpha], axis=0).T
    for k in np.flatnonzero(~full & finite.any(axis=0)):  # only columns with undefined replicates
        out[k] = np.quantile(replicates[finite[:, k], k], [alpha, 1.0 - alpha])
    return out
