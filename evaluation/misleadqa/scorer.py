"""MisleadQA scoring: predictions in, the paper's tables back (paper §4.2-4.3, §5, §6.2, App. C.2, D).

Every metric is computed within each model's own subsets B_m and A_m and then averaged over models with
equal weight (App. C.2 "Aggregation"); intervals come from the cluster bootstrap of App. C.2, with the
dependency-group variant of App. D.6. The main split and the condition supplement are scored
separately (App. D.3); the supplement is descriptive (no intervals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import cluster_bootstrap as cb
from ctxrobust.evaluation import report as rp
from ctxrobust.evaluation import resampling
from ctxrobust.evaluation.misleadqa.diagnostics import order_sample, scope_sample, score_diagnostics
from ctxrobust.evaluation.misleadqa.lure_rates import (
    GOLD,
    OUTCOMES,
    PAIRED,
    PRIMARY,
    C,
    common_subset,
    count_columns,
    distribution,
    evaluation_subsets,
    outcomes,
    primary_metrics,
    ratio,
)
from ctxrobust.evaluation.misleadqa.option_orders import sort_orders, to_release_letters
from ctxrobust.evaluation.misleadqa.options import MIN_CLUSTERS, ScoreOptions
from ctxrobust.evaluation.misleadqa.responses import (
    ANSWER_PROMPTS,
    CONDITIONS,
    FILES,
    INVALID,
    LETTERS,
    MISSING,
    ORDER_CONDITIONS,
    ORIGINAL_ORDER,
    SCOPE_CONTEXTS,
    MisleadQAPrediction,
    parse_label,
    parse_letter,
    read_items,
    row_problem,
)
from ctxrobust.evaluation.misleadqa.units import unit_of
from ctxrobust.evaluation.predictions import Findings, PredictionsReader, Problem, to_stderr
from ctxrobust.evaluation.rows import Requested, RequestIds, Scored, native_row, not_asked, read_requests
from ctxrobust.options import parse_options
from ctxrobust.release import Release

ORDERS = ("G+S", "S+G", "G+F", "F+G")
BOTH_ORDERS = {"S_with_G": ("G+S", "S+G"), "F_with_G": ("G+F", "F+G")}  # App. D.1 "S with G": orders averaged within a model
CI_METRICS = (
    "gold.S",
    "LR.S",
    "LR.F",
    "delta.LR",
    "RLR.S",
    "RLR.F",
    "delta.RLR",
    "reduction.S",
    "reduction.F",
    "order_effect.S",
    "order_effect.F",
    "paired.lure.G_first",
    "paired.lure.misleading_first",
)  # the last two: App. D.2, Table 16
PRIMARY_CONTRASTS = ("delta.LR", "delta.RLR")  # §4.3: Bonferroni-adjusted 97.5% intervals
GROUP_CI_METRICS = ("delta.LR", "delta.RLR", "reduction.F", "reduction.S", "order_effect.F", "order_effect.S")  # Table 26
GROUP_METRICS = ("LR.S", "LR.F", "RLR.S", "RLR.F")  # Table 24
GROUP_PREFIX = "dependency_groups."
SEPARATE_SUMMARY = ("bootstrap.", "responses.", "inference.", "option_order.", "scope.", GROUP_PREFIX + "option_order.")
# Table 21 rows: (condition, outcome-distribution key on the original subsets; G alone on all items, App. D.5)
CF_ROWS = (
    ("G alone", "outcome.all.G"),
    ("S alone", "outcome.B.S"),
    ("F alone", "outcome.B.F"),
    ("S with G", "outcome.A.S_with_G"),
    ("F with G", "outcome.A.F_with_G"),
)


# ----------------------------------------------------------------------------------------- release items
@dataclass
class Items:
    ids: list[str] = field(default_factory=list)
    split: list[str] = field(default_factory=list)
    gold: list[int] = field(default_factory=list)
    lure: list[int] = field(default_factory=list)
    group: list[str] = field(default_factory=list)  # source.scope_dimension (Table 24)
    cluster: list[tuple[str, str]] = field(default_factory=list)  # (source, cluster_id): App. A.4
    dependency: list[str] = field(default_factory=list)  # dependency_group_id: App. A.4, D.6
    index: dict[str, int] = field(default_factory=dict)
    requested: Requested | None = None  # --requests: only the items it asks for are scored

    def rows(self, split: str) -> np.ndarray:
        return np.flatnonzero(np.asarray(self.split) == split)

    def asks(self, i: int) -> bool:
        return self.split[i] != NOT_ASKED


NOT_ASKED = ""  # the split of an item --requests did not ask for: in no split, so in no figure


def load_scored_items(release: Release, settings: ScoreOptions) -> Items:
    """The release's items; with --requests, those it does not ask for are in no split (scored nowhere)."""
    items = load_items(release)
    if settings.requests is not None:
        items.requested = read_requests(settings.requests, "misleadqa", known=items.index.__contains__, limit=len(items.ids))
        if items.requested.items is not None:
            items.split = [s if items.requested.asks(i) else NOT_ASKED for i, s in zip(items.ids, items.split)]
    return items


