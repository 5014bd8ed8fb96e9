"""Paired differences between pseudowords models: the floor-adjusted differences carry no interval
(the shifted interval does not cover), WTD's difference has the BCa interval with the paired jackknife."""

from __future__ import annotations

import numpy as np
import pytest

from ctxrobust.evaluation import question_bootstrap
from ctxrobust.evaluation.pseudowords import differences, instability, wtd_interval
from ctxrobust.evaluation.pseudowords import scorer as pw

CONTEXTS = [f"CHA-010000-{j:03d}" for j in range(10)]


def unit(name: str, p0, pc, rng, binary: bool = True, ids=None) -> pw.Unit:
    n = p0.size
    ids = ids or [f"q{i:04d}" for i in range(n)]
    if binary:
        base, context = rng.binomial(20, p0).astype(float), rng.binomial(2, pc[:, None], size=(n, 10)).astype(float)
        base_n, context_n = np.full(n, 20), np.full((n, 10), 2)
    else:
        base, context = p0.astype(float), np.repeat(pc[:, None], 10, axis=1)
        base_n, context_n = np.ones(n, dtype=np.int64), np.ones((n, 10), dtype=np.int64)
    return pw.Unit(name, name, "CHA 10000", binary, ids, CONTEXTS, base_n, base, context_n, context)


def pair(binary: bool = True, n: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    p0 = rng.uniform(0.2, 0.95, n)
    a = unit("a", p0, np.clip(p0 + np.where(rng.random(n) < 0.15, -0.5, 0.0), 0, 1), rng, binary)
    b = unit("b", p0, np.clip(p0 + np.where(rng.random(n) < 0.15, 0.3, 0.0), 0, 1), rng, binary)
    return a, b


def test_floor_adjusted_differences_have_no_interval_and_say_why():
    a, b = pair()
    floors = {"a": {"INS": 0.03, "WTD": 0.1}, "b": {"INS": 0.01, "WTD": 0.04}}
    figures = differences.pair_figures(a, b, pw.Parameters(replicates=200), floors)
    for name, shift in (("INS", 0.02), ("WTD", 0.06)):
        adjusted = figures[f"difference.{name}.adjusted"]
        assert adjusted["ci"] is None and "no interval" in adjusted["note"]
        assert adjusted["estimate"] == pytest.approx(figures[f"difference.{name}"]["estimate"] - shift)
        assert figures[f"difference.{name}"]["ci"] is not None  # the observed difference keeps its interval


def test_probability_score_differences_keep_the_observed_interval():
    a, b = pair(binary=False)
    zero = {"a": {"INS": 0.0, "WTD": 0.0}, "b": {"INS": 0.0, "WTD": 0.0}}
    figures = differences.pair_figures(a, b, pw.Parameters(replicates=100), zero)
    assert figures["difference.INS.adjusted"] == figures["difference.INS"] and figures["difference.INS"]["ci"] is not None


def test_wtd_difference_is_bca_with_the_paired_jackknife():
    a, b = pair(seed=3)
    p = pw.Parameters(replicates=300)
    zero = {"a": {"INS": 0.0, "WTD": 0.0}, "b": {"INS": 0.0, "WTD": 0.0}}
    figure = differences.pair_figures(a, b, p, zero)["difference.WTD"]
    da, db = (differences._changes(u)[2] for u in (a, b))
    n = da.size
    weights = question_bootstrap.multiplicities(question_bootstrap.stream(p.seed, differences.STREAM, "a\x00b"), n, p.replicates)
    both = np.vstack([np.ones((1, n)), weights])
    values = instability.weighted_wtd(both, da) - instability.weighted_wtd(both, db)
    jack = wtd_interval.jackknife_wtd(da) - wtd_interval.jackknife_wtd(db)
    assert figure["estimate"] == pytest.approx(values[0])
    assert figure["ci"] == pytest.approx(list(wtd_interval.bca_interval(values[0], values[1:], jack)))


def test_too_few_shared_questions_give_no_pair():
    rng = np.random.default_rng(1)
    p0 = rng.uniform(0.2, 0.9, 4)
    a = unit("a", p0, p0, rng, ids=["q1", "q2", "q3", "q4"])
    b = unit("b", p0, p0, rng, ids=["q1", "q2", "x3", "x4"])
    assert differences.pair_figures(a, b, pw.Parameters(replicates=10), {}) is None
