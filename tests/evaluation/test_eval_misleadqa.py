"""MisleadQA scoring: a miniature release whose every figure is worked out here by hand, the paper's
identities on random predictions, bad predictions lines, and the real CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from paths import REPO

from ctxrobust.build import write_sums
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.misleadqa import render as misleadqa_render
from ctxrobust.evaluation.misleadqa import scorer as misleadqa
from ctxrobust.evaluation.misleadqa.lure_rates import evaluation_subsets, outcomes
from ctxrobust.release import Release

CONDS = ["none", "G", "S", "F", "G+S", "S+G", "G+F", "F+G"]

# id: (source, scope, cluster_id, dependency_group_id, gold, lure)
MAIN = {
    "q1": ("fred", "time", "NE", "fred", "A", "B"),
    "q2": ("fred", "location", "NE", "fred", "B", "C"),
    "q3": ("fred", "time", "IA", "fred", "C", "D"),
    "q4": ("situatedqa", "time", "100", "d1", "D", "A"),
    "q5": ("situatedqa", "location", "200", "d1", "A", "C"),
    "q6": ("ambigdocs", "entity", "300", "d2", "B", "D"),
}
SUPPLEMENT = {"c1": ("condambigqa", "condition", "500", "d9", "C", "A")}

# responses per condition, in CONDS order; None = no row at all
M1 = {
    "q1": ["A", "A", "B", "B", "A", "B", "A", "B"],
    "q2": ["B", "B", "B", "C", "B", "B", "C", "C"],
    "q3": ["C", "x", "D", "D", "C", "C", "C", "D"],
    "q4": ["E", "D", "A", "A", "D", "D", "D", "A"],
    "q5": ["A", "A", "E", "C", "A", "A", "A", "C"],
    "q6": ["B", "B", "C", "B", "B", "B", "B", "D"],
}
M1_CF = {
    "q1": ["A", "A", "E", "B", "A", "E", "E", "B"],
    "q2": ["B", "C", "E", "C", "B", "B", "E", "E"],
    "q3": ["C", "C", "E", "D", "C", "C", "E", "E"],
    "q4": ["E", "D", "E", "A", "D", "D", "E", "E"],
    "q5": ["B", "A", "E", "C", "A", "A", "E", "E"],
    "q6": ["B", "B", "A", "D", "B", "C", "B", "B"],
}
M1_SUPPLEMENT = {"c1": ["C", "C", "A", "A", "C", "C", "C", "A"]}
M2 = {
    "q1": ["B", "A", "B", "B", "A", "A", "A", "B"],
    "q2": [" D\n", "", "B", "C", "B", "B", "C", "C"],
    "q3": ["C.", "C", "D", "D", "C", "C", "C", "D"],
    "q4": [None, "D", "A", "A", "D", "D", "D", "A"],
    "q5": ["E", "A", "E", "C", "A", "A", "A", "C"],
    "q6": ["B", "B", "D", "D", "B", "D", "D", "D"],
}


def item_row(item_id: str, spec: tuple, split: str) -> dict:
    source, scope, cluster, group, gold, lure = spec
    return {
        "id": item_id,
        "split": split,
        "source": source,
        "scope_dimension": scope,
        "cluster_id": cluster,
        "dependency_group_id": group,
        "question": f"Which value holds for {item_id}?",
        "options": {"A": "one", "B": "two", "C": "three", "D": "four", "E": "Insufficient information"},
        "gold": gold,
        "lure": lure,
        "target_scope": {"time": "2000"},
        "alt_scope": {"time": "2001"},
        "contexts": {
            "G": {"text": f"Gold context of {item_id}.", "scope": {}, "value": "", "true": True, "in_scope": True},
            "S": {"text": f"Out-of-scope context of {item_id}.", "scope": {}, "value": "", "true": True, "in_scope": False},
            "F": {"text": f"False context of {item_id}.", "scope": {}, "value": "", "true": False, "in_scope": True},
        },
        "f_edits": [],
        "provenance": {},
    }


def write_release(folder: Path, main: dict, supplement: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, items, split in (("main.jsonl", main, "main"), ("condition.jsonl", supplement, "condition")):
        if items:
            lines = [json.dumps(item_row(i, spec, split), sort_keys=True) for i, spec in sorted(items.items())]
            (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "manifest.json").write_text(
        json.dumps({"dataset": "misleadqa", "version": "0.0.1", "config": {"seed": 0}, "files": []}), encoding="utf-8"
    )
    write_sums(folder)  # frozen: the command line scores intact releases only
    return folder


def prediction_lines(model: str, table: dict, prompt: str | None = None) -> list[str]:
    lines = []
    for item_id, responses in table.items():
        for cond, response in zip(CONDS, responses):
            if response is None:
                continue
            row = {"model": model, "id": item_id, "condition": cond, "response": response}
            if prompt:
                row["prompt"] = prompt
            lines.append(json.dumps(row))
    return lines


@pytest.fixture
def mini(tmp_path):
    release = write_release(tmp_path / "release", MAIN, SUPPLEMENT)
    lines = (
        prediction_lines("m1", M1)
        + prediction_lines("m1", M1_CF, "cf")
        + prediction_lines("m1", M1_SUPPLEMENT)
        + prediction_lines("m2", M2)
    )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Release(release), predictions


def hand_percentile(values: list[float], p: float) -> float:
    """Linear interpolation between order statistics (App. C.2)."""
    v = sorted(values)
    h = (len(v) - 1) * p
    f = math.floor(h)
    c = min(f + 1, len(v) - 1)
    return v[f] + (h - f) * (v[c] - v[f])


def est(metrics: dict, name: str):
    return metrics[name]["estimate"]


# ------------------------------------------------------------------------------------- point estimates
def test_point_estimates_by_hand(mini):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"replicates": 0, "min_clusters": 1})
    m1 = report["models"]["m1"]["metrics"]
    m2 = report["models"]["m2"]["metrics"]
    s = report["summary"]["metrics"]

    # m1: B = {q1,q2,q3,q5,q6} (q4 abstains without context); A = B minus q3 (invalid "x" with G alone)
    assert (est(m1, "size.B"), est(m1, "size.A"), est(m1, "size.items")) == (5, 4, 6)
    # S alone on B: q1 lure, q2 gold, q3 lure, q5 abstain, q6 other (C is a distractor)
    assert [est(m1, f"outcome.B.S.{o}") for o in ("gold", "lure", "abstain", "other", "invalid")] == pytest.approx(
        [1 / 5, 2 / 5, 1 / 5, 1 / 5, 0]
    )
    assert est(m1, "LR.S") == pytest.approx(2 / 5) and m1["LR.S"]["n"] == 5
    assert est(m1, "gold.S") == pytest.approx(1 / 5)
    assert est(m1, "LR.F") == pytest.approx(4 / 5)  # q1, q2, q3, q5 lure; q6 gold
    assert est(m1, "delta.LR") == pytest.approx(2 / 5)
    # on A = {q1,q2,q5,q6}: G+S never lure, S+G lure on q1, G+F lure on q2, F+G lure on all four
    assert est(m1, "outcome.A.G+S.lure") == 0
    assert est(m1, "outcome.A.S+G.lure") == pytest.approx(1 / 4)
    assert est(m1, "outcome.A.G+F.lure") == pytest.approx(1 / 4)
    assert est(m1, "outcome.A.F+G.lure") == pytest.approx(1)
    assert est(m1, "RLR.S") == pytest.approx(1 / 8) and m1["RLR.S"]["n"] == 4
    assert est(m1, "RLR.F") == pytest.approx(5 / 8)
    assert est(m1, "delta.RLR") == pytest.approx(1 / 2)
    assert est(m1, "outcome.A.S.lure") == pytest.approx(1 / 4)  # q1 only
    assert est(m1, "outcome.A.F.lure") == pytest.approx(3 / 4)  # q1, q2, q5
    assert est(m1, "reduction.S") == pytest.approx(1 / 4 - 1 / 8)
    assert est(m1, "reduction.F") == pytest.approx(3 / 4 - 5 / 8)
    assert est(m1, "order_effect.S") == pytest.approx(1 / 4)
    assert est(m1, "order_effect.F") == pytest.approx(3 / 4)
    assert est(m1, "delta.RLR.G_first") == pytest.approx(1 / 4)
    assert est(m1, "delta.RLR.misleading_first") == pytest.approx(3 / 4)
    assert est(m1, "outcome.A.S_with_G.gold") == pytest.approx(7 / 8)
    assert est(m1, "outcome.A.F_with_G.lure") == pytest.approx(5 / 8)
    assert est(m1, "outcome.all.none.gold") == pytest.approx(5 / 6) and est(m1, "outcome.all.none.abstain") == pytest.approx(1 / 6)
    assert est(m1, "outcome.all.G.gold") == pytest.approx(5 / 6) and est(m1, "outcome.all.G.invalid") == pytest.approx(1 / 6)
    # Table 24 groups: FRED time holds q1, q3 (both in B, q1 in A)
    assert est(m1, "group.fred.time.size.B") == 2 and est(m1, "group.fred.time.size.A") == 1
    assert est(m1, "group.fred.time.LR.S") == pytest.approx(1)  # q1, q3 lure with S
    assert est(m1, "group.fred.time.RLR.F") == pytest.approx(1 / 2)  # q1: G+F gold, F+G lure
    assert est(m1, "group.situatedqa.location.LR.S") == 0  # q5 abstains
    assert est(m1, "group.situatedqa.time.size.B") == 0 and est(m1, "group.situatedqa.time.LR.S") is None  # undefined, not zero

    # m2: only q6 correct without context (q1 lure, q2 " D\n" = D other, q3 "C." invalid, q4 missing, q5 abstain)
    assert (est(m2, "size.B"), est(m2, "size.A")) == (1, 1)
    assert [est(m2, f"outcome.all.none.{o}") for o in ("gold", "lure", "abstain", "other", "invalid")] == pytest.approx(
        [1 / 6, 1 / 6, 1 / 6, 1 / 6, 2 / 6]
    )
    assert est(m2, "outcome.all.G.invalid") == pytest.approx(1 / 6)  # the empty response to q2
    assert (est(m2, "LR.S"), est(m2, "LR.F"), est(m2, "gold.S")) == (1, 1, 0)
    assert (est(m2, "RLR.S"), est(m2, "RLR.F")) == (0.5, 1)
    assert (est(m2, "reduction.S"), est(m2, "reduction.F"), est(m2, "order_effect.S"), est(m2, "order_effect.F")) == (0.5, 0, 1, 0)
    assert (est(m2, "responses.invalid.count"), est(m2, "responses.missing_original"), est(m2, "responses.rows")) == (2, 1, 47)
    assert est(m2, "responses.invalid.rate") == pytest.approx(2 / 47)

    # means over the two models, equal weight
    assert est(s, "LR.S") == pytest.approx((2 / 5 + 1) / 2) and s["LR.S"]["n"] == 2
    assert est(s, "delta.LR") == pytest.approx((2 / 5 + 0) / 2)
    assert est(s, "RLR.F") == pytest.approx((5 / 8 + 1) / 2)
    assert est(s, "delta.RLR") == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert est(s, "group.situatedqa.time.LR.S") is None  # undefined for a model -> undefined mean
    assert s["LR.S"]["ci"] is None and report["parameters"]["replicates"] == 0

    # the condition supplement is scored separately, for m1 only (m2 has no row there)
    assert (est(m1, "supplement.size.B"), est(m1, "supplement.LR.S"), est(m1, "supplement.RLR.F")) == (1, 1, 0.5)
    assert "supplement.size.B" not in m2 and s["supplement.LR.S"]["n"] == 1

    # CF (App. D.5) on m1's original subsets
    assert est(m1, "cf.outcome.all.G.gold") == pytest.approx(5 / 6) and est(m1, "cf.outcome.all.G.lure") == pytest.approx(1 / 6)
    assert est(m1, "cf.outcome.B.S.abstain") == pytest.approx(4 / 5) and est(m1, "cf.outcome.B.S.other") == pytest.approx(1 / 5)
    assert est(m1, "cf.outcome.B.F.lure") == pytest.approx(1)
    assert [est(m1, f"cf.outcome.A.S_with_G.{o}") for o in ("gold", "abstain", "other")] == pytest.approx([6 / 8, 1 / 8, 1 / 8])
    assert [est(m1, f"cf.outcome.A.F_with_G.{o}") for o in ("gold", "lure", "abstain")] == pytest.approx([2 / 8, 1 / 8, 5 / 8])
    assert est(m1, "cf.size.A_common") == 3  # q2 answered C (the lure) with G alone under CF
    assert est(m1, "cf.common.S_with_G.gold.original") == pytest.approx(5 / 6)
    assert est(m1, "cf.common.S_with_G.gold.cf") == pytest.approx(4 / 6)
    assert est(m1, "cf.none_agreement") == pytest.approx(5 / 6)  # q5: A originally, B in the CF run
    assert "cf.size.A_common" not in m2 and s["cf.size.A_common"]["n"] == 1

    # the one missing pair is reported, as a file-level problem
    problems = report["predictions"]["problems"]
    assert len(problems) == 1 and problems[0]["line"] is None and "q4/none" in problems[0]["message"] and "'m2'" in problems[0]["message"]
    assert report["predictions"]["excluded"] == 0 and report["predictions"]["rows"] == 48 + 48 + 8 + 47


# each response classified by hand (g gold, l lure, a abstain E, o other distractor, i invalid or missing),
# conditions in CONDS order; gold and lure letters as in MAIN / SUPPLEMENT
HAND = {
    ("m1", "original"): {
        "q1": "ggllglgl",
        "q2": "ggglggll",
        "q3": "gillgggl",
        "q4": "agllgggl",
        "q5": "ggalgggl",
        "q6": "ggoggggl",
        "c1": "ggllgggl",
    },
    ("m1", "cf"): {"q1": "ggalgaal", "q2": "glalggaa", "q3": "ggalggaa", "q4": "agalggaa", "q5": "ogalggaa", "q6": "ggolgogg"},
    ("m2", "original"): {"q1": "lgllgggl", "q2": "oiglggll", "q3": "igllgggl", "q4": "igllgggl", "q5": "agalgggl", "q6": "ggllglll"},
}


def hand_share(model: str, prompt: str, name: str) -> tuple[Fraction | None, int]:
    """An outcome share "[supplement.][cf.]outcome.<all|B|A>.<condition>.<outcome>" counted from HAND."""
    parts = name.split(".")
    split = "condition" if parts[0] == "supplement" else "main"
    parts = parts[1:] if split == "condition" else parts
    subset, condition, outcome = parts[-3], parts[-2], parts[-1]
    original = HAND[(model, "original")]
    ids = [i for i in original if (i in SUPPLEMENT) == (split == "condition")]
    b = [i for i in ids if original[i][0] == "g"]
    members = {"all": ids, "B": b, "A": [i for i in b if original[i][1] == "g"]}[subset]
    columns = {"S_with_G": ["G+S", "S+G"], "F_with_G": ["G+F", "F+G"]}.get(condition, [condition])
    codes = [HAND[(model, prompt)][i][CONDS.index(c)] for i in members for c in columns]
    if not codes:
        return None, 0
    return Fraction(codes.count("glaoi"["gold lure abstain other invalid".split().index(outcome)]), len(codes)), len(members)


def test_every_outcome_share_against_hand_classified_responses(mini):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"replicates": 0, "min_clusters": 1})
    checked = 0
    for model in ("m1", "m2"):
        for name, value in report["models"][model]["metrics"].items():
            if ".outcome." in f".{name}" and ".paired." not in f".{name}":  # Table 16's: its own test
                prompt = "cf" if name.split(".")[0] == "cf" or name.startswith("supplement.cf.") else "original"
                share, n = hand_share(model, prompt, name)
                assert value["estimate"] == (None if share is None else pytest.approx(float(share), abs=1e-12)), (model, name)
                assert value["n"] == n, (model, name)
                checked += 1
    assert checked == 2 * 5 * (2 + 4 + 6) + 5 * (1 + 2 + 6) + 5 * (2 + 4 + 6)  # main both models, m1 CF, m1 supplement
    s = report["summary"]["metrics"]
    for name in ("outcome.A.F+G.lure", "outcome.B.S.abstain", "outcome.all.none.invalid", "outcome.A.S_with_G.gold"):
        both = [hand_share(m, "original", name)[0] for m in ("m1", "m2")]
        assert est(s, name) == pytest.approx(float(sum(both) / 2), abs=1e-12) and s[name]["n"] == 2


def test_cf_comparison_uses_the_same_models_for_both_prompts(mini):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"replicates": 0, "min_clusters": 1})
    s, m1 = report["summary"]["metrics"], report["models"]["m1"]["metrics"]
    # only m1 has CF rows: Table 21's original rows are m1's, not the two-model means of Table 14
    assert est(s, "cf.original.outcome.B.S.lure") == pytest.approx(2 / 5) and s["cf.original.outcome.B.S.lure"]["n"] == 1
    assert est(s, "outcome.B.S.lure") == pytest.approx((2 / 5 + 1) / 2)
    assert est(s, "cf.original.outcome.A.F_with_G.lure") == pytest.approx(5 / 8) and est(s, "cf.outcome.A.F_with_G.lure") == pytest.approx(
        1 / 8
    )
    assert est(m1, "cf.kept.A_common") == pytest.approx(3 / 4) and m1["cf.kept.A_common"]["n"] == 4  # Table 23
    md = misleadqa_render.render_markdown(report)
    table21 = md.split("## Table 21")[1].split("## ")[0]
    assert "| S alone | Original | 20.00 | 40.00 | 20.00 | 20.00 | 0.00 |" in table21 and "1 model(s) with CF rows (m1)" in table21
    assert "| m1 | 4 | 3 | 75.00 |" in md.split("## Table 23")[1]
    table22 = md.split("## Table 22")[1].split("## ")[0]  # per-model CF rates, hand-classified: m1 only
    shares = [hand_share("m1", "cf", f"cf.{key}")[0] for key in ("outcome.B.S.abstain", "outcome.B.S.lure", "outcome.B.F.lure")]
    shares += [
        hand_share("m1", "cf", f"cf.{key}")[0] for key in ("outcome.all.G.gold", "outcome.A.S_with_G.gold", "outcome.A.F_with_G.abstain")
    ]
    cells = " | ".join(f"{100 * float(s):.2f}" for s in shares)
    assert f"| m1 | {cells} |" in table22 and f"| Mean | {cells} |" in table22


def test_cf_run_without_its_no_context_rerun(mini, tmp_path):
    release, _ = mini
    no_rerun = {i: [None] + r[1:] for i, r in M1_CF.items()}
    partial = {**no_rerun, "q1": M1_CF["q1"]}
    for table, problems in ((no_rerun, 0), (partial, 1)):
        path = tmp_path / "cf.jsonl"
        path.write_text("\n".join(prediction_lines("m1", M1) + prediction_lines("m1", table, "cf")) + "\n", encoding="utf-8")
        report = misleadqa.score(release, path, {"replicates": 0, "min_clusters": 1})
        assert len(report["predictions"]["problems"]) == problems  # the rerun is optional, but all or nothing (App. D.5)
        assert est(report["models"]["m1"]["metrics"], "cf.outcome.B.S.abstain") == pytest.approx(4 / 5)
    assert "5 (item, condition) pair(s) missing" in report["predictions"]["problems"][0]["message"]
    assert (
        est(report["models"]["m1"]["metrics"], "cf.none_agreement") == 1
        and report["models"]["m1"]["metrics"]["cf.none_agreement"]["n"] == 1
    )


@pytest.mark.parametrize(
    "options, message",
    [
        ({"seed": -1}, "--seed -1: input should be greater than or equal to 0"),
        ({"min_clusters": -3}, "--min-clusters -3: input should be greater than or equal to 0"),
        ({"replicates": -1}, "--replicates -1: input should be greater than or equal to 0"),
        ({"replicates": "many"}, "--replicates 'many': input should be a valid integer"),
        ({"export": "out.csv"}, "--export: not an option for misleadqa score"),
    ],
)
def test_bad_options_are_one_clear_line(mini, options, message):
    from ctxrobust.errors import CtxRobustError

    release, predictions = mini
    with pytest.raises(CtxRobustError) as caught:
        misleadqa.score(release, predictions, options)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_lenient_letters_change_subsets_and_are_counted(mini):
    release, predictions = mini
    strict = misleadqa.score(release, predictions, {"replicates": 0, "min_clusters": 1})
    lenient = misleadqa.score(release, predictions, {"replicates": 0, "min_clusters": 1, "lenient_letters": True})
    m2s, m2l = strict["models"]["m2"]["metrics"], lenient["models"]["m2"]["metrics"]
    assert est(m2s, "size.B") == 1 and est(m2l, "size.B") == 2  # "C." read as C, the gold of q3
    assert est(m2s, "responses.lenient_forms") == 0 and est(m2l, "responses.lenient_forms") == 1
    assert lenient["parameters"]["lenient_letters"] is True and strict["parameters"]["lenient_letters"] is False
    assert "'B.' / '(B)'" in misleadqa_render.render_markdown(lenient) and "a single letter A-E only" in misleadqa_render.render_markdown(
        strict
    )


# ------------------------------------------------------------------------------------------- bootstrap
# the indicator sets behind every bootstrapped figure, read off the tables above
SETS = {
    "m1": {
        "B": {"q1", "q2", "q3", "q5", "q6"},
        "A": {"q1", "q2", "q5", "q6"},
        "goldS": {"q2"},
        "lureS": {"q1", "q3"},
        "lureF": {"q1", "q2", "q3", "q5"},
        "lureS_A": {"q1"},
        "lureF_A": {"q1", "q2", "q5"},
        "G+S": set(),
        "S+G": {"q1"},
        "G+F": {"q2"},
        "F+G": {"q1", "q2", "q5", "q6"},
    },
    "m2": {
        "B": {"q6"},
        "A": {"q6"},
        "goldS": set(),
        "lureS": {"q6"},
        "lureF": {"q6"},
        "lureS_A": {"q6"},
        "lureF_A": {"q6"},
        "G+S": set(),
        "S+G": {"q6"},
        "G+F": {"q6"},
        "F+G": {"q6"},
    },
}


def hand_replicate(sets: dict, w: dict) -> dict:
    """One replicate's metrics for one model, with exact fractions; None when a denominator weighs zero."""
    total = lambda items: sum(w[i] for i in items)
    b, a = total(sets["B"]), total(sets["A"])
    out = {}
    if b:
        out["gold.S"] = Fraction(total(sets["goldS"]), b)
        out["LR.S"] = Fraction(total(sets["lureS"]), b)
        out["LR.F"] = Fraction(total(sets["lureF"]), b)
        out["delta.LR"] = out["LR.F"] - out["LR.S"]
    if a:
        out["RLR.S"] = Fraction(total(sets["G+S"]) + total(sets["S+G"]), 2 * a)
        out["RLR.F"] = Fraction(total(sets["G+F"]) + total(sets["F+G"]), 2 * a)
        out["delta.RLR"] = out["RLR.F"] - out["RLR.S"]
        out["reduction.S"] = Fraction(total(sets["lureS_A"]), a) - out["RLR.S"]
        out["reduction.F"] = Fraction(total(sets["lureF_A"]), a) - out["RLR.F"]
        out["order_effect.S"] = Fraction(total(sets["S+G"]) - total(sets["G+S"]), a)
        out["order_effect.F"] = Fraction(total(sets["F+G"]) - total(sets["G+F"]), a)
    return out


