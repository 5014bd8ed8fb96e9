"""The option-order check (paper §6.3, App. D.6, Table 4): the same items under several orders of options
A-D, E fixed, and lure rates on the items answered correctly without context under every order.

An option order is written as the release letters shown at positions A-D: "ABCD" is the release's own
order, "BCDA" shows the text of release option B at A, C at B, D at C and A at D. The gold and lure keys
follow their texts. `prompts --option-orders K` writes the paper's orders, the cyclic rotations
(a,b,c,d), (b,c,d,a), (c,d,a,b), ... (App. D.6), the first K of them; every answer is mapped back to
the release's letters before it is scored.
"""

from __future__ import annotations

import numpy as np

from ctxrobust.evaluation.misleadqa.lure_rates import GOLD, LURE, C, ratio
from ctxrobust.evaluation.misleadqa.responses import LETTERS, ORIGINAL_ORDER, ReleaseItem

MAX_ORDERS = len(ORIGINAL_ORDER)  # the distinct cyclic rotations of A-D


def rotations(k: int) -> list[str]:
    """App. D.6: the first k cyclic rotations of A-D, the release order first."""
    return [ORIGINAL_ORDER[r:] + ORIGINAL_ORDER[:r] for r in range(k)]


def shown_item(item: ReleaseItem, order: str) -> ReleaseItem:
    """The item as shown under `order`: option texts moved, E kept, gold and lure following their texts."""
    options = {LETTERS[j]: item.options[order[j]] for j in range(len(order))}
    options["E"] = item.options["E"]
    return item.model_copy(update={"options": options, "gold": LETTERS[order.index(item.gold)], "lure": LETTERS[order.index(item.lure)]})


def to_release_letters(letters: np.ndarray, order: str) -> np.ndarray:
    """Shown option indices (0-4, negative for invalid or missing) -> the release's indices under `order`."""
    back = np.array([LETTERS.index(letter) for letter in order] + [LETTERS.index("E")], dtype=np.int8)
    return np.where(letters >= 0, back[np.clip(letters, 0, 4)], letters).astype(np.int8)


def sort_orders(orders) -> list[str]:
    """The release order first, then the others alphabetically (the order Table 4's rows use)."""
    return sorted(orders, key=lambda order: (order != ORIGINAL_ORDER, order))


# ------------------------------------------------------------------------------------- Table 4 figures
COLUMNS = (
    "B0",  # B_m^(0): the sample's items answered correctly without context under the release order
    "stable",  # B_m^stable: answered correctly without context under every order (App. D.6)
    "stable.K",  # |orders| on each stable item: the denominator of the mean over orders
    "lure.S.B0",
    "lure.F.B0",
    "lure.S.stable.original",
    "lure.F.stable.original",
    "lure.S.stable.all",  # lure answers summed over the orders
    "lure.F.stable.all",
)
ROWS = {  # Table 4: (selection order, measurement order) -> figure prefix
    ("Original", "Original"): "option_order.original",
    ("All orders", "Original"): "option_order.stable.original",
    ("All orders", "Mean of orders"): "option_order.stable.mean",
}
DENOMINATOR = {"option_order.original": "B0", "option_order.stable.original": "stable", "option_order.stable.mean": "stable"}
FIGURES = tuple(f"{row}.{k}" for row in ROWS.values() for k in ("LR.S", "LR.F", "delta.LR")) + ("option_order.kept",)
GROUP_FIGURES = tuple(f"{row}.delta.LR" for row in ROWS.values())  # §6.3 reports the dependency-group interval of F-S


def count_columns(codes_by_order: dict[str, np.ndarray], sample: np.ndarray) -> np.ndarray:
    """(items, len(COLUMNS)) counts for one model; codes_by_order: order -> (items, conditions) outcome codes."""
    orders = sort_orders(codes_by_order)
    original = codes_by_order[ORIGINAL_ORDER]
    b0 = sample & (original[:, C["none"]] == GOLD)
    stable = sample.copy()
    for order in orders:
        stable &= codes_by_order[order][:, C["none"]] == GOLD  # App. D.6: B_m^stable, the intersection over orders
    columns = {"B0": b0, "stable": stable, "stable.K": stable * len(orders)}
    for t in ("S", "F"):
        columns[f"lure.{t}.B0"] = b0 & (original[:, C[t]] == LURE)
        columns[f"lure.{t}.stable.original"] = stable & (original[:, C[t]] == LURE)
        columns[f"lure.{t}.stable.all"] = stable * sum((codes_by_order[o][:, C[t]] == LURE).astype(np.int64) for o in orders)
    return np.stack([np.asarray(columns[name], dtype=np.int64) for name in COLUMNS], axis=-1)


def figures(t: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Table 4 from summed COLUMNS (any leading shape): LR with S and F alone and F-S per row (§4.2 on the
    row's subset); the mean over orders is the mean of the per-order rates, which share one denominator."""
    out = {"option_order.kept": ratio(t["stable"], t["B0"])}  # App. D.6: share of B_m^(0) kept
    for prefix, (lure, den) in {
        "option_order.original": ("B0", "B0"),
        "option_order.stable.original": ("stable.original", "stable"),
        "option_order.stable.mean": ("stable.all", "stable.K"),
    }.items():
        for tc in ("S", "F"):
            out[f"{prefix}.LR.{tc}"] = ratio(t[f"lure.{tc}.{lure}"], t[den])
        out[f"{prefix}.delta.LR"] = out[f"{prefix}.LR.F"] - out[f"{prefix}.LR.S"]
    return out


def denominator(name: str) -> str:
    if name == "option_order.kept":
        return "B0"
    return next(DENOMINATOR[prefix] for prefix in DENOMINATOR if name.startswith(prefix + "."))
