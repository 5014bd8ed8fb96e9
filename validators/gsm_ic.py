"""GSM-IC checks: each variant's text, labels and answer are replayed from the item and its base problem.

Paper: Shi et al. 2023, Section 3.1 (factors, number rule), Table 1 (the sentence goes
before the question), Appendix A (pronoun rewording), Section 5 (GSM-IC-4K).
"""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Iterable

from builders.gsm_ic.insertion import apply_edits, insert_sentence, question_sentence_start
from builders.gsm_ic.numbers import known_numbers, number_label, numbers_in, parse_answer
from builders.gsm_ic.roles import role_label
from builders.gsm_ic.topics import sentence_label
from builders.gsm_ic.variants import CELLS, cell_key, render
from validators.registry import Failure, check

BASE = "base.jsonl"
VARIANTS = "variants.jsonl"
EVAL = "gsm-ic-4k.jsonl"


def _bases(release) -> dict[str, dict]:
    return {row["id"]: row for row in release.rows(BASE)}


@check("gsm-ic", "span_replay")
def span_replay(release) -> Iterable[Failure]:
    """Edits applied to original_question, then sentence + ' ' inserted at insert_offset, give new_question
    byte for byte; the offset is the start of the question sentence [tab. 1] [app. A]."""
    question_start: dict[tuple, int] = {}
    for row in release.iter_rows(VARIANTS):
        try:
            edited = apply_edits(row["original_question"], row["edits"])
        except ValueError as exc:
            yield Failure(VARIANTS, row["id"], f"edits do not apply to original_question: {exc}")
            continue
        expected_sentence = render(row["sentence_template"], row["role"], row["number"])
        if row["sentence"] != expected_sentence:
            yield Failure(VARIANTS, row["id"], f"sentence {row['sentence']!r} is not the template filled with role and number ({expected_sentence!r})")
        offset = row["insert_offset"]
        if not 0 <= offset <= len(edited):
            yield Failure(VARIANTS, row["id"], f"insert_offset {offset} lies outside the edited question (length {len(edited)})")
            continue
        rebuilt = insert_sentence(edited, offset, row["sentence"])
        if rebuilt != row["new_question"]:
            at = next((i for i, (a, b) in enumerate(zip(rebuilt, row["new_question"])) if a != b), min(len(rebuilt), len(row["new_question"])))
            yield Failure(VARIANTS, row["id"], f"new_question differs from the replayed insertion at character {at}")
        key = (row["original_question"], tuple(sorted((e["start"], e["end"], e["new"]) for e in row["edits"])))
        if key not in question_start:
            question_start[key] = question_sentence_start(edited)
        if offset != question_start[key]:
            yield Failure(VARIANTS, row["id"], f"insert_offset {offset} is not the start of the question sentence ({question_start[key]})")


@check("gsm-ic", "factor_replay")
def factor_replay(release) -> Iterable[Failure]:
    """number_label, role_label and sentence_label recomputed from the item and its base problem [§3.1]."""
    bases = _bases(release)
    known: dict[str, list[Fraction]] = {}
    number_labels: dict[tuple[str, int], str] = {}
    role_labels: dict[tuple[str, str], str] = {}
    for row in release.iter_rows(VARIANTS):
        base = bases.get(row["base_id"])
        if base is None:
            continue  # reported by answer_matches_base
        if row["base_id"] not in known:
            known[row["base_id"]] = known_numbers(base["question"], base["solution"])
        number = int(row["number"])
        if (row["base_id"], number) not in number_labels:
            number_labels[row["base_id"], number] = number_label(number, known[row["base_id"]])
        expected = number_labels[row["base_id"], number]
        if row["number_label"] != expected:
            yield Failure(VARIANTS, row["id"], f"number_label {row['number_label']!r}, but {number} is {expected} for the problem's numbers")
        if (row["role"], row["original_question"]) not in role_labels:
            role_labels[row["role"], row["original_question"]] = role_label(row["role"], row["original_question"])
        expected = role_labels[row["role"], row["original_question"]]
        if row["role_label"] != expected:
            yield Failure(VARIANTS, row["id"], f"role_label {row['role_label']!r}, but role {row['role']!r} is {expected}")
        if row["topic"] != base["topic"]:
            yield Failure(VARIANTS, row["id"], f"topic {row['topic']!r}, but the base problem's topic is {base['topic']!r}")
        expected = sentence_label(row["template_topics"], base["topic"])
        if row["sentence_label"] != expected:
            yield Failure(VARIANTS, row["id"], f"sentence_label {row['sentence_label']!r}, but the template is {expected} for topic {base['topic']!r}")


