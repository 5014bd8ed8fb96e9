"""SituatedQA candidates (paper Section 3.3, Appendix A.1, A.3 Table 6).

A fact pair is two contexts of one upstream question (same `id`) whose answers
differ: time pairs from temp.* files, location pairs from geo.* files. Both
locations of a location pair must be places the gazetteer knows (SituatedQA's
`location` field sometimes names a team or a TV show). The question is the
upstream question asked of the target scope ("... as of 2019?", "... in
Chile?"); G and S state the answer with the scope explicit (fixed templates).
Distractors are answers (never `any_answer` entries, which may hold at the
target scope) of the question's other contexts, else of other questions
asking the same relation: the same wh-word and answer type and the same
relation (`same_relation`), so never another sport, office, league or gender.
At most two items per upstream question in each scope dimension; a time
target fact (the relation and its answer, 'Galway last won in 1988') is used
once however many as-of dates give it.

Upstream questions that reword one another (similar wording and two or more
answers in common) ask for the same facts from the same sources: their target
facts count as one when repeated targets are excluded, and their clusters fall
in one dependency group (Appendix A.1 "Candidate selection", A.4).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections import defaultdict
from itertools import combinations
from pathlib import Path

from ctxrobust.builders.misleadqa.answer_types import is_garbled, kind, precision
from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, cluster_id, pair_specs, safe_id, templates
from ctxrobust.builders.misleadqa.distractors import Pool, with_distractors
from ctxrobust.builders.misleadqa.fred_items import MONTH_NAMES
from ctxrobust.builders.misleadqa.gazetteer import lookup, resolve
from ctxrobust.builders.misleadqa.groups import components
from ctxrobust.builders.misleadqa.normalise import STOP_WORDS, answer_key, content_tokens, entity_clash, same_answer, tokens, unit_of
from ctxrobust.builders.misleadqa.phrasing import (
    answer_names,
    check_english,
    clean_text,
    future_question,
    has_referent_words,
    name_referent,
    past_question,
    relative_time,
    restate,
    to_past,
    truecase,
    unscoped,
    unstated_time,
)
from ctxrobust.builders.misleadqa.scopes import canonical_location, display_location, is_place, scopes_overlap, time_interval
from ctxrobust.builders.misleadqa.timelines import Timelines
from ctxrobust.sources.facts import Scope
from ctxrobust.sources.situatedqa import SituatedQARecord

QUESTION_TYPES = Path(__file__).with_name("question_types.json")
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


class SituatedQAPool:
    """All records of one file kind: grouped by upstream question, rewordings found, the same-type
    fallback pool, and (time) the questions' answer timelines from the raw_data records."""

    def __init__(self, records: list[SituatedQARecord], timelines: Timelines | None = None):
        self.timelines = timelines or Timelines([])
        self.groups: dict[str, list[SituatedQARecord]] = defaultdict(list)
        for record in sorted(records, key=lambda r: (r.snapshot, r.line)):
            self.groups[record.upstream_id].append(record)
        self.words = {uid: frozenset(content_tokens(group[0].question)) for uid, group in self.groups.items()}
        self.relations = {uid: relation_text(group[0].question) for uid, group in self.groups.items()}
        self.by_relation: dict[tuple, list[Distractor]] = defaultdict(list)  # (question type, relation key) -> answers
        self.asked: dict[str, tuple[str, Excluded | None]] = {}  # upstream id -> (cleaned question, its exclusion)
        self.relation = self._rewordings()
        self.rewordings: dict[str, set[str]] = defaultdict(set)
        for uid, rel in self.relation.items():
            self.rewordings[rel].add(uid)
        for upstream_id in sorted(self.groups):
            seen = set()
            for record in self.groups[upstream_id]:
                if len(_answer_keys(record)) != 1 or answer_key(record.answers[0]) in seen:
                    continue
                answer = record.answers[0]
                seen.add(answer_key(answer))
                self.by_relation[question_type(record, answer)].append(
                    Distractor(
                        text=clean_text(answer),
                        provenance=record.answer_provenance(answer),
                        cluster_id=cluster_id("situatedqa", upstream_id),
                    )
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
        links = [
            pair
            for pair, count in sorted(shared.items())
            if count >= 2 and similarity(self.words[pair[0]], self.words[pair[1]]) >= REWORDING_MIN_SIMILARITY
        ]
        return components(links, self.groups)

    def rewordings_of(self, upstream_id: str) -> set[str]:
        return self.rewordings[self.relation[upstream_id]]


def specs(pool: SituatedQAPool, seed: int) -> list[Spec]:
    return [
        spec
        for upstream_id in sorted(pool.groups)
        for spec in pair_specs(
            "situatedqa",
            pool.groups[upstream_id][0].dimension,
            upstream_id,
            [r for r in pool.groups[upstream_id] if r.answers],
            answer=lambda record: record.answers[0],
            fact_key=lambda record: fact_key(pool, record),
            tag=_tag,
            make=lambda spec, t, a: build(spec, pool, pool.groups[t.upstream_id], t, a, seed),
            type_key=f"{pool.groups[upstream_id][0].dimension}: {type_label(pool.groups[upstream_id][0].question)}",
        )
    ]


def fact_key(pool: SituatedQAPool, record: SituatedQARecord) -> str:
    """The fact a record states (Appendix A.1 "Candidate selection": repeated target facts excluded): a
    location fact is the relation at its place; a time fact is the relation and its answer, since
    'as of 2009' and 'as of 2015' with one answer ('the last time Galway won') state one fact."""
    relation = safe_id(pool.relation[record.upstream_id])
    if record.kind == "temp" and record.answers:
        return f"{record.dimension}:{relation}=" + safe_id(answer_key(clean_text(record.answers[0])))
    return f"{record.dimension}:{relation}@{canonical_scope(record)}"


@functools.cache
def relation_text(question: str) -> tuple[str, ...]:
    """The question's scope-free text: its words in order (lower-cased, without articles) less years and
    'as of' dates, so 'most goals this world cup' and 'most goals in world cup all time' differ."""
    return tuple(w for w in tokens(question) if not YEAR_TOKEN.fullmatch(w))


YEAR_TOKEN = re.compile(r"1[5-9]\d\d|20\d\d")
RELATION_MIN_SIMILARITY = 0.5  # content-word Jaccard of two wordings of one relation
# words that tell relations apart however similar the rest: gender, league, sport, competition, record
# type, rank of an office (kept in `relation_words` even where STOP_WORDS lists them)
GUARD_WORDS = frozenset(
    "women womens woman men mens man female male girls boys nba nfl mlb nhl wnba ncaa college world series cup "
    "super bowl olympics olympic winter summer season game career all time ever first last most least "
    "football hurling camogie basketball baseball soccer hockey rugby cricket tennis golf volleyball softball "
    "air army navy defence defense deputy vice assistant junior senior "
    # hosting or winning an event is not taking part in it, nor a final the tournament; NEGATED stands for every negation
    "host hosts hosted hosting won win wins winning final finals semifinal semifinals quarterfinal quarterfinals NEGATED".split()
)
# negations, one word in `relation_words`: a negated relation ("did not qualify") is not the relation
NEGATIONS = frozenset("not no never didn't didnt don't doesn't isn't wasn't weren't hasn't haven't hadn't won't can't cannot".split())


@functools.cache
def relation_words(question: str) -> frozenset[str]:
    """The scope-free text's content words, possessives folded ('town's' -> 'town')."""
    words = {w.removesuffix("'s").removesuffix("’s") for w in relation_text(question)}
    words = {"NEGATED" if w.replace("’", "'") in NEGATIONS else w for w in words}
    return frozenset(w for w in words if w not in STOP_WORDS or w in GUARD_WORDS)


def same_relation(question: str, other: str) -> bool:
    """Two upstream questions ask one relation (Appendix A.1 "Distractors": other questions only when
    they ask the same relation): the same scope-free text (`relation_text`), or content words that
    overlap by RELATION_MIN_SIMILARITY where no word of one side only is a guard word (football /
    hurling, air / defence staff, women's, hosted / played in, a final, a negation). A swapped subject (Auburn / Radford in March Madness,
    England / Brazil in the World Cup) keeps the relation, except in a record question, where the
    content words must be the same; reviewers judge what it lets through (criterion 6)."""
    if relation_text(question) == relation_text(other):
        return True
    a, b = relation_words(question), relation_words(other)
    if (a ^ b) & GUARD_WORDS:
        return False
    if (a | b) & RECORD_WORDS:  # a record: any other word names another record (3-pointers / turnovers)
        return a == b
    return len(a & b) / max(1, len(a | b)) >= RELATION_MIN_SIMILARITY


# words of a record question ('who has the most 3s in the nba'), whose holders answer nothing else
RECORD_WORDS = frozenset("most least record highest lowest best worst top biggest largest longest shortest fastest second".split())


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


def _answer(record: SituatedQARecord, role: str) -> str:
    """The record's one answer: an answer list whose entries all name one entity (aliases: 'LA Lakers',
    'Los Angeles Lakers') counts as that answer; different answers exclude the record (criterion 4)."""
    answers = [clean_text(a) for a in record.answers]
    first = answers[0]
    if any(answer_key(a) != answer_key(first) and entity_clash(a, first) is None for a in answers[1:]):
        raise Excluded(
            "multiple_answers", f"{role} context {record.snapshot}:{record.line} gives {len(set(answers))} different answers {answers}"
        )
    if is_garbled(first):
        raise Excluded("garbled_text", f"{role} answer {first!r} is mis-encoded in {record.snapshot}:{record.line}")
    return first


def _one_answer(record: SituatedQARecord) -> bool:
    """The record gives one answer (its entries all name one entity), so that answer holds at its scope."""
    try:
        _answer(record, "distractor")
    except Excluded:
        return False
    return bool(record.answers)


def shown_date(day: dt.date) -> str:
    return f"{MONTH_NAMES[day.month - 1]} {day.day}, {day.year}"


def anchored_date(record: SituatedQARecord, group: list[SituatedQARecord], role: str, timelines: Timelines | None = None) -> dt.date:
    """Scope precision (criterion 4, Appendix A.1 "Fact pairs"): the day the record's answer is asked
    for. A day is kept; a year or month ('2014', sampled or the year an answer started) is re-anchored
    to its last day, where the answer holds only if every change the question records within that
    period is a change to this answer; otherwise the answer is not unique in the period and the record
    is excluded."""
    interval = time_interval(record.scope_value)
    if interval is None:
        raise Excluded("scope_unreadable", f"{role} date {record.scope_value!r} cannot be read")
    first, last = interval
    if first == last:
        return first
    answer = record.answers[0]
    for other in group:
        span = time_interval(other.scope_value) if other.date_type == "start" and other.answers else None
        if span is not None and first <= span[0] <= last and not any(same_answer(x, answer) for x in other.answers):
            raise Excluded(
                "scope_imprecise",
                f"{role} {record.scope_value!r}: the answer changes within it ({other.snapshot}:{other.line} starts {other.answers[0]!r} in {other.scope_value!r})",
            )
    change = timelines.changes_within(record.upstream_id, first, last, answer) if timelines is not None else None
    if change is not None:
        raise Excluded(
            "scope_imprecise",
            f"{role} {record.scope_value!r}: the answer timeline starts {change.answers[0]!r} within it ({change.snapshot}:{change.line} {change.field})",
        )
    return last


def answer_date(text: str) -> dt.date | None:
    """The earliest day a date answer can name ('2012' -> 2012-01-01, 'May 3, 2010' -> that day)."""
    interval = time_interval(clean_text(text))
    return interval[0] if interval else None


def _check_pair(group: list[SituatedQARecord], t: SituatedQARecord, a: SituatedQARecord, dimension: str) -> tuple[str, str]:
    """Section 3.1: unique answers at both scopes, distinct at the same precision and unit, scopes readable and apart."""
    gold, lure = _answer(t, "target"), _answer(a, "alternative")
    clash = entity_clash(gold, lure)
    if clash is not None:
        raise Excluded("same_entity", f"gold {gold!r} and lure {lure!r} {clash}")
    if precision(gold) != precision(lure):
        raise Excluded("precision_differs", f"gold {gold!r} is a {precision(gold)}, lure {lure!r} a {precision(lure)}")
    if unit_of(gold) != unit_of(lure):
        raise Excluded("unit_differs", f"gold {gold!r} and lure {lure!r} are in different units")
    if dimension == "time" and (time_interval(t.scope_value) is None or time_interval(a.scope_value) is None):
        raise Excluded("scope_unreadable", f"date {t.scope_value!r} or {a.scope_value!r} cannot be read")
    unknown = [r.scope_value for r in (t, a) if dimension == "location" and not is_place(r.scope_value)]
    if unknown:
        raise Excluded(
            "scope_not_a_place",
            f"location {unknown[0]!r} is not a place the gazetteer knows (SituatedQA names teams and shows as locations too)",
        )
    if scopes_overlap(dimension, t.scope_value, a.scope_value):
        raise Excluded("scope_overlap", f"{a.scope_value!r} and {t.scope_value!r} are the same or overlapping {dimension}s")
    # each scope must support a unique answer: no overlapping context may say otherwise (Section 3.1)
    for role, record, answer in (("target", t, gold), ("alternative", a, lure)):
        for other in group:
            if (
                other is not record
                and scopes_overlap(dimension, other.scope_value, record.scope_value)
                and any(not same_answer(x, answer) for x in other.answers)
            ):
                raise Excluded(
                    "conflicting_answers",
                    f"{role} scope {record.scope_value!r}: {other.snapshot}:{other.line} ({other.scope_value!r}) answers {list(other.answers)}",
                )
    return gold, lure


def _place(record: SituatedQARecord, group: list[SituatedQARecord], role: str) -> str:
    """How a context names the record's place; an ambiguous name is resolved by the question's other
    locations ('Georgia' among US states is the US state) or the record excluded."""
    peers = [r.scope_value for r in group]
    place = resolve(record.scope_value, peers)
    if place is None:
        raise Excluded("ambiguous_place", f"{role} location {record.scope_value!r} names more than one place (or none) the gazetteer knows")
    shown = display_location(record.scope_value)
    if (
        len(lookup(record.scope_value)) > 1
        and place.kind == "subdivision"
        and place.country == "US"
        and any(p.kind == "country" for p in lookup(record.scope_value))
    ):
        return f"the US state of {shown}"
    return shown


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _asked(pool: SituatedQAPool, t: SituatedQARecord, group: list[SituatedQARecord]) -> str:
    """The upstream question as English (phrasing.check_english, truecase), once per upstream question."""
    if t.upstream_id not in pool.asked:
        names = answer_names([x for r in group for x in (*r.answers, *r.any_answer)])
        try:
            check_english(t.question, set(names), referent=t.kind == "geo")
            pool.asked[t.upstream_id] = (truecase(t.question, names), None)
        except Excluded as excluded:
            pool.asked[t.upstream_id] = ("", excluded)
    asked, excluded = pool.asked[t.upstream_id]
    if excluded is not None:
        raise Excluded(excluded.reason, excluded.detail)
    return asked


def build(
    spec: Spec,
    pool: SituatedQAPool,
    group: list[SituatedQARecord],
    t: SituatedQARecord,
    a: SituatedQARecord,
    seed: int,
) -> Candidate:
    dimension = spec.scope_dimension
    gold, lure = _check_pair(group, t, a, dimension)
    asked = _asked(pool, t, group)
    tpl = templates()["situatedqa"]
    if dimension == "time":
        t_day, a_day = anchored_date(t, group, "target", pool.timelines), anchored_date(a, group, "alternative", pool.timelines)
        for role, record, value, day in (("gold", t, gold, t_day), ("lure", a, lure, a_day)):
            stale = pool.timelines.conflict(record.upstream_id, day, value)
            if stale is not None:
                raise Excluded(
                    "timeline_conflict",
                    f"the {role} {value!r} for {shown_date(day)}: the answer timeline puts {stale.answers[0]!r} in force then "
                    f"({stale.snapshot}:{stale.line} {stale.field})",
                )
        asked = to_past(asked)
        t_scope, a_scope = shown_date(t_day), shown_date(a_day)
        relative = relative_time(asked)
        if relative is not None:
            raise Excluded("relative_time", f"question {asked!r} says {relative!r}, which clashes with an as-of date")
        if future_question(asked):
            for role, value, day in (("gold", gold, t_day), ("lure", lure, a_day)):
                when = answer_date(value)
                if when is not None and when < day:
                    raise Excluded(
                        "predates_scope", f"the {role} {value!r} precedes the as-of date of a question about the next occurrence"
                    )
        if past_question(asked):
            for role, value in (("gold", gold), ("lure", lure)):
                day = answer_date(value)
                if day is not None and day > t_day:
                    raise Excluded(
                        "postdates_scope", f"the {role} {value!r} postdates the as-of date {t_scope} of a question about the past"
                    )
    else:
        hint = unstated_time(asked)
        if hint is not None:
            raise Excluded("unstated_time", f"question {asked!r} asks for something that changes over time ({hint!r}) but names no time")
        t_scope, a_scope = _place(t, group, "target"), _place(a, group, "alternative")
    needs: tuple[str, ...] = ()
    try:
        if dimension == "location" and has_referent_words(asked):  # the place is named in the question itself
            asked_t, asked_a = name_referent(asked, t_scope), name_referent(asked, a_scope)
            question = tpl["question_named"].format(question=asked_t)
            g_text = _sentence(tpl["context_named"].format(statement=restate(asked_t, gold)))
            s_text = _sentence(tpl["context_named"].format(statement=restate(asked_a, lure)))
        else:
            question = tpl[f"question_{dimension}"].format(question=asked, scope=t_scope)
            g_text = tpl[f"context_{dimension}"].format(scope=t_scope, statement=restate(asked, gold))
            s_text = tpl[f"context_{dimension}"].format(scope=a_scope, statement=restate(asked, lure))
    except Excluded as excluded:
        if excluded.reason != "no_restatement":
            raise
        # no rule restates this question: a draft whose G and S a maintainer writes (restatements.py), with the
        # source's question and answer at each scope as placeholders; never released without them
        needs = ("G", "S")
        if dimension == "location" and has_referent_words(asked):
            question = tpl["question_named"].format(question=name_referent(asked, t_scope))
        else:
            question = tpl[f"question_{dimension}"].format(question=asked, scope=t_scope)
        g_text = f"[to be restated] {t.edited_question}: {gold}"
        s_text = f"[to be restated] {a.edited_question}: {lure}"
    found = unscoped(question, dimension)
    if found is not None:
        raise Excluded(*found)
    if dimension == "time":
        t_value, a_value = t_scope, a_scope
    else:
        t_value, a_value = t.scope_value, a.scope_value
    candidate = spec.candidate(
        question=question,
        target_scope=Scope(**{dimension: t_value}),
        alt_scope=Scope(**{dimension: a_value}),
        gold=gold,
        lure=lure,
        g_text=g_text,
        s_text=s_text,
        registered=[(gold, lure)],
        provenance_g=t.answer_provenance(t.answers[0]),
        provenance_s=a.answer_provenance(a.answers[0]),
        construction={"G": "restatement", "S": "restatement"},
        linked_clusters={cluster_id("situatedqa", uid) for uid in pool.rewordings_of(t.upstream_id)},
        needs=needs,
    )
    at_target = [x for r in group if scopes_overlap(dimension, r.scope_value, t.scope_value) for x in r.answers]
    limit = t_day if dimension == "time" and past_question(asked) else None

    def valid(d: Distractor) -> bool:
        """Wrong for the whole target scope, of the gold's unit, and not after the as-of date of a past question."""
        if any(same_answer(d.text, x) or entity_clash(d.text, x) for x in at_target):
            return False
        if unit_of(d.text) != unit_of(gold) or not _comparable_magnitude(gold, d.text):
            return False
        day = answer_date(d.text) if limit is not None else None
        return day is None or day <= limit

    # the question's own other contexts (and rewordings asking the same relation); `answer` entries only
    own = [
        r
        for uid in sorted(pool.rewordings_of(t.upstream_id))
        if uid == t.upstream_id or same_relation(t.question, pool.groups[uid][0].question)
        for r in pool.groups[uid]
    ]
    preferred = [
        Distractor(
            text=clean_text(other.answers[0]),
            provenance=other.answer_provenance(other.answers[0]),
            cluster_id=cluster_id("situatedqa", other.upstream_id),
        )
        for other in own
        if other is not t and other is not a and not scopes_overlap(dimension, other.scope_value, t.scope_value) and _one_answer(other)
    ]
    # the question's answer timeline first (values of the same relation at other dates), then its other contexts
    timeline = [
        Distractor(text=clean_text(value.answers[0]), provenance=value.answer_provenance(value.answers[0]), cluster_id=spec.cluster_id)
        for value in pool.timelines.values(t.upstream_id)
        if dimension == "time" and len({answer_key(x) for x in value.answers}) == 1
    ]
    preferred = [d for d in timeline + preferred if valid(d)]
    distractors = Pool(preferred, lambda: [d for d in _same_relation(pool, t, gold) if valid(d)])
    return with_distractors(candidate, distractors, seed)


def _same_relation(pool: SituatedQAPool, t: SituatedQARecord, gold: str) -> list[Distractor]:
    """Answers of other upstream questions asking the same relation (`same_relation`) with answers of
    the gold's type, in source order (`choose` draws from them at random under the item's seed)."""
    found = pool.by_relation.get(question_type(t, gold), [])
    return [
        d
        for d in found
        if d.provenance.upstream_id != t.upstream_id and same_relation(t.question, pool.groups[d.provenance.upstream_id][0].question)
    ]


@functools.cache
def _type_patterns() -> tuple[tuple[str, re.Pattern], ...]:
    data = json.loads(QUESTION_TYPES.read_text(encoding="utf-8"))
    return tuple((label, re.compile(pattern)) for label, pattern in data["labels"])


GENERIC_TYPES = frozenset({"person", "date", "place", "population or count", "other"})


def type_label(question: str) -> str:
    """The question's type (question_types.json): the first label whose pattern its lower-cased text
    matches; a generic label (a person, a date, a place, a count) is told apart by the first content word
    of the relation ('date: marriage', 'date: school'), so that one wh-word is not one type."""
    text = " ".join(question.lower().split())
    label = next(label for label, pattern in _type_patterns() if pattern.search(text))
    if label in GENERIC_TYPES:
        words = [w for w in relation_text(question) if w not in STOP_WORDS and w not in WH_WORDS and w not in HOW_WORDS]
        label = f"{label}: {words[0]}" if words else label
    return label
