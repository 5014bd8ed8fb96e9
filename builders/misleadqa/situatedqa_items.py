"""SituatedQA candidates (paper Section 3.3, Appendix A.1, A.3 Table 6).

A fact pair is two contexts of one upstream question (same `id`) whose answers
differ: time pairs from temp.* files, location pairs from geo.* files. The
question is the upstream question edited to the target context; G and S state
the answer with the scope explicit (fixed templates); distractors come from the
question's other contexts, else from other questions of the same type (the
same wh-word and answer shape). At most two items per upstream question.
"""
from __future__ import annotations

import re
from collections import defaultdict

from builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, templates
from builders.misleadqa.distractors import Pool, choose, item_rng
from builders.misleadqa.scopes import canonical_location, scopes_overlap, time_interval
from builders.misleadqa.substitution import substitute
from sources.facts import Provenance, Scope
from sources.situatedqa import SituatedQARecord, fact
from validators.normalise import answer_key, content_tokens, is_numeric_key, mentions, same_answer, tokens

WH_WORDS = ("when", "who", "whom", "whose", "where", "what", "which", "why", "how")
HOW_WORDS = ("many", "much", "long", "old", "far", "big", "tall", "often")


def cluster_id(upstream_id: str) -> str:
    return f"situatedqa-{upstream_id.replace('-', 'n')}"


def question_type(record: SituatedQARecord, answer: str) -> tuple[str, str, str]:
    """(file kind, wh-word, answer shape): the 'same type' distractors may come from."""
    words = tokens(record.question)
    wh = next((w for w in words if w in WH_WORDS), "other")
    if wh == "how":
        following = words[words.index("how") + 1] if words.index("how") + 1 < len(words) else ""
        wh = f"how {following}" if following in HOW_WORDS else "how"
    key = answer_key(answer)
    if re.fullmatch(r"\d{4}", key):
        shape = "year"
    elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", key):
        shape = "day"
    elif re.fullmatch(r"\d{4}-\d{2}", key):
        shape = "month"
    elif is_numeric_key(key):
        shape = "number"
    else:
        shape = "text"
    return record.kind, wh, shape


def _scope(record: SituatedQARecord) -> Scope:
    return Scope(time=record.scope_value) if record.kind == "temp" else Scope(location=record.scope_value)


def canonical_scope(record: SituatedQARecord) -> str:
    if record.kind == "temp":
        interval = time_interval(record.scope_value)
        return f"{interval[0]}/{interval[1]}" if interval else " ".join(tokens(record.scope_value))
    return canonical_location(record.scope_value)


def _provenance(record: SituatedQARecord, answer: str) -> Provenance:
    """The record's fact provenance, naming `answer` (one of the record's answers)."""
    return fact(record).provenance.model_copy(update={"value": answer})


def _tag(record: SituatedQARecord) -> str:
    split = record.snapshot.rsplit("/", 1)[-1].split(".")[1]  # temp.train.jsonl -> train
    return f"{split}{record.line}"


def _question_text(record: SituatedQARecord) -> str:
    text = record.edited_question.strip().rstrip("?").strip()
    return text[:1].upper() + text[1:]


def _answer_keys(record: SituatedQARecord) -> frozenset[str]:
    return frozenset(answer_key(a) for a in record.answers)


class SituatedQAPool:
    """All records of one file kind, grouped by upstream question, with the same-type fallback pool."""

    def __init__(self, records: list[SituatedQARecord]):
        self.groups: dict[str, list[SituatedQARecord]] = defaultdict(list)
        for record in sorted(records, key=lambda r: (r.snapshot, r.line)):
            self.groups[record.upstream_id].append(record)
        self.by_type: dict[tuple, list[tuple[Distractor, frozenset[str]]]] = defaultdict(list)
        for upstream_id in sorted(self.groups):
            seen = set()
            for record in self.groups[upstream_id]:
                if len(_answer_keys(record)) != 1 or not record.answers:
                    continue
                answer = record.answers[0]
                if answer_key(answer) in seen:
                    continue
                seen.add(answer_key(answer))
                self.by_type[question_type(record, answer)].append(
                    (Distractor(text=answer, provenance=_provenance(record, answer), cluster_id=cluster_id(upstream_id)),
                     frozenset(content_tokens(record.question)))
                )


def specs(pool: SituatedQAPool, seed: int, min_similarity: float) -> list[Spec]:
    out = []
    for upstream_id in sorted(pool.groups):
        group = pool.groups[upstream_id]
        for t in group:
            for a in group:
                if a is t or _answer_keys(a) == _answer_keys(t) or not a.answers or not t.answers:
                    continue
                dimension = "time" if t.kind == "temp" else "location"
                cid = f"situatedqa-{dimension}-{upstream_id.replace('-', 'n')}-{_tag(t)}-{_tag(a)}"
                subject = " ".join(tokens(t.question))
                out.append(Spec(
                    id=cid, source="situatedqa", scope_dimension=dimension, cluster_id=cluster_id(upstream_id),
                    target_key=f"situatedqa:{dimension}:{subject}@{canonical_scope(t)}",
                    alt_key=f"situatedqa:{dimension}:{subject}@{canonical_scope(a)}",
                    make=lambda t=t, a=a, cid=cid, group=group: build(pool, group, t, a, cid, seed, min_similarity),
                ))
    return out


