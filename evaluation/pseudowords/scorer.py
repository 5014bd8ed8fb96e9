"""Score predictions against a pseudowords release: per-example instability (The Illusion of
Robustness, Section 2), noise floors, question-bootstrap intervals, split-sample WTD (Appendix A),
tail share (Section 3.1), cross-model specificity (Section 3.2, Appendices D and F) and the
correlation between context types (Section 3.3, Figure 4; Appendix G, Figure 8).

Rows stream through PredictionsReader and are folded into per-cell counts as they come; the
statistics run on compact numpy arrays (see instability, noise_floor, split_sample, cross_model).

Analysis unit: a model's contexts are grouped by kind and length (e.g. CHA, 10000 tokens); every
unit's `context_group` names its group. A model whose contexts all share one group is one unit
named after the model; a model run on several groups (the ablations of Section 3.3) gives one unit
per group, "MODEL [CHA 10000]", all sharing the model's no-context baseline.

Two kinds of correlation between units, kept apart:

- `pairs` (Section 3.2, Figure 3): model specificity. Pairs of DIFFERENT models only, within one
  context group and one input kind (binary trials, "correct"; probability scores, "score", Appendix
  G), so a model is never correlated with itself under another context, and local models scored
  by probability (no sampling noise) are not averaged with sampled ones. The paper compares models
  under one shared setting (Figure 3: CHA 10k; Figure 8 top: local models, among themselves).
  `pairs["by_group"]["CHA 10000 / correct"]` holds the units compared, the questions all of them
  answered, Pearson r and top-K% Jaccard per pair and their means with question-bootstrap
  intervals; a block only exists where at least two models share the group and input kind.
- `context_pairs` (Section 3.3, Figure 4; Figure 8 bottom): the same model under different context
  groups, `context_pairs["by_model"][MODEL]`, the same figures per pair of its units and their
  means. The paper reports these as a separate result ("the question-level effects are positively
  correlated across context types", mean r 0.37) and they are not evidence about model
  specificity. The units of one model share its baseline trials, so sampling noise of the baseline
  enters both changes and pushes r up (the attenuation bound of Appendix D assumes independent
  noise and is not given here); with probability scores there is no such noise (Appendix G).

Each block draws its own bootstrap stream (seeded by the block's key), so its figures do not depend
on which other models or groups are in the file.

`summary` averages the same way: only units of one context group and one input kind are averaged
together (figures under CHA 10k and under TOK 100, or probability-score figures, which have no
noise correction, beside binary-trial ones, are not comparable). With one such set in the file,
`summary` is its mean (`metrics`, with `context_group`, `input` and `units`). With several, each
set's mean is in `summary["by_group"]["CHA 10000 / correct"]`, and `summary` itself is the set of
the paper's main setting (CHA contexts at the release's longest length, binary trials) if the file
has it, else `metrics` is empty and `note` says why.
"""

from __future__ import annotations

import concurrent.futures
import csv
import math
import multiprocessing
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictStr

from ctxrobust.builders.pseudowords.builder import PseudowordsConfig
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import question_bootstrap
from ctxrobust.evaluation.predictions import Findings, PredictionsReader, Problem, to_stderr
from ctxrobust.evaluation.pseudowords import cells as cells_module
from ctxrobust.evaluation.pseudowords import coverage_warnings as coverage_warnings  # intervals known to cover less
from ctxrobust.evaluation.pseudowords import cross_model, instability, noise_floor, split_sample
from ctxrobust.evaluation.pseudowords import reliability_ceiling as reliability_ceiling  # Appendix F
from ctxrobust.evaluation.pseudowords import shift_null as shift_null  # Appendix F
from ctxrobust.evaluation.pseudowords import undefined as undefined  # degenerate figures
from ctxrobust.evaluation.pseudowords import wtd_interval as wtd_interval  # WTD's BCa interval
from ctxrobust.evaluation.pseudowords.cells import CellTable, sqa_group  # noqa: F401 (sqa_group: part of this module's interface)
from ctxrobust.evaluation.pseudowords.options import DEFAULT_SEED, ScoreOptions
from ctxrobust.evaluation.pseudowords.units import unit_of
from ctxrobust.evaluation.report import csv_cell, header, mean_over_models, metric, with_units
from ctxrobust.evaluation.rows import JsonlRows, Requested, RequestIds, Rows, Scored, as_rows, native_row, not_asked, read_requests
from ctxrobust.options import parse_options
from ctxrobust.output import atomic_open
from ctxrobust.release import Release

K = instability.K_DEFAULT
DIGITS = 6  # report figures are rounded to 6 decimals


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a JSON number (not a string or true/false)")
    if not math.isfinite(value):
        raise ValueError("must be a finite number (not NaN or Infinity)")
    return value


Trial = Annotated[int, BeforeValidator(_number), Field(ge=0)]
Correct = Annotated[int, BeforeValidator(_number), Field(ge=0, le=1)]
Score = Annotated[float, BeforeValidator(_number), Field(ge=0, le=1)]


