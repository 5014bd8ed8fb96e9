"""GSM-IC from the real GSM8K snapshots (read through the source store): size, balance, and tamper detection."""

import re
import shutil
from collections import Counter

import pytest

from ctxrobust.build import build_release
from ctxrobust.builders.gsm_ic import GsmIcBuilder, GsmIcConfig, magnitudes
from ctxrobust.builders.gsm_ic.builder import template_mix_distance
from ctxrobust.builders.gsm_ic.irrelevance import names_target, template_gives_money
from ctxrobust.builders.gsm_ic.lexicon import load_reviewed, load_templates
from ctxrobust.builders.gsm_ic.numbers import known_numbers
from ctxrobust.builders.gsm_ic.variants import CELLS
from ctxrobust.canonical import read_jsonl, write_jsonl
from ctxrobust.release import Release
from ctxrobust.validators.checks import run_checks


@pytest.fixture(scope="module")
def small_release(store, tmp_path_factory):
    """A real release over the default 100 base problems with fewer variants, built and validated by the pipeline."""
    out = tmp_path_factory.mktemp("gsm-ic-releases")
    result = build_release("gsm-ic", "0.0.1-test", {"n_variants": 1600, "eval_size": 400}, out, store)
    return result.path


def test_the_pinned_default_base_set_serves_only_its_own_draw_and_only_when_usable(store):
    from ctxrobust.builders.gsm_ic.builder import pinned_default
    from ctxrobust.builders.gsm_ic.selection import paper_step_mix
    from ctxrobust.sources import gsm8k

    pool, reviewed, mix = gsm8k.load(store), load_reviewed(), paper_step_mix(40, 7)
    reasons = {p.id: [] for p in pool.problems}
    chosen, note = pinned_default(pool, reasons, GsmIcConfig(), mix, reviewed)
    assert [p.id for p in chosen] == sorted(reviewed.default_base.ids) and "default_base" in note
    # another seed or other counts ask for another draw: the keyword rule's usable pool is drawn from
    assert pinned_default(pool, reasons, GsmIcConfig(seed=1), mix, reviewed) == (None, None)
    assert pinned_default(pool, reasons, GsmIcConfig(n_two_step=50, n_variants=50000), mix, reviewed) == (None, None)
    # a pinned problem the configuration cannot use: drawn afresh, and the note names it
    first = reviewed.default_base.ids[0]
    reasons[first] = [("few_sentences", "too few sentences")]
    chosen, note = pinned_default(pool, reasons, GsmIcConfig(), mix, reviewed)
    assert chosen is None and first in note and "drew afresh" in note


def test_another_seed_draws_pool_problems_with_the_maintainers_topic_labels(store):
    output = GsmIcBuilder(GsmIcConfig(seed=1, n_variants=1600, eval_size=400), store).build()
    bases = output.files[0].rows
    assert "base_selection" not in output.notes and len(bases) == 100
    assert all(b["topic_source"] == "reviewed" for b in bases)  # every pool problem has a reviewed entry or label
    assert any(b["topic_evidence"] == "reviewed.json topic_rest label" for b in bases)
    assert Counter(b["n_steps"] for b in bases) == {2: 60, 3: 15, 4: 12, 5: 9, 6: 3, 7: 1}


