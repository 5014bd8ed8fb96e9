"""Each MisleadQA validator: break its condition on one item and see it reported by check name and item id."""

from __future__ import annotations

import copy

import pytest

from ctxrobust.builders.misleadqa.audit import audit_sample
from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor
from ctxrobust.builders.misleadqa.fred_items import registered_forms, spoken_date, usd
from ctxrobust.builders.misleadqa.options import balanced_letters
from ctxrobust.sources.facts import Provenance
from ctxrobust.sources.fred import january_facts, read_series
from ctxrobust.validators.checks import run_checks

GENERIC = {
    "hashes",
    "row_counts",
    "sources_locked",
    "location",
    "manifest",
    "contents",
}  # need a release folder and its full manifest; covered by the core tests
TEMPLATE_Q = "What was the recorded basic state minimum wage in {j} on {d}? Give the rate in US dollars per hour."
TEMPLATE_C = "On {d}, the recorded basic state minimum wage in {j} was {v} per hour."


class StubRelease:
    """The parts of ctxrobust.release.Release the MisleadQA checks read."""

    dataset = "misleadqa"
    version = "test"
    extra_files: list = []  # MisleadQA declares no extra files

    def __init__(self, main, condition=(), config=None, store=None, notes=None, audit=None, exclusions=()):
        self._rows = {"main.jsonl": list(main), "condition.jsonl": list(condition), "exclusions.jsonl": list(exclusions)}
        self.config = dict(config or {})
        self._rows["audit_sample.jsonl"] = (
            audit if audit is not None else audit_sample(self._rows["main.jsonl"], self.config.get("audit_seed", 20261007))
        )
        self.files = [
            {"name": "main.jsonl", "schema": "misleadqa.item"},
            {"name": "condition.jsonl", "schema": "misleadqa.item"},
            {"name": "audit_sample.jsonl", "schema": "misleadqa.audit"},
            {"name": "exclusions.jsonl", "schema": "misleadqa.exclusion"},
        ]
        self.manifest = {
            "dataset": "misleadqa",
            "config": self.config,
            "build_notes": notes or {"exclusions_by_reason": {}, "user_sources": {}},
        }
        self.store = store

    def rows(self, name):
        return self._rows[name]

    def config_as(self, config_cls):
        return config_cls.model_validate(self.config)

    def iter_rows(self, name):
        return iter(self._rows[name])


@pytest.fixture(scope="module")
def nebraska(store):
    name = "fred/STTMINWGNE.csv"
    series = read_series(store.path(name), name, store.snapshot(name).sha256)
    return {f.scope.time[:4]: f for f in january_facts(series)}


def fred_item(
    facts, target="1997", alt="1999", extra=("2008", "2024"), item_id="fred-time-NE-test", letters=("C", "A", ("B", "D")), gold_value=None
):
    """A FRED time item built with the builder's own Candidate (paper Table 5, with the lure from 1999: the
    paper's 1998 is not a January 1 rate the series shows, fred_items.january_rate_known)."""
    gold, lure = facts[target], facts[alt]
    value = gold_value or gold.value
    d = spoken_date(gold.scope.time)
    candidate = Candidate(
        id=item_id,
        source="fred",
        scope_dimension="time",
        cluster_id="fred-NE",
        question=TEMPLATE_Q.format(j="Nebraska", d=d),
        target_scope=gold.scope,
        alt_scope=lure.scope,
        gold=usd(value),
        lure=usd(lure.value),
        g_text=TEMPLATE_C.format(d=d, j="Nebraska", v=usd(value)),
        s_text=TEMPLATE_C.format(d=spoken_date(lure.scope.time), j="Nebraska", v=usd(lure.value)),
        registered=registered_forms(value, lure.value),
        provenance_g=gold.provenance,
        provenance_s=lure.provenance,
        distractors=[Distractor(usd(facts[y].value), facts[y].provenance, "fred-NE") for y in extra],
        construction={"G": "template", "S": "template"},
    )
    item = candidate.item(*letters)
    item["dependency_group_id"] = "group-fred"
    return item


def failures(release, name):
    results = run_checks(release, skip=GENERIC)
    return results[name]


def assert_reported(release, name, item_id, fragment=""):
    found = failures(release, name)
    assert found, f"check {name} reported nothing"
    assert all(f.check == name for f in found)
    assert any((f.item == item_id or item_id in f.message) and fragment in f.message for f in found), found


@pytest.fixture(scope="module")
def good(nebraska):
    return fred_item(nebraska)


