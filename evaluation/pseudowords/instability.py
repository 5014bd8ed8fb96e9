"""Per-example instability (The Illusion of Robustness, Section 2): s_i0, s_ij, Delta_i, INS, WTD_K.

Plain numpy. Every statistic also has a weighted form: a (B, N) matrix of question multiplicities
(one row per question-bootstrap replicate) gives B values at once; a single row of ones gives the
plain estimate, so the point estimate and its replicates run through the same lines.

Ties in the WTD ranking: WTD_K is the negated mean of the m smallest Delta_i (Section 2), a sum of
order statistics, so it does not depend on how tied values are ordered. Statistics that measure
something else on the selected questions (split-sample WTD, Jaccard of top sets) share the places
left at the tie boundary among the tied questions in proportion: the exact mean over uniformly
random tie-breaks, deterministic and independent of question order.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sparse

K_DEFAULT = 10  # Section 3: K = 10
TIE_DECIMALS = 12  # values equal to 12 decimals are one tie group (guards float round-off)


def tail_count(n: int, k: int = K_DEFAULT) -> int:
    """m = ceil(K N / 100) (Section 2), in integer arithmetic."""
    return -(-k * n // 100)


def condition_means(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """s_hat = mean of the trials (binary correctness or probability scores) of each cell; NaN where no trial.

    Section 2, "Score Estimation": s_ij is estimated by averaging over repeated responses."""
    total = np.asarray(total, dtype=np.float64)
    count = np.asarray(count, dtype=np.float64)
    out = np.full(total.shape, np.nan)
    np.divide(total, count, out=out, where=count > 0)
    return out


def context_mean(s_ij: np.ndarray) -> np.ndarray:
    """s_ic = (1/M) sum_j s_ij over the contexts observed for each question (rows of an (N, M) array);
    Delta_i = s_ic - s_i0 (Section 2)."""
    return np.nanmean(s_ij, axis=1)


def ins(delta: np.ndarray) -> np.ndarray:
    """INS = (1/N) sum_i |Delta_i| (Section 2), along the last axis."""
    return np.mean(np.abs(delta), axis=-1)


def wtd(delta: np.ndarray, k: int = K_DEFAULT) -> np.ndarray:
    """WTD_K = -(1/m) sum_{l <= m} Delta_(l), Delta ascending, m = ceil(K N / 100) (Section 2), along
    the last axis."""
    delta = np.asarray(delta, dtype=np.float64)
    m = tail_count(delta.shape[-1], k)
    return -np.partition(delta, m - 1, axis=-1)[..., :m].sum(axis=-1) / m


def level_columns(select: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tie levels of each row of a (C, N) array, numbered in one sequence across rows.

    Returns (column of every value, (C, N); first column of each row, (C + 1,), the last entry the
    total): row c's levels, ascending, are columns first[c] .. first[c + 1] - 1."""
    rounded = np.round(np.atleast_2d(np.asarray(select, dtype=np.float64)), TIE_DECIMALS)
    # any sort will do: tied values get one level whatever their order, so the result is the same
    # (a stable sort costs about four times as much on these rows)
    order = np.argsort(rounded, axis=1)
    ordered = np.take_along_axis(rounded, order, axis=1)
    new = np.ones(ordered.shape, dtype=np.int64)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    level = np.cumsum(new, axis=1) - 1
    first = np.concatenate([[0], np.cumsum(level[:, -1] + 1)])
    column = np.empty_like(level)
    np.put_along_axis(column, order, level + first[:-1, None], axis=1)
    return column, first


def column_sums(
    weights: np.ndarray, column: np.ndarray, first: np.ndarray, values: np.ndarray | None = None, columns: np.ndarray | None = None
) -> np.ndarray:
    """out[b, column[c, i]] += weights[b, i] * values[c, i] (values default 1; column -1 skipped): (B, first[-1]).

    One sparse product: a (levels, N) matrix holding each question's value at its level (one entry per
    row of `column` it is not left out of) times the (N, B) weights. Counts are integers, summed
    exactly in any order."""
    n_rows, n = column.shape
    inside = column >= 0  # column -1: a question left out of every level
    row, question = np.nonzero(inside)
    if values is None:  # counts: in the integer type of integer weights (integer_columns), else float64
        data = np.ones(row.size, dtype=columns.dtype if columns is not None and columns.dtype.kind in "iu" else np.float64)
    else:
        data = np.asarray(values, dtype=np.float64)[row, question]
    matrix = sparse.csr_matrix((data, (column[row, question], question)), shape=(int(first[-1]), n))
    if columns is None:  # the weights as (N, B); a caller summing many times passes it
        columns = np.ascontiguousarray(weights.T)
    return np.ascontiguousarray((matrix @ columns).T)