def hand_intervals(units: list, unit_of: dict, replicates: int, names: tuple) -> tuple[dict, dict]:
    draws = np.random.default_rng(2027).integers(0, len(units), size=(replicates, len(units)))
    per_model = {m: {n: [] for n in names} for m in SETS}
    mean = {n: [] for n in names}
    for row in draws:
        times = Counter(int(u) for u in row)
        w = {item: times[units.index(unit_of[item])] for item in MAIN}
        values = {m: hand_replicate(SETS[m], w) for m in SETS}
        for n in names:
            for m in SETS:
                if n in values[m]:
                    per_model[m][n].append(float(values[m][n]))
            if all(n in values[m] for m in SETS):  # undefined for any model -> undefined mean
                mean[n].append(float(sum(values[m][n] for m in SETS) / len(SETS)))
    return per_model, mean


def check_interval(metric: dict, undefined: dict, values: list, name: str, replicates: int) -> None:
    tail = 0.0125 if name in ("delta.LR", "delta.RLR") else 0.025
    assert metric["ci"] == pytest.approx([hand_percentile(values, tail), hand_percentile(values, 1 - tail)], abs=1e-12)
    assert undefined["estimate"] == replicates - len(values) and undefined["n"] == replicates


def test_cluster_bootstrap_by_hand(mini):
    release, predictions = mini
    replicates = 8
    report = misleadqa.score(release, predictions, {"replicates": replicates, "min_clusters": 1})
    # clusters in sorted (source, cluster_id) order; the draws are numpy's Generator with seed 2027
    clusters = [("ambigdocs", "300"), ("fred", "IA"), ("fred", "NE"), ("situatedqa", "100"), ("situatedqa", "200")]
    cluster_of = {i: (spec[0], spec[2]) for i, spec in MAIN.items()}
    draws = np.random.default_rng(2027).integers(0, 5, size=(replicates, 5))
    assert [0 not in row for row in draws] == [False] * 6 + [True, False]  # replicate 7 never draws q6's cluster
    names = tuple(n for n in misleadqa.CI_METRICS if not n.startswith("paired."))  # Table 16's: test_table16_...
    per_model, mean = hand_intervals(clusters, cluster_of, replicates, names)
    assert len(mean["LR.S"]) == replicates - 1  # m2's B_m = {q6} weighs zero there: one undefined replicate
    s = report["summary"]["metrics"]
    for name in names:
        check_interval(s[name], s[f"bootstrap.undefined.{name}"], mean[name], name, replicates)
        for model in SETS:
            m = report["models"][model]["metrics"]
            check_interval(m[name], m[f"bootstrap.undefined.{name}"], per_model[model][name], name, replicates)
    assert est(s, "bootstrap.undefined.delta.LR") == 1 and est(report["models"]["m1"]["metrics"], "bootstrap.undefined.delta.LR") == 0
    assert s["delta.LR"]["estimate"] == pytest.approx(0.2)  # intervals never move the point estimate
    assert s["LR.S"]["ci"] is not None and s["size.B"]["ci"] is None and s["outcome.B.S.lure"]["ci"] is None

    # App. D.6: dependency groups d1, d2, fred resampled the same way (a fresh Generator, seed 2027)
    groups = ["d1", "d2", "fred"]
    group_of = {i: spec[3] for i, spec in MAIN.items()}
    per_model, mean = hand_intervals(groups, group_of, replicates, misleadqa.GROUP_CI_METRICS)
    for name in misleadqa.GROUP_CI_METRICS:
        key = "dependency_groups." + name
        assert s[key]["estimate"] == s[name]["estimate"]
        check_interval(s[key], s[f"bootstrap.undefined.{key}"], mean[name], name, replicates)
        m = report["models"]["m2"]["metrics"]
        check_interval(m[key], m[f"bootstrap.undefined.{key}"], per_model["m2"][name], name, replicates)
    assert est(s, "bootstrap.undefined.dependency_groups.delta.RLR") == 1


