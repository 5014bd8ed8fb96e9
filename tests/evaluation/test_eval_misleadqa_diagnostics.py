"""MisleadQA's analyses on the diagnostic sample: the option-order check (§6.3, App. D.6, Table 4) and
scope recognition (§6.1, App. D.4, Tables 19-20, Figure 3), worked out by hand on the miniature release
of test_eval_misleadqa, against the paper's definitions on random predictions, through every request
format, and end to end through the command line."""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from paths import REPO
from test_eval_misleadqa import M1, M1_CF, M1_SUPPLEMENT, M2, MAIN, SUPPLEMENT, prediction_lines, write_release

from ctxrobust.cli import main as cli_main
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import cluster_bootstrap as cb
from ctxrobust.evaluation.misleadqa import render as misleadqa_render
from ctxrobust.evaluation.misleadqa import scorer as misleadqa
from ctxrobust.evaluation.misleadqa.diagnostic_sample import diagnostic_ids
from ctxrobust.evaluation.misleadqa.option_orders import rotations, shown_item, to_release_letters
from ctxrobust.evaluation.misleadqa.prompts import PLAN, prediction, prompts, requests
from ctxrobust.evaluation.misleadqa.responses import LETTERS, ReleaseItem, parse_label
from ctxrobust.evaluation.run.requests import decode
from ctxrobust.release import Release

GOLD = {item: spec[4] for item, spec in MAIN.items()}
LURE = {item: spec[5] for item, spec in MAIN.items()}

# option-order answers in the release's letters: model -> order -> item -> (none, S, F)
ORDER_ANSWERS = {
    "m1": {
        "ABCD": {
            "q1": "ABB",
            "q2": "BBC",
            "q3": "CDD",
            "q4": "EAA",
            "q5": "AEC",
            "q6": "BBD",
        },
        "BCDA": {
            "q1": "AAB",
            "q2": "BCC",
            "q3": "CDC",
            "q4": "DAA",
            "q5": "AAC",
            "q6": "ABB",
        },
        "CDAB": {
            "q1": "ABB",
            "q2": "BBC",
            "q3": "EDD",
            "q4": "AAA",
            "q5": "ACE",
            "q6": "BBB",
        },
    },
    "m2": {
        order: {
            item: GOLD[item] + (LURE[item] if item == "q1" else GOLD[item]) + (LURE[item] if order == "ABCD" else GOLD[item])
            for item in MAIN
        }
        for order in ("ABCD", "BCDA", "CDAB")
    },
}
# scope labels per item for G, S, F
SCOPE = {
    "m1": {
        "q1": ("Applicable", "Applicable", "Applicable"),
        "q2": ("Applicable", "Not applicable", "Applicable"),
        "q3": ("Applicable", "Not applicable", "Not applicable"),
        "q4": ("Applicable", "Not applicable", "Applicable"),
        "q5": ("Applicable", "Cannot determine", "Applicable"),
        "q6": ("Applicable", "not sure", "Cannot determine"),
    },
    "m2": {item: ("Applicable", "Not applicable", "Applicable") for item in MAIN},
}


def shown(letter: str, order: str) -> str:
    """The letter the model saw for release letter `letter` under `order` (E stays E)."""
    return LETTERS[order.index(letter)] if letter in order else letter  # E, or a response that is no letter


def order_lines(answers: dict = ORDER_ANSWERS) -> list[str]:
    lines = []
    for model, orders in answers.items():
        for order, table in orders.items():
            for item, triple in table.items():
                for condition, letter in zip(("none", "S", "F"), triple):
                    row = {"model": model, "id": item, "condition": condition, "response": shown(letter, order), "option_order": order}
                    lines.append(json.dumps(row))
    return lines


def scope_lines(labels: dict = SCOPE) -> list[str]:
    return [
        json.dumps({"model": model, "id": item, "condition": c, "prompt": "scope", "response": label})
        for model, table in labels.items()
        for item, triple in table.items()
        for c, label in zip("GSF", triple)
    ]


@pytest.fixture
def release(tmp_path):
    return Release(write_release(tmp_path / "release", MAIN, SUPPLEMENT))


def score(release, tmp_path, lines, **settings):
    path = tmp_path / "predictions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return misleadqa.score(release, path, {"replicates": 0, "min_clusters": 0, **settings})