def load_items(release: Release) -> Items:
    items = Items()
    for split, item in read_items(release):
        items.index[item.id] = len(items.ids)
        items.ids.append(item.id)
        items.split.append(split)
        items.gold.append(LETTERS.index(item.gold))
        items.lure.append(LETTERS.index(item.lure))
        items.group.append(f"{item.source}.{item.scope_dimension}")
        items.cluster.append((item.source, item.cluster_id))
        items.dependency.append(item.dependency_group_id)
    return items


# ------------------------------------------------------------------------------------ reading predictions
@dataclass
class Responses:
    """Option letters per (model, prompt) as an (items, conditions) int8 matrix; MISSING where no row.
    The option-order check's letters (mapped back to the release's letters) per (model, order), and
    scope labels per model as (items, G/S/F) matrices, alike."""

    n_items: int
    letters: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    orders: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    scope: dict[str, np.ndarray] = field(default_factory=dict)
    lenient: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)

    def matrix(self, model: str, prompt: str) -> np.ndarray:
        key = (model, prompt)
        if key not in self.letters:
            self.letters[key] = np.full((self.n_items, len(CONDITIONS)), MISSING, dtype=np.int8)
        return self.letters[key]

    def order_matrix(self, model: str, order: str) -> np.ndarray:
        key = (model, order)
        if key not in self.orders:
            self.orders[key] = np.full((self.n_items, len(CONDITIONS)), MISSING, dtype=np.int8)
        return self.orders[key]

    def scope_matrix(self, model: str) -> np.ndarray:
        if model not in self.scope:
            self.scope[model] = np.full((self.n_items, len(SCOPE_CONTEXTS)), MISSING, dtype=np.int8)
        return self.scope[model]

    def orders_of(self, model: str) -> list[str]:
        return sort_orders(order for name, order in self.orders if name == model)

    def diagnostic_matrices(self, model: str) -> list[np.ndarray]:
        """The model's option-order and scope-label matrices."""
        return [m for (name, _), m in self.orders.items() if name == model] + ([self.scope[model]] if model in self.scope else [])

    @property
    def models(self) -> list[str]:
        return sorted({model for model, _ in self.letters} | {model for model, _ in self.orders} | set(self.scope))


def diagnostic_problem(row: MisleadQAPrediction, items: Items) -> str | None:
    """Scope judgments and option-order answers are of main-split items (App. D.4, D.6)."""
    message = row_problem(row, items.index)
    if message is None and not items.asks(items.index[row.id]):
        return not_asked(row.id, items.requested)
    if message is None and (row.prompt == "scope" or row.option_order is not None) and items.split[items.index[row.id]] != "main":
        what = "a scope judgment" if row.prompt == "scope" else "an option-order answer"
        return f"{what} of {row.id!r}, a condition-supplement item: these analyses use main items only (App. D.4, D.6)"
    return message


def request_ids(items: Items) -> RequestIds:
    """Request ids `prompts` writes for MisleadQA ("item/S/0", "item/cf:G/0", "item/S@BCDA/0") read as the
    item, condition, prompt and option order they name."""
    from ctxrobust.evaluation.misleadqa.prompts import prediction

    def to_row(key, value: dict) -> dict:
        named = prediction(key, "", "")
        return native_row(value, {k: v for k, v in named.items() if k not in ("model", "response")})

    return RequestIds(known=items.index.__contains__, to_row=to_row)


