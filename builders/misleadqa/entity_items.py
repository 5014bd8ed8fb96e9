"""Entity candidates from AmbigDocs-shaped records: AmbigDocs files and RAMDocs (paper Section 3.2,
Appendix A.1, A.3 Table 7).

A fact pair is two documents of one question about distinct entities that share a name, with
different answers. The question names the target entity (the document title). G and S are
contiguous source text (`extracts`): a run of whole, clean sentences of one document (no wiki
debris, terminal punctuation, opening by naming the entity), one of which states the answer
verbatim as the time of the event asked about, naming the entity's disambiguating words. Of the
possible runs the pair that passes context comparability (Appendix A.1) is kept: openings first,
then the shortest. RAMDocs chunks are ~100 words cut mid-sentence, so most yield a few runs. Distractors are answers of the same relation: the question's
other entities first, else answers of other questions asking the same relation of another name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import product

from ctxrobust.builders.misleadqa.answer_types import precision
from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, cluster_id, pair_specs, templates
from ctxrobust.builders.misleadqa.distractors import Pool, with_distractors
from ctxrobust.builders.misleadqa.item_rules import overlap
from ctxrobust.builders.misleadqa.normalise import answer_key, content_tokens, mentions, same_answer, unit_of, word_count
from ctxrobust.builders.misleadqa.scopes import canonical_entity
from ctxrobust.builders.misleadqa.substitution import substitute
from ctxrobust.sources.ambigdocs import AmbigDocsRecord, Document
from ctxrobust.sources.facts import Scope

MAX_WORDS = 70  # longest extract: a few sentences, as the paper's contexts
MAX_RATIO, MAX_DIFF = 1.35, 25  # Appendix A.1 context comparability (item_rules.comparability_problems)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")
_NOT_AN_END = re.compile(
    r"(?:\b[A-Z]|\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|No|Nos|Vol|Co|Inc|Ltd|Mt|Ft|Gen|Col|Lt|Capt|Rev|Hon|Sen|Rep|Gov|Pres|vs|approx|ca|c))\.$"
)
# Wiki and tokenisation debris: brackets, bullets, a space before punctuation, emptied values ('area of , all', '(, , 2 August')
_DEBRIS = re.compile(r"[\[\]•^|{}<>]|\s[,.;:!?)]|\(\s|\(\s*[,;)]|\b(?:of|at|is|was|to|about|and|by|from)\s*[,.;]|\s{2,}|\bedit\b")
_TERMINAL = re.compile(r"[.!?][\"')]?$")
# a run must not open with a word that points back at text left out (chunks may start mid-article)
_DANGLING = re.compile(
    r"^(?:It|Its|He|His|Him|She|Her|They|Their|This|These|That|Those|The (?:film|album|band|company|house|building|party|group|song|book|school|town|city|village|station))\b"
)
_LIFE_SPAN = re.compile(r"\(([^()]*\d{3,4}[^()]*)\)")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence (start, end) offsets; a full stop after an initial or a common abbreviation ends none."""
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.start() + len(match.group(0).rstrip())
        if _NOT_AN_END.search(text[start : match.start()]):
            continue
        spans.append((start, end))
        start = match.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def clean_sentence(sentence: str) -> bool:
    """A whole English sentence: starts with a capital, a digit or a quote, ends in terminal punctuation, no debris."""
    sentence = sentence.strip()
    return (
        bool(sentence[:1].isupper() or sentence[:1].isdigit() or sentence[:1] in "\"'")
        and bool(_TERMINAL.search(sentence))
        and not _DEBRIS.search(sentence)
    )


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


def _part_of_longer_name(sentence: str, forms: list[str]) -> bool:
    """The answer is only the start of a longer name in the sentence ('Carl A' of 'Carl A. Smith')."""
    for form in forms:
        for match in re.finditer(re.escape(form), sentence):
            rest = sentence[match.end() :]
            if re.match(r"\.?\s+[A-Z][a-z]", rest) and (re.search(r"\b[A-Z]$", form) or re.match(r"\s+[A-Z]", rest)):
                return True
    return False


