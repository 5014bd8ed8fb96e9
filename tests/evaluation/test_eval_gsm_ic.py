"""GSM-IC scoring: hand-computed figures on a miniature release, identities on random predictions,
self-consistency voting, bad lines, determinism, and the Markdown / HTML renderings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction as F
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from pydantic import ValidationError

from ctxrobust.build import write_sums
from ctxrobust.canonical import dumps, dumps_pretty, write_jsonl
from ctxrobust.cli import main
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.gsm_ic import accuracy
from ctxrobust.evaluation.gsm_ic.render import render_html, render_markdown
from ctxrobust.evaluation.gsm_ic.scorer import GsmIcPrediction, score
from ctxrobust.release import Release
from ctxrobust.schemas import load_schema

# ------------------------------------------------------------------ a miniature release, written here

BASES = [("b1", "12", 2), ("b2", "1250", 2), ("b3", "7.5", 3)]  # id, answer, n_steps
# id, base, topic, role, number
VARIANTS = [
    ("v11", "b1", "in_topic", "overlapped", "in_range"),
    ("v12", "b1", "off_topic", "nonoverlapped", "out_range"),
    ("v13", "b1", "in_topic", "nonoverlapped", "in_range"),
    ("v21", "b2", "off_topic", "overlapped", "out_range"),
    ("v22", "b2", "in_topic", "overlapped", "in_range"),
    ("v31", "b3", "in_topic", "nonoverlapped", "out_range"),
    ("v32", "b3", "off_topic", "overlapped", "in_range"),
    ("v33", "b3", "off_topic", "nonoverlapped", "in_range"),
    ("v34", "b3", "in_topic", "overlapped", "out_range"),
]
SUBSET = ["v11", "v21", "v22", "v31", "v32"]


def write_release(folder: Path, bases, variants, subset=None) -> Release:
    """bases: (id, answer, n_steps); variants: (id, base_id, topic, role, number)."""
    folder.mkdir(parents=True, exist_ok=True)
    by_id = {b[0]: b for b in bases}
    write_jsonl(
        folder / "base.jsonl",
        [{"id": i, "question": f"Problem {i}. How many?", "answer": a, "n_steps": s, "solution": "..."} for i, a, s in bases],
    )
    write_jsonl(
        folder / "variants.jsonl",
        [
            {
                "id": v,
                "base_id": b,
                "original_question": f"Problem {b}. How many?",
                "new_question": f"Problem {b}. Sentence {v}. How many?",
                "answer": by_id[b][1],
                "n_steps": by_id[b][2],
                "role": "Ada",
                "number": 3,
                "sentence_template": "{role} has {number} pens.",
                "role_label": r,
                "number_label": n,
                "sentence_label": t,
                "topic": "pens",
                "sentence": f"Sentence {v}.",
                "insert_offset": 0,
                "edits": [],
            }
            for v, b, t, r, n in variants
        ],
    )
    if subset is not None:
        base_of = {v[0]: v[1] for v in variants}
        write_jsonl(folder / "gsm-ic-4k.jsonl", [{"id": v, "base_id": base_of[v]} for v in subset])
    (folder / "manifest.json").write_text(
        dumps_pretty({"dataset": "gsm-ic", "version": "0.0.1", "config": {"seed": 0}, "files": []}), encoding="utf-8"
    )
    write_sums(folder)  # frozen: the command line scores intact releases only
    return Release(folder)


def write_predictions(path: Path, rows) -> Path:
    path.write_text("".join((r if isinstance(r, str) else dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


# alpha: greedy, every base problem and every variant
ALPHA = [
    {"model": "alpha", "id": "b1", "response": "So she has 5 + 7 = 12. The answer is 12."},  # right
    {"model": "alpha", "id": "b2", "answer": "$1,250"},  # right
    {"model": "alpha", "id": "b3", "response": "The answer is 7."},  # wrong (7.5)
    {"model": "alpha", "id": "v11", "response": "#### 12"},  # right
    {"model": "alpha", "id": "v12", "response": "\\boxed{12}"},  # right
    {"model": "alpha", "id": "v13", "answer": 12},  # right
    {"model": "alpha", "id": "v21", "response": "The answer is 1,250."},  # right
    {"model": "alpha", "id": "v22", "response": "The answer is 1200."},  # wrong
    {"model": "alpha", "id": "v31", "answer": 7.5},  # right
    {"model": "alpha", "id": "v32", "answer": "15/2"},  # right
    {"model": "alpha", "id": "v33", "response": "I cannot tell."},  # no number: wrong, invalid
    {"model": "alpha", "id": "v34", "response": "The answer is $7.50."},  # right
]


def _samples(model, item, answers):
    return [{"model": model, "id": item, "answer": a, "sample": k} for k, a in enumerate(answers)]


# beta: self-consistency on GSM-IC-4K only; no ties decide a vote here
BETA = (
    _samples("beta", "b1", ["12", "12", "5"])  # 12: right
    + _samples("beta", "b2", ["1250", "no idea", "unclear"])  # answers without a number do not vote: 1250, right
    + _samples("beta", "b3", ["7", "7", "7.5"])  # 7: wrong
    + _samples("beta", "v11", ["12"])  # right
    + _samples("beta", "v21", ["1250", "1250", "3"])  # right
    + _samples("beta", "v22", ["1200", "1250", "1200"])  # 1200: wrong; a correct sample exists
    + _samples("beta", "v31", ["8", "8", "9"])  # wrong
    + _samples("beta", "v32", ["none", None])  # no answer: wrong, invalid
)


@pytest.fixture()
def mini(tmp_path) -> Release:
    return write_release(tmp_path / "release", BASES, VARIANTS, SUBSET)


@pytest.fixture()
def mini_report(mini, tmp_path) -> dict:
    predictions = write_predictions(tmp_path / "predictions.jsonl", ALPHA + BETA)
    return score(mini, predictions, {"replicates": 200})


def _estimates(report, model):
    return {name: m["estimate"] for name, m in report["models"][model]["metrics"].items()}


def test_alpha_figures_worked_by_hand(mini_report):
    got = _estimates(mini_report, "alpha")
    # all 9 variants: b1 3/3 right, b2 1/2, b3 3/4 -> 7/9; only b1 has every variant right -> 1/3
    base = F(2, 3)  # b1, b2 right; b3 wrong
    expected = {
        "accuracy.base": base,
        "micro": F(7, 9),
        "macro": F(1, 3),
        "micro.2step": F(4, 5),
        "micro.multistep": F(3, 4),  # b1+b2: 4 of 5; b3: 3 of 4
        "macro.2step": F(1, 2),
        "macro.multistep": F(0, 1),
        "normalised.micro": F(7, 9) / base,
        "normalised.macro": F(1, 3) / base,
        # topic in: v11 v13 v22x v31 v34 -> 4/5; off: v12 v21 v32 v33x -> 3/4
        "micro.topic=in": F(4, 5),
        "micro.topic=off": F(3, 4),
        # role overlapped: v11 v21 v22x v32 v34 -> 4/5; nonoverlapped: v12 v13 v31 v33x -> 3/4
        "micro.role=overlapped": F(4, 5),
        "micro.role=nonoverlapped": F(3, 4),
        # number in: v11 v13 v22x v32 v33x -> 3/5; out: v12 v21 v31 v34 -> 4/4
        "micro.number=in_range": F(3, 5),
        "micro.number=out_range": F(1),
        # macro by factor: a base problem counts if all its variants at that level are right
        "macro.topic=in": F(2, 3),  # b1 yes, b2 no (v22), b3 yes
        "macro.topic=off": F(2, 3),  # b1 yes, b2 yes, b3 no (v33)
        "macro.role=overlapped": F(2, 3),  # b1 yes, b2 no, b3 yes
        "macro.role=nonoverlapped": F(1, 2),  # b1 yes, b3 no; b2 has none
        "macro.number=in_range": F(1, 3),  # b1 yes, b2 no, b3 no
        "macro.number=out_range": F(1),
        "invalid": F(1, 9),
        # GSM-IC-4K: v11 v21 v22x v31 v32
        "4k.micro": F(4, 5),
        "4k.macro": F(2, 3),
        "4k.micro.2step": F(2, 3),
        "4k.micro.multistep": F(1),
        "4k.macro.2step": F(1, 2),
        "4k.macro.multistep": F(1),
        "4k.normalised.micro": F(4, 5) / base,
        "4k.normalised.macro": F(2, 3) / base,
        "4k.micro.topic=in": F(2, 3),
        "4k.micro.topic=off": F(1),
        "4k.micro.role=overlapped": F(3, 4),
        "4k.micro.role=nonoverlapped": F(1),
        "4k.micro.number=in_range": F(2, 3),
        "4k.micro.number=out_range": F(1),
        "4k.macro.topic=in": F(2, 3),
        "4k.macro.topic=off": F(1),
        "4k.macro.role=overlapped": F(2, 3),
        "4k.macro.role=nonoverlapped": F(1),
        "4k.macro.number=in_range": F(2, 3),
        "4k.macro.number=out_range": F(1),
        "4k.invalid": F(0),
    }
    assert set(got) == set(expected)
    for name, value in expected.items():
        assert got[name] == pytest.approx(float(value), abs=1e-12), name
    metrics = mini_report["models"]["alpha"]["metrics"]
    assert metrics["micro"]["n"] == 9 and metrics["macro"]["n"] == 3 and metrics["4k.micro"]["n"] == 5
    assert metrics["macro.role=nonoverlapped"]["n"] == 2 and metrics["accuracy.base"]["n"] == 3


def test_beta_self_consistency_worked_by_hand(mini_report):
    got = _estimates(mini_report, "beta")
    base = F(2, 3)
    expected = {
        "accuracy.base": base,
        "4k.micro": F(2, 5),
        "4k.macro": F(1, 3),  # v11, v21 right; only b1 fully right
        "4k.micro.2step": F(2, 3),
        "4k.micro.multistep": F(0),
        "4k.macro.2step": F(1, 2),
        "4k.macro.multistep": F(0),
        "4k.normalised.micro": F(2, 5) / base,
        "4k.normalised.macro": F(1, 3) / base,
        "4k.sc.recall": F(3, 5),  # v11, v21, v22 have a correct sample
        "4k.invalid": F(1, 5),  # v32
        "4k.micro.topic=in": F(1, 3),
        "4k.micro.topic=off": F(1, 2),  # in: v11 v22x v31x; off: v21 v32x
        "4k.macro.topic=in": F(1, 3),
        "4k.macro.topic=off": F(1, 2),  # in: b1 only; off: b2 yes, b3 no
    }
    for name, value in expected.items():
        assert got[name] == pytest.approx(float(value), abs=1e-12), name
    # scored on GSM-IC-4K only: no unprefixed variant metric
    assert "micro" not in got and "macro" not in got


def test_summary_is_the_mean_over_models(mini_report):
    summary = mini_report["summary"]["metrics"]
    assert summary["4k.micro"]["estimate"] == pytest.approx((0.8 + 0.4) / 2)
    assert summary["accuracy.base"]["estimate"] == pytest.approx(2 / 3)
    assert summary["micro"]["n"] == 1  # only alpha has full-set metrics


def test_report_shape_and_intervals(mini_report, mini):
    assert set(mini_report) == {"dataset", "release", "predictions", "parameters", "models", "summary", "units", "coverage"}
    assert mini_report["dataset"] == "gsm-ic"
    assert mini_report["release"] == {"version": "0.0.1", "manifest_sha256": mini.manifest_sha256()}
    block = mini_report["predictions"]
    assert set(block) == {"path", "sha256", "rows", "excluded", "problems"}
    assert block["rows"] == len(ALPHA) + len(BETA) and block["excluded"] == 0 and block["problems"] == []
    for model in mini_report["models"].values():
        for name, m in model["metrics"].items():
            assert set(m) == {"estimate", "ci", "n"}
            if not name.startswith(("normalised", "4k.normalised")):
                assert 0.0 <= m["estimate"] <= 1.0, name
            lo, hi = m["ci"]
            assert lo <= hi
    # a fully-right metric has the degenerate interval
    assert mini_report["models"]["alpha"]["metrics"]["micro.number=out_range"]["ci"] == [1.0, 1.0]


def test_parameters_record_seed_replicates_and_variant_counts(mini_report):
    params = mini_report["parameters"]
    assert (params["seed"], params["replicates"]) == (0, 200)
    assert params["interval"]["level"] == 0.95 and params["interval"]["resampled"] == "base problems"
    # all variants: b1 3, b2 2, b3 4; GSM-IC-4K: b1 1 (v11), b2 2 (v21 v22), b3 2 (v31 v32)
    assert params["scopes"] == {
        "all": {
            "metric_prefix": "",
            "variants": 9,
            "base_problems": 3,
            "variants_per_base": [2, 4],
            "macro_at_most_micro_guaranteed": False,
        },
        "4k": {
            "metric_prefix": "4k.",
            "variants": 5,
            "base_problems": 3,
            "variants_per_base": [1, 2],
            "macro_at_most_micro_guaranteed": False,
        },
    }


def _percentile(values, p):
    """Linear interpolation between order statistics (numpy's default), written out."""
    ordered = sorted(values)
    h = (len(ordered) - 1) * p
    low = int(h)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (h - low) * (ordered[high] - ordered[low]))