def test_models_below_the_cluster_rule_leave_inference(mini):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"replicates": 8, "min_clusters": 2})
    m1, m2 = report["models"]["m1"]["metrics"], report["models"]["m2"]["metrics"]
    assert (est(m1, "inference.A.clusters"), est(m2, "inference.A.clusters")) == (3, 1)  # q1, q2 share NE
    assert (est(m1, "inference.eligible"), est(m2, "inference.eligible")) == (1.0, 0.0)
    s = report["summary"]["metrics"]
    assert est(s, "inference.models") == 1 and s["LR.S"]["n"] == 1 and est(s, "LR.S") == pytest.approx(2 / 5)
    assert m2["LR.S"]["ci"] is None and m1["LR.S"]["ci"] is not None
    assert est(s, "bootstrap.undefined.LR.S") == 0  # m1 alone: its B_m spans four of the five clusters
    md = misleadqa_render.render_markdown(report)
    assert "| m2 * | 1 | 1 |" in md and "| m1 | 5 | 4 |" in md and "* A_m covers fewer than 2 source clusters" in md


def test_default_settings_are_the_papers(mini):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"min_clusters": 1})
    s = report["summary"]["metrics"]
    assert report["parameters"] == {
        "replicates": 10000,
        "seed": 2027,
        "lenient_letters": False,
        "min_clusters": 1,
        "exclude_models": None,
        "levels": {"primary": 0.975, "other": 0.95},
    }
    assert (est(s, "bootstrap.units.clusters"), est(s, "bootstrap.units.dependency_groups")) == (5, 3)
    assert "Cluster bootstrap: 10000 replicates, seed 2027, 5 source clusters" in misleadqa_render.render_markdown(report)
    # P(q6's cluster never drawn) = (4/5)^5: about a third of 10,000 replicates leave m2 undefined
    assert 3000 < est(s, "bootstrap.undefined.LR.S") < 3600


