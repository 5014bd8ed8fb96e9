"""Pseudowords scoring at scale: the streaming reader folds rows into per-cell counts, a clean file takes
the columnar fast path and a file with problems the row-by-row path, both giving the same figures;
figures match those of the earlier row-holding scorer (tests/data/pseudowords_figures_small.json, written
by it from the benchmark's generator) except the ones the scoring now defines differently."""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from ctxrobust.evaluation.pseudowords import scorer as pseudowords

REPO = Path(__file__).resolve().parent.parent
SMALL = {"seed": 0, "replicates": 200, "null_experiments": 200, "splits": 40}


def bench_module():
    spec = importlib.util.spec_from_file_location("bench_score_pseudowords", REPO / "bench" / "score_pseudowords.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def differences(expected, actual, where="", tolerance=1.5e-6, skip=()):
    """Paths where two reports differ: numbers by more than `tolerance` (one unit in the 6th decimal, the
    rounding of the reports), anything else by value; paths ending in an entry of `skip` are not compared."""
    if any(where.endswith(s) for s in skip):
        return []
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = [f"{where}: missing key {k!r}" for k in expected if k not in actual]
        return out + [d for k in expected if k in actual for d in differences(expected[k], actual[k], f"{where}/{k}", tolerance, skip)]
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [d for i, (a, b) in enumerate(zip(expected, actual)) for d in differences(a, b, f"{where}[{i}]", tolerance, skip)]
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers) and not isinstance(expected, bool):
        return [] if math.isclose(expected, actual, rel_tol=0, abs_tol=tolerance) else [f"{where}: {expected} != {actual}"]
    return [] if expected == actual else [f"{where}: {expected!r} != {actual!r}"]


# figures whose definition changed since the fixture was written (each with its reason in the scorer)
REDEFINED: tuple[str, ...] = ()


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    bench = bench_module()
    folder = tmp_path_factory.mktemp("bench-small")
    release = bench.write_release(folder)
    bench.write_predictions(folder / "predictions.jsonl", 3, 150, 1)
    return release, folder / "predictions.jsonl"


def test_figures_equal_those_of_the_row_holding_scorer(small_run):
    release, predictions = small_run
    report = pseudowords.score(release, predictions, SMALL)
    expected = json.loads((REPO / "tests" / "data" / "pseudowords_figures_small.json").read_text(encoding="utf-8"))
    actual = {k: report[k] for k in expected}
    actual["predictions"] = {k: v for k, v in report["predictions"].items() if k != "path"}
    assert differences(expected, actual, skip=REDEFINED) == []