def test_bootstrap_intervals_worked_by_hand_with_an_undefined_replicate(mini, tmp_path):
    # seed 1, 8 replicates: each replicate draws 3 base problems (0 = b1, 1 = b2, 2 = b3) with replacement
    draws = [[1, 1, 2], [2, 0, 0], [2, 2, 0], [0, 2, 1], [0, 2, 0], [1, 1, 1], [0, 0, 2], [2, 2, 1]]
    assert np.random.default_rng(1).integers(0, 3, size=(8, 3)).tolist() == draws  # the documented draw rule
    report = score(mini, write_predictions(tmp_path / "p.jsonl", ALPHA), {"seed": 1, "replicates": 8})
    metrics = report["models"]["alpha"]["metrics"]
    # alpha per base problem (right, counted): micro (3, 3) (1, 2) (3, 4); base problems (1, 1) (1, 1) (0, 1);
    # role=nonoverlapped macro: b1 solved (v12 v13), b2 has no such variant, b3 not solved (v33 wrong)
    micro = {0: (3, 3), 1: (1, 2), 2: (3, 4)}
    base = {0: (1, 1), 1: (1, 1), 2: (0, 1)}
    nonoverlapped = {0: (1, 1), 1: (0, 0), 2: (0, 1)}

    def replicate(counts, drawn):
        num, den = sum(counts[b][0] for b in drawn), sum(counts[b][1] for b in drawn)
        return F(num, den) if den else None

    micro_reps = [replicate(micro, d) for d in draws]
    assert micro_reps[:2] == [F(5, 8), F(9, 10)]  # b2 b2 b3: (1+1+3)/(2+2+4); b3 b1 b1: (3+3+3)/(4+3+3)
    nonoverlapped_reps = [replicate(nonoverlapped, d) for d in draws]
    assert nonoverlapped_reps[5] is None  # b2 three times: no nonoverlapped variant drawn, undefined
    normalised = [None if replicate(base, d) in (None, 0) else replicate(micro, d) / replicate(base, d) for d in draws]
    for name, reps in (("micro", micro_reps), ("macro.role=nonoverlapped", nonoverlapped_reps), ("normalised.micro", normalised)):
        defined = [r for r in reps if r is not None]
        assert metrics[name]["ci"] == pytest.approx([_percentile(defined, 0.025), _percentile(defined, 0.975)], abs=1e-12), name
    # written out: b3 | b1 b1 b3 | b3 b3 b1 | b1 b3 | b1 b3 b1 | (none) | b1 b1 b3 | b3 b3
    assert nonoverlapped_reps == [0, F(2, 3), F(1, 3), F(1, 2), F(2, 3), None, F(2, 3), 0]
    # 7 defined replicates: 2.5% at position 0.15 -> 0; 97.5% at position 5.85 -> between 2/3 and 2/3
    assert metrics["macro.role=nonoverlapped"]["ci"] == pytest.approx([0.0, 2 / 3], abs=1e-12)