def read_predictions(path, items: Items, lenient: bool) -> tuple[PredictionsReader, Responses]:
    """Stream the rows once, keeping only integer codes."""
    reader = PredictionsReader(
        path,
        MisleadQAPrediction,
        check=lambda row: diagnostic_problem(row, items),
        key=lambda row: (row.model, row.id, row.condition, row.prompt, row.option_order),
        request_ids=request_ids(items),
    )
    responses = Responses(len(items.ids))
    for row in reader:
        i = items.index[row.id]
        if row.prompt == "scope":  # §6.1: a label, not a letter
            label, used_lenient = parse_label(row.response, lenient)
            responses.scope_matrix(row.model)[i, SCOPE_CONTEXTS.index(row.condition)] = label
        elif row.option_order is not None:  # App. D.6: the shown letter mapped back through the recorded order
            letter, used_lenient = parse_letter(row.response, lenient)
            shown = np.array([letter], dtype=np.int8)
            responses.order_matrix(row.model, row.option_order)[i, C[row.condition]] = to_release_letters(shown, row.option_order)[0]
        else:
            letter, used_lenient = parse_letter(row.response, lenient)
            responses.matrix(row.model, row.prompt)[i, C[row.condition]] = letter
        responses.rows[row.model] = responses.rows.get(row.model, 0) + 1
        if used_lenient:
            responses.lenient[row.model] = responses.lenient.get(row.model, 0) + 1
    return reader, responses


def covered_splits(responses: Responses, items: Items, model: str) -> list[str]:
    """Splits for which the model has at least one row (under any prompt)."""
    found = []
    for _, split in FILES:
        rows = items.rows(split)
        if rows.size and any(
            (responses.letters[(model, p)][rows] != MISSING).any() for p in ANSWER_PROMPTS if (model, p) in responses.letters
        ):
            found.append(split)
    return found


def missing_problems(responses: Responses, items: Items) -> list[Problem]:
    """One problem per (model, prompt, split) with missing (item, condition) pairs; they score as invalid."""
    problems = []
    for model in responses.models:
        for split in covered_splits(responses, items, model):
            rows = items.rows(split)
            for prompt in ANSWER_PROMPTS:
                if prompt != "original" and (model, prompt) not in responses.letters:
                    continue
                part = responses.matrix(model, prompt)[rows]
                if prompt != "original" and not (part != MISSING).any():
                    continue
                missing = part == MISSING
                if prompt == "cf" and missing[:, C["none"]].all():
                    missing[:, C["none"]] = False  # the CF run's no-context rerun is an optional check (App. D.5)
                where = np.argwhere(missing)
                if where.size == 0:
                    continue
                pairs = sorted((items.ids[rows[i]], j) for i, j in where)
                shown = ", ".join(f"{item_id}/{CONDITIONS[j]}" for item_id, j in pairs[:5])
                more = f" and {len(pairs) - 5} more" if len(pairs) > 5 else ""
                problems.append(
                    Problem(
                        None,
                        model=model,
                        kind="missing",
                        message=f"model {model!r}, prompt {prompt}, {split} split: {len(pairs)} (item, condition) pair(s) missing, scored as invalid: {shown}{more}",
                    )
                )
    problems += diagnostic_missing(responses, items)
    return problems


def _missing_line(what: str, pairs: list[str], model: str | None = None) -> Problem:
    more = f" and {len(pairs) - 5} more" if len(pairs) > 5 else ""
    return Problem(
        None,
        model=model,
        kind="missing",
        message=f"{what}: {len(pairs)} (item, condition) pair(s) missing, scored as invalid: {', '.join(pairs[:5])}{more}",
    )


