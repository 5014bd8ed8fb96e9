"""Entity candidates from RAMDocs and AmbigDocs records: clean extracts, comparable lengths, distractors."""

from __future__ import annotations

import pytest
from paths import FIXTURES

from ctxrobust.builders.misleadqa import entity_items
from ctxrobust.builders.misleadqa.candidate import Excluded
from ctxrobust.builders.misleadqa.item_rules import comparability_problems
from ctxrobust.sources import ambigdocs, ramdocs
from ctxrobust.sources.ambigdocs import AmbigDocsRecord, Document


def built(specs):
    out, excluded = {}, {}
    for spec in specs:
        try:
            out[spec.id] = spec.make(spec)
        except Excluded as exc:
            excluded[spec.id] = exc.reason
    return out, excluded


def test_ramdocs_candidates_use_only_correct_documents_and_clean_sentences():
    records = ramdocs.read_file(FIXTURES / "ramdocs_sample.jsonl")
    candidates, _ = built(entity_items.specs(records, 0, source="ramdocs"))
    first = candidates["ramdocs-entity-q1-0-1"]
    assert (
        first.g_text
        == "The Harbour Lighthouse is a lighthouse on the coast of Maine, United States. It was built in 1871 by the federal government."
    )
    assert first.s_text.startswith("The Harbour Lighthouse is a lighthouse on the coast of Oregon") and "1896" in first.s_text
    assert (first.gold, first.lure) == ("1871", "1896")
    assert first.question.startswith('In this question, "Harbour Lighthouse" refers to Harbour Lighthouse (Maine).')
    assert first.provenance_g.pid == "1.0" and first.provenance_s.pid == "1.1"
    for candidate in candidates.values():
        texts = " ".join([candidate.g_text, candidate.s_text, *(d.text for d in candidate.distractors)])
        assert "1905" not in texts and "[" not in texts  # never the misinfo answer, never wiki debris
        assert {d.text for d in candidate.distractors} <= {"1871", "1896", "1883", "1902", "1840"} - {candidate.gold, candidate.lure}
        assert all(d.cluster_id != candidate.cluster_id for d in candidate.distractors)  # two entities: other questions'
        assert all(d.cluster_id.startswith("ramdocs") for d in candidate.distractors)


def item_of(candidate):
    return candidate.item("A", "B", ("C", "D"))


def test_extracts_are_comparable_in_length():
    records = ramdocs.read_file(FIXTURES / "ramdocs_sample.jsonl")
    candidates, _ = built(entity_items.specs(records, 0, source="ramdocs"))
    assert candidates
    for candidate in candidates.values():
        problems = [p for p in comparability_problems(item_of(candidate), 1.35, 25) if "word counts" in p]
        assert problems == []


@pytest.mark.parametrize(
    "sentence",
    [
        "] Demographics [ edit ] Historical population Census Pop .",
        "According to the Census Bureau, the city has a total area of , all of it land.",
        "Mahmud I (, , 2 August 1696 13 December 1754) was the Sultan.",
        "As of the census of 2010, there were 3,559 people, 1,575 households, and 909",
        "the second class in 1888.",
    ],
)
def test_debris_and_cut_sentences_are_not_clean(sentence):
    assert not entity_items.clean_sentence(sentence)


def test_an_initial_does_not_end_a_sentence():
    text = "Devata is a 1941 Telugu drama film directed by B. N. Reddi. It was a success."
    spans = entity_items.sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ["Devata is a 1941 Telugu drama film directed by B. N. Reddi.", "It was a success."]


def doc(position, title, text, answer):
    return Document(position=position, title=title, text=text, pid=f"p{position}", answer=answer)


def record(question, name, documents):
    return AmbigDocsRecord(
        snapshot="s", sha256="0" * 64, line=1, index=None, qid="q1", question=question, ambiguous_entity=name, documents=tuple(documents)
    )


def test_an_answer_given_away_by_the_title_is_a_draft_whose_question_a_maintainer_writes():
    rec = record(
        'Who is the artist of the album "Blue Sky"?',
        "Blue Sky",
        [
            doc(0, "Blue Sky (Ann Lee album)", "Blue Sky is the first album by Ann Lee. It was released in 1990.", "Ann Lee"),
            doc(1, "Blue Sky (Tom Ray album)", "Blue Sky is the second album by Tom Ray. It was released in 1992.", "Tom Ray"),
            doc(2, "Blue Sky (Cy Dee album)", "Blue Sky is the third album by Cy Dee. It was released in 1994.", "Cy Dee"),
            doc(3, "Blue Sky (Di Fox album)", "Blue Sky is the fourth album by Di Fox. It was released in 1996.", "Di Fox"),
        ],
    )
    candidates, _ = built(entity_items.specs([rec], 0, source="ramdocs"))
    assert candidates and all(c.needs == ("question",) and c.question.startswith("[to be restated] ") for c in candidates.values())
    asked = record('Who is "Ann Lee" the artist of?', "Blue Sky", rec.documents)  # the question itself names the answer
    _, excluded = built(entity_items.specs([asked], 0, source="ramdocs"))
    assert "answer_in_question" in set(excluded.values())