def test_default_build_has_the_papers_shape(store):
    output = GsmIcBuilder(GsmIcConfig(), store).build()
    files = {f.name: f.rows for f in output.files}
    bases, variants, eval_rows = files["base.jsonl"], files["variants.jsonl"], files["gsm-ic-4k.jsonl"]
    assert len(bases) == 100
    # the paper's step mix: 60 two-step; for 3 to 7 steps the mix its variant counts imply
    assert Counter(b["n_steps"] for b in bases) == {2: 60, 3: 15, 4: 12, 5: 9, 6: 3, 7: 1}
    assert "step_mix_note" not in output.notes
    assert len(variants) == 58052 >= 50000
    cells = Counter((v["sentence_label"], v["role_label"], v["number_label"]) for v in variants)
    assert set(cells) == set(CELLS) and min(cells.values()) >= 0.05 * len(variants)
    assert len(eval_rows) == 4000 and {r["base_id"] for r in eval_rows} == {b["id"] for b in bases}
    assert len({v["new_question"] for v in variants}) == len(variants)
    # the one pool question without a worked solution is reported, not guessed; every other exclusion has its reasons
    pool = output.notes["pool"]
    assert pool["skipped_unjoined"] == [{"id": "pool-0577", "reason": "question not found verbatim in gsm8k/train.jsonl"}]
    assert pool["joined"] == 999 and pool["usable"] + len(pool["excluded"]) == 999
    assert all(e["reasons"] for e in pool["excluded"])
    # the base problems are the reviewed default base set, pinned, and the build note says so
    assert [b["id"] for b in bases] == sorted(load_reviewed().default_base.ids)
    assert "reviewed.json default_base" in output.notes["base_selection"]
    # every base problem has a reviewed topic and its own four in-topic templates
    assert all(b["topic_source"] == "reviewed" for b in bases)
    in_topic = [v for v in variants if v["sentence_label"] == "in_topic"]
    assert all(v["template_id"].startswith(v["base_id"] + "/") for v in in_topic)
    # (a template is left out where it cannot read naturally with enough of the problem's out-of-range numbers)
    used = {b["id"]: len({v["template_id"] for v in in_topic if v["base_id"] == b["id"]}) for b in bases}
    assert all(2 <= n <= 4 for n in used.values()) and sum(n >= 3 for n in used.values()) >= 60, used
    # overlapping roles derive from a person of the problem; every number reads naturally in its template
    people = {b["id"]: set(b["people"]) for b in bases}
    assert all(v["role"].partition("'s ")[0] in people[v["base_id"]] for v in variants if v["role_label"] == "overlapped")
    templates = {t.id: t for t in load_templates().in_topic + load_templates().off_topic}
    templates.update({t.id: t for b in bases for t in load_reviewed().templates_for(b["id"], b["question"])})
    bounds = {i: magnitudes.bounds(t) for i, t in templates.items()}
    assert all(
        bounds[v["template_id"]][0] <= int(v["number"]) <= (bounds[v["template_id"]][1] or 10**15)
        for v in variants
        if v["template_id"] in templates
    )
    scans(bases, variants)


def identifier_templates(bases) -> set[str]:
    shared = load_templates()
    ids = {t.id for t in shared.in_topic + shared.off_topic if magnitudes.is_identifier(t)}
    for b in bases:
        ids |= {t.id for t in load_reviewed().templates_for(b["id"], b["question"]) if magnitudes.is_identifier(t)}
    return ids


def scans(bases, variants):
    """The scans over every variant that the release promises."""
    by_id = {b["id"]: b for b in bases}
    # none names the question's target object or unit
    assert not [v["id"] for v in variants if names_target(v["sentence"], by_id[v["base_id"]]["targets"])]
    # none writes a quantity of 10,000 or more without separators; identifiers (an employee ID, a card, ticket or
    # serial number) are written as plain digits
    identifiers = identifier_templates(bases)
    assert not [v["id"] for v in variants if v["template_id"] not in identifiers and re.search(r"(?<![\d,])\d{5,}", v["sentence"])]
    assert not [v["id"] for v in variants if v["template_id"] in identifiers and "," in v["sentence"]]
    # no overlapped role names a relation the problem already has, nor a person of it
    for v in variants:
        owner, _, relation = v["role"].partition("'s ")
        assert relation not in by_id[v["base_id"]]["relations_present"] and v["role"] not in by_id[v["base_id"]]["people"], v["id"]
    # no money given in a money question
    assert not [v["id"] for v in variants if by_id[v["base_id"]]["money_question"] and template_gives_money(v["sentence_template"])]
    # per base problem, in-range and out-of-range variants share the template mix
    assert max(template_mix_distance(variants).values()) <= 0.05
    # out-of-range numbers spread over magnitudes above 10r, not bunched just past it
    top = {b["id"]: max(known_numbers(b["question"], b["solution"])) for b in bases}
    out = [int(v["number"]) / top[v["base_id"]] for v in variants if v["number_label"] == "out_range"]
    assert sum(r <= 20 for r in out) < 0.4 * len(out) and sum(r > 100 for r in out) > 0.25 * len(out)
    # a sentence that reads as a child's (a pupil's school, a camp attended, classmates) never takes an adult relative
    child = re.compile(r"\b(attends|classmates|recess)\b|\b(school|district|class)\b.*\{role\} (studies|goes)\b")
    adult = re.compile(r"'s (mother|father|grandmother|grandfather|aunt|uncle|boss|coworker)$")
    assert not [v["id"] for v in variants if child.search(v["sentence_template"]) and adult.search(v["role"])]
    # every holder's count lies above its floor (magnitudes.py): a business, a farm, a library or a bank
    holders = {"chain_period", "professional", "business_total", "library_members", "bank_customers", "farm_planting"}
    classes = {v["id"]: magnitudes.class_of(v["sentence_template"]) for v in variants}
    assert {c.name for c in classes.values()} >= holders - {"library_members", "bank_customers"}
    assert not [v["id"] for v in variants if classes[v["id"]].name in holders and int(v["number"]) < classes[v["id"]].low]


