"""The GSM-IC builder: base problems, their variants, and the GSM-IC-4K evaluation ids."""
from __future__ import annotations

from collections import Counter

import numpy as np
from pydantic import Field, model_validator

from ctxrobust.builders.base import Builder, BuildConfig, BuildOutput, DataFile
from ctxrobust.builders.gsm_ic.analysis import Analysis, analyse
from ctxrobust.builders.gsm_ic.lexicon import Lexicon, Templates, load_lexicon, load_templates
from ctxrobust.builders.gsm_ic.selection import select_default, select_listed
from ctxrobust.builders.gsm_ic.variants import CELLS, Slots, cell_key, make_variants, slots_for
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import gsm8k

# independent random streams derived from the seed
SELECTION_STREAM, QUOTA_STREAM, VARIANT_STREAM = 1, 2, 3


MAX_BASE = 10_000  # bounds on the work of one build (the paper's: 100 base problems, 58,052 variants)
MAX_VARIANTS = 1_000_000


class GsmIcConfig(BuildConfig):
    seed: int = Field(0, ge=0, description="seed of the base-problem draw and the variants")
    n_two_step: int = Field(60, ge=0, le=MAX_BASE, description="base problems with two steps [§3.1]")
    n_more_steps: int = Field(40, ge=0, le=MAX_BASE, description="base problems with three to max_steps steps")
    max_steps: int = Field(7, ge=3, le=100, description="the paper's base problems need two to seven steps [§3.1]")
    base_ids: list[str] | None = Field(None, max_length=MAX_BASE, description='use these pool ids ("pool-0042") instead of a seeded draw')
    n_variants: int = Field(58052, ge=8, le=MAX_VARIANTS, description="the size of GSM-IC [§3.1]; spread evenly over base problems and the 8 cells")
    numbers_per_label: int = Field(10, ge=1, le=1000, description="distinct inserted numbers per base problem and number label")
    eval_size: int = Field(4000, ge=1, le=MAX_VARIANTS, description="GSM-IC-4K [§5]")
    eval_seed: int = Field(0, ge=0, description="seed of the GSM-IC-4K draw")

    @model_validator(mode="after")
    def _check(self) -> "GsmIcConfig":
        if self.seed < 0 or self.eval_seed < 0:
            raise ValueError("seed and eval_seed must be >= 0")
        if self.max_steps < 3 or self.n_two_step < 0 or self.n_more_steps < 0 or self.numbers_per_label < 1:
            raise ValueError("max_steps must be >= 3 and counts >= 0 (numbers_per_label >= 1)")
        n_base = len(self.base_ids) if self.base_ids is not None else self.n_two_step + self.n_more_steps
        if n_base < 1:
            raise ValueError("at least one base problem is needed")
        if self.n_variants < len(CELLS) * n_base:
            raise ValueError(f"n_variants must be at least {len(CELLS)} per base problem ({len(CELLS) * n_base}) so every cell is populated")
        if not n_base <= self.eval_size <= self.n_variants:
            raise ValueError(f"eval_size must lie between the number of base problems ({n_base}) and n_variants")
        return self


def _rng(*keys: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(list(keys))))


def base_row(problem: gsm8k.BaseProblem, analysis: Analysis) -> dict:
    return {
        "id": problem.id,
        "question": problem.question,
        "answer": problem.answer,
        "n_steps": problem.n_steps,
        "solution": problem.solution,
        "topic": analysis.topic,
        "topic_keywords": analysis.topic_keywords,
        "people": [person.name for person in analysis.people],
        "pool_line": problem.pool.line,
        "solution_line": problem.source.line,
    }


def cell_quotas(n_bases: int, n_variants: int, rng: np.random.Generator) -> list[dict[tuple[str, str, str], int]]:
    """Variants per (base, cell): n_variants spread evenly; the remainder goes to randomly drawn (base, cell) pairs."""
    slots = n_bases * len(CELLS)
    share, extra = divmod(n_variants, slots)
    bonus = set(int(i) for i in rng.choice(slots, size=extra, replace=False))
    return [{cell: share + (b * len(CELLS) + c in bonus) for c, cell in enumerate(CELLS)} for b in range(n_bases)]


def draw_eval(variants: list[dict], size: int, seed: int) -> tuple[list[dict], int]:
    """[§5] GSM-IC-4K: `size` variants uniformly without replacement, redrawn (attempt 1, 2, ...) until every base is covered."""
    ordered = sorted(variants, key=lambda v: v["id"])
    bases = {v["base_id"] for v in ordered}
    for attempt in range(1000):
        picked = _rng(seed, attempt).choice(len(ordered), size=size, replace=False)
        rows = [{"id": ordered[i]["id"], "base_id": ordered[i]["base_id"]} for i in sorted(int(i) for i in picked)]
        if {r["base_id"] for r in rows} == bases:
            return rows, attempt
    raise CtxRobustError(f"gsm-ic: no draw of {size} variants covered all {len(bases)} base problems; raise eval_size")