def est(metrics: dict, name: str):
    return metrics[name]["estimate"]


# ------------------------------------------------------------------------------------- option orders
def test_rotations_are_the_papers_orders_and_letters_map_back():
    assert rotations(3) == ["ABCD", "BCDA", "CDAB"]  # App. D.6: (a,b,c,d), (b,c,d,a), (c,d,a,b), E fixed
    shown_letters = np.array([0, 1, 2, 3, 4, -1, -2], dtype=np.int8)
    assert to_release_letters(shown_letters, "BCDA").tolist() == [1, 2, 3, 0, 4, -1, -2]
    assert to_release_letters(shown_letters, "ABCD").tolist() == shown_letters.tolist()


def test_table4_by_hand(release, tmp_path):
    report = score(release, tmp_path, prediction_lines("m1", M1) + order_lines())
    m1, m2 = report["models"]["m1"]["metrics"], report["models"]["m2"]["metrics"]
    # m1: B^(0) = {q1,q2,q3,q5,q6}; lures with S there: q1, q3; with F: all five
    assert (est(m1, "option_order.size.B0"), est(m1, "option_order.size.stable")) == (5, 3)
    assert est(m1, "option_order.original.LR.S") == pytest.approx(2 / 5) and est(m1, "option_order.original.LR.F") == 1.0
    # B^stable = {q1,q2,q3,q5,q6} & {q1,q2,q3,q4,q5} & {q1,q2,q5,q6} = {q1,q2,q5}
    assert est(m1, "option_order.stable.original.LR.S") == pytest.approx(1 / 3) and est(m1, "option_order.stable.original.LR.F") == 1.0
    # lures over the three orders on {q1,q2,q5}: S 1 + 1 + 2, F 3 + 3 + 2, each of 9 answers
    assert est(m1, "option_order.stable.mean.LR.S") == pytest.approx(4 / 9) and est(m1, "option_order.stable.mean.LR.F") == pytest.approx(
        8 / 9
    )
    assert est(m1, "option_order.stable.mean.delta.LR") == pytest.approx(4 / 9) and est(m1, "option_order.kept") == pytest.approx(3 / 5)
    assert m1["option_order.stable.mean.LR.S"]["n"] == 3 and m1["option_order.original.LR.S"]["n"] == 5
    # m2: every item correct without context under every order; S lures on q1 only; F lures under ABCD only
    assert est(m2, "option_order.original.LR.F") == 1.0 and est(m2, "option_order.stable.mean.LR.F") == pytest.approx(1 / 3)
    assert est(m2, "option_order.stable.mean.LR.S") == pytest.approx(1 / 6) and est(m2, "option_order.kept") == 1.0
    s = report["summary"]["metrics"]
    assert est(s, "option_order.original.LR.S") == pytest.approx((2 / 5 + 1 / 6) / 2)
    assert est(s, "option_order.stable.mean.delta.LR") == pytest.approx((4 / 9 + (1 / 3 - 1 / 6)) / 2)
    assert est(s, "option_order.kept") == pytest.approx((3 / 5 + 1) / 2)
    assert report["models"]["m1"]["option_orders"] == ["ABCD", "BCDA", "CDAB"]
    assert (
        report["units"]["option_order.size.B0"] == "count"
        and report["units"]["option_order.stable.mean.delta.LR"] == "difference of fractions"
    )
    # the main run is untouched by the option-order rows
    assert est(m1, "LR.S") == 0.4 and est(m1, "size.B") == 5