# ------------------------------------------------------------------------------------------ identities
def random_case(tmp_path: Path, seed: int) -> tuple[Release, Path]:
    rng = np.random.default_rng(seed)
    sources = [("fred", "time"), ("fred", "location"), ("situatedqa", "time"), ("situatedqa", "location"), ("ambigdocs", "entity")]
    main = {}
    for k in range(40):
        source, scope = sources[k % 5]
        gold, lure = rng.choice(list("ABCD"), size=2, replace=False)
        main[f"r{k:02d}"] = (source, scope, f"c{rng.integers(0, 12)}", f"g{rng.integers(0, 4)}", str(gold), str(lure))
    release = write_release(tmp_path / f"release{seed}", main)
    answers = ["A", "B", "C", "D", "E", "A", "B", "zz", " C ", "(D)"]
    lines = []
    for model in ("x", "y", "z"):
        for item_id in main:
            for cond in CONDS:
                if rng.random() < 0.03:
                    continue  # a missing pair
                response = main[item_id][4] if rng.random() < 0.4 else answers[rng.integers(0, len(answers))]  # lean towards gold
                lines.append(json.dumps({"model": model, "id": item_id, "condition": cond, "response": response}))
    path = tmp_path / f"random{seed}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Release(release), path


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_identities_hold_on_random_predictions(tmp_path, seed):
    release, path = random_case(tmp_path, seed)
    report = misleadqa.score(release, path, {"replicates": 200, "min_clusters": 1})
    for block in report["models"].values():
        m = block["metrics"]
        for key in ("S", "F"):  # RLR is the mean of the two order rates (§4.2)
            first, second = (f"outcome.A.G+{key}.lure", f"outcome.A.{key}+G.lure")
            if est(m, "size.A"):
                assert est(m, f"RLR.{key}") == pytest.approx((est(m, first) + est(m, second)) / 2, abs=1e-12)
                assert est(m, f"outcome.A.{key}_with_G.lure") == pytest.approx(est(m, f"RLR.{key}"), abs=1e-12)
        prefixes = {name.rsplit(".", 1)[0] for name in m if name.startswith("outcome.")}
        for prefix in prefixes:  # every outcome distribution sums to one
            shares = [est(m, f"{prefix}.{o}") for o in ("gold", "lure", "abstain", "other", "invalid")]
            if all(x is not None for x in shares):
                assert sum(shares) == pytest.approx(1.0, abs=1e-12)
        assert est(m, "size.A") <= est(m, "size.B")
        assert est(m, "outcome.B.S.lure") == est(m, "LR.S")
    s = report["summary"]["metrics"]
    eligible = [b["metrics"] for b in report["models"].values() if est(b["metrics"], "inference.eligible")]
    assert len(eligible) == 3 and est(s, "inference.models") == 3
    assert est(s, "LR.S") == pytest.approx(np.mean([est(m, "LR.S") for m in eligible]), abs=1e-12)
    lo, hi = s["delta.LR"]["ci"]
    assert lo <= hi


