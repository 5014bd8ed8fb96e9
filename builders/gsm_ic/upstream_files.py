"""The variants in the format of the original GSM-IC release (Shi et al., 2023; the files of
github.com/google-research-datasets/GSM-IC): `GSM-IC_2step.json` holds the variants of two-step base
problems, `GSM-IC_mstep.json` those of base problems with more steps [§3.1]. Each is a JSON array of
records with the upstream fields and value types:

    original_question, new_question, answer (strings), n_steps (integer),
    role, number, sentence_template (strings; sentence_template.format(role=role, number=number) is the
    inserted sentence, found in new_question), role_label ("overlapped" / "nonoverlapped"),
    number_label ("in_range" / "out_range"), sentence_label ("in_topic" / "out_topic")

so code written for the original files runs on these unchanged. Every record restates one row of
variants.jsonl, in id order; the `upstream_files` check replays them from it.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

from ctxrobust.builders.base import ExtraFile
from ctxrobust.errors import CtxRobustError

TWO_STEP = "GSM-IC_2step.json"
MORE_STEPS = "GSM-IC_mstep.json"
FILES = (TWO_STEP, MORE_STEPS)
MIRRORS = "variants.jsonl"
SCHEMA = "gsm-ic.upstream"
FIELDS = (
    "original_question",
    "new_question",
    "answer",
    "n_steps",
    "role",
    "number",
    "sentence_template",
    "role_label",
    "number_label",
    "sentence_label",
)
# the upstream files name the off-topic level "out_topic"; the other labels are spelt alike
SENTENCE_LABELS = {"in_topic": "in_topic", "off_topic": "out_topic"}
NUMBER_SLOTS = ("number", "money")  # the template fields that carry the inserted number
WRITTEN_NUMBER = re.compile(r"[0-9](?:[0-9,]*[0-9])?")
DESCRIPTIONS = {
    TWO_STEP: "The variants of the two-step base problems in the format of the original GSM-IC_2step.json: a JSON array of "
    "records with its fields (original_question, new_question, answer, n_steps, role, number, sentence_template, role_label, "
    "number_label, sentence_label), one record per variant of a two-step base problem, in id order.",
    MORE_STEPS: "The variants of the base problems with more than two steps in the format of the original GSM-IC_mstep.json "
    "(the fields of GSM-IC_2step.json), one record per variant of such a base problem, in id order.",
}


def file_of(n_steps: int) -> str:
    """[§3.1] the upstream split of a base problem: two steps, or more."""
    return TWO_STEP if n_steps == 2 else MORE_STEPS


def _escape(literal: str) -> str:
    return literal.replace("{", "{{").replace("}", "}}")


@lru_cache(maxsize=4096)
def _parts(template: str) -> tuple[tuple[str, str | None], ...]:
    """(literal, field) pairs of a template whose fields are role and the number slots only."""
    try:
        parts = tuple((literal, field) for literal, field, _, _ in string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"sentence_template {template!r} does not parse ({exc})") from None
    fields = [field for _, field in parts if field is not None]
    if any(field != "role" and field not in NUMBER_SLOTS for field in fields):
        raise ValueError(f"sentence_template {template!r} has a field besides {{role}}, {{number}} and {{money}}")
    if not any(field in NUMBER_SLOTS for field in fields):
        raise ValueError(f"sentence_template {template!r} has no number")
    return parts


def _fills(parts, role: str, sentence: str) -> list[str]:
    """What the sentence writes at each number slot, the rest of it matched to the template filled with `role`
    (its first letter may be capitalised)."""
    pieces, current = [], []
    for literal, field in parts:
        current.append(literal)
        if field == "role":
            current.append(role)
        elif field is not None:
            pieces.append("".join(current))
            current = []
    pieces.append("".join(current))
    head, last = pieces[0], pieces[-1]
    if sentence[: len(head)] not in (head, head[:1].upper() + head[1:]):
        raise ValueError(f"sentence {sentence!r} does not begin as its template filled with role {role!r} ({head!r})")
    fills, at = [], len(head)
    for piece in pieces[1:-1]:
        found = sentence.find(piece, at + 1)
        if found < 0:
            raise ValueError(f"sentence {sentence!r} lacks {piece!r} of its template")
        fills.append(sentence[at:found])
        at = found + len(piece)
    if not sentence.endswith(last) or len(sentence) - len(last) <= at:
        raise ValueError(f"sentence {sentence!r} does not end as its template filled with role {role!r} ({last!r})")
    fills.append(sentence[at : len(sentence) - len(last)])
    return fills


def upstream_template(template: str, role: str, number: str, sentence: str) -> tuple[str, str]:
    """(sentence_template, number) in the upstream form for a variant: only {role} and {number}, the number as the
    sentence writes it ("24,000"), anything written around it ("$", " dollars") and the sentence's capital letter
    part of the template, so that sentence_template.format(role=role, number=number) == sentence.
    ValueError names what does not fit."""
    parts = _parts(template)
    fills = iter(_fills(parts, role, sentence))
    out, written_numbers = [], set()
    for literal, field in parts:
        out.append(_escape(literal))
        if field == "role":
            out.append("{role}")
        elif field is not None:
            text = next(fills)
            runs = WRITTEN_NUMBER.findall(text)
            if len(runs) != 1 or runs[0].replace(",", "") != number:
                raise ValueError(f"the sentence writes {text!r} where the number {number} goes")
            before, _, after = text.partition(runs[0])
            out.append(_escape(before) + "{number}" + _escape(after))
            written_numbers.add(runs[0])
    if len(written_numbers) != 1:
        raise ValueError(f"the sentence writes the number {number} in several ways ({', '.join(sorted(written_numbers))})")
    upstream, written = "".join(out), written_numbers.pop()
    if upstream[:1].isalpha() and sentence[:1] == upstream[:1].upper():
        upstream = upstream[:1].upper() + upstream[1:]  # the sentence's capital letter
    if upstream.format(role=role, number=written) != sentence:
        raise ValueError(f"{upstream!r} filled with role {role!r} and number {written!r} does not give the sentence {sentence!r}")
    return upstream, written


def upstream_record(variant: dict) -> dict:
    """One variants.jsonl row as a record of the original files (ValueError naming what does not fit)."""
    if variant["sentence"] not in variant["new_question"]:
        raise ValueError("the sentence is not in new_question")
    if variant["sentence_label"] not in SENTENCE_LABELS:
        raise ValueError(f"sentence_label {variant['sentence_label']!r} is not one of {', '.join(SENTENCE_LABELS)}")
    template, number = upstream_template(variant["sentence_template"], variant["role"], variant["number"], variant["sentence"])
    return {
        "original_question": variant["original_question"],
        "new_question": variant["new_question"],
        "answer": variant["answer"],
        "n_steps": variant["n_steps"],
        "role": variant["role"],
        "number": number,
        "sentence_template": template,
        "role_label": variant["role_label"],
        "number_label": variant["number_label"],
        "sentence_label": SENTENCE_LABELS[variant["sentence_label"]],
    }


def expected_records(variants: list[dict]) -> tuple[dict[str, list[tuple[str, dict]]], list[tuple[str, str]]]:
    """Per upstream file, (variant id, record) in id order; and (variant id, reason) for rows that give no record."""
    files: dict[str, list[tuple[str, dict]]] = {name: [] for name in FILES}
    problems = []
    for variant in sorted(variants, key=lambda row: str(row["id"])):
        try:
            files[file_of(variant["n_steps"])].append((variant["id"], upstream_record(variant)))
        except (KeyError, TypeError, ValueError) as exc:
            problems.append((str(variant.get("id")), str(exc) if not isinstance(exc, KeyError) else f"lacks field {exc}"))
    return files, problems


def extra_files(variants: list[dict]) -> list[ExtraFile]:
    """The two upstream-format files of a build, declared for the release writer."""
    files, problems = expected_records(variants)
    if problems:
        item, reason = problems[0]
        raise CtxRobustError(f"gsm-ic: variant {item} cannot be written in the upstream GSM-IC format: {reason}")
    return [
        ExtraFile(name, [record for _, record in files[name]], DESCRIPTIONS[name], format="json", schema=SCHEMA, mirrors=MIRRORS)
        for name in FILES
    ]