class PredictionRow(BaseModel):
    """One line of a pseudowords predictions file (schemas/predictions.pseudowords.schema.json).

    The schema's oneOf (a `correct` row has `trial`; exactly one of `correct` and `score`) is
    checked by `row_shape_problem`, so its message names the rule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Annotated[StrictStr, Field(min_length=1)]
    id: Annotated[StrictStr, Field(min_length=1)]
    context: StrictStr | None
    trial: Trial | None = None
    correct: Correct | None = None
    score: Score | None = None
    response: StrictStr | None = None  # raw text, graded against the benchmark's answer (grading.py)


def row_shape_problem(row: PredictionRow) -> str | None:
    if sum(v is not None for v in (row.correct, row.score, row.response)) != 1:
        return "a row needs exactly one of 'correct' (0 or 1, with 'trial'), 'score' (a probability in [0, 1]) and 'response' (text, with 'trial')"
    if row.correct is not None and row.trial is None:
        return "a 'correct' row needs 'trial' (an integer numbering the sampled responses)"
    if row.response is not None and row.trial is None:
        return "a 'response' row needs 'trial' (an integer numbering the sampled responses)"
    return None


# --- reading ---------------------------------------------------------------------------------------


@dataclass
class ResponseGrader:
    """Grades `response` rows 0/1 against the benchmark's `answer` (grading.py); needs --benchmark."""

    benchmark: Path | None
    predictions: Any  # names the predictions in messages
    records: dict | None = None
    used: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)

    def _records(self) -> dict:
        if self.records is None:
            if self.benchmark is None:
                raise CtxRobustError(
                    f"{self.predictions}: its rows carry 'response' text; grading them needs --benchmark FILE, the benchmark whose 'answer' grades them"
                )
            from ctxrobust.evaluation.pseudowords.prompts import read_benchmark

            self.records = {e.record.key: e.record for e in read_benchmark(Path(self.benchmark))}
        return self.records

    def checked(self, check):
        def both(row: PredictionRow) -> str | None:
            problem = check(row)
            if problem or row.response is None:
                return problem
            record = self._records().get(row.id)
            if record is None:
                return f"id {row.id!r} is not in the benchmark {self.benchmark}; a response is graded against its record's answer"
            if record.answer is None:
                return f"the benchmark record {row.id!r} has no 'answer' to grade the response against"
            return None

        return both

    def graded(self, row: PredictionRow) -> PredictionRow:
        if row.response is None:
            return row
        from ctxrobust.evaluation.pseudowords.grading import grade

        result = grade(row.response, self._records()[row.id])
        self.used += 1
        self.by_rule[result.rule] = self.by_rule.get(result.rule, 0) + 1
        return row.model_copy(update={"correct": result.correct, "response": None})

    def summary(self) -> dict:
        from ctxrobust.canonical import sha256_file
        from ctxrobust.evaluation.pseudowords.grading import RULES

        return {
            "benchmark": str(self.benchmark),
            "benchmark_sha256": sha256_file(Path(self.benchmark)),
            "graded": self.used,
            "by_rule": dict(sorted(self.by_rule.items())),
            "rules": RULES,
        }


def context_groups(release: Release) -> dict[str, str]:
    """context id -> group label "KIND LENGTH" (e.g. "CHA 10000") from the release's contexts.jsonl."""
    groups = {}
    for row in release.iter_rows("contexts.jsonl"):
        try:
            groups[row["id"]] = f"{row['kind']} {row['target_tokens']}"
        except (KeyError, TypeError):
            raise CtxRobustError(
                f"{release.file_path('contexts.jsonl')}: a row lacks 'id', 'kind' or 'target_tokens' ({str(row)[:80]}); rebuild the release"
            ) from None
    return groups


@dataclass
class Unit:
    """The arrays one model (or one model x context group) is scored from; questions sorted by id."""

    name: str
    model: str
    group: str  # "KIND LENGTH"
    binary: bool
    ids: list[str]
    contexts: list[str]
    base_n: np.ndarray  # (N,) trials without context
    base_total: np.ndarray  # (N,) sum of correct (or of scores)
    context_n: np.ndarray  # (N, M) trials per context
    context_total: np.ndarray  # (N, M)

    @property
    def pooled_n(self) -> np.ndarray:
        return self.context_n.sum(axis=1)

    @property
    def pooled_total(self) -> np.ndarray:
        return self.context_total.sum(axis=1)


def _group_order(label: str) -> tuple[str, int]:
    kind, length = label.split(" ")
    return kind, int(length)


def _ranks(strings: list) -> np.ndarray:
    """Rank of each string in sorted order."""
    order = sorted(range(len(strings)), key=strings.__getitem__)
    rank = np.empty(len(strings), dtype=np.int64)
    rank[order] = np.arange(len(strings))
    return rank


