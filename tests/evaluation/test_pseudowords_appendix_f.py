"""Appendix F of The Illusion of Robustness: the reliability ceiling of the split-sample correlates
and the homogeneous-shift null (Mantel-Haenszel common log-odds shift, 200 simulations), checked by
hand, against the paper's formulas and through the scorer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import question_bootstrap
from ctxrobust.evaluation.pseudowords import cross_model, reliability_ceiling, shift_null, split_sample
from ctxrobust.evaluation.pseudowords import scorer as pw
from ctxrobust.evaluation.pseudowords.options import ScoreOptions
from ctxrobust.options import parse_options


def counts(k, n) -> split_sample.Counts:
    k = np.atleast_2d(np.asarray(k, dtype=np.int64))
    return split_sample.Counts(k, np.broadcast_to(np.asarray(n, dtype=np.int64), k.shape))


def hand_folds() -> split_sample.Folds:
    """One split of 5 questions: baseline folds F, B1, B2 of 3 trials, context halves of 2 trials."""
    return split_sample.Folds(
        f=counts([0, 1, 2, 3, 1], 3),
        b1=counts([1, 1, 2, 3, 0], 3),
        b2=counts([0, 2, 1, 3, 1], 3),
        c1=counts([0, 2, 2, 1, 1], 2),
        c2=counts([1, 2, 1, 0, 2], 2),
    )


# --- reliability ceiling ------------------------------------------------------------------------------


def test_ceiling_is_the_square_root_of_the_product_of_the_reliabilities():
    # Appendix F: rho_ceiling = sqrt(rel_F rel_T)
    assert reliability_ceiling.ceiling(0.49, 0.36) == (pytest.approx(0.42), None)
    assert reliability_ceiling.ceiling(1.0, 0.25)[0] == pytest.approx(0.5)
    value, reason = reliability_ceiling.ceiling(0.5, -0.1)
    assert value is None and "target reliability is -0.100" in reason
    value, reason = reliability_ceiling.ceiling(float("nan"), 0.3)
    assert value is None and "feature reliability is undefined" in reason


def test_reliabilities_by_hand_for_one_split():
    folds = hand_folds()
    u = [np.array(k) / 3 * (1 - np.array(k) / 3) for k in ([0, 1, 2, 3, 1], [1, 1, 2, 3, 0], [0, 2, 1, 3, 1])]
    rel_f = np.mean([np.corrcoef(u[a], u[b])[0, 1] for a, b in ((0, 1), (0, 2), (1, 2))])
    assert reliability_ceiling.feature_reliability(folds) == pytest.approx(rel_f, abs=1e-12)
    d1 = np.array([0, 2, 2, 1, 1]) / 2 - np.array([1, 1, 2, 3, 0]) / 3
    d2 = np.array([1, 2, 1, 0, 2]) / 2 - np.array([0, 2, 1, 3, 1]) / 3
    assert reliability_ceiling.target_reliability(folds, "signed", "probability") == pytest.approx(np.corrcoef(d1, d2)[0, 1])
    assert reliability_ceiling.target_reliability(folds, "squared", "probability") == pytest.approx(np.corrcoef(d1**2, d2**2)[0, 1])

    def g(k, n):
        return np.log((np.array(k) + 0.5) / (n - np.array(k) + 0.5))

    e1 = g([0, 2, 2, 1, 1], 2) - g([1, 1, 2, 3, 0], 3)
    e2 = g([1, 2, 1, 0, 2], 2) - g([0, 2, 1, 3, 1], 3)
    assert reliability_ceiling.target_reliability(folds, "signed", "log_odds") == pytest.approx(np.corrcoef(e1, e2)[0, 1])
    figures = reliability_ceiling.figures(folds, 5)
    entry = figures["uncertainty_rho.squared.split.probability.ceiling"]
    rel_t = np.corrcoef(d1**2, d2**2)[0, 1]
    expected = math.sqrt(rel_f * rel_t) if rel_f > 0 and rel_t > 0 else None
    assert entry["ci"] is None and entry["reliability_feature"] == pytest.approx(rel_f)
    assert entry["reliability_target"] == pytest.approx(rel_t)
    assert entry["estimate"] == (None if expected is None else pytest.approx(expected))


def test_row_pearson_matches_numpy_and_is_undefined_for_a_constant_row():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(4, 30)), rng.normal(size=(4, 30))
    assert reliability_ceiling.row_pearson(x, y) == pytest.approx([np.corrcoef(a, b)[0, 1] for a, b in zip(x, y)])
    assert np.isnan(reliability_ceiling.row_pearson(np.ones((1, 5)), np.arange(5.0)[None])[0])


def simulated(n: int, base: int, context: int, rng, spread: float = 2.0):
    logit = rng.normal(0.5, spread, n)
    p0 = 1 / (1 + np.exp(-logit))
    pc = 1 / (1 + np.exp(-(logit + rng.normal(0, 1.5, n))))
    return rng.binomial(base, p0), np.full(n, base), rng.binomial(context, pc), np.full(n, context)


def test_ceiling_rises_with_the_number_of_trials():
    # more trials, less measurement error: reliabilities and the ceiling move towards 1
    rng = np.random.default_rng(4)
    ceilings = []
    for base, context in ((9, 6), (300, 200)):
        k0, n0, kc, nc = simulated(400, base, context, rng)
        folds = split_sample.folds(k0, n0, kc, nc, 10, rng)
        ceilings.append(reliability_ceiling.figures(folds, 400)["uncertainty_rho.signed.split.probability.ceiling"]["estimate"])
    assert ceilings[0] < ceilings[1] and ceilings[1] > 0.9


def test_ceiling_is_null_with_the_reason_without_folds():
    figures = reliability_ceiling.figures(None, 7)
    assert len(figures) == 4
    assert all(f["estimate"] is None and "3 baseline and 2 context" in f["note"] for f in figures.values())


# --- homogeneous-shift null ------------------------------------------------------------------------


def test_mantel_haenszel_common_log_odds_ratio_by_hand():
    # question 1: context 3 of 4 right, baseline 1 of 4; question 2: 2 of 4 both; T = 8 each
    # OR_MH = (3*3/8 + 2*2/8) / (1*1/8 + 2*2/8) = 13 / 5
    eta = shift_null.mantel_haenszel_log_odds([1, 2], [4, 4], [3, 2], [4, 4])
    assert eta == pytest.approx(math.log(13 / 5))
    assert shift_null.mantel_haenszel_log_odds([3, 2], [4, 4], [1, 2], [4, 4]) == pytest.approx(-math.log(13 / 5))
    assert shift_null.mantel_haenszel_log_odds([2, 2], [4, 4], [2, 2], [4, 4]) == pytest.approx(0.0)
    assert shift_null.mantel_haenszel_log_odds([4, 3], [4, 3], [2, 2], [2, 2]) is None  # every trial right: no odds ratio


def test_mantel_haenszel_recovers_a_common_shift():
    rng = np.random.default_rng(6)
    p0 = rng.uniform(0.1, 0.9, 4000)
    pc = shift_null.shifted(p0, -0.4)
    eta = shift_null.mantel_haenszel_log_odds(rng.binomial(20, p0), np.full(4000, 20), rng.binomial(20, pc), np.full(4000, 20))
    assert eta == pytest.approx(-0.4, abs=0.05)


def test_shift_adds_eta_on_the_log_odds_scale_and_keeps_0_and_1():
    p = np.array([0.0, 0.2, 0.5, 0.9, 1.0])
    moved = shift_null.shifted(p, -0.19)
    inner = slice(1, 4)
    assert np.log(moved[inner] / (1 - moved[inner])) - np.log(p[inner] / (1 - p[inner])) == pytest.approx(np.full(3, -0.19))
    assert moved[0] == 0.0 and moved[-1] == 1.0


def test_inverse_cdf_hypergeometric_has_the_exact_distribution():
    rng = np.random.default_rng(7)
    good = np.full((40_000, 2), 5)
    draws = shift_null.hypergeometric(rng, good, np.array([12, 12]), np.array([4, 6]))
    for column, size in ((0, 4), (1, 6)):
        exact = [math.comb(5, x) * math.comb(7, size - x) / math.comb(12, size) for x in range(size + 1)]
        observed = np.bincount(draws[:, column], minlength=size + 1) / draws.shape[0]
        assert observed == pytest.approx(exact, abs=0.01)
    assert draws.min() >= 0 and draws[:, 0].max() <= 4


def test_null_folds_partition_the_trials_like_split_sample_folds():
    rng = np.random.default_rng(8)
    base_k, context_k = rng.integers(0, 21, 50), rng.integers(0, 21, 50)
    base_n, context_n = np.full(50, 20), np.full(50, 20)
    drawn = shift_null.folds(base_k, base_n, context_k, context_n, 9, rng)
    reference = split_sample.folds(base_k, base_n, context_k, context_n, 9, rng)
    for name in ("f", "b1", "b2", "c1", "c2"):
        assert (getattr(drawn, name).n == getattr(reference, name).n).all()  # fold sizes as the report's
    assert (drawn.f.k + drawn.b1.k + drawn.b2.k == base_k).all() and (drawn.c1.k + drawn.c2.k == context_k).all()
    assert (drawn.f.k <= 6).all() and (drawn.b1.k <= 7).all() and (drawn.c1.k <= 10).all()


def test_row_midranks_by_hand():
    # ties (to 12 decimals) share the mean of their positions: 1, 2, then 3 and 4 for the two 3s
    x = np.array([[3.0, 1.0, 3.0 + 1e-14, 2.0], [0.5, 0.5, 0.5, 0.5]])
    assert shift_null.row_midranks(x).tolist() == [[3.5, 1.0, 3.5, 2.0], [2.5, 2.5, 2.5, 2.5]]


def test_row_spearman_equals_the_scorers_spearman_with_ties():
    rng = np.random.default_rng(9)
    x, y = rng.integers(0, 4, (5, 40)).astype(float), rng.integers(0, 6, (5, 40)) / 3
    expected = [cross_model.weighted_spearman(np.ones((1, 40)), a, b)[0] for a, b in zip(x, y)]
    assert shift_null.row_spearman(x, y) == pytest.approx(expected, abs=1e-12)


def test_null_estimator_on_given_folds_is_the_reported_split_sample_estimate():
    # "the same split-sample estimator": on the same folds, the null's rho equals the report's
    rng = np.random.default_rng(10)
    base_k, base_n, context_k, context_n = simulated(80, 20, 20, rng)
    folds = split_sample.folds(base_k, base_n, context_k, context_n, 12, rng)
    estimate, _ = cross_model.split_correlates_all_splits(np.ones((1, 80)), folds, context_k, context_n)
    rho = shift_null.squared_rho(folds)
    for scale in ("probability", "log_odds"):
        assert np.nanmean(rho[scale]) == pytest.approx(estimate[f"squared.split.{scale}"], abs=1e-12)


def test_null_covers_a_homogeneous_shift_and_not_an_uncertainty_driven_effect():
    rng = np.random.default_rng(11)
    n = 300
    p0 = 1 / (1 + np.exp(-rng.normal(0.8, 1.5, n)))
    base_n, context_n = np.full(n, 20), np.full(n, 20)
    # (a) every question shifted by the same log-odds: the observed correlate sits inside the null range
    base_k, context_k = rng.binomial(20, p0), rng.binomial(20, shift_null.shifted(p0, -0.3))
    figures = shift_null.figures(base_k, base_n, context_k, context_n, {}, True, 40, 20, 0, "m")
    observed = shift_null.split_sample_squared(base_k, base_n, context_k, context_n, 20, rng)["probability"]
    entry = figures["uncertainty_rho.squared.split.probability.shift_null"]
    assert entry["simulations"] == 40 and entry["eta"] == pytest.approx(-0.3, abs=0.15)
    low, high = entry["range"]
    assert low - 0.05 <= observed <= high + 0.05 and abs(entry["estimate"]) < 0.1
    # (b) large moves on the uncertain questions only: far above the null
    uncertain = (p0 > 0.25) & (p0 < 0.75)
    pc = np.where(uncertain, np.where(rng.random(n) < 0.5, 0.02, 0.98), p0)
    base_k, context_k = rng.binomial(20, p0), rng.binomial(20, pc)
    observed = {"uncertainty_rho.squared.split.probability": {"estimate": 0.4}}
    entry = shift_null.figures(base_k, base_n, context_k, context_n, observed, True, 40, 20, 0, "m")[
        "uncertainty_rho.squared.split.probability.shift_null"
    ]
    rho = shift_null.split_sample_squared(base_k, base_n, context_k, context_n, 20, rng)["probability"]
    assert rho > entry["range"][1] + 0.1 and entry["observed"] == 0.4


def test_null_is_deterministic_and_has_its_own_stream():
    rng = np.random.default_rng(12)
    base_k, base_n, context_k, context_n = simulated(60, 20, 20, rng)
    a = shift_null.figures(base_k, base_n, context_k, context_n, {}, True, 5, 10, 3, "m")
    b = shift_null.figures(base_k, base_n, context_k, context_n, {}, True, 5, 10, 3, "m")
    c = shift_null.figures(base_k, base_n, context_k, context_n, {}, True, 5, 10, 4, "m")
    assert a == b and a != c


def test_null_is_null_with_the_reason_when_not_computed():
    k, n = np.array([3, 5, 2]), np.array([6, 6, 6])
    zero = shift_null.figures(k, n, k, n, {}, True, 0, 10, 0, "m")
    assert all(f["estimate"] is None and "--shift-null-simulations 0" in f["note"] for f in zero.values())
    unfoldable = shift_null.figures(k, n, k, n, {}, False, 10, 10, 0, "m")
    assert all("3 baseline and 2 context" in f["note"] for f in unfoldable.values())
    full = np.array([6, 6, 6])
    degenerate = shift_null.figures(full, n, full, n, {}, True, 10, 10, 0, "m")
    assert all("Mantel-Haenszel" in f["note"] and f["estimate"] is None for f in degenerate.values())
    count, reason = shift_null.requested(None, 12_500, 200)  # the benchmark scale: not by default, and how to ask
    assert count == 0 and "--shift-null-simulations K (at most 400 here)" in reason
    assert shift_null.requested(None, 500, 200) == (200, None)


def test_simulation_count_is_bounded_with_a_clear_error():
    with pytest.raises(CtxRobustError, match="--shift-null-simulations 10001: input should be less than or equal to 10000"):
        parse_options(ScoreOptions, {"shift_null_simulations": shift_null.MAX_SIMULATIONS + 1}, "pseudowords score")
    with pytest.raises(CtxRobustError, match=r"--shift-null-simulations 5000: with 12500 questions and 200 splits .* give at most 400"):
        shift_null.check_work([500, 12_500], 5000, 200)
    shift_null.check_work([12_500], 400, 200)  # at the bound: accepted
    shift_null.check_work([12_500], None, 200)  # the default never refuses


# --- through the scorer --------------------------------------------------------------------------------


def unit(n: int = 120, seed: int = 13) -> pw.Unit:
    rng = np.random.default_rng(seed)
    p0 = 1 / (1 + np.exp(-rng.normal(0.5, 1.5, n)))
    pc = 1 / (1 + np.exp(-(np.log(p0 / (1 - p0)) + rng.normal(-0.2, 1.0, n))))
    contexts = [f"CHA-010000-{j:03d}" for j in range(10)]
    return pw.Unit(
        "m",
        "m",
        "CHA 10000",
        True,
        [f"q{i:04d}" for i in range(n)],
        contexts,
        np.full(n, 20),
        rng.binomial(20, p0).astype(float),
        np.full((n, 10), 2),
        rng.binomial(2, pc[:, None], size=(n, 10)).astype(float),
    )


def test_scorer_reports_the_ceiling_and_the_null_beside_the_correlates():
    p = pw.Parameters(replicates=20, null_experiments=20, splits=10, shift_null_simulations=8)
    metrics = pw.score_unit(unit(), p).metrics
    for target in ("signed", "squared"):
        for scale in ("probability", "log_odds"):
            ceiling = metrics[f"uncertainty_rho.{target}.split.{scale}.ceiling"]
            assert ceiling["ci"] is None and 0 < ceiling["estimate"] <= 1
            assert ceiling["estimate"] == pytest.approx(math.sqrt(ceiling["reliability_feature"] * ceiling["reliability_target"]))
    for scale in ("probability", "log_odds"):
        null = metrics[f"uncertainty_rho.squared.split.{scale}.shift_null"]
        assert null["simulations"] == 8 and null["range"][0] <= null["estimate"] <= null["range"][1]
        assert null["observed"] == metrics[f"uncertainty_rho.squared.split.{scale}"]["estimate"]
    # the new figures draw from their own streams: every other figure is unchanged
    without = pw.score_unit(unit(), pw.Parameters(replicates=20, null_experiments=20, splits=10, shift_null_simulations=0)).metrics
    assert {k: v for k, v in without.items() if not k.endswith(".shift_null")} == {
        k: v for k, v in metrics.items() if not k.endswith(".shift_null")
    }


def test_scorer_default_runs_the_papers_200_simulations():
    p = pw.Parameters(replicates=0, null_experiments=10, splits=4)
    null = pw.score_unit(unit(60), p).metrics["uncertainty_rho.squared.split.probability.shift_null"]
    assert null["simulations"] == shift_null.SIMULATIONS == 200


def test_question_bootstrap_stream_of_the_null_is_not_shared():
    assert question_bootstrap.stream(0, "shift-null", "m").random() != question_bootstrap.stream(0, "folds", "m").random()


def test_report_json_and_markdown_carry_appendix_f(tmp_path):
    from test_eval_pseudowords import FAST, make_release, simulated_file

    from ctxrobust.evaluation.pseudowords import render

    release = make_release(tmp_path / "release")
    report = pw.score(release, simulated_file(tmp_path, models=2), {**FAST, "shift_null_simulations": 6})
    metrics = report["models"]["model-0"]["metrics"]
    assert report["units"]["uncertainty_rho.squared.split.probability.ceiling"] == "correlation"
    assert metrics["uncertainty_rho.squared.split.log_odds.shift_null"]["simulations"] == 6
    assert report["parameters"]["shift_null_simulations"] == 6
    text = render.render_markdown(report)
    assert "## Reliability ceiling and homogeneous-shift null (Appendix F)" in text
    assert "| model-0 · squared, log-odds |" in text and "(6 simulations)" in text
    assert "Not computed: Appendix F" not in text
    default = pw.score(release, simulated_file(tmp_path, models=1), {**FAST, "shift_null_simulations": 0})
    assert "n/a (not computed (--shift-null-simulations 0)" in render.render_markdown(default)