def diagnostic_missing(responses: Responses, items: Items) -> list[Problem]:
    """Missing rows of the option-order check (every order, item and condition of the model's run) and of
    the scope judgments (G, S and F of every judged item); they score as invalid."""
    problems = []
    for model in responses.models:
        orders = responses.orders_of(model)
        if orders:
            sample = np.flatnonzero(order_sample(responses, model))
            for order in orders:
                part = responses.orders[(model, order)][sample][:, [C[c] for c in ORDER_CONDITIONS]]
                pairs = [f"{items.ids[sample[i]]}/{ORDER_CONDITIONS[j]}" for i, j in np.argwhere(part == MISSING)]
                if pairs:
                    problems.append(_missing_line(f"model {model!r}, option order {order}", pairs, model))
            if ORIGINAL_ORDER not in orders:
                problems.append(
                    Problem(
                        None,
                        model=model,
                        message=f"model {model!r}: the option-order rows have no release order ABCD (orders {', '.join(orders)}); "
                        "Table 4 needs it (`prompts --option-orders K` writes it first)",
                    )
                )
        if model in responses.scope:
            sample = np.flatnonzero(scope_sample(responses, model))
            part = responses.scope[model][sample]
            pairs = [f"{items.ids[sample[i]]}/{SCOPE_CONTEXTS[j]}" for i, j in np.argwhere(part == MISSING)]
            if pairs:
                problems.append(_missing_line(f"model {model!r}, prompt scope", pairs, model))
    return problems


# -------------------------------------------------------------------------------------- point estimates
def _put_distribution(out: dict, name: str, codes: np.ndarray, mask: np.ndarray) -> None:
    shares, n = distribution(codes, mask)
    for outcome, share in zip(OUTCOMES, shares):
        out[f"{name}.{outcome}"] = rp.metric(share, None, n)


def split_metrics(codes: np.ndarray, groups: list[str] | None, prefix: str = "") -> dict:
    """Table 2, Table 14 (and Table 15) figures for one model on one split; Table 24/25 when `groups` given."""
    b, a = evaluation_subsets(codes)
    everything = np.ones(len(codes), dtype=bool)
    out: dict[str, dict] = {
        f"{prefix}size.items": rp.metric(len(codes), None, len(codes)),
        f"{prefix}size.B": rp.metric(int(b.sum()), None, int(b.sum())),
        f"{prefix}size.A": rp.metric(int(a.sum()), None, int(a.sum())),
    }
    for cond in ("none", "G"):  # App. D.1: all items
        _put_distribution(out, f"{prefix}outcome.all.{cond}", codes[:, C[cond]], everything)
    for cond in ("S", "F"):  # context alone on B_m, and on A_m for before/after comparisons
        _put_distribution(out, f"{prefix}outcome.B.{cond}", codes[:, C[cond]], b)
        _put_distribution(out, f"{prefix}outcome.A.{cond}", codes[:, C[cond]], a)
    for cond in ORDERS:
        _put_distribution(out, f"{prefix}outcome.A.{cond}", codes[:, C[cond]], a)
    for name, pair in BOTH_ORDERS.items():
        _put_distribution(out, f"{prefix}outcome.A.{name}", codes[:, [C[o] for o in pair]], a)
    sizes = {"B": int(b.sum()), "A": int(a.sum())}
    for name, (with_s, with_f) in PAIRED.items():  # App. D.2, Table 16
        kept = a & (codes[:, C[with_s]] == GOLD)
        sizes[f"paired.{name}"] = int(kept.sum())
        out[f"{prefix}paired.{name}.kept"] = rp.metric(ratio(kept.sum(), a.sum()), None, int(a.sum()))
        _put_distribution(out, f"{prefix}paired.{name}.outcome", codes[:, C[with_f]], kept)
    point = primary_metrics(count_columns(codes, b, a).sum(axis=0))
    for name, subset in PRIMARY.items():
        out[f"{prefix}{name}"] = rp.metric(point[name], None, sizes[subset])
    if groups is not None:  # App. D.6 "Source-scope groups": each model's B_m, A_m restricted to the group
        labels = np.asarray(groups)
        for group in sorted(set(groups)):
            inside = labels == group
            totals = count_columns(codes, b & inside, a & inside).sum(axis=0)
            rates = primary_metrics(totals)
            out[f"{prefix}group.{group}.size.B"] = rp.metric(int((b & inside).sum()), None, int((b & inside).sum()))
            out[f"{prefix}group.{group}.size.A"] = rp.metric(int((a & inside).sum()), None, int((a & inside).sum()))
            for name in GROUP_METRICS:
                out[f"{prefix}group.{group}.{name}"] = rp.metric(rates[name], None, int((b if PRIMARY[name] == "B" else a)[inside].sum()))
    return out