def test_release_builds_and_every_check_passes(small_release):
    release = Release(small_release)
    assert all(v["passed"] for v in release.manifest["validators"].values())
    assert {
        "span_replay",
        "factor_replay",
        "answer_matches_base",
        "inserted_number",
        "distinct_text",
        "cell_coverage",
        "target_not_named",
        "no_money_in_money_question",
        "role_not_in_problem",
        "no_ambiguous_reference",
        "number_format",
        "out_range_outside",
        "template_bounds",
        "magnitude_plausible",
        "template_mix",
    } <= set(release.manifest["validators"])
    assert [f["rows"] for f in release.files] == [100, 400, 1600]
    assert release.manifest["build_notes"]["base_by_steps"]["2"] == 60


def test_tampering_is_reported_by_check_and_item(small_release, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(small_release, copy)
    path = copy / "variants.jsonl"
    rows = read_jsonl(path)
    text_row, label_row, offset_row = rows[10], rows[500], rows[1000]
    text_row["new_question"] = text_row["new_question"].replace(text_row["sentence"], text_row["sentence"][:-1] + "!")
    label_row["number_label"] = "out_range" if label_row["number_label"] == "in_range" else "in_range"
    offset_row["insert_offset"] = 0 if offset_row["insert_offset"] else 1
    write_jsonl(path, rows)
    results = run_checks(Release(copy))
    failures = {(name, f.item) for name, found in results.items() for f in found}
    assert ("span_replay", text_row["id"]) in failures
    assert ("factor_replay", label_row["id"]) in failures
    assert ("span_replay", offset_row["id"]) in failures
    assert any(f.file == "variants.jsonl" for f in results["hashes"])
    # nothing else was blamed on untouched items
    touched = {text_row["id"], label_row["id"], offset_row["id"]}
    assert {item for name, item in failures if name in {"span_replay", "factor_replay"}} <= touched


def test_base_problems_are_re_read_from_the_snapshots(small_release, store, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(small_release, copy)
    path = copy / "base.jsonl"
    rows = read_jsonl(path)
    changed, moved = rows[3], rows[7]
    changed["question"] = changed["question"].replace(" ", "  ", 1)
    moved["solution_line"] += 1
    write_jsonl(path, rows)
    found = run_checks(Release(copy, store=store))["provenance"]
    assert sorted((f.item, f.message.split(" differs")[0]) for f in found) == sorted(
        [
            (changed["id"], "question, answer or n_steps"),
            (changed["id"], "question or solution"),
            (moved["id"], "question or solution"),
        ]
    )
    assert run_checks(Release(small_release, store=store))["provenance"] == []
    assert "set SOURCES_MIRROR" in run_checks(Release(small_release))["provenance"][0].message