def test_no_replicates_gives_no_intervals(mini, tmp_path):
    predictions = write_predictions(tmp_path / "p.jsonl", ALPHA)
    report = score(mini, predictions, {"replicates": 0})
    assert all(m["ci"] is None for m in report["models"]["alpha"]["metrics"].values())


def test_same_inputs_and_seed_give_identical_bytes_whatever_the_row_order(mini, tmp_path):
    rows = ALPHA + BETA
    first = score(mini, write_predictions(tmp_path / "a.jsonl", rows), {"seed": 7, "replicates": 300})
    again = score(mini, write_predictions(tmp_path / "a.jsonl", rows), {"seed": 7, "replicates": 300})
    assert dumps(first) == dumps(again)
    shuffled = [rows[i] for i in np.random.default_rng(3).permutation(len(rows))]
    other = score(mini, write_predictions(tmp_path / "b.jsonl", shuffled), {"seed": 7, "replicates": 300})
    assert dumps(other["models"]) == dumps(first["models"])
    few = [score(mini, write_predictions(tmp_path / "a.jsonl", rows), {"seed": seed, "replicates": 10})["models"] for seed in (7, 8)]
    assert dumps(few[0]) != dumps(few[1])  # intervals move with the seed


def test_report_bytes_do_not_depend_on_the_hash_seed(mini, tmp_path):
    path = write_predictions(tmp_path / "p.jsonl", BETA + ALPHA)
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"report-{hash_seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-m", "ctxrobust.cli", "score", str(mini.path), str(path), "-o", str(out), "--replicates", "200"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_a_malformed_release_is_one_clear_error(tmp_path):
    release = write_release(tmp_path / "r", BASES, [("v11", "b1", "in_topic", "overlapped", "sideways")])
    with pytest.raises(CtxRobustError, match=r"variants.jsonl: item 'v11': number_label 'sideways' is not one of in_range, out_range"):
        score(release, write_predictions(tmp_path / "p.jsonl", ALPHA[:1]), {})
    release = write_release(tmp_path / "s", BASES, [("v11", "b1", "in_topic", "overlapped", "in_range")])
    variants = release.path / "variants.jsonl"
    variants.write_text(variants.read_text().replace('"base_id":"b1"', '"base_id":"b9"'))
    with pytest.raises(CtxRobustError, match=r"item 'v11': base_id 'b9' is not a base problem"):
        score(release, write_predictions(tmp_path / "p.jsonl", ALPHA[:1]), {})


