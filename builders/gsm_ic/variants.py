"""Variants of one base problem: one irrelevant sentence per variant, factors crossed [§3.1] [fig. 1].

For each of the 8 cells (topic x role x number) the candidates are every
(template, role, number) of that cell; the cell's quota of variants is drawn from
them uniformly without replacement with the problem's own seeded generator.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import product

import numpy as np

from builders.gsm_ic.analysis import Analysis
from builders.gsm_ic.insertion import apply_edits, insert_sentence
from builders.gsm_ic.lexicon import Lexicon, Template, Templates
from builders.gsm_ic.numbers import pick_numbers
from builders.gsm_ic.roles import nonoverlapping_names, overlapping_roles
from builders.gsm_ic.topics import in_topic_templates, off_topic_templates
from ctxrobust.errors import CtxRobustError

SENTENCE_LABELS = ("in_topic", "off_topic")
ROLE_LABELS = ("overlapped", "nonoverlapped")
NUMBER_LABELS = ("in_range", "out_range")
CELLS: tuple[tuple[str, str, str], ...] = tuple(product(SENTENCE_LABELS, ROLE_LABELS, NUMBER_LABELS))


def cell_key(cell: tuple[str, str, str]) -> str:
    return "/".join(cell)


def render(template_text: str, role: str, number: str) -> str:
    """The sentence a template gives for a role and a number, first letter capitalised."""
    sentence = template_text.format(role=role, number=number)
    return sentence[:1].upper() + sentence[1:]


@dataclass(frozen=True)
class Slots:
    """What may fill each factor level for one base problem."""

    templates: dict[str, list[Template]]
    roles: dict[str, list[str]]
    numbers: dict[str, list[int]]


def slots_for(analysis: Analysis, lexicon: Lexicon, templates: Templates, numbers_per_label: int, rng: np.random.Generator) -> Slots:
    # the inserted number is never the answer, nor a number of the problem or its solution
    forbidden: set[Fraction] = analysis.problem_numbers | analysis.solution_numbers | {analysis.answer}
    return Slots(
        templates={"in_topic": in_topic_templates(analysis.topic, templates), "off_topic": off_topic_templates(analysis.topic, templates)},
        roles={
            "overlapped": overlapping_roles(analysis.people, lexicon),
            "nonoverlapped": nonoverlapping_names(analysis.question, analysis.solution, lexicon),
        },
        numbers={label: pick_numbers(analysis.known, label, forbidden, numbers_per_label, rng) for label in NUMBER_LABELS},
    )


def make_variants(base: dict, analysis: Analysis, slots: Slots, quotas: dict[tuple[str, str, str], int], rng: np.random.Generator) -> list[dict]:
    """The variant rows of one base problem (`base`: its base.jsonl row)."""
    edits = [edit.as_row() for edit in analysis.edits]
    edited = apply_edits(base["question"], edits)
    offset = analysis.insert_offset
    rows: list[dict] = []
    for cell in CELLS:
        sentence_label, role_label, number_label = cell
        templates, roles, numbers = slots.templates[sentence_label], slots.roles[role_label], slots.numbers[number_label]
        size, quota = len(templates) * len(roles) * len(numbers), quotas[cell]
        if size < quota:
            raise CtxRobustError(
                f"base problem {base['id']}: only {size} distinct sentences for cell {cell_key(cell)} but {quota} "
                "are needed; lower n_variants or raise numbers_per_label"
            )
        # index i of the product templates x roles x numbers, in that order (itertools.product order)
        for index in np.sort(rng.choice(size, size=quota, replace=False)).tolist():
            rest, n = divmod(index, len(numbers))
            t, r = divmod(rest, len(roles))
            template, role, number = templates[t], roles[r], numbers[n]
            sentence = render(template.text, role, str(number))
            rows.append(
                {
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
            )
    for number, row in enumerate(rows, start=1):
        row["id"] = f"{base['id']}-v{number:04d}"
    return rows