def test_a_well_formed_item_passes_every_check(good, store):
    release = StubRelease([good], store=store)
    results = run_checks(release, skip=GENERIC)
    assert {name: found for name, found in results.items() if found} == {}
    assert {
        "span_replay",
        "answer_isolation",
        "distractor_leakage",
        "gold_mention_in_f",
        "distinctness",
        "balance",
        "comparability",
        "scope_design",
        "repeated_targets",
        "provenance",
        "fred_january_rate",
        "fred_review",
        "audit_sample",
        "exclusions",
    } <= set(results)


def test_fred_january_rate_reports_a_rate_the_series_does_not_show_on_january_1(nebraska, store):
    # the paper's own lure: $5.15 is Nebraska's 1998 record, $4.25 its 1997 one, and the day of the change is not in the series
    bad = fred_item(nebraska, alt="1998")
    assert_reported(StubRelease([bad], store=store), "fred_january_rate", bad["id"], "S (1998-01-01): the 1998 record ($5.15) differs")
    assert failures(StubRelease([bad], store=store, config={"fred_known_january": False}), "fred_january_rate") == []
    assert_reported(StubRelease([bad]), "fred_january_rate", "", "set SOURCES_MIRROR")


def test_span_replay_reports_text_changed_outside_the_edits(good):
    bad = copy.deepcopy(good)
    bad["contexts"]["F"]["text"] = bad["contexts"]["F"]["text"].replace("recorded", "reported")
    assert_reported(StubRelease([bad]), "span_replay", bad["id"], "does not give F")


def test_span_replay_reports_an_unregistered_edit(good):
    bad = copy.deepcopy(good)
    bad["substitutions"] = [{"old": "$9.99", "new": "$5.15"}]
    assert_reported(StubRelease([bad]), "span_replay", bad["id"], "not a registered gold expression")


def test_answer_isolation_reports_the_gold_answer_in_the_question(good):
    bad = copy.deepcopy(good)
    bad["question"] = bad["question"].replace("?", " (was it $4.25?)", 1)
    assert_reported(StubRelease([bad]), "answer_isolation", bad["id"], "gold answer")


def test_distractor_leakage_reports_a_distractor_in_a_context(good):
    bad = copy.deepcopy(good)
    distractor = bad["options"]["B"]
    bad["contexts"]["S"]["text"] += f" A year later it was {distractor}."
    assert_reported(StubRelease([bad]), "distractor_leakage", bad["id"], "appears in context S")


def test_gold_mention_in_f_reports_a_gold_expression_left_in_f(nebraska):
    item = fred_item(nebraska)
    g = item["contexts"]["G"]["text"] + " It had been $4.25 since 1992."
    item["contexts"]["G"]["text"] = g
    item["contexts"]["F"]["text"] = item["contexts"]["F"]["text"] + " It had been $4.25 since 1992."
    assert_reported(StubRelease([item]), "gold_mention_in_f", item["id"], "still mentions the gold answer")


def test_distinctness_reports_options_equal_after_normalisation(good):
    bad = copy.deepcopy(good)
    bad["options"]["B"] = "4.250"  # the gold answer, $4.25, in another format
    assert_reported(StubRelease([bad]), "distinctness", bad["id"], "same answer after normalisation")


@pytest.mark.parametrize(
    "b, d, reason",
    [
        ("English and Spanish", "English and French", "share the entry 'English'"),
        ("Argentina, Germany, Spain", "Argentina, Netherlands, Germany", "share the entries 'Argentina', 'Germany'"),
        ("Spain and Germany", "Germany, Spain", "list the same entries in another order or form"),
        ("Toronto Raptors", "Toronto Raptors (NBA)", "are one answer: every word of 'Toronto Raptors' is also in 'Toronto Raptors (NBA)'"),
        ("Kenny Smith", "Kenny Smyth", "are near-duplicates (similarity 90.9 of 100; 90 or more counts as one answer)"),
    ],
)
def test_distinctness_names_the_reason_two_text_options_are_one_answer(good, b, d, reason):
    bad = copy.deepcopy(good)
    bad["options"]["B"], bad["options"]["D"] = b, d  # the two distractors (gold C, lure A)
    (found,) = failures(StubRelease([bad]), "distinctness")
    assert found.item == bad["id"]
    assert found.message == f"options B {b!r} and D {d!r} {reason}"


def test_comparability_reports_a_long_s(good):
    bad = copy.deepcopy(good)
    bad["contexts"]["S"]["text"] += " " + " ".join(["This sentence adds many more words to the context."] * 4)
    assert_reported(StubRelease([bad]), "comparability", bad["id"], "ratio")