def test_subsets_nested_on_random_codes():
    rng = np.random.default_rng(7)
    letters = rng.integers(-2, 5, size=(500, 8))
    gold = rng.integers(0, 4, size=(500, 1))
    lure = (gold + rng.integers(1, 4, size=(500, 1))) % 4
    codes = outcomes(letters, gold, lure)
    b, a = evaluation_subsets(codes)
    assert not (a & ~b).any() and a.sum() < b.sum()
    assert (codes[letters < 0] == 4).all() and (codes[letters == gold] == 0).all()


# ------------------------------------------------------------------------------------------ bad lines
BAD_LINES = [
    (None, '{"model": "m1", "id": "q1", "condition": "none", "response": "A"}'),
    ("not valid JSON", "this is not json"),
    ("field 'response'", '{"model": "m1", "id": "q1", "condition": "G", "response": 5}'),
    ("unknown id 'q99'", '{"model": "m1", "id": "q99", "condition": "G", "response": "A"}'),
    ("unknown condition 'GS'", '{"model": "m1", "id": "q1", "condition": "GS", "response": "A"}'),
    ("duplicate row (same key as line 1)", '{"model": "m1", "id": "q1", "condition": "none", "response": "B"}'),
    ("missing field 'response'", '{"model": "m1", "id": "q1", "condition": "S"}'),
    ("unknown field 'score'", '{"model": "m1", "id": "q1", "condition": "F", "response": "A", "score": 1}'),
    ("unknown prompt 'zero-shot'", '{"model": "m1", "id": "q1", "condition": "F", "response": "A", "prompt": "zero-shot"}'),
    ("field 'id'", '{"model": "m1", "id": null, "condition": "F", "response": "A"}'),
]


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ctxrobust.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def test_bad_lines_are_listed_and_strict_refuses(tmp_path):
    release = write_release(tmp_path / "release", MAIN)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(line for _, line in BAD_LINES) + "\n", encoding="utf-8")

    strict = run_cli("score", str(release), str(path), "--strict", "--replicates", "10")
    assert strict.returncode != 0
    assert "Traceback" not in strict.stderr and strict.stdout == ""
    for number, (message, _) in enumerate(BAD_LINES, start=1):
        if message:
            assert f"{path}:{number}: " in strict.stderr and message in strict.stderr.split(f"{path}:{number}: ", 1)[1].splitlines()[0]
    assert "pair(s) missing" in strict.stderr and "--strict refuses" in strict.stderr

    lenient = run_cli("score", str(release), str(path), "--replicates", "10")
    assert lenient.returncode == 0, lenient.stderr
    report = json.loads(lenient.stdout)
    listed = {p["line"]: p["message"] for p in report["predictions"]["problems"]}
    for number, (message, _) in enumerate(BAD_LINES, start=1):
        assert (number in listed) == (message is not None)
        if message:
            assert message in listed[number]
    assert report["predictions"]["rows"] == len(BAD_LINES) and report["predictions"]["excluded"] == len(BAD_LINES) - 1
    assert any(p["line"] is None and "47 (item, condition) pair(s) missing" in p["message"] for p in report["predictions"]["problems"])


