"""Noise floors of INS and WTD from synthetic null experiments (Section 2, "Noise Correction").

For each question, a null experiment resamples, with replacement, from that question's no-context
trials: one pseudo-baseline group of the question's own baseline size p_i, and M pseudo-context
groups of the sizes the question's contexts actually had (q_ij). Context then has no effect by
construction, and INS* and WTD_K* computed "using the same definitions" measure what finite
sampling alone produces. The floors eta are their means over the null experiments (1,000 in
Appendix B); the adjusted metrics are INS - eta_INS and WTD_K - eta_WTD.

With binary trials, drawing n trials with replacement from a question's p_i baseline trials of
which k_i are correct is a Binomial(n, k_i / p_i) count, so one null experiment is a handful of
binomial draws per question, all experiments at once as an (R, N) array. Contexts of the same size
are pooled: the sum of c Binomial(q, pi) draws is one Binomial(c q, pi) draw.

INS*, WTD_K* and the tail bins of one experiment depend only on the multiset of its Delta*_i, and
questions of the same type (baseline trials, correct baseline trials, context sizes) have independent,
identically distributed Delta*. So an experiment is drawn as one Multinomial(c_t, P_t) count per type t
(c_t questions, P_t the exact distribution of the type's Delta*): the same distribution as the
per-question draws, a few dozen counts per experiment instead of N draws (draw_by_type). A design
whose types have too many values of Delta* (SUPPORT_LIMIT) is drawn per question (null_changes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ctxrobust.evaluation import defaults
from ctxrobust.evaluation.pseudowords import instability

NULL_EXPERIMENTS = defaults.NULL_EXPERIMENTS  # Appendix B
EXPERIMENTS_PER_BATCH = 100
QUESTIONS_PER_BATCH = 1000


@dataclass(frozen=True)
class NoiseFloor:
    ins: float  # eta_INS
    wtd: float  # eta_WTD_K
    improved_bins: list[float]  # Figure 2 overlay: mean null Delta in the improved tail's 2% bins
    degraded_bins: list[float]
    experiments: int


def context_size_groups(context_n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For an (N, M) array of trials per context, (sizes, multiplicity) arrays of shape (N, G): the
    distinct non-zero group sizes q of each question and how many contexts had that size (0-padded)."""
    context_n = np.asarray(context_n, dtype=np.int64).reshape(context_n.shape[0], -1)
    n_questions = context_n.shape[0]
    ordered = np.sort(context_n, axis=1)  # per row, ascending: the zeros, then runs of equal sizes
    start = ordered > 0
    start[:, 1:] &= ordered[:, 1:] != ordered[:, :-1]
    group = np.cumsum(start, axis=1) - 1  # the size group of every non-zero entry, in ascending order
    width = max(1, int(start.sum(axis=1).max(initial=0)))
    row, col = np.nonzero(ordered > 0)
    sizes = np.zeros((n_questions, width), dtype=np.int64)
    sizes[row, group[row, col]] = ordered[row, col]
    counts = np.bincount(row * width + group[row, col], minlength=n_questions * width).reshape(n_questions, width).astype(np.int64)
    return sizes, counts