def _paper_table4(answers: dict) -> dict:
    """App. D.6 from its definitions: B^(r), B^stable as sets, rates as fractions, means over models."""
    out = {}
    for model, orders in answers.items():
        correct = {o: {i for i, t in table.items() if t[0] == GOLD[i]} for o, table in orders.items()}
        b0, stable = correct["ABCD"], set.intersection(*correct.values())

        def lr(o, items, k, orders=orders):
            return Fraction(sum(orders[o][i][k] == LURE[i] for i in items), len(items))

        out[model] = {
            "option_order.original.LR.S": lr("ABCD", b0, 1),
            "option_order.stable.original.LR.F": lr("ABCD", stable, 2),
            "option_order.stable.mean.LR.S": sum(lr(o, stable, 1) for o in orders) / len(orders),
            "option_order.stable.mean.LR.F": sum(lr(o, stable, 2) for o in orders) / len(orders),
            "option_order.kept": Fraction(len(stable), len(b0)),
        }
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_table4_matches_the_papers_definitions_on_random_answers(release, tmp_path, seed):
    rng = np.random.default_rng(seed)
    answers = {
        f"m{k}": {
            o: {
                i: GOLD[i] + "".join(rng.choice(list("ABCDE"), 2)) if rng.random() < 0.8 else "".join(rng.choice(list("ABCDE"), 3))
                for i in MAIN
            }
            for o in rotations(3)
        }
        for k in range(3)
    }
    report = score(release, tmp_path, order_lines(answers))
    for model, figures in _paper_table4(answers).items():
        for name, value in figures.items():
            assert est(report["models"][model]["metrics"], name) == pytest.approx(float(value)), (model, name)
    for name in ("option_order.stable.mean.LR.F", "option_order.kept"):
        mean = sum(f[name] for f in _paper_table4(answers).values()) / len(answers)
        assert est(report["summary"]["metrics"], name) == pytest.approx(float(mean))


def test_table4_intervals_are_the_cluster_bootstrap_of_app_c2(release, tmp_path):
    """The mean's interval from weighted rates per replicate (App. C.2), recomputed here item by item."""
    report = score(release, tmp_path, order_lines(), replicates=400)
    items = sorted(MAIN)
    clusters = sorted({(MAIN[i][0], MAIN[i][2]) for i in items})
    weights = cb.multiplicities(len(clusters), 400, cb.SEED)
    reps = []
    for w in weights:
        wi = {i: w[clusters.index((MAIN[i][0], MAIN[i][2]))] for i in items}
        values = []
        for orders in ORDER_ANSWERS.values():
            stable = [i for i in items if all(t[i][0] == GOLD[i] for t in orders.values())]
            den = sum(wi[i] for i in stable) * len(orders)
            if den == 0:
                values.append(np.nan)
                continue
            lures = [sum(wi[i] * (t[i][k] == LURE[i]) for t in orders.values() for i in stable) for k in (1, 2)]
            values.append((lures[1] - lures[0]) / den)
        reps.append(np.mean(values))
    reps = np.array(reps)
    reps = reps[~np.isnan(reps)]
    ci = report["summary"]["metrics"]["option_order.stable.mean.delta.LR"]["ci"]
    assert ci == pytest.approx([np.percentile(reps, 2.5), np.percentile(reps, 97.5)])
    groups = report["summary"]["metrics"]["dependency_groups.option_order.stable.mean.delta.LR"]["ci"]
    assert groups is not None and report["summary"]["metrics"]["bootstrap.units.option_order.sample.dependency_groups"]["estimate"] == 3


@pytest.mark.parametrize(
    "row, message",
    [
        ({"option_order": "ABCC"}, "unknown option order 'ABCC'"),
        ({"option_order": "BCDA", "prompt": "cf"}, "the option-order check uses the original prompt"),
        ({"option_order": "BCDA", "condition": "G+S"}, "asks none, S and F"),
        ({"prompt": "scope", "condition": "G+S"}, "a scope judgment is about one context"),
        ({"prompt": "scope", "condition": "S", "id": "c1"}, "condition-supplement item"),
    ],
)
def test_rows_with_an_unknown_or_inconsistent_order_are_reported_by_line(release, tmp_path, row, message):
    bad = json.dumps({"model": "m1", "id": "q1", "condition": "S", "response": "A", **row})
    lines = order_lines() + [bad]
    report = score(release, tmp_path, lines)
    problems = report["predictions"]["problems"]
    assert any(p["line"] == len(lines) and message in p["message"] for p in problems), problems
    assert report["predictions"]["excluded"] == 1


def test_missing_orders_are_reported_not_dropped(release, tmp_path):
    lines = [line for line in order_lines() if not ('"q2"' in line and '"BCDA"' in line and '"none"' in line)]
    report = score(release, tmp_path, lines)
    messages = [p["message"] for p in report["predictions"]["problems"]]
    assert any("option order BCDA" in m and "q2/none" in m and "scored as invalid" in m for m in messages), messages
    # q2 without its BCDA no-context answer leaves m1's B^stable
    assert est(report["models"]["m1"]["metrics"], "option_order.size.stable") == 2
    no_release_order = [line for line in order_lines() if '"ABCD"' not in line]
    report = score(release, tmp_path, no_release_order)
    assert any("no release order ABCD" in p["message"] for p in report["predictions"]["problems"])
    assert "option_order.original.LR.S" not in report["models"]["m1"]["metrics"]