def build_units(table: CellTable) -> tuple[list[Unit], list[Problem], int]:
    """Units from the cells, the questions left out (as problems) and the rows they held. Work is on
    the cell arrays; Python loops run over models, groups and the questions left out only."""
    labels = sorted(set(table.groups.values()), key=_group_order)
    label_index = {label: i for i, label in enumerate(labels)}
    context_group = np.array([-1] + [label_index[table.groups[c]] for c in table.contexts[1:]], dtype=np.int64)
    context_rank = _ranks([c or "" for c in table.contexts])
    id_rank = _ranks(table.ids)
    units, problems, dropped = [], [], 0
    by_model = np.argsort(table.model, kind="stable")
    starts = (
        np.flatnonzero(np.concatenate([[True], table.model[by_model][1:] != table.model[by_model][:-1]]))
        if by_model.size
        else np.array([], dtype=np.int64)
    )
    slices = {int(table.model[by_model[a]]): by_model[a:b] for a, b in zip(starts, [*starts[1:], by_model.size])}
    for model_index in sorted(slices, key=lambda i: table.models[i]):
        model = table.models[model_index]
        cells = slices[model_index]
        rank = id_rank[table.qid[cells]]
        group = context_group[table.context[cells]]
        n = table.n[cells]
        present = np.unique(group[group >= 0])
        if present.size == 0:
            problems.append(
                Problem(
                    None,
                    model=model,
                    message=f"model {model!r}: no rows with a context, so no change can be measured; its {int(n.sum())} row(s) are left out",
                )
            )
            dropped += int(n.sum())
            continue
        questions, position = np.unique(rank, return_inverse=True)  # sorted by id
        q_ids = np.empty(questions.size, dtype=np.int64)
        q_ids[position] = table.qid[cells]
        has_base = np.zeros(questions.size, dtype=bool)
        has_base[position[group < 0]] = True
        rows = np.bincount(position, weights=n, minlength=questions.size)
        for q in np.flatnonzero(~has_base):
            problems.append(
                Problem(
                    None,
                    model=model,
                    message=f"model {model!r}, question {table.ids[q_ids[q]]!r}: no baseline rows (context null), so its change cannot be measured; its {int(rows[q])} row(s) are left out",
                )
            )
        used = np.zeros(cells.size, dtype=bool)
        for g in present:
            label = labels[g]
            name = model if present.size == 1 else f"{model} [{label}]"
            in_group = np.zeros(questions.size, dtype=bool)
            in_group[position[group == g]] = True
            for q in np.flatnonzero(has_base & ~in_group):
                where = "context" if present.size == 1 else f"{label} context"
                problems.append(
                    Problem(
                        None,
                        model=model,
                        message=f"model {model!r}, question {table.ids[q_ids[q]]!r}: no {where} rows, so its change cannot be measured; left out of {name!r}",
                    )
                )
            keep = has_base & in_group
            if not keep.any():
                continue
            row_of = np.cumsum(keep) - 1
            base_cells = (group < 0) & keep[position]
            ctx_cells = (group == g) & keep[position]
            used |= base_cells | ctx_cells
            ctx_index = table.context[cells[ctx_cells]]
            distinct = np.unique(ctx_index)
            distinct = distinct[np.argsort(context_rank[distinct], kind="stable")]
            column = np.empty(int(distinct.max()) + 1, dtype=np.int64)
            column[distinct] = np.arange(distinct.size)
            count = int(keep.sum())
            base_n, base_total = np.zeros(count, dtype=np.int64), np.zeros(count)
            base_n[row_of[position[base_cells]]] = table.n[cells[base_cells]]
            base_total[row_of[position[base_cells]]] = table.total[cells[base_cells]]
            context_n, context_total = np.zeros((count, distinct.size), dtype=np.int64), np.zeros((count, distinct.size))
            r, c = row_of[position[ctx_cells]], column[ctx_index]
            context_n[r, c] = table.n[cells[ctx_cells]]
            context_total[r, c] = table.total[cells[ctx_cells]]
            units.append(
                Unit(
                    name,
                    model,
                    label,
                    table.kind[model] == "correct",
                    [table.ids[i] for i in q_ids[keep]],
                    [table.contexts[i] for i in distinct],
                    base_n,
                    base_total,
                    context_n,
                    context_total,
                )
            )
        dropped += int(n[~used].sum())
    return units, problems, dropped


def request_ids(benchmark: Path | None) -> RequestIds:
    """Request ids `prompts` writes for pseudowords ("question/context/trial", "-" for no context) read as
    the question, context and trial; a hashed long question id is decoded through the benchmark."""
    from ctxrobust.evaluation.pseudowords.prompts import item_aliases

    aliases = item_aliases(type("Options", (), {"benchmark": benchmark})) if benchmark is not None else {}
    questions = set(aliases.values())

    def to_row(key, value: dict) -> dict:
        return native_row(value, {"id": key.item, "context": key.condition, "trial": key.sample})

    return RequestIds(
        known=questions.__contains__, to_row=to_row, aliases=aliases, item_known=questions.__contains__ if questions else _any_item
    )


def _any_item(item: str) -> bool:
    return True  # without the benchmark every question id is taken as given


def read_cells(
    release: Release,
    predictions,
    columnar: bool = True,
    grader: ResponseGrader | None = None,
    requested: Requested | None = None,
) -> tuple[CellTable, dict | PredictionsReader]:
    """The file's cells, with its "predictions" block (columnar reader, a clean file of graded rows) or the
    PredictionsReader that read it row by row and holds its problems (cells.py); `response` rows are
    graded as they are read."""
    groups = context_groups(release)
    histories = release.config_as(PseudowordsConfig).contexts_per_length
    source = as_rows(predictions)
    plain_file = isinstance(source, JsonlRows) and requested is None
    fast = cells_module.read_columnar(source.path, groups, histories) if columnar and plain_file else None
    if fast is not None:
        return fast
    acc = cells_module.RowAccumulator(groups, histories, row_shape_problem)
    check = acc.check if grader is None else grader.checked(acc.check)
    if requested is not None and requested.items is not None:
        check = _asked_only(check, requested)
    reader = PredictionsReader(source, PredictionRow, check=check, request_ids=request_ids(grader.benchmark if grader else None))
    for row in reader:
        acc.add(row if grader is None else grader.graded(row))
    acc.resolve_duplicates(reader, PredictionRow)
    return acc.table(), reader


def _asked_only(check, requested: Requested):
    def both(row: PredictionRow) -> str | None:
        return check(row) or (None if requested.asks(row.id) else not_asked(row.id, requested))

    return both


