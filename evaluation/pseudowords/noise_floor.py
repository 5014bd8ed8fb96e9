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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctxrobust.evaluation.pseudowords import instability

NULL_EXPERIMENTS = 1000  # Appendix B
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
    n_questions = context_n.shape[0]
    per_question = [np.unique(row[row > 0], return_counts=True) for row in context_n]
    width = max(1, max(len(sizes) for sizes, _ in per_question))
    sizes = np.zeros((n_questions, width), dtype=np.int64)
    counts = np.zeros((n_questions, width), dtype=np.int64)
    for i, (q, c) in enumerate(per_question):
        sizes[i, : len(q)] = q
        counts[i, : len(c)] = c
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


def noise_floor(
    base_k: np.ndarray,
    base_n: np.ndarray,
    context_n: np.ndarray,
    rng: np.random.Generator,
    experiments: int = NULL_EXPERIMENTS,
    k: int = instability.K_DEFAULT,
) -> NoiseFloor:
    """eta_INS and eta_WTD: means of INS* and WTD_K* over the null experiments (Section 2)."""
    deltas = null_changes(base_k, base_n, context_n, experiments, rng)
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