def cf_metrics(codes: np.ndarray, codes_cf: np.ndarray, letters: np.ndarray, letters_cf: np.ndarray, prefix: str = "") -> dict:
    """App. D.5, Table 21-23: outcomes under the CF prompt on the original subsets; G alone on all items."""
    b, a = evaluation_subsets(codes)
    p = f"{prefix}cf."
    out: dict[str, dict] = {}
    _put_distribution(out, f"{p}outcome.all.G", codes_cf[:, C["G"]], np.ones(len(codes), dtype=bool))
    for cond in ("S", "F"):
        _put_distribution(out, f"{p}outcome.B.{cond}", codes_cf[:, C[cond]], b)
    for cond in ORDERS:
        _put_distribution(out, f"{p}outcome.A.{cond}", codes_cf[:, C[cond]], a)
    for name, pair in BOTH_ORDERS.items():
        _put_distribution(out, f"{p}outcome.A.{name}", codes_cf[:, [C[o] for o in pair]], a)
    common = common_subset(a, codes_cf)
    s_with_g = [C[o] for o in BOTH_ORDERS["S_with_G"]]
    out[f"{p}size.A_common"] = rp.metric(int(common.sum()), None, int(a.sum()))
    out[f"{p}kept.A_common"] = rp.metric(ratio(common.sum(), a.sum()), None, int(a.sum()))  # Table 23 "Kept"
    out[f"{p}common.S_with_G.gold.original"] = rp.metric(distribution(codes[:, s_with_g], common)[0][GOLD], None, int(common.sum()))
    out[f"{p}common.S_with_G.gold.cf"] = rp.metric(distribution(codes_cf[:, s_with_g], common)[0][GOLD], None, int(common.sum()))
    # App. D.5 consistency check: the CF run's no-context answers against the original run's
    # on the items with a letter in both runs: two invalid responses are not an agreement
    original, rerun = letters[:, C["none"]], letters_cf[:, C["none"]]
    answered = (original != MISSING) & (rerun != MISSING)
    both = answered & (original >= 0) & (rerun >= 0)
    if answered.any():
        if both.any():
            agree = (original == rerun) & both
            out[f"{p}none_agreement"] = rp.metric(agree.sum() / both.sum(), None, int(both.sum()))
        else:
            out[f"{p}none_agreement"] = {
                **rp.metric(None, None, 0),
                "note": "undefined: no item has a valid letter in both runs' no-context answers",
            }
        out[f"{p}none_agreement.invalid_pairs"] = rp.metric(int((answered & ~both).sum()), None, int(answered.sum()))
    return out


# -------------------------------------------------------------------------------------------- bootstrap
def bootstrap_intervals(
    codes_by_model: list[np.ndarray], unit: np.ndarray, n_units: int, names: tuple[str, ...], replicates: int, seed: int
) -> tuple[list[dict], dict]:
    """App. C.2: per-model and model-mean intervals for `names`, from one multiplicity matrix.

    Returns ([{name: (lo, hi, undefined)} per model], {name: (lo, hi, undefined)} for the mean).
    """
    counts = np.stack([count_columns(codes, *evaluation_subsets(codes)) for codes in codes_by_model], axis=1)  # (items, M, K)
    weights = cb.multiplicities(n_units, replicates, seed)
    totals = cb.weighted_totals(weights, cb.per_unit_sums(counts, unit, n_units))  # (R, M, K)
    reps = primary_metrics(totals)  # name -> (R, M); NaN where a weighted denominator is empty
    n_models = len(codes_by_model)
    columns, levels = [], []
    for name in names:
        level = cb.PRIMARY_LEVEL if name in PRIMARY_CONTRASTS else cb.LEVEL
        columns += [reps[name], reps[name].mean(axis=1, keepdims=True)]  # a NaN for any model -> NaN mean (App. C.2)
        levels += [level] * (n_models + 1)
    lo, hi, undefined = resampling.percentile_intervals(np.concatenate(columns, axis=1), np.asarray(levels))
    return cb.intervals_by_name(lo, hi, undefined, names, n_models)


