"""SituatedQA candidates (paper Section 3.3, Appendix A.1, A.3 Table 6).

A fact pair is two contexts of one upstream question (same `id`) whose answers
differ: time pairs from temp.* files, location pairs from geo.* files. Both
locations of a location pair must be places the gazetteer knows (SituatedQA's
`location` field sometimes names a team or a TV show). The question is the
upstream question asked of the target scope ("... as of 2019?", "... in
Chile?"); G and S state the answer with the scope explicit (fixed templates).
Distractors come from the question's other contexts, else from other
questions asking the same relation (same wh-word and answer type, similar
wording). At most two items per upstream question in each scope dimension.

Upstream questions that reword one another (similar wording and two or more
answers in common) ask for the same facts from the same sources: their target
facts count as one when repeated targets are excluded, and their clusters fall
in one dependency group (Appendix A.1 "Candidate selection", A.4).
"""
from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from ctxrobust.builders.misleadqa.answer_types import is_garbled, kind, precision
from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, cluster_id, pair_specs, safe_id, templates
from ctxrobust.builders.misleadqa.distractors import Pool, item_rng, with_distractors
from ctxrobust.builders.misleadqa.groups import components
from ctxrobust.builders.misleadqa.scopes import canonical_location, display_location, is_place, scopes_overlap, time_interval
from ctxrobust.sources.facts import Scope
from ctxrobust.sources.situatedqa import SituatedQARecord
from ctxrobust.builders.misleadqa.normalise import answer_key, content_tokens, same_answer, tokens

WH_WORDS = ("when", "who", "whom", "whose", "where", "what", "which", "why", "how")
HOW_WORDS = ("many", "much", "long", "old", "far", "big", "tall", "often")
REWORDING_MIN_SIMILARITY = 0.5  # content-word Jaccard of two questions that also share two or more answers
COMMON_ANSWER = 30  # an answer given by more questions than this (a bare year, '2') says nothing about rewording


def question_type(record: SituatedQARecord, answer: str) -> tuple[str, str, str]:
    """(file kind, wh-word, answer type): the 'same type' other questions' distractors must share."""
    words = tokens(record.question)
    wh = next((w for w in words if w in WH_WORDS), "other")
    if wh == "how":
        following = words[words.index("how") + 1] if words.index("how") + 1 < len(words) else ""
        wh = f"how {following}" if following in HOW_WORDS else "how"
    return record.kind, wh, kind(answer)


def canonical_scope(record: SituatedQARecord) -> str:
    if record.kind == "temp":
        interval = time_interval(record.scope_value)
        return f"{interval[0]}/{interval[1]}" if interval else " ".join(tokens(record.scope_value))
    return canonical_location(record.scope_value)