# Event questions: the sentence stating the answer must say it is that event's time ('It functioned from
# May 7, 1975' does not say when a satellite was launched); a birth or death date may stand in a life span.
EVENT_CUES = {
    "launched": ("launch",),
    "built": ("built", "build", "construct", "complet", "erect"),
    "founded": ("found", "establish", "open", "form", "creat", "set up", "organi", "incorporat", "began"),
    "opened": ("open",),
    "released": ("releas", "issued", "publish"),
    "born": ("born", "birth"),
    "die": ("died", "death"),
}


def event_stated(sentence: str, forms: list[str], relation_words: str) -> bool:
    """The sentence names the event the question asks the time of (or the question asks no event's time)."""
    events = [cues for key, cues in EVENT_CUES.items() if key in relation_words.split()]
    if not events:
        return True
    lowered = sentence.lower()
    if any(cue in lowered for cues in events for cue in cues):
        return True
    in_span = any(mentions(span, form) for span in _LIFE_SPAN.findall(sentence) for form in forms)
    return in_span and bool({"born", "die"} & set(relation_words.split()))


def extracts(document: Document, forms: list[str], avoid: list[str] = (), relation_words: str = "") -> list[tuple[int, str]]:
    """(first sentence index, text) of every contiguous run of clean sentences, at most MAX_WORDS long,
    one of which states the answer (as the time of the event asked about, `event_stated`) and none of
    which mentions an `avoid` answer."""
    text = document.text
    spans = sentence_spans(text)
    sentences = [text[s:e] for s, e in spans]
    clean = [clean_sentence(s) and not any(mentions(s, other) for other in avoid) and not _part_of_longer_name(s, forms) for s in sentences]
    states = [any(mentions(s, form) for form in forms) and event_stated(s, forms, relation_words) for s in sentences]
    out = []
    for i in range(len(spans)):
        if _DANGLING.match(sentences[i]) or not (content_tokens(sentences[i]) & content_tokens(document.title)):
            continue  # a run opens by naming its entity, not with a word pointing at text left out
        for j in range(i, len(spans)):
            if not clean[j]:
                break
            run = text[spans[i][0] : spans[j][1]].strip()
            if word_count(run) > MAX_WORDS:
                break
            if any(states[i : j + 1]):
                out.append((i, run))
    return sorted(out, key=lambda pair: (pair[0] > 0, word_count(pair[1])))


def extract(document: Document, forms: list[str]) -> str | None:
    """The preferred extract stating the answer: from the opening sentence when it can be, shortest first."""
    found = extracts(document, forms)
    return found[0][1] if found else None


def disambiguators(title: str, ambiguous_entity: str) -> set[str]:
    return content_tokens(title) - content_tokens(ambiguous_entity)


# Words that ask for one attribute in other words ('what is the birth date of X' / 'when was X born');
# answers of one relation must still match the gold answer's type and precision (distractors.choose).
_SAME_ATTRIBUTE = {
    "birth": "born",
    "founding": "founded",
    "established": "founded",
    "constructed": "built",
    "open": "opened",
    "release": "released",
    "directors": "directed",
    "director": "directed",
    "creator": "created",
}
_QUESTION_WORDS = frozenset({"what", "when", "which", "who", "whom", "where", "year", "date", "estimated", "according", "census"})
_NAME = re.compile(r"\"[^\"]+\"|(?<!^)(?<![.?!] )\b[A-Z0-9][\w'.\-&]*(?:\s+(?:of\s+|the\s+)*[A-Z0-9][\w'.\-&]*)*")


def relation(record: AmbigDocsRecord) -> str:
    """What the question asks, without the names it asks about: questions with equal relations ask for the
    same attribute ('What is the population of Pinehurst, Texas?' -> 'of population')."""
    pattern = re.compile(re.escape(record.ambiguous_entity), re.IGNORECASE)
    rest = _NAME.sub(" ", " ".join(pattern.split(record.question)))
    words = {_SAME_ATTRIBUTE.get(w, w) for w in content_tokens(rest) if not w.isdigit()} - _QUESTION_WORDS
    return " ".join(sorted(words))


