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
    "number_label, sentence_label), one per row of variants.jsonl, in id order.",
    MORE_STEPS: "The variants of the base problems with more than two steps in the format of the original GSM-IC_mstep.json "
    "(the fields of GSM-IC_2step.json), one record per row of variants.jsonl, in id order.",
}


def file_of(n_steps: int) -> str:
    """[§3.1] the upstream split of a base problem: two steps, or more."""
    return TWO_STEP if n_steps == 2 else MORE_STEPS


def _letter_insensitive(text: str) -> str:
    """A pattern for `text` whose first letter may be capitalised (the sentence's first letter is)."""
    if not text or not text[0].isalpha():
        return re.escape(text)
    return f"[{re.escape(text[0].lower())}{re.escape(text[0].upper())}]" + re.escape(text[1:])


def _escape(literal: str) -> str:
    return literal.replace("{", "{{").replace("}", "}}")


def upstream_template(template: str, role: str, number: str, sentence: str) -> tuple[str, str]:
    """(sentence_template, number) in the upstream form for a variant: only {role} and {number}, the number as the
    sentence writes it ("24,000"), anything written around it ("$", " dollars") and the sentence's capital letter
    part of the template, so that sentence_template.format(role=role, number=number) == sentence.
    ValueError names what does not fit."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"sentence_template {template!r} does not parse ({exc})") from None
    pattern, slots = [], []
    for literal, field, _, _ in parts:
        if literal:
            pattern.append(("literal", literal))
        if field is None:
            continue
        if field == "role":
            pattern.append(("role", role))
        elif field in NUMBER_SLOTS:
            pattern.append(("number", field))
            slots.append(field)
        else:
            raise ValueError(f"sentence_template {template!r} has a field {{{field}}} besides role, number and money")
    if not slots:
        raise ValueError(f"sentence_template {template!r} has no number")
    regex = []
    for position, (kind, value) in enumerate(pattern):
        if kind == "number":
            regex.append(f"(?P<n{position}>.+?)")
        else:
            regex.append(f"(?P<t{position}>{_letter_insensitive(value) if position == 0 else re.escape(value)})")
    found = re.fullmatch("".join(regex), sentence, flags=re.DOTALL)
    if found is None:
        raise ValueError(f"sentence {sentence!r} is not sentence_template {template!r} filled with role {role!r}")
    out, written_numbers = [], set()
    for position, (kind, _) in enumerate(pattern):
        text = found.group(f"n{position}" if kind == "number" else f"t{position}")
        if kind == "role":
            if text != role:
                raise ValueError(f"the sentence writes the role as {text!r}, not as {role!r}")
            out.append("{role}")
        elif kind == "literal":
            out.append(_escape(text))
        else:
            runs = WRITTEN_NUMBER.findall(text)
            if len(runs) != 1 or runs[0].replace(",", "") != number:
                raise ValueError(f"the sentence writes {text!r} where the number {number} goes")
            before, _, after = text.partition(runs[0])
            out.append(_escape(before) + "{number}" + _escape(after))
            written_numbers.add(runs[0])
    if len(written_numbers) != 1:
        raise ValueError(f"the sentence writes the number {number} in several ways ({', '.join(sorted(written_numbers))})")
    upstream, written = "".join(out), written_numbers.pop()
    if upstream.format(role=role, number=written) != sentence:
        raise ValueError(f"{upstream!r} filled with role and number does not give the sentence {sentence!r}")
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
