"""GSM-IC scoring: predictions in, the paper's metrics and Tables 2-4 back.

Metrics (paper Section 3.2, 5.1), per model, on the variants the model was run on:
- micro: fraction of variants answered correctly; macro: fraction of base problems all of whose
  variants are answered correctly; each also on 2-step and on more-than-2-step problems, and on each
  level of the three factors of the inserted sentence (Table 4: a base problem enters a level's macro
  accuracy when it has a variant at that level);
- accuracy.base: accuracy on the base problems (Table 2); normalised.micro / normalised.macro = micro /
  macro divided by the same model's accuracy.base (Section 3.2, Table 3 "Norm");
- invalid: fraction of variants without a numeric answer (no number in the response, or no row);
- several samples per (model, id): the answer is the majority vote, ties broken by a uniform random
  choice among the top answers (Section 5.1, footnote 6), from a stream seeded by (seed, model name);
  sc.recall is the fraction of variants with at least one correct sample (Section 5.1).

Macro <= micro holds whenever every base problem has the same number of variants in the scope; with
unequal counts (GSM-IC-4K, and the 577-584 variants per base problem of a default full build) it need
not. What holds for any predictions is macro <= the mean over base problems of per-base accuracy. The
report's "parameters" block records each scope's variant counts per base problem.

Scope: a model whose variant ids all lie in GSM-IC-4K (the paper's evaluation set, Section 5) is
scored on GSM-IC-4K only, under metric names prefixed "4k."; a model with any variant outside it is
scored on all variants (unprefixed names) and, when the release has GSM-IC-4K, also on GSM-IC-4K
("4k." names). Every variant of the scope and every base problem counts: a missing or unparseable
answer is wrong (and reported). 95% intervals: percentile bootstrap over base problems (the cluster
bootstrap of `evaluation.cluster_bootstrap`), the same resamples for every model and metric.
"""

from __future__ import annotations

import array
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import cluster_bootstrap, resampling
from ctxrobust.evaluation.gsm_ic import accuracy
from ctxrobust.evaluation.gsm_ic.answers import answer_value, gold_value, response_answer
from ctxrobust.evaluation.gsm_ic.options import ScoreOptions
from ctxrobust.evaluation.gsm_ic.units import unit_of
from ctxrobust.evaluation.predictions import Findings, PredictionsError, PredictionsReader, Problem, to_stderr
from ctxrobust.evaluation.question_bootstrap import stream
from ctxrobust.evaluation.report import header, mean_over_models, metric, with_units
from ctxrobust.evaluation.rows import Requested, RequestIds, Scored, native_row, not_asked, read_requests
from ctxrobust.options import parse_options
from ctxrobust.release import Release

BASE_FILE = "base.jsonl"
VARIANTS_FILE = "variants.jsonl"
SUBSET_FILE = "gsm-ic-4k.jsonl"
LEVEL = 0.95
TIE_BREAK = "gsm-ic self-consistency tie-break"  # names the per-model random stream
SUBSET_PREFIX = "4k."
EXAMPLES = 3
_KEY_BITS = 20  # duplicate keys pack (sample, model, item) into one int

# (metric suffix, variant column, required value): the factor levels of Table 4
FACTORS = [
    ("topic=in", "sentence_label", "in_topic"),
    ("topic=off", "sentence_label", "off_topic"),
    ("role=overlapped", "role_label", "overlapped"),
    ("role=nonoverlapped", "role_label", "nonoverlapped"),
    ("number=in_range", "number_label", "in_range"),
    ("number=out_range", "number_label", "out_range"),
]
LABELS = {column: sorted({value for _, c, value in FACTORS if c == column}) for _, column, _ in FACTORS}