def test_comparability_reports_s_closer_to_the_question_than_g(good):
    bad = copy.deepcopy(good)
    bad["contexts"]["S"]["text"] = (
        "On January 1, 1998, the recorded basic state minimum wage in Nebraska, given as a rate in US dollars, was $5.15 per hour."
    )
    assert_reported(
        StubRelease([bad], config={"comparability_max_ratio": 3, "comparability_max_diff": 100}), "comparability", bad["id"], "above G's"
    )


def test_scope_design_reports_an_s_stating_the_target_scope(good):
    bad = copy.deepcopy(good)
    bad["contexts"]["S"]["scope"] = bad["target_scope"]
    bad["alt_scope"] = bad["target_scope"]
    assert_reported(StubRelease([bad]), "scope_design", bad["id"], "differ in nothing")


def test_scope_design_reports_fred_time_pairs_more_than_eight_years_apart(nebraska):
    bad = fred_item(nebraska, target="1997", alt="2006", extra=("2008", "2024"))
    assert_reported(StubRelease([bad]), "scope_design", bad["id"], "more than 8 years apart")


def test_repeated_targets_reports_a_second_item_on_the_same_target_fact(nebraska):
    first = fred_item(nebraska, item_id="fred-time-NE-a")
    second = fred_item(nebraska, alt="1992", extra=("2008", "2024"), item_id="fred-time-NE-b")
    assert_reported(StubRelease([first, second]), "repeated_targets", "fred-time-NE-b", "repeats the target fact")


def test_repeated_targets_reports_a_reversed_pair(nebraska):
    first = fred_item(nebraska, item_id="fred-time-NE-a")
    second = fred_item(nebraska, target="1999", alt="1997", item_id="fred-time-NE-b")
    assert_reported(StubRelease([first, second]), "repeated_targets", "fred-time-NE-b", "reverses the fact pair")


def test_balance_reports_a_group_whose_positions_drift(nebraska):
    years = [str(y) for y in range(1990, 2014)]
    items = []
    ids = [f"fred-time-NE-{y}" for y in years[:12]]
    letters = balanced_letters(ids, 0, "fred/time")
    for item_id, year in zip(ids, years[:12]):
        items.append(
            fred_item(
                nebraska,
                target=year,
                alt="2024" if year != "2023" else "2022",
                extra=("1968", "1976"),
                item_id=item_id,
                letters=letters[item_id],
            )
        )
    assert not failures(StubRelease(items), "balance")
    moved = items[3]
    gold, lure = moved["gold"], moved["lure"]
    target = next(i for i in items if i is not moved and (i["gold"], i["lure"]) != (gold, lure))
    moved["options"][gold], moved["options"][target["gold"]] = moved["options"][target["gold"]], moved["options"][gold]
    moved["options"][lure], moved["options"][target["lure"]] = moved["options"][target["lure"]], moved["options"][lure]
    moved["gold"], moved["lure"] = target["gold"], target["lure"]
    assert_reported(StubRelease(items), "balance", moved["id"], "differ by more than one")


def test_balance_reports_an_option_e_that_is_not_abstention(good):
    bad = copy.deepcopy(good)
    bad["options"]["E"] = "None of the above"
    assert_reported(StubRelease([bad]), "balance", bad["id"], "Insufficient information")


def test_provenance_reports_a_value_the_snapshot_does_not_hold(nebraska, store):
    bad = fred_item(nebraska, gold_value="4.35")
    assert_reported(StubRelease([bad], store=store), "provenance", bad["id"], "line")


def test_provenance_reports_a_federal_series_file(nebraska, store):
    name = "fred/STTMINWGAL.csv"
    series = read_series(store.path(name), name, store.snapshot(name).sha256)
    obs = next(o for o in series.observations if o.date.isoformat() == "1997-01-01")
    facts = dict(nebraska)
    facts["1997"] = facts["1997"].model_copy(
        update={
            "provenance": Provenance(
                snapshot=name,
                sha256=series.sha256,
                line=obs.line,
                series_id=series.series_id,
                date="1997-01-01",
                field=series.series_id,
                value=obs.raw,
            )
        }
    )
    bad = fred_item(facts)
    assert_reported(StubRelease([bad], store=store), "provenance", bad["id"], "federal series")


def test_provenance_reports_a_sha256_that_differs_from_the_lock(good, store):
    bad = copy.deepcopy(good)
    bad["provenance"]["S"]["sha256"] = "0" * 64
    assert_reported(StubRelease([bad], store=store), "provenance", bad["id"], "differs from the lock")