# ------------------------------------------------------------------------------------------------ score
def _mean(values: list[float | None]) -> float | None:
    """Equal-weight mean over models; undefined if any model's value is (App. C.2)."""
    if not values or any(v is None for v in values):
        return None
    return float(np.mean(values))


@dataclass
class MainUnits:
    """The main split's resampling units (App. A.4): source clusters and dependency groups."""

    cluster: np.ndarray
    clusters: list
    group: np.ndarray
    groups: list
    source_scope: list[str]


def model_metrics(model: str, responses: Responses, items: Items, units: MainUnits, min_clusters: int) -> tuple[dict, np.ndarray | None]:
    """Every point estimate for one model, and its main-split outcome codes (None without main rows)."""
    gold = np.asarray(items.gold, dtype=np.int8)[:, None]
    lure = np.asarray(items.lure, dtype=np.int8)[:, None]
    letters = responses.matrix(model, "original")
    codes = outcomes(letters, gold, lure)
    letters_cf = responses.letters.get((model, "cf"))
    codes_cf = None if letters_cf is None else outcomes(letters_cf, gold, lure)
    metrics: dict[str, dict] = {}
    splits = covered_splits(responses, items, model)
    for split in splits:
        rows = items.rows(split)
        prefix = "" if split == "main" else "supplement."
        metrics.update(split_metrics(codes[rows], units.source_scope if split == "main" else None, prefix))
        if codes_cf is not None and (letters_cf[rows] != MISSING).any():
            metrics.update(cf_metrics(codes[rows], codes_cf[rows], letters[rows], letters_cf[rows], prefix))
    main_codes = None
    if "main" in splits:
        main_codes = codes[items.rows("main")]
        _, a = evaluation_subsets(main_codes)
        covered = len(set(units.cluster[a].tolist()))
        metrics["inference.A.clusters"] = rp.metric(covered, None, len(units.clusters))
        metrics["inference.eligible"] = rp.metric(float(covered >= min_clusters), None, None)
    own = np.concatenate([items.rows(s) for s in splits]) if splits else np.zeros(0, dtype=np.int64)
    rows = responses.rows.get(model, 0)
    metrics["responses.rows"] = rp.metric(rows, None, None)
    invalid = sum(int((m[own] == INVALID).sum()) for (name, _), m in responses.letters.items() if name == model)
    invalid += sum(int((m == INVALID).sum()) for m in responses.diagnostic_matrices(model))  # option orders, scope labels
    metrics["responses.invalid.count"] = rp.metric(invalid, None, rows)
    metrics["responses.invalid.rate"] = rp.metric(invalid / rows if rows else None, None, rows)
    metrics["responses.missing_original"] = rp.metric(int((letters[own] == MISSING).sum()), None, own.size * len(CONDITIONS))
    metrics["responses.lenient_forms"] = rp.metric(responses.lenient.get(model, 0), None, rows)
    return metrics, main_codes


def coverage(responses: Responses, items: Items) -> dict:
    """The report's "coverage" block: items in the release and asked for, and per model the items
    predicted (any row of the original prompt), scored (the items of the splits it answered) and missing
    (scored items with a condition unanswered: that answer counts as invalid)."""
    per_model = {}
    for model in responses.models:
        letters = responses.letters.get((model, "original"))
        splits = covered_splits(responses, items, model)
        own = np.concatenate([items.rows(s) for s in splits]) if splits else np.zeros(0, dtype=np.int64)
        answered = np.zeros(len(items.ids), dtype=bool) if letters is None else (letters != MISSING).any(axis=1)
        gaps = 0 if letters is None or not own.size else int((letters[own] == MISSING).any(axis=1).sum())
        per_model[model] = {"items_predicted": int(answered.sum()), "items_scored": int(own.size), "missing": gaps}
    asked = None if items.requested is None or items.requested.items is None else sum(1 for s in items.split if s != NOT_ASKED)
    return {
        "items_in_release": len(items.ids),
        "items_requested": asked,
        "requests": None if items.requested is None else items.requested.label,
        "missing_counted_as": "invalid",
        "models": per_model,
    }


def score(release: Release, predictions, settings: ScoreOptions | dict | None = None) -> dict:
    """The misleadqa report; the problems and notices found are printed on standard error as they are found."""
    return score_rows(release, predictions, settings, to_stderr).report