def null_changes(base_k: np.ndarray, base_n: np.ndarray, context_n: np.ndarray, experiments: int, rng: np.random.Generator) -> np.ndarray:
    """Delta*_i of `experiments` synthetic null experiments: an (R, N) array (Section 2).

    s*_i0 = Binomial(p_i, pi_i) / p_i; s*_ij = Binomial(q_ij, pi_i) / q_ij; pi_i = k_i / p_i;
    Delta*_i = (1/M_i) sum_j s*_ij - s*_i0."""
    base_n = np.asarray(base_n, dtype=np.int64)
    pi = np.asarray(base_k, dtype=np.float64) / base_n
    sizes, counts = context_size_groups(np.asarray(context_n, dtype=np.int64))
    # drawn as (question, ..., experiment): consecutive draws share their parameters, which numpy's
    # binomial sampler then sets up once. Generated a block of questions at a time: the generator
    # fills arrays in order, so the blocks hold the same draws as one call would.
    n = pi.size
    baseline = np.empty((n, experiments))
    for lo in range(0, n, QUESTIONS_PER_BATCH):
        part = slice(lo, lo + QUESTIONS_PER_BATCH)
        baseline[part] = rng.binomial(base_n[part, None], pi[part, None], size=(pi[part].size, experiments)) / base_n[part, None]
    out = np.empty((experiments, n))
    for lo in range(0, n, QUESTIONS_PER_BATCH):
        part = slice(lo, lo + QUESTIONS_PER_BATCH)
        q, c = sizes[part], counts[part]
        pooled = rng.binomial((q * c)[..., None], pi[part, None, None], size=(*q.shape, experiments))
        per_size = np.divide(pooled, q[..., None], out=np.zeros(pooled.shape), where=q[..., None] > 0)
        out[:, part] = (per_size.sum(axis=1) / c.sum(axis=1)[:, None] - baseline[part]).T
    return out


SUPPORT_LIMIT = 4096  # values of one question type's Delta* up to which the null is drawn by type (draw_by_type)