def test_clean_file_passes_strict_and_reports_are_byte_identical(mini, tmp_path):
    release, predictions = mini
    clean = tmp_path / "clean.jsonl"
    clean.write_text("\n".join(prediction_lines("m1", M1) + prediction_lines("m1", M1_SUPPLEMENT)) + "\n", encoding="utf-8")
    outputs = []
    for hashseed in ("1", "2"):
        out = tmp_path / f"report{hashseed}.json"
        done = run_cli(
            "score", str(release.path), str(clean), "--strict", "--replicates", "300", "-o", str(out), env={"PYTHONHASHSEED": hashseed}
        )
        assert done.returncode == 0, done.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    report = json.loads(outputs[0])
    assert set(report) == {"dataset", "release", "parameters", "predictions", "models", "summary", "units", "coverage"}
    assert report["parameters"]["replicates"] == 300 and report["parameters"]["seed"] == 2027
    assert set(report["release"]) == {"version", "manifest_sha256"} and set(report["summary"]) == {"metrics", "warnings"}
    for block in [report["summary"]] + list(report["models"].values()):
        for name, value in block["metrics"].items():
            assert set(value) - {"note"} == {"estimate", "ci", "n"}, name  # a null figure says why in "note"
            if name.startswith(("outcome.", "LR.", "RLR.", "gold.")) and value["estimate"] is not None:
                assert 0.0 <= value["estimate"] <= 1.0


