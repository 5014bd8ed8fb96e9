"""CondAmbigQA condition candidates: the separate condition supplement (paper Section 3.2, Appendix A.3 Table 8).

A fact pair is two properties (interpretations) of one CondAmbigQA question
whose answers differ. The question fixes the target condition; G and S restate
the answer under their condition with a fixed template; distractors always
come from the same question's other properties. At most three items per
question; items go to condition.jsonl, never the main split.
"""

from __future__ import annotations

from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, pair_specs, templates
from ctxrobust.builders.misleadqa.distractors import Pool, with_distractors
from ctxrobust.builders.misleadqa.normalise import answer_key, word_count
from ctxrobust.builders.misleadqa.scopes import canonical_condition
from ctxrobust.sources.condambigqa import CondAmbigQARecord, Property
from ctxrobust.sources.facts import Scope

MAX_ANSWER_WORDS = 12  # options are short answers; a sentence-long groundtruth cannot be an option


def specs(records: list[CondAmbigQARecord], seed: int) -> list[Spec]:
    return [
        spec
        for record in sorted(records, key=lambda r: (r.line or 0, r.index or 0, r.upstream_id))
        for spec in pair_specs(
            "condambigqa",
            "condition",
            record.upstream_id,
            list(record.properties),
            answer=lambda prop: prop.groundtruth[0],
            fact_key=lambda prop, record=record: f"{record.upstream_id}@{canonical_condition(prop.condition)}",
            tag=lambda prop: str(prop.position),
            make=lambda spec, t, a, record=record: build(spec, record, t, a, seed),
        )
    ]


def build(spec: Spec, record: CondAmbigQARecord, t: Property, a: Property, seed: int) -> Candidate:
    for role, prop in (("target", t), ("alternative", a)):
        if len({answer_key(answer) for answer in prop.groundtruth}) > 1:
            raise Excluded("multiple_answers", f"{role} condition {prop.position} gives {len(prop.groundtruth)} different answers")
        if word_count(prop.groundtruth[0]) > MAX_ANSWER_WORDS:
            raise Excluded("long_answer", f"{role} answer has more than {MAX_ANSWER_WORDS} words")
    if canonical_condition(t.condition) == canonical_condition(a.condition):
        raise Excluded("scope_overlap", "the two conditions are the same after normalisation")
    gold, lure = t.groundtruth[0], a.groundtruth[0]
    tpl = templates()["condambigqa"]
    question = record.question.strip()
    candidate = spec.candidate(
        question=tpl["question"].format(question=question, condition=t.condition.rstrip(".")),
        target_scope=Scope(condition=t.condition),
        alt_scope=Scope(condition=a.condition),
        gold=gold,
        lure=lure,
        g_text=tpl["context"].format(condition=t.condition, question=question, value=gold),
        s_text=tpl["context"].format(condition=a.condition, question=question, value=lure),
        registered=[(gold, lure)],
        provenance_g=record.answer_provenance(t, gold),
        provenance_s=record.answer_provenance(a, lure),
        construction={"G": "restatement", "S": "restatement"},
    )
    preferred = [
        Distractor(text=answer, provenance=record.answer_provenance(prop, answer), cluster_id=spec.cluster_id)
        for prop in record.properties
        if prop is not t and prop is not a
        for answer in prop.groundtruth
    ]
    return with_distractors(candidate, Pool(preferred), seed)