def test_option_order_prompts(release):
    rows = list(prompts(release, {"option_orders": 3}))
    assert len(rows) == len(MAIN) * 3 * 3 and {r["split"] for r in rows} == {"main"}  # App. D.6: main items, none/S/F
    q1 = [r for r in rows if r["id"] == "q1"]
    assert [(r["option_order"], r["condition"]) for r in q1] == [(o, c) for o in rotations(3) for c in ("none", "S", "F")]
    text = next(r["text"] for r in q1 if r["option_order"] == "BCDA" and r["condition"] == "S")
    assert "A. two\nB. three\nC. four\nD. one\nE. Insufficient information" in text and text.endswith("Out-of-scope context of q1.")
    item = ReleaseItem.model_validate(json.loads(release.file_path("main.jsonl").read_text().splitlines()[0]))
    moved = shown_item(item, "CDAB")
    assert (moved.gold, moved.lure) == ("C", "D") and moved.options["C"] == item.options["A"]  # keys follow their texts
    ids = [r.id for r in requests(release, {"option_orders": 2}, PLAN)]
    assert ids[:3] == ["q1/none@ABCD/0", "q1/S@ABCD/0", "q1/F@ABCD/0"] and "q1/S@BCDA/0" in ids
    with pytest.raises(CtxRobustError, match="original prompt"):
        list(prompts(release, {"option_orders": 3, "prompt": "cf"}))
    scope_rows = list(prompts(release, {"prompt": "scope", "diagnostic_sample": True}))
    assert {r["id"] for r in scope_rows} == set(MAIN) and len(scope_rows) == 3 * len(MAIN)  # main items only; c1 left out
    assert len(list(prompts(release, {"prompt": "scope"}))) == 3 * (len(MAIN) + len(SUPPLEMENT))


def test_every_request_format_carries_the_order_back(release, tmp_path):
    """Request ids -> a runner's output -> native rows with the order; the same figures as native rows."""
    batch = tmp_path / "batch.jsonl"
    assert (
        cli_main(["prompts", str(release.path), "--option-orders", "3", "--format", "openai-batch", "--model", "m1", "-o", str(batch)]) == 0
    )
    answers = ORDER_ANSWERS["m1"]
    out = []
    for line in batch.read_text(encoding="utf-8").splitlines():
        custom_id = json.loads(line)["custom_id"]
        key = decode(custom_id)
        row = prediction(key, "m1", "x")  # the runner's and the converters' row maker
        letter = answers[row["option_order"]][row["id"]][("none", "S", "F").index(row["condition"])]
        body = {"model": "m1", "choices": [{"message": {"role": "assistant", "content": shown(letter, row["option_order"])}}]}
        out.append(json.dumps({"id": "b", "custom_id": custom_id, "response": {"status_code": 200, "request_id": "r", "body": body}}))
    out.append(json.dumps({"id": "b", "custom_id": "q1/S@XYZW/0", "response": {"status_code": 200, "request_id": "r", "body": body}}))
    output = tmp_path / "out.jsonl"
    output.write_text("\n".join(out) + "\n", encoding="utf-8")
    report_path = tmp_path / "report.json"
    assert cli_main(["score", str(release.path), str(output), "--replicates", "0", "--min-clusters", "0", "-o", str(report_path)]) == 0
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["predictions"]["input_format"] == "openai-batch"
    assert any(p["line"] == len(out) and "unknown option order 'XYZW'" in p["message"] for p in report["predictions"]["problems"])
    native = score(release, tmp_path, [line for line in order_lines() if '"m1"' in line])
    for name in ("option_order.original.LR.S", "option_order.stable.mean.LR.F", "option_order.kept"):
        assert est(report["models"]["m1"]["metrics"], name) == est(native["models"]["m1"]["metrics"], name)


