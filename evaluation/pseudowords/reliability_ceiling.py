"""Reliability ceiling of the split-sample correlates (Appendix F, "Reliability ceiling").

Disjoint trials remove the shared-noise bias of Table 3's split-sample correlates but not the
attenuation from estimating feature and target from finitely many trials. With rel_F and rel_T the
reliabilities of the feature and of the target, "estimated by correlating replicate estimates
constructed from disjoint trials", rho_ceiling = sqrt(rel_F rel_T) is the attenuation ceiling of a
Pearson correlation under classical independent measurement error, used as an approximate ceiling
of the reported Spearman rho.

The replicate estimates, per split of the Appendix F folds (baseline F, B1, B2; context C1, C2):

- feature u = s(1 - s) from one baseline fold: the folds F, B1 and B2 each give one (each about
  n_b / 3 trials, the size the feature is estimated from); rel_F is the mean Pearson r of the three
  pairs across questions;
- signed target: d1 = mean(C1) - mean(B1) and d2 = mean(C2) - mean(B2) (Eqs. 1, 4); rel_T = r(d1, d2);
- squared target: d1^2 and d2^2, each an estimate of Delta_i^2 from its own half; rel_T = r(d1^2, d2^2);
- log-odds scale: the same with g(k, n) = log((k + 1/2) / (n - k + 1/2)) differences; the feature
  is u on both scales, as in the correlates.

Reliabilities are Pearson r (the classical test-retest reliability the formula assumes), averaged
over the splits; no Spearman-Brown step is applied. A ceiling is undefined (null, with the reason)
where a reliability is not positive. The paper gives no interval for it, and none is reported.
"""

from __future__ import annotations

import numpy as np

from ctxrobust.evaluation.pseudowords.cross_model import empirical_logit, mean_defined, uncertainty
from ctxrobust.evaluation.report import metric

TARGETS = ("signed", "squared")
SCALES = ("probability", "log_odds")
NOT_FOLDABLE = "undefined: the Appendix F folds need at least 3 baseline and 2 context trials for every question"


def row_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of two (S, N) arrays: (S,), NaN where a row is constant."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    vx, vy = (dx * dx).sum(axis=-1), (dy * dy).sum(axis=-1)
    scale = np.maximum((x * x).sum(axis=-1), 1e-300) * np.maximum((y * y).sum(axis=-1), 1e-300)
    defined = (vx * vy > 1e-24 * scale) & (vx > 0) & (vy > 0)
    r = np.full(vx.shape, np.nan)
    np.divide((dx * dy).sum(axis=-1), np.sqrt(np.where(defined, vx * vy, 1.0)), out=r, where=defined)
    return np.clip(r, -1.0, 1.0)


def feature_reliability(folds) -> float:
    """rel_F: mean over splits of the mean Pearson r of u between the pairs of baseline folds (F, B1, B2)."""
    u = [uncertainty(part.k / part.n) for part in (folds.f, folds.b1, folds.b2)]
    pairs = np.stack([row_pearson(u[a], u[b]) for a, b in ((0, 1), (0, 2), (1, 2))], axis=1)  # (S, 3)
    return float(mean_defined(mean_defined(pairs)))


def half_changes(folds, scale: str) -> tuple[np.ndarray, np.ndarray]:
    """d1, d2 (S, N): the change on each half, in probability or empirical-logit differences."""
    if scale == "probability":
        return folds.c1.mean - folds.b1.mean, folds.c2.mean - folds.b2.mean
    g = {name: empirical_logit(part.k, part.n) for name, part in (("b1", folds.b1), ("b2", folds.b2), ("c1", folds.c1), ("c2", folds.c2))}
    return g["c1"] - g["b1"], g["c2"] - g["b2"]


def target_reliability(folds, target: str, scale: str) -> float:
    """rel_T: mean over splits of Pearson r(d1, d2) (signed) or r(d1^2, d2^2) (squared)."""
    d1, d2 = half_changes(folds, scale)
    if target == "squared":
        d1, d2 = d1 * d1, d2 * d2
    return float(mean_defined(row_pearson(d1, d2)))


def ceiling(rel_f: float, rel_t: float) -> tuple[float | None, str | None]:
    """rho_ceiling = sqrt(rel_F rel_T) (Appendix F); None and the reason where a reliability is not positive."""
    for name, value in (("feature", rel_f), ("target", rel_t)):
        if not np.isfinite(value):
            return None, f"undefined: the {name} reliability is undefined (its replicate estimates do not vary across questions)"
        if value <= 0:
            return None, f"undefined: the {name} reliability is {value:.3f}, not positive, so there is no attenuation ceiling"
    return float(np.sqrt(rel_f * rel_t)), None


def figures(folds, n: int) -> dict[str, dict]:
    """`uncertainty_rho.<target>.split.<scale>.ceiling` for both targets and scales, each with its two
    reliabilities (`reliability_feature`, `reliability_target`); null with the reason where undefined."""
    names = [f"uncertainty_rho.{t}.split.{s}.ceiling" for t in TARGETS for s in SCALES]
    if folds is None:
        return {name: {**metric(None, None, n), "note": NOT_FOLDABLE} for name in names}
    rel_f = feature_reliability(folds)
    out = {}
    for target in TARGETS:
        for scale in SCALES:
            rel_t = target_reliability(folds, target, scale)
            value, reason = ceiling(rel_f, rel_t)
            entry = {**metric(value, None, n), "reliability_feature": _finite(rel_f), "reliability_target": _finite(rel_t)}
            if reason:
                entry["note"] = reason
            out[f"uncertainty_rho.{target}.split.{scale}.ceiling"] = entry
    return out


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