def _segment_cumsum(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Cumulative sums along the last axis restarting at every row start first[c]."""
    running = np.cumsum(values, axis=-1)
    row_start = np.repeat(first[:-1], np.diff(first))
    base = np.where(row_start > 0, running[..., np.maximum(row_start - 1, 0)], 0.0)
    return running - base


def integer_columns(columns: np.ndarray) -> np.ndarray | None:
    """The (N, B) weights as int16 when they are whole counts whose every sum fits (each replicate's
    total below 2^15): the counts of tail_fractions are then summed in int16, exactly the float64 sums
    (integers), with a quarter of the memory traffic. None otherwise."""
    if columns.size == 0 or columns.min() < 0 or columns.sum(axis=0).max() >= 2**15:
        return None
    whole = columns.astype(np.int16)
    return whole if np.array_equal(whole, columns) else None


def tail_fractions(
    weights: np.ndarray,
    select: np.ndarray,
    m: int,
    prune: bool = True,
    columns: np.ndarray | None = None,
    count_columns: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Share of each tie level's weight that falls among the m smallest values of each row of `select`.

    select: (C, N). Returns (fraction (B, levels), column (C, N), first (C + 1,)) as in level_columns.
    Tied questions at the boundary share the remaining places in proportion (the mean over random
    tie-breaks). With `prune`, levels that have at least m + 8 sqrt(m) + 50 questions below them in
    the data are left out (column -1, fraction 0): no replicate reaches them unless its weight below
    them falls that far short, and if one does, everything is recomputed with every level."""
    column, first = level_columns(select)
    if prune:
        size = np.bincount(column.ravel(), minlength=int(first[-1])).astype(np.float64)
        keep = _segment_cumsum(size, first) - size < m + 8 * np.sqrt(m) + 50
        if not keep.all():
            index = np.cumsum(keep) - 1
            column = np.where(keep[column], index[column], -1)
            first = np.concatenate([[0], np.cumsum(np.add.reduceat(keep.astype(np.int64), first[:-1]))])
    counts = column_sums(weights, column, first, columns=columns if count_columns is None else count_columns).astype(np.float64, copy=False)
    before = _segment_cumsum(counts, first) - counts  # weight of the lower levels of the same row
    take = np.clip(m - before, 0.0, counts)
    if prune and np.any(np.add.reduceat(take, first[:-1], axis=1) < m - 1e-6):
        return tail_fractions(weights, select, m, prune=False, columns=columns, count_columns=count_columns)
    fraction = np.zeros_like(counts)
    np.divide(take, counts, out=fraction, where=counts > 0)
    return fraction, column, first


def tail_sums(
    weights: np.ndarray,
    select: np.ndarray,
    measure: np.ndarray,
    m: int,
    columns: np.ndarray | None = None,
    count_columns: np.ndarray | None = None,
) -> np.ndarray:
    """For each row c: sum of measure[c] over the m questions with the smallest select[c], per replicate: (B, C).
    `count_columns`: integer_columns(columns), for callers that sum many times."""
    fraction, column, first = tail_fractions(weights, select, m, columns=columns, count_columns=count_columns)
    sums = column_sums(weights, column, first, np.atleast_2d(measure), columns)
    return np.add.reduceat(fraction * sums, first[:-1], axis=1)


def tail_sum(weights: np.ndarray, select: np.ndarray, measure: np.ndarray, m: int) -> np.ndarray:
    """sum of `measure` over the m questions with the smallest `select`, per replicate: shape (B,).

    With select = measure = Delta and a row of ones this is sum_{l <= m} Delta_(l) (Section 2);
    with select = d1, measure = d2 it is the split-sample tail (Appendix A, Eq. 2)."""
    return tail_sums(weights, select, measure, m)[:, 0]


def weighted_ins(weights: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """INS of each replicate: sum_i w_bi |Delta_i| / sum_i w_bi."""
    return weights @ np.abs(delta) / weights.sum(axis=1)


def weighted_wtd(weights: np.ndarray, delta: np.ndarray, k: int = K_DEFAULT) -> np.ndarray:
    """WTD_K of each replicate (Section 2), the replicate's N = sum of its weights."""
    m = tail_count(int(round(weights[0].sum())), k)
    return -tail_sum(weights, delta, delta, m) / m


def weighted_tail_share(weights: np.ndarray, delta: np.ndarray, k: int = K_DEFAULT) -> np.ndarray:
    """Share of the total absolute change sum_i |Delta_i| in the two K% tails (Section 3.1: 88.3%).

    The most improved m and the most degraded m questions; NaN when nothing changed; 1 when the two
    tails cover every question (2m >= N)."""
    n = int(round(weights[0].sum()))
    m = tail_count(n, k)
    magnitude = np.abs(delta)
    total = weights @ magnitude
    if 2 * m >= n:
        inside = total
    else:
        inside = tail_sum(weights, delta, magnitude, m) + tail_sum(weights, -delta, magnitude, m)
    share = np.full(total.shape, np.nan)
    np.divide(inside, total, out=share, where=total > 0)
    return share


def tail_bins(delta: np.ndarray, k: int = K_DEFAULT, n_bins: int = 5) -> tuple[list[float], list[float]]:
    """Mean Delta_i in 2%-wide percentile bins of the two K% tails (Figure 2).

    Returns (improved, degraded): improved[0] is the most improved 2% (ranked by Delta_i descending),
    degraded[0] the most degraded 2% (ascending). The m tail places are cut into n_bins contiguous
    runs of floor/ceil(m / n_bins) places. Rows of a 2-D input are averaged bin by bin."""
    rows = np.atleast_2d(np.asarray(delta, dtype=np.float64))
    n = rows.shape[1]
    m = tail_count(n, k)
    edges = [(b * m) // n_bins for b in range(n_bins + 1)]
    ascending = np.sort(rows, axis=1)
    descending = ascending[:, ::-1]

    def bins(ordered: np.ndarray) -> list[float]:
        return [float(ordered[:, lo:hi].mean()) if hi > lo else float("nan") for lo, hi in zip(edges, edges[1:])]

    return bins(descending), bins(ascending)
