"""Paired differences between models (Section 4.2 lure rates): for every pair of models whose A_m covers
enough source clusters (App. C.2), LR and RLR of A minus B with a percentile interval from the same
cluster draws every interval of the report uses, so the difference's interval is paired."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ctxrobust.evaluation import cluster_bootstrap as cb
from ctxrobust.evaluation import resampling
from ctxrobust.evaluation.misleadqa.lure_rates import count_columns, evaluation_subsets, primary_metrics
from ctxrobust.evaluation.misleadqa.options import ScoreOptions
from ctxrobust.evaluation.misleadqa.scorer import MainUnits, load_scored_items, model_metrics, read_predictions
from ctxrobust.evaluation.report import metric
from ctxrobust.options import parse_options
from ctxrobust.release import Release

METRICS = ("LR.F", "LR.S", "RLR.F", "RLR.S")
PREFIX = "difference."


def paired_differences(release: Release, predictions: Path, options: ScoreOptions | dict | None = None) -> dict:
    """{"by_pair": {A: {B: {"difference.<metric>": figure}}}} for every pair A < B of eligible models."""
    settings = parse_options(ScoreOptions, options, "misleadqa score")
    items = load_scored_items(release, settings)
    _, responses = read_predictions(predictions, items, settings.lenient_letters)
    main = items.rows("main")
    cluster, clusters = cb.unit_index([items.cluster[i] for i in main])
    group, groups = cb.unit_index([items.dependency[i] for i in main])
    units = MainUnits(cluster, clusters, group, groups, [items.group[i] for i in main])
    codes: dict[str, np.ndarray] = {}
    for model in responses.models:
        metrics, main_codes = model_metrics(model, responses, items, units, settings.min_clusters)
        if main_codes is not None and metrics["inference.eligible"]["estimate"] == 1.0:
            codes[model] = main_codes
    names = sorted(codes)
    result = {
        "metric_prefix": PREFIX,
        "resampled": "source clusters, the same draws as every interval of the report",
        "level": cb.LEVEL,
        "by_pair": {},
    }
    if len(names) < 2:
        return result
    counts = np.stack([count_columns(c, *evaluation_subsets(c)) for c in (codes[n] for n in names)], axis=1)  # (items, M, K)
    point = primary_metrics(counts.sum(axis=0, dtype=np.int64)[None].astype(np.float64))  # name -> (1, M)
    reps = None
    if settings.replicates:
        weights = cb.multiplicities(len(clusters), settings.replicates, settings.seed)
        reps = primary_metrics(cb.weighted_totals(weights, cb.per_unit_sums(counts, cluster, len(clusters))))  # name -> (R, M)
    sizes = {"B": counts[..., 0].sum(axis=0), "A": counts[..., 1].sum(axis=0)}  # LR on B_m, RLR on A_m (§4.2)
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            figures = {}
            for name in METRICS:
                estimate = float(point[name][0, i] - point[name][0, j])
                interval = None
                if reps is not None:
                    low, high, _ = resampling.percentile_intervals((reps[name][:, i] - reps[name][:, j])[:, None], np.array([cb.LEVEL]))
                    interval = (low[0], high[0])
                size = sizes["A" if name.startswith("RLR") else "B"]
                figures[PREFIX + name] = metric(estimate, interval, int(min(size[i], size[j])))
            result["by_pair"].setdefault(a, {})[names[j]] = figures
    return result
