"""Paired differences between models (Section 3.2 metrics): for every pair of models, micro and macro
accuracy of A minus B, with a percentile interval from the same base-problem resamples the report's
intervals use (one multiplicity matrix for every model), so the difference's interval is paired."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ctxrobust.evaluation import cluster_bootstrap, resampling
from ctxrobust.evaluation.gsm_ic import accuracy
from ctxrobust.evaluation.gsm_ic.options import ScoreOptions
from ctxrobust.evaluation.gsm_ic.scorer import LEVEL, count_samples, load_items, model_ratios, read_votes, vote
from ctxrobust.evaluation.report import metric
from ctxrobust.evaluation.rows import read_requests
from ctxrobust.options import parse_options
from ctxrobust.release import Release

METRICS = ("micro", "macro", "4k.micro", "4k.macro")  # Section 3.2 headline accuracies, all variants and GSM-IC-4K
PREFIX = "difference."


def paired_differences(release: Release, predictions: Path, options: ScoreOptions | dict | None = None) -> dict:
    """{"by_pair": {A: {B: {"difference.<metric>": figure}}}} for every ordered pair A < B of model names."""
    options = parse_options(ScoreOptions, options, "gsm-ic score")
    items = load_items(release)
    if options.requests is not None:
        items.restrict(read_requests(options.requests, "gsm-ic", known=items.index.__contains__, limit=len(items.ids)))
    votes, reader = read_votes(predictions, items)
    names, group, samples = count_samples(votes, items)
    out = vote(votes, items, names, group, samples, options.seed)
    weights = cluster_bootstrap.multiplicities(items.n_base, options.replicates, options.seed) if options.replicates else None
    ratios = {}
    for m, name in enumerate(names):
        own, _ = model_ratios(items, out, m)
        ratios[name] = {r.name: r for r in own if r.name in METRICS}
    by_pair: dict = {}
    ordered = sorted(names)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            shared = [name for name in METRICS if name in ratios[a] and name in ratios[b]]
            figures = {}
            for name in shared:
                ra, rb = ratios[a][name], ratios[b][name]
                ea, eb = accuracy.ratio(ra.num, ra.den), accuracy.ratio(rb.num, rb.den)
                estimate = None if ea is None or eb is None else ea - eb
                interval = None
                if weights is not None:
                    reps = accuracy.ratio_replicates(weights, np.stack([ra.num, rb.num], 1), np.stack([ra.den, rb.den], 1))
                    low, high, _ = resampling.percentile_intervals((reps[:, 0] - reps[:, 1])[:, None], np.array([LEVEL]))
                    interval = (low[0], high[0])
                figures[PREFIX + name] = metric(estimate, interval, items.n_base)
            if figures:
                by_pair.setdefault(a, {})[b] = figures
    return {
        "metric_prefix": PREFIX,
        "resampled": "base problems, the same draws as every interval of the report",
        "level": LEVEL,
        "by_pair": by_pair,
    }