# ------------------------------------------------------------------ majority vote


def test_majority_vote_takes_the_most_frequent_answer():
    group = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    answer = np.array([5, 5, 3, -1, 4, -1, -1, -1])
    got = accuracy.majority_vote(group, answer, 4, np.random.default_rng(0))
    assert got.tolist() == [5, 4, -1, -1]  # "no answer" never outvotes an answer; group 3 has no rows


def test_majority_vote_breaks_ties_uniformly_and_reproducibly():
    n = 4000
    group = np.repeat(np.arange(n), 3)
    answer = np.tile([1, 2, 3], n)  # a three-way tie in every group
    first = accuracy.majority_vote(group, answer, n, np.random.default_rng(11))
    assert np.array_equal(first, accuracy.majority_vote(group, answer, n, np.random.default_rng(11)))
    shares = np.bincount(first, minlength=4)[1:] / n
    assert np.all(np.abs(shares - 1 / 3) < 0.03)
    # a tie only among the top answers: 7 (2 votes) and 8 (2 votes) tie, 9 (1 vote) never wins
    group = np.repeat(np.arange(n), 5)
    answer = np.tile([7, 8, 7, 8, 9], n)
    picked = accuracy.majority_vote(group, answer, n, np.random.default_rng(2))
    assert set(picked.tolist()) == {7, 8}