def similarity(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    """Jaccard similarity of two content-word sets."""
    return len(a & b) / max(1, len(a | b))


def _tag(record: SituatedQARecord) -> str:
    split = record.snapshot.rsplit("/", 1)[-1].split(".")[1]  # temp.train.jsonl -> train
    return f"{split}{record.line}"


def _answer_keys(record: SituatedQARecord) -> frozenset[str]:
    return frozenset(answer_key(a) for a in record.answers)


def _shown_scope(record: SituatedQARecord) -> str:
    return record.scope_value if record.kind == "temp" else display_location(record.scope_value)


class SituatedQAPool:
    """All records of one file kind: grouped by upstream question, rewordings found, and the same-type fallback pool."""

    def __init__(self, records: list[SituatedQARecord]):
        self.groups: dict[str, list[SituatedQARecord]] = defaultdict(list)
        for record in sorted(records, key=lambda r: (r.snapshot, r.line)):
            self.groups[record.upstream_id].append(record)
        self.words = {uid: frozenset(content_tokens(group[0].question)) for uid, group in self.groups.items()}
        self.relation = self._rewordings()
        self.rewordings: dict[str, set[str]] = defaultdict(set)
        for uid, rel in self.relation.items():
            self.rewordings[rel].add(uid)
        self.by_type: dict[tuple, list[tuple[Distractor, frozenset[str]]]] = defaultdict(list)
        for upstream_id in sorted(self.groups):
            seen = set()
            for record in self.groups[upstream_id]:
                if len(_answer_keys(record)) != 1 or answer_key(record.answers[0]) in seen:
                    continue
                answer = record.answers[0]
                seen.add(answer_key(answer))
                self.by_type[question_type(record, answer)].append(
                    (Distractor(text=answer, provenance=record.answer_provenance(answer), cluster_id=cluster_id("situatedqa", upstream_id)), self.words[upstream_id])
                )

    def _rewordings(self) -> dict[str, str]:
        """upstream id -> the smallest id of its rewording class (questions linked by similar wording and two shared answers)."""
        answers = {uid: frozenset(answer_key(a) for r in group for a in r.answers) for uid, group in self.groups.items()}
        askers: dict[str, list[str]] = defaultdict(list)
        for uid in sorted(answers):
            for key in answers[uid]:
                askers[key].append(uid)
        shared: dict[tuple[str, str], int] = defaultdict(int)
        for uids in askers.values():
            if len(uids) <= COMMON_ANSWER:
                for pair in combinations(uids, 2):
                    shared[pair] += 1
        links = [pair for pair, count in sorted(shared.items())
                 if count >= 2 and similarity(self.words[pair[0]], self.words[pair[1]]) >= REWORDING_MIN_SIMILARITY]
        return components(links, self.groups)

    def rewordings_of(self, upstream_id: str) -> set[str]:
        return self.rewordings[self.relation[upstream_id]]


def specs(pool: SituatedQAPool, seed: int, min_similarity: float) -> list[Spec]:
    return [
        spec
        for upstream_id in sorted(pool.groups)
        for spec in pair_specs(
            "situatedqa", pool.groups[upstream_id][0].dimension, upstream_id, [r for r in pool.groups[upstream_id] if r.answers],
            answer=lambda record: record.answers[0],
            fact_key=lambda record: f"{record.dimension}:{safe_id(pool.relation[record.upstream_id])}@{canonical_scope(record)}",
            tag=_tag,
            make=lambda spec, t, a: build(spec, pool, pool.groups[t.upstream_id], t, a, seed, min_similarity),
        )
    ]


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
    words = pool.words[t.upstream_id]
    entries = [
        (d, similarity(words, w)) for d, w in pool.by_type.get(question_type(t, gold), [])
        if d.provenance.upstream_id != t.upstream_id and similarity(words, w) >= min_similarity and _comparable_magnitude(gold, d.text)
    ]
    ties = item_rng(seed, cid, "fallback-order").permutation(len(entries))
    scored = sorted(range(len(entries)), key=lambda i: (-entries[i][1], int(ties[i])))
    return [entries[i][0] for i in scored]


def _check_pair(group: list[SituatedQARecord], t: SituatedQARecord, a: SituatedQARecord, dimension: str) -> None:
    """Section 3.1: unique answers at both scopes, distinct at the same precision, scopes readable and apart."""
    for role, record in (("target", t), ("alternative", a)):
        if len(_answer_keys(record)) > 1:
            raise Excluded("multiple_answers", f"{role} context {record.snapshot}:{record.line} gives {len(record.answers)} different answers")
        if is_garbled(record.answers[0]):
            raise Excluded("garbled_text", f"{role} answer {record.answers[0]!r} is mis-encoded in {record.snapshot}:{record.line}")
    gold, lure = t.answers[0], a.answers[0]  # distinct: pair_specs pairs only contexts whose answers differ
    if precision(gold) != precision(lure):
        raise Excluded("precision_differs", f"gold {gold!r} is a {precision(gold)}, lure {lure!r} a {precision(lure)}")
    if dimension == "time" and (time_interval(t.scope_value) is None or time_interval(a.scope_value) is None):
        raise Excluded("scope_unreadable", f"date {t.scope_value!r} or {a.scope_value!r} cannot be read")
    unknown = [r.scope_value for r in (t, a) if dimension == "location" and not is_place(r.scope_value)]
    if unknown:
        raise Excluded("scope_not_a_place", f"location {unknown[0]!r} is not a place the gazetteer knows (SituatedQA names teams and shows as locations too)")
    if scopes_overlap(dimension, t.scope_value, a.scope_value):
        raise Excluded("scope_overlap", f"{a.scope_value!r} and {t.scope_value!r} are the same or overlapping {dimension}s")
    # each scope must support a unique answer: no overlapping context may say otherwise (Section 3.1)
    for role, record, answer in (("target", t, gold), ("alternative", a, lure)):
        for other in group:
            if other is not record and scopes_overlap(dimension, other.scope_value, record.scope_value) and any(not same_answer(x, answer) for x in other.answers):
                raise Excluded(
                    "conflicting_answers",
                    f"{role} scope {record.scope_value!r}: {other.snapshot}:{other.line} ({other.scope_value!r}) answers {list(other.answers)}",
                )


def build(
    spec: Spec, pool: SituatedQAPool, group: list[SituatedQARecord], t: SituatedQARecord, a: SituatedQARecord, seed: int, min_similarity: float
) -> Candidate:
    dimension = spec.scope_dimension
    _check_pair(group, t, a, dimension)
    gold, lure = t.answers[0], a.answers[0]
    tpl = templates()["situatedqa"]
    base = t.question.strip().rstrip("?").strip()
    question = tpl[f"question_{dimension}"].format(question=base[:1].upper() + base[1:], scope=_shown_scope(t))
    g_text = tpl[f"context_{dimension}"].format(scope=_shown_scope(t), question=base, value=gold)
    s_text = tpl[f"context_{dimension}"].format(scope=_shown_scope(a), question=base, value=lure)
    preferred = [
        Distractor(text=answer, provenance=other.answer_provenance(answer), cluster_id=spec.cluster_id)
        for other in group if other is not t and other is not a and not scopes_overlap(dimension, other.scope_value, t.scope_value)
        for answer in other.answers
    ]
    candidate = spec.candidate(
        question=question,
        target_scope=Scope(**{dimension: t.scope_value}),
        alt_scope=Scope(**{dimension: a.scope_value}),
        gold=gold,
        lure=lure,
        g_text=g_text,
        s_text=s_text,
        registered=[(gold, lure)],
        provenance_g=t.answer_provenance(gold),
        provenance_s=a.answer_provenance(lure),
        construction={"G": "template", "S": "template"},
        linked_clusters={cluster_id("situatedqa", uid) for uid in pool.rewordings_of(t.upstream_id)},
    )
    distractors = Pool(preferred, lambda: _ranked_fallback(pool, t, gold, seed, spec.id, min_similarity), fallback_ranked=True)
    return with_distractors(candidate, distractors, seed)