def test_the_diagnostic_sample_is_forty_per_group_and_fixed():
    base = json.loads(json.dumps({"question": "q", "options": dict(zip("ABCDE", "12345")), "gold": "A", "lure": "B"}))
    contexts = {c: {"text": c} for c in "GSF"}
    items = [
        ReleaseItem.model_validate(
            {
                **base,
                "id": f"{g}-{k}",
                "contexts": contexts,
                "source": g.split("/")[0],
                "scope_dimension": g.split("/")[1],
                "cluster_id": str(k),
                "dependency_group_id": "d",
            }
        )
        for g in ("fred/time", "fred/location", "ambigdocs/entity")
        for k in range(50 if g != "ambigdocs/entity" else 30)
    ]
    chosen = diagnostic_ids(items)
    assert len(chosen) == 40 + 40 + 30  # App. D.4: 40 per source-scope group; a smaller group whole
    assert chosen == diagnostic_ids(list(reversed(items))) and chosen != diagnostic_ids(items, seed=1)


# ----------------------------------------------------------------------------------- scope judgments
def test_scope_labels_are_the_three_of_figure_5a():
    assert parse_label(" Not applicable\n") == (1, False)
    assert parse_label("not applicable.") == (-1, False) and parse_label("not applicable.", lenient=True) == (1, True)
    assert parse_label("Applicable because") == (-1, False)


def test_tables_19_and_20_by_hand(release, tmp_path):
    report = score(release, tmp_path, prediction_lines("m1", M1) + prediction_lines("m2", M2) + scope_lines())
    m1, m2, s = report["models"]["m1"]["metrics"], report["models"]["m2"]["metrics"], report["summary"]["metrics"]
    # Table 19, m1
    assert [est(m1, f"scope.F.count.{lab}") for lab in ("A", "N", "C", "invalid")] == [4, 1, 1, 0]
    assert [est(m1, f"scope.S.count.{lab}") for lab in ("A", "N", "C", "invalid")] == [1, 3, 1, 1]
    assert est(m1, "scope.G.count.A") == 6 and est(s, "scope.S.count.N") == 3 + 6 and s["scope.S.count.N"]["n"] == 12
    # §6.1: correct labels; Cannot determine and invalid count as incorrect
    assert (est(m1, "scope.G.correct"), est(m1, "scope.F.correct"), est(m1, "scope.S.correct")) == (1.0, pytest.approx(4 / 6), 0.5)
    assert est(s, "scope.S.correct") == pytest.approx((0.5 + 1.0) / 2) and est(s, "scope.F.correct") == pytest.approx((4 / 6 + 1) / 2)
    # Table 20, m1: H = B_m = {q1,q2,q3,q5,q6}; lures with S alone: q1, q3
    assert (est(m1, "scope.size.H"), est(m1, "scope.H.lure_count.all")) == (5, 2)
    assert est(m1, "scope.H.lure.all") == pytest.approx(2 / 5)
    assert (est(m1, "scope.H.lure_count.A"), est(m1, "scope.H.count.A"), est(m1, "scope.H.lure.A")) == (1, 1, 1.0)  # q1
    assert (est(m1, "scope.H.lure_count.N"), est(m1, "scope.H.count.N"), est(m1, "scope.H.lure.N")) == (1, 2, 0.5)  # q2, q3
    assert (est(m1, "scope.H.count.C"), est(m1, "scope.H.lure.C"), est(m1, "scope.H.count.invalid")) == (1, 0.0, 1)  # q5; q6
    # m2: B_m = {q6}, lure with S; judged N: the mean of N is defined, of A undefined (an empty subset)
    assert est(m2, "scope.H.lure.N") == 1.0 and est(m2, "scope.H.lure.A") is None
    assert (
        est(s, "scope.H.lure.N") == pytest.approx(0.75)
        and est(s, "scope.H.lure.A") is None
        and est(s, "scope.H.lure.all") == pytest.approx(0.7)
    )
    md = misleadqa_render.render_markdown(report)
    assert "| m1 | 2/5 | 1/1 | 1/2 | 0/1 |" in md and "| m2 | 1/1 | — | 1/1 | — |" in md and "| Mean (%) | 70.00 | — | 75.00 | — |" in md
    assert "| m1 | 6 | 6 | 0 | 0 | 0 | 4 | 1 | 1 | 0 | 1 | 3 | 1 | 1 |" in md
    assert "fewer than 10 items" in md and "m1 N (2)" in md and "m2 N (1)" in md
    assert report["units"]["scope.S.count.N"] == "count" and report["units"]["scope.H.lure.N"] == "fraction"


