"""MisleadQA construction rules: substitution, normalisation, scopes, options, selection, audit sample."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ctxrobust.builders.misleadqa.answer_types import is_garbled, kind
from ctxrobust.builders.misleadqa.audit import AUDIT_SIZES, audit_sample
from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec
from ctxrobust.builders.misleadqa.distractors import Pool, choose
from ctxrobust.builders.misleadqa.fred_items import registered_forms, spoken_date, usd
from ctxrobust.builders.misleadqa.groups import components, dependency_groups
from ctxrobust.builders.misleadqa.normalise import answer_key, content_tokens, mentions, same_answer
from ctxrobust.builders.misleadqa.options import LETTERS, PAIR_SEQUENCE, balanced_letters, provisional_letters
from ctxrobust.builders.misleadqa.scopes import display_location, is_place, locations_overlap, scopes_overlap, time_interval
from ctxrobust.builders.misleadqa.selection import SelectionState, select
from ctxrobust.builders.misleadqa.substitution import ReplayError, replay, substitute
from ctxrobust.sources.facts import Provenance, Scope

G = "On January 1, 1997, the recorded basic state minimum wage in Nebraska was $4.25 per hour."


# --- substitution (Section 3.3) ---------------------------------------------


def test_paper_example_f_from_g():
    f, edits = substitute(G, registered_forms("4.25", "5.15"))
    assert f == "On January 1, 1997, the recorded basic state minimum wage in Nebraska was $5.15 per hour."
    assert edits == [{"start": 74, "end": 79, "old": "$4.25", "new": "$5.15"}]
    assert replay(G, edits) == f


def test_every_registered_expression_is_replaced_and_nothing_else():
    g = "The rate rose to 4.25 dollars; $4.25 was the floor, not $14.25 or 4.251."
    f, edits = substitute(g, registered_forms("4.25", "5.15"))
    assert f == "The rate rose to 5.15 dollars; $5.15 was the floor, not $14.25 or 4.251."
    assert [e["old"] for e in edits] == ["4.25", "$4.25"]


def test_text_answers_match_case_insensitively_on_word_boundaries():
    g = "Manmohan Singh served as prime minister; manmohan singh was re-elected. Singhania is unrelated."
    f, edits = substitute(g, [("Manmohan Singh", "Atal Bihari Vajpayee")])
    assert f.count("Atal Bihari Vajpayee") == 2 and "Singhania" in f and len(edits) == 2


@pytest.mark.parametrize(
    "edits, message",
    [
        ([{"start": 74, "end": 79, "old": "$9.99", "new": "$5.15"}], "the edit says"),
        ([{"start": 80, "end": 77, "old": "", "new": "x"}], "out of order"),
        ([{"start": 74, "end": 79, "old": "$4.25", "new": "a"}, {"start": 70, "end": 71, "old": "w", "new": "b"}], "out of order"),
        ([{"start": 0, "end": 500, "old": G, "new": "x"}], "outside G"),
    ],
)
def test_replay_refuses_edits_that_do_not_fit_g(edits, message):
    with pytest.raises(ReplayError, match=message):
        replay(G, edits)


# --- normalisation (Section 3.3, Appendix A.1) --------------------------------


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("$12", "12.00", True),
        ("1,000", "1000", True),
        ("The Beatles", "beatles", True),
        ("December 14, 2020", "14 December 2020", True),
        ("Kenny Smith", "Kenny Smyth", True),  # near-duplicate (rapidfuzz)
        ("Toronto Raptors", "Golden State Warriors, Toronto Raptors", True),  # one contains the other
        ("2020 Jun 05", "June 5, 2020", True),
        ("Argentina, Germany, Spain", "Argentina, Netherlands, Germany", True),  # lists naming a common answer
        ("December 7, 1972", "December 12, 1972", False),  # a date is not a list
        ("Mexico and Belgium", "Argentina, Germany, Spain", False),
        ("$5.15", "$5.75", False),
        ("1984", "1986", False),
        ("November 7, 2017", "November 7, 2023", False),
        ("Manmohan Singh", "Atal Bihari Vajpayee", False),
    ],
)
def test_answers_compared_after_normalisation(a, b, same):
    assert same_answer(a, b) is same


def test_mentions_are_token_sequences_not_substrings():
    assert mentions("was $4.25 per hour", "4.25")
    assert not mentions("was $14.25 per hour", "4.25")
    assert mentions("Narendra Modi won", "Modi")
    assert not mentions("Modification", "Modi")
    assert answer_key("US$ 7.25") == "7.25"
    assert content_tokens("What was the wage in the state?") == {"wage", "state"}


# --- scopes (Section 3.1) ---------------------------------------------------------


def test_time_scopes_overlap_when_a_year_covers_a_date():
    assert time_interval("1986")[0].isoformat() == "1986-01-01"
    assert scopes_overlap("time", "2008", "September 29, 2008")
    assert scopes_overlap("time", "May 2010", "May 3, 2010")
    assert not scopes_overlap("time", "2008", "2009")
    assert scopes_overlap("time", "sometime", "2009")  # unreadable: treated as overlapping


def test_location_scopes_overlap_by_alias_containment_and_name_parts():
    assert locations_overlap("the US", "United States")
    assert locations_overlap("us", "california")
    assert locations_overlap("uk", "London")  # London -> England -> United Kingdom
    assert locations_overlap("charlotte nc", "north carolina")
    assert locations_overlap("washington", "washington state")
    assert not locations_overlap("india", "pakistan")
    assert not locations_overlap("texas", "california")


# --- FRED templates (Appendix A.1, Table 5) --------------------------------------


def test_fred_value_and_date_formats():
    assert usd("4.25") == "$4.25" and usd("12") == "$12.00" and usd("12.006") == "$12.006"
    assert spoken_date("1997-01-01") == "January 1, 1997"


# --- options (Appendix B.1 "Final option assignment") ----------------------------


@pytest.mark.parametrize("n", [1, 5, 11, 12, 13, 50, 183, 200])
def test_balanced_letters_differ_by_at_most_one(n):
    letters = balanced_letters([f"item-{i:04d}" for i in range(n)], seed=7, group="g")
    gold = Counter(v[0] for v in letters.values())
    lure = Counter(v[1] for v in letters.values())
    pair = Counter(v[:2] for v in letters.values())
    for counter, keys in ((gold, LETTERS), (lure, LETTERS), (pair, PAIR_SEQUENCE)):
        values = [counter.get(k, 0) for k in keys]
        assert max(values) - min(values) <= 1
    for gold_letter, lure_letter, distractors in letters.values():
        assert sorted((gold_letter, lure_letter) + distractors) == list(LETTERS)


def test_option_positions_are_seeded_and_order_free():
    ids = [f"x{i}" for i in range(30)]
    assert balanced_letters(ids, 1, "g") == balanced_letters(list(reversed(ids)), 1, "g")
    assert balanced_letters(ids, 1, "g") != balanced_letters(ids, 2, "g")
    assert provisional_letters(0, "x1") == provisional_letters(0, "x1")


# --- selection (Appendix A.1 "Candidate selection") ---------------------------------


class _Made:
    def __init__(self, cid):
        self.id = cid


def _spec(cid, cluster, target, alt, fail=None):
    def make(spec):
        if fail:
            raise Excluded(fail, "construction rule")
        return _Made(cid)

    return Spec(id=cid, source="s", scope_dimension="time", cluster_id=cluster, target_key=target, alt_key=alt, make=make)


def test_selection_caps_clusters_and_refuses_repeats_and_reversals():
    specs = [
        _spec("a1", "A", "A@1", "A@2"),
        _spec("a2", "A", "A@2", "A@1"),  # reverses a1
        _spec("a3", "A", "A@1", "A@3"),  # repeats a1's target
        _spec("a4", "A", "A@4", "A@5"),
        _spec("a5", "A", "A@6", "A@7"),
        _spec("b1", "B", "B@1", "B@2", fail="too_few_distractors"),
    ]
    out = select(specs, n=10, per_cluster=2, seed=0, state=SelectionState(), screen=lambda c: None)
    reasons = Counter(row["reason"] for row in out.exclusions)
    assert len(out.accepted) == 2
    assert reasons["too_few_distractors"] == 1
    assert sum(reasons.values()) + len(out.accepted) == len(specs)  # every candidate accounted for
    assert len({c.id for c in out.accepted}) == 2
    assert set(reasons) <= {"cluster_cap", "repeated_target", "reversed_pair", "too_few_distractors"}


def test_selection_stops_at_n_and_is_independent_of_input_order():
    specs = [_spec(f"c{i}", f"K{i}", f"K{i}@1", f"K{i}@2") for i in range(20)]
    first = select(specs, 5, 1, 3, SelectionState(), lambda c: None)
    second = select(list(reversed(specs)), 5, 1, 3, SelectionState(), lambda c: None)
    assert [c.id for c in first.accepted] == [c.id for c in second.accepted]
    assert first.examined == 5 and not first.exclusions


# --- audit sample (Appendix B.2) -------------------------------------------------------


def test_audit_sample_is_stratified_and_fixed_by_seed():
    items = [
        {"id": f"{s}-{d}-{i}", "source": s, "scope_dimension": d}
        for s, d in (("fred", "time"), ("situatedqa", "location"))
        for i in range(60)
    ]
    rows = audit_sample(items, seed=20261007)
    strata = Counter(row["stratum"] for row in rows)
    assert strata == {"fred/time": AUDIT_SIZES["fred/time"], "situatedqa/location": AUDIT_SIZES["situatedqa/location"]}
    assert rows == audit_sample(list(reversed(items)), seed=20261007)
    assert rows != audit_sample(items, seed=1)


# --- answer type and precision (Section 3.3 "Answer options", Appendix A.1 "Distractors") ---


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1998", "year"),
        ("1,541", "number"),
        ("1990s", "decade"),
        ("2012–13", "season"),
        ("1918 to 1920", "year range"),
        ("May 20, 2012", "day"),
        ("2020 Jun 05", "day"),
        ("May 2010", "month"),
        ("July 4", "day of year"),
        ("7.64%", "number"),
        ("130 minutes", "quantity:minutes"),
        ("2002 Winter Olympics", "numbered text"),
        ("Canada", "place"),
        ("Salt Lake City, Utah", "place"),
        ("Houston Astros", "team"),
        ("Boston Red Sox", "team"),
        ("LSU", "team"),
        ("Bobby Thigpen", "name"),
        ("Ernesto Zedillo, Vicente Fox", "list"),
    ],
)
def test_answer_kinds(text, expected):
    assert kind(text) == expected


def test_garbled_text_is_recognised():
    assert is_garbled("Thomas MÃ¼ller") and is_garbled("30Â March 1997")
    assert not is_garbled("Thomas Müller") and not is_garbled("Luka Modrić")


def _d(text, cluster="c"):
    return Distractor(text, Provenance(snapshot="s", sha256="0" * 64, value=text), cluster)


def test_fallback_distractors_match_the_gold_answers_type():
    """A question answered by a person never offers a team, and the reverse (the fallback pool)."""
    pool = Pool([], [_d("Houston Astros"), _d("Boston Red Sox"), _d("Canada"), _d("Trevor Hoffman"), _d("Mariano Rivera")])
    chosen = choose(pool, "Bobby Thigpen", "Francisco Rodríguez", ["Who has the most saves in a season?"], np.random.default_rng(0))
    assert sorted(d.text for d in chosen) == ["Mariano Rivera", "Trevor Hoffman"]
    with pytest.raises(Excluded, match="too_few_distractors"):
        choose(Pool([], [_d("Houston Astros"), _d("Trevor Hoffman")]), "Bobby Thigpen", "Francisco Rodríguez", [], np.random.default_rng(0))


def test_preferred_distractors_match_the_gold_answers_precision_and_never_repeat_an_option():
    pool = Pool([_d("November 28, 2009"), _d("1998"), _d("2004"), _d("1992"), _d("MÃ¼ller 2001")])
    chosen = choose(pool, "1992", "2002", ["When did BYU last beat Utah as of 2007?"], np.random.default_rng(1))
    assert sorted(d.text for d in chosen) == ["1998", "2004"]  # not the full date, the gold, or the mis-encoded text
    pool = Pool([_d("Golden State Warriors, Toronto Raptors"), _d("Miami Heat"), _d("Boston Celtics")])
    chosen = choose(pool, "Toronto Raptors", "Los Angeles Lakers", [], np.random.default_rng(0))
    assert sorted(d.text for d in chosen) == ["Boston Celtics", "Miami Heat"]  # an option containing the gold is the gold


# --- location scopes as G and S state them ------------------------------------------


@pytest.mark.parametrize(
    "written, shown",
    [
        ("saudi arabia", "Saudi Arabia"),
        ("United states", "the United States"),
        ("us", "the US"),
        ("the uk", "the UK"),
        ("charlotte nc", "Charlotte NC"),
        ("bosnia and herzegovina", "Bosnia and Herzegovina"),
        ("Chile", "Chile"),
        ("america", "America"),
        ("rio de janeiro", "Rio de Janeiro"),
        ("va", "VA"),
    ],
)
def test_locations_are_shown_capitalised_with_the_article_english_uses(written, shown):
    assert display_location(written) == shown


def test_only_places_the_gazetteer_knows_are_location_scopes():
    assert is_place("saudi arabia") and is_place("Albany NY") and is_place("va") and is_place("the soviet union")
    assert not is_place("Atlanta Falcons") and not is_place("Seinfeld") and not is_place("Western United States")
    assert locations_overlap("va", "Virginia") and not locations_overlap("Canada", "Chile")


# --- dependency groups (Appendix A.4) -------------------------------------------------


def test_components_merge_linked_clusters_whatever_the_order():
    links = [("c3", "c1"), ("c4", "c5"), ("c2", "x9")]
    expected = {"c1": "c1", "c2": "c2", "c3": "c1", "c4": "c4", "c5": "c4", "c6": "c6", "x9": "c2"}
    assert components(links, ["c6"]) == expected
    assert components(list(reversed(links)), ["c6"]) == expected


def _candidate(cid, source, cluster, linked=()):
    scope = Scope(time="2001")
    prov = Provenance(snapshot="s", sha256="0" * 64, value="v")
    return Candidate(
        id=cid,
        source=source,
        scope_dimension="time",
        cluster_id=cluster,
        question="q",
        target_scope=scope,
        alt_scope=scope,
        gold="g",
        lure="l",
        g_text="g",
        s_text="s",
        registered=[],
        provenance_g=prov,
        provenance_s=prov,
        construction={},
        linked_clusters=set(linked),
    )


def test_dependency_groups_join_fred_and_clusters_sharing_distractor_sources():
    candidates = [
        _candidate("f1", "fred", "fred-NE"),
        _candidate("f2", "fred", "fred-OH"),
        _candidate("s1", "situatedqa", "situatedqa-1", linked={"situatedqa-9"}),  # a distractor from question 9
        _candidate("s2", "situatedqa", "situatedqa-2", linked={"situatedqa-9"}),
        _candidate("s3", "situatedqa", "situatedqa-3"),
    ]
    groups = dependency_groups(candidates)
    assert groups == {
        "fred-NE": "group-fred",
        "fred-OH": "group-fred",
        "situatedqa-1": "group-situatedqa-1",
        "situatedqa-2": "group-situatedqa-1",
        "situatedqa-3": "group-situatedqa-3",
    }