def test_tied_self_consistency_vote_is_seeded(mini, tmp_path):
    # b1 samples tie between the right (12) and a wrong answer (11): the seed decides, reproducibly
    rows = [r for r in ALPHA if r["id"] != "b1"] + _samples("alpha", "b1", ["12", "11"])
    path = write_predictions(tmp_path / "tie.jsonl", rows)

    def base_accuracy(seed):
        return score(mini, path, {"seed": seed, "replicates": 0})["models"]["alpha"]["metrics"]["accuracy.base"]["estimate"]

    outcomes = {seed: round(base_accuracy(seed), 9) for seed in range(30)}
    assert set(outcomes.values()) == {round(1 / 3, 9), round(2 / 3, 9)}  # both tied answers win for some seeds
    assert all(round(base_accuracy(seed), 9) == outcomes[seed] for seed in range(5))
    # a model's tie-breaks come from its own stream: other models in the file (sorting before it, with
    # ties of their own) change nothing
    others = _samples("aardvark", "b1", ["12", "11"]) + _samples("aardvark", "b2", ["1", "2", "3"])
    crowded = write_predictions(tmp_path / "crowded.jsonl", others + rows)
    for seed in range(8):
        report = score(mini, crowded, {"seed": seed, "replicates": 0})
        assert round(report["models"]["alpha"]["metrics"]["accuracy.base"]["estimate"], 9) == outcomes[seed]


# ------------------------------------------------------------------ identities on random predictions


