"""CondAmbigQA condition candidates: the separate condition supplement (paper Section 3.2, Appendix A.3 Table 8).

A fact pair is two properties (interpretations) of one CondAmbigQA question
whose short answers differ. Options are short answers, and the released file
gives a long-form paragraph per property, so the short answers come from the
project's review (review/condition_answers.jsonl): per property, a short
restated condition, the answer, and a context stating it, extracted from (or
restating) the passage it cites. The question names the target condition; G
and S are the two properties' reviewed contexts; F is G with the gold
substituted; distractors come from the same question's other properties or
the extra values the review records for it. At most three items per question
(selection's cluster cap); items go to condition.jsonl, never the main split.

A property without a review row is used only when its groundtruth already is
one short answer (a user file in the annotation schema); G and S then restate
it with the fixed template.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, pair_specs, templates
from ctxrobust.builders.misleadqa.distractors import Pool, with_distractors
from ctxrobust.builders.misleadqa.normalise import answer_key, mentions, word_count
from ctxrobust.builders.misleadqa.scopes import canonical_condition
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.condambigqa import CondAmbigQARecord, Property
from ctxrobust.sources.facts import Provenance, Scope

REVIEW = Path(__file__).with_name("review") / "condition_answers.jsonl"
MAX_ANSWER_WORDS = 6  # options are short answers; a sentence-long groundtruth cannot be an option
MAX_REVIEW_BYTES = 4_000_000
METHODS = {"extract": "extract", "restated": "restated"}  # review method -> item construction value
ANSWER_ROW = {"question_id", "property", "groundtruth_sha256", "condition", "answer", "reviewer"}
EXTRA_ROW = {"question_id", "extra_distractor", "citation", "reviewer"}


@dataclass(frozen=True)
class Member:
    """One property as a side of a fact pair: its short answer and the context stating it, or why it has none."""

    prop: Property
    condition: str  # the condition the question names (the review's restatement, else the upstream text)
    answer: str | None
    context: str | None
    construction: str  # extract | restatement | template
    citation: str | None
    problem: tuple[str, str] | None  # (Excluded reason, detail) when the property cannot be a side


def _fail(number: int, message: str) -> CtxRobustError:
    return CtxRobustError(f"{REVIEW.name}:{number}: {message}")


def _check_row(number: int, row) -> dict:
    if not isinstance(row, dict) or not isinstance(row.get("question_id"), str):
        raise _fail(number, "expected an object with a question_id")
    if "extra_distractor" in row:
        if not EXTRA_ROW <= set(row) or not all(isinstance(row[k], str) and row[k].strip() for k in EXTRA_ROW):
            raise _fail(number, f"an extra-distractor row needs non-empty strings {sorted(EXTRA_ROW)}")
        if not row["citation"].split(".", 1)[0].isdigit():
            raise _fail(number, "an extra-distractor row's citation must read 'N. Title'")
        return row
    if not ANSWER_ROW <= set(row) or not isinstance(row["property"], int) or not isinstance(row["groundtruth_sha256"], str):
        raise _fail(number, f"an answer row needs {sorted(ANSWER_ROW)} (property an integer)")
    if not isinstance(row["condition"], str) or not row["condition"].strip():
        raise _fail(number, "field 'condition' must be a non-empty string")
    answer = row["answer"]
    if answer is None:
        if not isinstance(row.get("reason"), str) or not row["reason"].strip():
            raise _fail(number, "a row with answer null needs a reason")
        return row
    if not isinstance(answer, str) or not 1 <= word_count(answer) <= MAX_ANSWER_WORDS:
        raise _fail(number, f"field 'answer' must be 1-{MAX_ANSWER_WORDS} words, or null with a reason")
    context, method, citation = row.get("context"), row.get("method"), row.get("citation")
    if not isinstance(context, str) or answer not in context:
        raise _fail(number, f"field 'context' must be a string containing the answer {answer!r} verbatim")
    if method not in METHODS:
        raise _fail(number, f"field 'method' must be one of {sorted(METHODS)}")
    if not isinstance(citation, str) or not citation.strip():
        raise _fail(number, "field 'citation' must name the passage the answer rests on ('N. Title')")
    return row


@lru_cache(maxsize=4)
def review_rows(path: Path = REVIEW) -> tuple[dict, ...]:
    """Every row of the project's review of CondAmbigQA short answers; a malformed row is one error."""
    path = Path(path)
    if not path.is_file():
        raise CtxRobustError(f"{path}: the CondAmbigQA answer review is missing")
    if path.stat().st_size > MAX_REVIEW_BYTES:
        raise CtxRobustError(f"{path}: larger than {MAX_REVIEW_BYTES} bytes; not a review file")
    rows, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = _check_row(number, json.loads(line))
        except ValueError:
            raise _fail(number, "not valid JSON") from None
        if "property" in row:
            key = (row["question_id"], row["property"])
            if key in seen:
                raise _fail(number, f"a second row for question {key[0]} property {key[1]}")
            seen.add(key)
        rows.append(row)
    return tuple(rows)


def _passage_number(row: dict) -> int:
    return int(row["citation"].split(".", 1)[0])