def test_markdown_and_html_reports(mini, tmp_path):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"replicates": 50, "min_clusters": 1})
    md = misleadqa_render.render_markdown(report)
    assert "Table 2: main results" in md and "Table 14: outcome distributions" in md
    table2 = md.split("## Table 2")[1].split("## ")[0]
    header = next(line for line in table2.splitlines() if line.startswith("| Model"))
    assert header.count(" | ") == 10  # eleven columns: the bars of |B_m| are escaped
    assert (
        "| m1 | 5 | 4 | 20.00 [0.0, 39.4] | 40.00 [3.8, 78.9] | 80.00 [34.8, 100.0] | 40.00 [0.0, 75.0] | 12.50 [0.0, 25.0] | 62.50 [50.0, 75.0] | 50.00 [50.0, 50.0] | 1.0 |"
        in md
    )
    assert "| Mean |  |  | 10.00 | 70.00 | 90.00 | 20.00 | 31.25 | 81.25 | 50.00 |" in md
    assert "| B_m | S alone |" in md and "Table 21" in md and "Table 17" in md
    assert "## Problems in the predictions file" in md and "1 (item, condition) pair(s) missing" in md.split("## Problems")[1]
    page = misleadqa_render.render_html(report)
    assert page.startswith("<!DOCTYPE html>") and "data:image/png;base64," in page and "Table 26" in page
    assert "http://" not in page and "https://" not in page  # self-contained


def test_release_without_main_split_is_one_clear_error(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"dataset": "misleadqa", "version": "0"}), encoding="utf-8")
    write_sums(folder)
    (tmp_path / "p.jsonl").write_text("", encoding="utf-8")
    done = run_cli("score", str(folder), str(tmp_path / "p.jsonl"))
    assert done.returncode == 2 and "no main.jsonl" in done.stderr and "Traceback" not in done.stderr


def test_none_agreement_counts_only_valid_letters_in_both_runs(mini, tmp_path):
    release, _ = mini
    original = {**M1, "q1": ["zz"] + M1["q1"][1:], "q2": ["yy"] + M1["q2"][1:]}
    cf = {**M1_CF, "q1": ["qq"] + M1_CF["q1"][1:], "q3": ["ww"] + M1_CF["q3"][1:]}
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(prediction_lines("m1", original) + prediction_lines("m1", cf, "cf")) + "\n", encoding="utf-8")
    m1 = misleadqa.score(release, path, {"replicates": 0, "min_clusters": 1})["models"]["m1"]["metrics"]
    # q1 invalid in both runs (not an agreement), q2 and q3 invalid in one; q4 E/E, q5 A/B, q6 B/B
    assert est(m1, "cf.none_agreement") == pytest.approx(2 / 3) and m1["cf.none_agreement"]["n"] == 3
    assert est(m1, "cf.none_agreement.invalid_pairs") == 3 and m1["cf.none_agreement.invalid_pairs"]["n"] == 6
    every = {i: ["zz"] + r[1:] for i, r in M1_CF.items()}
    path.write_text("\n".join(prediction_lines("m1", M1) + prediction_lines("m1", every, "cf")) + "\n", encoding="utf-8")
    m1 = misleadqa.score(release, path, {"replicates": 0, "min_clusters": 1})["models"]["m1"]["metrics"]
    assert m1["cf.none_agreement"]["estimate"] is None and "no item has a valid letter" in m1["cf.none_agreement"]["note"]


