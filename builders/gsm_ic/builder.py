"""The GSM-IC builder: base problems, their variants, and the GSM-IC-4K evaluation ids."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
from pydantic import Field, model_validator

from ctxrobust.builders.base import BuildConfig, Builder, BuildOutput, DataFile
from ctxrobust.builders.gsm_ic import upstream_files
from ctxrobust.builders.gsm_ic.analysis import Analysis, analyse
from ctxrobust.builders.gsm_ic.lexicon import Lexicon, Reviewed, Templates, load_lexicon, load_reviewed, load_templates
from ctxrobust.builders.gsm_ic.numbers import known_numbers
from ctxrobust.builders.gsm_ic.selection import paper_step_mix, select_default, select_listed
from ctxrobust.builders.gsm_ic.variants import CELLS, NUMBER_LABELS, Slots, cell_key, make_variants, shortfalls, slots_for
from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import gsm8k

# independent random streams derived from the seed
SELECTION_STREAM, QUOTA_STREAM, VARIANT_STREAM = 1, 2, 3


MAX_BASE = 10_000  # bounds on the work of one build (the paper's: 100 base problems, 58,052 variants)
MAX_VARIANTS = 1_000_000
MAX_BASE_FILE_BYTES = 256 << 20  # a user's base_file: GSM8K's whole training split is 4 MB
# the paper's relations and names for the {role} slot [app. A]
PAPER_RELATIONS = ["father", "mother", "brother", "sister", "neighbor"]
PAPER_NAMES = ["Ada", "David", "Emma", "Jack", "John", "Mary", "Max", "Tom"]


class GsmIcConfig(BuildConfig):
    seed: int = Field(0, ge=0, description="seed of the base-problem draw and the variants")
    n_two_step: int = Field(60, ge=0, le=MAX_BASE, description="base problems with two steps [§3.1]")
    n_more_steps: int = Field(40, ge=0, le=MAX_BASE, description="base problems with three to max_steps steps")
    max_steps: int = Field(7, ge=3, le=100, description="the paper's base problems need two to seven steps [§3.1]")
    step_mix: dict[int, int] | None = Field(
        None, description="longer base problems by steps; default: the mix the paper's variant counts imply [app. A]"
    )
    base_ids: list[str] | None = Field(None, max_length=MAX_BASE, description='use these pool ids ("pool-0042") instead of a seeded draw')
    base_file: str | None = Field(
        None,
        description="a GSM8K-format JSONL of the user's problems ({question, answer}, optionally topic: one of the 16 "
        "topics of templates.json); every usable one (or those of "
        'base_ids, "user-0007" for line 7) becomes a base problem, steps counted from its solution; its sha256 goes to the manifest',
    )
    n_variants: int = Field(
        58052, ge=8, le=MAX_VARIANTS, description="the size of GSM-IC [§3.1]; spread evenly over base problems and the 8 cells"
    )
    numbers_per_label: int = Field(20, ge=1, le=1000, description="distinct inserted numbers per base problem and number label")
    relations: list[str] = Field(PAPER_RELATIONS, min_length=1, description='overlapped roles: "<person>\'s <relation>" [app. A]')
    names: list[str] = Field(PAPER_NAMES, min_length=1, description="nonoverlapped roles [app. A]")
    eval_size: int = Field(4000, ge=1, le=MAX_VARIANTS, description="GSM-IC-4K [§5]")
    eval_seed: int = Field(0, ge=0, description="seed of the GSM-IC-4K draw")

    @model_validator(mode="after")
    def _check(self) -> GsmIcConfig:
        if self.seed < 0 or self.eval_seed < 0:
            raise ValueError("seed and eval_seed must be >= 0")
        if self.max_steps < 3 or self.n_two_step < 0 or self.n_more_steps < 0 or self.numbers_per_label < 1:
            raise ValueError("max_steps must be >= 3 and counts >= 0 (numbers_per_label >= 1)")
        if self.base_file is not None and not self.base_file.strip():
            raise ValueError("base_file must name a file")
        if self.base_file is not None and self.base_ids is None:
            return self  # the number of base problems is known once the file is read (checked by the build)
        n_base = len(self.base_ids) if self.base_ids is not None else self.n_two_step + self.n_more_steps
        if n_base < 1:
            raise ValueError("at least one base problem is needed")
        if self.step_mix is not None and (
            any(k < 3 or k > self.max_steps or v < 0 for k, v in self.step_mix.items()) or sum(self.step_mix.values()) != self.n_more_steps
        ):
            raise ValueError(f"step_mix must map steps 3..max_steps to counts >= 0 that add up to n_more_steps ({self.n_more_steps})")
        if not self.relations or not self.names or any(not r.strip() for r in self.relations) or any(not n.strip() for n in self.names):
            raise ValueError("relations and names must be non-empty lists of non-empty strings")
        if self.n_variants < len(CELLS) * n_base:
            raise ValueError(
                f"n_variants must be at least {len(CELLS)} per base problem ({len(CELLS) * n_base}) so every cell is populated"
            )
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
        "topic_source": analysis.topic_source,
        "topic_keywords": analysis.topic_keywords,
        "topic_evidence": analysis.topic_evidence,
        "people": [person.name for person in analysis.people],
        "targets": analysis.targets,
        "money_question": analysis.money_question,
        "relations_present": analysis.relations_present,
        "open_pronouns": analysis.open_pronouns,
        "number_style": analysis.style,
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
        return [] if self.config.base_file else [gsm8k.POOL, gsm8k.TRAIN]

    def build(self) -> BuildOutput:
        if self.config.base_file:
            path = Path(self.config.base_file).expanduser()
            if not path.is_file():
                raise CtxRobustError(
                    f"gsm-ic: base_file {path} is not a file; give a GSM8K-format JSONL file (question, answer ending in '#### N')"
                )
            size = path.stat().st_size
            if size > MAX_BASE_FILE_BYTES:
                raise CtxRobustError(
                    f"gsm-ic: base_file {path} holds {size} bytes, more than the {MAX_BASE_FILE_BYTES} a file of base problems may hold"
                )
            pool = gsm8k.read_user_file(path)
            check_given_topics(pool, path, load_templates())
            output = build_from_pool(pool, self.config)
            output.notes["user_sources"] = {
                "base_file": {"file": path.name, "sha256": sha256_file(path), "problems": output.notes["pool"]["problems"]}
            }
            return output
        if self.store is None:
            raise CtxRobustError("gsm-ic needs the GSM8K snapshots; no source store was given")
        return build_from_pool(gsm8k.load(self.store), self.config)


def check_given_topics(pool: gsm8k.GsmPool, path: Path, templates: Templates) -> None:
    """Each topic a base_file line gives is one of templates.json's topics; else one line naming file, line and the names."""
    names = [t.name for t in templates.topics]
    for problem in pool.problems:
        if problem.topic is not None and problem.topic not in names:
            raise CtxRobustError(
                f"gsm-ic: {path}:{problem.pool.line}: topic {problem.topic!r} is not one of the {len(names)} topics "
                f"({', '.join(names)}); give one of them or leave the field out"
            )


