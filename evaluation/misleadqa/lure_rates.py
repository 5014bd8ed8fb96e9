"""Outcomes, evaluation subsets B_m / A_m, lure rates, residual lure rates, order effects and contrasts.

Pure numpy. Paper: MisleadQA §4.1 (outcomes), §4.2 (subsets, LR, RLR, order effect), §4.3 (contrasts),
Appendix D.1 (outcome distributions), D.5 (common subsets), D.6 (reductions).
"""

from __future__ import annotations

import numpy as np

from ctxrobust.evaluation.misleadqa.responses import CONDITIONS

OUTCOMES = ("gold", "lure", "abstain", "other", "invalid")
GOLD, LURE, ABSTAIN, OTHER, INVALID = range(5)
ABSTAIN_LETTER = 4  # option E, "Insufficient information"
C = {name: i for i, name in enumerate(CONDITIONS)}  # condition -> column

# Per-item indicator columns whose sums (over items, or weighted over resampled clusters) give every
# primary rate; "X.B" is restricted to B_m, "X.A" to A_m.
COUNTS = (
    "B",
    "A",
    "gold.S.B",
    "lure.S.B",
    "lure.F.B",
    "lure.S.A",
    "lure.F.A",
    "lure.G+S.A",
    "lure.S+G.A",
    "lure.G+F.A",
    "lure.F+G.A",
    "paired.G_first",
    "paired.G_first.lure",
    "paired.misleading_first",
    "paired.misleading_first.lure",
)
# App. D.2 (Table 16): per order, the items of A_m answered correctly with S and G in that order, and
# the outcome there when F replaces S in the same position
PAIRED = {"G_first": ("G+S", "G+F"), "misleading_first": ("S+G", "F+G")}
K = {name: i for i, name in enumerate(COUNTS)}

# Metric -> the subset its denominator counts (reported as "n").
PRIMARY = {
    "gold.S": "B",
    "LR.S": "B",
    "LR.F": "B",
    "delta.LR": "B",
    "RLR.S": "A",
    "RLR.F": "A",
    "delta.RLR": "A",
    "reduction.S": "A",
    "reduction.F": "A",
    "order_effect.S": "A",
    "order_effect.F": "A",
    "delta.RLR.G_first": "A",
    "delta.RLR.misleading_first": "A",
    "paired.lure.G_first": "paired.G_first",
    "paired.lure.misleading_first": "paired.misleading_first",
}


def outcomes(letters: np.ndarray, gold: np.ndarray, lure: np.ndarray) -> np.ndarray:
    """§4.1: gold (y*), lure (l), abstain (E), other (a distractor), invalid (no single letter A-E).

    letters: option indices 0-4, negative for invalid or missing; gold, lure broadcast against it.
    """
    codes = np.where(letters == gold, GOLD, np.where(letters == lure, LURE, np.where(letters == ABSTAIN_LETTER, ABSTAIN, OTHER)))
    return np.where(letters < 0, INVALID, codes).astype(np.int8)


def evaluation_subsets(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """§4.2: B_m = items answered correctly without context; A_m = those of B_m also correct with G alone."""
    b = codes[:, C["none"]] == GOLD
    a = b & (codes[:, C["G"]] == GOLD)
    return b, a


def distribution(codes: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, int]:
    """App. D.1: share of each outcome on the items in `mask` (fractions summing to one), and |mask|.

    codes: (items,) for one condition, or (items, k) for k orders averaged within the model ("S with G").
    """
    chosen = codes[mask]
    n = int(mask.sum())
    if n == 0:
        return np.full(len(OUTCOMES), np.nan), 0
    counts = np.bincount(chosen.ravel(), minlength=len(OUTCOMES))
    return counts / chosen.size, n


def count_columns(codes: np.ndarray, b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """(items, len(COUNTS)) 0/1 matrix: membership of B_m, A_m and the lure / gold indicators within them."""
    lure = codes == LURE
    columns = {
        "B": b,
        "A": a,
        "gold.S.B": b & (codes[:, C["S"]] == GOLD),
        "lure.S.B": b & lure[:, C["S"]],
        "lure.F.B": b & lure[:, C["F"]],
        "lure.S.A": a & lure[:, C["S"]],
        "lure.F.A": a & lure[:, C["F"]],
        "lure.G+S.A": a & lure[:, C["G+S"]],
        "lure.S+G.A": a & lure[:, C["S+G"]],
        "lure.G+F.A": a & lure[:, C["G+F"]],
        "lure.F+G.A": a & lure[:, C["F+G"]],
    }
    for name, (with_s, with_f) in PAIRED.items():
        kept = a & (codes[:, C[with_s]] == GOLD)
        columns[f"paired.{name}"] = kept
        columns[f"paired.{name}.lure"] = kept & lure[:, C[with_f]]
    return np.stack([columns[name] for name in COUNTS], axis=-1).astype(np.int32)


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den; undefined (NaN), not zero, where the denominator is empty (App. C.2)."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    return np.divide(num, den, out=np.full(num.shape, np.nan), where=den > 0)


def primary_metrics(totals: np.ndarray) -> dict[str, np.ndarray]:
    """Every PRIMARY metric from summed COUNTS (last axis); any leading shape (replicates, models).

    With plain sums these are the point estimates; with cluster-weighted sums, the bootstrap replicates
    of App. C.2 (the same formula, so estimates and replicates cannot drift apart).
    """
    t = {name: totals[..., i] for name, i in K.items()}
    b, a = t["B"], t["A"]
    order = {o: ratio(t[f"lure.{o}.A"], a) for o in ("G+S", "S+G", "G+F", "F+G")}  # §4.2, each order on A_m
    m = {
        "gold.S": ratio(t["gold.S.B"], b),
        "LR.S": ratio(t["lure.S.B"], b),  # §4.2 LR_{m,t} on B_m
        "LR.F": ratio(t["lure.F.B"], b),
        "RLR.S": ratio(t["lure.G+S.A"] + t["lure.S+G.A"], 2 * a),  # §4.2 RLR_{m,t}: both orders on A_m
        "RLR.F": ratio(t["lure.G+F.A"] + t["lure.F+G.A"], 2 * a),
    }
    m["delta.LR"] = m["LR.F"] - m["LR.S"]  # §4.3 Delta_K, per model (the mean is taken over models)
    m["delta.RLR"] = m["RLR.F"] - m["RLR.S"]
    m["reduction.S"] = ratio(t["lure.S.A"], a) - m["RLR.S"]  # §5.2 / Table 26: alone on A_m minus RLR
    m["reduction.F"] = ratio(t["lure.F.A"], a) - m["RLR.F"]
    m["order_effect.S"] = order["S+G"] - order["G+S"]  # §4.2: misleading-first minus G-first
    m["order_effect.F"] = order["F+G"] - order["G+F"]
    m["delta.RLR.G_first"] = order["G+F"] - order["G+S"]  # §5.2: F-S gap per order
    m["delta.RLR.misleading_first"] = order["F+G"] - order["S+G"]
    for name in PAIRED:  # App. D.2: lure rate with F on the items kept by the S-and-G pairing
        m[f"paired.lure.{name}"] = ratio(t[f"paired.{name}.lure"], t[f"paired.{name}"])
    return m


def common_subset(a: np.ndarray, codes_cf: np.ndarray) -> np.ndarray:
    """App. D.5: A_m^common = items of A_m also answered correctly with G alone under the CF prompt."""
    return a & (codes_cf[:, C["G"]] == GOLD)
