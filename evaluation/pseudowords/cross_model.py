"""Model specificity (Section 3.2, Appendices D and F): cross-model Pearson r of per-example changes,
Jaccard overlap of the top-K% improved / degraded sets, randomized split-half reliability with the
Spearman-Brown correction, and Spearman correlates of baseline uncertainty with the change.

Every function takes question multiplicities, one row per question-bootstrap replicate (see
question_bootstrap); a row of ones gives the plain estimate.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sparse

from ctxrobust.evaluation.pseudowords import instability, rank_sums

BLOCK_CELLS = 2_000_000  # split-sample correlates rank a block of splits at once, at most this many cells per array


def mean_defined(values: np.ndarray) -> np.ndarray:
    """Mean along the last axis over the finite values (undefined correlations left out); NaN where none is."""
    defined = np.isfinite(values)
    count = defined.sum(axis=-1)
    out = np.full(count.shape, np.nan)
    np.divide(np.where(defined, values, 0.0).sum(axis=-1), count, out=out, where=count > 0)
    return out


def weighted_pearson(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of x and y over the questions, each question counted weights[b, i] times.

    x, y: (N,) or (N, C) (C column pairs at once); returns (B,) or (B, C). NaN where a variance is 0."""
    n = weights.sum(axis=1)
    if x.ndim > 1:
        n = n[:, None]
    mx, my = weights @ x / n, weights @ y / n
    sxx, syy = weights @ (x * x) / n, weights @ (y * y) / n
    cov = weights @ (x * y) / n - mx * my
    vx, vy = sxx - mx * mx, syy - my * my
    defined = (vx > 1e-12 * sxx) & (vy > 1e-12 * syy)  # a constant vector has no correlation
    r = np.full(np.shape(cov), np.nan)
    np.divide(cov, np.sqrt(np.where(defined, vx * vy, 1.0)), out=r, where=defined)
    return np.clip(r, -1.0, 1.0)


