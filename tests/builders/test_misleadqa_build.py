"""The MisleadQA release built from the source mirror (plus project-written AmbigDocs / CondAmbigQA fixtures)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from types import SimpleNamespace

import pytest
from paths import FIXTURES

from ctxrobust.build import build_release
from ctxrobust.builders.misleadqa import MisleadQABuilder, MisleadQAConfig
from ctxrobust.builders.misleadqa.answer_types import is_garbled, precision
from ctxrobust.builders.misleadqa.candidate import Excluded
from ctxrobust.builders.misleadqa.fred_items import FredFacts, january_rate_known, time_specs
from ctxrobust.builders.misleadqa.item_rules import overlap
from ctxrobust.builders.misleadqa.scopes import display_location, is_place
from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError
from ctxrobust.release import Release
from ctxrobust.sources.fred import JURISDICTIONS, january_facts, read_series
from ctxrobust.validators.checks import run_checks
from ctxrobust.validators.misleadqa import balance_problems

AMBIGDOCS = FIXTURES / "ambigdocs_sample.jsonl"
CONDAMBIGQA = FIXTURES / "condambigqa_sample.jsonl"
OVERRIDES = {"ambigdocs_path": str(AMBIGDOCS), "condambigqa_path": str(CONDAMBIGQA)}
FEDERAL_STATES = {JURISDICTIONS[c] for c in ("AL", "LA", "MS", "SC", "TN")}


@pytest.fixture(scope="module")
def built(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("mqa-releases")
    result = build_release("misleadqa", "0.0.1-test", OVERRIDES, out, store)
    return result, Release(result.path, store=store)


@pytest.fixture(scope="module")
def main_items(built):
    return built[1].rows("main.jsonl")


@pytest.fixture(scope="module")
def fred_values(store):
    values = {}
    for name in store.names():
        if name.startswith("fred/"):
            series = read_series(store.path(name), name, store.snapshot(name).sha256)
            for fact in january_facts(series):
                values[(fact.subject, fact.scope.time)] = Decimal(fact.value)
    return values


def group(items, source, dimension):
    return [i for i in items if i["source"] == source and i["scope_dimension"] == dimension]


def test_every_validator_passed_at_build_time(built):
    result, release = built
    assert result.status == "built"
    validators = release.manifest["validators"]
    assert all(v["passed"] for v in validators.values()), validators
    for name in (
        "span_replay",
        "answer_isolation",
        "distractor_leakage",
        "distinctness",
        "balance",
        "comparability",
        "provenance",
        "fred_january_rate",
        "fred_review",
    ):
        assert name in validators


def test_fred_has_200_time_and_200_location_items_with_true_values(main_items, fred_values):
    for dimension in ("time", "location"):
        items = group(main_items, "fred", dimension)
        assert len(items) == 200
        for item in items:
            for context, scope in (("G", item["target_scope"]), ("S", item["alt_scope"])):
                stated = Decimal(item["contexts"][context]["value"].lstrip("$"))
                assert stated == fred_values[(scope["location"], scope["time"])], (item["id"], context)


def test_fred_facts_state_only_rates_the_series_shows_on_january_1(main_items, fred_values, built):
    # Appendix A.1 leaves out changes within a year: each G and S value equals the value of the last year the
    # source table records before it and of the first it records from that year on; the recorded years found
    # here from the values themselves (a year in which some annual series changes)
    states = {state for state, _ in fred_values} - {"Georgia"}  # Georgia's series is monthly
    recorded = {
        int(date[:4])
        for state, date in fred_values
        if state in states
        and (state, f"{int(date[:4]) - 1}-01-01") in fred_values
        and fred_values[(state, date)] != fred_values[(state, f"{int(date[:4]) - 1}-01-01")]
    }
    assert (
        set(built[1].manifest["build_notes"]["fred"]["unrecorded_years"]) == set(range(1990, 2025)) - recorded == {1990, 1993, 1995, 1999}
    )
    for item in group(main_items, "fred", "time") + group(main_items, "fred", "location"):
        for scope in (item["target_scope"], item["alt_scope"]):
            year, state = int(scope["time"][:4]), scope["location"]
            before = max(y for y in recorded if y < year and (state, f"{y}-01-01") in fred_values)
            after = min(y for y in recorded if y >= year)
            values = {fred_values[(state, f"{y}-01-01")] for y in (before, year, after)}
            assert len(values) == 1, item["id"]


def test_january_rate_known_by_hand():
    facts = {
        f"{year}-01-01": SimpleNamespace(value=value)
        for year, value in ((1992, "3.85"), (1993, "3.85"), (1994, "5.25"), (2012, "6.15"), (2013, "6.15"), (2014, "8"), (2015, "8.00"))
    }
    recorded = {1992, 1994, 2012, 2013, 2014, 2015}  # 1993 is not recorded: its value repeats 1992's
    assert january_rate_known(facts, "2015-01-01", recorded) is None  # 8 and 8.00: the same rate, held through January 1, 2015
    assert "the 2014 record ($8.00) differs from 2013's ($6.15)" in january_rate_known(facts, "2014-01-01", recorded)  # $8.00 from August 1
    assert january_rate_known(facts, "2013-01-01", recorded) is None
    # Hawaii: 1993 repeats 1992's $3.85, and 1994 records $5.25: the rate on January 1, 1993 is not known
    assert "does not record 1993 (FRED repeats 1992's $3.85)" in january_rate_known(facts, "1993-01-01", recorded)
    assert "records no year before 1992" in january_rate_known(facts, "1992-01-01", recorded)
    # a year the table does not record whose own value differs from the records around it (a gap in the data)
    gap = {**facts, "1993-01-01": SimpleNamespace(value="4.00"), "1994-01-01": SimpleNamespace(value="3.85")}
    assert "the 1993 record ($4.00) differs from 1992's ($3.85)" in january_rate_known(gap, "1993-01-01", recorded)


def test_fred_pairs_follow_the_construction_rules(main_items):
    for item in group(main_items, "fred", "time") + group(main_items, "fred", "location"):
        target, alt = item["target_scope"], item["alt_scope"]
        assert target["location"] not in FEDERAL_STATES and alt["location"] not in FEDERAL_STATES
        years = int(target["time"][:4]), int(alt["time"][:4])
        assert all(1990 <= y <= 2024 for y in years)
        if item["scope_dimension"] == "time":
            assert target["location"] == alt["location"] and abs(years[0] - years[1]) <= 8
        else:
            assert target["time"] == alt["time"] and target["location"] != alt["location"]
        assert item["cluster_id"] == "fred-" + next(c for c, n in JURISDICTIONS.items() if n == target["location"])
        assert item["dependency_group_id"] == "group-fred"
    per_cluster = Counter((i["scope_dimension"], i["cluster_id"]) for i in main_items if i["source"] == "fred")
    assert max(per_cluster.values()) <= 6
    targets = [(i["target_scope"]["location"], i["target_scope"]["time"]) for i in main_items if i["source"] == "fred"]
    assert len(targets) == len(set(targets))


def test_the_papers_nebraska_item_is_rebuilt_word_for_word(store):
    """Appendix A.1, Table 5: the Nebraska time item from the FRED snapshot, built as the paper reads the series
    (fred_known_january=false: every year's value is its January 1 rate). By default it is left out: the 1998
    observation ($5.15) differs from 1997's ($4.25), so the series does not show the rate on January 1, 1998."""
    # every series of the snapshot: the years the source table records are read from all of them
    series = [read_series(store.path(n), n, store.snapshot(n).sha256) for n in store.names() if n.startswith("fred/")]
    spec_id = "fred-time-NE-1997-01-01-1998-01-01"
    by_default = next(s for s in time_specs(FredFacts(series, 1990, 2024), 0, 8) if s.id == spec_id)
    with pytest.raises(Excluded) as excluded:
        by_default.build()
    assert excluded.value.reason == "january_rate_unknown"
    assert "lure (Nebraska, 1998-01-01): the 1998 record ($5.15) differs from 1997's ($4.25)" in excluded.value.detail
    spec = next(s for s in time_specs(FredFacts(series, 1990, 2024, known_january=False), 0, 8) if s.id == spec_id)
    candidate = spec.build()
    assert (
        candidate.question
        == "What was the recorded basic state minimum wage in Nebraska on January 1, 1997? Give the rate in US dollars per hour."
    )
    assert candidate.g_text == "On January 1, 1997, the recorded basic state minimum wage in Nebraska was $4.25 per hour."
    assert candidate.s_text == "On January 1, 1998, the recorded basic state minimum wage in Nebraska was $5.15 per hour."
    assert candidate.f_text_and_edits()[0] == "On January 1, 1997, the recorded basic state minimum wage in Nebraska was $5.15 per hour."
    assert (candidate.gold, candidate.lure) == ("$4.25", "$5.15")
    assert all(d.provenance.date not in ("1997-01-01", "1998-01-01") and d.cluster_id == "fred-NE" for d in candidate.distractors)
    # Appendix A.1 "Context comparability", by hand: the question has 15 content tokens (recorded basic state minimum
    # wage nebraska january 1 1997 give rate us dollars per hour); G shares 11 of its 12, S 10 (not 1997)
    assert overlap(candidate.question, candidate.g_text) == (Fraction(11, 16), Fraction(11, 15))
    assert overlap(candidate.question, candidate.s_text) == (Fraction(10, 17), Fraction(10, 15))


def test_every_group_holds_the_candidates_the_review_retains(built, main_items):
    """Appendix A.2, B.1: the release holds exactly the candidates whose decision names the item as built
    and retains it; a candidate without such a decision is unreviewed and excluded, and every excluded one
    is in exclusions.jsonl with its decision; the notes count each group."""
    from ctxrobust.builders.misleadqa import adjudication

    release = built[1]
    decisions = adjudication.read(adjudication.DEFAULT)
    candidates = release.rows("candidates.jsonl")
    condition = release.rows("condition.jsonl")
    excluded = {r["id"]: r for r in release.rows("exclusions.jsonl")}
    current = {c["id"] for c in candidates if c["id"] in decisions and decisions[c["id"]].item_sha256 == c["item_sha256"]}
    retained = {cid for cid in current if decisions[cid].decision == "retain"}
    assert {i["id"] for i in main_items + condition} == retained
    for c in candidates:
        if c["id"] not in retained:
            reason = excluded[c["id"]]["reason"]
            if c.get("needs_restatement"):
                assert reason == "needs_restatement"
            elif c["id"] in current:
                assert reason == f"adjudication_{decisions[c['id']].decision}" and decisions[c["id"]].reason in excluded[c["id"]]["detail"]
            else:
                assert reason == "adjudication_unreviewed"
    screening = release.manifest["build_notes"]["screening"]
    assert screening["reviewed"] and screening["candidates"] == len(candidates)
    for name, counts in screening["groups"].items():
        source, dimension = name.split("/")
        pool = [c for c in candidates if (c["source"], c["scope_dimension"]) == (source, dimension)]
        assert counts["candidates"] == len(pool)
        assert counts["retained"] == len([c for c in pool if c["id"] in retained])
        assert counts["retained"] + counts["excluded"] == counts["candidates"]
        if name.startswith("situatedqa"):
            assert max(Counter(c["cluster_id"] for c in pool).values(), default=0) <= 2
    assert release.manifest["build_notes"]["user_sources"]["adjudication"]["sha256"] == sha256_file(adjudication.DEFAULT)


def test_a_build_without_adjudication_says_its_items_were_not_reviewed(tmp_path, store):
    result = build_release(
        "misleadqa",
        "0.0.2-test",
        {"adjudication": "none", "fred_time_n": 12, "fred_location_n": 12, "situatedqa_time_n": 12, "situatedqa_location_n": 12},
        tmp_path,
        store,
    )
    notes = Release(result.path, store=store).manifest["build_notes"]
    assert notes["screening"]["reviewed"] is False and "not reviewed" in notes["departures_from_paper"]["screening"]
    assert "not reviewed" in (result.path / "README.md").read_text(encoding="utf-8")


def test_situatedqa_items_name_places_and_offer_options_of_the_gold_answers_precision(main_items):
    items = group(main_items, "situatedqa", "time") + group(main_items, "situatedqa", "location")
    for item in items:
        gold = item["options"][item["gold"]]
        options = [item["options"][letter] for letter in "ABCD"]
        assert all(precision(option) == precision(gold) for option in options), item["id"]
        assert not any(is_garbled(text) for text in options + [item["contexts"][c]["text"] for c in "GSF"]), item["id"]
        if item["scope_dimension"] == "location":
            assert is_place(item["target_scope"]["location"]) and is_place(item["alt_scope"]["location"]), item["id"]
            g = item["contexts"]["G"]["text"]
            shown = display_location(item["target_scope"]["location"])
            # the place opens G ("In Chile, ...") or, for a question that says "we", is named in it (phrasing.name_referent)
            assert g.startswith(f"In {shown}, ") or (shown.lower() in g.lower() and shown.lower() in item["question"].lower()), item["id"]


def test_each_cluster_lies_in_one_dependency_group(main_items):
    """Appendix A.4: dependency groups merge whole source clusters; all FRED items form one group."""
    groups_of = {}
    for item in main_items:
        groups_of.setdefault(item["cluster_id"], set()).add(item["dependency_group_id"])
    assert all(len(groups) == 1 for groups in groups_of.values())
    assert {i["dependency_group_id"] for i in main_items if i["source"] == "fred"} == {"group-fred"}
    assert len({i["dependency_group_id"] for i in main_items}) < len(groups_of)


def test_departures_from_the_paper_are_recorded(built):
    departures = built[1].manifest["build_notes"]["departures_from_paper"]
    assert set(departures) == {
        "fred_jurisdictions",
        "fred_january",
        "situatedqa_answers",
        "situatedqa_contexts",
        "situatedqa_question_types",
        "situatedqa_distractors",
        "screening",
        "dependency_groups",
    }
    assert (
        departures["fred_jurisdictions"].startswith("46 jurisdictions hold their own series")
        and "STTMINWGGAM is monthly" in departures["fred_jurisdictions"]
    )
    assert departures["fred_january"].startswith("a fact is used only where the annual series shows the rate in force on January 1")


def test_balance_holds_in_every_group_and_e_is_always_abstention(built, main_items):
    assert balance_problems(main_items) == []
    condition = built[1].rows("condition.jsonl")
    for item in main_items + condition:
        assert item["options"]["E"] == "Insufficient information"
        assert item["gold"] != item["lure"]


def test_exclusions_are_counted_by_reason(built):
    release = built[1]
    rows = release.rows("exclusions.jsonl")
    notes = release.manifest["build_notes"]["exclusions_by_reason"]
    assert notes["fred"] == {"federal_series": 5}
    counted = Counter((r["source"] + (f"/{r['scope_dimension']}" if r["scope_dimension"] else ""), r["reason"]) for r in rows)
    assert counted == Counter({(g, reason): n for g, reasons in notes.items() for reason, n in reasons.items()})
    released = {i["id"] for i in release.rows("main.jsonl")}
    assert not released & {r["id"] for r in rows}


def test_user_sources_build_entity_items_and_the_condition_supplement(built):
    """A supplied AmbigDocs file replaces RAMDocs as the entity source; its candidates (and the supplied
    CondAmbigQA file's) are unreviewed by the project's file, so they are candidates, not items."""
    release = built[1]
    user = release.manifest["build_notes"]["user_sources"]
    assert user["ambigdocs"] == {"file": AMBIGDOCS.name, "sha256": sha256_file(AMBIGDOCS)}
    assert user["condambigqa"]["sha256"] == sha256_file(CONDAMBIGQA)
    assert release.manifest["build_notes"]["entity_source"] == "ambigdocs"
    candidates = release.rows("candidates.jsonl")
    entity = group(candidates, "ambigdocs", "entity")
    assert entity and all(i["split"] == "main" and i["provenance"]["G"]["sha256"] == user["ambigdocs"]["sha256"] for i in entity)
    assert not group(candidates, "ramdocs", "entity")
    condition = [c for c in candidates if c["source"] == "condambigqa"]
    assert condition and all(i["split"] == "condition" for i in condition)
    assert max(Counter(i["cluster_id"] for i in condition).values()) <= 3
    groups = release.manifest["build_notes"]["screening"]["groups"]
    assert groups["ambigdocs/entity"]["unreviewed"] == len(entity) and groups["ambigdocs/entity"]["retained"] == 0


def test_audit_sample_is_stratified(built):
    strata = Counter(row["stratum"] for row in built[1].rows("audit_sample.jsonl"))
    assert strata["fred/time"] == 15 and strata["fred/location"] == 15
    for dimension in ("time", "location"):  # 35 per SituatedQA scope, or all its items when fewer are released
        released = len(group(built[1].rows("main.jsonl"), "situatedqa", dimension))
        assert strata[f"situatedqa/{dimension}"] == min(35, released)
    assert strata["ambigdocs/entity"] == len(group(built[1].rows("main.jsonl"), "ambigdocs", "entity"))


def test_validate_command_passes_and_a_rebuild_reproduces_the_bytes(built, mirror, tmp_path):
    result, release = built
    env = dict(os.environ, SOURCES_MIRROR=str(mirror), CTXROBUST_CACHE=str(tmp_path / "cache"), PYTHONHASHSEED="4242")
    cli = [sys.executable, "-m", "ctxrobust.cli"]
    check = subprocess.run([*cli, "validate", str(result.path)], env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    args = [*cli, "build", "misleadqa", "--version", "0.0.1-test", "--out", str(result.path.parent.parent)]
    for key, value in OVERRIDES.items():
        args += ["--set", f"{key}={value}"]
    again = subprocess.run(args, env=env, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.startswith("reproduced"), again.stdout + again.stderr


def test_a_tampered_provenance_line_is_reported_by_item_and_file(built, tmp_path, store):
    copy = tmp_path / "copy"
    shutil.copytree(built[0].path, copy)
    path = copy / "main.jsonl"
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    item = json.loads(first)
    item["provenance"]["G"]["line"] += 1
    path.write_text(text.replace(first, json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":")), 1), encoding="utf-8")
    results = run_checks(Release(copy, store=store))
    assert any(f.item == item["id"] for f in results["provenance"])
    assert any(f.file == "main.jsonl" for f in results["hashes"])


def test_fred_january_rate_rereads_the_year_before_from_the_snapshot(store):
    from ctxrobust.validators.misleadqa import _SourceReader, fred_january_problems

    sha = store.snapshot("fred/STTMINWGMN.csv").sha256

    def provenance(date):
        return {"snapshot": "fred/STTMINWGMN.csv", "sha256": sha, "date": date}

    item = {"provenance": {"G": provenance("2014-01-01"), "S": provenance("2012-01-01")}}
    # Minnesota: $6.15 in 2013, $8.00 in 2014 (in force from August 1, 2014); $6.16 in 2011 and 2012, as FRED records them
    recorded = set(range(1991, 2025)) - {1993, 1995, 1999}
    assert fred_january_problems(_SourceReader(store), item, recorded) == [
        "G (2014-01-01): the 2014 record ($8.00) differs from 2013's ($6.15): the rate changed between the two "
        "records, and the series does not say on what day, so the rate on January 1, 2014 is not known"
    ]
    item["provenance"]["G"] = provenance("2014-06-01")
    assert fred_january_problems(_SourceReader(store), item, recorded) == [
        "G: fred/STTMINWGMN.csv has no January 1 observation on 2014-06-01"
    ]


def test_missing_sources_or_user_files_are_one_line_errors(store, tmp_path):
    with pytest.raises(CtxRobustError, match="SOURCES_MIRROR"):
        MisleadQABuilder(MisleadQAConfig(), None).build()
    config = MisleadQAConfig(ambigdocs_path=str(tmp_path / "nope.jsonl"))
    with pytest.raises(CtxRobustError, match=r"ambigdocs_path=.*nope.jsonl: file not found"):
        MisleadQABuilder(config, store).build()
    bad = tmp_path / "cond.jsonl"
    bad.write_text(CONDAMBIGQA.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"^cond.jsonl:4: not valid JSON"):  # before anything is built
        MisleadQABuilder(MisleadQAConfig(condambigqa_path=str(bad)), store).build()


def _cli_build(mirror, tmp_path, *settings):
    env = dict(os.environ, SOURCES_MIRROR=str(mirror), CTXROBUST_CACHE=str(tmp_path / "cache"))
    args = [sys.executable, "-m", "ctxrobust.cli", "build", "misleadqa", "--version", "0.0.1-test", "--out", str(tmp_path / "out")]
    for setting in settings:
        args += ["--set", setting]
    return subprocess.run(args, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("field, source", [("ambigdocs_path", "AmbigDocs"), ("condambigqa_path", "CondAmbigQA")])
def test_a_user_file_that_is_not_utf8_is_named_with_its_line_and_the_file_to_give(mirror, tmp_path, field, source):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x8f\xff\x00binary\n" * 4)
    run = _cli_build(mirror, tmp_path, f"{field}={garbage}")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith(
        f"error: {garbage}:1: not UTF-8 (byte 0x8f at column 1); convert the file to UTF-8, or give the {source} JSON or JSON Lines file"
    )
    assert run.stderr.count("\n") == 1 and "internal error" not in run.stderr
    assert not (tmp_path / "out" / "misleadqa" / "0.0.1-test").exists()


@pytest.mark.parametrize("field, source", [("ambigdocs_path", "AmbigDocs"), ("condambigqa_path", "CondAmbigQA")])
def test_a_folder_given_for_a_user_file_is_called_a_folder(mirror, tmp_path, field, source):
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / "dev.json").write_text("[]", encoding="utf-8")
    (folder / "notes.txt").write_text("", encoding="utf-8")
    run = _cli_build(mirror, tmp_path, f"{field}={folder}")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == (
        f"error: {field}={folder}: is a folder, not a file; give the path of the {source} JSON or JSON Lines file "
        f"({'records of question, ambiguous_entity, qid, documents' if source == 'AmbigDocs' else 'records of id, question, properties, ctxs'}) "
        f"itself (the folder holds dev.json), or leave {field} unset\n"
    )
    assert "file not found" not in run.stderr


def test_reading_every_annual_value_as_the_january_rate_is_recorded_as_a_departure():
    from ctxrobust.builders.misleadqa.builder import departures

    fred = {"jurisdictions": ["NE"], "monthly_series_january_values": [], "excluded_files": []}
    default = departures({"fred": {**fred, "known_january": True}, "groups": {}})["fred_january"]
    paper = departures({"fred": {**fred, "known_january": False}, "groups": {}})["fred_january"]
    assert "Nebraska 1998 lure" in default
    assert paper.startswith("every annual observation is read as the January 1 rate (fred_known_january=false)")


def test_the_fred_review_is_the_maintainers_and_names_its_criterion_and_reason():
    from ctxrobust.builders.misleadqa.fred_items import fred_review, reviewed_problem

    rows = fred_review()
    assert {(r["series_id"], r["first_year"]): r["criterion"] for r in rows} == {
        ("STTMINWGWY", 2019): 1,
        ("STTMINWGGAM", 2019): 1,
        ("STTMINWGNV", 2007): 4,
        ("STTMINWGCA", 2017): 4,
        ("STTMINWGMN", 2007): 1,
        ("STTMINWGWA", 1994): 1,
        ("STTMINWGOK", 1979): 4,
        ("STTMINWGGAM", 1979): 1,
    }
    assert all(r["reviewer"] == "maintainers" and r["decision"] == "exclude" and r["reason"] for r in rows)
    assert reviewed_problem("STTMINWGNV", 2017).startswith("the project's review excludes STTMINWGNV from 2007")
    assert reviewed_problem("STTMINWGNV", 2006) is None and reviewed_problem("STTMINWGCA", 2023) is None
    assert reviewed_problem("STTMINWGWY", 2018) is None
    assert reviewed_problem("STTMINWGWY", 2024).startswith("the project's review excludes STTMINWGWY from 2019: from 2019 the series")
    assert reviewed_problem("STTMINWGNE", 2024) is None


def test_a_malformed_fred_review_file_is_one_line_naming_it(tmp_path, monkeypatch):
    from ctxrobust.builders.misleadqa import fred_items

    bad = tmp_path / "fred_facts.jsonl"
    bad.write_text('{"series_id": "STTMINWGWY", "first_year": "2019"}\n', encoding="utf-8")
    monkeypatch.setattr(fred_items, "FRED_REVIEW", bad)
    fred_items.fred_review.cache_clear()
    try:
        with pytest.raises(CtxRobustError, match=r"fred_facts.jsonl:1: expected series_id, first_year, last_year"):
            fred_items.fred_review()
    finally:
        fred_items.fred_review.cache_clear()


def test_no_released_fred_fact_is_one_the_review_excludes(main_items):
    for item in group(main_items, "fred", "time") + group(main_items, "fred", "location"):
        for role in ("G", "S"):
            prov = item["provenance"][role]
            assert not (prov["series_id"] in ("STTMINWGWY", "STTMINWGGAM") and prov["date"] >= "2019"), item["id"]
            assert not (prov["series_id"] == "STTMINWGNV" and "2007" <= prov["date"] < "2025"), item["id"]
            assert not (prov["series_id"] == "STTMINWGCA" and "2017" <= prov["date"] < "2023"), item["id"]


def test_the_situatedqa_splits_read_are_the_configured_ones():
    """The lock pins every SituatedQA split; a build reads the ones `situatedqa_splits` names (all three by
    default), with the raw_data timelines of their time questions."""
    default = MisleadQABuilder(MisleadQAConfig()).required_snapshots()
    two = MisleadQABuilder(MisleadQAConfig(situatedqa_splits=("train", "dev"))).required_snapshots()
    read = lambda names: sorted(n for n in names if n.startswith("situatedqa"))
    every = [f"situatedqa/{k}.{s}.jsonl" for k in ("geo", "temp") for s in ("dev", "test", "train")]
    assert read(default) == every + [f"situatedqa_raw/temp.{s}.jsonl" for s in ("dev", "test", "train")]
    assert read(two) == [f"situatedqa/{k}.{s}.jsonl" for k in ("geo", "temp") for s in ("dev", "train")] + [
        f"situatedqa_raw/temp.{s}.jsonl" for s in ("dev", "train")
    ]
    assert "ramdocs/RAMDocs_test.jsonl" in default and "condambigqa/mcaqa.json" in default
    assert any(n.startswith("fred/") for n in default)
    with pytest.raises(ValueError, match="situatedqa_splits"):
        MisleadQAConfig(situatedqa_splits=("validation",))
