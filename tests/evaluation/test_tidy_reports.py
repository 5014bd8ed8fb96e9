"""Tidy reports: each dataset's CSV loads with one pandas.read_csv call, one row per figure, with the unit and
direction the metric registry declares; Parquet holds the same rows; the JSON names every figure's unit."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import test_eval_gsm_ic as gsm
import test_eval_misleadqa as mqa
import test_eval_pseudowords as pw

from ctxrobust.cli import main
from ctxrobust.evaluation import metrics
from ctxrobust.evaluation.report import figure_names
from ctxrobust.evaluation.tidy import COLUMNS, MEAN, tidy_rows

UNITS = {"fraction", "difference of fractions", "ratio", "count", "indicator", "correlation", "Jaccard index"}


def case(dataset: str, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """(release folder, predictions file, score options) of a small case of `dataset`."""
    if dataset == "gsm-ic":
        release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS, gsm.SUBSET).path
        return release, gsm.write_predictions(tmp_path / "p.jsonl", gsm.ALPHA), ["--replicates", "50"]
    if dataset == "misleadqa":
        release = mqa.write_release(tmp_path / "release", mqa.MAIN, mqa.SUPPLEMENT)
        lines = mqa.prediction_lines("m1", mqa.M1) + mqa.prediction_lines("m2", mqa.M2)
        (tmp_path / "p.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return release, tmp_path / "p.jsonl", ["--replicates", "50", "--min-clusters", "1"]
    release = pw.make_release(tmp_path / "release").path
    return release, pw.simulated_file(tmp_path, models=2, n=30), ["--replicates", "50", "--null-experiments", "50", "--splits", "10"]


def count_figures(node) -> int:
    if isinstance(node, dict):
        if {"estimate", "ci", "n"} <= set(node):
            return 1
        return sum(count_figures(v) for v in node.values())
    return 0


@pytest.mark.parametrize("dataset", ["gsm-ic", "misleadqa", "pseudowords"])
def test_the_csv_report_loads_with_one_read_csv_call(dataset, tmp_path):
    release, predictions, options = case(dataset, tmp_path)
    assert main(["score", str(release), str(predictions), *options, "-o", str(tmp_path / "report.json")]) == 0
    assert main(["score", str(release), str(predictions), *options, "-o", str(tmp_path / "report.csv")]) == 0
    assert main(["score", str(release), str(predictions), *options, "--format", "parquet", "-o", str(tmp_path / "report.parquet")]) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    frame = pd.read_csv(tmp_path / "report.csv")
    assert tuple(frame.columns) == COLUMNS
    figures = count_figures({k: v for k, v in report.items() if k not in ("parameters", "predictions", "release", "units")})
    assert len(frame) == figures > 10
    assert set(frame["higher_is_better"].dropna()) <= {True, False} and frame["higher_is_better"].notna().any()
    assert frame["estimate"].dtype == "float64" and frame["ci_low"].dtype == "float64" and frame["ci_high"].dtype == "float64"
    assert set(frame["unit"]) <= UNITS and frame["unit"].notna().all()
    assert (frame["dataset"] == dataset).all()
    models = sorted(report["models"])
    assert sorted(frame.loc[frame["section"] == "model", "model"].unique()) == models
    assert (frame.loc[frame["section"] == "summary", "model"] == MEAN).all()
    # every figure of a model, estimate and interval as the JSON has them
    name = models[0]
    for metric, figure in report["models"][name]["metrics"].items():
        row = frame[(frame["section"] == "model") & (frame["model"] == name) & (frame["metric"] == metric)]
        assert len(row) == 1
        got = row.iloc[0]
        assert pd.isna(got["estimate"]) if figure["estimate"] is None else got["estimate"] == figure["estimate"]
        if figure["ci"]:
            assert (got["ci_low"], got["ci_high"]) == tuple(figure["ci"])
        else:
            assert pd.isna(got["ci_low"]) and pd.isna(got["ci_high"])
        assert got["unit"] == report["units"][metric] == metrics.lookup(dataset, metric).unit
        better = metrics.lookup(dataset, metric).higher_is_better
        assert pd.isna(got["higher_is_better"]) if better is None else got["higher_is_better"] == better
    parquet = pd.read_parquet(tmp_path / "report.parquet")
    assert list(parquet.columns) == list(COLUMNS) and len(parquet) == len(frame)
    pd.testing.assert_frame_equal(
        parquet.drop(columns=["n"]).astype(object).fillna(""), frame.drop(columns=["n"]).astype(object).fillna(""), check_dtype=False
    )
    assert set(report["units"]) == figure_names(report)


def test_counts_and_rates_are_named_apart_and_carry_their_units(tmp_path):
    release, predictions, options = case("misleadqa", tmp_path)
    assert main(["score", str(release), str(predictions), *options, "-o", str(tmp_path / "report.json")]) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    units = report["units"]
    assert units["responses.invalid.count"] == "count" and units["responses.invalid.rate"] == "fraction"
    assert "responses.invalid" not in units
    assert units["size.A"] == "count" and units["LR.S"] == "fraction" and units["delta.LR"] == "difference of fractions"
    release, predictions, options = case("gsm-ic", tmp_path / "g")
    assert main(["score", str(release), str(predictions), "-o", str(tmp_path / "g.json")]) == 0
    units = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))["units"]
    assert units["invalid"] == "fraction" and units["normalised.micro"] == "ratio"


def test_parquet_needs_an_output_file(tmp_path, capsys):
    release, predictions, _ = case("gsm-ic", tmp_path)
    assert main(["score", str(release), str(predictions), "--format", "parquet"]) == 2
    assert "give it with -o" in capsys.readouterr().err


def test_tidy_rows_name_pairs_and_sections():
    report = {
        "dataset": "x",
        "units": {"r": "correlation"},
        "models": {"a": {"metrics": {"m": {"estimate": 0.5, "ci": [0.1, 0.9], "n": 3}}}},
        "pairs": {
            "by_group": {
                "G": {
                    "metrics": {"r.mean": {"estimate": 0.1, "ci": None, "n": 4}},
                    "by_pair": {"a": {"b": {"r": {"estimate": 0.2, "ci": None, "n": 4}}}},
                }
            }
        },
    }
    rows = {(r["section"], r["model"], r["metric"]): r for r in tidy_rows(report)}
    assert set(rows) == {("model", "a", "m"), ("pairs.by_group.G", "(all pairs)", "r.mean"), ("pairs.by_group.G", "a / b", "r")}
    assert rows[("pairs.by_group.G", "a / b", "r")]["unit"] == "correlation"  # a dataset the registry does not hold: its units
    assert rows[("model", "a", "m")]["higher_is_better"] is None


def test_tidy_rows_take_unit_and_direction_from_the_registry_and_refuse_undeclared_figures():
    figure = {"estimate": 0.5, "ci": None, "n": 3}
    report = {"dataset": "misleadqa", "units": {"LR.S": "wrong"}, "models": {"a": {"metrics": {"LR.S": figure, "size.A": figure}}}}
    rows = {r["metric"]: r for r in tidy_rows(report)}
    assert (rows["LR.S"]["unit"], rows["LR.S"]["higher_is_better"]) == ("fraction", False)
    assert (rows["size.A"]["unit"], rows["size.A"]["higher_is_better"]) == ("count", None)
    report["models"]["a"]["metrics"]["LR.renamed"] = figure
    with pytest.raises(metrics.UndeclaredMetric, match="LR.renamed"):
        tidy_rows(report)


def test_markdown_reports_show_each_models_invalid_rate(tmp_path):
    release, predictions, options = case("misleadqa", tmp_path)
    assert main(["score", str(release), str(predictions), *options, "-o", str(tmp_path / "r.json")]) == 0
    assert main(["score", str(release), str(predictions), *options, "-o", str(tmp_path / "r.md")]) == 0
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    rates = {m: report["models"][m]["metrics"]["responses.invalid.rate"]["estimate"] for m in ("m1", "m2")}
    assert rates["m2"] > 0
    assert f"Invalid responses: m1 {100 * rates['m1']:.1f}%, m2 {100 * rates['m2']:.1f}%." in text
    table2 = text.split("## Table 2", 1)[1].split("##", 1)[0]
    assert "| Invalid |" in table2 and f"| {100 * rates['m2']:.1f} |" in table2
    release, predictions, options = case("gsm-ic", tmp_path / "g")
    assert main(["score", str(release), str(predictions), "-o", str(tmp_path / "g.md")]) == 0
    assert "Invalid answers (no number): alpha 11.1%." in (tmp_path / "g.md").read_text(encoding="utf-8")
