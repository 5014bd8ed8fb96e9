"""The analyses on the diagnostic sample, scored from their own predictions rows: the option-order check
(§6.3, App. D.6, Table 4) and scope recognition (§6.1, App. D.4, Tables 19-20, Figure 3).

Per model and as equal-weight means over the models that have the rows (a model left out of the main
means by App. C.2's cluster rule stays out of these too). Intervals: 95% cluster bootstrap over the
source clusters of the sample's items (App. C.2 "Other resampling units"), the same draws for every
model; Table 4's F-S rows also over the sample's dependency groups (§6.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ctxrobust.evaluation import cluster_bootstrap as cb
from ctxrobust.evaluation import report as rp
from ctxrobust.evaluation.misleadqa import option_orders as oo
from ctxrobust.evaluation.misleadqa import scope_judgments as sj
from ctxrobust.evaluation.misleadqa.diagnostic_stats import Figures, intervals, mean_points, points
from ctxrobust.evaluation.misleadqa.lure_rates import GOLD, C, outcomes
from ctxrobust.evaluation.misleadqa.responses import MISSING, ORDER_CONDITIONS, ORIGINAL_ORDER

ORDER_FIGURES = Figures(oo.COLUMNS, oo.figures, oo.denominator)
JUDGED = Figures(sj.JUDGED_COLUMNS, sj.judged_figures, sj.judged_denominator)
LINKED = Figures(sj.LINKED_COLUMNS, sj.linked_figures, sj.linked_denominator)
GROUP_PREFIX = "dependency_groups."


@dataclass
class Diagnostics:
    per_model: dict[str, dict]  # model -> metrics to add
    summary: dict  # summary metrics to add
    orders: dict[str, list[str]] = field(default_factory=dict)  # model -> the option orders of its Table 4 figures
    means: dict[tuple[str, ...], list[str]] = field(default_factory=dict)  # figure names -> the models their means average

    def without(self, excluded: set[str]) -> dict:
        """Table 4 and Table 20 means without the excluded models ("w/o" rows, §6.3), point estimates only."""
        out = {}
        for names, models in self.means.items():
            kept = [m for m in models if m not in excluded]
            if kept:
                out.update(mean_points([self.per_model[m] for m in kept], names))
        return out


def _count(value: int, n: int | None = None) -> dict:
    return rp.metric(int(value), None, n)


def _units(items, rows: np.ndarray) -> tuple[np.ndarray, int, np.ndarray, int]:
    """Cluster and dependency-group indices of the sample's items (App. C.2, D.6)."""
    cluster, clusters = cb.unit_index([items.cluster[i] for i in rows])
    group, groups = cb.unit_index([items.dependency[i] for i in rows])
    return cluster, len(clusters), group, len(groups)


def _estimate(
    figures: Figures,
    counts: dict[str, np.ndarray],
    in_means: list[str],
    sample: np.ndarray,
    items,
    names: tuple[str, ...],
    with_ci: tuple[str, ...],
    group_ci: tuple[str, ...],
    settings,
    out: Diagnostics,
    size_name: str,
) -> None:
    """Points for every model with counts; means, intervals over the models in the means."""
    for model, table in counts.items():
        out.per_model[model].update(points(figures, table, names))
    means = mean_points([points(figures, counts[m], names) for m in in_means], names)
    out.summary.update(means)
    out.means[names] = list(in_means)
    rows = np.flatnonzero(sample)
    cluster, n_clusters, group, n_groups = _units(items, rows)
    out.summary[f"{size_name}.size.items"] = _count(rows.size)
    out.summary[f"bootstrap.units.{size_name}.clusters"] = _count(n_clusters)
    out.summary[f"bootstrap.units.{size_name}.dependency_groups"] = _count(n_groups)
    if not settings.replicates or not in_means or not rows.size:
        return
    for prefix, unit, n_units, chosen in (("", cluster, n_clusters, with_ci), (GROUP_PREFIX, group, n_groups, group_ci)):
        if not chosen:
            continue
        per_model, mean = intervals(figures, [counts[m][rows] for m in in_means], unit, n_units, chosen, settings.replicates, settings.seed)
        for model, found in zip(in_means, per_model):
            _attach(out.per_model[model], found, prefix, settings.replicates)
        _attach(out.summary, mean, prefix, settings.replicates)


def _attach(metrics: dict, found: dict, prefix: str, replicates: int) -> None:
    for name, (lo, hi, undefined) in found.items():
        base = metrics[name]
        metrics[prefix + name] = rp.metric(base["estimate"], (lo, hi), base["n"])
        metrics[f"bootstrap.undefined.{prefix}{name}"] = rp.metric(undefined, None, replicates)


def order_sample(responses, model: str) -> np.ndarray:
    """The items of the model's option-order run: those with a row under any of its orders."""
    found = np.zeros(responses.n_items, dtype=bool)
    for order in responses.orders_of(model):
        found |= (responses.orders[(model, order)] != MISSING).any(axis=1)
    return found


def scope_sample(responses, model: str) -> np.ndarray:
    """The items the model judged: those with a scope row for any context."""
    return (responses.scope[model] != MISSING).any(axis=1)


def main_agreement(main: np.ndarray | None, rerun: np.ndarray, sample: np.ndarray) -> dict | None:
    """§6.3 "Under the original order, the new responses match the main evaluation exactly": the share of
    the sample's (item, condition) pairs, none / S / F, whose release-order answer equals the main run's,
    over the pairs with a valid letter in both (two invalid answers are not an agreement); None without
    main-run answers there."""
    if main is None:
        return None
    columns = [C[c] for c in ORDER_CONDITIONS]
    a, b = main[sample][:, columns], rerun[sample][:, columns]
    answered = (a != MISSING) & (b != MISSING)
    if not answered.any():
        return None
    both = answered & (a >= 0) & (b >= 0)
    if not both.any():
        return {**rp.metric(None, None, 0), "note": "undefined: no pair has a valid letter in both runs"}
    return rp.metric(float(((a == b) & both).sum() / both.sum()), None, int(both.sum()))