def weighted_midranks(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Midranks (1-based, ties averaged) of each question within each replicate's multiset.

    values: (..., N); weights: (..., R, N), question i counted weights[..., r, i] times. Returns
    (..., R, N): a tie level holding weight c above weight `below` has midrank below + (c + 1) / 2.
    Each row of values has its own replicates here, so the weight of every level is one bincount
    (not the shared-weights matrix product of instability.column_sums)."""
    n = np.shape(values)[-1]
    column, first = instability.level_columns(np.reshape(values, (-1, n)))
    level = (column - first[:-1, None]).reshape(np.shape(values))  # tie level within its row, 0 = smallest
    shape = np.broadcast_shapes(np.shape(weights), level[..., None, :].shape)
    rows = int(np.prod(shape[:-1]))
    flat = np.arange(rows).reshape(shape[:-1])[..., None] * n + level[..., None, :]
    counts = np.bincount(flat.ravel(), np.broadcast_to(weights, shape).ravel(), minlength=rows * n).reshape(shape)
    midrank = np.cumsum(counts, axis=-1) - (counts - 1) / 2
    return np.take_along_axis(midrank, np.broadcast_to(level[..., None, :], shape), axis=-1)


def rank_correlation(weights: np.ndarray, rx: np.ndarray, ry: np.ndarray) -> np.ndarray:
    """Pearson r of two midrank arrays (..., R, N), question i counted weights[..., r, i] times: (..., R)."""
    n = weights.sum(axis=-1)
    mean = (n + 1) / 2  # midranks always average to (n + 1) / 2
    cov = (weights * rx * ry).sum(axis=-1) / n - mean**2
    vx = (weights * rx * rx).sum(axis=-1) / n - mean**2
    vy = (weights * ry * ry).sum(axis=-1) / n - mean**2
    defined = (vx > 1e-9) & (vy > 1e-9)
    rho = np.full(n.shape, np.nan)
    np.divide(cov, np.sqrt(np.where(defined, vx * vy, 1.0)), out=rho, where=defined)
    return np.clip(rho, -1.0, 1.0)


JOINT_LIMIT = 4_000_000  # replicates x joint tie levels above which ranks are computed question by question


def _levels(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Tie level of each value (0 = smallest; equal to TIE_DECIMALS, as in instability.level_columns) and their number."""
    column, first = instability.level_columns(np.asarray(values, dtype=np.float64)[None])
    return column[0], int(first[1])


def _block_levels(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Tie levels of each row of an (S, N) array (0 = smallest of its row) and the largest number of levels in a row."""
    column, first = instability.level_columns(values)
    return column - first[:-1, None], int(np.diff(first).max())


def joint_counts(weights: np.ndarray, joint: np.ndarray, size: int, columns: np.ndarray | None = None) -> np.ndarray:
    """(R, size): the weight of each joint level in each replicate, one sparse product of a (levels, N)
    0/1 matrix with the weights as (N, R) (`columns`, C order; made here when not given), each level's
    questions summed in question order."""
    if columns is None:
        columns = np.ascontiguousarray(weights.T)
    n = joint.size
    matrix = sparse.csr_matrix((np.ones(n), (joint, np.arange(n))), shape=(size, n))
    return np.ascontiguousarray((matrix @ columns).T)


def spearman_from_joint(counts: np.ndarray) -> np.ndarray:
    """Spearman rho from the weights of the (x level, y level) pairs, (..., Lx, Ly): the Pearson r of
    the midranks, every question of a pair of levels sharing its two midranks. The same arithmetic
    as rank_correlation over the questions, grouped by level."""
    wx, wy = counts.sum(axis=-1), counts.sum(axis=-2)
    n = wx.sum(axis=-1)
    rx = np.cumsum(wx, axis=-1) - (wx - 1) / 2
    ry = np.cumsum(wy, axis=-1) - (wy - 1) / 2
    mean = (n + 1) / 2
    cov = np.einsum("...ab,...a,...b->...", counts, rx, ry) / n - mean**2
    vx = (wx * rx * rx).sum(axis=-1) / n - mean**2
    vy = (wy * ry * ry).sum(axis=-1) / n - mean**2
    defined = (vx > 1e-9) & (vy > 1e-9)
    rho = np.full(np.shape(n), np.nan)
    np.divide(cov, np.sqrt(np.where(defined, vx * vy, 1.0)), out=rho, where=defined)
    return np.clip(rho, -1.0, 1.0)


def level_spearman(weights: np.ndarray, x: np.ndarray, y: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray | None:
    """Weighted Spearman rho (B,) of x and y (N,) through the joint tie levels; None when the levels
    are too many for that to pay (JOINT_LIMIT)."""
    lx, size_x = _levels(x)
    ly, size_y = _levels(y)
    if weights.shape[0] * size_x * size_y > JOINT_LIMIT:
        return None
    counts = joint_counts(weights, lx * size_y + ly, size_x * size_y, columns)
    return spearman_from_joint(counts.reshape(weights.shape[0], size_x, size_y))


def weighted_spearman(weights: np.ndarray, x: np.ndarray, y: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray:
    """Spearman rho: Pearson r of the midranks, each question counted weights[b, i] times: (B,).
    `columns`: the weights as (N, B) in C order, for callers that rank several pairs under the same weights."""
    grouped = level_spearman(weights, x, y, columns)
    if grouped is not None:
        return grouped
    return rank_correlation(weights, weighted_midranks(weights, x), weighted_midranks(weights, y))


# --- Jaccard overlap of top-K% sets (Section 3.2) -------------------------------------------------


def tail_membership(weights: np.ndarray, select: np.ndarray, m: int, columns: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Probability that each question is among the m smallest `select` values of each replicate, under
    uniformly random tie-breaking: 1 inside the tail, 0 outside, a share at a tied boundary.

    Returns (questions, member): the indices of the questions any replicate can reach and their
    (B, len(questions)) probabilities; every other question has probability 0."""
    fraction, column, _ = instability.tail_fractions(weights, select, m, columns=columns)
    questions = np.flatnonzero(column[0] >= 0)
    return questions, fraction[:, column[0][questions]]


def jaccard(
    weights: np.ndarray, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], m: int, weighted_a: np.ndarray | None = None
) -> np.ndarray:
    """|A and B| / |A or B| for two size-m sets (tail_membership results): I / (2m - I), with
    I = sum_i w_i a_i b_i the expected intersection under independent random tie-breaks in the two
    models (the plain Jaccard index when no tie straddles a boundary). `weighted_a`, if given, is
    weights[:, a[0]] * a[1], made once for every pair of a (the same products)."""
    both, in_a, in_b = np.intersect1d(a[0], b[0], assume_unique=True, return_indices=True)
    wa = weights[:, both] * a[1][:, in_a] if weighted_a is None else weighted_a[:, in_a]
    intersection = (wa * b[1][:, in_b]).sum(axis=1)
    return intersection / (2 * m - intersection)


def jaccard_random_baseline(n: int, k: int = instability.K_DEFAULT) -> float:
    """Expected Jaccard index of two independent uniformly random m-sets of N questions (Section 3.2:
    "close to the 0.05 random baseline"): the overlap I is hypergeometric, P(I = i) =
    C(m, i) C(N - m, m - i) / C(N, m), and J = I / (2m - I). 0.0531 for N = 500."""
    m = instability.tail_count(n, k)
    total = math.comb(n, m)
    return sum(math.comb(m, i) * math.comb(n - m, m - i) * i / ((2 * m - i) * total) for i in range(1, m + 1))


# --- Randomized split-half reliability (Appendix D) ------------------------------------------------


def split_half_reliability(weights: np.ndarray, d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """Mean over splits of Pearson r(d1, d2) across questions (Appendix D): (B,). d1, d2: (S, N)."""
    return mean_defined(weighted_pearson(weights, d1.T, d2.T))


def spearman_brown(r: float | np.ndarray) -> float | np.ndarray:
    """rho = 2 r_half / (1 + r_half) (Appendix D); undefined (NaN) at r_half = -1."""
    r = np.asarray(r, dtype=np.float64)
    out = np.full(r.shape, np.nan)
    np.divide(2 * r, 1 + r, out=out, where=r > -1)
    return out if out.ndim else float(out)


# --- Baseline-uncertainty correlates (Section 3.2 Table 3, Appendix F) ------------------------------


def uncertainty(s: np.ndarray) -> np.ndarray:
    """u_i = s_i0 (1 - s_i0), the Bernoulli variance of no-context correctness (Section 3.2)."""
    return s * (1 - s)


def empirical_logit(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """g(k, n) = log((k + 1/2) / (n - k + 1/2)) (Appendix F)."""
    return np.log((k + 0.5) / (n - k + 0.5))


def raw_correlates(
    weights: np.ndarray,
    base_k: np.ndarray,
    base_n: np.ndarray,
    context_k: np.ndarray,
    context_n: np.ndarray,
    delta: np.ndarray,
) -> dict[str, np.ndarray]:
    """Spearman rho of u_i with Delta_i and Delta_i^2, and with the log-odds change g(context) - g(baseline)
    and its square, all from all trials (Table 3 "raw"): name -> (B,)."""
    u = uncertainty(base_k / base_n)
    g = empirical_logit(context_k, context_n) - empirical_logit(base_k, base_n)
    out = {}
    columns = np.ascontiguousarray(weights.T)  # made once for the four correlates
    for name, target in (
        ("signed.raw.probability", delta),
        ("squared.raw.probability", delta**2),
        ("signed.raw.log_odds", g),
        ("squared.raw.log_odds", g**2),
    ):
        out[name] = weighted_spearman(weights, u, target, columns)
    return out


def split_correlates(
    weights: np.ndarray, folds, context_k: np.ndarray, context_n: np.ndarray, feature: np.ndarray | None = None
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Split-sample Spearman correlates (Appendix F): feature u from fold F only; signed target
    mean(context) - mean(B1 u B2) (Eq. 3); squared target d1 d2 (Eq. 4); the same folds on the
    log-odds scale with g(k, n).

    Returns (estimate: mean over the splits, replicates: (B,) per name). Replicate b is computed on
    split b mod S, so each replicate carries the split-to-split variation too (the interval is wider
    than one computed with every split inside every replicate)."""
    f = folds.f
    splits, n = f.k.shape
    targets = split_targets(folds, context_k, context_n)
    return _split_correlates_by_split(weights, f, targets, splits, n, feature)


SPLIT_TARGETS = ("signed.split.probability", "squared.split.probability", "signed.split.log_odds", "squared.split.log_odds")


def split_target(folds, context_k: np.ndarray, context_n: np.ndarray, name: str) -> np.ndarray:
    """One Appendix F target per split, (S, N): signed (Eq. 3) or squared (Eq. 4), probability or log-odds."""
    b1, b2, c1, c2 = folds.b1, folds.b2, folds.c1, folds.c2
    if name.startswith("signed"):
        b_k, b_n = b1.k + b2.k, b1.n + b2.n
        if name == "signed.split.probability":
            return context_k / context_n - b_k / b_n
        return empirical_logit(context_k, context_n) - empirical_logit(b_k, b_n)
    if name == "squared.split.probability":
        return (c1.mean - b1.mean) * (c2.mean - b2.mean)
    return (empirical_logit(c1.k, c1.n) - empirical_logit(b1.k, b1.n)) * (empirical_logit(c2.k, c2.n) - empirical_logit(b2.k, b2.n))


def split_targets(folds, context_k: np.ndarray, context_n: np.ndarray) -> dict[str, np.ndarray]:
    """Appendix F targets per split, (S, N) each: signed (Eq. 3) and squared (Eq. 4), probability and log-odds."""
    return {name: split_target(folds, context_k, context_n, name) for name in SPLIT_TARGETS}


def _split_correlates_by_split(
    weights: np.ndarray, f, targets: dict[str, np.ndarray], splits: int, n: int, feature: np.ndarray | None = None
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    # split s is ranked under a row of ones (the estimate) and replicates s, s + S, ... (NaN pads
    # the last slot), a block of splits at a time to bound memory
    replicates = weights.shape[0]
    slots = -(-replicates // splits)
    nan_row = np.full((1, n), np.nan)

    def split_weights(s: int) -> np.ndarray:  # replicates s, s + S, ... (NaN pads the last slot): (slots, N)
        rows = s + splits * np.arange(slots)
        return np.vstack([weights[rows[rows < replicates]], *([nan_row] * int((rows >= replicates).sum()))])

    rho = {name: np.empty((splits, 1 + slots)) for name in targets}
    step = max(1, BLOCK_CELLS // ((1 + slots) * n))
    for lo in range(0, splits, step):
        block = slice(lo, min(lo + step, splits))
        w = np.stack([np.vstack([np.ones((1, n)), split_weights(s)]) for s in range(block.start, block.stop)])
        u_values = uncertainty(f.mean[block]) if feature is None else np.broadcast_to(feature, (block.stop - lo, n))
        u_level, u_size = _block_levels(u_values)
        u = None  # question-by-question midranks, made only if the tie levels are too many
        for name, target in targets.items():
            t_level, t_size = _block_levels(target[block])
            rows = w.shape[0] * w.shape[1]
            if rows * u_size * t_size <= JOINT_LIMIT:
                joint = u_level * t_size + t_level  # (splits of the block, N)
                flat = (np.arange(rows).reshape(w.shape[:2]) * (u_size * t_size))[..., None] + joint[:, None, :]
                counts = np.bincount(flat.ravel(), w.ravel(), minlength=rows * u_size * t_size)
                rho[name][block] = spearman_from_joint(counts.reshape(*w.shape[:2], u_size, t_size))
            else:
                if u is None:
                    u = weighted_midranks(w, u_values)
                rho[name][block] = rank_correlation(w, u, weighted_midranks(w, target[block]))
    estimate = {name: float(mean_defined(values[:, 0])) for name, values in rho.items()}
    return estimate, {name: values[:, 1:].T.reshape(-1)[:replicates] for name, values in rho.items()}


def split_correlates_all_splits(
    weights: np.ndarray, folds, context_k: np.ndarray, context_n: np.ndarray, feature: np.ndarray | None = None
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Split-sample Spearman correlates with Appendix B's intervals: every replicate recomputes the
    complete statistic, the mean over all S splits of the correlate under that replicate's question
    multiplicities. Returns (estimate, replicates (B,)) as split_correlates; the estimate is the same.

    Questions are grouped, within each split, by their tie levels of the feature and of the four
    targets together; the replicates' weight of every group of a block of splits is one sparse
    product with the (N, B) weights, and each target's weights per (feature level, target level)
    follow from the groups' (_dense_spearman; _joint_spearman for a feature with many levels). The
    sums are of integers (counts times twice the midranks), exact in the types _exact_dtypes picks
    (in float64 while below 2^53, about 130,000 questions), so the figures do not depend on the order
    of summation."""
    f = folds.f
    splits, n = f.k.shape
    # the feature: uncertainty from fold F, or an annotation held constant across splits (Appendix F)
    u_level, u_size = _small(_block_levels(uncertainty(f.mean) if feature is None else np.broadcast_to(feature, (splits, n))))
    # each target's tie levels, one target's (S, N) values at a time
    levels = {name: _small(_block_levels(split_target(folds, context_k, context_n, name))) for name in SPLIT_TARGETS}
    dtype, product = _exact_dtypes(weights, n)
    columns = np.empty((n, weights.shape[0] + 1), dtype=dtype)  # (N, B + 1): a row of ones (the estimate), then the replicates
    columns[:, 0] = 1
    columns[:, 1:] = weights.T
    replicates = columns.shape[1]
    rho = {name: np.empty((splits, replicates)) for name in levels}
    # splits per block: the group weights (at most N groups a split) and each target's dense joint
    # weights (at most min(N, its levels) rows of the feature's levels a split) stay near SPLIT_BLOCK_CELLS
    dense = u_size if u_size <= DENSE_LEVELS else 1
    per_split = max(n, max(min(n, size) * dense for _, size in levels.values())) * replicates
    step = max(1, min(splits, SPLIT_BLOCK_CELLS // per_split))
    for lo in range(0, splits, step):
        block = slice(lo, min(lo + step, splits))
        parts = [(u_level[block], u_size)] + [(levels[name][0][block], levels[name][1]) for name in levels]
        group, first = _split_groups(parts)
        question = np.broadcast_to(np.arange(n), group.shape).ravel()
        group_weights = _sum_matrix(group.ravel(), first.size, dtype, question) @ columns  # (groups, B + 1)
        split_of = first // n
        u_of = parts[0][0].ravel()[first]
        count = block.stop - block.start
        feature_side = _feature_sums(group_weights, split_of, u_of, u_size, count) if u_size <= DENSE_LEVELS else None
        for k, name in enumerate(levels, start=1):
            t_of = parts[k][0].ravel()[first]
            if feature_side is not None:
                rho[name][block] = _dense_spearman(group_weights, split_of, u_of, u_size, t_of, parts[k][1], count, feature_side, product)
            else:
                rho[name][block] = _joint_spearman(group_weights, split_of, u_of, u_size, t_of, parts[k][1], count)
    estimate = {name: float(mean_defined(values[:, 0])) for name, values in rho.items()}
    return estimate, {name: mean_defined(values[:, 1:].T) for name, values in rho.items()}


DENSE_LEVELS = 16  # feature levels up to which the joint weights are held as a dense (rows, levels, B) array


def _small(levels: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
    return levels[0].astype(np.int32 if levels[1] < 2**31 else np.int64), levels[1]


def _exact_dtypes(w: np.ndarray, n: int) -> tuple:
    """(counts, products) dtypes in which every sum of the all-splits correlates is exact: for counts
    with total weight n per replicate, int16 holds counts and twice-midranks (2 n + 1 < 2^15) and
    int32 a count x twice-midrank and its sums (2 n^2 < 2^31); float64 otherwise. The narrow types
    only make the sparse sums faster."""
    if not (np.all(w >= 0) and np.array_equal(w, np.rint(w))):
        return np.float64, np.float64
    total = max(float(n), float(w.sum(axis=1).max()) if w.size else 0.0)
    counts = np.int16 if 2 * total + 1 < 2**15 else np.int32 if 2 * total + 1 < 2**31 else np.float64
    return counts, np.int32 if 2 * total**2 < 2**31 else np.float64


def _feature_sums(group_weights, split_of, u_of, u_size, splits) -> tuple:
    """The feature's side of _dense_spearman, the same for every target: its level weights (splits,
    levels, B), twice their midranks, sum w rx^2 and the total weight n (splits, B)."""
    dtype = group_weights.dtype
    u_weights = (_sum_matrix(split_of * u_size + u_of, splits * u_size, dtype) @ group_weights).reshape(splits, u_size, -1)
    rx2 = 2 * np.cumsum(u_weights, axis=1, dtype=dtype) - u_weights + 1
    sxx = (u_weights.astype(np.float64) * rx2 * rx2).sum(axis=1) / 4
    n = u_weights.sum(axis=1).astype(np.float64)
    return rx2.astype(np.float64), sxx, n


def _dense_spearman(group_weights, split_of, u_of, u_size, t_of, t_size, splits, feature, product=np.float64) -> np.ndarray:
    """_joint_spearman with the feature's few levels as a dense axis: rows are the (split, target
    level) pairs present, each row's cells its questions at each feature level. Works in twice the
    midranks, integers, so every sum is exact in the types _exact_dtypes picks (int16 or int32 counts,
    int32 products; float64 ones below 2^53); the sums over the cells are one compiled pass
    (rank_sums.target_level_sums)."""
    rows, row_of = np.unique(split_of * t_size + t_of, return_inverse=True)
    row_bounds = np.searchsorted(rows // t_size, np.arange(splits + 1))
    cell = row_of * u_size + u_of
    order = np.argsort(cell, kind="stable")
    cell_bounds = np.searchsorted(cell[order], np.arange(rows.size * u_size + 1))
    rx2, sxx, n = feature
    half = np.empty(rx2.shape, dtype=product)  # (splits, levels, B): sum of weight x 2 ry per feature level
    syy = np.empty(sxx.shape, dtype=np.int64 if product != np.float64 else np.float64)  # weight x (2 ry)^2 is below 2^53, beyond 2^31
    rank_sums.target_level_sums(group_weights, order, cell_bounds, row_bounds, u_size, half, syy)
    cross = (rx2 * half).sum(axis=1) / 4
    return _rho_from_sums(n, cross, sxx, syy / 4)


def _rho_from_sums(n, cross, sxx, syy) -> np.ndarray:
    """Spearman rho from n, sum w rx ry, sum w rx^2 and sum w ry^2: the arithmetic of rank_correlation."""
    mean = (n + 1) / 2
    cov = cross / n - mean**2
    vx = sxx / n - mean**2
    vy = syy / n - mean**2
    defined = (vx > 1e-9) & (vy > 1e-9)
    rho = np.full(n.shape, np.nan)
    np.divide(cov, np.sqrt(np.where(defined, vx * vy, 1.0)), out=rho, where=defined)
    return np.clip(rho, -1.0, 1.0)


SPLIT_BLOCK_CELLS = 12_000_000  # cells of the largest array of one block of splits, about


def _split_groups(parts: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Group of every (split, question) of a block, (S, N): questions of one split sharing every level
    of `parts` ((S, N) levels, number of levels), groups numbered by split first; and the flat
    (split * N + question) index of each group's first member."""
    splits, n = parts[0][0].shape
    code = np.arange(splits, dtype=np.int64)[:, None] * parts[0][1] + parts[0][0]
    size = splits * parts[0][1]
    for level, levels in parts[1:]:
        if size * levels >= 2**62:  # renumber before the code would overflow
            _, code = np.unique(code, return_inverse=True)
            code, size = code.reshape(splits, n), int(code.max()) + 1
        code = code * levels + level
        size *= levels
    _, first, group = np.unique(code.ravel(), return_index=True, return_inverse=True)
    return group.reshape(splits, n), first


def _sum_matrix(of: np.ndarray, size: int, dtype=np.float64, columns: np.ndarray | None = None):
    """(size, len(of)) 0/1 matrix: row k sums the inputs i with of[i] == k (or columns[i] of a wider input)."""
    width = of.size if columns is None else int(columns.max()) + 1
    columns = np.arange(of.size) if columns is None else columns
    return sparse.csr_matrix((np.ones(of.size, dtype=dtype), (of, columns)), shape=(size, width))


def _segment_ranks(weights: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Midranks (rows, B) of rows of level weights sorted by (segment, level): cumulative weight within
    the segment minus (weight - 1) / 2."""
    running = np.cumsum(weights, axis=0)
    start = np.flatnonzero(np.concatenate([[True], segment[1:] != segment[:-1]]))
    base = np.where((start > 0)[:, None], running[np.maximum(start - 1, 0)], 0.0)
    before = np.repeat(base, np.diff(np.concatenate([start, [segment.size]])), axis=0)
    return running - before - (weights - 1) / 2


def _joint_spearman(group_weights, split_of, u_of, u_size, t_of, t_size, splits) -> np.ndarray:
    """Weighted Spearman rho (splits, B) of the feature and one target from the groups' weights
    (groups, B): the arithmetic of rank_correlation, every question of a group sharing its two midranks.

    Groups are summed into (split, feature level, target level) cells, cells into (split, level)
    marginals, whose running sums give the midranks; sum_i w_i rx_i ry_i is the sum over the feature
    levels of rx times the cells' weights times ry."""

    def summed(keys: np.ndarray, values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows of `values` summed by key: (distinct keys sorted, row index of each input, sums)."""
        distinct, of = np.unique(keys, return_inverse=True)
        return distinct, of, _sum_matrix(of, distinct.size, values.dtype) @ values

    cell_key = (split_of * u_size + u_of) * t_size + t_of
    cells, _, cell_weights = summed(cell_key, group_weights)  # (cells, B), sorted by split, feature level, target level
    cell_split, cell_u, cell_t = cells // (u_size * t_size), (cells // t_size) % u_size, cells % t_size
    u_keys, u_of_cell, u_weights = summed(cell_split * u_size + cell_u, cell_weights)
    t_keys, t_of_cell, t_weights = summed(cell_split * t_size + cell_t, cell_weights)
    u_weights, t_weights = u_weights.astype(np.float64), t_weights.astype(np.float64)
    u_split, t_split = u_keys // u_size, t_keys // t_size
    rx, ry = _segment_ranks(u_weights, u_split), _segment_ranks(t_weights, t_split)
    # sum over the cells of one feature level of weight x ry, then x rx summed by split
    weighted = cell_weights.astype(np.float64) * ry[t_of_cell]
    by_u = _sum_matrix(u_of_cell, u_keys.size) @ weighted
    by_split, t_by_split = _sum_matrix(u_split, splits), _sum_matrix(t_split, splits)
    n = by_split @ u_weights
    cross = by_split @ (rx * by_u)
    sxx = by_split @ (u_weights * rx * rx)
    syy = t_by_split @ (t_weights * ry * ry)
    return _rho_from_sums(n, cross, sxx, syy)
