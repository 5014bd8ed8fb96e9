"""Homogeneous-shift null of the uncertainty-magnitude correlate (Appendix F, "Homogeneous-shift null").

A null in which every question receives the same log-odds shift: eta is the Mantel-Haenszel common
log odds ratio of context against no context over the questions' 2x2 tables (the paper's -0.19).
Each simulation keeps the design (every question's baseline and pooled context trial counts) and
draws new trials, baseline Binomial(n_b, s_i0) with s_i0 the question's observed no-context
accuracy, context Binomial(n_c, expit(logit(s_i0) + eta)); it then runs the same split-sample
estimator as the report (the Appendix F folds over the report's number of splits, the Spearman rho of
u from fold F with the squared target d1 d2, averaged over the splits), on both scales. 200
simulations (Appendix F); the report gives their mean and range ("lies in [-0.02, +0.04]") beside the
observed split-sample correlate.

A question never or always right without context stays so under any finite shift (s_i0 of 0 or 1),
as it would when resampling its own trials.
"""

from __future__ import annotations

import math

import numpy as np

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import defaults, question_bootstrap
from ctxrobust.evaluation.compiled import compiled
from ctxrobust.evaluation.pseudowords import instability, split_sample
from ctxrobust.evaluation.pseudowords.cross_model import mean_defined, uncertainty
from ctxrobust.evaluation.pseudowords.reliability_ceiling import NOT_FOLDABLE, half_changes, row_pearson
from ctxrobust.evaluation.report import metric

SIMULATIONS = 200  # Appendix F
MAX_SIMULATIONS = defaults.MAX_SIMULATIONS
# simulations x splits x questions of one unit (about 200 ns each): beyond DEFAULT_WORK the null is
# not computed unless asked for (200 x 200 x 1,690 questions, the size of the paper's Table 3, is
# within), beyond WORK_LIMIT an explicit --shift-null-simulations is refused
DEFAULT_WORK = 70_000_000
WORK_LIMIT = 1_000_000_000
SPLITS_PER_BATCH = 50
SCALES = ("probability", "log_odds")


def mantel_haenszel_log_odds(base_k, base_n, context_k, context_n) -> float | None:
    """log OR_MH = log(sum_i a_i d_i / T_i / sum_i b_i c_i / T_i), a/b the context trials right/wrong,
    c/d the no-context trials right/wrong, T_i all of question i's trials; None when a sum is 0."""
    a = np.asarray(context_k, dtype=np.float64)
    b = np.asarray(context_n, dtype=np.float64) - a
    c = np.asarray(base_k, dtype=np.float64)
    d = np.asarray(base_n, dtype=np.float64) - c
    t = a + b + c + d
    numerator, denominator = np.sum(a * d / t), np.sum(b * c / t)
    if numerator <= 0 or denominator <= 0:
        return None
    return float(np.log(numerator / denominator))


def shifted(p: np.ndarray, eta: float) -> np.ndarray:
    """expit(logit(p) + eta), with 0 and 1 kept."""
    p = np.asarray(p, dtype=np.float64)
    out = p.copy()
    inner = (p > 0) & (p < 1)
    logit = np.log(p[inner] / (1 - p[inner]))
    out[inner] = 1 / (1 + np.exp(-(logit + eta)))
    return out


def row_midranks(x: np.ndarray) -> np.ndarray:
    """Midranks (1-based, ties to TIE_DECIMALS averaged) within each row of an (S, N) array."""
    x = np.round(np.atleast_2d(np.asarray(x, dtype=np.float64)), instability.TIE_DECIMALS)
    order = np.argsort(x, axis=1)  # any order of tied values gives the same midranks
    out = np.empty(x.shape)
    _runs_midranks(x, order, out)
    return out


@compiled
def _runs_midranks(x, order, out):
    """out[r, i]: the midrank of x[r, i] in row r, given each row's ascending order; a run of tied values
    at sorted positions i..j (0-based) all get (i + j) / 2 + 1."""
    for r in range(x.shape[0]):
        i = 0
        while i < x.shape[1]:
            j = i
            while j + 1 < x.shape[1] and x[r, order[r, j + 1]] == x[r, order[r, j]]:
                j += 1
            for k in range(i, j + 1):
                out[r, order[r, k]] = (i + j) / 2 + 1
            i = j + 1