def entities(record: AmbigDocsRecord) -> list[tuple[Document, ...]]:
    """The record's documents grouped by entity (title), in document order; an entity whose documents
    disagree about the answer is left out (which one is true cannot be told)."""
    groups: dict[str, list[Document]] = defaultdict(list)
    for doc in record.documents:
        groups[doc.title].append(doc)
    return [
        tuple(docs)
        for docs in groups.values()
        if all(same_answer(docs[0].answer, d.answer) or answer_key(docs[0].answer) == answer_key(d.answer) for d in docs)
    ]


class AmbigDocsPool:
    def __init__(self, records: list[AmbigDocsRecord]):
        self.records = sorted(records, key=lambda r: (r.line or 0, r.index or 0, r.qid))
        self.by_relation: dict[str, list[tuple[AmbigDocsRecord, Document]]] = defaultdict(list)
        self.qids_of_pid: dict[str, set[str]] = defaultdict(set)
        for record in self.records:
            self.by_relation[relation(record)].extend((record, group[0]) for group in entities(record))
            for doc in record.documents:
                self.qids_of_pid[doc.pid].add(record.qid)


def specs(records: list[AmbigDocsRecord], seed: int, source: str = "ambigdocs") -> list[Spec]:
    pool = AmbigDocsPool(records)
    return [
        spec
        for record in pool.records
        for spec in pair_specs(
            source,
            "entity",
            record.qid,
            entities(record),
            answer=lambda group: group[0].answer,
            fact_key=lambda group, record=record: f"{relation(record)}@{canonical_entity(group[0].title)}",
            tag=lambda group: str(group[0].position),
            make=lambda spec, t, a, record=record: build(spec, pool, record, t, a, seed),
        )
    ]


def _comparable(question: str, g: str, s: str, registered: list[tuple[str, str]]) -> bool:
    """Appendix A.1 context comparability: G, S and F of close lengths, S no closer to the question than G and F."""
    f, _ = substitute(g, registered)
    counts = (word_count(g), word_count(s), word_count(f))
    if max(counts) > MAX_RATIO * min(counts) or max(counts) - min(counts) > MAX_DIFF:
        return False
    s_overlap = overlap(question, s)
    return all(s_overlap[k] <= overlap(question, other)[k] for other in (g, f) for k in (0, 1))


def _names_entity(text: str, title: str, other: str, ambiguous_entity: str, opening: bool) -> bool:
    """The text names what distinguishes its entity, and not everything that distinguishes the other one
    (a son's article naming his father 'Gerhard Meidell Gerhardsen (1848–1912)'). An entity whose title is
    the bare name (the primary topic) is told apart by its article's opening sentence, which never names
    the other entity's distinguishing words."""
    words, others, have = disambiguators(title, ambiguous_entity), disambiguators(other, ambiguous_entity), content_tokens(text)
    if not words:
        return opening and bool(others) and not (others & have)
    return bool(words & have) and not (others - words <= have and others - words)


def _overlapping_times(a: str, b: str) -> bool:
    """Two times of different precision in one year ('September 2010', 'Fall of 2010'): not distinct answers."""
    years = set(re.findall(r"\b\d{4}\b", a)) & set(re.findall(r"\b\d{4}\b", b))
    return bool(years) and precision(a) != precision(b)


def _life_span_problem(document: Document, relation_words: str) -> bool:
    """A birth or death date that is not the one in the opening sentence's life span ('(1754 – 1836)')
    belongs to someone else the article names."""
    if not {"born", "die", "died"} & set(relation_words.split()):
        return False
    opening = document.text[slice(*sentence_spans(document.text)[0])]
    span = _LIFE_SPAN.search(opening)
    return span is not None and not mentions(span.group(1), document.answer)


