"""The GSM8K adapter and the GSM-IC builder on a small pool written for these tests (not upstream data)."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO
from pydantic import ValidationError

from ctxrobust.builders.gsm_ic import GsmIcConfig
from ctxrobust.builders.gsm_ic.builder import build_from_pool
from ctxrobust.builders.gsm_ic.lexicon import load_templates
from ctxrobust.builders.gsm_ic.variants import CELLS, render
from ctxrobust.canonical import dumps, write_jsonl
from ctxrobust.errors import CtxRobustError
from ctxrobust.release import Release
from ctxrobust.sources import gsm8k
from ctxrobust.validators.checks import checks_for

# (question, pool answer, n_steps, worked solution or None when the training split lacks it)
PROBLEMS = [
    (
        "Lena buys 4 notebooks for $3 each and a backpack for $25 for school. How much does she spend?",
        "37",
        2,
        "The notebooks cost 4 * 3 = $<<4*3=12>>12.\nLena spends 12 + 25 = $<<12+25=37>>37.\n#### 37",
    ),
    (
        "Jonah earns $12.50 an hour and works 8 hours a day. How much does he earn in 5 days?",
        "500",
        2,
        "Jonah earns 12.50 * 8 = $<<12.50*8=100>>100 a day.\nIn 5 days he earns 100 * 5 = $<<100*5=500>>500.\n#### 500",
    ),
    (
        "Olivia is 3 times as old as her son, who is 12 years old. How old will she be in 6 years?",
        "42",
        2,
        "Olivia is 3 * 12 = <<3*12=36>>36 years old.\nIn 6 years she will be 36 + 6 = <<36+6=42>>42.\n#### 42",
    ),
    (
        "Tobias bakes 36 muffins at his bakery. He gives 1/4 of them to his neighbors and sells the rest for $2 each. How much money does he make?",
        "54",
        3,
        "Tobias gives away 36 / 4 = <<36/4=9>>9 muffins.\nHe sells 36 - 9 = <<36-9=27>>27 muffins.\nHe makes 27 * 2 = $<<27*2=54>>54.\n#### 54",
    ),
    (
        "Hugo has 2,400 marbles in his toy collection. He gives 15% of them to his sister. If he packs the rest into bags of 60, how many bags does he fill?",
        "34",
        3,
        "Hugo gives away 2400 * 15 / 100 = <<2400*15/100=360>>360 marbles.\nHe keeps 2400 - 360 = <<2400-360=2040>>2040 marbles.\n"
        "He fills 2040 / 60 = <<2040/60=34>>34 bags.\n#### 34",
    ),
    ("A farm has 120 cows and 80 sheep. How many animals are on the farm?", "200", 2, "120 + 80 = <<120+80=200>>200\n#### 200"),
    (
        "Marta and Ines read 25 pages a day each. How many pages do they read in 4 days?",
        "200",
        2,
        "Together they read 25 * 2 = <<25*2=50>>50 pages a day.\nIn 4 days they read 50 * 4 = <<50*4=200>>200.\n#### 200",
    ),
    ("Kofi has 7 kites and buys 5 more. How many kites does Kofi have?", "12", 2, None),
    (
        "Priyanka saves $15 a week for 8 weeks. Then she spends $45 on a jacket and a scarf and $20 on shoes and socks. "
        "How much money does she have left?",
        "55",
        4,
        "Priyanka saves 15 * 8 = $<<15*8=120>>120.\nShe spends 45 + 20 = $<<45+20=65>>65.\nShe has 120 - 65 = $<<120-65=55>>55 left.\n#### 55",
    ),
    ("Ada walks 2 miles a day. How far does she walk in 50 days?", "90", 2, "Ada walks 2 * 50 = <<2*50=100>>100 miles.\n#### 100"),
]
SMALL = {"n_two_step": 3, "n_more_steps": 2, "n_variants": 80, "eval_size": 10, "numbers_per_label": 4}


def write_sources(folder: Path) -> tuple[Path, Path]:
    pool, train = folder / "pool.jsonl", folder / "train.jsonl"
    pool.write_text("".join(json.dumps({"question": q, "answer": a, "n_steps": n}) + "\n" for q, a, n, _ in PROBLEMS), encoding="utf-8")
    lines = [json.dumps({"question": "Nadia has 3 cats. How many cats does she have?", "answer": "Nadia has 3 cats.\n#### 3"})]
    lines += [json.dumps({"question": q, "answer": s}) for q, _, _, s in PROBLEMS if s is not None]
    train.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return pool, train


@pytest.fixture
def sources(tmp_path):
    return write_sources(tmp_path)


@pytest.fixture
def pool(sources):
    return gsm8k.load_files(*sources)


def test_adapter_joins_and_reports_unjoinable_questions(pool):
    assert [p.id for p in pool.problems] == [
        "pool-0001",
        "pool-0002",
        "pool-0003",
        "pool-0004",
        "pool-0005",
        "pool-0006",
        "pool-0007",
        "pool-0009",
    ]
    reasons = {u.id: u.reason for u in pool.unjoined}
    assert reasons["pool-0008"] == "question not found verbatim in gsm8k/train.jsonl"
    assert "gives answer '100', the pool '90'" in reasons["pool-0010"]
    first = pool.problems[0]
    assert first.pool.line == 1 and first.source.line == 2 and first.source.snapshot == gsm8k.TRAIN
    assert first.solution.endswith("#### 37") and len(first.pool.sha256) == 64


def test_adapter_reports_a_repeated_pool_question(tmp_path):
    pool, train = tmp_path / "pool.jsonl", tmp_path / "train.jsonl"
    question = "Nadia has 3 cats. How many cats does she have?"
    pool.write_text((json.dumps({"question": question, "answer": "3", "n_steps": 2}) + "\n") * 2, encoding="utf-8")
    train.write_text(json.dumps({"question": question, "answer": "Nadia has 3 cats.\n#### 3"}) + "\n", encoding="utf-8")
    joined = gsm8k.load_files(pool, train)
    assert [p.id for p in joined.problems] == ["pool-0001"]
    assert [(u.id, u.reason) for u in joined.unjoined] == [("pool-0002", "same question as pool-0001 of gsm_ic/gsm8k_validation.jsonl")]


def test_adapter_names_file_and_line_of_a_bad_record(tmp_path):
    bad = tmp_path / "pool.jsonl"
    bad.write_text('{"question": "Q?", "answer": "1", "n_steps": 2}\n{"question": "Q2?", "answer": 3, "n_steps": 2}\n', encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"pool.jsonl:2: field 'answer'"):
        gsm8k.read_pool(bad)


def build(pool, **overrides):
    return build_from_pool(pool, GsmIcConfig(**{**SMALL, **overrides}))


def rows_of(output):
    return {f.name: f.rows for f in output.files}


def test_build_selects_usable_problems_and_crosses_all_factors(pool):
    output = build(pool)
    files = rows_of(output)
    bases = files["base.jsonl"]
    # the paper's step mix for 2 longer problems is one 3-step and one 4-step
    assert sorted(b["n_steps"] for b in bases) == [2, 2, 2, 3, 4]
    assert {b["id"] for b in bases} >= {"pool-0001", "pool-0002", "pool-0003"}
    variants = files["variants.jsonl"]
    assert len(variants) == 80 and len({v["new_question"] for v in variants}) == 80
    for base in bases:
        own = [v for v in variants if v["base_id"] == base["id"]]
        assert {(v["sentence_label"], v["role_label"], v["number_label"]) for v in own} == set(CELLS)
        assert all(v["answer"] == base["answer"] and v["original_question"] == base["question"] for v in own)
    notes = output.notes
    assert notes["pool"]["skipped_unjoined"][0]["id"] == "pool-0008"
    assert notes["pool"]["excluded_by_reason"] == {"group_reference": 1, "no_person": 1, "topic_undecided": 1}
    # pool-0009 asks about money: its topic's shared templates that give no money serve it (money-7 ...);
    # pool-0006's cows and sheep on a farm lead animals over garden by too little for the topic rule to decide
    assert [(e["id"], [r.split(":")[0] for r in e["reasons"]]) for e in notes["pool"]["excluded"]] == [
        ("pool-0006", ["no_person", "topic_undecided"]),
        ("pool-0007", ["group_reference"]),
    ]
    assert "pool-0009" in {b["id"] for b in bases} and "step_mix_note" not in notes
    assert sum(notes["cells"].values()) == 80 and notes["gsm_ic_4k"]["bases_covered"] == 5
    assert len(files["gsm-ic-4k.jsonl"]) == 10


def test_pronoun_before_the_inserted_sentence_is_reworded_and_recorded(pool):
    variants = rows_of(build(pool))["variants.jsonl"]
    lena = [v for v in variants if v["base_id"] == "pool-0001"]
    assert all(v["edits"] == [{"start": 83, "end": 86, "old": "she", "new": "Lena"}] for v in lena)
    v = lena[0]
    assert v["new_question"] == (
        "Lena buys 4 notebooks for $3 each and a backpack for $25 for school. " + v["sentence"] + " How much does Lena spend?"
    )


def test_inserted_numbers_avoid_the_answer_and_problem_numbers_and_fit_their_template(pool):
    own_numbers = {"pool-0001": {4, 3, 25, 12, 37}, "pool-0002": {12.5, 8, 5, 100, 500}, "pool-0003": {3, 12, 6, 36, 42}}
    templates = {t.id: t for t in load_templates().in_topic + load_templates().off_topic}
    for v in rows_of(build(pool))["variants.jsonl"]:
        assert v["number"] != v["answer"]
        assert int(v["number"]) not in own_numbers.get(v["base_id"], set())
        template = templates[v["template_id"]]
        assert template.min <= int(v["number"]) <= (template.max or 10**12), (v["id"], template.id)


def test_same_seed_same_rows_other_seed_other_rows(pool):
    a, b = rows_of(build(pool)), rows_of(build(pool))
    assert dumps(a) == dumps(b)
    c = rows_of(build(pool, seed=7))
    assert dumps(a["variants.jsonl"]) != dumps(c["variants.jsonl"])


def test_output_does_not_depend_on_hash_seed(sources):
    script = (
        "import sys, hashlib; from sources import gsm8k; from builders.gsm_ic import GsmIcConfig;"
        "from builders.gsm_ic.builder import build_from_pool; from ctxrobust.canonical import dumps;"
        f"out = build_from_pool(gsm8k.load_files(sys.argv[1], sys.argv[2]), GsmIcConfig(**{SMALL!r}));"
        "print(hashlib.sha256(dumps([[f.name, f.rows] for f in out.files]).encode()).hexdigest())"
    )
    digests = set()
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, *map(str, sources)], env=env, cwd=REPO, capture_output=True, text=True, check=True
        )
        digests.add(done.stdout.strip())
    assert len(digests) == 1


def test_listed_base_ids(pool):
    files = rows_of(build(pool, base_ids=["pool-0004", "pool-0001"], n_variants=16, eval_size=2))
    assert [b["id"] for b in files["base.jsonl"]] == ["pool-0001", "pool-0004"]
    with pytest.raises(CtxRobustError, match="base id pool-0006 cannot be used: no person named"):
        build(pool, base_ids=["pool-0006"], n_variants=8, eval_size=1)
    with pytest.raises(CtxRobustError, match="base id pool-0008: question not found"):
        build(pool, base_ids=["pool-0008"], n_variants=8, eval_size=1)
    with pytest.raises(CtxRobustError, match="pool-0042 is not in the pool"):
        build(pool, base_ids=["pool-0042"], n_variants=8, eval_size=1)


def test_a_listed_base_id_whose_topic_the_rule_leaves_undecided_is_one_clear_error(tmp_path):
    question = "Kemal has 14 cookies. He gives 3 cookies away. How many cookies does Kemal have left?"
    pool_file, train_file = tmp_path / "pool.jsonl", tmp_path / "train.jsonl"
    pool_file.write_text(json.dumps({"question": question, "answer": "11", "n_steps": 2}) + "\n", encoding="utf-8")
    solution = "Kemal has 14 - 3 = <<14-3=11>>11 cookies left.\n#### 11"
    train_file.write_text(json.dumps({"question": question, "answer": solution}) + "\n", encoding="utf-8")
    with pytest.raises(CtxRobustError) as caught:
        build(gsm8k.load_files(pool_file, train_file), base_ids=["pool-0001"], n_variants=8, eval_size=1)
    assert str(caught.value) == (
        "gsm-ic: base id pool-0001 cannot be used: topic undecided: the leading topic food rests on 1 distinct keyword(s) "
        "(cookies), fewer than 2; choose another base problem"
    )


def test_too_few_usable_problems_is_one_clear_error(pool):
    with pytest.raises(CtxRobustError, match="only 3 usable pool problems with two steps and 3 with 3 to 7, 4 and 2 requested"):
        build(pool, n_two_step=4, n_variants=96)


def test_problem_whose_numbers_allow_no_in_range_whole_number_is_not_used():
    from ctxrobust.builders.gsm_ic.analysis import analyse
    from ctxrobust.builders.gsm_ic.lexicon import load_lexicon, load_templates

    found = analyse(
        "Lena drinks 0.01 cups of tea. How much tea does she drink?",
        "Lena drinks 0.01 cups.\n#### 0.01",
        "0.01",
        load_lexicon(),
        load_templates(),
    )
    assert [kind for kind, _ in found.problems] == ["no_numbers"]


def test_problem_whose_answer_is_not_a_number_is_not_used():
    from ctxrobust.builders.gsm_ic.analysis import analyse
    from ctxrobust.builders.gsm_ic.lexicon import load_lexicon

    found = analyse(
        "Lena has 3 pens and 2 pencils for school. How many does she have?",
        "Lena has 3.\n#### three",
        "three",
        load_lexicon(),
        load_templates(),
    )
    assert [kind for kind, _ in found.problems] == ["answer_not_a_number"]


def test_config_refuses_unpopulated_cells():
    with pytest.raises(ValidationError, match="at least 8 per base problem"):
        GsmIcConfig(n_variants=100)


def make_release(tmp_path, output, config) -> Release:
    entries = []
    for data in output.files:
        write_jsonl(tmp_path / data.name, data.rows)
        entries.append({"name": data.name, "schema": data.schema, "rows": len(data.rows)})
    manifest = {
        "dataset": "gsm-ic",
        "version": "test",
        "config": config.model_dump(mode="json"),
        "files": entries,
        "build_notes": output.notes,
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return Release(tmp_path, manifest=manifest)


GSM_IC_CHECKS = [
    "answer_matches_base",
    "base_selection",
    "cell_coverage",
    "distinct_text",
    "factor_replay",
    "gsm_ic_4k",
    "inserted_number",
    "span_replay",
    "target_not_named",
    "no_money_in_money_question",
    "role_not_in_problem",
    "no_ambiguous_reference",
    "number_format",
    "out_range_outside",
    "template_mix",
    "template_bounds",
    "magnitude_plausible",
]


def run(release):
    checks = checks_for("gsm-ic")
    return {name: list(checks[name](release)) for name in GSM_IC_CHECKS}


def test_validators_pass_on_a_fixture_build_and_catch_tampering(pool, tmp_path):
    config = GsmIcConfig(**SMALL)
    output = build_from_pool(pool, config)
    (tmp_path / "clean").mkdir()
    assert run(make_release(tmp_path / "clean", output, config)) == {name: [] for name in GSM_IC_CHECKS}

    variants = [dict(v) for v in rows_of(output)["variants.jsonl"]]
    lena = [v for v in variants if v["base_id"] == "pool-0001"]
    wrong_answer, wrong_role, wrong_number = lena[0], lena[1], lena[2]
    wrong_answer["answer"] = "41"
    wrong_role["role_label"] = "nonoverlapped" if wrong_role["role_label"] == "overlapped" else "overlapped"
    wrong_number["number"] = "37"  # the answer, also breaks the sentence replay
    clone = dict(variants[-1], id=variants[-1]["id"][:-4] + "9999")
    variants.append(clone)
    # a "non-overlapping" name that the problem uses, and a pronoun edit naming someone else
    name_of_problem, stranger_edit = lena[3], lena[4]
    name_of_problem.update(role="Lena", role_label="nonoverlapped")
    stranger_edit["edits"] = [dict(stranger_edit["edits"][0], new="Nadia")]
    # an edit naming a person of the problem where the pronoun could also be someone named only by a relation
    relation_edit = lena[5]
    relation_edit["original_question"] = relation_edit["original_question"].replace("Lena", "Lena's mom helps. Lena", 1)
    output.files[1].rows = variants
    (tmp_path / "bad").mkdir()
    found = run(make_release(tmp_path / "bad", output, config))
    # the changed original question no longer matches its base either
    assert [f.item for f in found["answer_matches_base"]] == [wrong_answer["id"], relation_edit["id"]]
    # the changed number may also have changed its range label
    assert (
        {wrong_role["id"], name_of_problem["id"]}
        <= {f.item for f in found["factor_replay"]}
        <= {wrong_role["id"], name_of_problem["id"], wrong_number["id"]}
    )
    assert any(f.item == name_of_problem["id"] and "neither" in f.message for f in found["factor_replay"])
    assert any(f.item == wrong_number["id"] and "is the answer" in f.message for f in found["inserted_number"])
    assert any(f.item == wrong_number["id"] and "not the template filled" in f.message for f in found["span_replay"])
    assert any(f.item == stranger_edit["id"] and "does not replace a pronoun by a person" in f.message for f in found["span_replay"])
    assert [f.item for f in found["distinct_text"]] == [clone["id"]]
    assert any(f.item == relation_edit["id"] and "could also be the problem's 'mom'" in f.message for f in found["span_replay"])


def test_each_irrelevance_and_number_rule_names_the_variant_that_breaks_it(pool, tmp_path):
    config = GsmIcConfig(**SMALL, base_ids=["pool-0001", "pool-0002", "pool-0003", "pool-0004", "pool-0005"])
    output = build_from_pool(pool, config)
    variants = [dict(v) for v in rows_of(output)["variants.jsonl"]]
    by_base = {}
    for v in variants:
        by_base.setdefault(v["base_id"], []).append(v)
    lena, hugo, olivia = by_base["pool-0001"], by_base["pool-0005"], by_base["pool-0003"]
    # Olivia's question asks "How old", Lena's about money ("How much does she spend?"); the target sentence is
    # one whose number is a quantity, not an identifier (an identifier's number is written as plain digits)
    identifiers = {t.id for t in load_templates().in_topic + load_templates().off_topic if t.identifier}
    target, money = next(v for v in reversed(olivia) if v["template_id"] not in identifiers), lena[1]
    target.update(
        sentence_template="{role} has {number} years of practice.",
        sentence=f"{target['role']} has {int(target['number']):,} years of practice.",
    )
    money.update(sentence_template="{role} has {money}.", sentence=f"{money['role']} has $5.")
    # Hugo gives marbles to his sister: "Hugo's sister" is a person of the problem already
    sister = next(v for v in hugo if v["role_label"] == "overlapped")
    sister["role"] = "Hugo's sister"
    # without the recorded edit, Lena's question says "she": a female role could be read as her
    pronoun = next(v for v in lena[2:] if v["role"] in ("Ada", "Emma", "Mary") or v["role"].endswith(("mother", "sister", "neighbor")))
    pronoun["edits"] = []
    # a 5-digit number written without separators; an out-of-range label on an in-range number
    digits = next(v for v in olivia if v["sentence_label"] == "off_topic" and "{number}" in v["sentence_template"])
    digits.update(number="24000", sentence=digits["sentence_template"].format(role=digits["role"], number="24000"))
    inside = next(v for v in olivia if v["number_label"] == "in_range" and v is not digits)
    inside["number_label"] = "out_range"
    # an edit naming a person of the problem where the pronoun could also be someone named only by a relation
    relation_edit = lena[5]
    relation_edit["original_question"] = relation_edit["original_question"].replace("Lena", "Lena's mom helps. Lena", 1)
    output.files[1].rows = variants
    (tmp_path / "bad").mkdir()
    found = run(make_release(tmp_path / "bad", output, config))
    named = {name: {f.item for f in failures} for name, failures in found.items()}
    assert named["target_not_named"] == {target["id"], money["id"]}  # "$5" names the money Lena's question asks about
    assert named["no_money_in_money_question"] == {money["id"]}
    assert named["role_not_in_problem"] == {sister["id"]}
    assert named["no_ambiguous_reference"] == {pronoun["id"]}
    assert named["number_format"] == {digits["id"]}
    assert named["out_range_outside"] == {inside["id"]}
    # the template mix of one base problem's out-of-range variants pulled away from its in-range ones
    variants = [dict(v) for v in rows_of(build_from_pool(pool, config))["variants.jsonl"]]
    for v in variants:
        if v["base_id"] == "pool-0002" and v["number_label"] == "out_range":
            v["template_id"] = "off-7"
    output.files[1].rows = variants
    (tmp_path / "mix").mkdir()
    assert [f.item for f in run(make_release(tmp_path / "mix", output, config))["template_mix"]] == ["pool-0002"]
    # a number beyond what its template reads with ("has 370,000,000 seashells")
    variants = [dict(v) for v in rows_of(build_from_pool(pool, config))["variants.jsonl"]]
    bounded = {t.id: t for t in load_templates().off_topic if t.max is not None}
    huge = next(v for v in variants if v["template_id"] in bounded)
    huge["number"] = str(bounded[huge["template_id"]].max + 1)
    output.files[1].rows = variants
    (tmp_path / "bounds").mkdir()
    failures = run(make_release(tmp_path / "bounds", output, config))["template_bounds"]
    assert [f.item for f in failures] == [huge["id"]] and "outside what template" in failures[0].message


USER_PROBLEMS = [
    (
        "Marisol has 14 pencils. She buys 3 packs of 6 pencils. How many pencils does Marisol have now?",
        "The packs hold 3 * 6 = <<3*6=18>>18 pencils.\nMarisol has 14 + 18 = <<14+18=32>>32 pencils.\n#### 32",
    ),
    (
        "Dmitri runs 5 kilometers every morning and 3 kilometers every evening. How many kilometers does Dmitri run in 7 days?",
        "Each day he runs 5 + 3 = <<5+3=8>>8 kilometers.\nIn 7 days he runs 8 * 7 = <<8*7=56>>56 kilometers.\n#### 56",
    ),
    (
        "Priscilla bakes 48 muffins. She gives 12 muffins to her class and packs the rest into boxes of 6. How many boxes does "
        "Priscilla fill after she bakes 12 more muffins and packs those too?",
        "She keeps 48 - 12 = <<48-12=36>>36 muffins.\nShe then has 36 + 12 = <<36+12=48>>48 muffins.\nShe fills 48 / 6 = <<48/6=8>>8 boxes.\n#### 8",
    ),
]


def test_a_gsm8k_format_file_of_the_users_problems_builds_and_validates(tmp_path):
    from ctxrobust.build import build_release

    path = tmp_path / "mine.jsonl"
    # the keyword rule leaves the first two topics undecided (one keyword each): their lines give the topic
    path.write_text(user_file_text(["school", "travel", None]), encoding="utf-8")
    result = build_release("gsm-ic", "0.1-own", {"base_file": str(path), "n_variants": 240, "eval_size": 30}, tmp_path / "out", None)
    release = Release(result.path)
    assert all(v["passed"] for v in release.manifest["validators"].values())
    bases = release.rows("base.jsonl")
    assert [(b["id"], b["n_steps"]) for b in bases] == [("user-0001", 2), ("user-0002", 2), ("user-0003", 3)]  # steps from the solutions
    assert [(b["topic"], b["topic_source"], b["topic_evidence"]) for b in bases[:2]] == [
        ("school", "base_file", "given by the base_file line"),
        ("travel", "base_file", "given by the base_file line"),
    ]
    assert (bases[2]["topic"], bases[2]["topic_source"]) == ("food", "keywords") and "distinct keywords" in bases[2]["topic_evidence"]
    assert release.manifest["build_notes"]["user_sources"]["base_file"] == {
        "file": "mine.jsonl",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "problems": 3,
    }
    assert len(release.rows("variants.jsonl")) == 240
    # the file is at hand with the recorded sha256: every base problem is re-read from its line
    rows = release.rows("base.jsonl")
    rows[1] = dict(rows[1], solution=rows[1]["solution"].replace("56", "57"))
    assert [f.item for f in checks_for("gsm-ic")["provenance"](_with_rows(release, rows))] == ["user-0002"]
    with pytest.raises(CtxRobustError, match="base_file .* is not a file"):
        build_release("gsm-ic", "0.1-own", {"base_file": str(tmp_path / "missing.jsonl")}, tmp_path / "out2", None)


def user_file_text(topics: list[str | None]) -> str:
    lines = []
    for (question, answer), topic in zip(USER_PROBLEMS, topics):
        lines.append(json.dumps({"question": question, "answer": answer} | ({"topic": topic} if topic is not None else {})) + "\n")
    return "".join(lines)


def test_a_base_file_line_without_a_topic_the_rule_cannot_decide_is_excluded_with_the_reason(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(user_file_text([None, "travel", None]), encoding="utf-8")
    output = build_from_pool(gsm8k.read_user_file(path), GsmIcConfig(base_file=str(path), n_variants=160, eval_size=20))
    assert [b["id"] for b in rows_of(output)["base.jsonl"]] == ["user-0002", "user-0003"]
    excluded = output.notes["pool"]["excluded"]
    assert [e["id"] for e in excluded] == ["user-0001"]
    assert excluded[0]["reasons"] == [
        "topic_undecided: topic undecided: add a topic field (the leading topic school rests on 1 distinct keyword(s) (pencils), fewer than 2)"
    ]
    assert output.notes["pool"]["excluded_by_reason"] == {"topic_undecided": 1}
    # no line usable: the too-few error names the first problem's reason and the counts by reason
    path.write_text(user_file_text([None, None]), encoding="utf-8")
    with pytest.raises(
        CtxRobustError,
        match=r"no problem of base_file can be a base problem \(user-0001: topic undecided: add a topic field .*excluded by reason: topic_undecided 2\)",
    ):
        build_from_pool(gsm8k.read_user_file(path), GsmIcConfig(base_file=str(path), n_variants=160, eval_size=20))


def test_a_base_file_topic_must_be_one_of_the_sixteen(tmp_path):
    from ctxrobust.build import build_release

    path = tmp_path / "mine.jsonl"
    path.write_text(user_file_text(["school", "cooking", None]), encoding="utf-8")
    names = ", ".join(t.name for t in load_templates().topics)
    with pytest.raises(CtxRobustError) as caught:
        build_release("gsm-ic", "0.1-own", {"base_file": str(path), "n_variants": 240, "eval_size": 30}, tmp_path / "out", None)
    message = str(caught.value)
    assert message == (f"gsm-ic: {path}:2: topic 'cooking' is not one of the 16 topics ({names}); give one of them or leave the field out")
    assert "\n" not in message
    path.write_text(user_file_text([None, None, None]).replace('"answer"', '"topic": 7, "answer"', 1), encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"mine.jsonl:1: field 'topic' is not a string"):
        gsm8k.read_user_file(path)


def _with_rows(release, base_rows):
    class Changed:
        manifest, store = release.manifest, None

        def rows(self, name):
            return base_rows if name == "base.jsonl" else release.rows(name)

        def config_as(self, model):
            return release.config_as(model)

    return Changed()


def test_roles_default_to_the_papers_and_are_configurable(pool, tmp_path):
    variants = rows_of(build(pool))["variants.jsonl"]
    relations = {v["role"].split("'s ", 1)[1] for v in variants if v["role_label"] == "overlapped"}
    assert relations <= {"father", "mother", "brother", "sister", "neighbor"}
    assert {v["role"] for v in variants if v["role_label"] == "nonoverlapped"} <= {
        "Ada",
        "David",
        "Emma",
        "Jack",
        "John",
        "Mary",
        "Max",
        "Tom",
    }
    config = GsmIcConfig(
        **{**SMALL, "numbers_per_label": 8}, relations=["cousin", "uncle", "aunt"], names=["Zora", "Kenji", "Ines", "Malik"]
    )
    output = build_from_pool(pool, config)
    variants = rows_of(output)["variants.jsonl"]
    assert {v["role"].split("'s ", 1)[1] for v in variants if v["role_label"] == "overlapped"} <= {"cousin", "uncle", "aunt"}
    assert {v["role"] for v in variants if v["role_label"] == "nonoverlapped"} <= {"Zora", "Kenji", "Ines", "Malik"}
    (tmp_path / "r").mkdir()
    assert run(make_release(tmp_path / "r", output, config)) == {name: [] for name in GSM_IC_CHECKS}


LIBRARY = (
    "Jenny's library lends 30 books on Monday and 45 books on Tuesday. How many books did the library lend in all?",
    "The library lends 30 + 45 = <<30+45=75>>75 books.\n#### 75",
)


def test_a_thing_the_question_names_with_the_or_a_possessive_is_never_named_by_the_sentence(tmp_path):
    pool_file, train = tmp_path / "pool.jsonl", tmp_path / "train.jsonl"
    question, solution = LIBRARY
    pool_file.write_text(json.dumps({"question": question, "answer": "75", "n_steps": 2}) + "\n", encoding="utf-8")
    train.write_text(json.dumps({"question": question, "answer": solution}) + "\n", encoding="utf-8")
    config = GsmIcConfig(base_ids=["pool-0001"], n_variants=40, eval_size=8, numbers_per_label=4)
    output = build_from_pool(gsm8k.load_files(pool_file, train), config)
    rows = rows_of(output)
    assert "library" in rows["base.jsonl"][0]["targets"]  # "the library" of the question sentence
    assert not any("library" in v["sentence"].lower() for v in rows["variants.jsonl"])
    (tmp_path / "clean").mkdir()
    assert run(make_release(tmp_path / "clean", output, config))["target_not_named"] == []
    variants = [dict(v) for v in rows["variants.jsonl"]]
    clash = variants[0]
    clash.update(sentence_template="{role}'s school library has {number} chairs.")
    clash["sentence"] = render(clash["sentence_template"], clash["role"], clash["number"])
    output.files[1].rows = variants
    (tmp_path / "bad").mkdir()
    failures = run(make_release(tmp_path / "bad", output, config))["target_not_named"]
    assert [f.item for f in failures] == [clash["id"]] and "'library'" in failures[0].message


def test_identifiers_are_written_as_digits_and_the_validator_names_one_with_separators(pool, tmp_path):
    config = GsmIcConfig(**SMALL)
    output = build_from_pool(pool, config)
    variants = [dict(v) for v in rows_of(output)["variants.jsonl"]]
    identifiers = {t.id for t in load_templates().off_topic if t.identifier}
    assert {"off-19", "off-20", "off-34", "off-40"} <= identifiers
    card = next(v for v in variants if v["template_id"] in identifiers)
    assert render(card["sentence_template"], card["role"], 23000, {"separators": True}, identifier=True).endswith("23000.")
    card.update(number="23000", sentence=render(card["sentence_template"], card["role"], 23000))  # "23,000": a quantity's form
    output.files[1].rows = variants
    (tmp_path / "bad").mkdir()
    failures = run(make_release(tmp_path / "bad", output, config))["number_format"]
    assert [f.item for f in failures] == [card["id"]] and "plain digits" in failures[0].message