def row_spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman rho of each row pair (Pearson r of the midranks): (S,), NaN where a row is constant."""
    return row_pearson(row_midranks(x), row_midranks(y))


TABLE_WIDTH = 33  # fold sizes up to which draws use the inverse-CDF tables (beyond: numpy's sampler)


def hypergeometric(rng: np.random.Generator, good: np.ndarray, total: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Correct trials among `size` drawn without replacement from `total` trials of which `good` are
    correct: an (S, N) array of Hypergeometric(good, total - good, size) draws, `total` and `size` (N,)
    per question, `good` (S, N). Drawn by inverse CDF from exact tables per (total, size, good), one
    uniform per draw (several times faster than numpy's sampler for the few trials of a fold)."""
    good = np.asarray(good, dtype=np.int64)
    total = np.broadcast_to(np.asarray(total, dtype=np.int64), good.shape[-1:])
    size = np.broadcast_to(np.asarray(size, dtype=np.int64), good.shape[-1:])
    if size.max(initial=0) + 1 > TABLE_WIDTH:
        return rng.hypergeometric(good, np.broadcast_to(total, good.shape) - good, np.broadcast_to(size, good.shape))
    key = (total.tobytes(), size.tobytes())
    if key not in _TABLES:
        if len(_TABLES) >= 8:  # the folds of one design use three
            _TABLES.clear()
        _TABLES[key] = _cdf_tables(total, size)
    if good.min(initial=0) < 0 or np.any(good > total):
        raise ValueError("hypergeometric: every count of correct trials must lie in 0..total")
    cdf, start = _TABLES[key]
    u = rng.random(good.shape)
    out = np.empty(good.shape, dtype=np.int64)
    flat = (-1, good.shape[-1])  # the loop takes (rows, N)
    _inverse_cdf(cdf, start, np.ascontiguousarray(good).reshape(flat), u.reshape(flat), out.reshape(flat))
    return out


@compiled
def _inverse_cdf(cdf, start, good, u, out):
    """out[s, i]: how many entries of CDF row start[i] + good[s, i], its last (1) left out, are at or
    below u[s, i], the inverse-CDF draw."""
    for s in range(good.shape[0]):
        for i in range(good.shape[1]):
            row = start[i] + good[s, i]
            count = 0
            for j in range(cdf.shape[1] - 1):
                if u[s, i] >= cdf[row, j]:
                    count += 1
            out[s, i] = count


_TABLES: dict = {}