def build(
    spec: Spec, pool: AmbigDocsPool, record: AmbigDocsRecord, t_group: tuple[Document, ...], a_group: tuple[Document, ...], seed: int
) -> Candidate:
    t, a = t_group[0], a_group[0]
    gold, lure = t.answer, a.answer
    target_words = disambiguators(t.title, record.ambiguous_entity)
    if not target_words or target_words <= disambiguators(a.title, record.ambiguous_entity):
        raise Excluded("scope_not_stated", f"title {t.title!r} names nothing that tells it from {a.title!r}")
    if unit_of(gold) != unit_of(lure):
        raise Excluded("units", f"{gold!r} and {lure!r} are not in one unit")
    if _overlapping_times(gold, lure):
        raise Excluded("answers_overlap", f"{gold!r} and {lure!r} may name the same time")
    question = templates()["ambigdocs"]["question"].format(
        ambiguous_entity=record.ambiguous_entity, title=t.title, question=record.question
    )
    given_away = content_tokens(gold) & disambiguators(t.title, record.ambiguous_entity)  # 'Peter Bergman (comedian)'
    needs: tuple[str, ...] = ()
    if mentions(record.question, gold) or mentions(record.question, lure):
        raise Excluded("answer_in_question", f"the question {record.question!r} states the answer {gold!r} or {lure!r}")
    if mentions(question, gold) or mentions(question, lure) or given_away:
        # the title gives the answer away ('Beyond Measure (Jeremy Camp album)'): a draft whose question a
        # maintainer writes, naming the entity by what its G states besides the answer (restatements.py)
        needs = ("question",)
    for doc in (t, a):
        if _life_span_problem(doc, relation(record)):
            raise Excluded("answer_of_another_person", f"{doc.answer!r} is not in the life span that opens {doc.title!r}")
    registered = registered_pairs(gold, lure)
    g_forms, s_forms = [g for g, _ in registered], number_forms(lure)
    g_runs = [(doc, i, run) for doc in t_group for i, run in extracts(doc, g_forms, [lure], relation(record))]
    s_runs = [(doc, i, run) for doc in a_group for i, run in extracts(doc, s_forms, [gold], relation(record))]
    if not g_runs or not s_runs:
        missing = t if not g_runs else a
        raise Excluded(
            "answer_not_in_document",
            f"no clean sentence of {missing.title!r} states its answer {missing.answer!r}",
        )
    g_runs = [x for x in g_runs if _names_entity(x[2], x[0].title, a.title, record.ambiguous_entity, x[1] == 0)]
    s_runs = [x for x in s_runs if _names_entity(x[2], x[0].title, t.title, record.ambiguous_entity, x[1] == 0)]
    if not g_runs or not s_runs:
        missing = t if not g_runs else a
        raise Excluded(
            "scope_not_stated",
            f"no extract of {missing.title!r} names what distinguishes it from other {record.ambiguous_entity!r}",
        )
    pairs = [(g, s) for g, s in product(g_runs, s_runs) if _comparable(question, g[2], s[2], registered)]
    if not pairs:
        raise Excluded("lengths_not_comparable", f"no extracts of {t.title!r} and {a.title!r} have comparable lengths")
    # openings first (they introduce the entity), then the shortest, then the closest lengths
    (g_doc, _, g_text), (s_doc, _, s_text) = min(
        pairs,
        key=lambda p: (
            p[0][1] > 0,
            p[1][1] > 0,
            max(word_count(p[0][2]), word_count(p[1][2])),
            abs(word_count(p[0][2]) - word_count(p[1][2])),
        ),
    )
    candidate = spec.candidate(
        question=f"[to be restated] {question}" if needs else question,
        target_scope=Scope(entity=t.title),
        alt_scope=Scope(entity=a.title),
        gold=gold,
        lure=lure,
        g_text=g_text,
        s_text=s_text,
        registered=registered,
        provenance_g=record.document_provenance(g_doc),
        provenance_s=record.document_provenance(s_doc),
        construction={"G": "extract", "S": "extract"},
        linked_clusters={cluster_id(spec.source, q) for doc in (*t_group, *a_group) for q in pool.qids_of_pid[doc.pid]},
        needs=needs,
    )
    taken = {t.title, a.title}
    preferred = [
        Distractor(text=group[0].answer, provenance=record.document_provenance(group[0]), cluster_id=spec.cluster_id)
        for group in entities(record)
        if group[0].title not in taken
    ]
    fallback = [
        Distractor(text=doc.answer, provenance=other.document_provenance(doc), cluster_id=cluster_id(spec.source, other.qid))
        for other, doc in pool.by_relation[relation(record)]
        if other.qid != record.qid and relation(record)
    ]
    unit = unit_of(gold)  # options in the gold answer's unit (Appendix A.1: comparable type and precision)
    return with_distractors(
        candidate, Pool([d for d in preferred if unit_of(d.text) == unit], [d for d in fallback if unit_of(d.text) == unit]), seed
    )
