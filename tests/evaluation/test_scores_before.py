"""Frozen figures: predictions that exercise each scorer, scored by `ctxrobust score --format json`, must give
every figure (estimate, ci, n) of tests/data/scores_before/ exactly, through the command line and through the
Python API. `FREEZE_SCORES=1` rewrites the fixtures (only when a figure is meant to change)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import test_eval_gsm_ic as gsm
import test_eval_misleadqa as mqa
import test_eval_pseudowords as pw
import test_submissions as subs

from ctxrobust.cli import main

FROZEN = Path(__file__).resolve().parents[1] / "data" / "scores_before"
PSEUDOWORDS_FAST = ["--replicates", "100", "--null-experiments", "50", "--splits", "10"]


def _lines(path: Path, lines: list) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8")
    return path


def gsm_ic_single(tmp: Path):
    release = gsm.write_release(tmp / "release", gsm.BASES, gsm.VARIANTS, gsm.SUBSET).path
    broken = [*gsm.ALPHA, "{not json", {"model": "alpha", "id": "v99", "answer": "1"}, *gsm.BETA]
    return release, [_lines(tmp / "predictions.jsonl", broken)], ["--replicates", "200", "--seed", "5"]


def gsm_ic_partial(tmp: Path):
    """A model that answered only some variants: the missing ones count as wrong."""
    release = gsm.write_release(tmp / "release", gsm.BASES, gsm.VARIANTS).path
    rows = [r for r in gsm.ALPHA if r["id"] not in ("v13", "v22", "v34")]
    return release, [_lines(tmp / "predictions.jsonl", rows)], ["--replicates", "200"]


def gsm_ic_submissions(tmp: Path):
    release = gsm.write_release(tmp / "release", gsm.BASES, gsm.VARIANTS).path
    folder = tmp / "submissions"
    folder.mkdir()
    _lines(folder / "a.jsonl", subs.rows("alpha", subs.RIGHT_A))
    _lines(folder / "b.jsonl", subs.rows("alpha", subs.RIGHT_B))
    broken = subs.rows("gamma", {"v11"})
    broken.insert(1, "{not json")
    broken.insert(4, {"model": "gamma", "id": "v99", "answer": "1"})
    _lines(folder / "c.jsonl", broken)
    return release, [folder], ["--seed", str(subs.SEED), "--replicates", str(subs.REPLICATES)]


def misleadqa_single(tmp: Path):
    release = mqa.write_release(tmp / "release", mqa.MAIN, mqa.SUPPLEMENT)
    lines = (
        mqa.prediction_lines("m1", mqa.M1)
        + mqa.prediction_lines("m1", mqa.M1_CF, "cf")
        + mqa.prediction_lines("m1", mqa.M1_SUPPLEMENT)
        + mqa.prediction_lines("m2", mqa.M2)
    )
    return release, [_lines(tmp / "predictions.jsonl", lines)], ["--replicates", "300", "--min-clusters", "1"]


def misleadqa_submissions(tmp: Path):
    release = mqa.write_release(tmp / "release", mqa.MAIN, mqa.SUPPLEMENT)
    x = _lines(tmp / "x.jsonl", mqa.prediction_lines("m1", mqa.M1) + mqa.prediction_lines("m2", mqa.M2))
    y = _lines(tmp / "y.jsonl", mqa.prediction_lines("m2", mqa.M1))
    return release, [x, y], ["--replicates", "200", "--min-clusters", "1"]


def pseudowords_single(tmp: Path):
    release = pw.make_release(tmp / "release").path
    return release, [pw.simulated_file(tmp, models=2, n=30)], PSEUDOWORDS_FAST


def pseudowords_submissions(tmp: Path):
    release = pw.make_release(tmp / "release").path
    one = pw.simulated_file(tmp, models=2, n=30)
    (tmp / "x.jsonl").write_bytes(one.read_bytes())
    two = pw.simulated_file(tmp, models=1, n=30, seed=4)
    (tmp / "y.jsonl").write_bytes(two.read_bytes())
    return release, [tmp / "x.jsonl", tmp / "y.jsonl"], PSEUDOWORDS_FAST


CASES = {
    "gsm-ic": gsm_ic_single,
    "gsm-ic-partial": gsm_ic_partial,
    "gsm-ic-submissions": gsm_ic_submissions,
    "misleadqa": misleadqa_single,
    "misleadqa-submissions": misleadqa_submissions,
    "pseudowords": pseudowords_single,
    "pseudowords-submissions": pseudowords_submissions,
}


def _figure(value: dict) -> dict:
    return {key: value.get(key) for key in ("estimate", "ci", "n")}


def _block(metrics: dict) -> dict:
    return {name: _figure(value) for name, value in metrics.items() if isinstance(value, dict) and "estimate" in value}


def figures(report: dict) -> dict:
    """Every figure of a JSON report: per model, the summary, and the differences between pairs of models."""
    out = {"models": {name: _block(model["metrics"]) for name, model in report["models"].items()}}
    out["summary"] = _block(report.get("summary", {}).get("metrics", {}))
    pairs = report.get("differences", {}).get("by_pair", {})
    out["differences"] = {f"{a} / {b}": _block(block) for a, inner in pairs.items() for b, block in inner.items()}
    return out


def cli_report(tmp: Path, case: str) -> dict:
    release, predictions, options = CASES[case](tmp)
    target = tmp / "report.json"
    assert main(["score", str(release), *map(str, predictions), *options, "--format", "json", "-o", str(target)]) == 0
    return json.loads(target.read_text(encoding="utf-8"))


def frozen(case: str) -> dict:
    return json.loads((FROZEN / f"{case}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_command_line_figures_are_the_frozen_ones(tmp_path, case):
    got = figures(cli_report(tmp_path, case))
    if os.environ.get("FREEZE_SCORES") == "1":
        FROZEN.mkdir(parents=True, exist_ok=True)
        (FROZEN / f"{case}.json").write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert got == frozen(case)
    assert got["models"] and all(got["models"].values())  # something was compared


def _api_options(flags: list[str]) -> dict:
    out = {}
    for flag, value in zip(flags[::2], flags[1::2]):
        out[flag.lstrip("-").replace("-", "_")] = int(value)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_api_figures_are_the_frozen_ones(tmp_path, case):
    import ctxrobust

    release, predictions, options = CASES[case](tmp_path)
    paths = predictions[0] if len(predictions) == 1 else predictions
    report = ctxrobust.score(ctxrobust.load_release(release), paths, **_api_options(options))
    assert figures(report.to_dict()) == frozen(case)


def _rows_of(path: Path) -> list:
    """The rows of a JSON Lines file as a caller holds them: each line that is a JSON object, as a dict."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue  # a line that is not JSON is no row a caller can hold
        if isinstance(value, dict):
            out.append(value)
    return out


@pytest.mark.parametrize("case", ["gsm-ic", "gsm-ic-partial", "misleadqa", "pseudowords"])
def test_api_rows_give_the_frozen_figures(tmp_path, case):
    import ctxrobust

    release, (path,), options = CASES[case](tmp_path)
    report = ctxrobust.score(ctxrobust.load_release(release), _rows_of(path), **_api_options(options))
    assert figures(report.to_dict()) == frozen(case)
