"""The statistics behind pseudowords scoring, checked by hand and by simulation (paper Section 2,
Section 3.1-3.2, Appendices A, B, D, F)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ctxrobust.evaluation import question_bootstrap
from ctxrobust.evaluation.pseudowords import cross_model, instability, noise_floor, split_sample


def ones(n: int) -> np.ndarray:
    return np.ones((1, n))


# --- m, INS, WTD by hand ------------------------------------------------------------------------


@pytest.mark.parametrize("n, m", [(500, 50), (190, 19), (11, 2), (25, 3), (10, 1), (9, 1), (1, 1), (101, 11)])
def test_tail_count_is_ceiling_of_k_percent(n, m):
    assert instability.tail_count(n, 10) == m


def test_ins_and_wtd_by_hand_with_n_not_divisible_by_ten():
    # N = 11 -> m = ceil(1.1) = 2: the two most degraded are -0.5 and -0.2
    delta = np.array([0.1, -0.5, 0.2, 0.0, -0.2, 0.3, 0.0, 0.05, -0.1, 0.4, 0.0])
    assert instability.ins(delta) == pytest.approx(1.85 / 11)
    assert instability.wtd(delta) == pytest.approx(0.35)
    assert instability.weighted_wtd(ones(11), delta)[0] == pytest.approx(0.35)
    assert instability.weighted_ins(ones(11), delta)[0] == pytest.approx(1.85 / 11)
    # rows of a 2-D array are separate experiments (the null experiments of the noise floor)
    np.testing.assert_allclose(instability.wtd(np.vstack([delta, -delta])), [0.35, 0.35])  # -delta: -0.4, -0.3
    np.testing.assert_allclose(instability.ins(np.vstack([delta, 2 * delta])), [1.85 / 11, 3.7 / 11])


def test_wtd_with_ties_at_the_tail_boundary_is_the_order_statistic_sum():
    # N = 12 -> m = 2; three questions tie at -0.3 for the second place: WTD = (0.5 + 0.3) / 2 whatever the order
    delta = np.array([0.0, -0.3, 0.2, -0.3, 0.1, -0.5, 0.0, -0.3, 0.05, 0.0, 0.3, -0.1])
    assert instability.wtd(delta) == pytest.approx(0.4)
    rng = np.random.default_rng(3)
    for _ in range(5):
        shuffled = rng.permutation(delta)
        assert instability.weighted_wtd(ones(12), shuffled)[0] == pytest.approx(0.4)


def test_all_tied_changes():
    delta = np.full(7, -0.25)
    assert instability.wtd(delta) == pytest.approx(0.25)
    assert instability.weighted_wtd(ones(7), delta)[0] == pytest.approx(0.25)
    assert instability.ins(delta) == pytest.approx(0.25)


def test_per_example_change_from_trials_by_hand():
    # question 0: baseline 3/4 correct; contexts: 1/2 and 2/2 -> s_ic = 0.75, Delta = 0
    # question 1: baseline 1/4; contexts: 0/2 and (missing) -> s_ic = 0, Delta = -0.25
    # question 2: baseline 0/4; contexts 2/2 and 1/2 -> s_ic = 0.75, Delta = +0.75
    base_total, base_n = np.array([3, 1, 0]), np.array([4, 4, 4])
    ctx_total, ctx_n = np.array([[1, 2], [0, 0], [2, 1]]), np.array([[2, 2], [2, 0], [2, 2]])
    s_i0 = instability.condition_means(base_total, base_n)
    s_ij = instability.condition_means(ctx_total, ctx_n)
    assert np.isnan(s_ij[1, 1])
    delta = instability.context_mean(s_ij) - s_i0
    np.testing.assert_allclose(delta, [0.0, -0.25, 0.75])
    assert instability.ins(delta) == pytest.approx(1.0 / 3)
    assert instability.wtd(delta) == pytest.approx(0.25)  # m = ceil(0.3) = 1


def test_weighted_statistics_equal_the_statistics_of_the_replicated_sample():
    rng = np.random.default_rng(7)
    delta = np.round(rng.normal(0, 0.2, 40), 1)  # many ties
    weights = question_bootstrap.multiplicities(rng, 40, 25)
    wtd = instability.weighted_wtd(weights, delta)
    ins = instability.weighted_ins(weights, delta)
    share = instability.weighted_tail_share(weights, delta)
    for b in range(25):
        sample = np.repeat(delta, weights[b].astype(int))
        assert wtd[b] == pytest.approx(instability.wtd(sample))
        assert ins[b] == pytest.approx(instability.ins(sample))
        m = instability.tail_count(40)
        ordered = np.sort(sample)
        expected = (np.abs(ordered[:m]).sum() + np.abs(ordered[-m:]).sum()) / np.abs(sample).sum()
        assert share[b] == pytest.approx(expected)


def test_tail_share_by_hand():
    # N = 20 -> m = 2: tails hold |-0.5| + |-0.3| + 0.4 + 0.2 = 1.4 of a total 1.4 + 16 * 0.05 = 2.2
    delta = np.array([-0.5, -0.3, 0.4, 0.2] + [0.05, -0.05] * 8)
    assert instability.weighted_tail_share(ones(20), delta)[0] == pytest.approx(1.4 / 2.2)
    assert np.isnan(instability.weighted_tail_share(ones(20), np.zeros(20))[0])


def test_tail_bins_split_each_tail_into_five():
    delta = np.linspace(-1, 1, 100)  # m = 10: bins of 2 places
    improved, degraded = instability.tail_bins(delta)
    assert improved[0] == pytest.approx((1 + delta[-2]) / 2)
    assert degraded[0] == pytest.approx((-1 + delta[1]) / 2)
    assert len(improved) == len(degraded) == 5
    assert improved == sorted(improved, reverse=True) and degraded == sorted(degraded)


# --- tie-breaking where it matters: selection on one vector, measurement on another ----------------


def test_split_sample_tail_shares_tied_places_as_the_mean_over_tie_breaks():
    select = np.array([-1.0, -0.5, -0.5, -0.5, 0.0, 0.2])
    measure = np.array([-0.8, -0.2, -0.6, 0.1, 0.0, 0.0])
    m = 2  # -1.0 is in; one of the three tied -0.5 gets the second place
    expected = np.mean([-0.8 + x for x in (-0.2, -0.6, 0.1)])
    assert instability.tail_sum(ones(6), select, measure, m)[0] == pytest.approx(expected)
    for order in itertools.islice(itertools.permutations(range(6)), 0, 720, 12):  # whatever order the questions come in
        idx = np.array(order)
        assert instability.tail_sum(ones(6), select[idx], measure[idx], m)[0] == pytest.approx(expected)


def test_pruned_levels_give_the_same_answer_as_all_levels_including_the_fallback():
    rng = np.random.default_rng(11)
    n = 3000
    select = np.round(rng.normal(0, 1, n), 1)
    measure = rng.normal(0, 1, n)
    m = instability.tail_count(n)
    weights = question_bootstrap.multiplicities(rng, n, 30)
    # a replicate that puts all its weight on the largest values: its tail lies in pruned levels
    top = np.argsort(select)[-10:]
    extreme = np.zeros(n)
    extreme[top] = n / 10
    weights = np.vstack([weights, extreme])
    pruned = instability.tail_fractions(weights, select, m, prune=True)
    full = instability.tail_fractions(weights, select, m, prune=False)
    assert pruned[0].shape == full[0].shape  # the extreme replicate forced the fallback
    sums = instability.tail_sum(weights, select, measure, m)
    for b in range(weights.shape[0]):
        sample_select = np.repeat(select, weights[b].astype(int))
        sample_measure = np.repeat(measure, weights[b].astype(int))
        boundary = np.sort(sample_select)[m - 1]
        below = sample_select < boundary
        tied = sample_select == boundary
        expected = sample_measure[below].sum() + (m - below.sum()) * sample_measure[tied].mean()
        assert sums[b] == pytest.approx(expected), b
    # without the extreme replicate, pruning is active and exact
    pruned = instability.tail_fractions(weights[:30], select, m, prune=True)
    assert pruned[0].shape[1] < full[0].shape[1]
    np.testing.assert_allclose(instability.tail_sum(weights[:30], select, measure, m), sums[:30])


# --- noise floor (Section 2, "Noise Correction") --------------------------------------------------


def binomial_pmf(n: int, p: float) -> np.ndarray:
    return np.array([math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])


def exact_mean_abs_difference(p: float, n_base: int, n_ctx: int) -> float:
    """E|X / n_ctx - Y / n_base|, X ~ Bin(n_ctx, p), Y ~ Bin(n_base, p) independent."""
    x, y = binomial_pmf(n_ctx, p), binomial_pmf(n_base, p)
    gap = np.abs(np.arange(n_ctx + 1)[:, None] / n_ctx - np.arange(n_base + 1)[None, :] / n_base)
    return float(x @ gap @ y)


def test_noise_floor_ins_matches_the_exact_null_expectation():
    n = 300
    base_n = np.full(n, 20)
    base_k = np.full(n, 10)  # pi = 0.5 for every question
    context_n = np.full((n, 10), 2)  # M = 10 contexts x 2 trials: pooled mean of 20 draws
    floor = noise_floor.noise_floor(base_k, base_n, context_n, np.random.default_rng(1), 1000)
    assert floor.ins == pytest.approx(exact_mean_abs_difference(0.5, 20, 20), abs=0.002)
    assert floor.experiments == 1000
    assert floor.wtd > floor.ins > 0


def test_null_changes_resample_each_group_at_its_own_size():
    base_k, base_n = np.array([20, 0, 5]), np.array([20, 20, 10])
    context_n = np.array([[2, 2, 2], [2, 2, 0], [1, 3, 3]])
    deltas = noise_floor.null_changes(base_k, base_n, context_n, 20000, np.random.default_rng(2))
    assert deltas.shape == (20000, 3)
    assert np.all(deltas[:, :2] == 0)  # always right / always wrong: nothing to resample
    sizes, counts = noise_floor.context_size_groups(context_n)
    assert sizes[2].tolist() == [1, 3] and counts[2].tolist() == [1, 2]
    assert sizes[1].tolist() == [2, 0] and counts[1].tolist() == [2, 0]
    # question 2: pi = 5/10; a pseudo-baseline of 10 draws and pseudo-contexts of 1, 3 and 3 draws, so
    # Var(Delta*) = pi (1 - pi) (1/10 + (1/1 + 1/3 + 1/3) / 3^2) = 0.25 (0.1 + 5/27)
    assert deltas[:, 2].mean() == pytest.approx(0.0, abs=0.01)
    assert deltas[:, 2].var() == pytest.approx(0.25 * (0.1 + 5 / 27), rel=0.03)


def test_null_simulation_adjusted_metrics_centre_where_the_papers_estimator_puts_them():
    """Contexts have no effect (context trials drawn with the baseline's accuracy), 20 baseline trials
    and 10 contexts x 2, as in Section 3. The floor resamples each question's observed baseline
    (Section 2), whose spread p^(1 - p^) is on average (n - 1) / n of p (1 - p) and is 0 for a question
    answered right every time, so E[INS.adjusted] is not 0 but E|Delta| - E[eta_INS], which the
    binomial distributions give exactly; the paper calls its adjustment "a noise-floor correction
    rather than an unbiased estimator". WTD.adjusted centres on zero."""
    p = np.repeat([0.97, 0.9, 0.6, 0.3], [80, 40, 40, 40])  # mostly easy questions, as on MMLU-Pro
    n = p.size
    exact_ins = np.mean([exact_mean_abs_difference(x, 20, 20) for x in p])
    exact_floor = np.mean([sum(w * exact_mean_abs_difference(k / 20, 20, 20) for k, w in enumerate(binomial_pmf(20, x))) for x in p])
    rng = np.random.default_rng(2024)
    adjusted_ins, adjusted_wtd, floor_wtd = [], [], []
    for _ in range(40):
        base_k = rng.binomial(20, p)
        delta = rng.binomial(2, p[:, None], size=(n, 10)).mean(axis=1) / 2 - base_k / 20
        floor = noise_floor.noise_floor(base_k, np.full(n, 20), np.full((n, 10), 2), rng, 200)
        adjusted_ins.append(instability.ins(delta) - floor.ins)
        adjusted_wtd.append(instability.wtd(delta) - floor.wtd)
        floor_wtd.append(floor.wtd)
    adjusted_ins, adjusted_wtd = np.array(adjusted_ins), np.array(adjusted_wtd)
    se_ins = adjusted_ins.std(ddof=1) / np.sqrt(adjusted_ins.size)
    se_wtd = adjusted_wtd.std(ddof=1) / np.sqrt(adjusted_wtd.size)
    # INS: the residual is the estimator's, about a tenth of the floor, and the simulation finds it
    residual = exact_ins - exact_floor
    assert residual == pytest.approx(0.0076, abs=0.0001) and residual / exact_floor == pytest.approx(0.11, abs=0.005)
    assert abs(adjusted_ins.mean() - residual) < 3 * se_ins
    assert adjusted_ins.mean() > 3 * se_ins
    # WTD: centred on zero, at a resolution of 2% of its floor
    assert abs(adjusted_wtd.mean()) < 3 * se_wtd
    assert se_wtd < 0.02 * np.mean(floor_wtd)


# --- split-sample WTD (Appendix A) ---------------------------------------------------------------


def test_split_halves_partition_the_trials():
    rng = np.random.default_rng(5)
    k, n = np.array([0, 7, 20, 3]), np.array([20, 20, 20, 5])
    first, second = split_sample.draw(k, n, n // 2, 50, rng)
    assert np.all(first.k + second.k == k) and np.all(first.n + second.n == n)
    assert np.all(first.n[0] == [10, 10, 10, 2])
    assert np.all(first.k[:, 0] == 0) and np.all(first.k[:, 2] == 10)
    folds = split_sample.folds(k, n, k, n, 50, rng)
    assert np.all(folds.f.n[0] == [6, 6, 6, 1]) and np.all(folds.b1.n[0] == [7, 7, 7, 2]) and np.all(folds.b2.n[0] == [7, 7, 7, 2])
    assert np.all(folds.f.k + folds.b1.k + folds.b2.k == k)


def test_split_sample_wtd_by_hand_for_one_split():
    d1 = np.array([[-0.6, -0.2, 0.0, 0.1, 0.3, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0]])
    d2 = np.array([[-0.4, 0.0, -0.5, 0.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    # N = 11, m = 2. select on d1: {0, 1} -> measured d2 = -0.4 + 0.0; select on d2: {2, 0} -> measured d1 = 0.0 - 0.6
    expected = -((-0.4 + 0.0) + (0.0 - 0.6)) / (2 * 2)
    assert split_sample.split_sample_wtd(ones(11), d1, d2)[0] == pytest.approx(expected)


def planted(seed: int, n: int = 500):
    """10% of questions lose 0.7 of accuracy under context (0.9 -> 0.2); the rest are unaffected,
    most of them easy. 20 baseline trials and 10 contexts x 2 trials."""
    rng = np.random.default_rng(seed)
    hit = np.zeros(n, dtype=bool)
    hit[rng.choice(n, n // 10, replace=False)] = True
    p0 = np.where(rng.random(n) < 0.7, rng.uniform(0.9, 1.0, n), rng.uniform(0, 1, n))
    pc = p0.copy()
    p0[hit], pc[hit] = 0.9, 0.2
    return rng, rng.binomial(20, p0), rng.binomial(20, pc), pc - p0


def test_split_sample_wtd_is_near_zero_without_effect_while_naive_wtd_is_not():
    rng = np.random.default_rng(9)
    n = 400
    p = rng.uniform(0, 1, n)
    base_k, context_k = rng.binomial(20, p), rng.binomial(20, p)
    d1, d2 = split_sample.half_changes(base_k, np.full(n, 20), context_k, np.full(n, 20), 100, rng)
    value = split_sample.split_sample_wtd(ones(n), d1, d2)[0]
    assert abs(value) < 0.03
    assert instability.wtd(context_k / 20 - base_k / 20) > 0.2


# --- cross-model figures (Section 3.2, Appendices D, F) -------------------------------------------


def test_weighted_pearson_matches_numpy_on_replicated_samples():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=30), rng.normal(size=30)
    y = 0.5 * x + y
    weights = question_bootstrap.multiplicities(rng, 30, 10)
    r = cross_model.weighted_pearson(weights, x, y)
    for b in range(10):
        reps = weights[b].astype(int)
        assert r[b] == pytest.approx(np.corrcoef(np.repeat(x, reps), np.repeat(y, reps))[0, 1])
    assert np.isnan(cross_model.weighted_pearson(ones(30), np.ones(30), y)[0])


def midranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(1, values.size + 1)
    for v in np.unique(values):
        ranks[values == v] = ranks[values == v].mean()
    return ranks


def test_weighted_spearman_matches_pearson_of_midranks_on_replicated_samples():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 4, 25).astype(float)  # heavy ties
    y = np.round(x * 0.3 + rng.normal(size=25), 1)
    weights = question_bootstrap.multiplicities(rng, 25, 10)
    rho = cross_model.weighted_spearman(weights, x, y)
    for b in range(10):
        reps = weights[b].astype(int)
        xs, ys = np.repeat(x, reps), np.repeat(y, reps)
        assert rho[b] == pytest.approx(np.corrcoef(midranks(xs), midranks(ys))[0, 1])


def test_jaccard_of_identical_and_disjoint_tails_and_the_random_baseline():
    delta = np.linspace(-1, 1, 50)  # m = 5
    m = instability.tail_count(50)
    a = cross_model.tail_membership(ones(50), delta, m)
    dense = np.zeros(50)
    dense[a[0]] = a[1][0]
    assert dense.sum() == pytest.approx(5) and np.all(dense[:5] == 1)
    assert cross_model.jaccard(ones(50), a, a, m)[0] == pytest.approx(1.0)
    b = cross_model.tail_membership(ones(50), -delta, m)
    assert cross_model.jaccard(ones(50), a, b, m)[0] == pytest.approx(0.0)
    # ties: every question tied -> membership m / N each; the overlap is its expectation m^2 / N = 0.5
    tied = cross_model.tail_membership(ones(50), np.zeros(50), m)
    assert tied[0].tolist() == list(range(50))
    np.testing.assert_allclose(tied[1], 0.1)
    assert cross_model.jaccard(ones(50), tied, tied, m)[0] == pytest.approx(0.5 / (10 - 0.5))


def test_jaccard_random_baseline_is_the_expected_index_of_two_random_sets():
    # N = 11, m = 2: overlap 0, 1, 2 with probabilities 36/55, 18/55, 1/55 -> E[J] = 18/55 * 1/3 + 1/55 * 1
    assert cross_model.jaccard_random_baseline(11) == pytest.approx(7 / 55)
    assert cross_model.jaccard_random_baseline(3) == pytest.approx(1 / 3)  # m = 1: the same question
    assert cross_model.jaccard_random_baseline(500) == pytest.approx(0.053109, abs=1e-6)  # Section 3.2: "0.05"
    rng = np.random.default_rng(0)
    sets = np.argsort(rng.random((20000, 2, 11)), axis=2)[:, :, :2]
    overlap = (sets[:, 0, :, None] == sets[:, 1, None, :]).sum(axis=(1, 2))
    assert np.mean(overlap / (4 - overlap)) == pytest.approx(7 / 55, abs=0.005)


def test_jaccard_with_pruned_candidates_matches_the_dense_computation():
    rng = np.random.default_rng(13)
    n = 3000  # large enough for pruning to leave most questions out
    shared = rng.normal(size=n)
    x = np.round(shared + rng.normal(size=n), 1)
    y = np.round(shared + rng.normal(size=n), 1)
    weights = np.vstack([ones(n), question_bootstrap.multiplicities(rng, n, 20)])
    m = instability.tail_count(n)
    a, b = cross_model.tail_membership(weights, x, m), cross_model.tail_membership(weights, y, m)
    assert a[0].size < n
    dense = []
    for questions, member in (a, b):
        full = np.zeros((weights.shape[0], n))
        full[:, questions] = member
        np.testing.assert_allclose((weights * full).sum(axis=1), m)  # every replicate's tail holds m
        dense.append(full)
    expected = (weights * dense[0] * dense[1]).sum(axis=1)
    np.testing.assert_allclose(cross_model.jaccard(weights, a, b, m), expected / (2 * m - expected))


def test_jaccard_of_independent_random_changes_is_near_the_random_baseline():
    rng = np.random.default_rng(8)
    values = []
    for _ in range(40):
        x, y = rng.normal(size=500), rng.normal(size=500)
        m = instability.tail_count(500)
        values.append(
            cross_model.jaccard(ones(500), cross_model.tail_membership(ones(500), x, m), cross_model.tail_membership(ones(500), y, m), m)[0]
        )
    assert np.mean(values) == pytest.approx(cross_model.jaccard_random_baseline(500), abs=0.01)


def test_split_half_reliability_and_spearman_brown():
    assert cross_model.spearman_brown(0.6) == pytest.approx(0.75)
    assert cross_model.spearman_brown(np.array([0.0, 1.0])).tolist() == [0.0, 1.0]
    rng, base_k, context_k, _ = planted(2)
    n = base_k.size
    d1, d2 = split_sample.half_changes(base_k, np.full(n, 20), context_k, np.full(n, 20), 50, rng)
    assert cross_model.split_half_reliability(ones(n), d1, d2)[0] > 0.5  # real per-question structure
    p = rng.uniform(0.2, 0.8, n)
    base_k, context_k = rng.binomial(20, p), rng.binomial(20, p)
    d1, d2 = split_sample.half_changes(base_k, np.full(n, 20), context_k, np.full(n, 20), 50, rng)
    assert abs(cross_model.split_half_reliability(ones(n), d1, d2)[0]) < 0.05  # pure noise


def test_uncertainty_correlates_split_sample_removes_shared_noise():
    # no effect at all: raw uncertainty vs squared change is positive from shared baseline noise, split is ~0
    rng = np.random.default_rng(12)
    n = 500
    p = rng.uniform(0, 1, n)
    base_k, context_k = rng.binomial(20, p), rng.binomial(20, p)
    base_n = context_n = np.full(n, 20)
    delta = context_k / 20 - base_k / 20
    raw = cross_model.raw_correlates(ones(n), base_k, base_n, context_k, context_n, delta)
    assert raw["squared.raw.probability"][0] > 0.2
    folds = split_sample.folds(base_k, base_n, context_k, context_n, 40, rng)
    weights = question_bootstrap.multiplicities(rng, n, 80)
    estimate, replicates = cross_model.split_correlates(weights, folds, context_k, context_n)
    assert abs(estimate["squared.split.probability"]) < 0.06
    assert abs(estimate["signed.split.probability"]) < 0.06
    assert replicates["squared.split.probability"].shape == (80,)
    assert cross_model.empirical_logit(np.array([0]), np.array([20]))[0] == pytest.approx(math.log(0.5 / 20.5))


# --- bootstrap plumbing ----------------------------------------------------------------------------


def test_multiplicities_and_streams_are_deterministic_and_independent():
    a = question_bootstrap.multiplicities(question_bootstrap.stream(1, "bootstrap", "m"), 30, 5)
    b = question_bootstrap.multiplicities(question_bootstrap.stream(1, "bootstrap", "m"), 30, 5)
    c = question_bootstrap.multiplicities(question_bootstrap.stream(1, "bootstrap", "other"), 30, 5)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.all(a.sum(axis=1) == 30)
    assert question_bootstrap.percentile_interval(np.array([np.nan, np.nan])) is None
    lo, hi = question_bootstrap.percentile_interval(np.arange(1001.0))
    assert (lo, hi) == pytest.approx((25.0, 975.0))


def test_split_correlates_all_splits_recompute_the_mean_over_every_split_per_replicate():
    # Appendix B: replicate b's value is the mean over all S splits of the correlate under b's weights
    rng = np.random.default_rng(5)
    n = 60
    p = rng.uniform(0, 1, n)
    base_n, context_n = np.full(n, 9), np.full(n, 6)
    base_k, context_k = rng.binomial(9, p), rng.binomial(6, np.clip(p + rng.normal(0, 0.2, n), 0, 1))
    folds = split_sample.folds(base_k, base_n, context_k, context_n, 7, rng)
    weights = question_bootstrap.multiplicities(rng, n, 5)
    estimate, replicates = cross_model.split_correlates_all_splits(weights, folds, context_k, context_n)
    targets = cross_model.split_targets(folds, context_k, context_n)
    u = cross_model.uncertainty(folds.f.mean)
    for name, target in targets.items():
        by_hand = np.array(
            [
                [
                    cross_model.rank_correlation(
                        w, cross_model.weighted_midranks(w[None], u[s])[0], cross_model.weighted_midranks(w[None], target[s])[0]
                    )
                    for s in range(7)
                ]
                for w in weights
            ]
        )  # (B, S), question by question
        assert replicates[name] == pytest.approx(np.nanmean(by_hand, axis=1), abs=1e-12)
        plain = [
            cross_model.rank_correlation(
                np.ones(n),
                cross_model.weighted_midranks(np.ones((1, n)), u[s])[0],
                cross_model.weighted_midranks(np.ones((1, n)), target[s])[0],
            )
            for s in range(7)
        ]
        assert estimate[name] == pytest.approx(np.nanmean(plain), abs=1e-12)
    many = question_bootstrap.multiplicities(rng, n, 400)
    old_estimate, old = cross_model.split_correlates(many, folds, context_k, context_n)
    new_estimate, new = cross_model.split_correlates_all_splits(many, folds, context_k, context_n)
    assert old_estimate == pytest.approx(new_estimate) and new_estimate == pytest.approx(
        estimate
    )  # the schemes differ in the replicates only
    assert all(np.nanstd(new[k]) < np.nanstd(old[k]) for k in targets)  # averaging over splits narrows them


@pytest.mark.parametrize("case", ["annotation levels", "many feature levels", "fractional weights"])
def test_split_correlates_all_splits_equal_the_question_by_question_ranks(case):
    # the grouped sums (dense feature levels, sparse cells, narrow integer or float64 sums) against
    # midranks computed question by question, split by split and replicate by replicate
    rng = np.random.default_rng(11)
    n, splits = 80, 5
    p = rng.uniform(0, 1, n)
    base_n, context_n = np.full(n, 12), np.full(n, 8)
    base_k, context_k = rng.binomial(12, p), rng.binomial(8, p)
    folds = split_sample.folds(base_k, base_n, context_k, context_n, splits, rng)
    weights = question_bootstrap.multiplicities(rng, n, 6)
    feature = None
    if case == "annotation levels":
        feature = rng.integers(0, 4, n).astype(float)
    elif case == "many feature levels":
        feature = rng.normal(size=n)  # more levels than the dense layout takes
    else:
        weights = weights * rng.uniform(0.5, 1.5, weights.shape)
    estimate, replicates = cross_model.split_correlates_all_splits(weights, folds, context_k, context_n, feature=feature)
    u = cross_model.uncertainty(folds.f.mean) if feature is None else np.broadcast_to(feature, (splits, n))
    for name, target in cross_model.split_targets(folds, context_k, context_n).items():

        def rho(w, s, target=target):
            return cross_model.rank_correlation(
                w, cross_model.weighted_midranks(w[None], u[s])[0], cross_model.weighted_midranks(w[None], target[s])[0]
            )

        by_hand = np.array([[rho(w, s) for s in range(splits)] for w in weights])
        assert replicates[name] == pytest.approx(np.nanmean(by_hand, axis=1), abs=1e-12)
        assert estimate[name] == pytest.approx(np.nanmean([rho(np.ones(n), s) for s in range(splits)]), abs=1e-12)


def test_all_splits_sums_are_the_same_in_every_exact_number_type(monkeypatch):
    # counts of up to 16,383 in int16, larger ones in int32, products in int32 up to 2 n^2 < 2^31, else float64
    assert cross_model._exact_dtypes(np.ones((2, 5)), 5) == (np.int16, np.int32)
    assert cross_model._exact_dtypes(np.full((2, 4), 5000.0), 4) == (np.int32, np.int32)
    assert cross_model._exact_dtypes(np.full((2, 4), 10000.0), 4) == (np.int32, np.float64)
    assert cross_model._exact_dtypes(np.full((2, 4), 0.5), 4) == (np.float64, np.float64)
    rng = np.random.default_rng(2)
    n = 120
    p = rng.uniform(0, 1, n)
    base_k, context_k = rng.binomial(20, p), rng.binomial(20, p)
    folds = split_sample.folds(base_k, np.full(n, 20), context_k, np.full(n, 20), 9, rng)
    weights = question_bootstrap.multiplicities(rng, n, 30)
    expected = cross_model.split_correlates_all_splits(weights, folds, context_k, np.full(n, 20))
    for types in [(np.int32, np.int32), (np.int32, np.float64), (np.float64, np.float64)]:
        monkeypatch.setattr(cross_model, "_exact_dtypes", lambda w, n, types=types: types)
        estimate, replicates = cross_model.split_correlates_all_splits(weights, folds, context_k, np.full(n, 20))
        assert estimate == expected[0]
        assert all(np.array_equal(replicates[k], expected[1][k], equal_nan=True) for k in replicates)
