"""Cluster bootstrap with paired draws and percentile intervals (MisleadQA paper, Appendix C.2).

Each replicate draws as many resampling units (source clusters, or dependency groups for App. D.6) as
there are, with replacement, from numpy's Generator; an item's weight is the number of times its unit
was drawn. One (replicates x units) multiplicity matrix serves every model and condition, so all
comparisons stay paired. A rate whose weighted denominator is empty is undefined (NaN), not zero;
undefined replicates are left out of that metric's interval only, and counted.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from ctxrobust.evaluation import defaults
from ctxrobust.evaluation.resampling import draw_counts

REPLICATES = defaults.CLUSTER_BOOTSTRAP_REPLICATES  # App. C.2
SEED = defaults.CLUSTER_BOOTSTRAP_SEED  # App. C.2
PRIMARY_LEVEL = defaults.PRIMARY_LEVEL  # the two primary contrasts (§4.3)
LEVEL = defaults.LEVEL  # every other interval


def unit_index(keys: Sequence[Hashable]) -> tuple[np.ndarray, list]:
    """Each item's index into the sorted distinct unit keys, and those keys (sorted: the draw order)."""
    units = sorted(set(keys))
    position = {key: i for i, key in enumerate(units)}
    return np.fromiter((position[k] for k in keys), dtype=np.int64, count=len(keys)), units


def multiplicities(n_units: int, replicates: int, seed: int = SEED) -> np.ndarray:
    """(replicates, n_units): how many times each unit is drawn in each replicate.

    Draws: numpy.random.default_rng(seed).integers(0, n_units, size=(replicates, n_units)).
    """
    return draw_counts(np.random.default_rng(seed), n_units, replicates)


def per_unit_sums(values: np.ndarray, unit: np.ndarray, n_units: int) -> np.ndarray:
    """Sum item rows of `values` (items, ...) within each unit -> (n_units, ...)."""
    out = np.zeros((n_units,) + values.shape[1:], dtype=np.int64)
    np.add.at(out, unit, values)
    return out


def weighted_totals(weights: np.ndarray, per_unit: np.ndarray) -> np.ndarray:
    """sum_i w_i x_i for every replicate: (replicates, units) @ (units, ...) -> (replicates, ...).

    Integer-valued float64 products and sums are exact, so the result does not depend on BLAS order.
    """
    flat = per_unit.reshape(per_unit.shape[0], -1).astype(np.float64)
    return (weights.astype(np.float64) @ flat).reshape((weights.shape[0],) + per_unit.shape[1:])


def intervals_by_name(lo: np.ndarray, hi: np.ndarray, undefined: np.ndarray, names: Sequence[str], n_models: int):
    """Split interval columns laid out as, per name, one column per model then the model mean, into
    (per model: name -> (lo, hi, undefined replicates), mean: name -> the same)."""
    per_model: list[dict] = [{} for _ in range(n_models)]
    mean: dict = {}
    for k, name in enumerate(names):
        base = k * (n_models + 1)
        for m in range(n_models):
            per_model[m][name] = (lo[base + m], hi[base + m], int(undefined[base + m]))
        mean[name] = (lo[base + n_models], hi[base + n_models], int(undefined[base + n_models]))
    return per_model, mean
