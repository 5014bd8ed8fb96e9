"""SituatedQA candidates from project-written qa_data rows: questions, contexts, scopes, distractors, rewordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrobust.builders.misleadqa.candidate import Excluded
from ctxrobust.builders.misleadqa.situatedqa_items import SituatedQAPool, specs
from ctxrobust.sources import situatedqa


def rows_file(tmp_path: Path, name: str, rows: list[dict]) -> list:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return situatedqa.read_file(path, f"situatedqa/{name}", "c" * 64)


def geo(uid, location, answer, question="who designed the harbour board flag"):
    return {
        "question": question,
        "id": uid,
        "edited_question": f"{question} in {location}",
        "location": location,
        "answer": [answer],
        "any_answer": [answer],
    }


def temp(uid, date, answer, question):
    return {
        "question": question,
        "id": uid,
        "edited_question": f"{question} as of {date}",
        "date": date,
        "date_type": "sampled_year",
        "answer": [answer],
        "any_answer": [answer],
    }


@pytest.fixture
def geo_pool(tmp_path):
    rows = [
        geo(11, "us", "Ann Lee"),
        geo(11, "saudi arabia", "Omar Said"),
        geo(11, "canada", "Dee Moss"),
        geo(11, "chile", "Eli Park"),
        geo(11, "Atlanta Falcons", "Cy Young"),
    ]
    return SituatedQAPool(rows_file(tmp_path, "geo.dev.jsonl", rows))


def made(found, target, alt):
    spec = next(s for s in found if s.id.endswith(f"-dev{target}-dev{alt}"))
    return spec.build()


def test_location_item_states_each_scope_as_english_names_it(geo_pool):
    candidate = made(specs(geo_pool, seed=0), 2, 1)  # target: saudi arabia, alternative: us
    assert candidate.question == "Who designed the harbour board flag in Saudi Arabia?"
    assert candidate.g_text == "In Saudi Arabia, Omar Said designed the harbour board flag."  # restated, Table 6
    assert candidate.s_text == "In the US, Ann Lee designed the harbour board flag."
    f_text, edits = candidate.f_text_and_edits()
    assert f_text == "In Saudi Arabia, Ann Lee designed the harbour board flag."
    assert edits == [{"start": 17, "end": 26, "old": "Omar Said", "new": "Ann Lee"}]
    assert candidate.construction == {"G": "restatement", "S": "restatement"}
    assert candidate.target_scope.location == "saudi arabia" and candidate.alt_scope.location == "us"  # as the source writes them
    assert sorted(d.text for d in candidate.distractors) == ["Dee Moss", "Eli Park"]  # the question's other contexts


def test_a_location_that_is_not_a_place_is_excluded(geo_pool):
    with pytest.raises(Excluded) as info:
        made(specs(geo_pool, seed=0), 5, 1)
    assert info.value.reason == "scope_not_a_place" and "Atlanta Falcons" in info.value.detail


def test_reworded_questions_share_target_facts_and_link_their_clusters(tmp_path):
    chairs, chair = "who chairs the harbour board", "who is the chair of the harbour board"
    rows = [
        temp(21, "2001", "Ann Lee", chairs),
        temp(21, "2010", "Bo Chan", chairs),
        temp(21, "2016", "Cy Dee", chairs),
        temp(21, "2020", "Di Fox", chairs),
        temp(22, "2001", "Ann Lee", chair),
        temp(22, "2010", "Bo Chan", chair),
        temp(23, "2001", "Ann Lee", "who won the harbour regatta"),
        temp(23, "2010", "Bo Chan", "who won the harbour regatta"),
    ]
    pool = SituatedQAPool(rows_file(tmp_path, "temp.dev.jsonl", rows))
    assert pool.relation == {"21": "21", "22": "21", "23": "23"}  # 23 shares the answers, not the wording
    found = specs(pool, seed=0)
    by_id = {s.id: s for s in found}
    assert by_id["situatedqa-time-21-dev1-dev2"].target_key == by_id["situatedqa-time-22-dev5-dev6"].target_key
    assert by_id["situatedqa-time-21-dev1-dev2"].target_key != by_id["situatedqa-time-23-dev7-dev8"].target_key
    candidate = by_id["situatedqa-time-21-dev1-dev2"].build()
    assert candidate.question == "Who chairs the harbour board as of December 31, 2001?"  # a year re-anchored to its last day
    assert "situatedqa-22" in candidate.linked_clusters  # one dependency group with the rewording


def test_a_negated_hosted_won_or_final_relation_is_another_relation():
    from ctxrobust.builders.misleadqa.situatedqa_items import same_relation

    made = "when was the last time the us didn't make the world cup"
    assert same_relation(made, "when was the last time italy did not qualify for the world cup")  # both negated
    for other in (
        "when was the last time norway was in the world cup",  # the relation itself, not its negation
        "when was the last time the us hosted the world cup",
    ):
        assert not same_relation(made, other), other
    played = "last time croatia played in the world cup"
    assert same_relation(played, "when was the last time norway was in the world cup")
    for other in ("when was the last time england were in a world cup final", "when was the last time brazil won the world cup"):
        assert not same_relation(played, other), other


def raw_file(tmp_path: Path, rows: list[dict]):
    from ctxrobust.builders.misleadqa.timelines import Timelines

    path = tmp_path / "temp.dev.raw.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Timelines(situatedqa.read_timelines(path, "situatedqa_raw/temp.dev.jsonl", "d" * 64))


def timeline(uid, question, cur, cur_start, prev, prev_start):
    def start(value):
        year, month, day = (list(value) + [None, None])[:3]
        return {"year": year, "month": month, "date": day}

    return {
        "question": question,
        "id": uid,
        "timelines": [
            {"cur_answers": [cur], "cur_start": start(cur_start), "prev_answers": [prev], "prev_start": start(prev_start)},
        ],
    }


CHAIR = "who chaired the harbour board"
CHAIR_TOO = "who chaired the harbour board committee"


def test_a_timeline_value_is_taken_before_a_value_borrowed_from_another_question(tmp_path):
    """App. A.1 'Distractors': the question's own answer timeline (raw_data) comes before any other question."""
    rows = [
        temp(31, "2004", "Ann Lee", CHAIR),
        temp(31, "2012", "Bo Chan", CHAIR),
        # another question asking the same relation: its answers are the borrowed (fallback) distractors
        temp(32, "2003", "Gil Ray", CHAIR_TOO),
        temp(32, "2011", "Hal Ito", CHAIR_TOO),
        temp(32, "2015", "Ivy Orr", CHAIR_TOO),
    ]
    timelines = raw_file(
        tmp_path,
        [
            timeline(31, CHAIR, "Bo Chan", (2010,), "Ann Lee", (2000,)),
            timeline(31, CHAIR, "Bo Chan", (2010,), "Di Fox", (2007,)),
            timeline(31, CHAIR, "Bo Chan", (2010,), "Eve Kim", (2008, 5)),
        ],
    )
    records = rows_file(tmp_path, "temp.dev.jsonl", rows)
    with_timelines = made(specs(SituatedQAPool(records, timelines), 0), 1, 2)
    assert {d.provenance.snapshot for d in with_timelines.distractors} == {"situatedqa_raw/temp.dev.jsonl"}
    assert sorted(d.text for d in with_timelines.distractors) == ["Di Fox", "Eve Kim"]
    without = made(specs(SituatedQAPool(records), 0), 1, 2)  # no timelines: only the borrowed answers remain
    assert {d.provenance.snapshot for d in without.distractors} == {"situatedqa/temp.dev.jsonl"}
    assert {d.text for d in without.distractors} <= {"Gil Ray", "Hal Ito", "Ivy Orr"}


def test_a_qa_data_answer_the_timeline_contradicts_on_the_as_of_date_is_excluded(tmp_path):
    """The timeline's dated change (March 2004) puts Bo Chan in force on December 31, 2004, not Ann Lee."""
    rows = [temp(41, "2004", "Ann Lee", CHAIR), temp(41, "2012", "Bo Chan", CHAIR), temp(42, "2003", "Gil Ray", CHAIR_TOO)]
    rows += [temp(42, "2011", "Hal Ito", CHAIR_TOO), temp(42, "2015", "Ivy Orr", CHAIR_TOO)]
    timelines = raw_file(tmp_path, [timeline(41, CHAIR, "Bo Chan", (2004, 3, 2), "Ann Lee", (2000,))])
    found = specs(SituatedQAPool(rows_file(tmp_path, "temp.dev.jsonl", rows), timelines), 0)
    with pytest.raises(Excluded) as excluded:
        made(found, 1, 2)
    assert excluded.value.reason in ("timeline_conflict", "scope_imprecise")
