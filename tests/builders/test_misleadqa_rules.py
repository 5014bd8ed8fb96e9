"""The rules that make SituatedQA items read as English and hold at their scope: break each on one item
and see it named by check and id; the construction rules behind them on project-written rows; the
gazetteer; the adjudication file as a build input; a build from a project-written SituatedQA folder."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ctxrobust.builders.misleadqa import adjudication, gazetteer, phrasing
from ctxrobust.builders.misleadqa.candidate import Excluded
from ctxrobust.builders.misleadqa.config import MisleadQAConfig
from ctxrobust.builders.misleadqa.item_rules import item_checks
from ctxrobust.builders.misleadqa.normalise import entity_clash, unit_of
from ctxrobust.builders.misleadqa.options import provisional_letters
from ctxrobust.builders.misleadqa.situatedqa_items import SituatedQAPool, specs
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import situatedqa


def rows_file(folder: Path, name: str, rows: list[dict]) -> list:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return situatedqa.read_file(path, f"situatedqa/{name}", "c" * 64)


def temp(uid, date, answer, question, date_type="sampled_date", any_answer=None):
    return {
        "question": question,
        "id": uid,
        "edited_question": f"{question} as of {date}",
        "date": date,
        "date_type": date_type,
        "answer": [answer] if isinstance(answer, str) else answer,
        "any_answer": any_answer or ([answer] if isinstance(answer, str) else answer),
    }


def geo(uid, location, answer, question):
    return {
        "question": question,
        "id": uid,
        "edited_question": f"{question} in {location}",
        "location": location,
        "answer": [answer],
        "any_answer": [answer],
    }


MAYORS = "who was the mayor of the harbour town"
TIME_ROWS = [
    temp(31, "May 3, 2001", "Ann Lee", MAYORS),
    temp(31, "June 9, 2010", "Bo Chan", MAYORS),
    temp(31, "July 1, 2016", "Cy Dee", MAYORS),
    temp(31, "August 2, 2020", "Di Fox", MAYORS),
]


def build(tmp_path, rows, target, alt, name="temp.dev.jsonl"):
    pool = SituatedQAPool(rows_file(tmp_path, name, rows))
    tag = name.split(".")[1]
    spec = next(s for s in specs(pool, seed=0) if s.id.endswith(f"-{tag}{target}-{tag}{alt}"))
    return spec.build()


@pytest.fixture
def time_item(tmp_path):
    candidate = build(tmp_path, TIME_ROWS, 1, 2)
    return candidate.item(*provisional_letters(0, candidate.id))


def problems(item, name):
    return item_checks(MisleadQAConfig())[name](item)


# --- natural contexts (Table 6) ---------------------------------------------------------------------


def test_time_contexts_restate_the_fact_and_the_question_is_english(tmp_path):
    candidate = build(tmp_path, TIME_ROWS, 1, 2)
    assert candidate.question == "Who was the mayor of the harbour town as of May 3, 2001?"
    assert candidate.g_text == "As of May 3, 2001, Ann Lee was the mayor of the harbour town."
    assert candidate.s_text == "As of June 9, 2010, Bo Chan was the mayor of the harbour town."
    assert candidate.f_text_and_edits()[0] == "As of May 3, 2001, Bo Chan was the mayor of the harbour town."
    assert candidate.construction == {"G": "restatement", "S": "restatement"}
    item = candidate.item(*provisional_letters(0, candidate.id))
    assert all(not problems(item, name) for name in item_checks(MisleadQAConfig())), {
        n: problems(item, n) for n in item_checks(MisleadQAConfig())
    }


@pytest.mark.parametrize(
    "question, answer, statement",
    [
        ("When did England last get to the semi final of a world cup", "1990", "England last got to the semi final of a world cup in 1990"),
        ("When did the smoking ban come in California", "1995", "the smoking ban came in California in 1995"),
        ("When was the first iphone released", "2007", "the first iphone was released in 2007"),
        ("How many states are there in the US", "50", "there are 50 states in the US"),
        ("What is the legal amount of weed", "10 grams", "the legal amount of weed is 10 grams"),
        ("When was the last time the USA won miss universe", "May 3, 2010", "the last time the USA won miss universe was on May 3, 2010"),
    ],
)
def test_restatements_state_the_relation_and_the_answer(question, answer, statement):
    assert phrasing.restate(question, answer) == statement


def test_a_location_question_saying_we_names_the_place(tmp_path):
    q = "when did we gain independence from british rule"
    rows = [
        geo(41, "india", "15 August 1947", q),
        geo(41, "pakistan", "14 August 1947", q),
        geo(41, "kenya", "12 December 1963", q),
        geo(41, "ghana", "6 March 1957", q),
    ]
    candidate = build(tmp_path, rows, 1, 2, "geo.dev.jsonl")
    assert candidate.question == "When did India gain independence from british rule?"
    assert candidate.g_text == "India gained independence from british rule on August 15, 1947."  # one date format (clean_text)
    assert candidate.s_text == "Pakistan gained independence from british rule on August 14, 1947."


# --- construction rules (exclusions named) ---------------------------------------------------------------


def excluded(tmp_path, rows, target, alt, name="temp.dev.jsonl"):
    with pytest.raises(Excluded) as info:
        build(tmp_path, rows, target, alt, name)
    return info.value


def test_a_year_whose_answer_changes_within_it_is_excluded_and_one_that_holds_is_re_anchored(tmp_path):
    q = "who came second in the world cup"
    rows = [
        temp(51, "2014", "Argentina", q, "start"),
        temp(51, "2006", "France", q, "sampled_year"),
        temp(51, "2010", "France", q, "sampled_year"),
        temp(51, "July 11, 2010", "Netherlands", q, "start"),
        temp(51, "2019", "Croatia", q, "sampled_year"),
        temp(51, "2002", "Germany", q, "sampled_year"),
    ]
    found = excluded(tmp_path, rows, 3, 1)  # 2010 (France) as target: the answer changes to Netherlands within 2010
    assert found.reason in ("scope_imprecise", "conflicting_answers") and "July 11, 2010" in found.detail
    candidate = build(tmp_path, rows, 1, 2)  # Argentina started in 2014: it holds at the end of 2014, the date asked
    assert candidate.question.endswith("as of December 31, 2014?") and candidate.target_scope.time == "December 31, 2014"


def test_an_answer_after_the_as_of_date_of_a_question_about_the_past_is_excluded(tmp_path):
    q = "when did the harbour town last host the regatta"
    rows = [
        temp(61, "May 3, 2001", "1998", q),
        temp(61, "June 9, 2010", "2008", q),
        temp(61, "July 1, 2016", "2014", q),
        temp(61, "August 2, 2020", "2019", q),
    ]
    found = excluded(tmp_path, rows, 1, 2)  # target 2001: the lure 2008 postdates it, so F would contradict its scope
    assert found.reason == "postdates_scope" and "2008" in found.detail


def test_questions_that_do_not_read_as_english_are_excluded(tmp_path):
    for number, (question, reason) in enumerate(
        [
            ("who was the mayor of the harbour town brainly", "question_junk"),
            ("who was our mayor of the harbour town", "first_person"),
            ("who was the mayor this year", "relative_time"),
        ]
    ):
        rows = [dict(r, question=question, id=70 + number) for r in TIME_ROWS]
        assert excluded(tmp_path, rows, 1, 2).reason == reason


def test_a_location_question_with_an_unstated_time_is_excluded(tmp_path):
    q = "what is the current repo rate"
    rows = [geo(81, "india", "4%", q), geo(81, "chile", "5%", q), geo(81, "peru", "6%", q), geo(81, "kenya", "7%", q)]
    assert excluded(tmp_path, rows, 1, 2, "geo.dev.jsonl").reason == "unstated_time"


def test_distractors_come_from_the_same_relation_only(tmp_path):
    rows = [
        temp(31, "May 3, 2001", "Ann Lee", MAYORS, any_answer=["Ann Lee", "Bo Chan", "Zed Ames", "Yul Berg"]),
        temp(31, "June 9, 2010", "Bo Chan", MAYORS),
        temp(91, "May 3, 2005", "Eve Gray", "who was the mayor of the harbour town ever"),
        temp(91, "May 3, 2006", "Flo Hart", "who was the mayor of the harbour town ever"),
        temp(92, "May 3, 2005", "Gus Ives", "who was the women's mayor of the harbour town"),
        temp(92, "May 3, 2007", "Hal Jones", "who was the women's mayor of the harbour town"),
        temp(93, "May 3, 1995", "Ida Kent", "Who was the mayor of the  harbour town"),
        temp(93, "May 3, 1990", "Jo Lamb", "Who was the mayor of the  harbour town"),
    ]
    candidate = build(tmp_path, rows, 1, 2)
    # never any_answer entries, never the 'ever' or the women's relation: only the same relation
    assert sorted(d.text for d in candidate.distractors) == ["Ida Kent", "Jo Lamb"]
    assert all(d.provenance.field == "answer" for d in candidate.distractors)
    with pytest.raises(Excluded, match="too_few_distractors"):
        build(tmp_path, rows[:6], 1, 2)


def test_same_relation_allows_rewordings_but_not_another_gender_league_or_record():
    from ctxrobust.builders.misleadqa.situatedqa_items import same_relation

    base = "who was the mayor of the harbour town"
    assert same_relation(base, "Who was the mayor of the  harbour town in 1990")
    assert same_relation(base, "who was the harbour town's mayor")
    assert same_relation("when did auburn last play in march madness", "when did radford last play in march madness")
    for other in (
        "who was the women's mayor of the harbour town",
        "who was the mayor of the harbour town ever",
        "who was the first mayor of the harbour town",
        "who was the mayor of the river city",
        "who was the deputy mayor of the harbour town",
    ):
        assert not same_relation(base, other), other
    assert not same_relation("who has the most points in the nba", "who has the most points in the nfl")
    assert not same_relation("who has the most 3s in the nba", "who has the most turnovers in the nba")
    assert same_relation("who has the most 3s in the nba", "who has the nba's most 3s")
    assert not same_relation("when did galway last win the all ireland football", "when did galway last win the all ireland hurling")
    assert not same_relation("who is the chief of air staff of nigeria", "who is the chief of defence staff of nigeria")


def test_a_time_fact_is_used_once_whatever_its_as_of_date(tmp_path):
    rows = [
        temp(97, "May 3, 2009", "1988", "when did galway last win the all ireland hurling final"),
        temp(97, "May 3, 2015", "1988", "when did galway last win the all ireland hurling final"),
        temp(97, "May 3, 1985", "1980", "when did galway last win the all ireland hurling final"),
    ]
    pool = SituatedQAPool(rows_file(tmp_path, "temp.dev.jsonl", rows))
    found = specs(pool, seed=0)
    by_target = {s.id.rsplit("-", 2)[1]: s.target_key for s in found}
    assert by_target["dev1"] == by_target["dev2"]  # 'as of 2009' and 'as of 2015' state one fact (1988)


@pytest.mark.parametrize(
    "question, dimension, reason",
    [
        ("Who won at Silverstone as of December 31, 2015?", "time", "unscoped_event"),
        ("How many medals did Poland win in 2014 as of December 31, 2015?", "time", "year_in_question"),
        ("When did the smoking ban come into effect in California?", "location", "unstated_condition"),
        ("Who was the president in 1974 in the United States?", "location", "scope_imprecise"),
        ("When is the election for governor in Utah?", "location", "unstated_time"),
        ("Who win the election of 2018 in Pakistan?", "location", "question_form"),
        ("Who has been appointed as the interim prime minister in Malaysia?", "location", "unstated_time"),
        ("Who governed the kingdom in the United Kingdom?", "location", "unstated_time"),
        ("Who won the primary for governor in Massachusetts?", "location", "unstated_time"),
    ],
)
def test_questions_that_leave_their_scope_unstated_are_named(question, dimension, reason):
    assert phrasing.unscoped(question, dimension)[0] == reason
    assert phrasing.unscoped("Who was the last winner at Silverstone as of December 31, 2015?", "time") is None


def test_scope_stated_reports_an_unscoped_question(time_item):
    item = copy.deepcopy(time_item)
    assert not problems(item, "scope_stated")
    item["question"] = "Who won the harbour cup as of May 3, 2001?"
    assert any(p.startswith("unscoped_event") for p in problems(item, "scope_stated"))


def test_natural_text_reports_an_inverted_restatement_and_a_mixed_case_list(time_item):
    item = copy.deepcopy(time_item)
    item["contexts"]["G"]["text"] = "2007 did China land on the moon."
    assert any("reads as a question" in p for p in problems(item, "natural_text"))
    item = copy.deepcopy(time_item)
    letter = next(k for k in "ABCD" if k not in (item["gold"], item["lure"]))
    item["options"][letter] = "Naperville, joliet, aurora"
    assert any("mixed case" in p and f"option {letter}" in p for p in problems(item, "natural_text"))


def test_aliases_in_one_answer_list_are_one_answer(tmp_path):
    rows = [
        temp(95, "May 3, 2001", ["LA Lakers", "Los Angeles Lakers"], "who was the last winner of the harbour cup"),
        temp(95, "June 9, 2010", "Boston Celtics", "who was the last winner of the harbour cup"),
        temp(95, "July 1, 2016", "Miami Heat", "who was the last winner of the harbour cup"),
        temp(95, "August 2, 2020", "Chicago Bulls", "who was the last winner of the harbour cup"),
    ]
    assert build(tmp_path, rows, 1, 2).gold == "LA Lakers"


# --- the item rules the validators replay ----------------------------------------------------------------


def test_natural_text_reports_the_quoted_template_and_a_non_breaking_space(time_item):
    item = copy.deepcopy(time_item)
    item["contexts"]["S"]["text"] = 'As of June 9, 2010, the answer to the question "who was the mayor?" is Bo Chan.'
    assert any("quoted-question template" in p for p in problems(item, "natural_text"))
    item = copy.deepcopy(time_item)
    letter = next(k for k in "ABCD" if k not in (item["gold"], item["lure"]))
    item["options"][letter] = item["options"][letter].replace(" ", "\u00a0")
    assert any("non-breaking" in p and f"option {letter}" in p for p in problems(item, "natural_text"))
    item = copy.deepcopy(time_item)
    item["question"] = item["question"].lower()
    assert problems(item, "natural_text")


def test_scope_precision_reports_a_year_scope_and_an_option_after_the_as_of_date(time_item):
    item = copy.deepcopy(time_item)
    item["target_scope"]["time"] = "2001"
    assert any("not one day" in p for p in problems(item, "scope_precision"))
    item = copy.deepcopy(time_item)
    item["question"] = "When did the harbour town last host the regatta as of May 3, 2001?"
    letter = next(k for k in "ABCD" if k not in (item["gold"], item["lure"]))
    item["options"][letter] = "2008"
    assert any(f"option {letter} '2008' postdates" in p for p in problems(item, "scope_precision"))


def test_distinctness_reports_two_options_naming_one_entity(time_item):
    item = copy.deepcopy(time_item)
    a, b = [k for k in "ABCD" if k not in (item["gold"], item["lure"])]
    item["options"][a], item["options"][b] = "LA Lakers", "Los Angeles Lakers"
    assert any("one entity" in p for p in problems(item, "distinctness"))
    assert entity_clash("Allies", "Allied") and entity_clash("The Metric System", "SI metric units")
    assert entity_clash("United States", "United Kingdom") is None


def test_units_and_fred_cents_are_reported():
    assert unit_of("10 grams or less") == "gram" and unit_of("2 ounces") == "ounce" and unit_of("1998") is None
    item = {
        "source": "fred",
        "options": {"A": "$12.006", "B": "$7.25", "C": "$8.00", "D": "$5.15", "E": "Insufficient information"},
        "gold": "B",
        "lure": "C",
    }
    assert problems(item, "fred_cents") == ["option A '$12.006' is not a rate in dollars and cents"]
    item = {
        "options": {"A": "10 grams", "B": "2 ounces", "C": "5 grams", "D": "3 grams", "E": "Insufficient information"},
        "gold": "A",
        "lure": "B",
    }
    assert problems(item, "units") == ["option B '2 ounces' is not in the gold answer's unit"]


def test_the_validators_name_a_broken_rule_by_check_and_id(time_item):
    from test_misleadqa_validators import GENERIC, StubRelease

    from ctxrobust.validators.checks import run_checks

    item = copy.deepcopy(time_item)
    item["target_scope"]["time"] = item["contexts"]["G"]["scope"]["time"] = item["contexts"]["F"]["scope"]["time"] = "2001"
    found = run_checks(StubRelease([item]), skip=GENERIC | {"provenance"})["scope_precision"]
    assert found and found[0].check == "scope_precision" and found[0].item == item["id"]


# --- gazetteer ---------------------------------------------------------------------------------------------


def test_the_gazetteer_knows_places_the_hand_list_missed_and_tells_georgia_apart():
    for name in ("Sofia", "Munich", "Naples", "Prince Edward Island", "Brandenburg"):
        assert gazetteer.lookup(name), name
    assert gazetteer.resolve("georgia", ["texas", "ohio"]).country == "US"
    assert gazetteer.resolve("georgia", ["france", "spain"]).kind == "country"
    assert gazetteer.resolve("georgia", []) is None
    assert not gazetteer.lookup("Atlanta Falcons")


# --- adjudication --------------------------------------------------------------------------------------------


def test_an_adjudication_file_is_read_from_jsonl_or_csv_and_a_bad_row_is_one_error(tmp_path):
    jsonl = tmp_path / "a.jsonl"
    h = "ab" * 32
    row = {"id": "x", "item_sha256": h, "decision": "exclude", "criterion": 4, "reason": "two answers", "reviewer": "me"}
    jsonl.write_text(json.dumps(row) + "\n")
    assert adjudication.read(jsonl)["x"].criterion == 4 and adjudication.read(jsonl)["x"].item_sha256 == h
    csv_file = tmp_path / "a.csv"
    csv_file.write_text(f"id,item_sha256,decision,criterion,reason,reviewer\nx,{h},retain,,fine,me\ny,{h},verify,1,check the date,me\n")
    assert {k: d.decision for k, d in adjudication.read(csv_file).items()} == {"x": "retain", "y": "verify"}
    csv_file.write_text(f"id,item_sha256,decision,criterion,reason,reviewer\nx,{h},maybe,,fine,me\n")
    with pytest.raises(CtxRobustError, match=r"a.csv:2: decision"):
        adjudication.read(csv_file)
    csv_file.write_text("id,decision,criterion,reason,reviewer\nx,retain,,fine,me\n")  # a file without the hashes
    with pytest.raises(CtxRobustError, match=r"a.csv: CSV header lacks item_sha256"):
        adjudication.read(csv_file)


def test_the_default_review_decides_with_a_stated_reason_and_names_the_item_read():
    decisions = adjudication.read(adjudication.DEFAULT)
    assert decisions and all(d.reason and d.reviewer == "the project's maintainers" for d in decisions.values())
    assert all(len(d.item_sha256) == 64 for d in decisions.values())
    # an exclusion names its screening criterion, or the construction rule it enforces (repeated targets, App. A.1)
    assert all(d.criterion or d.reason.startswith("repeated target fact") for d in decisions.values() if d.decision != "retain")
    assert any(d.reason.startswith("unverifiable: ") for d in decisions.values())


def test_a_build_from_a_project_written_situatedqa_folder_validates(tmp_path, store):
    from ctxrobust.build import build_release
    from ctxrobust.canonical import sha256_file
    from ctxrobust.release import Release

    folder = tmp_path / "qa_data"
    folder.mkdir()
    flag = "who designed the harbour board flag"
    geo_rows = [
        geo(101, place, name, flag) for place, name in (("chile", "Ann Lee"), ("peru", "Bo Chan"), ("kenya", "Cy Dee"), ("ghana", "Di Fox"))
    ]
    (folder / "temp.dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in TIME_ROWS), encoding="utf-8")
    (folder / "geo.dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in geo_rows), encoding="utf-8")
    overrides = {
        "situatedqa_dir": str(folder),
        "adjudication": "none",
        "fred_time_n": 4,
        "fred_location_n": 4,
        "situatedqa_time_n": 2,
        "situatedqa_location_n": 2,
    }
    result = build_release("misleadqa", "0.2.0-dir", overrides, tmp_path / "out", store)  # validated before it is written
    release = Release(result.path, store=store)
    sources = release.manifest["build_notes"]["user_sources"]["situatedqa"]
    assert sources["files"] == {
        "situatedqa_dir/geo.dev.jsonl": sha256_file(folder / "geo.dev.jsonl"),
        "situatedqa_dir/temp.dev.jsonl": sha256_file(folder / "temp.dev.jsonl"),
    }
    items = [i for i in release.rows("main.jsonl") if i["source"] == "situatedqa"]
    assert len(items) == 4 and all(i["provenance"]["G"]["snapshot"].startswith("situatedqa_dir/") for i in items)
    assert all(v["passed"] for v in release.manifest["validators"].values())


def test_a_situatedqa_folder_without_qa_data_files_is_one_error(tmp_path):
    with pytest.raises(CtxRobustError, match="holds no temp"):
        situatedqa.folder_files(tmp_path)


def test_natural_text_reports_a_restatement_that_drops_the_kind_of_answer_asked_for(time_item):
    item = copy.deepcopy(time_item)
    item["question"] = "What ethnic community is the smallest in Mexico?"
    item["contexts"]["G"]["text"] = "In Mexico, Muslim is the smallest."
    assert any("drops 'ethnic community'" in p for p in problems(item, "natural_text"))


def test_names_months_and_institutions_are_capitalised_and_shouted_places_are_not():
    from ctxrobust.builders.misleadqa.scopes import display_location

    names = phrasing.answer_names(["Mexico City", "Tokyo"])
    assert phrasing.truecase("what is the most populous city", names) == "What is the most populous city"
    assert (
        phrasing.truecase("who was elected in january 2006 to the european union", {})
        == "Who was elected in January 2006 to the European Union"
    )
    assert display_location("IRAN") == "Iran" and display_location("us") == "the US"


def entity_like(g: str, gold: str, lure: str) -> dict:
    """An item whose F is G with the gold replaced by the lure (as the builder writes it)."""
    from ctxrobust.builders.misleadqa.substitution import substitute

    f, edits = substitute(g, [(gold, lure)])
    return {
        "options": {"A": gold, "B": lure, "C": "x", "D": "y", "E": "Insufficient information"},
        "gold": "A",
        "lure": "B",
        "contexts": {"G": {"text": g}, "S": {"text": g}, "F": {"text": f}},
        "f_edits": edits,
        "substitutions": [{"old": gold, "new": lure}],
    }


@pytest.mark.parametrize(
    ("g", "gold", "lure", "found"),
    [
        ("John Roe (1684 – 18 June 1716) sat in the Commons.", "1684", "1720", "runs backwards"),
        (
            "Kind of Blue is an album by Miles Davis, compiled from recordings Davis made in 1959.",
            "Miles Davis",
            "Shalamar",
            "last word 'Davis'",
        ),
        ("The hall was built in 1901-1902 by the town.", "1901-1902", "1890s", "a decade"),
        ("John Roe (1684 – 18 June 1716) sat in the Commons.", "1684", "1660", None),
        ("Kind of Blue is an album by Miles Davis, recorded in 1959.", "Miles Davis", "Shalamar", None),
        ("John Roe (11 April 1834 in Leith – 30 April 1909) was a composer.", "11 April 1834", "3 May 1898", "age of 11"),
        ("John Roe (11 April 1834 in Leith – 30 April 1909) was a composer.", "11 April 1834", "3 May 1850", None),
        ("Blue Sky is an album by the English rock band Placebo.", "Placebo", "Ann Lee", "F says it of the lure"),
    ],
)
def test_f_consistency_reports_a_backwards_span_a_leftover_surname_and_another_precision(g, gold, lure, found):
    """App. A.1: the substitution leaves no gold expression and adds no unintended contradiction."""
    from ctxrobust.builders.misleadqa.item_rules import f_consistency_problems

    problems = f_consistency_problems(entity_like(g, gold, lure))
    assert (found is None and problems == []) or (found is not None and any(found in p for p in problems)), problems
