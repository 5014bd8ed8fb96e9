"""GSM-IC from a researcher's own problems (the project-written tests/fixtures/gsm_ic_user_problems.jsonl), and the
magnitude classes every variant's number is checked against."""

from collections import Counter

import pytest
from paths import REPO
from test_gsm_ic_build import SMALL, make_release, rows_of

from ctxrobust.builders.gsm_ic import GsmIcConfig, magnitudes
from ctxrobust.builders.gsm_ic.builder import build_from_pool
from ctxrobust.builders.gsm_ic.lexicon import load_reviewed, load_templates
from ctxrobust.builders.gsm_ic.variants import CELLS
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import gsm8k
from ctxrobust.validators.checks import checks_for

FIXTURE = REPO / "tests" / "fixtures" / "gsm_ic_user_problems.jsonl"
FIRST = 160  # the first problems of the fixture: the full file builds in the bench


@pytest.fixture(scope="module")
def first_problems(tmp_path_factory):
    if not FIXTURE.is_file():
        pytest.skip("tests/fixtures/gsm_ic_user_problems.jsonl is not in this checkout")
    path = tmp_path_factory.mktemp("user") / "first.jsonl"
    path.write_text("".join(FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)[:FIRST]), encoding="utf-8")
    return path


def test_a_researchers_file_builds_with_exclusions_recorded_by_reason(first_problems, tmp_path):
    from ctxrobust.build import build_release
    from ctxrobust.release import Release

    # the paper's density, 580 variants per base problem, over the usable problems of the first 160 lines
    result = build_release("gsm-ic", "0.1-user", {"base_file": str(first_problems), "n_variants": 12000, "eval_size": 800}, tmp_path, None)
    release = Release(result.path)
    assert all(v["passed"] for v in release.manifest["validators"].values())
    notes = release.manifest["build_notes"]
    pool = notes["pool"]
    assert pool["usable"] == notes["base_problems"] >= 20
    assert sum(pool["excluded_by_reason"].values()) >= pool["joined"] - pool["usable"] > 0
    assert all(e["reasons"] and ":" in e["reasons"][0] for e in pool["excluded"])
    assert set(notes["cells"]) == {"/".join(c) for c in CELLS} and notes["template_mix_tv_max"] <= 0.05
    variants = release.rows("variants.jsonl")
    assert len(variants) == 12000 and Counter(v["base_id"] for v in variants).keys() == {b["id"] for b in release.rows("base.jsonl")}


def test_problems_the_templates_cannot_serve_drop_out_until_the_rest_can(first_problems):
    # few numbers per template: some problems cannot give their share; they are excluded and the others share theirs
    pool = gsm8k.read_user_file(first_problems)
    config = GsmIcConfig(base_file=str(first_problems), n_variants=8000, eval_size=400, numbers_per_label=3)
    output = build_from_pool(pool, config)
    notes = output.notes
    assert notes["pool"]["excluded_by_reason"].get("few_sentences", 0) > 0
    assert notes["variants"] == 8000 and notes["base_problems"] == notes["pool"]["usable"]
    # asking for more than any problem can give: one line naming how many remain and why
    with pytest.raises(CtxRobustError, match=r"no problem of base_file can be a base problem .*few_sentences \d+"):
        build_from_pool(pool, GsmIcConfig(base_file=str(first_problems), n_variants=900_000, eval_size=400, numbers_per_label=1))


def every_template():
    reviewed = load_reviewed()
    shared = load_templates()
    return [t for base_id in reviewed.problems for t in reviewed.templates_of(base_id)] + shared.in_topic + shared.off_topic


def test_every_template_carries_a_known_magnitude_class_and_a_nonempty_range():
    for template in every_template():
        assert template.magnitude in magnitudes.CLASSES, template.id
        low, high = magnitudes.bounds(template)
        assert high is None or low <= high, template.id


@pytest.mark.parametrize(
    "text, name",
    [
        ("The pottery factory near {role}'s hometown makes {number} vases a week.", "factory"),
        ("{role}'s favorite video has {number} views.", "audience"),
        ("The marathon {role} watched had {number} spectators.", "crowd"),
        ("{role}'s clothing store orders {number} dresses a year.", "business_year"),
        ("The public library {role} uses has lent out {number} books this year.", "institution_year"),
        ("{role}'s truck has been driven {number} miles.", "odometer"),
        ("{role}'s village is {number} feet above sea level.", "elevation"),
        ("{role}'s farm is registered as lot {number} in the county.", "identifier"),
        ("{role} ordered {number} milkshakes at the diner last year.", "count"),  # a person's year, not the diner's
    ],
)
def test_phrase_rules_class_what_a_number_counts(text, name):
    assert magnitudes.class_of(text).name == name