def _random_case(tmp_path, rng, balanced: bool, n_base=12):
    """A random release and predictions: m1, m2 answer once per item (their correctness is returned,
    per variant), m3 gives 1-3 samples per item."""
    bases = [(f"b{k:02d}", str(int(rng.integers(1, 50))), int(rng.choice([2, 3, 4]))) for k in range(n_base)]
    variants = []
    for b, _, _ in bases:
        for j in range(6 if balanced else int(rng.integers(1, 9))):
            variants.append(
                (
                    f"{b}-v{j}",
                    b,
                    str(rng.choice(["in_topic", "off_topic"])),
                    str(rng.choice(["overlapped", "nonoverlapped"])),
                    str(rng.choice(["in_range", "out_range"])),
                )
            )
    subset = sorted(v[0] for v in variants if rng.random() < 0.5) or [variants[0][0]]
    release = write_release(tmp_path / f"rel-{balanced}", bases, variants, subset)
    gold = {b: a for b, a, _ in bases}
    rows, truth = [], {}
    for model, p_right, samples in (("m1", 0.9, 1), ("m2", 0.6, 1), ("m3", 0.3, 3)):
        truth[model] = {}
        for b, a, _ in bases:
            rows.append({"model": model, "id": b, "answer": a if rng.random() < 0.8 else "0"})
        for v, b, *_ in variants:
            for k in range(int(rng.integers(1, samples + 1))):
                right = bool(rng.random() < p_right)
                truth[model][v] = right
                rows.append(
                    {"model": model, "id": v, "response": f"The answer is {gold[b] if right else int(rng.integers(50, 60))}.", "sample": k}
                )
    return release, write_predictions(tmp_path / f"pred-{balanced}.jsonl", rows), variants, truth


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_identities_on_random_predictions(tmp_path, seed):
    rng = np.random.default_rng(seed)
    release, path, variants, truth = _random_case(tmp_path, rng, balanced=False)
    report = score(release, path, {"seed": seed, "replicates": 100})
    for name, model in report["models"].items():
        m = {k: v["estimate"] for k, v in model["metrics"].items()}
        n = {k: v["n"] for k, v in model["metrics"].items()}
        for prefix in ("", "4k."):
            # per-factor micro is the weighted combination of its two levels; so are the step splits
            for a, b in (("topic=in", "topic=off"), ("role=overlapped", "role=nonoverlapped"), ("number=in_range", "number=out_range")):
                pa, pb = f"{prefix}micro.{a}", f"{prefix}micro.{b}"
                combined = sum((m[p] or 0.0) * n[p] for p in (pa, pb)) / (n[pa] + n[pb])
                assert combined == pytest.approx(m[prefix + "micro"]), (name, prefix, a)
                assert n[pa] + n[pb] == n[prefix + "micro"]
            two, more = f"{prefix}micro.2step", f"{prefix}micro.multistep"
            assert ((m[two] or 0) * n[two] + (m[more] or 0) * n[more]) / n[prefix + "micro"] == pytest.approx(m[prefix + "micro"])
            # normalised = accuracy / base accuracy
            assert m[prefix + "normalised.micro"] == pytest.approx(m[prefix + "micro"] / m["accuracy.base"])
            assert m[prefix + "normalised.macro"] == pytest.approx(m[prefix + "macro"] / m["accuracy.base"])
            for key in (prefix + "micro", prefix + "macro"):
                lo, hi = model["metrics"][key]["ci"]
                assert 0.0 <= lo <= hi <= 1.0
        if name == "m3":
            continue
        # single-answer models: micro and macro recomputed here from the rows' correctness
        per_base: dict[str, list[bool]] = {}
        for v, b, *_ in variants:
            per_base.setdefault(b, []).append(truth[name][v])
        assert m["micro"] == pytest.approx(sum(truth[name].values()) / len(variants))
        assert m["macro"] == pytest.approx(sum(all(r) for r in per_base.values()) / len(per_base))
        # macro counts a base problem only when its accuracy is 1: it never exceeds the mean per-base accuracy
        assert m["macro"] <= np.mean([np.mean(r) for r in per_base.values()]) + 1e-12


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_macro_at_most_micro_when_base_problems_have_equal_variant_counts(tmp_path, seed):
    rng = np.random.default_rng(seed)
    release, path, _, _ = _random_case(tmp_path, rng, balanced=True)
    report = score(release, path, {"seed": seed, "replicates": 0})
    assert report["parameters"]["scopes"]["all"]["variants_per_base"] == [6, 6]
    assert report["parameters"]["scopes"]["all"]["macro_at_most_micro_guaranteed"] is True
    assert "Every base problem has 6 variant(s) here, so macro <= micro." in render_markdown(report)
    for model in report["models"].values():
        m = {k: v["estimate"] for k, v in model["metrics"].items()}
        assert m["macro"] <= m["micro"] + 1e-12
        assert m["macro.2step"] is None or m["macro.2step"] <= m["micro.2step"] + 1e-12


def test_macro_can_exceed_micro_when_variant_counts_differ(tmp_path):
    # macro <= micro is not a law when base problems have different numbers of variants (GSM-IC-4K):
    # b1 has one variant, right; b2 has three variants, all wrong -> micro 1/4, macro 1/2
    release = write_release(
        tmp_path / "r",
        [("b1", "1", 2), ("b2", "2", 2)],
        [("b1-a", "b1", "in_topic", "overlapped", "in_range")] + [(f"b2-{k}", "b2", "off_topic", "overlapped", "in_range") for k in "abc"],
    )
    rows = [{"model": "m", "id": "b1", "answer": 1}, {"model": "m", "id": "b2", "answer": 2}, {"model": "m", "id": "b1-a", "answer": 1}]
    rows += [{"model": "m", "id": f"b2-{k}", "answer": 9} for k in "abc"]
    m = score(release, write_predictions(tmp_path / "p.jsonl", rows), {"replicates": 0})["models"]["m"]["metrics"]
    assert (m["micro"]["estimate"], m["macro"]["estimate"]) == (0.25, 0.5)


# ------------------------------------------------------------------ bad lines and --strict

BAD_LINES = [
    dumps({"model": "alpha", "id": "b1", "response": "The answer is 12."}),  # 1 fine
    '{"model": "alpha", "id": "b2", "answer": ',  # 2 not JSON
    dumps({"model": "alpha", "id": "b3", "response": 7}),  # 3 wrong type
    dumps({"model": "alpha", "id": "nope", "answer": 1}),  # 4 unknown id
    dumps({"model": "alpha", "id": "b1", "answer": 12}),  # 5 duplicate of line 1 (sample 0)
    dumps({"id": "v11", "answer": 12}),  # 6 missing field
    dumps({"model": "alpha", "id": "v12", "answer": 12, "extra": 1}),  # 7 unknown field
    dumps({"model": "alpha", "id": "v13", "answer": 12, "response": "12"}),  # 8 both answer and response
    dumps({"model": "alpha", "id": "v21", "answer": 12, "sample": -1}),  # 9 negative sample
    "",  # 10 blank: ignored
    dumps({"model": "alpha", "id": "v11", "answer": 12, "sample": 1}),  # 11 fine
]


