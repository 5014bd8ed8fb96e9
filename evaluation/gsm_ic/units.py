"""Units of the GSM-IC figures (Section 3.2): accuracies and the invalid share are fractions,
normalised accuracies ratios to the base accuracy."""

from __future__ import annotations

from ctxrobust.evaluation.report import FRACTION, RATIO


def unit_of(name: str) -> str:
    return RATIO if "normalised." in name else FRACTION