def test_scope_intervals_are_the_cluster_bootstrap_of_app_c2(release, tmp_path):
    report = score(release, tmp_path, prediction_lines("m1", M1) + prediction_lines("m2", M2) + scope_lines(), replicates=300)
    items = sorted(MAIN)
    clusters = sorted({(MAIN[i][0], MAIN[i][2]) for i in items})
    reps = []
    for w in cb.multiplicities(len(clusters), 300, cb.SEED):
        wi = {i: w[clusters.index((MAIN[i][0], MAIN[i][2]))] for i in items}
        values = [sum(wi[i] for i in items if SCOPE[m][i][1] == "Not applicable") / sum(wi.values()) for m in ("m1", "m2")]
        reps.append(np.mean(values))
    assert report["summary"]["metrics"]["scope.S.correct"]["ci"] == pytest.approx([np.percentile(reps, 2.5), np.percentile(reps, 97.5)])
    assert report["models"]["m1"]["metrics"]["scope.H.lure.N"]["ci"] is not None


def test_missing_scope_rows_are_reported_and_scored_invalid(release, tmp_path):
    lines = [line for line in scope_lines() if not ('"m1"' in line and '"q4"' in line and '"condition": "S"' in line)]
    report = score(release, tmp_path, prediction_lines("m1", M1) + lines)
    assert any("prompt scope" in p["message"] and "q4/S" in p["message"] for p in report["predictions"]["problems"])
    assert est(report["models"]["m1"]["metrics"], "scope.S.count.invalid") == 2 and est(
        report["models"]["m1"]["metrics"], "scope.S.correct"
    ) == pytest.approx(2 / 6)


# --------------------------------------------------------------------------------------- end to end
def readme_tables() -> list[str]:
    """The tables the scoring docs say `score` gives for misleadqa."""
    readme = (REPO / "docs" / "scoring.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if "ctxrobust score releases/misleadqa/1.0.0 predictions.jsonl --format md" in line)
    listed = line.split("# Tables ", 1)[1]
    out = []
    for part in re.findall(r"\d+(?:-\d+)?", listed):
        if "-" in part:
            lo, hi = map(int, part.split("-"))
            out += [str(k) for k in range(lo, hi + 1)]
        else:
            out.append(part)
    return out


def test_every_table_the_readme_lists_is_scored_end_to_end(release, tmp_path, capsys):
    listed = readme_tables()
    assert {"4", "16", "19", "20"} <= set(listed)
    lines = (
        prediction_lines("m1", M1)
        + prediction_lines("m1", M1_CF, "cf")
        + prediction_lines("m1", M1_SUPPLEMENT)
        + prediction_lines("m2", M2)
        + order_lines()
        + scope_lines()
    )
    predictions = tmp_path / "all.jsonl"
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    md_path, html_path = tmp_path / "report.md", tmp_path / "report.html"
    common = ["score", str(release.path), str(predictions), "--replicates", "50", "--min-clusters", "0", "--exclude-models", "m2"]
    assert cli_main(common + ["--format", "md", "-o", str(md_path)]) == 0
    assert cli_main(common + ["--format", "html", "-o", str(html_path)]) == 0
    md = md_path.read_text(encoding="utf-8")
    for number in listed:
        section = re.search(rf"^## Table {number}: .*?(?=^## )", md, flags=re.S | re.M)
        assert section, f"Table {number} missing from the report"
        assert re.search(r"^\|[^\n]*\| \d+(\.\d\d)?[ /]", section.group(0), flags=re.M), f"Table {number} has no figure"
    missing = md.split("## Not in this report")[1]
    assert "Table 4" not in missing and "Tables 19-20" not in missing and "Tables 21-23" not in missing
    assert "| Original | Original |" in md and "| All orders | Mean of orders |" in md
    page = html_path.read_text(encoding="utf-8")
    assert "Figure 3: lure rate with S alone" in page and "Figure 2" in page and page.count("data:image/png;base64,") >= 3
    assert "Table 4: option-order robustness" in page and "Table 19: scope labels" in page and "Table 20" in page


def test_a_report_without_those_rows_names_their_inputs(release, tmp_path):
    report = score(release, tmp_path, prediction_lines("m1", M1))
    md = misleadqa_render.render_markdown(report)
    missing = md.split("## Not in this report")[1]
    assert '"option_order"' in missing and "--option-orders 3" in missing and "Table 4" in missing
    assert '"prompt": "scope"' in missing and "Tables 19-20 and Figure 3" in missing
    assert "Not in this report" in misleadqa_render.render_html(report)
    only_scope = score(release, tmp_path, scope_lines())
    missing = misleadqa_render.render_markdown(only_scope).split("## Not in this report")[1]
    assert (
        "Table 20 and Figure 3" in missing
        and "original-prompt answers" in missing
        and "Table 19: scope labels" in misleadqa_render.render_markdown(only_scope)
    )


# --------------------------------------------------------------------- runners: the order and the prompt come back
def _answer(messages, n) -> str:
    """A deterministic answer: a letter for answering prompts, a label (or junk) for scope prompts."""
    text = messages[-1]["content"]
    digest = int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16)
    if text.startswith("Determine whether"):
        return ["Applicable", "Not applicable", "Cannot determine", "unsure"][digest % 4]
    return "ABCDE"[digest % 5] if digest % 7 else "A."