def score_rows(release: Release, predictions, settings: ScoreOptions | dict | None = None, echo=None) -> Scored:
    """The misleadqa report with every problem and notice found (`echo`, if given, gets each as a line as it is found)."""
    found = Findings(echo)
    settings = parse_options(ScoreOptions, settings, "misleadqa score")
    items = load_scored_items(release, settings)
    reader, responses = read_predictions(predictions, items, settings.lenient_letters)
    block = reader.finish(settings.strict, missing_problems(responses, items), found)  # every problem found before any number

    main = items.rows("main")
    cluster, clusters = cb.unit_index([items.cluster[i] for i in main])
    group, groups = cb.unit_index([items.dependency[i] for i in main])
    units = MainUnits(cluster, clusters, group, groups, [items.group[i] for i in main])
    models: dict[str, dict] = {}
    main_codes: dict[str, np.ndarray] = {}
    for model in responses.models:
        metrics, codes = model_metrics(model, responses, items, units, settings.min_clusters)
        models[model] = {"metrics": metrics}
        if codes is not None:
            main_codes[model] = codes

    eligible = [m for m in sorted(main_codes) if models[m]["metrics"]["inference.eligible"]["estimate"] == 1.0]
    skipped = sorted(set(main_codes) - set(eligible))
    if skipped:
        found.notice(
            reader.label,
            "note",
            f"model(s) {', '.join(skipped)} have A_m covering fewer than {settings.min_clusters} source clusters; "
            "they get no intervals and stay out of the means (App. C.2)",
        )
    outside = {m for m in main_codes if m not in eligible}
    extra = score_diagnostics(responses, items, outside, settings)  # Table 4, Tables 19-20 (§6.1, §6.3)
    for model, metrics in extra.per_model.items():
        models[model]["metrics"].update(metrics)
        if model in extra.orders:
            models[model]["option_orders"] = extra.orders[model]
    summary = _summary(models, eligible)
    summary.update(extra.summary)
    warnings = inference_warnings(models, eligible)
    for line in warnings:
        found.notice(reader.label, "warning", f"warning: {line}")
    summary.update(
        {
            "inference.models": rp.metric(len(eligible), None, len(models)),
            "bootstrap.units.clusters": rp.metric(len(clusters), None, None),
            "bootstrap.units.dependency_groups": rp.metric(len(groups), None, None),
        }
    )
    replicates = settings.replicates
    if replicates and eligible:
        codes_list = [main_codes[m] for m in eligible]
        for prefix, unit, count, names in (("", cluster, len(clusters), CI_METRICS), (GROUP_PREFIX, group, len(groups), GROUP_CI_METRICS)):
            per_model, mean = bootstrap_intervals(codes_list, unit, count, names, replicates, settings.seed)
            for model, intervals in zip(eligible, per_model):
                _attach(models[model]["metrics"], intervals, prefix, replicates)
            _attach(summary, mean, prefix, replicates)
    out_summary = {"metrics": dict(sorted(summary.items())), "warnings": warnings}
    if settings.exclude_models:
        out_summary["without"] = means_without(models, eligible, main_codes, settings, cluster, len(clusters), reader.label)
        out_summary["without"].setdefault("metrics", {}).update(extra.without(set(settings.exclude_models)))  # §6.3 "Excluding OLMo"
    report = {
        **rp.header(release, block),
        "parameters": settings.parameters(),
        "models": models,
        "summary": out_summary,
        "coverage": coverage(responses, items),
    }
    return found.scored(rp.with_units(report, unit_of))


