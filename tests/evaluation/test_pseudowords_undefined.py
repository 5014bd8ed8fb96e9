"""Degenerate pseudowords inputs give null figures with the reason, never a bare null or a number that
means nothing (a correlation of two questions, a Jaccard index of tied changes)."""

from __future__ import annotations

import numpy as np
import pytest

from ctxrobust.evaluation.pseudowords import scorer as pw
from ctxrobust.evaluation.pseudowords import undefined

CONTEXTS = [f"CHA-010000-{j:03d}" for j in range(10)]
FAST = pw.Parameters(replicates=30, null_experiments=10, splits=6, shift_null_simulations=3)


def unit(base, context, name="m") -> pw.Unit:
    n = len(base)
    return pw.Unit(
        name,
        name,
        "CHA 10000",
        True,
        [f"q{i}" for i in range(n)],
        CONTEXTS,
        np.full(n, 20),
        np.array(base, dtype=float),
        np.full((n, 10), 2),
        np.array(context, dtype=float),
    )


@pytest.mark.parametrize("right", [0, 1])
def test_always_right_or_always_wrong_gives_nulls_with_reasons(right):
    metrics = pw.score_unit(unit([20 * right] * 30, [[2 * right] * 10] * 30), FAST).metrics
    nulls = {k: v for k, v in metrics.items() if v["estimate"] is None}
    assert {"tail_share", "split_half.r", "uncertainty_rho.squared.split.probability"} <= set(nulls)
    assert all(v.get("note") and v["ci"] is None for v in nulls.values()), [k for k, v in nulls.items() if not v.get("note")]
    assert "no question's accuracy changed" in metrics["tail_share"]["note"]
    assert "same for every question" in metrics["uncertainty_rho.signed.raw.probability"]["note"]
    assert metrics["INS"]["estimate"] == 0 and metrics["WTD"]["estimate"] == 0  # defined, and zero


def test_correlations_of_fewer_than_three_questions_are_null():
    metrics = pw.score_unit(unit([10, 5], [[1] * 10, [2] * 10]), FAST).metrics
    correlations = [k for k in metrics if k.startswith(undefined.CORRELATIONS)]
    assert correlations and all(metrics[k]["estimate"] is None for k in correlations)
    assert "at least 3 questions; this model has 2" in metrics["uncertainty_rho.signed.raw.probability"]["note"]
    assert "at least 3 questions" in metrics["uncertainty_rho.squared.split.probability.ceiling"]["note"]
    assert metrics["delta"]["estimate"] is not None  # a mean of two questions is still a mean


def test_every_null_of_a_no_change_model_has_a_note():
    metrics = pw.score_unit(unit([10] * 30, [[1] * 10] * 30), FAST).metrics
    assert [k for k, v in metrics.items() if v["estimate"] is None and not v.get("note")] == []
    assert "r > -1" in metrics["split_half.spearman_brown"]["note"]


def test_a_model_with_equal_changes_has_no_jaccard_or_pearson():
    rng = np.random.default_rng(0)
    flat = unit([10] * 40, [[1] * 10] * 40, "flat")
    base = rng.integers(0, 21, 40)
    moving = unit(base, rng.binomial(2, 0.5, (40, 10)), "moving")
    results = {u.name: pw.score_unit(u, FAST) for u in (flat, moving)}
    block = pw._pair_block([flat, moving], results, FAST, ("cross-model", "t"), attenuation=False)
    entry = block["by_pair"]["flat"]["moving"]
    for name in ("pearson", "jaccard.improved", "jaccard.degraded"):
        assert entry[name]["estimate"] is None and "no ranking" in entry[name]["note"]
    mean = block["metrics"]["jaccard.improved.mean"]
    assert mean["estimate"] is None and "no pair of models" in mean["note"]  # no defined pair, no mean


def test_reason_names_what_is_missing():
    assert undefined.reason("tail_share").startswith("undefined: no question")
    assert "ambiguity level" in undefined.reason("ambiguity_rho.signed.raw.probability")
    assert undefined.reason("something.else") == "undefined for these data"


def test_models_on_few_questions_are_warned_about_in_the_json_and_the_markdown(tmp_path):
    from test_eval_pseudowords import FAST as OPTIONS
    from test_eval_pseudowords import make_release, simulated_file

    from ctxrobust.evaluation.pseudowords import coverage_warnings, render

    lines = coverage_warnings.warnings({"a": {"design": {"questions": 50}}, "b": {"design": {"questions": 500}}}, 10)
    assert len(lines) == 1 and lines[0].startswith("model 'a': 50 questions (fewer than 250)") and "m = 5 questions" in lines[0]
    assert "against 93-97% at 500" in lines[0]  # the measured coverage it cites (bench/interval_coverage.py, README)
    report = pw.score(
        make_release(tmp_path / "release"), simulated_file(tmp_path, models=1, n=60), {**OPTIONS, "shift_null_simulations": 0}
    )
    assert report["warnings"] and "model 'model-0': 60 questions" in report["warnings"][0]
    text = render.render_markdown(report)
    assert "## Warnings" in text and "known to cover less than 95%" in text
    assert "Warnings" in render.render_html(report)
