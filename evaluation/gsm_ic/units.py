"""Units of the GSM-IC figures (Section 3.2): accuracies and the invalid share are fractions,
normalised accuracies ratios to the base accuracy."""

from __future__ import annotations

from ctxrobust.evaluation.report import FRACTION, RATIO


def unit_of(name: str) -> str:
    return RATIO if "normalised." in name else FRACTION


# the leaderboard of several submissions (Section 3.2): accuracies, higher is better; paired differences by base problem
LEADERBOARD = {
    "headline": [("micro", "higher"), ("macro", "higher"), ("4k.micro", "higher"), ("4k.macro", "higher"), ("accuracy.base", "higher")],
    "invalid": ["invalid", "4k.invalid"],
    "shared_draws": True,  # one resampling of units for every model
    "differences": "ctxrobust.evaluation.gsm_ic.differences:paired_differences",
}