class GsmIcBuilder(Builder):
    dataset = "gsm-ic"
    Config = GsmIcConfig

    def required_snapshots(self) -> list[str]:
        return [gsm8k.POOL, gsm8k.TRAIN]

    def build(self) -> BuildOutput:
        if self.store is None:
            raise CtxRobustError("gsm-ic needs the GSM8K snapshots; no source store was given")
        return build_from_pool(gsm8k.load(self.store), self.config)


def usability(pool: gsm8k.GsmPool, analyses: dict[str, Analysis], config: GsmIcConfig, lexicon: Lexicon, templates: Templates):
    """Why each joined pool problem cannot be a base problem (empty: it can), and the slots of those that can.

    Besides the analysis: 2..max_steps reasoning steps, and enough distinct sentences in every cell
    for the largest cell quota the configuration asks for.
    """
    n_base = len(config.base_ids) if config.base_ids is not None else config.n_two_step + config.n_more_steps
    largest_quota = -(-config.n_variants // (n_base * len(CELLS)))
    reasons: dict[str, list[tuple[str, str]]] = {}
    prepared: dict[str, tuple[Slots, np.random.Generator]] = {}
    for problem in pool.problems:
        found = list(analyses[problem.id].problems)
        if not 2 <= problem.n_steps <= config.max_steps:
            found.append(("n_steps", f"{problem.n_steps} reasoning steps, outside 2..{config.max_steps}"))
        if not found:
            rng = _rng(config.seed, VARIANT_STREAM, problem.pool.line)
            slots = slots_for(analyses[problem.id], lexicon, templates, config.numbers_per_label, rng)
            short = [cell_key(cell) for cell in CELLS if len(slots.candidates(cell)) < largest_quota]
            if short:
                found.append(("few_sentences", f"{len(short)} of its cells ({short[0]}, ...) have fewer than {largest_quota} distinct sentences, "
                              "the variants per cell asked for (lower n_variants or raise numbers_per_label)"))
            else:
                prepared[problem.id] = (slots, rng)
        reasons[problem.id] = found
    return reasons, prepared


def build_from_pool(pool: gsm8k.GsmPool, config: GsmIcConfig) -> BuildOutput:
    lexicon, templates = load_lexicon(), load_templates()
    analyses = {p.id: analyse(p.question, p.solution, p.answer, lexicon, templates) for p in pool.problems}
    reasons, prepared = usability(pool, analyses, config, lexicon, templates)
    if config.base_ids is not None:
        chosen = select_listed(pool.problems, reasons, config.base_ids, {u.id: u.reason for u in pool.unjoined})
    else:
        chosen = select_default(pool.problems, reasons, config.n_two_step, config.n_more_steps, config.max_steps, _rng(config.seed, SELECTION_STREAM))
    bases = [base_row(p, analyses[p.id]) for p in chosen]
    quotas = cell_quotas(len(chosen), config.n_variants, _rng(config.seed, QUOTA_STREAM))
    variants: list[dict] = []
    for problem, base, quota in zip(chosen, bases, quotas):
        slots, rng = prepared[problem.id]
        variants.extend(make_variants(base, analyses[problem.id], slots, quota, rng))
    eval_rows, attempt = draw_eval(variants, config.eval_size, config.eval_seed)
    return BuildOutput(
        files=[
            DataFile("base.jsonl", bases, schema="gsm-ic.base"),
            DataFile("variants.jsonl", variants, schema="gsm-ic.variant"),
            DataFile("gsm-ic-4k.jsonl", eval_rows, schema="gsm-ic.gsm-ic-4k"),
        ],
        notes=_notes(pool, reasons, chosen, bases, variants, eval_rows, attempt, config),
    )


def _count(rows: list[dict], key) -> dict[str, int]:
    return dict(sorted(Counter(key(row) for row in rows).items()))


def _notes(pool, reasons, chosen, bases, variants, eval_rows, attempt, config) -> dict:
    usable = [p for p in pool.problems if not reasons[p.id]]
    excluded = [{"id": p.id, "reasons": [f"{kind}: {message}" for kind, message in reasons[p.id]]} for p in pool.problems if reasons[p.id]]
    return {
        "pool": {
            "problems": len(pool.problems) + len(pool.unjoined),
            "joined": len(pool.problems),
            "skipped_unjoined": [{"id": u.id, "reason": u.reason} for u in pool.unjoined],
            "usable": len(usable),
            "usable_by_steps": _count(usable, lambda p: str(p.n_steps)),
            "excluded": excluded,
            "excluded_by_reason": dict(sorted(Counter(kind for p in pool.problems for kind, _ in reasons[p.id]).items())),
        },
        "base_problems": len(chosen),
        "base_by_steps": _count(bases, lambda b: str(b["n_steps"])),
        "base_by_topic": _count(bases, lambda b: b["topic"]),
        "bases_with_pronoun_edit": sum(1 for v in variants if v["id"].endswith("-v0001") and v["edits"]),
        "variants": len(variants),
        "cells": _count(variants, lambda v: cell_key((v["sentence_label"], v["role_label"], v["number_label"]))),
        "factors": {label: _count(variants, lambda v, label=label: v[label]) for label in ("sentence_label", "role_label", "number_label")},
        "gsm_ic_4k": {"size": len(eval_rows), "seed": config.eval_seed, "attempt": attempt, "bases_covered": len({r["base_id"] for r in eval_rows})},
    }