def test_the_scanned_implausible_magnitudes_are_out_of_every_templates_reach():
    # (class, a number the scans found implausible for it)
    for name, value in [
        ("audience", 900),
        ("crowd", 450),
        ("factory", 36),
        ("business_year", 40),
        ("institution_year", 850),
        ("odometer", 60),
        ("elevation", 12_000),
        ("identifier", 1_700_000),
        ("contacts", 2_900),
        ("parking", 4_400),
    ]:
        magnitude = magnitudes.CLASSES[name]
        assert not magnitude.low <= value <= (magnitude.high or value), name
    for template in every_template():
        low, high = magnitudes.bounds(template)
        magnitude = magnitudes.class_of(template.text, template.identifier)
        assert low >= magnitude.low and (magnitude.high is None or (high is not None and high <= magnitude.high)), template.id


def test_sixteen_topics_have_generic_templates_for_a_question_about_money():
    from ctxrobust.builders.gsm_ic.irrelevance import template_gives_money

    shared = load_templates()
    for topic in shared.topics:
        own = [t for t in shared.in_topic if topic.name in t.topics and not template_gives_money(t.text)]
        assert len(own) >= 8, topic.name
        assert len([t for t in shared.off_topic if topic.name not in t.topics]) >= 30, topic.name


def test_the_magnitude_check_is_green_on_a_build_and_catches_a_36_vase_weekly_factory(tmp_path):
    from test_gsm_ic_build import write_sources

    pool = gsm8k.load_files(*write_sources(tmp_path))
    config = GsmIcConfig(**SMALL)
    output = build_from_pool(pool, config)
    check = checks_for("gsm-ic")["magnitude_plausible"]
    (tmp_path / "clean").mkdir()
    assert list(check(make_release(tmp_path / "clean", output, config))) == []
    variants = [dict(v) for v in rows_of(output)["variants.jsonl"]]
    shared = {t.id: t for t in load_templates().in_topic + load_templates().off_topic}
    factory, lot = [v for v in variants if shared[v["template_id"]].magnitude == "count"][:2]
    factory["sentence_template"] = "The pottery factory near {role}'s hometown makes {number} vases a week."
    factory["number"] = "36"
    lot["sentence_template"] = "{role}'s farm is registered as lot {number} in the county."
    lot["number"] = "1700000"
    lot["sentence"] = f"{lot['role']}'s farm is registered as lot 1,700,000 in the county."
    output.files[1].rows = variants
    (tmp_path / "bad").mkdir()
    failures = list(check(make_release(tmp_path / "bad", output, config)))
    assert [f.item for f in failures] == [factory["id"], lot["id"], lot["id"]]
    assert "what a factory makes" in failures[0].message and "separators" in failures[2].message
    assert all(f.message and "\n" not in f.message for f in failures)  # plain text, one line each


def test_every_templates_declared_class_is_the_one_its_phrase_rules_give():
    # one place decides a template's class (the phrase rules the validator replays); a declaration must agree
    for template in every_template():
        assert template.magnitude == magnitudes.class_of(template.text, template.identifier).name, template.id
    assert magnitudes.class_of("The pharmacy near {role}'s home fills {number} prescriptions a day.").name == "shop_week"
    assert magnitudes.class_of("The carnival {role} went to had {number} visitors.").name == "crowd"


def test_a_template_whose_declared_class_disagrees_with_its_phrase_rules_is_refused():
    from pydantic import ValidationError

    from ctxrobust.builders.gsm_ic.lexicon import Template

    with pytest.raises(ValidationError, match="declares magnitude class 'count', its phrase rules give 'shop_week'"):
        Template(id="t", text="The pharmacy near {role}'s home fills {number} prescriptions a day.", topics=[], magnitude="count")


def test_the_fixtures_generator_verifies_every_worked_solution():
    import subprocess
    import sys

    generator = REPO / "tests" / "fixtures" / "make_gsm_ic_user_problems.py"
    if not FIXTURE.is_file() or not generator.is_file():
        pytest.skip("the user-problem fixture or its generator is not in this checkout")
    done = subprocess.run([sys.executable, str(generator), "--check"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "522 problems" in done.stdout
