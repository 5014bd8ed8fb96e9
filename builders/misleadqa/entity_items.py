"""AmbigDocs entity candidates (paper Section 3.2, Appendix A.1, A.3 Table 7).

A fact pair is two documents of one AmbigDocs question about distinct entities
that share a name, with different answers. The question names the target
entity (the document title). G and S are contiguous source text: the
document's opening sentences through the first sentence stating the answer
(or that sentence alone when it comes late), and must name the entity's
disambiguating words. Distractors come from the question's other documents,
else from questions asking the same relation of another name.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, cluster_id, pair_specs, templates
from ctxrobust.builders.misleadqa.distractors import Pool, with_distractors
from ctxrobust.builders.misleadqa.normalise import answer_key, content_tokens, mentions
from ctxrobust.builders.misleadqa.scopes import canonical_entity
from ctxrobust.sources.ambigdocs import AmbigDocsRecord, Document
from ctxrobust.sources.facts import Scope

LEAD_SENTENCES = 3  # an answer within the first three sentences keeps the opening (entity) sentence
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def number_forms(answer: str) -> list[str]:
    """An integer answer as written and with / without thousands separators."""
    key = answer_key(answer)
    forms = [answer]
    if re.fullmatch(r"\d+", key):
        for form in (key, f"{int(key):,}"):
            if form not in forms:
                forms.append(form)
    return forms


def registered_pairs(gold: str, lure: str) -> list[tuple[str, str]]:
    """Gold expressions with the lure in the same format (Section 3.3)."""
    pairs = [(gold, lure)]
    gk, lk = answer_key(gold), answer_key(lure)
    if re.fullmatch(r"\d+", gk) and re.fullmatch(r"\d+", lk):
        for g_form, l_form in ((gk, lk), (f"{int(gk):,}", f"{int(lk):,}")):
            if g_form != gold and all(g_form != g for g, _ in pairs):
                pairs.append((g_form, l_form))
    return pairs


def extract(document: Document, forms: list[str]) -> str | None:
    """Contiguous text stating the answer: sentences 1..k, or sentence k alone when k is beyond the lead."""
    spans = sentence_spans(document.text)
    for index, (start, end) in enumerate(spans):
        if any(mentions(document.text[start:end], form) for form in forms):
            first = 0 if index < LEAD_SENTENCES else index
            return document.text[spans[first][0] : end].strip()
    return None


def disambiguators(title: str, ambiguous_entity: str) -> set[str]:
    return content_tokens(title) - content_tokens(ambiguous_entity)


def relation(record: AmbigDocsRecord) -> str:
    """The question with the shared name taken out: questions with equal relations ask for the same attribute."""
    pattern = re.compile(re.escape(record.ambiguous_entity), re.IGNORECASE)
    return " ".join(canonical_entity(part) for part in pattern.split(record.question))


class AmbigDocsPool:
    def __init__(self, records: list[AmbigDocsRecord]):
        self.records = sorted(records, key=lambda r: (r.line or 0, r.index or 0, r.qid))
        self.by_relation: dict[str, list[tuple[AmbigDocsRecord, Document]]] = defaultdict(list)
        self.qids_of_pid: dict[str, set[str]] = defaultdict(set)
        for record in self.records:
            self.by_relation[relation(record)].extend((record, doc) for doc in record.documents)
            for doc in record.documents:
                self.qids_of_pid[doc.pid].add(record.qid)


def specs(records: list[AmbigDocsRecord], seed: int) -> list[Spec]:
    pool = AmbigDocsPool(records)
    return [
        spec
        for record in pool.records
        for spec in pair_specs(
            "ambigdocs",
            "entity",
            record.qid,
            list(record.documents),
            answer=lambda doc: doc.answer,
            fact_key=lambda doc, record=record: f"{relation(record)}@{canonical_entity(doc.title)}",
            tag=lambda doc: str(doc.position),
            make=lambda spec, t, a, record=record: build(spec, pool, record, t, a, seed),
        )
    ]


def build(spec: Spec, pool: AmbigDocsPool, record: AmbigDocsRecord, t: Document, a: Document, seed: int) -> Candidate:
    gold, lure = t.answer, a.answer
    registered = registered_pairs(gold, lure)
    g_text = extract(t, [g for g, _ in registered])
    s_text = extract(a, number_forms(lure))
    if g_text is None or s_text is None:
        missing = t if g_text is None else a
        raise Excluded("answer_not_in_document", f"document {missing.pid} ({missing.title!r}) never states its answer {missing.answer!r}")
    for role, doc, text in (("G", t, g_text), ("S", a, s_text)):
        words = disambiguators(doc.title, record.ambiguous_entity)
        if not words or not (words & content_tokens(text)):
            raise Excluded(
                "scope_not_stated",
                f"{role} ({doc.title!r}) does not name what distinguishes the entity from other {record.ambiguous_entity!r}",
            )
    candidate = spec.candidate(
        question=templates()["ambigdocs"]["question"].format(
            ambiguous_entity=record.ambiguous_entity, title=t.title, question=record.question
        ),
        target_scope=Scope(entity=t.title),
        alt_scope=Scope(entity=a.title),
        gold=gold,
        lure=lure,
        g_text=g_text,
        s_text=s_text,
        registered=registered,
        provenance_g=record.document_provenance(t),
        provenance_s=record.document_provenance(a),
        construction={"G": "extract", "S": "extract"},
        linked_clusters={cluster_id("ambigdocs", q) for doc in (t, a) for q in pool.qids_of_pid[doc.pid]},
    )
    preferred = [
        Distractor(text=doc.answer, provenance=record.document_provenance(doc), cluster_id=spec.cluster_id)
        for doc in record.documents
        if doc is not t and doc is not a
    ]
    fallback = [
        Distractor(text=doc.answer, provenance=other.document_provenance(doc), cluster_id=cluster_id("ambigdocs", other.qid))
        for other, doc in pool.by_relation[relation(record)]
        if other.qid != record.qid
    ]
    return with_distractors(candidate, Pool(preferred, fallback), seed)