@check("gsm-ic", "answer_matches_base")
def answer_matches_base(release) -> Iterable[Failure]:
    """Every variant keeps its base problem's question, answer and step count."""
    bases = _bases(release)
    for row in release.iter_rows(VARIANTS):
        base = bases.get(row["base_id"])
        if base is None:
            yield Failure(VARIANTS, row["id"], f"base_id {row['base_id']} is not in {BASE}")
            continue
        for field, base_field in (("answer", "answer"), ("original_question", "question"), ("n_steps", "n_steps")):
            if row[field] != base[base_field]:
                yield Failure(VARIANTS, row["id"], f"{field} {row[field]!r} differs from base {base['id']} ({base[base_field]!r})")


@check("gsm-ic", "inserted_number")
def inserted_number(release) -> Iterable[Failure]:
    """The inserted number is not the answer and not a number of the problem, and appears in the sentence."""
    problem_numbers: dict[str, set[Fraction]] = {}
    for row in release.iter_rows(VARIANTS):
        number = Fraction(int(row["number"]))
        if number == parse_answer(row["answer"]):
            yield Failure(VARIANTS, row["id"], f"inserted number {row['number']} is the answer")
        question = row["original_question"]
        if question not in problem_numbers:
            problem_numbers[question] = numbers_in(question)
        if number in problem_numbers[question]:
            yield Failure(VARIANTS, row["id"], f"inserted number {row['number']} is a number of the problem")
        if row["number"] not in row["sentence"]:
            yield Failure(VARIANTS, row["id"], f"inserted number {row['number']} does not appear in the sentence")


@check("gsm-ic", "distinct_text")
def distinct_text(release) -> Iterable[Failure]:
    """No two variants have the same new_question, and none equals its original."""
    seen: dict[str, str] = {}
    for row in release.iter_rows(VARIANTS):
        text = row["new_question"]
        if text in seen:
            yield Failure(VARIANTS, row["id"], f"new_question is the same text as variant {seen[text]}")
        else:
            seen[text] = row["id"]
        if text == row["original_question"]:
            yield Failure(VARIANTS, row["id"], "new_question equals original_question")


@check("gsm-ic", "cell_coverage")
def cell_coverage(release) -> Iterable[Failure]:
    """Every base problem has variants in all 8 cells (topic x role x number) [§3.1]."""
    cells: dict[str, set] = defaultdict(set)
    for row in release.iter_rows(VARIANTS):
        cells[row["base_id"]].add((row["sentence_label"], row["role_label"], row["number_label"]))
    for base_id in sorted(_bases(release)):
        missing = [cell_key(c) for c in CELLS if c not in cells.get(base_id, set())]
        if missing:
            yield Failure(BASE, base_id, f"no variant in cell(s) {', '.join(missing)}")


@check("gsm-ic", "base_selection")
def base_selection(release) -> Iterable[Failure]:
    """The base problems are those the configuration asks for: listed ids, or n_two_step two-step and
    n_more_steps problems with 3..max_steps steps [§3.1]."""
    config = release.config
    bases = release.rows(BASE)
    max_steps = config.get("max_steps", 7)
    for base in bases:
        if not 2 <= base["n_steps"] <= max_steps:
            yield Failure(BASE, base["id"], f"n_steps {base['n_steps']} outside 2..{max_steps}")
    if config.get("base_ids") is not None:
        wanted, have = set(config["base_ids"]), {b["id"] for b in bases}
        for missing in sorted(wanted - have):
            yield Failure(BASE, missing, "listed in base_ids but not in the release")
        for extra in sorted(have - wanted):
            yield Failure(BASE, extra, "in the release but not listed in base_ids")
        return
    two = sum(1 for b in bases if b["n_steps"] == 2)
    more = len(bases) - two
    if two != config.get("n_two_step", 60) or more != config.get("n_more_steps", 40):
        yield Failure(BASE, None, f"{two} two-step and {more} longer base problems; the configuration asks for {config.get('n_two_step', 60)} and {config.get('n_more_steps', 40)}")


@check("gsm-ic", "gsm_ic_4k")
def gsm_ic_4k(release) -> Iterable[Failure]:
    """GSM-IC-4K: eval_size variants of variants.jsonl covering every base problem [§5]."""
    variant_base = {row["id"]: row["base_id"] for row in release.iter_rows(VARIANTS)}
    rows = release.rows(EVAL)
    size = release.config.get("eval_size", 4000)
    if len(rows) != size:
        yield Failure(EVAL, None, f"{len(rows)} rows, the configuration asks for {size}")
    for row in rows:
        if row["id"] not in variant_base:
            yield Failure(EVAL, row["id"], f"not a variant of {VARIANTS}")
        elif variant_base[row["id"]] != row["base_id"]:
            yield Failure(EVAL, row["id"], f"base_id {row['base_id']}, but the variant's base is {variant_base[row['id']]}")
    covered = {row["base_id"] for row in rows}
    for base_id in sorted({b["id"] for b in release.rows(BASE)} - covered):
        yield Failure(EVAL, base_id, "base problem has no variant in GSM-IC-4K")