def score_diagnostics(responses, items, outside: set[str], settings) -> Diagnostics:
    """Table 4 and Tables 19-20 figures; `outside`: models left out of the main means (App. C.2)."""
    gold = np.asarray(items.gold, dtype=np.int8)[:, None]
    lure = np.asarray(items.lure, dtype=np.int8)[:, None]
    out = Diagnostics({m: {} for m in responses.models}, {})

    # §6.3, App. D.6, Table 4
    counts: dict[str, np.ndarray] = {}
    union = np.zeros(len(items.ids), dtype=bool)
    for model in responses.models:
        orders = responses.orders_of(model)
        if ORIGINAL_ORDER not in orders:
            continue  # reported as a problem: Table 4 measures under the release order
        sample = order_sample(responses, model)
        codes = {order: outcomes(responses.orders[(model, order)], gold, lure) for order in orders}
        counts[model] = oo.count_columns(codes, sample)
        summed = counts[model].sum(axis=0)
        col = {name: int(summed[k]) for k, name in enumerate(oo.COLUMNS)}
        out.per_model[model].update(
            {
                "option_order.orders": _count(len(orders)),
                "option_order.size.items": _count(int(sample.sum())),
                "option_order.size.B0": _count(col["B0"], int(sample.sum())),
                "option_order.size.stable": _count(col["stable"], col["B0"]),
            }
        )
        out.orders[model] = orders
        agreement = main_agreement(responses.letters.get((model, "original")), responses.orders[(model, ORIGINAL_ORDER)], sample)
        if agreement is not None:
            out.per_model[model]["option_order.main_agreement"] = agreement
    in_means = [m for m in sorted(counts) if m not in outside]
    for model in in_means:
        union |= order_sample(responses, model)
    if counts:
        _estimate(
            ORDER_FIGURES, counts, in_means, union, items, oo.FIGURES, oo.FIGURES, oo.GROUP_FIGURES, settings, out, "option_order.sample"
        )
        out.summary["option_order.models"] = _count(len(in_means), len(counts))
        agreements = [
            out.per_model[m]["option_order.main_agreement"]["estimate"]
            for m in in_means
            if "option_order.main_agreement" in out.per_model[m]
        ]
        if agreements:
            defined = all(v is not None for v in agreements)
            out.summary["option_order.main_agreement"] = rp.metric(float(np.mean(agreements)) if defined else None, None, len(agreements))

    # §6.1, App. D.4, Table 19: labels of the judged items
    judged: dict[str, np.ndarray] = {}
    linked: dict[str, np.ndarray] = {}
    union = np.zeros(len(items.ids), dtype=bool)
    for model in sorted(responses.scope):
        sample = scope_sample(responses, model)
        labels = responses.scope[model]
        judged[model] = sj.judged_columns(labels, sample)
        summed = judged[model].sum(axis=0)
        n = int(sample.sum())
        metrics = out.per_model[model]
        metrics["scope.size.items"] = _count(n)
        for k, name in enumerate(sj.JUDGED_COLUMNS[1:], start=1):
            context, label = name.split(".")
            metrics[f"scope.{context}.count.{label}"] = _count(int(summed[k]), n)
        original = responses.letters.get((model, "original"))
        main = items.rows("main")
        if original is not None and (original[main] != MISSING).any():  # App. D.4: linked to the original run's answers
            codes = outcomes(original, gold, lure)
            b = np.zeros(len(items.ids), dtype=bool)
            b[main] = codes[main, C["none"]] == GOLD
            linked[model] = sj.linked_columns(labels, sample, b, codes[:, C["S"]])
            summed = linked[model].sum(axis=0)
            col = {name: int(summed[k]) for k, name in enumerate(sj.LINKED_COLUMNS)}
            metrics["scope.size.H"] = _count(col["H"], n)
            metrics["scope.H.lure_count.all"] = _count(col["H.lure"], col["H"])
            for label in sj.LABELS:
                metrics[f"scope.H.count.{label}"] = _count(col[f"H.{label}"], col["H"])
                metrics[f"scope.H.lure_count.{label}"] = _count(col[f"H.{label}.lure"], col[f"H.{label}"])
    in_means = [m for m in sorted(judged) if m not in outside]
    for model in in_means:
        union |= scope_sample(responses, model)
    if judged:
        _estimate(JUDGED, judged, in_means, union, items, sj.JUDGED_FIGURES, sj.JUDGED_FIGURES, (), settings, out, "scope.sample")
        for k, name in enumerate(sj.JUDGED_COLUMNS[1:], start=1):  # Table 19's Total row: counts summed over models
            context, label = name.split(".")
            total = sum(int(judged[m][:, k].sum()) for m in in_means)
            out.summary[f"scope.{context}.count.{label}"] = _count(total, sum(int(judged[m][:, 0].sum()) for m in in_means))
        out.summary["scope.models"] = _count(len(in_means), len(judged))
    linked_means = [m for m in in_means if m in linked]
    if linked:
        _estimate(LINKED, linked, linked_means, union, items, sj.LINKED_FIGURES, sj.LINKED_CI, (), settings, out, "scope.linked")
        out.summary["scope.linked.models"] = _count(len(linked_means), len(linked))
    return out