def coverage(table: CellTable, units: list[Unit], requested: Requested | None) -> dict:
    """The report's "coverage" block. Questions come from the predictions (a release holds contexts): per
    model (and context group) the questions predicted, scored, and missing (asked for and not scored, or
    with rows but lacking the no-context or the context rows: such a question is left out, not counted)."""
    asked = None if requested is None or requested.items is None else len(requested.items)
    predicted: dict[str, int] = {}
    for m, name in enumerate(table.models):
        predicted[name] = int(np.unique(table.qid[table.model == m]).size)
    per_unit = {}
    for unit in units:
        scored = len(unit.ids)
        have = predicted.get(unit.model, scored)
        per_unit[unit.name] = {"items_predicted": have, "items_scored": scored, "missing": (asked if asked is not None else have) - scored}
    return {
        "items_in_release": None,
        "items_requested": asked,
        "requests": None if requested is None else requested.label,
        "missing_counted_as": "left out (a question is scored from its rows with and without context)",
        "models": per_unit,
    }


# --- statistics ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parameters:
    seed: int = DEFAULT_SEED
    replicates: int = question_bootstrap.REPLICATES
    null_experiments: int = noise_floor.NULL_EXPERIMENTS
    splits: int = split_sample.SPLITS
    k: int = K
    split_intervals: str = "all-splits"
    shift_null_simulations: int | None = None  # Appendix F; None: 200 where the work allows (shift_null.requested)

    def as_dict(self) -> dict:
        return {
            "K": self.k,
            "seed": self.seed,
            "replicates": self.replicates,
            "null_experiments": self.null_experiments,
            "splits": self.splits,
            "ci_level": question_bootstrap.LEVEL,
            "split_correlate_intervals": SPLIT_INTERVALS[self.split_intervals],
            "adjusted_intervals": "none (see the note of INS.adjusted)",
            "wtd_interval": wtd_interval.METHOD,
            "shift_null_simulations": self.shift_null_simulations,
        }


SPLIT_INTERVALS = {
    "all-splits": "all-splits: every replicate recomputes the mean over all splits (Appendix B)",
    "per-split": "per-split: replicate b uses split b mod splits only (wider; the earlier scheme)",
}


def parameters(options: ScoreOptions) -> Parameters:
    return Parameters(
        seed=options.seed,
        replicates=options.replicates,
        null_experiments=options.null_experiments,
        splits=options.splits,
        split_intervals=options.split_intervals,
        shift_null_simulations=options.shift_null_simulations,
    )


def _figure(values: np.ndarray, n: int, shift: float = 0.0) -> dict:
    """Row 0 of `values` is the estimate, rows 1.. the bootstrap replicates."""
    interval = question_bootstrap.percentile_interval(values[1:]) if values.size > 1 else None
    ci = None if interval is None else (interval[0] - shift, interval[1] - shift)
    return metric(float(values[0]) - shift, ci, n)


@dataclass
class UnitResult:
    metrics: dict[str, dict]
    delta: np.ndarray
    s_i0: np.ndarray
    s_ic: np.ndarray
    block: dict


def _design(unit: Unit) -> dict:
    per_question = (unit.context_n > 0).sum(axis=1)
    return {
        "questions": len(unit.ids),
        "contexts": len(unit.contexts),
        "baseline_trials": [int(unit.base_n.min()), int(unit.base_n.max())],
        "context_trials": [int(unit.pooled_n.min()), int(unit.pooled_n.max())],
        "contexts_per_question": [int(per_question.min()), int(per_question.max())],
    }


# figures whose question-bootstrap interval does not cover what it claims at the paper's size
# (bench/interval_coverage.py): reported without one, with the reason
WITHDRAWN_INTERVALS: dict[str, str] = {}

ADJUSTED_NO_CI = (
    "no interval: the floor-subtracted metric is a biased estimate of the noise-free one (the floor, from "
    "null experiments without any effect, overstates the noise where context does change the answer), so "
    "the observed metric's interval shifted by the floor misses the noise-free value (bench/interval_coverage.py at the "
    "paper's size: 14.5% for WTD.adjusted with an effect, 60.0% for INS.adjusted without one); read it as a point "
    "estimate beside the raw metric's interval"
)


def _noise_corrected(unit: Unit, ins: np.ndarray, wtd: np.ndarray, p: Parameters) -> tuple[dict, dict]:
    """Section 2, "Noise Correction": floors from null experiments, subtracted from INS and WTD. The
    paper takes the bootstrap variance of the observed metrics as the adjusted metrics' uncertainty;
    that interval does not cover the noise-free value (ADJUSTED_NO_CI), so the adjusted metrics are
    reported without one and with the reason. Returns (metrics, Figure 2 overlay)."""
    n = len(unit.ids)
    base_k = np.rint(unit.base_total).astype(np.int64)
    rng = question_bootstrap.stream(p.seed, "null", unit.name)
    floor = noise_floor.noise_floor(base_k, unit.base_n, unit.context_n, rng, p.null_experiments, p.k)
    metrics = {
        "noise_floor.INS": metric(floor.ins, None, n),
        "noise_floor.WTD": metric(floor.wtd, None, n),
        "INS.adjusted": {**metric(float(ins[0]) - floor.ins, None, n), "note": ADJUSTED_NO_CI},
        "WTD.adjusted": {**metric(float(wtd[0]) - floor.wtd, None, n), "note": ADJUSTED_NO_CI},
    }
    return metrics, {"noise_improved": floor.improved_bins, "noise_degraded": floor.degraded_bins}