def reviewed_values(record: CondAmbigQARecord, path: Path = REVIEW) -> list[tuple[str, str]]:
    """(provenance field, value) of every value the review states for `record`: the short answer of each
    property whose groundtruth is the one reviewed, and the extra distractor values."""
    out = []
    for m in members(record, review_rows(path)):
        if m.problem is None and m.construction != "template":
            out.append((record.reviewed_provenance(m.prop, m.answer).field, m.answer))
    for row in _extras(record, review_rows(path)):
        out.append((record.passage_provenance(_passage_number(row), row["extra_distractor"]).field, row["extra_distractor"]))
    return out


def _extras(record: CondAmbigQARecord, rows: tuple[dict, ...]) -> list[dict]:
    """The record's extra-distractor rows whose value stands in the passage they cite."""
    return [
        row
        for row in rows
        if row["question_id"] == record.upstream_id
        and "extra_distractor" in row
        and record.passage_span(_passage_number(row), row["extra_distractor"]) is not None
    ]


def _member(prop: Property, row: dict | None) -> Member:
    if row is None:
        answers = {answer_key(a) for a in prop.groundtruth}
        if len(answers) > 1:
            problem = ("multiple_answers", f"condition {prop.position} gives {len(prop.groundtruth)} different answers")
        elif word_count(prop.groundtruth[0]) > MAX_ANSWER_WORDS:
            problem = ("no_short_answer", f"condition {prop.position} has a long-form answer and no reviewed short answer")
        else:
            return Member(prop, prop.condition, prop.groundtruth[0], None, "template", None, None)
        return Member(prop, prop.condition, None, None, "template", None, problem)
    if row["groundtruth_sha256"] != prop.groundtruth_sha256:
        detail = f"the review of condition {prop.position} was made for another groundtruth (the source changed)"
        return Member(prop, prop.condition, None, None, "template", None, ("stale_review", detail))
    if row["answer"] is None:
        detail = f"condition {prop.position}: {row['reason']}"
        return Member(prop, row["condition"], None, None, "template", None, ("no_short_answer", detail))
    return Member(prop, row["condition"].strip(), row["answer"], row["context"], METHODS[row["method"]], row["citation"], None)


def members(record: CondAmbigQARecord, rows: tuple[dict, ...]) -> list[Member]:
    by_prop = {row["property"]: row for row in rows if row["question_id"] == record.upstream_id and "property" in row}
    return [_member(prop, by_prop.get(prop.position)) for prop in record.properties]


def specs(records: list[CondAmbigQARecord], seed: int, review: Path = REVIEW) -> list[Spec]:
    rows = review_rows(review)
    out = []
    for record in sorted(records, key=lambda r: (r.line or 0, r.index or 0, r.upstream_id)):
        sides = members(record, rows)
        extras = _extras(record, rows)
        out += pair_specs(
            "condambigqa",
            "condition",
            record.upstream_id,
            sides,
            # a side without an answer pairs with every other side, so its exclusion is counted
            answer=lambda m: m.answer if m.answer is not None else f"\x00{m.prop.position}",
            fact_key=lambda m, record=record: f"{record.upstream_id}@{canonical_condition(m.prop.condition)}",
            tag=lambda m: str(m.prop.position),
            make=lambda spec, t, a, record=record, sides=sides, extras=extras: build(spec, record, t, a, sides, extras, seed),
        )
    return out


def _provenance(record: CondAmbigQARecord, m: Member) -> Provenance:
    if m.construction == "template":
        return record.answer_provenance(m.prop, m.answer)
    return record.reviewed_provenance(m.prop, m.answer)


def build(spec: Spec, record: CondAmbigQARecord, t: Member, a: Member, sides: list[Member], extras: list[dict], seed: int) -> Candidate:
    for role, m in (("target", t), ("alternative", a)):
        if m.problem is not None:
            raise Excluded(m.problem[0], f"{role}: {m.problem[1]}")
    if canonical_condition(t.condition) == canonical_condition(a.condition):
        raise Excluded("scope_overlap", "the two conditions are the same after normalisation")
    tpl = templates()["condambigqa"]
    question = record.question.strip()
    condition = t.condition.rstrip(".")
    asked = tpl["question"].format(question=question, condition=condition)
    if t.context and mentions(t.context, a.answer):
        raise Excluded("lure_in_g", f"G (the target's context) also states the lure {a.answer!r}")
    g_text = t.context or tpl["context"].format(condition=t.condition, question=question, value=t.answer)
    s_text = a.context or tpl["context"].format(condition=a.condition, question=question, value=a.answer)
    candidate = spec.candidate(
        question=asked,
        target_scope=Scope(condition=t.condition),
        alt_scope=Scope(condition=a.condition),
        gold=t.answer,
        lure=a.answer,
        g_text=g_text,
        s_text=s_text,
        registered=[(t.answer, a.answer)],
        provenance_g=_provenance(record, t),
        provenance_s=_provenance(record, a),
        construction={"G": t.construction, "S": a.construction},
    )
    preferred = [
        Distractor(text=m.answer, provenance=_provenance(record, m), cluster_id=spec.cluster_id)
        for m in sides
        if m is not t and m is not a and m.answer is not None and m.problem is None
    ]
    preferred += [
        Distractor(
            text=row["extra_distractor"],
            provenance=record.passage_provenance(_passage_number(row), row["extra_distractor"]),
            cluster_id=spec.cluster_id,
        )
        for row in extras
    ]
    return with_distractors(candidate, Pool(preferred), seed)
