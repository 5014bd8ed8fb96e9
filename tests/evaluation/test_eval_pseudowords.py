"""Scoring pseudowords predictions end to end: reading and checking rows, the report, its renderings,
the per-example export and the command line, on miniature releases written by the tests."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pyarrow.parquet as pq
import pytest
from paths import REPO

from ctxrobust.canonical import dumps, sha256_file, write_jsonl
from ctxrobust.cli import main as cli_main
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.predictions import PredictionsError
from ctxrobust.evaluation.pseudowords import render as pseudowords_render
from ctxrobust.evaluation.pseudowords import scorer as pseudowords
from ctxrobust.release import Release

SCHEMA = json.loads((REPO / "schemas" / "predictions.pseudowords.schema.json").read_text(encoding="utf-8"))
CHA = [f"CHA-010000-{j:03d}" for j in range(10)]
TOK = [f"TOK-000100-{j:03d}" for j in range(2)]
SHORT = [f"CHA-000010-{j:03d}" for j in range(2)]
FAST = {"replicates": 200, "null_experiments": 200, "splits": 20}


def make_release(folder: Path) -> Release:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "id": c,
            "kind": c[:3],
            "target_tokens": int(c[4:10]),
            "n_tokens": int(c[4:10]),
            "n_chars": 9,
            "tokenizer": "o200k_base",
            "text": "blorf quen",
        }
        for c in CHA + TOK + SHORT
    ]
    write_jsonl(folder / "contexts.jsonl", rows)
    manifest = {"dataset": "pseudowords", "version": "9.9.9", "config": {"seed": 0}, "files": []}
    (folder / "manifest.json").write_text(dumps(manifest) + "\n", encoding="utf-8")
    sums = "".join(f"{sha256_file(folder / name)}  {name}\n" for name in ("contexts.jsonl", "manifest.json"))
    (folder / "SHA256SUMS").write_text(sums, encoding="utf-8")  # frozen: the command line scores intact releases only
    return Release(folder)


def write_rows(path: Path, rows: list) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write((row if isinstance(row, str) else dumps(row)) + "\n")
    return path


def binary_rows(model: str, p0: np.ndarray, pc: np.ndarray, rng: np.random.Generator, contexts=CHA, base_trials=20, per_context=2):
    rows = []
    for q, (a, b) in enumerate(zip(p0, pc)):
        qid = f"q{q:03d}"
        rows += [{"model": model, "id": qid, "context": None, "trial": t, "correct": int(rng.random() < a)} for t in range(base_trials)]
        rows += [
            {"model": model, "id": qid, "context": c, "trial": t, "correct": int(rng.random() < b)}
            for c in contexts
            for t in range(per_context)
        ]
    return rows


@pytest.fixture
def release(tmp_path) -> Release:
    return make_release(tmp_path / "release")


# --- row checks ----------------------------------------------------------------------------------

ROWS = [
    ({"model": "m", "id": "q1", "context": None, "trial": 0, "correct": 1}, True),
    ({"model": "m", "id": "q1", "context": "CHA-010000-000", "trial": 3, "correct": 0}, True),
    ({"model": "m", "id": "q1", "context": None, "score": 0.25}, True),
    ({"model": "m", "id": "q1", "context": None, "trial": 1, "score": 1}, True),
    ({"model": "m", "id": "q1", "context": None, "trial": 0, "correct": 1.0}, True),
    ({"model": "m", "id": "q1", "context": None, "trial": 0, "correct": 2}, False),
    ({"model": "m", "id": "q1", "context": None, "trial": 0, "correct": True}, False),
    ({"model": "m", "id": "q1", "context": None, "trial": 0, "correct": "1"}, False),
    ({"model": "m", "id": "q1", "context": None, "trial": 0.5, "correct": 1}, False),
    ({"model": "m", "id": "q1", "context": None, "trial": -1, "correct": 1}, False),
    ({"model": "m", "id": "q1", "context": None, "correct": 1}, False),
    ({"model": "m", "id": "q1", "context": None, "trial": 0}, False),
    ({"model": "m", "id": "q1", "context": None, "trial": 0, "correct": 1, "score": 0.5}, False),
    ({"model": "m", "id": "q1", "context": None, "score": 1.5}, False),
    ({"model": "m", "id": "q1", "context": None, "score": "0.5"}, False),
    ({"model": "m", "id": 7, "context": None, "score": 0.5}, False),
    ({"model": "", "id": "q1", "context": None, "score": 0.5}, False),
    ({"model": "m", "id": "q1", "score": 0.5}, False),
    ({"model": "m", "id": "q1", "context": 3, "score": 0.5}, False),
    ({"model": "m", "id": "q1", "context": None, "score": 0.5, "extra": 1}, False),
]


@pytest.mark.parametrize("row, valid", ROWS)
def test_row_model_and_json_schema_agree(row, valid):
    schema_ok = jsonschema.Draft202012Validator(SCHEMA).is_valid(row)
    try:
        parsed = pseudowords.PredictionRow.model_validate_json(json.dumps(row))
        model_ok = pseudowords.row_shape_problem(parsed) is None
    except Exception:
        model_ok = False
    assert schema_ok == model_ok == valid


def test_schema_is_draft_2020_12_and_lists_the_model_fields():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"].endswith("2020-12/schema")
    assert set(SCHEMA["properties"]) == set(pseudowords.PredictionRow.model_fields)
    required = {name for name, f in pseudowords.PredictionRow.model_fields.items() if f.is_required()}
    assert set(SCHEMA["required"]) == required


def test_bad_rows_are_reported_by_line_and_left_out(release, tmp_path):
    good = [{"model": "a", "id": "q1", "context": None, "trial": t, "correct": 1} for t in range(2)]
    good += [{"model": "a", "id": "q1", "context": CHA[0], "trial": t, "correct": t} for t in range(2)]
    lines = good + [
        "{not json",  # 5
        {"model": "a", "id": "q1", "context": None, "trial": "x", "correct": 1},  # 6 wrong type
        {"model": "a", "id": "q1", "context": "CHA-999999-000", "trial": 0, "correct": 1},  # 7 unknown context
        {"model": "a", "id": "q1", "context": None, "trial": 0, "correct": 0},  # 8 duplicate of line 1
        {"model": "a", "id": "q1", "trial": 5, "correct": 1},  # 9 missing field
        {"model": "a", "id": "q1", "context": None, "score": 0.5},  # 10 mixes kinds
        {"model": "a", "id": "q1", "context": None, "correct": 1},  # 11 no trial
        {"model": "a", "id": "q2", "context": CHA[0], "trial": 0, "correct": 1},  # 12 q2: no baseline
        {"model": "a", "id": "q3", "context": None, "trial": 0, "correct": 1},  # 13 q3: no context rows
        {"model": "b", "id": "q1", "context": None, "trial": 0, "correct": 1},  # 14 model b: no context at all
        {"model": "a", "id": "q1", "context": "SQA-000020-010", "trial": 0, "correct": 1},  # 15 SQA index >= 10
        '{"model": "a", "id": "q1", "context": null, "trial": 9, "correct": NaN}',  # 16 not a finite number
    ]
    path = write_rows(tmp_path / "p.jsonl", lines)
    report = pseudowords.score(release, path, dict(FAST))
    problems = {p["line"]: p["message"] for p in report["predictions"]["problems"]}
    assert "not valid JSON" in problems[5]
    assert "'trial'" in problems[6]
    assert "unknown context 'CHA-999999-000'" in problems[7]
    assert "duplicate" in problems[8] and "line 1" in problems[8]
    assert "missing field 'context'" in problems[9]
    assert "mixes 'correct' and 'score'" in problems[10]
    assert "needs 'trial'" in problems[11]
    assert "unknown context 'SQA-000020-010'" in problems[15]
    assert "'correct'" in problems[16] and "finite number" in problems[16]
    whole = [p["message"] for p in report["predictions"]["problems"] if p["line"] is None]
    assert any("'q2'" in m and "no baseline" in m for m in whole)
    assert any("'q3'" in m and "no context rows" in m for m in whole)
    assert any("model 'b': no rows with a context" in m for m in whole)
    assert report["predictions"]["rows"] == 16
    assert report["predictions"]["excluded"] == 9 + 3  # nine bad lines, plus the rows of q2, q3 and model b
    assert sorted(report["models"]) == ["a"]
    assert report["models"]["a"]["design"]["questions"] == 1
    with pytest.raises(PredictionsError, match="--strict"):
        pseudowords.score(release, path, {**FAST, "strict": True})


def test_a_file_with_nothing_to_score_is_refused(release, tmp_path):
    path = write_rows(tmp_path / "p.jsonl", ["{oops", {"model": "a", "id": "q", "context": None, "trial": 0, "correct": 1}])
    with pytest.raises(CtxRobustError, match="no question of any model has both no-context rows"):
        pseudowords.score(release, path, dict(FAST))


def test_bad_options_are_one_line_errors(release, tmp_path):
    path = write_rows(tmp_path / "p.jsonl", binary_rows("a", [0.5] * 3, [0.5] * 3, np.random.default_rng(0)))
    with pytest.raises(Exception, match="--replicates -1: input should be greater than or equal to 0"):
        pseudowords.score(release, path, {"replicates": -1})
    with pytest.raises(Exception, match=r"\.csv or \.parquet"):
        pseudowords.score(release, path, {**FAST, "export": str(tmp_path / "out.txt")})


# --- the report ----------------------------------------------------------------------------------


def hand_rows():
    """Model 'h', 3 questions, 4 baseline trials and 2 contexts x 2 trials each:
    q0: base 4/4, contexts 1/2, 1/2 -> s_ic 0.5, Delta -0.5
    q1: base 2/4, contexts 2/2, 2/2 -> s_ic 1.0, Delta +0.5
    q2: base 1/4, contexts 0/2, 1/2 -> s_ic 0.25, Delta 0.0"""
    spec = {"q0": ([1, 1, 1, 1], [[1, 0], [0, 1]]), "q1": ([1, 0, 1, 0], [[1, 1], [1, 1]]), "q2": ([0, 0, 1, 0], [[0, 0], [0, 1]])}
    rows = []
    for qid, (base, contexts) in spec.items():
        rows += [{"model": "h", "id": qid, "context": None, "trial": t, "correct": c} for t, c in enumerate(base)]
        for j, trials in enumerate(contexts):
            rows += [{"model": "h", "id": qid, "context": CHA[j], "trial": t, "correct": c} for t, c in enumerate(trials)]
    return rows


def test_report_figures_by_hand(release, tmp_path):
    path = write_rows(tmp_path / "p.jsonl", hand_rows())
    report = pseudowords.score(release, path, dict(FAST))
    assert report["dataset"] == "pseudowords"
    assert report["release"]["version"] == "9.9.9" and len(report["release"]["manifest_sha256"]) == 64
    metrics = report["models"]["h"]["metrics"]
    assert metrics["accuracy.baseline"]["estimate"] == pytest.approx((1 + 0.5 + 0.25) / 3, abs=1e-6)
    assert metrics["delta"]["estimate"] == pytest.approx(0.0, abs=1e-6)
    assert metrics["INS"]["estimate"] == pytest.approx(1 / 3, abs=1e-6)
    assert metrics["WTD"]["estimate"] == pytest.approx(0.5, abs=1e-6)  # m = 1
    assert metrics["tail_share"]["estimate"] == pytest.approx(1.0)  # m = 1: q0 and q1 hold all the change, q2 none
    floor = metrics["noise_floor.INS"]["estimate"]
    assert 0 < floor < 1
    assert metrics["INS.adjusted"]["estimate"] == pytest.approx(1 / 3 - floor, abs=2e-6)
    assert metrics["INS"]["ci"] is not None
    # no interval for the floor-subtracted metrics, with the reason (bench/interval_coverage.py)
    for name in ("INS.adjusted", "WTD.adjusted"):
        assert metrics[name]["ci"] is None and "biased" in metrics[name]["note"]
    assert metrics["INS"]["n"] == 3
    for name in (
        "INS",
        "WTD",
        "INS.adjusted",
        "WTD.adjusted",
        "noise_floor.INS",
        "noise_floor.WTD",
        "WTD.split_sample",
        "delta",
        "accuracy.baseline",
        "tail_share",
        "split_half.r",
        "split_half.spearman_brown",
        "uncertainty_rho.squared.split.log_odds",
    ):
        assert name in metrics, name
    assert {k: report["parameters"][k] for k in ("K", "seed", "replicates", "null_experiments", "splits", "ci_level")} == {
        "K": 10,
        "seed": 0,
        "replicates": 200,
        "null_experiments": 200,
        "splits": 20,
        "ci_level": 0.95,
    }
    assert report["summary"]["metrics"]["INS"]["estimate"] == metrics["INS"]["estimate"]
    assert report["models"]["h"]["context_group"] == "CHA 10000"
    assert report["pairs"] == {"by_group": {}} and report["context_pairs"] == {"by_model": {}}  # one model: nothing to pair


def test_probability_scores_are_not_noise_corrected(release, tmp_path):
    rows = []
    for q, (base, ctx) in enumerate([(0.9, [0.5, 0.7]), (0.2, [0.2, 0.4]), (0.6, [0.6, 0.6])]):
        rows.append({"model": "local", "id": f"q{q}", "context": None, "score": base})
        rows += [{"model": "local", "id": f"q{q}", "context": CHA[j], "score": s} for j, s in enumerate(ctx)]
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    unit = report["models"]["local"]
    assert unit["input"] == "score" and unit["noise_correction"] is False
    m = unit["metrics"]
    # Delta = (-0.3, +0.1, 0.0): INS 0.4 / 3, WTD 0.3 (m = 1); Appendix G: no correction
    assert m["INS"]["estimate"] == pytest.approx(0.4 / 3, abs=1e-6)
    assert m["WTD"]["estimate"] == pytest.approx(0.3, abs=1e-6)
    assert m["INS.adjusted"] == m["INS"] and m["WTD.adjusted"] == m["WTD"]
    assert m["noise_floor.INS"]["estimate"] == 0.0
    assert "WTD.split_sample" not in m and unit["notes"]


def test_context_kinds_are_scored_as_separate_units_sharing_the_baseline(release, tmp_path):
    rng = np.random.default_rng(1)
    rows = binary_rows("m", [0.7] * 12, [0.7] * 12, rng, contexts=CHA[:2])
    rows += [
        {"model": "m", "id": f"q{q:03d}", "context": c, "trial": t, "correct": int(rng.random() < 0.3)}
        for q in range(12)
        for c in TOK + SHORT
        for t in range(2)
    ]
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    order = ["m [CHA 10]", "m [CHA 10000]", "m [TOK 100]"]  # kind, then length as a number
    assert sorted(report["models"]) == sorted(order)
    assert report["pairs"]["by_group"] == {}  # one model: no cross-model pair
    assert report["context_pairs"]["by_model"]["m"]["units"] == order
    assert report["context_pairs"]["by_model"]["m"]["context_groups"] == ["CHA 10", "CHA 10000", "TOK 100"]
    assert report["models"]["m [TOK 100]"]["context_group"] == "TOK 100"
    assert (
        report["models"]["m [TOK 100]"]["metrics"]["delta"]["estimate"] < report["models"]["m [CHA 10000]"]["metrics"]["delta"]["estimate"]
    )
    text = pseudowords_render.render_markdown(report)
    assert text.index("| m [CHA 10] |") < text.index("| m [CHA 10000] |") < text.index("| m [TOK 100] |")


def test_sqa_histories_from_prompts_are_a_context_group(release, tmp_path):
    rng = np.random.default_rng(4)
    rows = binary_rows("m", [0.6] * 10, [0.6] * 10, rng, contexts=CHA[:3])
    rows += [
        {"model": "m", "id": f"q{q:03d}", "context": f"SQA-000020-{j:03d}", "trial": t, "correct": int(rng.random() < 0.6)}
        for q in range(10)
        for j in range(10)
        for t in range(2)
    ]
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    assert report["predictions"]["excluded"] == 0
    assert sorted(report["models"]) == ["m [CHA 10000]", "m [SQA 20]"]
    assert report["models"]["m [SQA 20]"]["design"]["contexts"] == 10


def simulated_file(tmp_path: Path, models: int = 3, n: int = 60, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    p0 = rng.uniform(0.3, 1.0, n)
    rows = []
    for i in range(models):
        shift = np.where(rng.random(n) < 0.2, rng.choice([-0.3, 0.3], n), 0.0)
        rows += binary_rows(f"model-{i}", p0, np.clip(p0 + shift, 0, 1), rng)
    return write_rows(tmp_path / "predictions.jsonl", rows)


def test_split_sample_wtd_recovers_a_planted_tail_within_its_interval(release, tmp_path):
    """A known 10% of 500 questions drop from 0.95 to 0.05 under context, the rest are unaffected
    (most of them easy); the paper's design and parameters (20 + 10 x 2 trials, 1,000 replicates,
    200 splits). The oracle WTD is exactly 0.9. Split-sample WTD measures the questions its noisy
    ranking selects without bias (Appendix A), so it recovers the oracle when the ranking finds the
    planted tail, as it does for an effect this size; a weaker effect lets unaffected questions into
    the selected set and the estimate falls short of the oracle ("the selected set can still differ
    from the oracle tail"). The question bootstrap resamples how many planted questions there are, so
    the interval reaches down (fewer than m in a replicate) more than up; it covers the oracle in 95%
    of such simulations, and in this seeded one."""
    rng = np.random.default_rng(1)
    n = 500
    hit = np.zeros(n, dtype=bool)
    hit[rng.choice(n, n // 10, replace=False)] = True
    p0 = np.where(rng.random(n) < 0.7, rng.uniform(0.9, 1.0, n), rng.uniform(0, 1, n))
    pc = p0.copy()
    p0[hit], pc[hit] = 0.95, 0.05
    path = write_rows(tmp_path / "p.jsonl", binary_rows("planted", p0, pc, rng))
    metrics = pseudowords.score(release, path, {"seed": 0})["models"]["planted"]["metrics"]
    split = metrics["WTD.split_sample"]
    assert split["ci"][0] <= 0.9 <= split["ci"][1]
    assert split["estimate"] == pytest.approx(0.9, abs=0.02)


def test_cross_model_block(release, tmp_path):
    path = simulated_file(tmp_path)
    report = pseudowords.score(release, path, dict(FAST))
    assert list(report["pairs"]["by_group"]) == ["CHA 10000 / correct"]
    pairs = report["pairs"]["by_group"]["CHA 10000 / correct"]
    assert pairs["units"] == ["model-0", "model-1", "model-2"] and pairs["questions"] == 60
    assert set(pairs["by_pair"]) == {"model-0", "model-1"} and set(pairs["by_pair"]["model-0"]) == {"model-1", "model-2"}
    entry = pairs["by_pair"]["model-0"]["model-1"]
    for name in ("pearson", "jaccard.improved", "jaccard.degraded"):
        assert entry[name]["ci"][0] <= entry[name]["estimate"] <= entry[name]["ci"][1]
    estimates = [pairs["by_pair"][a][b]["pearson"]["estimate"] for a in pairs["by_pair"] for b in pairs["by_pair"][a]]
    assert pairs["metrics"]["pearson.mean"]["estimate"] == pytest.approx(np.mean(estimates), abs=1e-6)
    assert pairs["metrics"]["jaccard.random_baseline"]["estimate"] == pytest.approx(0.056929, abs=1e-6)  # N = 60, m = 6


def test_identical_models_correlate_perfectly(release, tmp_path):
    rows = binary_rows("x", np.linspace(0.1, 0.9, 30), np.linspace(0.9, 0.1, 30), np.random.default_rng(3))
    rows += [{**r, "model": "y"} for r in rows]
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    entry = report["pairs"]["by_group"]["CHA 10000 / correct"]["by_pair"]["x"]["y"]
    assert entry["pearson"]["estimate"] == pytest.approx(1.0)
    assert entry["jaccard.degraded"]["estimate"] == pytest.approx(1.0)
    for name in ("INS", "WTD", "delta", "tail_share"):
        assert report["models"]["x"]["metrics"][name]["estimate"] == report["models"]["y"]["metrics"][name]["estimate"]


def test_same_seed_same_bytes_and_the_seed_matters(release, tmp_path):
    path = simulated_file(tmp_path, models=2, n=40)
    first = dumps(pseudowords.score(release, path, dict(FAST)))
    second = dumps(pseudowords.score(release, path, dict(FAST)))
    other = dumps(pseudowords.score(release, path, {**FAST, "seed": 5}))
    assert first == second
    assert first != other


def test_row_order_does_not_change_any_figure(release, tmp_path):
    path = simulated_file(tmp_path, models=2, n=30)
    lines = path.read_text(encoding="utf-8").splitlines()
    shuffled = write_rows(tmp_path / "shuffled.jsonl", [lines[i] for i in np.random.default_rng(0).permutation(len(lines))])
    first, second = (pseudowords.score(release, p, dict(FAST)) for p in (path, shuffled))
    assert dumps(first["models"]) == dumps(second["models"]) and dumps(first["pairs"]) == dumps(second["pairs"])
    assert first["predictions"]["sha256"] != second["predictions"]["sha256"]


def test_report_bytes_do_not_depend_on_the_hash_seed(release, tmp_path):
    path = simulated_file(tmp_path, models=2, n=30)
    script = (
        "import sys; from pathlib import Path; from ctxrobust.release import Release; from ctxrobust.canonical import dumps; "
        "from ctxrobust.evaluation.pseudowords import scorer as pseudowords; "
        f"sys.stdout.write(dumps(pseudowords.score(Release(Path({str(release.path)!r})), Path({str(path)!r}), {FAST!r})))"
    )
    hash_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"  # differs from this process's
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert done.stdout == dumps(pseudowords.score(release, path, dict(FAST)))


def test_report_is_valid_json_without_nan(release, tmp_path):
    # one question: correlations and intervals are undefined and must come out as null
    rows = [{"model": "z", "id": "only", "context": None, "trial": t, "correct": 1} for t in range(4)]
    rows += [{"model": "z", "id": "only", "context": CHA[0], "trial": t, "correct": 1} for t in range(4)]
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    text = json.dumps(report, allow_nan=False)
    m = report["models"]["z"]["metrics"]
    assert m["tail_share"]["estimate"] is None  # nothing changed
    assert m["split_half.r"]["estimate"] is None
    assert "NaN" not in text


# --- export, renderings, command line -------------------------------------------------------------


def test_export_csv_and_parquet(release, tmp_path):
    path = write_rows(tmp_path / "p.jsonl", hand_rows())
    pseudowords.score(release, path, {**FAST, "export": str(tmp_path / "ex.csv")})
    with open(tmp_path / "ex.csv", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == ["id", "model", "s_i0", "s_ic", "delta_i"]
    assert [r["id"] for r in table] == ["q0", "q1", "q2"]
    assert [float(r["delta_i"]) for r in table] == [-0.5, 0.5, 0.0]
    assert float(table[2]["s_i0"]) == 0.25 and float(table[2]["s_ic"]) == 0.25
    pseudowords.score(release, path, {**FAST, "export": str(tmp_path / "ex.parquet")})
    frame = pq.read_table(tmp_path / "ex.parquet").to_pydict()
    assert frame["delta_i"] == [-0.5, 0.5, 0.0] and frame["model"] == ["h", "h", "h"]


def test_markdown_and_html(release, tmp_path):
    report = pseudowords.score(release, simulated_file(tmp_path), dict(FAST))
    text = pseudowords_render.render_markdown(report)
    assert "| Model | AVG | Δ | INS ↓ | WTD ↓ |" in text
    assert "| model-0 |" in text and "mean Pearson r" in text and "Spearman-Brown" in text
    page = pseudowords_render.render_html(report)
    assert page.count("data:image/png;base64,") == 3  # intervals by model, Figure 2 tail plot and Figure 3 heat map
    assert "<table>" in page


def test_command_line_score(release, tmp_path, capsys):
    path = simulated_file(tmp_path, models=2, n=20)
    out = tmp_path / "report.md"
    code = cli_main(["score", str(release.path), str(path), "--format", "md", "-o", str(out), "--replicates", "50", "--seed", "3"])
    assert code == 0
    assert out.read_text(encoding="utf-8").startswith("# pseudowords")
    bad = write_rows(tmp_path / "bad.jsonl", [json.loads(line) for line in path.read_text().splitlines()[:30]] + ["nope"])
    assert cli_main(["score", str(release.path), str(bad), "--strict", "--replicates", "10"]) == 2
    assert "--strict refuses" in capsys.readouterr().err


# --- cross-model pairs: different models, one context group and one input kind -------------------


def cross_pairs(report: dict) -> list[tuple[str, str, str]]:
    """(block key, unit a, unit b) of every cross-model pair in the report."""
    return [(key, a, b) for key, block in report["pairs"]["by_group"].items() for a in block["by_pair"] for b in block["by_pair"][a]]


def test_a_model_on_two_context_groups_is_not_paired_with_itself(release, tmp_path):
    """m runs on CHA 10000 and TOK 100 with the same planted effect (its two units correlate
    strongly); a and b run on CHA 10000 only, with effects of their own."""
    rng = np.random.default_rng(7)
    n = 40
    p0 = rng.uniform(0.3, 0.9, n)
    effect = np.where(rng.random(n) < 0.3, rng.choice([-0.3, 0.3], n), 0.0)
    rows = binary_rows("m", p0, np.clip(p0 + effect, 0, 1), rng, contexts=CHA[:4] + TOK)
    for model in ("a", "b"):
        own = np.where(rng.random(n) < 0.3, rng.choice([-0.3, 0.3], n), 0.0)
        rows += binary_rows(model, p0, np.clip(p0 + own, 0, 1), rng, contexts=CHA[:4])
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    assert sorted(report["models"]) == ["a", "b", "m [CHA 10000]", "m [TOK 100]"]
    assert report["models"]["a"]["context_group"] == "CHA 10000" and report["models"]["m [TOK 100]"]["context_group"] == "TOK 100"
    by_group = report["pairs"]["by_group"]
    assert list(by_group) == ["CHA 10000 / correct"]  # TOK 100 holds one model: no pair
    block = by_group["CHA 10000 / correct"]
    assert block["context_group"] == "CHA 10000" and block["input"] == "correct"
    assert block["units"] == ["a", "b", "m [CHA 10000]"] and block["questions"] == n
    pairs = cross_pairs(report)
    assert len(pairs) == 3
    for _, a, b in pairs:
        assert report["models"][a]["model"] != report["models"][b]["model"]
        assert report["models"][a]["context_group"] == report["models"][b]["context_group"]
    estimates = [block["by_pair"][a][b]["pearson"]["estimate"] for _, a, b in pairs]
    assert block["metrics"]["pearson.mean"]["estimate"] == pytest.approx(np.mean(estimates), abs=1e-6)
    assert (
        block["metrics"]["pearson.mean"]["ci"][0]
        <= block["metrics"]["pearson.mean"]["estimate"]
        <= block["metrics"]["pearson.mean"]["ci"][1]
    )
    # the same model across context groups (Figure 4) is reported apart
    context = report["context_pairs"]["by_model"]
    assert list(context) == ["m"]
    own = context["m"]
    assert own["input"] == "correct" and own["context_groups"] == ["CHA 10000", "TOK 100"]
    assert own["units"] == ["m [CHA 10000]", "m [TOK 100]"] and own["questions"] == n
    r_self = own["by_pair"]["m [CHA 10000]"]["m [TOK 100]"]["pearson"]["estimate"]
    assert r_self > 0.5 > block["metrics"]["pearson.mean"]["estimate"]
    assert own["metrics"]["pearson.mean"]["estimate"] == pytest.approx(r_self, abs=1e-6)
    assert "attenuation" not in own["by_pair"]["m [CHA 10000]"]["m [TOK 100]"]  # shared baseline: not independent noise
    text = pseudowords_render.render_markdown(report)
    assert "## Model specificity" in text and "## Pearson r of per-example change, CHA 10000, binary trials" in text
    assert "## Context groups of one model" in text and "## Pearson r between context groups, m" in text
    page = pseudowords_render.render_html(report)
    assert page.count("data:image/png;base64,") == 4  # intervals by model, tail plot, one cross-model heat map, one context-group heat map


def test_probability_score_models_are_paired_only_with_each_other(release, tmp_path):
    rng = np.random.default_rng(8)
    n = 30
    p0 = rng.uniform(0.2, 0.9, n)
    rows = []
    for model in ("a", "b"):
        rows += binary_rows(model, p0, np.clip(p0 + rng.normal(0, 0.2, n), 0, 1), rng, contexts=CHA[:3])
    for model in ("local-1", "local-2", "local-3"):
        for q in range(n):
            rows.append({"model": model, "id": f"q{q:03d}", "context": None, "score": float(p0[q])})
            rows += [
                {"model": model, "id": f"q{q:03d}", "context": c, "score": float(np.clip(p0[q] + rng.normal(0, 0.2), 0, 1))}
                for c in CHA[:3]
            ]
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    by_group = report["pairs"]["by_group"]
    assert list(by_group) == ["CHA 10000 / correct", "CHA 10000 / score"]
    binary, scores = by_group["CHA 10000 / correct"], by_group["CHA 10000 / score"]
    assert binary["units"] == ["a", "b"] and list(binary["by_pair"]) == ["a"] and list(binary["by_pair"]["a"]) == ["b"]
    assert scores["input"] == "score" and scores["units"] == ["local-1", "local-2", "local-3"]
    for _, a, b in cross_pairs(report):
        assert report["models"][a]["input"] == report["models"][b]["input"]
    assert binary["metrics"]["pearson.mean"]["estimate"] == pytest.approx(binary["by_pair"]["a"]["b"]["pearson"]["estimate"], abs=1e-6)
    three = [scores["by_pair"][a][b]["pearson"]["estimate"] for a in scores["by_pair"] for b in scores["by_pair"][a]]
    assert len(three) == 3 and scores["metrics"]["pearson.mean"]["estimate"] == pytest.approx(np.mean(three), abs=1e-6)
    assert report["context_pairs"]["by_model"] == {}
    text = pseudowords_render.render_markdown(report)
    assert "CHA 10000, probability scores" in text and "CHA 10000, binary trials" in text
    assert (
        pseudowords_render.render_html(report).count("data:image/png;base64,") == 4
    )  # intervals by model, tail plot and one heat map per block


def test_cross_model_figures_of_a_group_do_not_depend_on_the_other_groups(release, tmp_path):
    """Adding a model on another context group, or a probability-score model, leaves the figures of
    the binary CHA 10000 models as they were."""
    path = simulated_file(tmp_path, models=2, n=30)
    alone = pseudowords.score(release, path, dict(FAST))["pairs"]["by_group"]["CHA 10000 / correct"]
    rng = np.random.default_rng(9)
    extra = binary_rows("other", [0.5] * 30, [0.6] * 30, rng, contexts=TOK)
    extra += [{"model": "local", "id": f"q{q:03d}", "context": c, "score": 0.5} for q in range(30) for c in [None, *CHA[:2]]]
    lines = path.read_text(encoding="utf-8").splitlines() + [dumps(r) for r in extra]
    mixed = pseudowords.score(release, write_rows(tmp_path / "mixed.jsonl", lines), dict(FAST))
    assert dumps(mixed["pairs"]["by_group"]["CHA 10000 / correct"]) == dumps(alone)
    assert sorted(mixed["pairs"]["by_group"]) == ["CHA 10000 / correct"]  # 'other' and 'local' are alone in theirs


# --- summary: means over one context group and one input kind -------------------------------------


def _mean(report: dict, units: list[str], name: str) -> float:
    return float(np.mean([report["models"][u]["metrics"][name]["estimate"] for u in units]))


def test_summary_of_one_comparable_set_is_its_mean(release, tmp_path):
    report = pseudowords.score(release, simulated_file(tmp_path, models=2, n=20), dict(FAST))
    summary = report["summary"]
    assert summary["context_group"] == "CHA 10000" and summary["input"] == "correct"
    assert summary["units"] == ["model-0", "model-1"] and "by_group" not in summary and "note" not in summary
    assert summary["metrics"]["INS"]["estimate"] == pytest.approx(_mean(report, ["model-0", "model-1"], "INS"), abs=1e-6)
    assert summary["metrics"]["INS"]["n"] == 2
    # one set, even off the main setting: its mean, named
    only_tok = pseudowords.score(
        release,
        write_rows(tmp_path / "tok.jsonl", binary_rows("t", [0.6] * 8, [0.4] * 8, np.random.default_rng(2), contexts=TOK)),
        dict(FAST),
    )
    assert only_tok["summary"]["context_group"] == "TOK 100" and only_tok["summary"]["units"] == ["t"]
    assert only_tok["summary"]["metrics"]["delta"] == {**only_tok["models"]["t"]["metrics"]["delta"], "ci": None, "n": 1}


def test_summary_does_not_average_across_context_groups(release, tmp_path):
    """Two models on CHA 10000 and one on TOK 100: the top-level means are the CHA 10000 models'
    (the main setting), each group's means are under summary.by_group."""
    rng = np.random.default_rng(11)
    n = 16
    p0 = rng.uniform(0.3, 0.9, n)
    rows = binary_rows("a", p0, np.clip(p0 - 0.1, 0, 1), rng, contexts=CHA[:3])
    rows += binary_rows("b", p0, np.clip(p0 + 0.1, 0, 1), rng, contexts=CHA[:3])
    rows += binary_rows("c", p0, np.clip(p0 - 0.5, 0, 1), rng, contexts=TOK)
    path = write_rows(tmp_path / "p.jsonl", rows)
    report = pseudowords.score(release, path, dict(FAST))
    summary = report["summary"]
    assert list(summary["by_group"]) == ["CHA 10000 / correct", "TOK 100 / correct"]
    cha, tok = summary["by_group"]["CHA 10000 / correct"], summary["by_group"]["TOK 100 / correct"]
    assert (cha["context_group"], cha["input"], cha["units"]) == ("CHA 10000", "correct", ["a", "b"])
    assert (tok["context_group"], tok["input"], tok["units"]) == ("TOK 100", "correct", ["c"])
    for name in ("delta", "INS", "WTD.adjusted", "WTD.split_sample"):
        assert cha["metrics"][name]["estimate"] == pytest.approx(_mean(report, ["a", "b"], name), abs=1e-6)
        assert tok["metrics"][name]["estimate"] == report["models"]["c"]["metrics"][name]["estimate"]
    assert summary["metrics"] == cha["metrics"] and summary["units"] == ["a", "b"] and "note" not in summary
    assert summary["metrics"]["delta"]["n"] == 2
    assert summary["metrics"]["delta"]["estimate"] != pytest.approx(_mean(report, ["a", "b", "c"], "delta"), abs=1e-3)
    # deterministic, whatever the row order
    lines = path.read_text(encoding="utf-8").splitlines()
    shuffled = write_rows(tmp_path / "s.jsonl", [lines[i] for i in np.random.default_rng(0).permutation(len(lines))])
    assert dumps(pseudowords.score(release, shuffled, dict(FAST))["summary"]) == dumps(summary)


def test_summary_keeps_probability_scores_apart_from_binary_trials(release, tmp_path):
    rng = np.random.default_rng(12)
    n = 16
    p0 = rng.uniform(0.3, 0.9, n)
    rows = binary_rows("a", p0, np.clip(p0 - 0.2, 0, 1), rng, contexts=CHA[:3])
    rows += binary_rows("b", p0, np.clip(p0 + 0.2, 0, 1), rng, contexts=CHA[:3])
    for q in range(n):
        rows.append({"model": "local", "id": f"q{q:03d}", "context": None, "score": float(p0[q])})
        rows += [{"model": "local", "id": f"q{q:03d}", "context": c, "score": float(np.clip(p0[q] + 0.3, 0, 1))} for c in CHA[:3]]
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    summary = report["summary"]
    assert list(summary["by_group"]) == ["CHA 10000 / correct", "CHA 10000 / score"]
    scores = summary["by_group"]["CHA 10000 / score"]
    assert scores["input"] == "score" and scores["units"] == ["local"]
    assert scores["metrics"]["noise_floor.INS"]["estimate"] == 0.0 and "WTD.split_sample" not in scores["metrics"]
    assert summary["input"] == "correct" and summary["units"] == ["a", "b"]
    assert summary["metrics"] == summary["by_group"]["CHA 10000 / correct"]["metrics"]
    for name in ("INS", "INS.adjusted", "noise_floor.INS", "delta"):
        assert summary["metrics"][name]["estimate"] == pytest.approx(_mean(report, ["a", "b"], name), abs=1e-6)
        assert summary["metrics"][name]["n"] == 2


def test_summary_without_the_main_setting_is_empty_with_a_note(release, tmp_path):
    rng = np.random.default_rng(13)
    rows = binary_rows("a", [0.6] * 8, [0.5] * 8, rng, contexts=TOK)
    rows += binary_rows("b", [0.6] * 8, [0.7] * 8, rng, contexts=SHORT)  # CHA 10: not the release's longest CHA
    report = pseudowords.score(release, write_rows(tmp_path / "p.jsonl", rows), dict(FAST))
    summary = report["summary"]
    assert summary["metrics"] == {} and "CHA 10000, binary trials" in summary["note"]
    assert list(summary["by_group"]) == ["CHA 10 / correct", "TOK 100 / correct"]
    assert summary["by_group"]["CHA 10 / correct"]["metrics"]["delta"]["estimate"] == report["models"]["b"]["metrics"]["delta"]["estimate"]
    json.dumps(report, allow_nan=False)
