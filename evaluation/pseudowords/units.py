"""Units of the pseudowords figures (Section 2, App. A, D, F): accuracies and INS are fractions,
delta and WTD differences of fractions, r and rho correlations, overlaps Jaccard indices."""

from __future__ import annotations

from ctxrobust.evaluation.report import CORRELATION, DIFFERENCE, FRACTION, INDEX


def unit_of(name: str) -> str:
    if name.startswith("jaccard"):
        return INDEX
    if name.startswith(("pearson", "split_half.", "uncertainty_rho.")):
        return CORRELATION
    if name == "attenuation":  # sqrt(rho_i rho_j), the bound on a pair's correlation (Appendix D)
        return CORRELATION
    if name == "delta" or name.startswith(("WTD", "noise_floor.WTD")):
        return DIFFERENCE
    return FRACTION