def usability(
    pool: gsm8k.GsmPool,
    analyses: dict[str, Analysis],
    config: GsmIcConfig,
    lexicon: Lexicon,
    templates: Templates,
    reviewed: Reviewed,
    only: set[str] | None = None,
):
    """Why each joined pool problem cannot be a base problem (empty: it can), and the slots of those that can.

    Besides the analysis: 2..max_steps reasoning steps, and enough distinct sentences for the largest cell
    quota the configuration asks for, with templates shared by both number levels. With a base_file every usable
    problem is a base problem, so the quota grows as problems drop out: the check is repeated with the quota
    of the problems still usable until none drops out. `only`: the sentence check is made for these problems alone
    (a fixed selection: the reviewed default base set, base_ids); the others keep their analysis reasons.
    """
    reasons: dict[str, list[tuple[str, str]]] = {}
    prepared: dict[str, tuple[Slots, np.random.Generator]] = {}
    for problem in pool.problems:
        found = list(analyses[problem.id].problems)
        if not 2 <= problem.n_steps <= config.max_steps:
            found.append(("n_steps", f"{problem.n_steps} reasoning steps, outside 2..{config.max_steps}"))
        if not found and (only is None or problem.id in only):
            rng = _rng(config.seed, VARIANT_STREAM, problem.pool.line)
            slots = slots_for(analyses[problem.id], lexicon, templates, reviewed.templates_for(problem.id, problem.question), config, rng)
            prepared[problem.id] = (slots, rng)
        reasons[problem.id] = found
    while True:
        largest_quota = -(-config.n_variants // (_n_base(config, len(prepared)) * len(CELLS)))
        dropped = False
        for problem_id, (slots, _) in list(prepared.items()):
            short = shortfalls(slots, largest_quota)
            if short:
                reasons[problem_id].append(
                    (
                        "few_sentences",
                        f"{len(short)} of its topic/role levels ({short[0]}, ...) cannot give {largest_quota} distinct sentences "
                        "at both number levels from shared templates (lower n_variants or raise numbers_per_label)",
                    )
                )
                del prepared[problem_id]
                dropped = True
        if not dropped or not config.base_file or config.base_ids is not None or not prepared:
            return reasons, prepared


def _n_base(config: GsmIcConfig, usable: int) -> int:
    if config.base_ids is not None:
        return len(config.base_ids)
    if config.base_file:
        return max(1, usable)  # every usable one is a base problem
    return config.n_two_step + config.n_more_steps


def build_from_pool(pool: gsm8k.GsmPool, config: GsmIcConfig) -> BuildOutput:
    lexicon, templates, reviewed = load_lexicon(), load_templates(), load_reviewed()
    from_file = bool(config.base_file)
    analyses = {
        p.id: analyse(
            p.question,
            p.solution,
            p.answer,
            lexicon,
            templates,
            reviewed,
            p.id,
            config.relations,
            from_file=from_file,
            given_topic=p.topic,
            pool_sha256=p.pool.sha256,
        )
        for p in pool.problems
    }
    mix = config.step_mix or paper_step_mix(config.n_more_steps, config.max_steps)
    fixed = set(config.base_ids) if config.base_ids is not None else pinned_ids(config, mix, reviewed)
    reasons, prepared = usability(pool, analyses, config, lexicon, templates, reviewed, only=fixed)
    checked = "the base problems asked for" if fixed is not None else "every problem"
    mix_note = selection_note = None
    if config.base_ids is not None:
        chosen = select_listed(pool.problems, reasons, config.base_ids, {u.id: u.reason for u in pool.unjoined})
    elif config.base_file:
        chosen = [p for p in pool.problems if not reasons[p.id]]
        _check_user_counts(chosen, pool, reasons, config)
    else:
        chosen, selection_note = pinned_default(pool, reasons, config, mix, reviewed)
        if chosen is None and fixed is not None:  # the pinned set cannot be used: check every problem for the draw
            reasons, prepared = usability(pool, analyses, config, lexicon, templates, reviewed)
            checked = "every problem"
        if chosen is None:
            chosen, mix_note = select_default(pool.problems, reasons, config.n_two_step, mix, _rng(config.seed, SELECTION_STREAM))
    bases = [base_row(p, analyses[p.id]) for p in chosen]
    quotas = cell_quotas(len(chosen), config.n_variants, _rng(config.seed, QUOTA_STREAM))
    variants: list[dict] = []
    for problem, base, quota in zip(chosen, bases, quotas):
        slots, rng = prepared[problem.id]
        variants.extend(make_variants(base, analyses[problem.id], slots, quota, rng))
    eval_rows, attempt = draw_eval(variants, config.eval_size, config.eval_seed)
    kept = {p.id: analyses[p.id].pronoun_kept for p in chosen}
    notes = _notes(pool, reasons, chosen, bases, variants, eval_rows, attempt, config, kept)
    notes["pool"]["sentences_checked_for"] = checked
    if mix_note:
        notes["step_mix_note"] = mix_note
    if selection_note:
        notes["base_selection"] = selection_note
    return BuildOutput(
        files=[
            DataFile("base.jsonl", bases, schema="gsm-ic.base"),
            DataFile("variants.jsonl", variants, schema="gsm-ic.variant"),
            DataFile("gsm-ic-4k.jsonl", eval_rows, schema="gsm-ic.gsm-ic-4k"),
        ],
        notes=notes,
        extra_files=upstream_files.extra_files(variants),  # GSM-IC_2step.json, GSM-IC_mstep.json
    )


def pinned_ids(config: GsmIcConfig, mix: dict[int, int], reviewed: Reviewed) -> set[str] | None:
    """The reviewed default base set's ids when the configuration asks for the draw they came from, else None."""
    if config.base_file or config.base_ids is not None:
        return None
    default = GsmIcConfig()
    wanted = (reviewed.default_base.seed, default.n_two_step, default.n_more_steps, default.max_steps)
    if (config.seed, config.n_two_step, config.n_more_steps, config.max_steps) != wanted:
        return None
    return set(reviewed.default_base.ids) if mix == paper_step_mix(default.n_more_steps, default.max_steps) else None


def pinned_default(
    pool: gsm8k.GsmPool, reasons: dict[str, list[tuple[str, str]]], config: GsmIcConfig, mix: dict[int, int], reviewed: Reviewed
) -> tuple[list[gsm8k.BaseProblem] | None, str | None]:
    """The default build's reviewed base problems (reviewed.json default_base) when the configuration asks for the draw
    they came from (its seed, 60 + 40 problems, 2..7 steps, the paper's step mix) and each is usable with a reviewed
    entry for its very question; else (None, why not, or None when the configuration asks for another draw)."""
    pinned = reviewed.default_base
    default = GsmIcConfig()
    if (config.seed, config.n_two_step, config.n_more_steps, config.max_steps) != (
        pinned.seed,
        default.n_two_step,
        default.n_more_steps,
        default.max_steps,
    ) or mix != paper_step_mix(default.n_more_steps, default.max_steps):
        return None, None
    by_id = {p.id: p for p in pool.problems}
    for base_id in pinned.ids:
        problem = by_id.get(base_id)
        if problem is None:
            why = "not in the pool"
        elif reviewed.entry(base_id, problem.question) is None:
            why = "its question differs from the reviewed one"
        elif reasons[base_id]:
            why = reasons[base_id][0][1]
        else:
            continue
        return (
            None,
            f"the reviewed default base set (reviewed.json default_base) is not used: {base_id}: {why}; drew afresh with seed {config.seed}",
        )
    chosen = sorted((by_id[i] for i in pinned.ids), key=lambda p: p.id)
    steps = Counter(p.n_steps for p in chosen)
    if steps.get(2, 0) != config.n_two_step or any(steps.get(k, 0) != n for k, n in mix.items()):
        return (
            None,
            f"the reviewed default base set (reviewed.json default_base) does not have the step mix asked for; drew afresh with seed {config.seed}",
        )
    return chosen, (
        f"base problems: the {len(chosen)} of the reviewed default base set (reviewed.json default_base), drawn once by the seeded "
        f"step-mix draw with seed {pinned.seed} and reviewed per problem; the keyword topic rule does not redraw them"
    )


def _check_user_counts(chosen, pool, reasons, config: GsmIcConfig) -> None:
    if not chosen:
        first = next(iter(reasons.items()), ("", [("", "no problems")]))
        excluded = Counter(kind for found in reasons.values() for kind, _ in found)
        raise CtxRobustError(
            f"gsm-ic: no problem of base_file can be a base problem ({first[0]}: {first[1][0][1] if first[1] else 'usable'}; "
            f"excluded by reason: {', '.join(f'{kind} {n}' for kind, n in sorted(excluded.items()))}); "
            "see build_notes.pool.excluded of a build with base_ids, or give problems that name a person (and a topic field where "
            "the topic is undecided)"
        )
    if config.n_variants < len(CELLS) * len(chosen):
        raise CtxRobustError(
            f"gsm-ic: {len(chosen)} usable problems in base_file need n_variants >= {len(CELLS) * len(chosen)} so every cell is populated"
        )
    if not len(chosen) <= config.eval_size <= config.n_variants:
        raise CtxRobustError(f"gsm-ic: eval_size must lie between the number of base problems ({len(chosen)}) and n_variants")


def template_mix_distance(variants: list[dict]) -> dict[str, float]:
    """Per base problem, the total-variation distance between the template mixes of its in-range and out-of-range variants."""
    mixes: dict[str, dict[str, Counter]] = {}
    for v in variants:
        mixes.setdefault(v["base_id"], {label: Counter() for label in NUMBER_LABELS})[v["number_label"]][v["template_id"]] += 1
    out = {}
    for base_id, (a, b) in ((k, (m["in_range"], m["out_range"])) for k, m in mixes.items()):
        na, nb = sum(a.values()) or 1, sum(b.values()) or 1
        out[base_id] = 0.5 * sum(abs(a[t] / na - b[t] / nb) for t in set(a) | set(b))
    return out


def out_range_spread(variants: list[dict], bases: list[dict]) -> dict[str, int]:
    """Out-of-range numbers by where they lie: below l/10, or in (10r, 20r], (20r, 100r], (100r, 1000r] above the range."""
    top = {b["id"]: max(known_numbers(b["question"], b["solution"])) for b in bases}
    spread = Counter()
    for v in variants:
        if v["number_label"] != "out_range":
            continue
        ratio = int(v["number"]) / top[v["base_id"]]
        spread["below l/10" if ratio < 1 else "(10r, 20r]" if ratio <= 20 else "(20r, 100r]" if ratio <= 100 else "(100r, 1000r]"] += 1
    return dict(sorted(spread.items()))


def _count(rows: list[dict], key) -> dict[str, int]:
    return dict(sorted(Counter(key(row) for row in rows).items()))


def _notes(pool, reasons, chosen, bases, variants, eval_rows, attempt, config, pronouns_kept) -> dict:
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
        "bases_with_pronoun_kept": [{"id": b["id"], "reason": pronouns_kept[b["id"]]} for b in bases if pronouns_kept.get(b["id"])],
        "variants": len(variants),
        "cells": _count(variants, lambda v: cell_key((v["sentence_label"], v["role_label"], v["number_label"]))),
        "factors": {label: _count(variants, lambda v, label=label: v[label]) for label in ("sentence_label", "role_label", "number_label")},
        "base_by_topic_source": _count(bases, lambda b: b["topic_source"]),
        "template_mix_tv_max": round(max(template_mix_distance(variants).values()), 4),
        "out_range_spread": out_range_spread(variants, bases),
        "gsm_ic_4k": {
            "size": len(eval_rows),
            "seed": config.eval_seed,
            "attempt": attempt,
            "bases_covered": len({r["base_id"] for r in eval_rows}),
        },
    }