def _similarity(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    return len(a & b) / max(1, len(a | b))


def _comparable_magnitude(gold: str, other: str) -> bool:
    """Numbers are comparable in type and precision when within a factor of ten of each other."""
    g, o = answer_key(gold).replace(" ", ""), answer_key(other).replace(" ", "")
    try:
        g_value, o_value = float(g), float(o)
    except ValueError:
        return True
    if g_value <= 0 or o_value <= 0:
        return (g_value <= 0) == (o_value <= 0)
    return 0.1 <= o_value / g_value <= 10


def _ranked_fallback(pool: SituatedQAPool, t: SituatedQARecord, gold: str, seed: int, cid: str, min_similarity: float) -> list[Distractor]:
    """Answers of other questions of the same type whose question shares at least `min_similarity` of its
    content words (Jaccard) with the target's: the nearest available evidence of the same relation
    (Appendix A.1 "Distractors"); most similar first, ties in seeded order."""
    words = content_tokens(t.question)
    entries = [
        (d, _similarity(words, w)) for d, w in pool.by_type.get(question_type(t, gold), [])
        if d.provenance.upstream_id != t.upstream_id and _similarity(words, w) >= min_similarity and _comparable_magnitude(gold, d.text)
    ]
    ties = item_rng(seed, cid, "fallback-order").permutation(len(entries))
    scored = sorted(range(len(entries)), key=lambda i: (-entries[i][1], int(ties[i])))
    return [entries[i][0] for i in scored]


def build(
    pool: SituatedQAPool, group: list[SituatedQARecord], t: SituatedQARecord, a: SituatedQARecord, cid: str, seed: int, min_similarity: float
) -> Candidate:
    dimension = "time" if t.kind == "temp" else "location"
    for role, record in (("target", t), ("alternative", a)):
        if len(_answer_keys(record)) > 1:
            raise Excluded("multiple_answers", f"{role} context {record.snapshot}:{record.line} gives {len(record.answers)} different answers")
    gold, lure = t.answers[0], a.answers[0]
    if same_answer(gold, lure):
        raise Excluded("same_answer", f"gold {gold!r} and lure {lure!r} are the same answer after normalisation")
    if dimension == "time" and (time_interval(t.scope_value) is None or time_interval(a.scope_value) is None):
        raise Excluded("scope_unreadable", f"date {t.scope_value!r} or {a.scope_value!r} cannot be read")
    if scopes_overlap(dimension, t.scope_value, a.scope_value):
        raise Excluded("scope_overlap", f"{a.scope_value!r} and {t.scope_value!r} are the same or overlapping {dimension}s")
    # each scope must support a unique answer: no overlapping context may say otherwise (Section 3.1)
    for role, record, answer in (("target", t, gold), ("alternative", a, lure)):
        for other in group:
            if other is record or not scopes_overlap(dimension, other.scope_value, record.scope_value):
                continue
            if any(not same_answer(x, answer) for x in other.answers):
                raise Excluded(
                    "conflicting_answers",
                    f"{role} scope {record.scope_value!r}: {other.snapshot}:{other.line} ({other.scope_value!r}) answers {list(other.answers)}",
                )
    question = _question_text(t) + "?"
    if not mentions(question, t.scope_value):
        raise Excluded("scope_not_in_question", f"the question does not state the target {dimension} {t.scope_value!r}")
    tpl = templates()["situatedqa"]
    base = t.question.strip().rstrip("?").strip()
    g_text = tpl[f"context_{dimension}"].format(scope=t.scope_value, question=base, value=gold)
    s_text = tpl[f"context_{dimension}"].format(scope=a.scope_value, question=base, value=lure)
    registered = [(gold, lure)]
    f_text, _ = substitute(g_text, registered)
    preferred = []
    for other in group:
        if other is t or other is a or scopes_overlap(dimension, other.scope_value, t.scope_value):
            continue
        for answer in other.answers:
            preferred.append(Distractor(text=answer, provenance=_provenance(other, answer), cluster_id=cluster_id(t.upstream_id)))
    distractors = choose(
        Pool(preferred, lambda: _ranked_fallback(pool, t, gold, seed, cid, min_similarity), fallback_ranked=True),
        [gold, lure], [question, g_text, s_text, f_text], item_rng(seed, cid, "distractors"),
    )
    return Candidate(
        id=cid,
        source="situatedqa",
        scope_dimension=dimension,
        split="main",
        cluster_id=cluster_id(t.upstream_id),
        question=question,
        target_scope=_scope(t),
        alt_scope=_scope(a),
        gold=gold,
        lure=lure,
        g_text=g_text,
        s_text=s_text,
        registered=registered,
        provenance_g=_provenance(t, gold),
        provenance_s=_provenance(a, lure),
        distractors=distractors,
        construction={"G": "template", "S": "template"},
        linked_clusters={d.cluster_id for d in distractors} - {cluster_id(t.upstream_id)},
    )
