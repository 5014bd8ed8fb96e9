"""CondAmbigQA condition candidates: the separate condition supplement (paper Section 3.2, Appendix A.3 Table 8).

A fact pair is two properties (interpretations) of one CondAmbigQA question
whose answers differ. The question fixes the target condition; G and S restate
the answer under their condition with a fixed template; distractors always
come from the same question's other properties. At most three items per
question; items go to condition.jsonl, never the main split.
"""
from __future__ import annotations

from builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, templates
from builders.misleadqa.distractors import Pool, choose, item_rng
from builders.misleadqa.entity_items import safe_id
from builders.misleadqa.scopes import canonical_condition
from builders.misleadqa.substitution import substitute
from sources.condambigqa import CondAmbigQARecord, Property
from sources.facts import Provenance, Scope
from validators.normalise import answer_key, same_answer, word_count

MAX_ANSWER_WORDS = 12  # options are short answers; a sentence-long groundtruth cannot be an option


def cluster_id(upstream_id: str) -> str:
    return f"condambigqa-{safe_id(upstream_id)}"


def _provenance(record: CondAmbigQARecord, prop: Property, answer: str) -> Provenance:
    return Provenance(
        snapshot=record.snapshot, sha256=record.sha256, line=record.line, index=record.index,
        upstream_id=record.upstream_id, field=f"properties[{prop.position}].groundtruth", value=answer,
    )


def _unique(prop: Property) -> bool:
    return len({answer_key(a) for a in prop.groundtruth}) == 1


def specs(records: list[CondAmbigQARecord], seed: int) -> list[Spec]:
    out = []
    for record in sorted(records, key=lambda r: (r.line or 0, r.index or 0, r.upstream_id)):
        for t in record.properties:
            for a in record.properties:
                if a is t or same_answer(t.groundtruth[0], a.groundtruth[0]):
                    continue
                cid = f"condambigqa-condition-{safe_id(record.upstream_id)}-{t.position}-{a.position}"
                out.append(Spec(
                    id=cid, source="condambigqa", scope_dimension="condition", cluster_id=cluster_id(record.upstream_id),
                    target_key=f"condambigqa:{record.upstream_id}@{canonical_condition(t.condition)}",
                    alt_key=f"condambigqa:{record.upstream_id}@{canonical_condition(a.condition)}",
                    make=lambda record=record, t=t, a=a, cid=cid: build(record, t, a, cid, seed),
                ))
    return out


def build(record: CondAmbigQARecord, t: Property, a: Property, cid: str, seed: int) -> Candidate:
    for role, prop in (("target", t), ("alternative", a)):
        if not _unique(prop):
            raise Excluded("multiple_answers", f"{role} condition {prop.position} gives {len(prop.groundtruth)} different answers")
        if word_count(prop.groundtruth[0]) > MAX_ANSWER_WORDS:
            raise Excluded("long_answer", f"{role} answer has more than {MAX_ANSWER_WORDS} words")
    if canonical_condition(t.condition) == canonical_condition(a.condition):
        raise Excluded("scope_overlap", "the two conditions are the same after normalisation")
    gold, lure = t.groundtruth[0], a.groundtruth[0]
    tpl = templates()["condambigqa"]
    question_text = record.question.strip()
    question = tpl["question"].format(question=question_text, condition=t.condition)
    g_text = tpl["context"].format(condition=t.condition, question=question_text, value=gold)
    s_text = tpl["context"].format(condition=a.condition, question=question_text, value=lure)
    registered = [(gold, lure)]
    f_text, _ = substitute(g_text, registered)
    preferred = [
        Distractor(text=answer, provenance=_provenance(record, prop, answer), cluster_id=cluster_id(record.upstream_id))
        for prop in record.properties if prop is not t and prop is not a for answer in prop.groundtruth
    ]
    distractors = choose(Pool(preferred, []), [gold, lure], [question, g_text, s_text, f_text], item_rng(seed, cid, "distractors"))
    return Candidate(
        id=cid,
        source="condambigqa",
        scope_dimension="condition",
        split="condition",
        cluster_id=cluster_id(record.upstream_id),
        question=question,
        target_scope=Scope(condition=t.condition),
        alt_scope=Scope(condition=a.condition),
        gold=gold,
        lure=lure,
        g_text=g_text,
        s_text=s_text,
        registered=registered,
        provenance_g=_provenance(record, t, gold),
        provenance_s=_provenance(record, a, lure),
        distractors=distractors,
        construction={"G": "restatement", "S": "restatement"},
    )