def means_without(
    models: dict, eligible: list[str], main_codes: dict, settings: ScoreOptions, cluster: np.ndarray, n_clusters: int, predictions: Path
) -> dict:
    """Table 2's "w/o" rows: the equal-weight means over the models entering inference minus the
    excluded ones, with their own cluster-bootstrap intervals (the same draws, App. C.2)."""
    excluded = sorted(set(settings.exclude_models))
    unknown = [m for m in excluded if m not in models]
    if unknown:
        raise CtxRobustError(
            f"--exclude-models: {', '.join(map(repr, unknown))} not in {predictions} (its models: {', '.join(sorted(models))})"
        )
    kept = [m for m in eligible if m not in excluded]
    block: dict = {"excluded": excluded, "models": kept}
    if not kept:
        return {**block, "metrics": {}, "note": "no model entering inference is left"}
    means = _summary({m: models[m] for m in kept}, kept)
    metrics = {name: means[name] for name in CI_METRICS if name in means}
    if settings.replicates:
        _, mean = bootstrap_intervals([main_codes[m] for m in kept], cluster, n_clusters, CI_METRICS, settings.replicates, settings.seed)
        for name, (lo, hi, _) in mean.items():
            metrics[name] = rp.metric(metrics[name]["estimate"], (lo, hi), metrics[name]["n"])
    return {**block, "metrics": metrics}


RARE_RATE = 0.05  # rates below this over fewer than FEW_CLUSTERS clusters: intervals known to under-cover
FEW_CLUSTERS = 40
RARE_RATES = ("LR.S", "LR.F", "RLR.S", "RLR.F")


def inference_warnings(models: dict[str, dict], eligible: list[str]) -> list[str]:
    """Where the figures are known to be fragile: a model entering the means with A_m on fewer source
    clusters than App. C.2 asks (allowed by a lower --min-clusters), and rare rates over few clusters,
    whose cluster-bootstrap intervals cover less than they claim (bench/interval_coverage.py)."""
    out = []
    for model in eligible:
        metrics = models[model]["metrics"]
        covered = int(metrics["inference.A.clusters"]["estimate"])
        if covered < MIN_CLUSTERS:
            out.append(
                f"model {model!r} enters the means with A_m covering {covered} source cluster(s), fewer than the "
                f"{MIN_CLUSTERS} of App. C.2: its figures rest on {covered} cluster(s) and can move the model means by a lot"
            )
        if covered < FEW_CLUSTERS:
            rare = [
                f"{name} {100 * metrics[name]['estimate']:.1f}%"
                for name in RARE_RATES
                if name in metrics and metrics[name]["estimate"] is not None and metrics[name]["estimate"] < RARE_RATE
            ]
            what = f"rare rates ({', '.join(rare)})" if rare else "its rates"
            out.append(
                f"model {model!r}: {what} over {covered} source clusters: its cluster-bootstrap intervals are known to "
                f"cover less than they claim (bench/interval_coverage.py, 25 clusters: 83-92% for 95% intervals of one model)"
            )
    return out


def _attach(metrics: dict, intervals: dict, prefix: str, replicates: int) -> None:
    """Put each interval on its metric (dependency-group variants under their own name) and count undefined replicates."""
    for name, (lo, hi, undefined) in intervals.items():
        base = metrics[name]
        metrics[prefix + name] = rp.metric(base["estimate"], (lo, hi), base["n"])
        metrics[f"bootstrap.undefined.{prefix}{name}"] = rp.metric(undefined, None, replicates)


def _summary(models: dict[str, dict], eligible: list[str]) -> dict:
    """Equal-weight means over models: main-split figures over the models entering inference, supplement
    figures over the models that have them; sums for the response counts."""
    names = sorted({name for m in models.values() for name in m["metrics"]})
    summary = {}
    for name in names:
        if name.startswith(SEPARATE_SUMMARY):
            if name.startswith("responses."):
                values = [m["metrics"][name]["estimate"] for m in models.values() if name in m["metrics"]]
                summary[name] = rp.metric(sum(values), None, None)
            continue
        pool = models if name.startswith("supplement.") else {m: models[m] for m in eligible}
        values = [m["metrics"][name]["estimate"] for m in pool.values() if name in m["metrics"]]
        if values:
            summary[name] = rp.metric(_mean(values), None, len(values))
    with_cf = [models[m]["metrics"] for m in eligible if "cf.size.A_common" in models[m]["metrics"]]
    for _, key in CF_ROWS if with_cf else ():  # Table 21: the original-prompt rows average the same models as the CF rows
        for outcome in OUTCOMES:
            summary[f"cf.original.{key}.{outcome}"] = rp.metric(
                _mean([m[f"{key}.{outcome}"]["estimate"] for m in with_cf]), None, len(with_cf)
            )
    return summary
