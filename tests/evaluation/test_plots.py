"""Interval plots: a row per model with its estimate and interval, legible with many models, in every HTML report."""

from __future__ import annotations

import pytest
from test_tidy_reports import case

from ctxrobust.cli import main
from ctxrobust.evaluation.metrics import UndeclaredMetric
from ctxrobust.evaluation.plots import interval_figure, percent_figures


def fake_report(n_models: int) -> dict:
    models = {
        f"model-{i:02d}": {
            "metrics": {
                "micro": {"estimate": 0.5 + i / 100, "ci": [0.4 + i / 100, 0.6 + i / 100], "n": 9},
                "macro": {"estimate": 0.3, "ci": None, "n": 3},
            }
        }
        for i in range(n_models)
    }
    return {"models": models}


def test_every_model_is_a_labelled_row_with_its_interval():
    figure = interval_figure(fake_report(10), ["micro", "macro", "absent"], {"micro", "macro"})
    axes = figure.axes
    assert len(axes) == 2  # a panel per figure some model has
    labels = [t.get_text() for t in axes[0].get_yticklabels()]
    assert labels == [f"model-{i:02d}" for i in range(10)] and not axes[0].get_legend()
    lines = {tuple(line.get_ydata()): line.get_xdata() for line in axes[0].get_lines() if len(line.get_xdata()) == 2}
    assert list(lines[(9, 9)]) == pytest.approx([40.0, 60.0])  # model-00 at the top, its interval ×100
    assert len([line for line in axes[1].get_lines() if len(line.get_xdata()) == 2]) == 0  # no interval, no bar
    assert interval_figure(fake_report(30), ["micro"]).get_figheight() > figure.get_figheight()  # rows keep their height


@pytest.mark.parametrize("dataset", ["gsm-ic", "misleadqa", "pseudowords"])
def test_html_reports_plot_the_intervals(dataset, tmp_path):
    release, predictions, options = case(dataset, tmp_path)
    assert main(["score", str(release), str(predictions), *options, "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "intervals by model</h2><img" in page and "the bar its interval" in page


def test_which_panels_are_percentages_is_the_registrys():
    report = {"dataset": "pseudowords", "units": {"INS": "correlation"}, "models": {}}  # the registry wins over the report
    assert percent_figures(report, ["INS", "WTD.adjusted", "split_half.r", "jaccard.improved"]) == {"INS", "WTD.adjusted"}
    with pytest.raises(UndeclaredMetric, match="INS.renamed"):
        percent_figures(report, ["INS.renamed"])
    other = {"dataset": "elsewhere", "units": {"a": "fraction", "b": "correlation"}, "models": {}}
    assert percent_figures(other, ["a", "b", "c"]) == {"a", "c"}  # a dataset the registry does not hold: its units