def test_models_on_few_clusters_and_rare_rates_are_warned_about(mini, capsys):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"replicates": 0, "min_clusters": 1})
    warnings = report["summary"]["warnings"]
    # m1's A_m: q1, q2 (cluster NE), q5, q6 -> 3 clusters; below the 20 of App. C.2
    assert any(w.startswith("model 'm1' enters the means with A_m covering 3 source cluster(s), fewer than the 20") for w in warnings)
    assert "warning: model 'm1' enters the means" in capsys.readouterr().err
    assert "## Warnings\n\n- models 'm1' (3), 'm2' (1) enter the means" in misleadqa_render.render_markdown(report)
    assert misleadqa.score(release, predictions, {"replicates": 0})["summary"]["warnings"] == []  # nobody enters: no warning


def test_exclude_models_gives_the_without_rows(mini):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"replicates": 400, "min_clusters": 1, "exclude_models": ["m2"]})
    without = report["summary"]["without"]
    assert without["excluded"] == ["m2"] and without["models"] == ["m1"]
    m1 = report["models"]["m1"]["metrics"]
    both = report["summary"]["metrics"]
    for name in ("LR.S", "RLR.F", "delta.LR"):
        # the mean over m1 alone is m1's figure, and its interval m1's (the same cluster draws)
        assert without["metrics"][name]["estimate"] == pytest.approx(m1[name]["estimate"])
        assert without["metrics"][name]["ci"] == pytest.approx(m1[name]["ci"])
    m2 = report["models"]["m2"]["metrics"]
    assert both["LR.S"]["estimate"] == pytest.approx((m1["LR.S"]["estimate"] + m2["LR.S"]["estimate"]) / 2)
    assert report["parameters"]["exclude_models"] == ["m2"]
    assert "| w/o m2 |" in misleadqa_render.render_markdown(report)
    none_left = misleadqa.score(release, predictions, {"replicates": 0, "min_clusters": 1, "exclude_models": ["m1", "m2"]})
    assert none_left["summary"]["without"]["metrics"] == {} and "no model" in none_left["summary"]["without"]["note"]
    with pytest.raises(CtxRobustError, match=r"--exclude-models: 'm9' not in .* \(its models: m1, m2\)"):
        misleadqa.score(release, predictions, {"replicates": 0, "exclude_models": ["m9"]})


def test_table16_paired_conditional_outcomes_by_hand(mini):
    release, predictions = mini
    report = misleadqa.score(release, predictions, {"replicates": 300, "min_clusters": 1})
    m1 = report["models"]["m1"]["metrics"]
    # m1's A_m: q1, q2, q5, q6. G first: all four have G+S gold; with G+F, q2 gives the lure (C), the rest gold
    assert m1["paired.G_first.outcome.gold"]["n"] == 4 and est(m1, "paired.G_first.kept") == 1
    assert est(m1, "paired.lure.G_first") == pytest.approx(1 / 4) and est(m1, "paired.G_first.outcome.gold") == pytest.approx(3 / 4)
    # F first: q1's S+G is the lure, so q2, q5, q6 are kept; F+G gives the lure on all three
    assert m1["paired.misleading_first.outcome.gold"]["n"] == 3 and est(m1, "paired.misleading_first.kept") == pytest.approx(3 / 4)
    assert est(m1, "paired.lure.misleading_first") == pytest.approx(1.0) and m1["paired.lure.misleading_first"]["n"] == 3
    assert m1["paired.lure.G_first"]["ci"] is not None  # cluster-bootstrap interval, as the paper gives
    summary = report["summary"]["metrics"]
    m2 = report["models"]["m2"]["metrics"]
    assert est(summary, "paired.lure.G_first") == pytest.approx((est(m1, "paired.lure.G_first") + est(m2, "paired.lure.G_first")) / 2)
    table = misleadqa_render.render_markdown(report).split("## Table 16")[1].split("## ")[0]
    assert "| G first | m1 | 4 | 100.00 | 75.00 | 25.00 | 0.00 | 0.00 | 0.00 |" in table
    assert "| F first | m1 | 3 | 75.00 | 0.00 | 100.00 |" in table


def test_report_names_the_tables_it_cannot_fill_and_their_inputs(mini, tmp_path):
    release, predictions = mini
    md = misleadqa_render.render_markdown(misleadqa.score(release, predictions, {"replicates": 0, "min_clusters": 1}))
    missing = md.split("## Not in this report")[1]
    assert "Table 4 (option-order robustness" in missing and "Tables 19-20 and Figure 3" in missing
    assert "Tables 21-23" not in missing and "--exclude-models" in missing  # this file has CF rows
    path = tmp_path / "original.jsonl"
    path.write_text("\n".join(prediction_lines("m1", M1)) + "\n", encoding="utf-8")
    md = misleadqa_render.render_markdown(misleadqa.score(release, path, {"replicates": 0, "min_clusters": 1, "exclude_models": ["m1"]}))
    missing = md.split("## Not in this report")[1]
    assert 'need rows with "prompt": "cf"' in missing and "--exclude-models" not in missing