def _trial_splits(
    unit: Unit, both: np.ndarray, delta: np.ndarray, p: Parameters, notes: list[str], annotations: dict[str, float] | None = None
) -> dict:
    """Split-sample WTD (Appendix A), split-half reliability (Appendix D), uncertainty correlates
    raw and split-sample (Section 3.2 Table 3, Appendix F)."""
    n = len(unit.ids)
    base_k = np.rint(unit.base_total).astype(np.int64)
    context_k = np.rint(unit.pooled_total).astype(np.int64)
    metrics = {}
    if split_sample.splittable(unit.base_n, unit.pooled_n):
        rng = question_bootstrap.stream(p.seed, "splits", unit.name)
        d1, d2 = split_sample.half_changes(base_k, unit.base_n, context_k, unit.pooled_n, p.splits, rng)
        metrics["WTD.split_sample"] = _figure(split_sample.split_sample_wtd(both, d1, d2, p.k), n)
        r = cross_model.split_half_reliability(both, d1, d2)
        del d1, d2  # (S, N) each: not held through the folds and correlates below
        metrics["split_half.r"] = _figure(r, n)
        metrics["split_half.spearman_brown"] = _figure(cross_model.spearman_brown(r), n)
    else:
        notes.append("split-sample WTD and split-half reliability need at least 2 baseline and 2 context trials for every question")
    for name, values in cross_model.raw_correlates(both, base_k, unit.base_n, context_k, unit.pooled_n, delta).items():
        metrics[f"uncertainty_rho.{name}"] = _figure(values, n)
    if split_sample.foldable(unit.base_n, unit.pooled_n):
        rng = question_bootstrap.stream(p.seed, "folds", unit.name)
        folds = split_sample.folds(base_k, unit.base_n, context_k, unit.pooled_n, p.splits, rng)
        compute = cross_model.split_correlates_all_splits if p.split_intervals == "all-splits" else cross_model.split_correlates
        estimate, replicates = compute(both[1:], folds, context_k, unit.pooled_n)
        for name in estimate:
            metrics[f"uncertainty_rho.{name}"] = _figure(np.concatenate([[estimate[name]], replicates[name]]), n)
    else:
        folds = None
        notes.append("split-sample correlates need at least 3 baseline and 2 context trials for every question")
    metrics.update(reliability_ceiling.figures(folds, n))  # Appendix F
    metrics.update(
        shift_null.figures(
            base_k, unit.base_n, context_k, unit.pooled_n, metrics, folds is not None, p.shift_null_simulations, p.splits, p.seed, unit.name
        )
    )
    if annotations is not None:
        metrics.update(_ambiguity(unit, both, delta, p, annotations, folds, base_k, context_k))
    return metrics


AMBIGUITY_NAMES = tuple(
    f"ambiguity_rho.{t}.{k}.{s}" for t in ("signed", "squared") for k in ("raw", "split") for s in ("probability", "log_odds")
)


def _ambiguity(
    unit: Unit,
    both: np.ndarray,
    delta: np.ndarray,
    p: Parameters,
    annotations: dict[str, float],
    folds,
    base_k: np.ndarray,
    context_k: np.ndarray,
) -> dict:
    """Table 3's ambiguity rows: Spearman rho of the annotated ambiguity level (no trial noise, the same
    in every split, Appendix F) with the signed and squared change, raw and split-sample."""
    n = len(unit.ids)
    missing = [q for q in unit.ids if q not in annotations]
    if missing:
        note = f"undefined: the annotations lack {len(missing)} of the {n} questions (e.g. {missing[0]!r}); annotate every question scored"
        return {name: {**metric(None, None, n), "note": note} for name in AMBIGUITY_NAMES}
    level = np.array([annotations[q] for q in unit.ids], dtype=np.float64)
    out = {}
    g = cross_model.empirical_logit(context_k, unit.pooled_n) - cross_model.empirical_logit(base_k, unit.base_n)
    for name, target in (
        ("signed.raw.probability", delta),
        ("squared.raw.probability", delta**2),
        ("signed.raw.log_odds", g),
        ("squared.raw.log_odds", g**2),
    ):
        out[f"ambiguity_rho.{name}"] = _figure(cross_model.weighted_spearman(both, level, target), n)
    if folds is not None:
        compute = cross_model.split_correlates_all_splits if p.split_intervals == "all-splits" else cross_model.split_correlates
        estimate, replicates = compute(both[1:], folds, context_k, unit.pooled_n, feature=level)
        for name in estimate:
            out[f"ambiguity_rho.{name}"] = _figure(np.concatenate([[estimate[name]], replicates[name]]), n)
    return out


