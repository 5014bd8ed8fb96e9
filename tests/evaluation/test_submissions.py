"""Several submissions scored together: per-file problems, clashing model names kept apart, --strict per file,
a leaderboard (Markdown and CSV), and paired difference intervals equal to a hand-computed paired bootstrap."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import test_eval_gsm_ic as gsm

from ctxrobust.cli import main

GOLD = {"b1": "12", "b2": "1250", "b3": "7.5"}
BASE_OF = {v: b for v, b, *_ in gsm.VARIANTS}
VARIANT_IDS = [v for v, *_ in gsm.VARIANTS]
RIGHT_A = {"v11", "v12", "v21", "v31", "v32"}
RIGHT_B = {"v11", "v13", "v22", "v31", "v33", "v34"}
SEED, REPLICATES = 3, 400


def rows(model: str, right: set[str]) -> list[dict]:
    out = [{"model": model, "id": b, "answer": GOLD[b]} for b in GOLD]
    out += [{"model": model, "id": v, "answer": GOLD[BASE_OF[v]] if v in right else "999"} for v in VARIANT_IDS]
    return out


def write(path: Path, lines: list) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def case(tmp_path):
    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path
    folder = tmp_path / "submissions"
    folder.mkdir()
    write(folder / "a.jsonl", rows("alpha", RIGHT_A))
    write(folder / "b.jsonl", rows("alpha", RIGHT_B))  # the same model name as a.jsonl
    broken = rows("gamma", {"v11"})
    broken.insert(1, "{not json")
    broken.insert(4, {"model": "gamma", "id": "v99", "answer": "1"})
    write(folder / "c.jsonl", broken)
    return release, folder, tmp_path


def score(release, *args) -> int:
    return main(["score", str(release), *map(str, args), "--seed", str(SEED), "--replicates", str(REPLICATES)])


def hand_paired_interval(right_a: set[str], right_b: set[str]) -> tuple[float, float, float]:
    """micro(A) - micro(B) and its 95% percentile interval, resampling base problems with the documented draws."""
    bases = ["b1", "b2", "b3"]
    hits_a = np.array([sum(1 for v in VARIANT_IDS if BASE_OF[v] == b and v in right_a) for b in bases], float)
    hits_b = np.array([sum(1 for v in VARIANT_IDS if BASE_OF[v] == b and v in right_b) for b in bases], float)
    total = np.array([sum(1 for v in VARIANT_IDS if BASE_OF[v] == b) for b in bases], float)
    draws = np.random.default_rng(SEED).integers(0, 3, size=(REPLICATES, 3))
    diffs = []
    for draw in draws:
        w = np.bincount(draw, minlength=3)
        diffs.append(w @ hits_a / (w @ total) - w @ hits_b / (w @ total))
    diffs = np.array(diffs)
    return hits_a.sum() / total.sum() - hits_b.sum() / total.sum(), float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))


def test_three_submissions_scored_together(case, capsys):
    release, folder, tmp = case
    assert score(release, folder, "-o", tmp / "report.json", "--leaderboard", tmp / "board.csv") == 0
    err = capsys.readouterr().err
    report = json.loads((tmp / "report.json").read_text(encoding="utf-8"))
    # clashing names kept apart, and said so
    assert sorted(report["models"]) == ["alpha [a.jsonl]", "alpha [b.jsonl]", "gamma"]
    assert "model name 'alpha' is in 2 submissions (a.jsonl, b.jsonl): kept apart" in err
    subs = {s["label"]: s for s in report["submissions"]}
    assert subs["a.jsonl"]["models"] == {"alpha": "alpha [a.jsonl]"} and subs["c.jsonl"]["models"] == {"gamma": "gamma"}
    # each file's problems under its own name and line numbers
    assert subs["a.jsonl"]["problems"] == [] and subs["b.jsonl"]["problems"] == []
    assert [p["line"] for p in subs["c.jsonl"]["problems"]] == [2, 5]
    assert "not valid JSON" in subs["c.jsonl"]["problems"][0]["message"] and "unknown id 'v99'" in subs["c.jsonl"]["problems"][1]["message"]
    assert f"{folder / 'c.jsonl'}:2: not valid JSON" in err
    assert all(s["status"] == "scored" for s in subs.values())
    # the figures of one submission are those it gets alone: the same draws for every model
    assert score(release, folder / "a.jsonl", "-o", tmp / "a.json") == 0
    alone = json.loads((tmp / "a.json").read_text(encoding="utf-8"))
    assert report["models"]["alpha [a.jsonl]"]["metrics"] == alone["models"]["alpha"]["metrics"]
    # paired differences equal a hand-computed paired bootstrap
    figure = report["differences"]["by_pair"]["alpha [a.jsonl]"]["alpha [b.jsonl]"]["difference.micro"]
    estimate, low, high = hand_paired_interval(RIGHT_A, RIGHT_B)
    assert figure["estimate"] == pytest.approx(estimate) and figure["ci"] == pytest.approx([low, high])
    assert low < high and report["units"]["difference.micro"] == "difference of fractions"
    # the leaderboard ranks by micro accuracy, higher first, with intervals
    board = report["leaderboard"]
    assert board["ranked_by"] == "micro" and board["better"] == "higher"
    assert [r["model"] for r in board["rows"]] == ["alpha [b.jsonl]", "alpha [a.jsonl]", "gamma"]  # 6/9, 5/9, 1/9
    frame = pd.read_csv(tmp / "board.csv")
    assert list(frame["model"]) == [r["model"] for r in board["rows"]] and list(frame["rank"]) == [1, 2, 3]
    assert frame.loc[0, "micro"] == pytest.approx(6 / 9) and frame["micro.ci_low"].notna().all()
    assert frame.loc[2, "submission"] == "c.jsonl" and frame["invalid_rate"].notna().all()


def test_strict_refuses_the_broken_file_and_scores_the_others(case, capsys):
    release, folder, tmp = case
    files = [folder / "a.jsonl", folder / "b.jsonl", folder / "c.jsonl"]
    assert score(release, *files, "--strict", "-o", tmp / "report.md", "--leaderboard", tmp / "board.md") == 0
    err = capsys.readouterr().err
    assert f"{folder / 'c.jsonl'}: refused: 2 problem(s) and --strict; the other submissions are scored without it" in err
    text = (tmp / "report.md").read_text(encoding="utf-8")
    assert "## Leaderboard" in text and "## Differences between models" in text and "## Submissions" in text
    assert "| c.jsonl | refused (2 problem(s) and --strict) |" in text
    assert "- c.jsonl line 2: not valid JSON" in text
    board = (tmp / "board.md").read_text(encoding="utf-8")
    assert "| 1 | alpha [b.jsonl] | b.jsonl |" in board and "gamma" not in board


def test_a_file_without_any_valid_row_is_refused_alone(case, capsys):
    release, folder, tmp = case
    write(folder / "d.jsonl", ["{broken", "[1, 2]"])
    assert score(release, folder, "-o", tmp / "r.json") == 0
    subs = {s["label"]: s for s in json.loads((tmp / "r.json").read_text(encoding="utf-8"))["submissions"]}
    assert subs["d.jsonl"]["status"] == "refused" and "none of its 2 row(s)" in subs["d.jsonl"]["reason"]
    assert subs["a.jsonl"]["status"] == "scored"


def test_the_csv_report_of_submissions_has_the_differences(case):
    release, folder, tmp = case
    assert score(release, folder, "-o", tmp / "r.csv") == 0
    frame = pd.read_csv(tmp / "r.csv")
    pair = frame[(frame["section"] == "differences") & (frame["model"] == "alpha [a.jsonl] / alpha [b.jsonl]")]
    assert set(pair["metric"]) == {"difference.micro", "difference.macro"}
    assert (pair["unit"] == "difference of fractions").all()


def test_leaderboard_needs_several_submissions(case, capsys):
    release, folder, tmp = case
    assert score(release, folder / "a.jsonl", "--leaderboard", tmp / "b.csv") == 2
    assert "--leaderboard ranks several submissions" in capsys.readouterr().err


def test_misleadqa_differences_are_paired(tmp_path):
    """Two submissions with the same responses differ by exactly 0 in every replicate: paired draws give [0, 0];
    another model's difference is the difference of the two models' figures."""
    import test_eval_misleadqa as mqa

    release = mqa.write_release(tmp_path / "release", mqa.MAIN, mqa.SUPPLEMENT)
    lines = mqa.prediction_lines("m1", mqa.M1) + mqa.prediction_lines("m2", mqa.M2)
    for name in ("x.jsonl", "y.jsonl"):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert (
        main(
            [
                "score",
                str(release),
                str(tmp_path / "x.jsonl"),
                str(tmp_path / "y.jsonl"),
                "--replicates",
                "200",
                "--min-clusters",
                "1",
                "-o",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    same = report["differences"]["by_pair"]["m1 [x.jsonl]"]["m1 [y.jsonl]"]
    for name in ("LR.F", "LR.S", "RLR.F", "RLR.S"):
        assert same[f"difference.{name}"]["estimate"] == 0 and same[f"difference.{name}"]["ci"] == [0.0, 0.0]
    other = report["differences"]["by_pair"]["m1 [x.jsonl]"]["m2 [x.jsonl]"]["difference.LR.F"]
    models = report["models"]
    assert other["estimate"] == pytest.approx(
        models["m1 [x.jsonl]"]["metrics"]["LR.F"]["estimate"] - models["m2 [x.jsonl]"]["metrics"]["LR.F"]["estimate"]
    )
    assert other["ci"][0] <= other["estimate"] <= other["ci"][1]
    assert report["leaderboard"]["ranked_by"] == "LR.F" and report["leaderboard"]["better"] == "lower"


def test_pseudowords_differences_are_paired_on_shared_questions(tmp_path):
    import test_eval_pseudowords as pw

    release = pw.make_release(tmp_path / "release").path
    one = pw.simulated_file(tmp_path, models=2, n=30)
    (tmp_path / "x.jsonl").write_bytes(one.read_bytes())
    (tmp_path / "y.jsonl").write_bytes(one.read_bytes())
    assert (
        main(
            [
                "score",
                str(release),
                str(tmp_path / "x.jsonl"),
                str(tmp_path / "y.jsonl"),
                "--replicates",
                "100",
                "--null-experiments",
                "50",
                "--splits",
                "10",
                "-o",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    pairs = report["differences"]["by_pair"]
    same = pairs["model-0 [x.jsonl]"]["model-0 [y.jsonl]"]
    for name in ("INS", "WTD", "delta", "accuracy.baseline"):
        assert same[f"difference.{name}"]["estimate"] == 0 and same[f"difference.{name}"]["ci"] == [0.0, 0.0]
    other = pairs["model-0 [x.jsonl]"]["model-1 [x.jsonl]"]
    m = report["models"]
    assert other["difference.INS"]["estimate"] == pytest.approx(
        m["model-0 [x.jsonl]"]["metrics"]["INS"]["estimate"] - m["model-1 [x.jsonl]"]["metrics"]["INS"]["estimate"], abs=1e-6
    )
    floors = (
        m["model-0 [x.jsonl]"]["metrics"]["noise_floor.INS"]["estimate"] - m["model-1 [x.jsonl]"]["metrics"]["noise_floor.INS"]["estimate"]
    )
    assert other["difference.INS.adjusted"]["estimate"] == pytest.approx(other["difference.INS"]["estimate"] - floors, abs=1e-6)
    assert report["leaderboard"]["ranked_by"] == "INS.adjusted" and not report["leaderboard"]["shared_draws"]


def test_a_batch_output_and_its_error_file_are_one_submission(tmp_path):
    from test_hostile_formats import request_lines
    from test_run import batch_output, write_rows

    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path
    lines = request_lines(release, tmp_path)
    texts = {line["id"]: f"The answer is {GOLD[line['item']] if line['item'] in GOLD else GOLD[BASE_OF[line['item']]]}." for line in lines}
    failed = {lines[3]["id"], lines[4]["id"]}
    answered = batch_output([{"custom_id": line["id"], "body": {"model": "m"}} for line in lines], texts, failed)
    output = write_rows(tmp_path / "batch_abc_output.jsonl", [o for o in answered if o["custom_id"] not in failed])
    errors = write_rows(tmp_path / "batch_abc_errors.jsonl", [o for o in answered if o["custom_id"] in failed])
    other = write(tmp_path / "other.jsonl", rows("alpha", RIGHT_A))
    assert score(release, output, errors, other, "-o", tmp_path / "r.json") == 0
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    subs = {s["label"]: s for s in report["submissions"]}
    assert sorted(subs) == ["batch_abc_output.jsonl (+1 file(s) of its run)", "other.jsonl"]
    run = subs["batch_abc_output.jsonl (+1 file(s) of its run)"]
    assert run["files"] == [str(output), str(errors)] and run["models"] == {"m": "m"} and run["rows"] == len(lines)
    assert sum("counted as an invalid response" in p["message"] for p in run["problems"]) == 2
    micro = report["models"]["m"]["metrics"]["micro"]
    assert micro["estimate"] == pytest.approx(7 / 9) and micro["n"] == 9  # the two failed requests are variants, wrong


def test_a_file_refused_under_strict_is_left_out_without_scoring_the_others_again(case, monkeypatch):
    from ctxrobust.evaluation import submissions

    release, folder, tmp = case
    calls = []
    original = submissions._quiet_score

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(submissions, "_quiet_score", counted)
    assert score(release, folder / "a.jsonl", folder / "b.jsonl", folder / "c.jsonl", "--strict", "-o", tmp / "strict.json") == 0
    assert len(calls) == 1  # one scoring pass: gsm-ic's figures are per model
    assert score(release, folder / "a.jsonl", folder / "b.jsonl", "-o", tmp / "two.json") == 0
    strict, two = (json.loads((tmp / name).read_text(encoding="utf-8")) for name in ("strict.json", "two.json"))
    assert strict["models"] == two["models"] and strict["summary"] == two["summary"]
    assert strict["differences"] == two["differences"] and strict["coverage"]["models"] == two["coverage"]["models"]
    assert strict["predictions"]["excluded"] == two["predictions"]["excluded"] == 0
    assert {s["label"]: s["status"] for s in strict["submissions"]}["c.jsonl"] == "refused"


def test_the_leaderboard_ranks_on_any_declared_figure(case, capsys):
    release, folder, tmp = case
    # micro accuracy on off-topic variants orders the models otherwise than the headline micro (6/9, 5/9, 1/9)
    assert score(release, folder, "-o", tmp / "report.json", "--rank-by", "micro.topic=off") == 0
    board = json.loads((tmp / "report.json").read_text(encoding="utf-8"))["leaderboard"]
    assert board["ranked_by"] == "micro.topic=off" and board["better"] == "higher"
    assert [row["model"] for row in board["rows"]] == ["alpha [a.jsonl]", "alpha [b.jsonl]", "gamma"]  # 3/4, 1/4, 0
    assert [row["rank"] for row in board["rows"]] == [1, 2, 3]
    capsys.readouterr()
    assert score(release, folder, "-o", tmp / "other.json", "--rank-by", "nope") == 2
    assert "no figure named 'nope' is declared" in capsys.readouterr().err
    assert not (tmp / "other.json").exists()
