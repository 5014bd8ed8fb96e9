"""Degenerate per-model figures: null with the reason, never a bare null or a meaningless number.

Correlations across questions (split-half r, Spearman-Brown rho, the uncertainty and ambiguity
correlates of Table 3, their Appendix F ceilings) need at least three questions: with two, any
correlation is +-1 whatever the data. A figure the statistics leave undefined (a constant feature or
target, no change at all for the tail share) gets a note saying which.
"""

from __future__ import annotations

from ctxrobust.evaluation.report import metric

MIN_QUESTIONS = 3
CORRELATIONS = ("split_half.", "uncertainty_rho.", "ambiguity_rho.")

REASONS = (  # (name prefix, reason), first match wins
    ("tail_share", "undefined: no question's accuracy changed with context (the total absolute change is 0)"),
    ("split_half.spearman_brown", "undefined: the split-half r is undefined or -1, and rho = 2r / (1 + r) needs r > -1"),
    (
        "split_half.r",
        "undefined: the half-sample changes d1, d2 do not vary across questions in any split, so there is nothing to correlate",
    ),
    (
        "uncertainty_rho.",
        "undefined: the baseline uncertainty or the target is the same for every question (e.g. every question always right, or "
        "always wrong, without context), so there is no ranking to correlate",
    ),
    (("pearson.mean", "jaccard."), "undefined: no pair of models has a defined value here (see each pair's note)"),
    ("ambiguity_rho.", "undefined: the ambiguity level or the target is the same for every question, so there is no ranking to correlate"),
)


def reason(name: str) -> str:
    for prefix, text in REASONS:
        if name.startswith(prefix):
            return text
    return "undefined for these data"


def explain(metrics: dict[str, dict], n: int) -> dict[str, dict]:
    """The metrics with every correlation nulled below MIN_QUESTIONS and every null given a note."""
    out = {}
    for name, figure in metrics.items():
        if n < MIN_QUESTIONS and name.startswith(CORRELATIONS) and figure.get("estimate") is not None:
            figure = {
                **metric(None, None, n),
                "note": f"undefined: a correlation across questions needs at least {MIN_QUESTIONS} questions; this model has {n}",
            }
        elif figure.get("estimate") is None and "note" not in figure:
            figure = {**figure, "ci": None, "note": reason(name)}
        out[name] = figure
    return out
