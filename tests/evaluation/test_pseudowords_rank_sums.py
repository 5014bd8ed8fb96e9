"""The compiled rank sums of the all-splits correlates (Appendix B): a case by hand, the number
types, and the fallback when numba has no cache folder."""

from __future__ import annotations

import importlib

import numba
import numpy as np
import pytest

from ctxrobust.evaluation import compiled
from ctxrobust.evaluation.pseudowords import rank_sums


def _sums(group_weights, order, cell_bounds, row_bounds, levels, product, wide):
    splits = row_bounds.size - 1
    half = np.full((splits, levels, group_weights.shape[1]), -7, dtype=product)  # stale values must be overwritten
    syy = np.full((splits, group_weights.shape[1]), -7, dtype=wide)
    rank_sums.target_level_sums(group_weights, order, cell_bounds, row_bounds, levels, half, syy)
    return half, syy


@pytest.mark.parametrize(
    "counts, product, wide", [(np.int16, np.int32, np.int64), (np.int32, np.int32, np.int64), (np.float64, np.float64, np.float64)]
)
def test_target_level_sums_by_hand(counts, product, wide):
    # split 0: groups (feature 0, target 0) weight 1, (feature 1, target 0) weight 2, (feature 0,
    # target 1) weight 1 in replicate 0; replicate 1 drops the last group and doubles the first.
    # Target level 0 holds 3 (replicate 0): midrank 2, twice 4; level 1 holds 1 above it: midrank 4, twice 8.
    # split 1: one group, weight 3, one level: midrank 2, twice 4.
    group_weights = np.array([[1, 2], [2, 2], [1, 0], [3, 3]], dtype=counts)
    # rows: (split 0, target 0), (split 0, target 1), (split 1, target 0); cells (row, feature level) of 2 levels
    order = np.array([0, 1, 2, 3])
    cell_bounds = np.array([0, 1, 2, 3, 3, 4, 4])
    row_bounds = np.array([0, 2, 3])
    half, syy = _sums(group_weights, order, cell_bounds, row_bounds, 2, product, wide)
    # replicate 0: feature 0 = 1 x 4 + 1 x 8, feature 1 = 2 x 4; sum w (2 ry)^2 = 3 x 16 + 1 x 64
    # replicate 1: level 0 holds 4 (twice midrank 5), level 1 nothing: feature 0 = 2 x 5, feature 1 = 2 x 5
    assert half[0].tolist() == [[12, 10], [8, 10]]
    assert syy[0].tolist() == [112, 4 * 25]
    assert half[1].tolist() == [[12, 12], [0, 0]]
    assert syy[1].tolist() == [3 * 16, 3 * 16]


def test_without_a_cache_folder_the_sums_are_compiled_in_the_process(monkeypatch):
    real = numba.njit
    asked = []

    def no_cache(*args, **options):
        asked.append(bool(options.get("cache")))
        if options.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return real(*args, **options)

    monkeypatch.setattr(numba, "njit", no_cache)
    try:
        importlib.reload(compiled)
        importlib.reload(rank_sums)
        assert asked == [True, False]  # the cached compilation refused, then compiled without a cache
        half, syy = _sums(np.array([[1]], dtype=np.int16), np.array([0]), np.array([0, 1]), np.array([0, 1]), 1, np.int32, np.int64)
        assert half.tolist() == [[[2]]] and syy.tolist() == [[4]]
    finally:
        monkeypatch.setattr(numba, "njit", real)
        importlib.reload(compiled)
        importlib.reload(rank_sums)
