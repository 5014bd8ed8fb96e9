"""Scope recognition (paper §6.1, App. D.4, Tables 19-20, Figure 3): each model's judgment of whether G,
S and F apply to the question's target scope, and its lure rate with S alone on the judged items it
answers correctly without context, overall and by the label it gave S.

The correct label is Applicable for G and F and Not applicable for S; Cannot determine and invalid
responses count as incorrect and stay in the denominator (App. D.4). H_m is the judged items in B_m.
"""

from __future__ import annotations

import numpy as np

from ctxrobust.evaluation.misleadqa.lure_rates import LURE, ratio
from ctxrobust.evaluation.misleadqa.responses import SCOPE_CONTEXTS

LABELS = ("A", "N", "C", "invalid")  # Applicable, Not applicable, Cannot determine (Table 19), and invalid
CORRECT = {"G": "A", "S": "N", "F": "A"}  # §6.1

# Table 19 and §6.1: over the judged items
JUDGED_COLUMNS = ("judged",) + tuple(f"{c}.{lab}" for c in SCOPE_CONTEXTS for lab in LABELS)
# Table 20: over H_m
LINKED_COLUMNS = ("H", "H.lure") + tuple(f"H.{lab}{part}" for lab in LABELS for part in ("", ".lure"))


def label_column(codes: np.ndarray) -> np.ndarray:
    """Label index 0-2 -> itself; invalid or missing -> 3 ("invalid")."""
    return np.where(codes >= 0, codes, LABELS.index("invalid"))


def judged_columns(labels: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """(items, len(JUDGED_COLUMNS)); labels: (items, 3) codes for G, S, F; sample: the judged items."""
    labels = label_column(labels)
    columns = {"judged": sample}
    for k, c in enumerate(SCOPE_CONTEXTS):
        for j, lab in enumerate(LABELS):
            columns[f"{c}.{lab}"] = sample & (labels[:, k] == j)
    return np.stack([np.asarray(columns[name], dtype=np.int64) for name in JUDGED_COLUMNS], axis=-1)


def linked_columns(labels: np.ndarray, sample: np.ndarray, b: np.ndarray, codes_s: np.ndarray) -> np.ndarray:
    """(items, len(LINKED_COLUMNS)); b: the model's B_m; codes_s: its outcome with S alone (original run)."""
    s_label = label_column(labels[:, SCOPE_CONTEXTS.index("S")])
    h = sample & b
    lure = h & (codes_s == LURE)
    columns = {"H": h, "H.lure": lure}
    for j, lab in enumerate(LABELS):
        columns[f"H.{lab}"] = h & (s_label == j)
        columns[f"H.{lab}.lure"] = lure & (s_label == j)
    return np.stack([np.asarray(columns[name], dtype=np.int64) for name in LINKED_COLUMNS], axis=-1)


JUDGED_FIGURES = tuple(f"scope.{c}.correct" for c in SCOPE_CONTEXTS)
LINKED_FIGURES = ("scope.H.lure.all",) + tuple(f"scope.H.lure.{lab}" for lab in LABELS[:3])
LINKED_CI = ("scope.H.lure.all", "scope.H.lure.A", "scope.H.lure.N")  # §6.1 gives the interval of N; C is mostly empty


def judged_figures(t: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """§6.1: the share of judged items given the correct label, per context."""
    return {f"scope.{c}.correct": ratio(t[f"{c}.{CORRECT[c]}"], t["judged"]) for c in SCOPE_CONTEXTS}


def linked_figures(t: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """App. D.4, Table 20: lure rate with S alone on H_m, and on its items with each S label (undefined when empty)."""
    out = {"scope.H.lure.all": ratio(t["H.lure"], t["H"])}
    for lab in LABELS[:3]:
        out[f"scope.H.lure.{lab}"] = ratio(t[f"H.{lab}.lure"], t[f"H.{lab}"])
    return out


def judged_denominator(name: str) -> str:
    return "judged"


def linked_denominator(name: str) -> str:
    label = name.rsplit(".", 1)[1]
    return "H" if label == "all" else f"H.{label}"