def question_types(base_k: np.ndarray, base_n: np.ndarray, context_n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Questions with the same null distribution of Delta*: the same baseline trials p_i, correct k_i and
    context size groups. Returns (types as rows of [p, k, sizes..., counts...], type of every question, questions per type)."""
    sizes, counts = context_size_groups(np.asarray(context_n, dtype=np.int64))
    key = np.column_stack([np.asarray(base_n, dtype=np.int64), np.asarray(base_k, dtype=np.int64), sizes, counts])
    types, of, size = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    return types, of.ravel(), size


def _binomial_pmf(n: int, p: float) -> np.ndarray:
    x = np.arange(n + 1)
    if p <= 0 or p >= 1:
        return (x == (0 if p <= 0 else n)).astype(np.float64)
    return np.array([math.comb(n, j) for j in x], dtype=np.float64) * p**x * (1 - p) ** (n - x)


def type_support(row: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Values and probabilities of Delta* for one question type (a row of question_types): baseline
    Binomial(p, pi) / p, each size group's pooled Binomial(c q, pi) / q, averaged over the M contexts,
    computed as null_changes computes them; None when the support is beyond SUPPORT_LIMIT."""
    base_n, base_k = int(row[0]), int(row[1])
    sizes, counts = row[2 : 2 + width], row[2 + width :]
    pi = base_k / base_n
    groups = [(int(q), int(c)) for q, c in zip(sizes, counts) if q > 0]
    if (base_n + 1) * math.prod(q * c + 1 for q, c in groups) > SUPPORT_LIMIT:
        return None
    total = np.zeros(1)  # sum over size groups of pooled / q
    prob = np.ones(1)
    for q, c in groups:
        x = np.arange(q * c + 1)
        total = (total[:, None] + x[None, :] / q).ravel()
        prob = (prob[:, None] * _binomial_pmf(q * c, pi)[None, :]).ravel()
    m = sum(c for _, c in groups)
    baseline = np.arange(base_n + 1) / base_n
    values = (total[:, None] / m - baseline[None, :]).ravel()
    prob = (prob[:, None] * _binomial_pmf(base_n, pi)[None, :]).ravel()
    keep = prob > 0
    return values[keep], prob[keep]


def draw_by_type(
    base_k: np.ndarray, base_n: np.ndarray, context_n: np.ndarray, experiments: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray] | None:
    """The null experiments as counts: (values (V,) ascending, counts (R, V)), how many questions of each
    experiment have Delta* = values[v]. The c questions of one type have independent, identically
    distributed Delta*, so their multiset in one experiment is one Multinomial(c, type distribution)
    draw (the same distribution as c separate draws; INS*, WTD* and the tail bins depend on the
    multiset only). None when a type's support is too large (then null_changes draws per question)."""
    types, _, size = question_types(base_k, base_n, context_n)
    width = (types.shape[1] - 2) // 2
    supports = [type_support(row, width) for row in types]
    if any(s is None for s in supports):
        return None
    values, index = np.unique(np.concatenate([v for v, _ in supports]), return_inverse=True)
    pvals = np.zeros((len(supports), values.size))
    at = 0
    for t, (v, p) in enumerate(supports):
        np.add.at(pvals[t], index[at : at + v.size], p)
        at += v.size
    pvals /= pvals.sum(axis=1, keepdims=True)
    counts = np.zeros((experiments, values.size), dtype=np.int64)
    for lo in range(0, experiments, EXPERIMENTS_PER_BATCH):
        k = min(EXPERIMENTS_PER_BATCH, experiments - lo)
        counts[lo : lo + k] = rng.multinomial(size, pvals, size=(k, len(supports))).sum(axis=1)
    return values, counts


def _smallest_sums(values: np.ndarray, counts: np.ndarray, places: np.ndarray) -> np.ndarray:
    """Sum of the j smallest Delta* of each experiment, for every j in `places`: (R, len(places))."""
    before = np.cumsum(counts, axis=1) - counts  # questions below each value
    taken = np.clip(places[None, :, None] - before[:, None, :], 0, counts[:, None, :])
    return (taken * values).sum(axis=2)


def noise_floor(
    base_k: np.ndarray,
    base_n: np.ndarray,
    context_n: np.ndarray,
    rng: np.random.Generator,
    experiments: int = NULL_EXPERIMENTS,
    k: int = instability.K_DEFAULT,
) -> NoiseFloor:
    """eta_INS and eta_WTD: means of INS* and WTD_K* over the null experiments (Section 2), drawn by
    question type (draw_by_type), or per question where a type's support is too large."""
    drawn = draw_by_type(base_k, base_n, context_n, experiments, rng)
    if drawn is None:
        return _noise_floor_of(null_changes(base_k, base_n, context_n, experiments, rng), k)
    values, counts = drawn
    n = int(np.size(base_k))
    m = instability.tail_count(n, k)
    edges = np.array([(b * m) // 5 for b in range(6)])
    ins = counts @ np.abs(values) / n
    ascending = _smallest_sums(values, counts, edges)  # degraded tail: the smallest Delta*
    descending = -_smallest_sums(-values[::-1], counts[:, ::-1], edges)  # improved tail: the largest
    wtd = -ascending[:, -1] / m

    def bins(sums: np.ndarray) -> list[float]:
        width = np.diff(edges)
        return [float(sums[:, b + 1].sum() - sums[:, b].sum()) / (w * experiments) if w > 0 else float("nan") for b, w in enumerate(width)]

    return NoiseFloor(float(ins.mean()), float(wtd.mean()), bins(descending), bins(ascending), experiments)


def _noise_floor_of(deltas: np.ndarray, k: int) -> NoiseFloor:
    """noise_floor from per-question draws ((R, N) Delta*, null_changes), for designs too varied to draw by type."""
    experiments = deltas.shape[0]
    # per-experiment statistics, a batch of experiments at a time (bounds the temporaries)
    ins, wtd, improved, degraded = [], [], [], []
    for lo in range(0, experiments, EXPERIMENTS_PER_BATCH):
        part = deltas[lo : lo + EXPERIMENTS_PER_BATCH]
        ins.append(instability.ins(part))
        wtd.append(instability.wtd(part, k))
        up, down = instability.tail_bins(part, k)
        improved.append(np.array(up) * part.shape[0])
        degraded.append(np.array(down) * part.shape[0])
    eta_ins, eta_wtd = float(np.concatenate(ins).mean()), float(np.concatenate(wtd).mean())
    return NoiseFloor(
        eta_ins,
        eta_wtd,
        [float(v) for v in np.sum(improved, axis=0) / experiments],
        [float(v) for v in np.sum(degraded, axis=0) / experiments],
        experiments,
    )
