"""Variants of one base problem: one irrelevant sentence per variant, factors crossed [§3.1] [fig. 1].

For each topic level and role level, the templates that can serve both number
levels are given the same share of variants at both levels (so the number factor
is independent of the template); within a template and level, (role, number)
pairs are drawn uniformly without replacement with the problem's own seeded
generator. Templates and roles that break an irrelevance rule (irrelevance.py)
are never candidates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import product

import numpy as np

from ctxrobust.builders.gsm_ic import irrelevance, magnitudes
from ctxrobust.builders.gsm_ic.analysis import Analysis
from ctxrobust.builders.gsm_ic.insertion import apply_edits, insert_sentence
from ctxrobust.builders.gsm_ic.lexicon import Lexicon, Template, Templates
from ctxrobust.builders.gsm_ic.numbers import NumberDraw, format_money, format_number
from ctxrobust.builders.gsm_ic.roles import nonoverlapping_names, overlapping_roles
from ctxrobust.builders.gsm_ic.topics import in_topic_templates, off_topic_templates
from ctxrobust.errors import CtxRobustError

SENTENCE_LABELS = ("in_topic", "off_topic")
ROLE_LABELS = ("overlapped", "nonoverlapped")
NUMBER_LABELS = ("in_range", "out_range")
CELLS: tuple[tuple[str, str, str], ...] = tuple(product(SENTENCE_LABELS, ROLE_LABELS, NUMBER_LABELS))


def cell_key(cell: tuple[str, str, str]) -> str:
    return "/".join(cell)


def render(template_text: str, role: str, number: int | str, style: dict | None = None, identifier: bool = False) -> str:
    """The sentence a template gives for a role and a number, first letter capitalised; the number written as the
    problem writes numbers (numbers.format_number; {money}: "$40" or "40 dollars"), an identifier template's
    number as plain digits [§3.1]."""
    value = int(number)
    style = style or {}
    sentence = template_text.format(role=role, number=format_number(value, style, identifier), money=format_money(value, style))
    return sentence[:1].upper() + sentence[1:]


def template_allowed(template: Template, analysis: Analysis) -> str | None:
    """Why a template may not be used for this problem (irrelevance rules), or None."""
    bare = template.text.replace("{role}", " ").replace("{number}", " ").replace("{money}", " dollars ")
    named = irrelevance.names_target(bare, analysis.targets)
    if named:
        return f"target_not_named: names {named[0]!r}"
    if analysis.money_question and irrelevance.template_gives_money(template.text):
        return "no_money_in_money_question"
    return None


def role_allowed(role: str, analysis: Analysis, name_genders: dict[str, str | None]) -> bool:
    """A role that names no target word, and that no open pronoun of the question could be read as."""
    if irrelevance.names_target(role, analysis.targets):
        return False
    if analysis.open_pronouns:
        gender = irrelevance.role_gender(role, name_genders)
        return gender is not None and gender not in analysis.open_pronouns
    return True


@dataclass
class Slots:
    """What may fill each factor level for one base problem. Numbers are drawn per template and number level,
    inside the magnitudes the template reads with (its min and max), each from its own seeded stream."""

    templates: dict[str, list[Template]]
    roles: dict[str, list[str]]
    rule: NumberDraw
    count: int  # distinct numbers per template and number level
    seed: int
    drawn: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    def fitting(self, template: Template, number_label: str) -> list[int]:
        """The numbers (sorted) this template may take at this number level [§3.1], within its bounds."""
        key = (template.id, number_label)
        if key not in self.drawn:
            digest = hashlib.sha256(f"{template.id}\0{number_label}".encode()).digest()
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([self.seed, int.from_bytes(digest[:8], "big")])))
            low, high = magnitudes.bounds(template)
            self.drawn[key] = self.rule.draw(number_label, self.count, rng, low, high)
        return self.drawn[key]

    def usable_templates(self, sentence_label: str, role_label: str, quota: int) -> list[Template]:
        """Templates that can give ceil(quota / their count) distinct sentences at both number levels, so both
        levels can share one template mix [issue rule: number factor independent of the template]; a template
        whose bounds leave too few numbers gives way to the others, never to a number outside its bounds."""
        chosen = list(self.templates[sentence_label])
        n_roles = len(self.roles[role_label])
        while chosen:
            need = -(-quota // len(chosen))
            kept = [t for t in chosen if min(len(self.fitting(t, label)) for label in NUMBER_LABELS) * n_roles >= need]
            if len(kept) == len(chosen):
                return chosen
            chosen = kept
        return []


def slots_for(
    analysis: Analysis, lexicon: Lexicon, templates: Templates, own_templates: list[Template], config, rng: np.random.Generator
) -> Slots:
    """The templates, roles and number streams of one base problem. `own_templates`: the in-topic templates written
    for it (reviewed.json), else the topic's shared in-topic templates are used."""
    # the inserted number (a whole number >= 2) is never the answer, nor a number of the problem or its solution
    forbidden: set[Fraction] = set(analysis.known) | ({analysis.answer} if analysis.answer is not None else set())
    in_topic = own_templates or in_topic_templates(analysis.topic, templates)
    name_genders = {name: lexicon.gender_of(name) for name in config.names}
    overlapped = overlapping_roles(analysis.people, config.relations, analysis.relations_present)
    nonoverlapped = nonoverlapping_names(analysis.question, analysis.solution, config.names)
    return Slots(
        templates={
            "in_topic": [t for t in in_topic if template_allowed(t, analysis) is None],
            "off_topic": [t for t in off_topic_templates(analysis.topic, templates) if template_allowed(t, analysis) is None],
        },
        roles={
            "overlapped": [r for r in overlapped if role_allowed(r, analysis, name_genders)],
            "nonoverlapped": [r for r in nonoverlapped if role_allowed(r, analysis, name_genders)],
        },
        rule=NumberDraw(list(analysis.known), forbidden),
        count=config.numbers_per_label,
        seed=int(rng.integers(2**63)),
    )


