"""Accuracy over grouped items and the self-consistency majority vote, as plain numpy functions.

Items belong to groups (GSM-IC: variants belong to base problems). Every accuracy is a ratio of two
per-group count vectors, so its bootstrap over groups is one matrix product for all replicates
(the draws and intervals are those of `evaluation.cluster_bootstrap`).
"""

from __future__ import annotations

import numpy as np

from ctxrobust.evaluation.cluster_bootstrap import weighted_totals


def group_counts(group: np.ndarray, hit: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group: (items hit, items). `group` holds each item's group index, `hit` a bool per item.
    Micro accuracy (Section 3.2), every item weighing the same, is sum(hits) / sum(items)."""
    return np.bincount(group[hit], minlength=n_groups), np.bincount(group, minlength=n_groups)


def macro_counts(hits: np.ndarray, total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Macro accuracy (Section 3.2): a group counts as solved only if every one of its items is right;
    (solved groups, groups with at least one item)."""
    has = total > 0
    return (has & (hits == total)).astype(np.int64), has.astype(np.int64)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> float | None:
    """sum(numerator) / sum(denominator), or None when the denominator is zero."""
    den = int(np.sum(denominator))
    return None if den == 0 else int(np.sum(numerator)) / den


def ratio_replicates(weights: np.ndarray, numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """(replicates, K) bootstrap ratios from (n_groups, K) count matrices and (replicates, n_groups)
    draw counts; NaN (undefined) where a replicate drew no group with a non-zero denominator."""
    num, den = weighted_totals(weights, numerators), weighted_totals(weights, denominators)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.nan)


def majority_vote(group: np.ndarray, answer: np.ndarray, n_groups: int, rng: np.random.Generator) -> np.ndarray:
    """Self-consistency (Section 5.1 and its footnote 6): per group, the most frequent answer; a tie is
    broken by a uniform random choice among the top answers. `answer` holds non-negative answer codes,
    or -1 for a sample without an answer, which does not vote. Groups without any answer get -1.

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