class GsmIcPrediction(BaseModel):
    """One predictions row; mirrors schemas/predictions.gsm-ic.schema.json."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    model: Annotated[str, Field(min_length=1)]
    id: Annotated[str, Field(min_length=1)]
    response: StrictStr | None = None
    answer: str | int | float | None = None
    sample: Annotated[StrictInt, Field(ge=0)] | None = None

    @field_validator("response", mode="before")
    @classmethod
    def _response_is_text(cls, value: Any) -> Any:
        if value is None:
            raise PydanticCustomError("string_type", "Input should be a valid string (the raw response text)")
        return value

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_is_scalar(cls, value: Any) -> Any:
        if value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
            if isinstance(value, float) and not np.isfinite(value):
                raise PydanticCustomError("answer_type", "Input should be a finite number")
            return value
        raise PydanticCustomError("answer_type", "Input should be a string, a number or null")

    @field_validator("sample", mode="before")
    @classmethod
    def _integral_sample(cls, value: Any) -> Any:
        return int(value) if isinstance(value, float) and value.is_integer() else value

    @model_validator(mode="after")
    def _response_or_answer(self) -> GsmIcPrediction:
        given = self.model_fields_set
        if ("response" in given) == ("answer" in given):
            problem = PydanticCustomError("response_or_answer", "give exactly one of 'response' (raw text) or 'answer' (final answer)")
            # raised with a field location, so the reader names the field instead of the whole row
            raise ValidationError.from_exception_data(
                type(self).__name__, [InitErrorDetails(type=problem, loc=("response",), input=self.model_dump())]
            )
        return self


@dataclass
class Items:
    """The release as arrays: base problems first (sorted by id), then variants (sorted by id)."""

    ids: list[str]
    index: dict[str, int]
    n_base: int
    base_of: np.ndarray  # item -> base problem index (a base problem is its own)
    n_steps: np.ndarray  # item -> reasoning steps of its base problem
    labels: dict[str, np.ndarray]  # factor column -> label per item ("" for base problems)
    in_subset: np.ndarray | None  # item -> in GSM-IC-4K; None when the release has no GSM-IC-4K
    gold: list[str]  # item -> canonical answer
    asked: np.ndarray | None = None  # item -> asked for by --requests; None: every item
    requested: Requested | None = None

    @property
    def is_base(self) -> np.ndarray:
        return np.arange(len(self.ids)) < self.n_base

    @property
    def in_scope(self) -> np.ndarray:
        """The items scored: those asked for (--requests), else every item."""
        return np.ones(len(self.ids), dtype=bool) if self.asked is None else self.asked

    def restrict(self, requested: Requested | None) -> Items:
        """These items with only those `requested` asks for in scope (None: all of them)."""
        if requested is None or requested.items is None:
            return self
        asked = np.zeros(len(self.ids), dtype=bool)
        for item in requested.items:
            i = self.index.get(item)
            if i is not None:
                asked[i] = True
        self.asked, self.requested = asked, requested
        return self


def _bad(release: Release, name: str, item: str, message: str) -> CtxRobustError:
    return CtxRobustError(
        f"{release.file_path(name)}: item {item!r}: {message}; the release is not a GSM-IC release as expected, rebuild it"
    )


def _read_file(release: Release, name: str, variant: bool) -> list[tuple]:
    """(id, canonical answer, n_steps, base_id, *factor labels) per row, sorted by id; rows are streamed so
    only these fields are kept."""
    out = []
    for row in release.iter_rows(name):
        item = str(row.get("id"))
        answer = gold_value(str(row.get("answer", "")))
        if answer is None:
            raise _bad(release, name, item, f"answer {row.get('answer')!r} is not a number")
        steps = row.get("n_steps")
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
            raise _bad(release, name, item, f"n_steps {steps!r} is not a positive integer")
        if not variant:
            out.append((item, answer, steps, item) + ("",) * len(LABELS))
            continue
        for column, allowed in LABELS.items():
            if row.get(column) not in allowed:
                raise _bad(release, name, item, f"{column} {row.get(column)!r} is not one of {', '.join(allowed)}")
        out.append((item, answer, steps, str(row.get("base_id"))) + tuple(row[column] for column in LABELS))
    out.sort(key=lambda t: t[0])
    return out


def load_items(release: Release) -> Items:
    if release.dataset != "gsm-ic":
        raise CtxRobustError(f"{release.path}: dataset is {release.dataset!r}, not gsm-ic")
    bases, variants = _read_file(release, BASE_FILE, False), _read_file(release, VARIANTS_FILE, True)
    rows = bases + variants
    ids = [r[0] for r in rows]
    index = {item: i for i, item in enumerate(ids)}
    if len(index) != len(ids):
        raise CtxRobustError(f"{release.path}: an id appears twice across {BASE_FILE} and {VARIANTS_FILE}; rebuild the release")
    base_of = []
    for item, _, _, base_id, *_ in rows:
        base = index.get(base_id)
        if base is None or base >= len(bases):
            raise _bad(release, VARIANTS_FILE, item, f"base_id {base_id!r} is not a base problem of {BASE_FILE}")
        base_of.append(base)
    in_subset = None
    if release.file_path(SUBSET_FILE).exists():
        in_subset = np.zeros(len(ids), dtype=bool)
        for row in release.iter_rows(SUBSET_FILE):
            i = index.get(str(row.get("id")))
            if i is None or i < len(bases):
                raise _bad(release, SUBSET_FILE, str(row.get("id")), "not a variant id of variants.jsonl")
            in_subset[i] = True
    return Items(
        ids=ids,
        index=index,
        n_base=len(bases),
        base_of=np.asarray(base_of, dtype=np.int64),
        n_steps=np.asarray([r[2] for r in rows], dtype=np.int64),
        labels={column: np.asarray([r[4 + k] for r in rows]) for k, column in enumerate(LABELS)},
        in_subset=in_subset,
        gold=[r[1] for r in rows],
    )


@dataclass
class Votes:
    """Every valid predictions row as compact arrays: model code, item index, answer code (-1: none)."""

    models: dict[str, int]
    answers: dict[str, int]
    model: np.ndarray
    item: np.ndarray
    answer: np.ndarray


def request_ids(items: Items) -> RequestIds:
    """Request ids `prompts` writes for GSM-IC ("problem/-/sample") read as the problem and sample."""

    def to_row(key, value: dict) -> dict:
        if key.condition is not None:
            raise ValueError(f"condition {key.condition!r}: GSM-IC requests have none")
        return native_row(value, {"id": key.item, "sample": key.sample})

    return RequestIds(known=items.index.__contains__, to_row=to_row)


def read_votes(path, items: Items) -> tuple[Votes, PredictionsReader]:
    """Stream the file once; answers are interned to integer codes (gold answers first). The reader
    holds the problems found (bad JSON, wrong types, unknown ids, duplicate (model, id, sample))."""
    models: dict[str, int] = {}
    answers: dict[str, int] = {}
    for value in items.gold:
        answers.setdefault(value, len(answers))
    index = items.index
    if len(index) >= 1 << _KEY_BITS:
        raise CtxRobustError(f"release has {len(index)} items; more than this scorer's limit of {(1 << _KEY_BITS) - 1}")

    def check(row: GsmIcPrediction) -> str | None:
        if row.id not in index:
            return f"unknown id {row.id!r} (not a base problem or variant of this release)"
        if items.asked is not None and not items.asked[index[row.id]]:
            return not_asked(row.id, items.requested)
        return None

    def key(row: GsmIcPrediction) -> int:
        code = models.setdefault(row.model, len(models))
        if code >= 1 << _KEY_BITS:
            raise PredictionsError(f"{path}: more than {(1 << _KEY_BITS) - 1} distinct model names; split the file")
        return (((row.sample or 0) << _KEY_BITS | code) << _KEY_BITS) | index[row.id]

    reader = PredictionsReader(path, GsmIcPrediction, check=check, key=key, request_ids=request_ids(items))
    model_codes, item_codes, answer_codes = array.array("i"), array.array("i"), array.array("i")
    for row in reader:
        if row.response is not None:
            value = response_answer(row.response)
        else:
            value = answer_value(row.answer)
        model_codes.append(models[row.model])
        item_codes.append(index[row.id])
        answer_codes.append(-1 if value is None else answers.setdefault(value, len(answers)))
    votes = Votes(
        models=models,
        answers=answers,
        model=np.frombuffer(model_codes, dtype=np.int32).astype(np.int64),
        item=np.frombuffer(item_codes, dtype=np.int32).astype(np.int64),
        answer=np.frombuffer(answer_codes, dtype=np.int32).astype(np.int64),
    )
    return votes, reader


def _ranks(names: list[str]) -> np.ndarray:
    """code -> position of its name in sorted order (so results never depend on row order)."""
    order = sorted(range(len(names)), key=names.__getitem__)
    ranks = np.empty(len(names), dtype=np.int64)
    ranks[order] = np.arange(len(names))
    return ranks


@dataclass
class Outcomes:
    """(models, items) matrices, models in sorted order."""

    samples: np.ndarray  # rows answering it (0: missing)
    correct: np.ndarray  # voted answer equals the gold answer
    answered: np.ndarray  # voted answer is a number
    any_correct: np.ndarray  # at least one sample correct


def count_samples(votes: Votes, items: Items) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Model names in sorted order, each row's (model rank, item) cell, and rows per cell."""
    names = sorted(votes.models)
    model_rank = _ranks(list(votes.models))
    n_items = len(items.ids)
    group = model_rank[votes.model] * n_items + votes.item
    samples = np.bincount(group, minlength=len(names) * n_items).reshape(len(names), n_items)
    return names, group, samples