def score_unit(unit: Unit, p: Parameters, annotations: dict[str, float] | None = None) -> UnitResult:
    """Every per-model figure; row 0 of `both` is the plain estimate, rows 1.. the bootstrap replicates."""
    n = len(unit.ids)
    s_i0 = instability.condition_means(unit.base_total, unit.base_n)
    s_ic = instability.context_mean(instability.condition_means(unit.context_total, unit.context_n))
    delta = s_ic - s_i0  # Section 2: Delta_i
    weights = question_bootstrap.multiplicities(question_bootstrap.stream(p.seed, "bootstrap", unit.name), n, p.replicates)
    both = np.vstack([np.ones((1, n)), weights])
    del weights  # `both` holds them, below the row of ones
    ins = instability.weighted_ins(both, delta)
    wtd = instability.weighted_wtd(both, delta, p.k)
    metrics = {
        "accuracy.baseline": _figure(both @ s_i0 / n, n),
        "accuracy.context": _figure(both @ s_ic / n, n),
        "delta": _figure(both @ delta / n, n),
        "INS": _figure(ins, n),
        "WTD": wtd_interval.wtd_figure(wtd, delta, p.k, n),  # BCa (wtd_interval.py)
        "tail_share": _figure(instability.weighted_tail_share(both, delta, p.k), n),
    }
    improved, degraded = instability.tail_bins(delta, p.k)
    tails = {"improved": improved, "degraded": degraded}
    notes: list[str] = []
    if unit.binary:
        corrected, overlay = _noise_corrected(unit, ins, wtd, p)
        metrics.update(corrected)
        tails.update(overlay)
        metrics.update(_trial_splits(unit, both, delta, p, notes, annotations))
    else:  # Appendix G: probability scores, no noise correction
        metrics["noise_floor.INS"] = metric(0.0, None, n)
        metrics["noise_floor.WTD"] = metric(0.0, None, n)
        metrics["INS.adjusted"] = dict(metrics["INS"])
        metrics["WTD.adjusted"] = dict(metrics["WTD"])
        u = cross_model.uncertainty(s_i0)
        metrics["uncertainty_rho.signed.raw.probability"] = _figure(cross_model.weighted_spearman(both, u, delta), n)
        metrics["uncertainty_rho.squared.raw.probability"] = _figure(cross_model.weighted_spearman(both, u, delta**2), n)
        notes.append("probability scores: no noise correction, split-sample or log-odds figures (Appendix G)")
    block = {
        "input": "correct" if unit.binary else "score",
        "noise_correction": unit.binary,
        "model": unit.model,
        "context_group": unit.group,
        "design": _design(unit),
        "tails": tails,
        "notes": notes,
    }
    metrics = undefined.explain(metrics, n)  # degenerate figures: null with the reason
    for name, reason in WITHDRAWN_INTERVALS.items():
        if name in metrics and metrics[name].get("ci") is not None:
            metrics[name] = {**metrics[name], "ci": None, "note": reason}
    return UnitResult(metrics, delta, s_i0, s_ic, block)


WORK_LIMIT = 250_000_000  # cells of one (replicates x questions) array (2 GB of float64): the work one command may ask for


def read_annotations(path: Path) -> dict[str, float]:
    """Per-question ambiguity levels (Table 3, Appendix E): a JSONL of {"id", "ambiguity"} (a number,
    e.g. the count of annotators' flags, 0-3)."""
    import json

    levels: dict[str, float] = {}
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise CtxRobustError(f"{path}: cannot read the annotations ({exc.strerror})") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                qid, level = row["id"], row["ambiguity"]
            except (ValueError, TypeError, KeyError):
                raise CtxRobustError(f'{path}:{number}: expected a JSON object with "id" and "ambiguity" (a number)') from None
            if not isinstance(qid, str) or isinstance(level, bool) or not isinstance(level, (int, float)) or not math.isfinite(level):
                raise CtxRobustError(f'{path}:{number}: "id" must be a string and "ambiguity" a finite number')
            if qid in levels:
                raise CtxRobustError(f"{path}:{number}: question {qid!r} is annotated twice")
            levels[qid] = float(level)
    return levels