def _cdf_tables(total: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CDF rows of Hypergeometric(g, t - g, z) for every question's (t, z) and g = 0..t, and each
    question's first row (row start[i] + g is its CDF with g correct)."""
    pairs, pair_of = np.unique(np.stack([total, size]), axis=1, return_inverse=True)
    offsets = np.concatenate([[0], np.cumsum(pairs[0] + 1)])
    width = int(size.max(initial=0)) + 1
    cdf = np.ones((int(offsets[-1]), width))
    for j, (t, z) in enumerate(pairs.T):
        for g in range(t + 1):
            pmf = [math.comb(g, x) * math.comb(t - g, z - x) for x in range(z + 1)]
            cdf[offsets[j] + g, : z + 1] = np.cumsum(pmf) / math.comb(t, z)
    cdf[:, -1] = 1.0
    return cdf, offsets[:-1][pair_of.ravel()]


def folds(base_k, base_n, context_k, context_n, splits: int, rng: np.random.Generator) -> split_sample.Folds:
    """split_sample.folds' random folds (|F| = floor(n_b / 3), B1 the floor of half the rest, C1 half
    the context trials), drawn through `hypergeometric`: the same distribution."""
    base_k = np.broadcast_to(np.asarray(base_k, dtype=np.int64), (splits, np.size(base_k)))
    context_k = np.broadcast_to(np.asarray(context_k, dtype=np.int64), (splits, np.size(context_k)))
    base_n = np.asarray(base_n, dtype=np.int64)
    context_n = np.asarray(context_n, dtype=np.int64)
    shape = base_k.shape
    f_n, rest_n = base_n // 3, base_n - base_n // 3
    f_k = hypergeometric(rng, base_k, base_n, f_n)
    b1_n = rest_n // 2
    b1_k = hypergeometric(rng, base_k - f_k, rest_n, b1_n)
    c1_n = context_n // 2
    c1_k = hypergeometric(rng, context_k, context_n, c1_n)
    counts = split_sample.Counts
    return split_sample.Folds(
        counts(f_k, np.broadcast_to(f_n, shape)),
        counts(b1_k, np.broadcast_to(b1_n, shape)),
        counts(base_k - f_k - b1_k, np.broadcast_to(rest_n - b1_n, shape)),
        counts(c1_k, np.broadcast_to(c1_n, shape)),
        counts(context_k - c1_k, np.broadcast_to(context_n - c1_n, shape)),
    )


def split_sample_squared(base_k, base_n, context_k, context_n, splits: int, rng: np.random.Generator) -> dict[str, float]:
    """The report's split-sample uncertainty-squared-change rho (Appendix F, Eq. 4) on both scales,
    the mean over `splits` random fold splits: {"probability": rho, "log_odds": rho}."""
    per_split = {scale: [] for scale in SCALES}
    for lo in range(0, splits, SPLITS_PER_BATCH):
        drawn = folds(base_k, base_n, context_k, context_n, min(SPLITS_PER_BATCH, splits - lo), rng)
        for scale, rho in squared_rho(drawn).items():
            per_split[scale].append(rho)
    return {scale: float(mean_defined(np.concatenate(values))) for scale, values in per_split.items()}


def squared_rho(drawn: split_sample.Folds) -> dict[str, np.ndarray]:
    """Spearman rho of u = s_F (1 - s_F) with the squared target d1 d2 (Eq. 4) in each split: (S,) per scale."""
    u = row_midranks(uncertainty(drawn.f.mean))
    out = {}
    for scale in SCALES:
        d1, d2 = half_changes(drawn, scale)
        out[scale] = row_pearson(u, row_midranks(d1 * d2))
    return out


def simulate(
    base_k, base_n, context_k, context_n, eta: float, simulations: int, splits: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """The split-sample squared correlate of `simulations` datasets drawn under a common shift eta: (R,) per scale."""
    base_n = np.asarray(base_n, dtype=np.int64)
    context_n = np.asarray(context_n, dtype=np.int64)
    p0 = np.asarray(base_k, dtype=np.float64) / base_n
    pc = shifted(p0, eta)
    out = {scale: np.empty(simulations) for scale in SCALES}
    for r in range(simulations):
        sim_base = rng.binomial(base_n, p0)
        sim_context = rng.binomial(context_n, pc)
        rho = split_sample_squared(sim_base, base_n, sim_context, context_n, splits, rng)
        for scale in SCALES:
            out[scale][r] = rho[scale]
    return out


def requested(simulations: int | None, n: int, splits: int) -> tuple[int, str | None]:
    """The number of simulations to run for a unit of n questions, and why none run (None: they do).
    Not given: the paper's 200 unless that exceeds DEFAULT_WORK; given: that many (check_work refuses too many)."""
    if simulations == 0:
        return 0, "not computed (--shift-null-simulations 0); Appendix F uses 200"
    if simulations is None:
        if SIMULATIONS * splits * n > DEFAULT_WORK:
            most = min(MAX_SIMULATIONS, WORK_LIMIT // (splits * n))
            return 0, (
                f"not computed by default at this size ({n} questions x {splits} splits x {SIMULATIONS} simulations is beyond "
                f"{DEFAULT_WORK:,} question-splits); give --shift-null-simulations K (at most {most} here) to compute it"
            )
        return SIMULATIONS, None
    return simulations, None


def check_work(sizes: list[int], simulations: int | None, splits: int) -> None:
    """Refuse, with the fix, an explicit number of simulations whose work is beyond WORK_LIMIT."""
    if simulations is None or not sizes:
        return
    n = max(sizes)
    if simulations * splits * n > WORK_LIMIT:
        most = WORK_LIMIT // (splits * n)
        raise CtxRobustError(
            f"--shift-null-simulations {simulations}: with {n} questions and {splits} splits this is "
            f"{simulations * splits * n:,} question-splits (at most {WORK_LIMIT:,}); give at most {most} for this file"
        )


def figures(
    base_k, base_n, context_k, context_n, observed: dict, foldable: bool, simulations: int | None, splits: int, seed: int, name: str
) -> dict:
    """`uncertainty_rho.squared.split.<scale>.shift_null` per scale: the mean of the simulated correlates,
    their `range` [min, max], `simulations`, the common shift `eta` (log OR_MH) and the `observed`
    split-sample value; null with the reason where not computed."""
    n = int(np.size(base_k))
    names = {scale: f"uncertainty_rho.squared.split.{scale}.shift_null" for scale in SCALES}
    count, reason = requested(simulations, n, splits)
    eta = mantel_haenszel_log_odds(base_k, base_n, context_k, context_n)
    if not foldable:
        reason = NOT_FOLDABLE
    elif reason is None and eta is None:
        reason = "undefined: the Mantel-Haenszel odds ratio has a zero sum (no question has both a right and a wrong trial across the conditions)"
    if reason is not None:
        return {names[s]: {**metric(None, None, n), "note": reason, "eta": eta} for s in SCALES}
    rng = question_bootstrap.stream(seed, "shift-null", name)
    values = simulate(base_k, base_n, context_k, context_n, eta, count, splits, rng)
    out = {}
    for scale in SCALES:
        v = values[scale][np.isfinite(values[scale])]
        entry = metric(float(v.mean()) if v.size else None, None, n)
        entry.update(
            {
                "range": [float(v.min()), float(v.max())] if v.size else None,
                "simulations": count,
                "eta": eta,
                "observed": (observed.get(f"uncertainty_rho.squared.split.{scale}") or {}).get("estimate"),
            }
        )
        if v.size < count:
            entry["note"] = f"{count - v.size} of {count} simulations had no defined correlation and are left out"
        out[names[scale]] = entry
    return out