def vote(votes: Votes, items: Items, names: list[str], group: np.ndarray, samples: np.ndarray, seed: int) -> Outcomes:
    """Section 5.1: majority vote per (model, item). Each model's ties are broken from its own stream
    (seed, model name), so its figures do not depend on the other models in the file."""
    n_items = len(items.ids)
    answer_rank = _ranks(list(votes.answers))
    answer = np.where(votes.answer >= 0, answer_rank[np.maximum(votes.answer, 0)], -1)
    gold = answer_rank[np.asarray([votes.answers[g] for g in items.gold], dtype=np.int64)]
    winner = np.full((len(names), n_items), -1, dtype=np.int64)
    for m, name in enumerate(names):
        rows = votes.model == votes.models[name]
        winner[m] = accuracy.majority_vote(votes.item[rows], answer[rows], n_items, stream(seed, TIE_BREAK, name))
    any_correct = np.zeros(len(names) * n_items, dtype=bool)
    any_correct[group[answer == gold[votes.item]]] = True
    return Outcomes(samples, winner == gold[None, :], winner >= 0, any_correct.reshape(len(names), n_items))


def release_scopes(items: Items) -> list[tuple[str, np.ndarray]]:
    """(metric prefix, variant mask) of every scope of the release: all variants, then GSM-IC-4K."""
    out = [("", ~items.is_base & items.in_scope)]
    if items.in_subset is not None:
        out.append((SUBSET_PREFIX, items.in_subset & items.in_scope))
    return out