def test_provenance_without_sources_says_how_to_supply_them(good):
    found = failures(StubRelease([good], store=None), "provenance")
    assert len(found) == 1 and "SOURCES_MIRROR" in found[0].message


def test_audit_sample_reports_a_row_that_the_seed_does_not_select(good):
    audit = audit_sample([good], 20261007)
    audit[0] = dict(audit[0], rank=2)
    assert_reported(StubRelease([good], audit=audit), "audit_sample", good["id"], "differs from the recomputed sample")


def test_exclusions_report_counts_that_differ_from_the_build_notes(good):
    row = {
        "id": "fred-time-NE-x",
        "source": "fred",
        "scope_dimension": "time",
        "cluster_id": "fred-NE",
        "reason": "cluster_cap",
        "detail": "d",
    }
    notes = {"exclusions_by_reason": {"fred/time": {"cluster_cap": 2}}, "user_sources": {}}
    found = failures(StubRelease([good], exclusions=[row], notes=notes), "exclusions")
    assert found and "cluster_cap: 1 rows, build notes say 2" in found[0].message
    released = dict(row, id=good["id"])
    notes = {"exclusions_by_reason": {"fred/time": {"cluster_cap": 1}}, "user_sources": {}}
    assert_reported(StubRelease([good], exclusions=[released], notes=notes), "exclusions", good["id"], "also released")


def test_schema_check_reports_a_missing_field(good):
    bad = copy.deepcopy(good)
    del bad["cluster_id"]
    assert_reported(StubRelease([bad]), "schema", bad["id"], "cluster_id")


# --- SituatedQA distractors and target facts (Appendix A.1 "Distractors", "Candidate selection") ---------


@pytest.fixture(scope="module")
def situated(store, tmp_path_factory):
    from ctxrobust.build import build_release
    from ctxrobust.release import Release

    small = {"fred_time_n": 2, "fred_location_n": 2, "situatedqa_time_n": 4, "situatedqa_location_n": 6, "adjudication": "none"}
    result = build_release("misleadqa", "0.0.1-sqa", small, tmp_path_factory.mktemp("sqa"), store)
    rows = Release(result.path, store=store).rows("candidates.jsonl")
    return [r for r in rows if r["source"] == "situatedqa"]


def test_distractor_relation_passes_built_items_and_reports_an_any_answer_distractor(situated, store):
    assert situated and not failures(StubRelease(situated, store=store), "distractor_relation")
    item = copy.deepcopy(situated[0])
    item["provenance"]["distractors"][0]["field"] = "any_answer"
    assert_reported(StubRelease([item], store=store), "distractor_relation", item["id"], "not an answer of a context")


def test_distractor_relation_reports_a_distractor_of_another_relation(situated, store):
    item, other = copy.deepcopy(situated[0]), next(r for r in situated if r["cluster_id"] != situated[0]["cluster_id"])
    item["provenance"]["distractors"][0] = copy.deepcopy(other["provenance"]["G"])
    assert_reported(StubRelease([item], store=store), "distractor_relation", item["id"], "another relation")


def test_repeated_targets_reports_one_time_fact_at_two_as_of_dates(situated):
    first = copy.deepcopy(situated[0])
    first["scope_dimension"] = "time"
    second = copy.deepcopy(first)
    second["id"] += "-again"
    second["target_scope"] = {**second["target_scope"], "location": "Elsewhere"}
    assert_reported(StubRelease([first, second]), "repeated_targets", second["id"], "question and answer")


def test_fred_review_reports_a_fact_the_review_excludes(good):
    # Wyoming's series gives the federal $7.25 from 2019, while the state's law sets $5.15 (review/fred_facts.jsonl)
    bad = copy.deepcopy(good)
    bad["provenance"]["S"] = {**bad["provenance"]["S"], "series_id": "STTMINWGWY", "date": "2020-01-01"}
    assert_reported(StubRelease([bad]), "fred_review", bad["id"], "S (2020-01-01): the project's review excludes STTMINWGWY from 2019")
    assert failures(StubRelease([good]), "fred_review") == []
    for role, value in (("G", {**good["provenance"]["G"], "date": "not a date"}), ("S", "not a record")):
        broken = copy.deepcopy(good)
        broken["provenance"][role] = value
        assert_reported(StubRelease([broken]), "fred_review", broken["id"], f"{role}: the provenance names no series_id and ISO date")
    broken = copy.deepcopy(good)
    del broken["provenance"]["S"]
    assert_reported(StubRelease([broken]), "fred_review", broken["id"], "S: the provenance names no series_id")