def test_every_bad_line_is_reported_by_number(mini, tmp_path, capsys):
    path = write_predictions(tmp_path / "bad.jsonl", BAD_LINES)
    report = score(mini, path, {"replicates": 0})
    problems = report["predictions"]["problems"]
    by_line = {p["line"]: p["message"] for p in problems if p["line"] is not None}
    expected = {
        2: "not valid JSON",
        3: "field 'response': Input should be a valid string",
        4: "unknown id 'nope'",
        5: "duplicate row (same key as line 1)",
        6: "missing field 'model'",
        7: "unknown field 'extra'",
        8: "exactly one of 'response' (raw text) or 'answer'",
        9: "field 'sample': Input should be greater than or equal to 0",
    }
    assert sorted(by_line) == sorted(expected)
    for line, message in expected.items():
        assert message in by_line[line], line
    file_level = [p["message"] for p in problems if p["line"] is None]
    assert any("2 of 3 base problem(s)" in msg for msg in file_level)  # b2, b3 missing for alpha
    # only v11 (of GSM-IC-4K) answered: the model is scored on GSM-IC-4K, 4 of its 5 variants missing
    assert any("4 of 5 GSM-IC-4K variant(s) (v21, v22, v31, ...)" in msg for msg in file_level)
    assert report["predictions"]["rows"] == 10 and report["predictions"]["excluded"] == 8
    # missing answers stay in the denominators as wrong
    metrics = report["models"]["alpha"]["metrics"]
    assert metrics["accuracy.base"]["estimate"] == pytest.approx(1 / 3) and metrics["4k.micro"]["n"] == 5
    assert metrics["4k.micro"]["estimate"] == pytest.approx(1 / 5) and "micro" not in metrics
    err = capsys.readouterr().err
    assert f"{path}:2: not valid JSON" in err


def test_strict_cli_refuses_without_traceback(mini, tmp_path, capsys):
    path = write_predictions(tmp_path / "bad.jsonl", BAD_LINES)
    code = main(["score", str(mini.path), str(path), "--strict"])
    err = capsys.readouterr().err
    assert code != 0
    assert "Traceback" not in err and "--strict refuses" in err
    for line in (2, 3, 4, 5, 6, 7, 8, 9):
        assert f"{path}:{line}:" in err


def test_strict_cli_refuses_missing_pairs(mini, tmp_path, capsys):
    path = write_predictions(tmp_path / "partial.jsonl", ALPHA[:-1])
    assert main(["score", str(mini.path), str(path), "--strict"]) != 0
    assert "no prediction for 1 of 9 variant(s) (v34)" in capsys.readouterr().err
    assert main(["score", str(mini.path), str(write_predictions(tmp_path / "ok.jsonl", ALPHA)), "--strict", "--replicates", "10"]) == 0


def test_an_empty_file_is_a_problem(mini, tmp_path, capsys):
    path = write_predictions(tmp_path / "empty.jsonl", [])
    assert main(["score", str(mini.path), str(path), "--strict"]) != 0
    assert "no prediction rows" in capsys.readouterr().err


def test_cli_writes_json_markdown_and_html(mini, tmp_path):
    path = write_predictions(tmp_path / "p.jsonl", ALPHA + BETA)
    out = tmp_path / "report"
    assert main(["score", str(mini.path), str(path), "-o", f"{out}.json", "--replicates", "50", "--seed", "3"]) == 0
    report = json.loads(Path(f"{out}.json").read_text())
    assert report["models"]["alpha"]["metrics"]["micro"]["estimate"] == pytest.approx(7 / 9)
    assert main(["score", str(mini.path), str(path), "-o", f"{out}.md", "--format", "md", "--replicates", "50"]) == 0
    assert main(["score", str(mini.path), str(path), "-o", f"{out}.html", "--format", "html", "--replicates", "50"]) == 0
    assert Path(f"{out}.md").read_text().startswith("# GSM-IC evaluation")
    assert "<img" in Path(f"{out}.html").read_text()


# ------------------------------------------------------------------ renderings