def scopes(items: Items, samples_row: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The scopes a model is scored on; see the module docstring."""
    run = ~items.is_base & (samples_row > 0) & items.in_scope
    if not run.any():
        return []
    if items.in_subset is not None and not (run & ~items.in_subset).any():
        return [(SUBSET_PREFIX, items.in_subset & items.in_scope)]
    return release_scopes(items)


def parameters(items: Items, seed: int, replicates: int) -> dict:
    """The report's "parameters" block: what the figures depend on beyond the two files."""
    described = {}
    for prefix, mask in release_scopes(items):
        per_base = np.bincount(items.base_of[mask], minlength=items.n_base)
        present = per_base[per_base > 0]
        if present.size:
            described[prefix.rstrip(".") or "all"] = {
                "metric_prefix": prefix,
                "variants": int(present.sum()),
                "base_problems": int(present.size),
                "variants_per_base": [int(present.min()), int(present.max())],
                "macro_at_most_micro_guaranteed": bool(present.min() == present.max()),  # Section 3.2
            }
    return {
        "seed": seed,
        "replicates": replicates,
        "interval": {
            "level": LEVEL,
            "method": "percentile",
            "resampled": "base problems",
            "paired": "the same resamples for every model and metric",
        },
        "self_consistency": "majority vote over a (model, id)'s samples; samples without a number do not vote; "
        "ties: uniform random choice among the top answers, stream seeded by (seed, model name) (Section 5.1)",
        "normalised_by": "accuracy.base of the same model name (Section 3.2)",
        "scopes": described,
    }


def _missing(ids: list[str], mask: np.ndarray, limit: int = EXAMPLES) -> str:
    where = np.flatnonzero(mask)
    shown = ", ".join(ids[i] for i in where[:limit])
    return shown + (", ..." if where.size > limit else "")


def coverage_problems(items: Items, names: list[str], samples: np.ndarray) -> list[Problem]:
    """File-level problems: (model, id) pairs with no prediction; each counts as a wrong answer."""
    if not names:
        return [Problem(None, "no valid prediction rows: nothing was scored")]
    problems = []
    base = items.is_base & items.in_scope
    n_base = int(base.sum())
    for m, name in enumerate(names):
        row = samples[m]
        if not n_base:
            pass  # --requests asked for no base problem
        elif not (row[base] > 0).any():
            problems.append(
                Problem(
                    None,
                    model=name,
                    kind="missing",
                    message=f"model {name!r}: no predictions for the {n_base} base problems; accuracy.base and normalised.* are not reported (add a row for each base id)",
                )
            )
        elif (gap := base & (row == 0)).any():
            problems.append(
                Problem(
                    None,
                    model=name,
                    kind="missing",
                    message=f"model {name!r}: no prediction for {int(gap.sum())} of {n_base} base problem(s) ({_missing(items.ids, gap)}); scored as wrong",
                )
            )
        scope = scopes(items, row)
        if scope:
            prefix, mask = scope[0]
            gap = mask & (row == 0)
            if gap.any():
                label = "GSM-IC-4K variant(s)" if prefix else "variant(s)"
                problems.append(
                    Problem(
                        None,
                        model=name,
                        kind="missing",
                        message=f"model {name!r}: no prediction for {int(gap.sum())} of {int(mask.sum())} {label} ({_missing(items.ids, gap)}); scored as wrong",
                    )
                )
    return problems


@dataclass
class Ratio:
    """A metric as per-base-problem counts: estimate sum(num) / sum(den)."""

    name: str
    num: np.ndarray
    den: np.ndarray


def model_ratios(items: Items, out: Outcomes, m: int) -> tuple[list[Ratio], list[tuple[str, str, str]]]:
    """Every count-ratio metric of model m, plus (name, numerator metric, denominator metric) quotients."""
    n_base = items.n_base
    row_samples, correct = out.samples[m], out.correct[m]
    ratios: list[Ratio] = []
    quotients: list[tuple[str, str, str]] = []
    base = items.is_base & items.in_scope
    has_base = bool((row_samples[base] > 0).any())
    if has_base:  # Table 2: one group per base problem
        hits, total = accuracy.group_counts(items.base_of[base], correct[base], n_base)
        ratios.append(Ratio("accuracy.base", hits, total))
    splits = [("", None), (".2step", items.n_steps == 2), (".multistep", items.n_steps > 2)]
    splits += [("." + suffix, items.labels[column] == value) for suffix, column, value in FACTORS]
    sc = bool((row_samples > 1).any())
    for prefix, scope in scopes(items, row_samples):
        scope = scope & ~base
        for suffix, mask in splits:
            keep = scope if mask is None else scope & mask
            hits, total = accuracy.group_counts(items.base_of[keep], correct[keep], n_base)
            ratios.append(Ratio(f"{prefix}micro{suffix}", hits, total))  # Section 3.2
            ratios.append(Ratio(f"{prefix}macro{suffix}", *accuracy.macro_counts(hits, total)))  # Section 3.2
        invalid, total = accuracy.group_counts(items.base_of[scope], ~out.answered[m][scope], n_base)
        ratios.append(Ratio(f"{prefix}invalid", invalid, total))
        if sc:  # Section 5.1: recall of the correct answer among the samples
            hits, total = accuracy.group_counts(items.base_of[scope], out.any_correct[m][scope], n_base)
            ratios.append(Ratio(f"{prefix}sc.recall", hits, total))
        if has_base:  # Section 3.2, Table 3 "Norm"
            quotients += [(f"{prefix}normalised.{kind}", f"{prefix}{kind}", "accuracy.base") for kind in ("micro", "macro")]
    return ratios, quotients


def model_metrics(ratios: list[Ratio], quotients: list[tuple[str, str, str]], weights: np.ndarray | None) -> dict:
    """Estimates, intervals and denominators. A quotient (normalised accuracy, Section 3.2) is the ratio
    of two metrics, replicate by replicate; every metric uses the same resamples `weights`."""
    column = {r.name: k for k, r in enumerate(ratios)}
    top, bottom = [column[q[1]] for q in quotients], [column[q[2]] for q in quotients]
    names = [r.name for r in ratios] + [q[0] for q in quotients]
    estimates = [accuracy.ratio(r.num, r.den) for r in ratios]
    estimates += [None if estimates[a] is None or not estimates[b] else estimates[a] / estimates[b] for a, b in zip(top, bottom)]
    dens = [int(r.den.sum()) for r in ratios]
    dens += [dens[a] for a in top]
    intervals: list[Any] = [None] * len(names)
    if weights is not None and ratios:
        reps = accuracy.ratio_replicates(weights, np.stack([r.num for r in ratios], 1), np.stack([r.den for r in ratios], 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            quotient = reps[:, top] / reps[:, bottom]
        reps = np.hstack([reps, np.where(np.isfinite(quotient), quotient, np.nan)])
        low, high, _ = resampling.percentile_intervals(reps, np.full(len(names), LEVEL))
        intervals = list(zip(low, high))
    return {name: metric(e, ci, n) for name, e, ci, n in sorted(zip(names, estimates, intervals, dens), key=lambda t: t[0])}


def scored_mask(items: Items, samples_row: np.ndarray) -> np.ndarray:
    """The items whose answers enter a model's figures: its scopes' variants and, when it answered any, the
    base problems (a missing answer among them counts as wrong)."""
    mask = np.zeros(len(items.ids), dtype=bool)
    for _, scope in scopes(items, samples_row):
        mask |= scope & ~items.is_base
    base = items.is_base & items.in_scope
    if (samples_row[base] > 0).any():
        mask |= base
    return mask


def coverage(items: Items, names: list[str], samples: np.ndarray) -> dict:
    """The report's "coverage" block: items in the release and asked for, and per model the items
    predicted, scored and missing (scored without a prediction: counted wrong)."""
    per_model = {}
    for m, name in enumerate(names):
        row = samples[m]
        mask = scored_mask(items, row)
        per_model[name] = {
            "items_predicted": int(((row > 0) & items.in_scope).sum()),
            "items_scored": int(mask.sum()),
            "missing": int((mask & (row == 0)).sum()),
        }
    return {
        "items_in_release": len(items.ids),
        "items_requested": None if items.asked is None else int(items.asked.sum()),
        "requests": None if items.requested is None else items.requested.label,
        "missing_counted_as": "wrong",
        "models": per_model,
    }


def score(release: Release, predictions, options: ScoreOptions | dict | None = None) -> dict:
    """The gsm-ic report; the problems and notices found are printed on standard error as they are found."""
    return score_rows(release, predictions, options, to_stderr).report


def score_rows(release: Release, predictions, options: ScoreOptions | dict | None = None, echo=None) -> Scored:
    """The gsm-ic report with every problem and notice found (`echo`, if given, gets each as a line as it is found)."""
    found = Findings(echo)
    options = parse_options(ScoreOptions, options, "gsm-ic score")
    seed, replicates = options.seed, options.replicates
    items = load_items(release)
    if options.requests is not None:
        items.restrict(read_requests(options.requests, "gsm-ic", known=items.index.__contains__, limit=len(items.ids)))
    votes, reader = read_votes(predictions, items)
    names, group, samples = count_samples(votes, items)
    block = reader.finish(options.strict, coverage_problems(items, names, samples), found)
    out = vote(votes, items, names, group, samples, seed)
    weights = cluster_bootstrap.multiplicities(items.n_base, replicates, seed) if replicates else None
    models = {}
    for m, name in enumerate(names):
        ratios, quotients = model_ratios(items, out, m)
        models[name] = {"metrics": model_metrics(ratios, quotients, weights)}
    report = {
        **header(release, block),
        "parameters": parameters(items, seed, replicates),
        "models": models,
        "summary": {"metrics": mean_over_models(models)},
        "coverage": coverage(items, names, samples),
    }
    return found.scored(with_units(report, unit_of))


def without_models(report: dict, names: set[str]) -> dict:
    """The report as if the rows of the models `names` had not been given: each model's figures depend on its
    own rows only (the same resamples for every model; tie-breaks seeded by its name), so they are dropped
    and the summary, a mean over models, is taken again. Used to leave a refused submission out unscored."""
    report["models"] = {name: block for name, block in report["models"].items() if name not in names}
    report["summary"] = {"metrics": mean_over_models(report["models"])}
    covered = report.get("coverage")
    if isinstance(covered, dict):
        covered["models"] = {name: block for name, block in covered.get("models", {}).items() if name not in names}
    return report