def _native(lines: list[dict], model: str) -> list[dict]:
    """The rows a user would write by hand from the request lines' fields."""
    rows = []
    for line in lines:
        row = {"model": model, "id": line["item"], "condition": line["condition"], "response": _answer(line["messages"], 0)}
        if line["meta"]["prompt"] != "original":
            row["prompt"] = line["meta"]["prompt"]
        if "option_order" in line["meta"]:
            row["option_order"] = line["meta"]["option_order"]
        rows.append(row)
    return rows


RUNNER_FLAGS = (["--option-orders", "3"], ["--prompt", "scope"])


@pytest.mark.parametrize("flags", RUNNER_FLAGS)
def test_run_batch_and_inspect_carry_the_order_and_the_prompt_back(release, tmp_path, flags, monkeypatch):
    from chat_server import ChatServer
    from test_run import FAST_RUN, batch_output, figures, inspect_sample, write_rows
    from test_run import score as score_cli

    from ctxrobust.evaluation.formats.convert import convert

    score_flags = ["--replicates", "40", "--min-clusters", "0"]
    requests_path = tmp_path / "requests.jsonl"
    assert cli_main(["prompts", str(release.path), *flags, "-o", str(requests_path)]) == 0
    lines = [json.loads(line) for line in requests_path.read_text(encoding="utf-8").splitlines()]
    originals = prediction_lines("m", M1)  # the main run, so Table 20 links to B_m
    native = tmp_path / "native.jsonl"
    native.write_text("\n".join(originals + [json.dumps(r) for r in _native(lines, "m")]) + "\n", encoding="utf-8")
    by_hand = score_cli(release.path, native, score_flags, tmp_path / "native.json")
    key = "option_order.stable.mean.LR.S" if "--option-orders" in flags else "scope.S.correct"
    assert key in by_hand["models"]["m"]["metrics"]

    def combined(path: Path) -> Path:
        """The runner's rows plus the main run, as one predictions file (the report reads one file)."""
        if path.suffix in (".json", ".eval"):
            return path
        out = path.with_suffix(".all.jsonl")
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        out.write_text("\n".join(originals + [json.dumps(r) for r in rows]) + "\n", encoding="utf-8")
        return out

    # ctxrobust run against a stand-in endpoint on 127.0.0.1
    monkeypatch.setenv("CTXROBUST_TEST_KEY", "k")
    with ChatServer(_answer) as server:
        argv = ["run", str(release.path), *flags, "--base-url", server.url, "--model", "m", "--api-key-env", "CTXROBUST_TEST_KEY"]
        assert cli_main(argv + ["-o", str(tmp_path / "run.jsonl"), *FAST_RUN]) == 0
    via_run = score_cli(release.path, combined(tmp_path / "run.jsonl"), score_flags, tmp_path / "run.json")
    assert figures(via_run) == figures(by_hand)
    # OpenAI Batch output: the order and the prompt come back through custom_id alone
    batch_in = tmp_path / "batch.jsonl"
    assert cli_main(["prompts", str(release.path), *flags, "--format", "openai-batch", "--model", "m", "-o", str(batch_in)]) == 0
    inputs = [json.loads(line) for line in batch_in.read_text(encoding="utf-8").splitlines()]
    texts = {line["id"]: _answer(line["messages"], 0) for line in lines}
    output = write_rows(tmp_path / "batch_out.jsonl", batch_output(inputs, texts, set()))
    converted = convert(output, "openai-batch", prediction, {})
    assert not converted.problems
    rows = converted.rows
    assert all(("option_order" in r) == ("--option-orders" in flags) for r in rows)
    assert all((r.get("prompt") == "scope") == ("--prompt" in flags) for r in rows)
    assert sorted(json.dumps(r, sort_keys=True) for r in rows) == sorted(json.dumps(r, sort_keys=True) for r in _native(lines, "m"))
    # Inspect log: sample ids are the request ids
    samples = [inspect_sample(line, texts[line["id"]], "m") for line in lines]
    header = {
        "version": 2,
        "status": "success",
        "eval": {
            "run_id": "r",
            "task": "t",
            "task_id": "t",
            "created": "2026-01-01T00:00:00+00:00",
            "model": "m",
            "dataset": {},
            "config": {},
        },
        "plan": {"name": "plan", "steps": []},
        "results": {"total_samples": len(lines), "completed_samples": len(lines), "scores": []},
        "stats": {},
    }
    log = tmp_path / "log.json"
    log.write_text(json.dumps({**header, "samples": samples}), encoding="utf-8")
    converted = convert(log, "inspect", prediction, {})
    assert not converted.problems and sorted(json.dumps(r, sort_keys=True) for r in converted.rows) == sorted(
        json.dumps(r, sort_keys=True) for r in _native(lines, "m")
    )