def test_markdown_lays_out_tables_2_3_and_4(mini_report):
    text = render_markdown(mini_report)
    # Table 2: one column per model
    assert (
        "|  | alpha | beta |\n|---|---|---|\n| Accuracy | 66.7 | 66.7 |\n| 95% CI | [0.0, 100.0] | [0.0, 100.0] |\n| n base problems | 3 | 3 |"
        in text
    )
    assert (
        "| Model | Micro 2 Steps | Micro >2 Steps | Micro Overall [95% CI] | Micro Norm | Macro 2 Steps | Macro >2 Steps | Macro Overall [95% CI] | Macro Norm |"
        in text
    )
    # alpha on all variants, in percent: 80.0 75.0 77.8 116.7 | 50.0 0.0 33.3 50.0
    assert "| alpha | 80.0 | 75.0 | 77.8 [50.0, 100.0] | 116.7 | 50.0 | 0.0 | 33.3 [0.0, 100.0] | 50.0 |" in text
    assert (
        "| Model | Micro Topic In | Micro Topic Off | Micro Role Overlap Yes | Micro Role Overlap No | Micro Num. Range In | Micro Num. Range Out "
        "| Macro Topic In | Macro Topic Off | Macro Role Overlap Yes | Macro Role Overlap No | Macro Num. Range In | Macro Num. Range Out |"
    ) in text
    # alpha by factor on all variants: micro 80.0 75.0 80.0 75.0 60.0 100.0, macro 66.7 66.7 66.7 50.0 33.3 100.0
    assert "| alpha | 80.0 | 75.0 | 80.0 | 75.0 | 60.0 | 100.0 | 66.7 | 66.7 | 66.7 | 50.0 | 33.3 | 100.0 |" in text
    # beta on GSM-IC-4K: micro 66.7 0.0 40.0 60.0 | macro 50.0 0.0 33.3 50.0
    assert "| beta | 66.7 | 0.0 | 40.0 [0.0, 100.0] | 60.0 | 50.0 | 0.0 | 33.3 [0.0, 100.0] | 50.0 |" in text
    assert "SC recall" in text and "200 replicates, seed 0" in text
    # the mean row only where several models have figures: GSM-IC-4K, not the all-variants tables (alpha only)
    four_k, full = text.split("## GSM-IC, all variants")[0], text.split("## GSM-IC, all variants", 1)[1]
    assert "Mean over models" in four_k and "Mean over models" not in full
    assert "Base problems have 2 to 4 variants here, so macro <= micro is not guaranteed" in full
    assert "Base problems have 1 to 2 variants here" in four_k


def test_html_is_self_contained_with_plots(mini_report):
    page = render_html(mini_report)
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("data:image/png;base64,") == 3  # GSM-IC-4K, all variants and the intervals by model
    assert "<table>" in page and 'src="http' not in page
    assert render_html(mini_report) == page  # deterministic bytes


# ------------------------------------------------------------------ the published schema and the row model agree

SCHEMA_EXAMPLES = [
    ({"model": "m", "id": "x", "response": "The answer is 3."}, True),
    ({"model": "m", "id": "x", "answer": "3"}, True),
    ({"model": "m", "id": "x", "answer": 3}, True),
    ({"model": "m", "id": "x", "answer": 2.5, "sample": 4}, True),
    ({"model": "m", "id": "x", "answer": 2.5, "sample": 4.0}, True),  # JSON Schema: 4.0 is an integer
    ({"model": "m", "id": "x", "answer": None}, True),
    ({"model": "m", "id": "x", "response": "", "sample": 0}, True),
    ({"model": "m", "id": "x"}, False),
    ({"model": "m", "id": "x", "response": "3", "answer": 3}, False),
    ({"model": "m", "id": "x", "response": None}, False),
    ({"model": "m", "id": "x", "response": 3}, False),
    ({"model": "m", "id": "x", "answer": True}, False),
    ({"model": "m", "id": "x", "answer": [3]}, False),
    ({"model": "m", "id": "x", "answer": {"v": 3}}, False),
    ({"model": "m", "id": "x", "answer": 3, "sample": -1}, False),
    ({"model": "m", "id": "x", "answer": 3, "sample": 1.5}, False),
    ({"model": "m", "id": "x", "answer": 3, "sample": "1"}, False),
    ({"model": "m", "id": "x", "answer": 3, "sample": True}, False),
    ({"model": "", "id": "x", "answer": 3}, False),
    ({"model": "m", "id": "", "answer": 3}, False),
    ({"model": 3, "id": "x", "answer": 3}, False),
    ({"id": "x", "answer": 3}, False),
    ({"model": "m", "answer": 3}, False),
    ({"model": "m", "id": "x", "answer": 3, "extra": 1}, False),
    ([{"model": "m"}], False),
    ("text", False),
]


@pytest.mark.parametrize("row, valid", SCHEMA_EXAMPLES)
def test_schema_and_row_model_agree(row, valid):
    schema = load_schema("predictions.gsm-ic")
    jsonschema.Draft202012Validator.check_schema(schema)
    by_schema = jsonschema.Draft202012Validator(schema).is_valid(row)
    try:
        GsmIcPrediction.model_validate_json(json.dumps(row))
        by_model = True
    except ValidationError:
        by_model = False
    assert by_schema == by_model == valid