def shortfalls(slots: Slots, quota: int) -> list[str]:
    """The (topic, role) pairs whose templates cannot hold `quota` variants per number level."""
    return [f"{s}/{r}" for s in SENTENCE_LABELS for r in ROLE_LABELS if not slots.usable_templates(s, r, quota)]


def template_counts(templates: list[Template], quotas: dict[str, int], rng: np.random.Generator) -> dict[str, list[int]]:
    """Per number level, how many variants each template gets: the larger quota spread evenly in a seeded order,
    the smaller one the same less one; so the two levels' template mixes differ by at most 1/quota."""
    n, top = len(templates), max(quotas.values())
    rank = rng.permutation(n)
    share, extra = divmod(top, n)
    counts = [share + (int(rank[t]) < extra) for t in range(n)]
    out = {}
    for label, quota in quotas.items():
        level = list(counts)
        for _ in range(top - quota):  # take from the templates last in the seeded order that still have one
            t = max((t for t in range(n) if level[t] > 0), key=lambda t: (level[t], int(rank[t])))
            level[t] -= 1
        out[label] = level
    return out


def make_variants(
    base: dict, analysis: Analysis, slots: Slots, quotas: dict[tuple[str, str, str], int], rng: np.random.Generator
) -> list[dict]:
    """The variant rows of one base problem (`base`: its base.jsonl row)."""
    edits = [edit.as_row() for edit in analysis.edits]
    edited = apply_edits(base["question"], edits)
    offset = analysis.insert_offset
    rows: list[dict] = []
    for sentence_label in SENTENCE_LABELS:
        for role_label in ROLE_LABELS:
            level_quotas = {n: quotas[(sentence_label, role_label, n)] for n in NUMBER_LABELS}
            templates = slots.usable_templates(sentence_label, role_label, max(level_quotas.values()))
            if not templates:
                raise CtxRobustError(
                    f"base problem {base['id']}: too few distinct sentences for {sentence_label}/{role_label} "
                    f"({max(level_quotas.values())} per number level are needed); lower n_variants or raise numbers_per_label"
                )
            counts = template_counts(templates, level_quotas, rng)
            roles = slots.roles[role_label]
            for number_label in NUMBER_LABELS:
                for template, count in zip(templates, counts[number_label]):
                    numbers = slots.fitting(template, number_label)
                    for index in np.sort(rng.choice(len(roles) * len(numbers), size=count, replace=False)).tolist():
                        role, number = roles[index // len(numbers)], numbers[index % len(numbers)]
                        rows.append(
                            _row(base, analysis, template, role, number, edited, offset, edits, (sentence_label, role_label, number_label))
                        )
    rows.sort(key=lambda r: CELLS.index((r["sentence_label"], r["role_label"], r["number_label"])))
    for number, row in enumerate(rows, start=1):
        row["id"] = f"{base['id']}-v{number:04d}"
    return rows


def _row(base, analysis, template, role, number, edited, offset, edits, cell) -> dict:
    sentence = render(template.text, role, number, analysis.style, magnitudes.is_identifier(template))
    sentence_label, role_label, number_label = cell
    return {
        "base_id": base["id"],
        "original_question": base["question"],
        "new_question": insert_sentence(edited, offset, sentence),
        "answer": base["answer"],
        "n_steps": base["n_steps"],
        "role": role,
        "number": str(number),
        "sentence_template": template.text,
        "template_id": template.id,
        "template_topics": list(template.topics),
        "topic": analysis.topic,
        "sentence": sentence,
        "insert_offset": offset,
        "edits": edits,
        "sentence_label": sentence_label,
        "role_label": role_label,
        "number_label": number_label,
    }