def test_exclude_models_gives_table4_and_table20_without_rows(release, tmp_path):
    lines = prediction_lines("m1", M1) + prediction_lines("m2", M2) + order_lines() + scope_lines()
    report = score(release, tmp_path, lines, exclude_models=["m2"])
    w = report["summary"]["without"]["metrics"]
    assert w["option_order.stable.mean.LR.S"]["estimate"] == pytest.approx(4 / 9) and w["option_order.kept"]["estimate"] == pytest.approx(
        3 / 5
    )
    assert w["scope.H.lure.N"]["estimate"] == 0.5 and w["scope.S.correct"]["estimate"] == 0.5  # m1 alone
    md = misleadqa_render.render_markdown(report)
    assert "| All orders (w/o m2) | Mean of orders | 44.44 | 88.89 | 44.44 |" in md


def test_release_order_answers_are_checked_against_the_main_run(release, tmp_path):
    """§6.3: under the original order the new responses match the main evaluation; invalid pairs do not agree."""
    report = score(release, tmp_path, prediction_lines("m1", M1) + order_lines())
    # m1's ABCD answers against M1 (none, S, F) on q1..q6: q1 A,B,B = A,B,B; q2 B,B,C = B,B,C; q3 C,D,D = C,D,D;
    # q4 E,A,A = E,A,A; q5 A,E,C = A,E,C; q6 B,B,D vs B,C,B: S and F differ -> 16 of 18
    figure = report["models"]["m1"]["metrics"]["option_order.main_agreement"]
    assert figure["estimate"] == pytest.approx(16 / 18) and figure["n"] == 18
    changed = {**M1, "q1": ["zz"] + M1["q1"][1:]}
    answers = {"m1": {**ORDER_ANSWERS["m1"], "ABCD": {**ORDER_ANSWERS["m1"]["ABCD"], "q1": "?BB"}}}
    report = score(release, tmp_path, prediction_lines("m1", changed) + order_lines(answers))
    figure = report["models"]["m1"]["metrics"]["option_order.main_agreement"]
    assert figure["estimate"] == pytest.approx(15 / 17) and figure["n"] == 17  # q1/none invalid in both: left out
    assert "option_order.main_agreement" not in score(release, tmp_path, order_lines())["models"]["m1"]["metrics"]
    assert "equal the main run's on" in misleadqa_render.render_markdown(report)
