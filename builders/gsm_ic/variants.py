"""Variants of one base problem: one irrelevant sentence per variant, factors crossed [§3.1] [fig. 1].

For each of the 8 cells (topic x role x number) the candidates are every
(template, role, number) of that cell whose number lies in the template's bounds;
the cell's quota of variants is drawn from them uniformly without replacement with
the problem's own seeded generator.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from fractions import Fraction
from itertools import product

import numpy as np

from ctxrobust.builders.gsm_ic.analysis import Analysis
from ctxrobust.builders.gsm_ic.insertion import apply_edits, insert_sentence
from ctxrobust.builders.gsm_ic.lexicon import Lexicon, Template, Templates
from ctxrobust.builders.gsm_ic.numbers import pick_numbers
from ctxrobust.builders.gsm_ic.roles import nonoverlapping_names, overlapping_roles
from ctxrobust.builders.gsm_ic.topics import in_topic_templates, off_topic_templates
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
class Candidates:
    """The (template, role, number) triples of one cell, in template, role, number order, indexed without listing them."""

    templates: list[Template]
    roles: list[str]
    numbers: list[list[int]]  # per template: the cell's numbers within its bounds

    def __len__(self) -> int:
        return len(self.roles) * sum(len(n) for n in self.numbers)

    def pick(self, indices: np.ndarray) -> list[tuple[Template, str, int]]:
        ends = np.cumsum([len(self.roles) * len(n) for n in self.numbers])
        out = []
        for index in indices.tolist():
            t = int(np.searchsorted(ends, index, side="right"))
            r, n = divmod(index - (int(ends[t - 1]) if t else 0), len(self.numbers[t]))
            out.append((self.templates[t], self.roles[r], self.numbers[t][n]))
        return out


@dataclass(frozen=True)
class Slots:
    """What may fill each factor level for one base problem."""

    templates: dict[str, list[Template]]
    roles: dict[str, list[str]]
    numbers: dict[str, list[int]]

    def candidates(self, cell: tuple[str, str, str]) -> Candidates:
        sentence_label, role_label, number_label = cell
        templates, numbers = self.templates[sentence_label], self.numbers[number_label]  # numbers: sorted
        fitting = [numbers[bisect_left(numbers, t.min):bisect_right(numbers, t.max) if t.max is not None else None] for t in templates]
        return Candidates(templates, self.roles[role_label], fitting)


def slots_for(analysis: Analysis, lexicon: Lexicon, templates: Templates, numbers_per_label: int, rng: np.random.Generator) -> Slots:
    # the inserted number (a whole number >= 2) is never the answer, nor a number of the problem or its solution
    forbidden: set[Fraction] = set(analysis.known) | {analysis.answer}
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
        candidates, quota = slots.candidates(cell), quotas[cell]
        if len(candidates) < quota:
            raise CtxRobustError(
                f"base problem {base['id']}: only {len(candidates)} distinct sentences for cell {cell_key(cell)} but {quota} "
                "are needed; lower n_variants or raise numbers_per_label"
            )
        for template, role, number in candidates.pick(np.sort(rng.choice(len(candidates), size=quota, replace=False))):
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