def check_work(units: list[Unit], p: Parameters) -> None:
    """Refuse, with the fix, work sizes whose arrays would not fit: the bootstrap weights are
    (replicates + 1) x N, the null experiments experiments x N, the splits splits x N per question set."""
    if not units:
        return
    n = max(len(u.ids) for u in units)
    # flag, value given, array rows per unit of the value, rows beside it
    for flag, value, per, extra in (
        ("--replicates", p.replicates, 1, 1),
        ("--null-experiments", p.null_experiments, 1, 0),
        ("--splits", p.splits, 4, 0),
    ):
        cells = (per * value + extra) * n
        if cells > WORK_LIMIT:
            most = (WORK_LIMIT // n - extra) // per
            raise CtxRobustError(
                f"{flag} {value}: with {n} questions this needs {cells * 8 / 1e9:.1f} GB of arrays; give at most {most} for this file"
            )


MAX_JOBS_DEFAULT = 4  # worker processes used when --jobs is not given (at most the CPU count)


def score_units(
    units: list[Unit], p: Parameters, jobs: int | None = None, annotations: dict[str, float] | None = None
) -> dict[str, UnitResult]:
    """score_unit for every unit, in worker processes when there are several units and CPUs. Every
    unit draws from its own seeded streams, so the figures do not depend on the number of workers."""
    workers = min(jobs or min(os.cpu_count() or 1, MAX_JOBS_DEFAULT), len(units))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return {unit.name: score_unit(unit, p, annotations) for unit in units}
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return dict(zip((u.name for u in units), pool.map(score_unit, units, [p] * len(units), [annotations] * len(units))))


INPUTS = ("correct", "score")  # binary trials, probability scores (Appendix G)


def _pair_block(units: list[Unit], results: dict[str, UnitResult], p: Parameters, stream: tuple[str, str], attenuation: bool) -> dict:
    """Pearson r and top-K% Jaccard of per-example change for every pair of `units`, on the questions
    they all have, and the mean of each over the pairs; row 0 of `both` is the plain estimate, rows
    1.. the bootstrap replicates (one question resampling shared by every pair of the block)."""
    common = sorted(set.intersection(*(set(u.ids) for u in units))) if units else []
    out: dict[str, Any] = {"units": [u.name for u in units], "questions": len(common), "metrics": {}, "by_pair": {}}
    if len(units) < 2 or len(common) < 3:
        return out
    n = len(common)
    m = instability.tail_count(n, p.k)
    columns = []
    for unit in units:
        position = {qid: i for i, qid in enumerate(unit.ids)}
        columns.append(results[unit.name].delta[[position[q] for q in common]])
    x = np.column_stack(columns)
    weights = question_bootstrap.multiplicities(question_bootstrap.stream(p.seed, *stream), n, p.replicates)
    both = np.vstack([np.ones((1, n)), weights])
    del weights  # `both` holds them, below the row of ones
    by_question = np.ascontiguousarray(both.T)  # (N, B + 1), shared by every unit's tail sums
    pairs = [(a, b) for a in range(len(units)) for b in range(a + 1, len(units))]
    pearson = cross_model.weighted_pearson(both, x[:, [a for a, _ in pairs]], x[:, [b for _, b in pairs]])
    jaccards = []
    for select in (-x, x):  # improved, then degraded: one direction's (B, reachable questions) memberships held at a time
        tails = [cross_model.tail_membership(both, select[:, a], m, by_question) for a in range(len(units))]
        columns = []  # in the order of `pairs`; a's weighted memberships made once for all its pairs
        for a in range(len(units)):
            weighted = both[:, tails[a][0]] * tails[a][1]
            columns += [cross_model.jaccard(both, tails[a], tails[b], m, weighted) for b in range(a + 1, len(units))]
            del weighted
        jaccards.append(np.column_stack(columns))
        del tails
    jac_up, jac_down = jaccards
    constant = [bool(np.ptp(np.round(x[:, a], instability.TIE_DECIMALS)) == 0) for a in range(len(units))]
    for column, (a, b) in enumerate(pairs):
        entry = {
            "pearson": _figure(pearson[:, column], n),
            "jaccard.improved": _figure(jac_up[:, column], n),
            "jaccard.degraded": _figure(jac_down[:, column], n),
        }
        if constant[a] or constant[b]:  # no ordering of the questions: no correlation, no top-K% set
            which = units[a].name if constant[a] else units[b].name
            reason = f"undefined: every question of {which!r} has the same change, so there is no ranking to compare"
            for name in ("pearson", "jaccard.improved", "jaccard.degraded"):
                entry[name] = {**metric(None, None, n), "note": reason}
            jac_up[:, column] = jac_down[:, column] = np.nan
        rel_a = results[units[a].name].metrics.get("split_half.spearman_brown", {}).get("estimate")
        rel_b = results[units[b].name].metrics.get("split_half.spearman_brown", {}).get("estimate")
        if attenuation and rel_a is not None and rel_b is not None and rel_a > 0 and rel_b > 0:
            entry["attenuation"] = metric(float(np.sqrt(rel_a * rel_b)), None, n)  # Appendix D: sqrt(rho_i rho_j)
        out["by_pair"].setdefault(units[a].name, {})[units[b].name] = entry
    out["metrics"] = {
        "pearson.mean": _figure(cross_model.mean_defined(pearson), n),
        "jaccard.improved.mean": _figure(cross_model.mean_defined(jac_up), n),
        "jaccard.degraded.mean": _figure(cross_model.mean_defined(jac_down), n),
        "jaccard.random_baseline": metric(cross_model.jaccard_random_baseline(n, p.k), None, n),
    }
    out["metrics"] = undefined.explain(out["metrics"], n)  # a mean over no defined pair: null with the reason
    return out


def pair_key(group: str, kind: str) -> str:
    """Key of a cross-model block: "CHA 10000 / correct"."""
    return f"{group} / {kind}"


def score_pairs(units: list[Unit], results: dict[str, UnitResult], p: Parameters) -> dict:
    """Model specificity (Section 3.2, Figure 3): pairs of different models within one context group
    and one input kind, one block per (group, input) that holds at least two models. Units come in
    scoring order (by model name), so a group holds each model once."""
    by_group: dict[str, dict] = {}
    for group in sorted({u.group for u in units}, key=_group_order):
        for kind in INPUTS:
            members = [u for u in units if u.group == group and ("correct" if u.binary else "score") == kind]
            if len(members) < 2:
                continue
            key = pair_key(group, kind)
            block = {"context_group": group, "input": kind}
            block.update(_pair_block(members, results, p, ("cross-model", key), attenuation=True))
            by_group[key] = block
    return {"by_group": by_group}


def score_context_pairs(units: list[Unit], results: dict[str, UnitResult], p: Parameters) -> dict:
    """The same model across its context groups (Section 3.3, Figure 4; Appendix G, Figure 8 bottom),
    one block per model with at least two groups. No attenuation bound: its units share the
    baseline trials, so their sampling noise is not independent."""
    by_model: dict[str, dict] = {}
    for model in sorted({u.model for u in units}):
        members = [u for u in units if u.model == model]
        if len(members) < 2:
            continue
        block = {"input": "correct" if members[0].binary else "score", "context_groups": [u.group for u in members]}
        block.update(_pair_block(members, results, p, ("context-pairs", model), attenuation=False))
        by_model[model] = block
    return {"by_model": by_model}


# --- report ----------------------------------------------------------------------------------------


def main_group(groups: dict[str, str]) -> str | None:
    """The paper's main context group: CHA at the longest length the release holds ("CHA 10000");
    None if it has no CHA contexts."""
    lengths = [_group_order(label)[1] for label in set(groups.values()) if _group_order(label)[0] == "CHA"]
    return f"CHA {max(lengths)}" if lengths else None


def _unit_input(unit: Unit) -> str:
    return "correct" if unit.binary else "score"


def summarize(units: list[Unit], models: dict[str, dict], main: str | None) -> dict:
    """Equal-weight means over the units of one context group and one input kind (never across
    them). One set in the file: its mean. Several: every set's under `by_group` (keyed like
    `pairs["by_group"]`), and at the top the main setting's (`main`, binary trials) if present,
    else empty `metrics` and a `note`."""
    sets: dict[str, dict] = {}
    for unit in units:  # scoring order: by model name, so a set lists its models in name order
        key = pair_key(unit.group, _unit_input(unit))
        sets.setdefault(key, {"context_group": unit.group, "input": _unit_input(unit), "units": []})["units"].append(unit.name)
    order = sorted(sets, key=lambda k: (_group_order(sets[k]["context_group"]), INPUTS.index(sets[k]["input"])))
    by_group = {}
    for key in order:
        block = sets[key]
        by_group[key] = {**block, "metrics": mean_over_models({name: models[name] for name in block["units"]})}
    if len(by_group) == 1:
        return dict(by_group[order[0]])
    wanted = None if main is None else pair_key(main, "correct")
    if wanted in by_group:
        summary = dict(by_group[wanted])
    else:
        setting = f"{main}, binary trials" if main else "CHA contexts, binary trials (the release has no CHA contexts)"
        summary = {
            "metrics": {},
            "note": (
                f"the units cover {len(by_group)} sets of context group and input kind ({', '.join(order)}), whose figures are "
                f"not comparable, and none is the main setting ({setting}); see summary.by_group for each set's mean"
            ),
        }
    summary["by_group"] = by_group
    return summary


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        if not np.isfinite(value):
            return None
        rounded = round(value, DIGITS)
        return 0.0 if rounded == 0 else rounded
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def export_examples(path: Path, units: list[Unit], results: dict[str, UnitResult]) -> None:
    """Per-example table: id, model, s_i0, s_ic, delta_i; sorted by model, then id."""
    rows = []
    for unit in sorted(units, key=lambda u: u.name):
        r = results[unit.name]
        for i, qid in enumerate(unit.ids):
            rows.append((qid, unit.name, float(r.s_i0[i]), float(r.s_ic[i]), float(r.delta[i])))
    rows.sort(key=lambda row: (row[1], row[0]))
    columns = ["id", "model", "s_i0", "s_ic", "delta_i"]
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise CtxRobustError(f"{path}: --export writes .csv or .parquet; give a file name ending in one of them")
    if suffix == ".csv":
        with atomic_open(path, "w") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows([csv_cell(qid), csv_cell(name), repr(a), repr(b), repr(c)] for qid, name, a, b, c in rows)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({name: [row[j] for row in rows] for j, name in enumerate(columns)})
        with atomic_open(path, "wb") as handle:
            pq.write_table(table, handle)


def _release_reader_memory() -> None:
    """Return to the system the memory the reader freed but the allocators keep (pyarrow's pool, and the C
    heap through glibc's malloc_trim where there is one), so that the workers forked next do not hold it."""
    import ctypes
    import sys

    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        pyarrow.default_memory_pool().release_unused()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


def score(release: Release, predictions, options: ScoreOptions | dict | None = None, timings: dict | None = None) -> dict:
    """The pseudowords report (SPEC "Scoring"; paper Sections 2, 3.1, 3.2, Appendices A, B, D, F, G); the problems
    and notices found are printed on standard error as they are found. `timings`, if given, receives the
    seconds spent reading and on the statistics."""
    return score_rows(release, predictions, options, to_stderr, timings).report


def score_rows(release: Release, predictions, options: ScoreOptions | dict | None = None, echo=None, timings: dict | None = None) -> Scored:
    """The pseudowords report with every problem and notice found (`echo`, if given, gets each as a line as it is found)."""
    found = Findings(echo)
    options = parse_options(ScoreOptions, options, "pseudowords score")
    started = time.perf_counter()
    p = parameters(options)
    groups = context_groups(release)
    main = main_group(groups)
    rows: Rows = as_rows(predictions)
    requested = None if options.requests is None else read_requests(options.requests, "pseudowords")
    grader = ResponseGrader(options.benchmark, rows.label)
    table, source = read_cells(release, rows, grader=grader, requested=requested)
    units, problems, dropped = build_units(table)
    if isinstance(source, dict) and problems:  # cells the file cannot score: report them as the row reader does
        table, source = read_cells(release, rows, columnar=False, grader=grader, requested=requested)
        units, problems, dropped = build_units(table)
    block = source if isinstance(source, dict) else source.finish(options.strict, problems, found)
    covered = coverage(table, units, requested)
    del table, source  # the units hold what the statistics need
    _release_reader_memory()  # before the workers fork: what the reader's pool keeps is not theirs to share
    block["excluded"] += dropped
    if grader.used:
        block["grading"] = grader.summary()
    if not units:
        raise CtxRobustError(
            f"{rows.label}: no question of any model has both no-context rows (context null) and context rows; "
            "nothing to score (the problems are listed above)"
        )
    check_work(units, p)
    shift_null.check_work([len(u.ids) for u in units if u.binary], p.shift_null_simulations, p.splits)
    read = time.perf_counter()
    annotations = None if options.annotations is None else read_annotations(options.annotations)
    results = score_units(units, p, options.jobs, annotations)
    models = {}
    for unit in units:
        r = results[unit.name]
        models[unit.name] = {"metrics": dict(sorted(r.metrics.items())), **r.block}
    report = header(release, block)
    report["parameters"] = p.as_dict()
    report["models"] = models
    report["summary"] = summarize(units, models, main)
    report["warnings"] = coverage_warnings.warnings(models, p.k)  # intervals known to cover less (bench/interval_coverage.py)
    report["pairs"] = score_pairs(units, results, p)
    report["context_pairs"] = score_context_pairs(units, results, p)
    report["coverage"] = covered
    if options.export is not None:
        export_examples(options.export, units, results)
    if timings is not None:
        timings.update(read=read - started, statistics=time.perf_counter() - read)
    return found.scored(with_units(_rounded(report), unit_of))