def test_a_bare_title_can_be_the_other_entity_but_never_the_target():
    rec = record(
        "When was Blue Sky released?",
        "Blue Sky",
        [
            doc(0, "Blue Sky", "Blue Sky is an album by Ann Lee. It was released in 1990.", "1990"),
            doc(1, "Blue Sky (film)", "Blue Sky is a film by Tom Ray. The film was released in 1992.", "1992"),
        ],
    )
    others = [
        record("When was Red Sun released?", "Red Sun", [doc(2, "Red Sun (song)", "Red Sun is a song. It was released in 1980.", "1980")]),
        record(
            "When was Red Moon released?", "Red Moon", [doc(3, "Red Moon (song)", "Red Moon is a song. It was released in 1984.", "1984")]
        ),
    ]
    others = [o.model_copy(update={"qid": f"q{n}", "line": n}) for n, o in enumerate(others, start=2)]
    candidates, excluded = built(entity_items.specs([rec, *others], 0, source="ramdocs"))
    assert excluded == {"ramdocs-entity-q1-0-1": "scope_not_stated"}
    kept = candidates["ramdocs-entity-q1-1-0"]
    assert kept.s_text == "Blue Sky is an album by Ann Lee. It was released in 1990." and kept.gold == "1992"


def test_a_title_that_gives_part_of_the_answer_away_makes_a_draft():
    rec = record(
        "When was Bert Smith born?",
        "Bert Smith",
        [
            doc(0, "Bert Smith (footballer, born 1892)", "Bert Smith (7 March 1892 – 1960) was an English footballer.", "7 March 1892"),
            doc(1, "Bert Smith (footballer, born 1896)", "Bert Smith (4 January 1896 – 1970) was an English footballer.", "4 January 1896"),
            doc(2, "Bert Smith (footballer, born 1899)", "Bert Smith (2 May 1899 – 1975) was an English footballer.", "2 May 1899"),
            doc(3, "Bert Smith (footballer, born 1901)", "Bert Smith (9 June 1901 – 1980) was an English footballer.", "9 June 1901"),
        ],
    )
    candidates, _ = built(entity_items.specs([rec], 0, source="ramdocs"))
    assert candidates and all(c.needs == ("question",) for c in candidates.values())


def test_an_entity_whose_documents_disagree_is_left_out():
    rec = record(
        "What is the language of Devata?",
        "Devata",
        [
            doc(0, "Devata (1941 film)", "Devata is a 1941 Telugu film.", "Telugu"),
            doc(1, "Devata (1941 film)", "Devata is a 1941 Hindi film.", "Hindi"),
            doc(2, "Devata (1978 film)", "Devata is a 1978 Hindi film.", "Hindi"),
        ],
    )
    assert [g[0].title for g in entity_items.entities(rec)] == ["Devata (1978 film)"]


def test_ambigdocs_user_files_still_give_candidates():
    records = ambigdocs.read_file(FIXTURES / "ambigdocs_sample.jsonl")
    candidates, _ = built(entity_items.specs(records, 0))
    assert candidates and all(c.source == "ambigdocs" for c in candidates.values())


def test_a_run_opens_by_naming_its_entity():
    chunk = doc(0, "Chilperic II of Burgundy", "Before that he co-ruled with his father Gondioc. Chilperic ruled from Valence.", "Gondioc")
    assert entity_items.extracts(chunk, ["Gondioc"]) == []
    opening = doc(1, "Chilperic II of Burgundy", "Chilperic II was a king of Burgundy. His father was Gondioc.", "Gondioc")
    assert entity_items.extract(opening, ["Gondioc"]) == "Chilperic II was a king of Burgundy. His father was Gondioc."


@pytest.mark.parametrize(
    ("sentence", "relation_words", "stated"),
    [
        ("It functioned from May 7, 1975 to April 1979.", "launched", False),
        ("It was launched on May 7, 1975.", "launched", True),
        ("Walter Price (9 October 1834 – 4 September 1894) was an English cricketer.", "born", True),
        ("He visited the town on 9 October 1834.", "born", False),
        ("The population was 174 at the 2011 census.", "population", True),
    ],
)
def test_the_answer_sentence_names_the_event_asked_about(sentence, relation_words, stated):
    forms = ["May 7, 1975", "9 October 1834", "174"]
    assert entity_items.event_stated(sentence, forms, relation_words) is stated
