"""WTD's BCa interval (question bootstrap, Appendix B, with bias correction and jackknife acceleration)."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from ctxrobust.evaluation import question_bootstrap
from ctxrobust.evaluation.pseudowords import instability, wtd_interval

PHI = NormalDist()


@pytest.mark.parametrize("n", [37, 41, 500])  # 41: m is 5 for 41 questions and 4 for the 40 left
def test_jackknife_values_are_wtd_without_each_question(n):
    rng = np.random.default_rng(n)
    delta = rng.integers(-4, 5, n) / 4  # many ties
    jack = wtd_interval.jackknife_wtd(delta)
    weights = np.ones((n, n)) - np.eye(n)
    assert jack == pytest.approx(instability.weighted_wtd(weights, delta), abs=1e-12)
    for i in (0, n // 2, n - 1):
        assert jack[i] == pytest.approx(float(instability.wtd(np.delete(delta, i))), abs=1e-12)


def test_bca_levels_by_hand():
    # no bias, no skew: the plain percentiles
    replicates = np.concatenate([np.linspace(-1, -0.01, 50), np.linspace(0.01, 1, 50)])
    assert wtd_interval.bca_levels(0.0, replicates, np.array([-1.0, 0.0, 1.0])) == pytest.approx((0.025, 0.975))
    # 70 of 100 replicates below the estimate, no acceleration: Phi(2 z0 -+ 1.96)
    replicates = np.concatenate([np.full(70, -1.0), np.full(30, 1.0)])
    z0 = PHI.inv_cdf(0.7)
    low, high = wtd_interval.bca_levels(0.0, replicates, np.array([-1.0, 0.0, 1.0]))
    assert (low, high) == pytest.approx((PHI.cdf(2 * z0 - 1.959964), PHI.cdf(2 * z0 + 1.959964)), abs=1e-6)
    # acceleration a = sum (J - J_i)^3 / (6 (sum (J - J_i)^2)^1.5)
    jack = np.array([0.0, 0.0, 0.0, 3.0])
    spread = jack.mean() - jack
    a = np.sum(spread**3) / (6 * np.sum(spread**2) ** 1.5)
    replicates = np.linspace(-1, 1, 101)
    low, high = wtd_interval.bca_levels(0.0, replicates, jack)
    z0 = PHI.inv_cdf(0.5)
    expected = [PHI.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in (PHI.inv_cdf(0.025), PHI.inv_cdf(0.975))]
    assert (low, high) == pytest.approx(expected)
    assert wtd_interval.bca_levels(0.0, np.array([np.nan]), jack) is None


def test_bca_interval_reads_the_replicates_at_the_moved_percentiles():
    rng = np.random.default_rng(3)
    replicates = rng.gamma(2.0, size=1000)
    jack = rng.gamma(2.0, size=50)
    low, high = wtd_interval.bca_levels(1.5, replicates, jack)
    assert wtd_interval.bca_interval(1.5, replicates, jack) == pytest.approx(tuple(np.quantile(replicates, [low, high])))


def test_wtd_figure_keeps_the_estimate_and_widens_a_skewed_tail():
    rng = np.random.default_rng(4)
    n = 500
    delta = np.where(rng.random(n) < 0.1, -rng.uniform(0.2, 0.9, n), 0.0) + rng.integers(-2, 3, n) / 20
    weights = question_bootstrap.multiplicities(question_bootstrap.stream(0, "bootstrap", "m"), n, 1000)
    values = instability.weighted_wtd(np.vstack([np.ones((1, n)), weights]), delta)
    figure = wtd_interval.wtd_figure(values, delta, 10, n)
    assert figure["estimate"] == pytest.approx(float(instability.wtd(delta)))
    low, high = figure["ci"]
    assert low < figure["estimate"] < high
    plain = question_bootstrap.percentile_interval(values[1:])
    assert (low, high) != pytest.approx(plain)  # moved, from the same replicates
    assert wtd_interval.wtd_figure(values[:1], delta, 10, n)["ci"] is None  # no replicates, no interval
