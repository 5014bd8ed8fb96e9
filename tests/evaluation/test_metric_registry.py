"""The metric registry: every figure the three scorers write is declared, every declaration is written by some
scoring (the input or option it names exercised), a renderer asked for an undeclared figure fails loudly,
the leaderboard ranks on any declared figure in its registry direction, and docs/metrics.md is the registry's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import test_eval_gsm_ic as gsm
import test_eval_misleadqa as mqa
import test_eval_misleadqa_diagnostics as mqd
import test_eval_pseudowords as pw
import test_submissions as subs
from paths import REPO

from ctxrobust import registry
from ctxrobust.cli import main
from ctxrobust.evaluation import leaderboard as lb
from ctxrobust.evaluation import metrics
from ctxrobust.evaluation.gsm_ic import render as gsm_render
from ctxrobust.evaluation.metrics import UndeclaredMetric
from ctxrobust.evaluation.report import checked, is_figure, with_units
from ctxrobust.evaluation.summary import summary_table
from ctxrobust.evaluation.tidy import tidy_rows

FAST = ["--replicates", "30", "--seed", "1"]
M1_SUPPLEMENT_CF = {"c1": ["C", "C", "A", "A", "C", "E", "C", "A"]}  # CF-prompt responses on the condition supplement
PW_FAST = ["--replicates", "30", "--null-experiments", "30", "--splits", "6"]


def _json(args: list[str], out: Path) -> dict:
    assert main(["score", *map(str, args), "-o", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _lines(path: Path, lines: list) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8")
    return path


def _gsm_reports(tmp: Path) -> dict[str, dict]:
    release = gsm.write_release(tmp / "release", gsm.BASES, gsm.VARIANTS, gsm.SUBSET).path
    plain = _lines(tmp / "alpha.jsonl", gsm.ALPHA)
    samples = _lines(tmp / "all.jsonl", gsm.ALPHA + gsm.BETA)  # beta: several samples per id (self-consistency)
    a = _lines(tmp / "a.jsonl", subs.rows("a", subs.RIGHT_A))
    b = _lines(tmp / "b.jsonl", subs.rows("b", subs.RIGHT_B))
    return {
        "plain": _json([release, plain, *FAST], tmp / "plain.json"),
        "options": _json([release, samples, *FAST], tmp / "options.json"),
        "submissions": _json([release, a, b, *FAST], tmp / "submissions.json"),
    }


def _misleadqa_reports(tmp: Path) -> dict[str, dict]:
    release = mqa.write_release(tmp / "release", mqa.MAIN, mqa.SUPPLEMENT)
    main_lines = mqa.prediction_lines("m1", mqa.M1) + mqa.prediction_lines("m2", mqa.M2)
    everything = (
        main_lines
        + mqa.prediction_lines("m1", mqa.M1_CF, "cf")
        + mqa.prediction_lines("m1", mqa.M1_SUPPLEMENT)
        + mqa.prediction_lines("m1", M1_SUPPLEMENT_CF, "cf")
        + mqd.order_lines()
        + mqd.scope_lines()
    )
    plain, full = _lines(tmp / "plain.jsonl", main_lines), _lines(tmp / "full.jsonl", everything)
    x = _lines(tmp / "x.jsonl", mqa.prediction_lines("m1", mqa.M1))
    y = _lines(tmp / "y.jsonl", mqa.prediction_lines("m2", mqa.M2))
    few = ["--min-clusters", "0"]
    return {
        "plain": _json([release, plain, *FAST, *few], tmp / "plain.json"),
        "options": _json([release, full, *FAST, *few, "--exclude-models", "m2"], tmp / "options.json"),
        "submissions": _json([release, x, y, *FAST, *few], tmp / "submissions.json"),
    }


def _pseudowords_reports(tmp: Path) -> dict[str, dict]:
    release = pw.make_release(tmp / "release").path
    rng = np.random.default_rng(5)
    p0 = rng.uniform(0.3, 0.9, 30)
    one = pw.binary_rows("model-0", p0, p0, rng)
    rows = one + pw.binary_rows("model-1", p0, np.clip(p0 + 0.2, 0, 1), rng)
    rows += pw.binary_rows("model-0", p0, np.clip(p0 - 0.2, 0, 1), rng, contexts=pw.TOK, base_trials=0)  # a second context group
    annotations = _lines(tmp / "ambiguity.jsonl", [{"id": f"q{q:03d}", "ambiguity": int(q % 3)} for q in range(30)])
    x = _lines(tmp / "x.jsonl", pw.binary_rows("x", p0, p0, rng))
    y = _lines(tmp / "y.jsonl", pw.binary_rows("y", p0, np.clip(p0 + 0.1, 0, 1), rng))
    return {
        "plain": _json([release, _lines(tmp / "plain.jsonl", one), *PW_FAST], tmp / "plain.json"),
        "options": _json([release, _lines(tmp / "all.jsonl", rows), *PW_FAST, "--annotations", annotations], tmp / "options.json"),
        "submissions": _json([release, x, y, *PW_FAST], tmp / "submissions.json"),
    }


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict[str, dict]]:
    """dataset -> case -> JSON report: "plain" (one file, default options), "options" (every optional input
    and option that adds figures), "submissions" (two files scored together: leaderboard and differences)."""
    tmp = tmp_path_factory.mktemp("registry")
    out = {}
    for dataset, make in (("gsm-ic", _gsm_reports), ("misleadqa", _misleadqa_reports), ("pseudowords", _pseudowords_reports)):
        (tmp / dataset).mkdir()
        out[dataset] = make(tmp / dataset)
    return out


def figure_nodes(node, path: tuple = ()) -> list[tuple[tuple, str, dict]]:
    """(path, name, figure) of every figure anywhere in a report: models -> metrics, summaries, pairs,
    differences, leaderboard rows; every node whose value is {"estimate", "ci", "n"}."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if is_figure(value):
                found.append((path, str(key), value))
            else:
                found += figure_nodes(value, (*path, str(key)))
    elif isinstance(node, list):
        for value in node:
            found += figure_nodes(value, (*path, "[]"))
    return found


def named_figures(report: dict) -> list[tuple[tuple, str]]:
    """The figures of a report by metric name; a leaderboard row's "invalid" holds the figure its board names."""
    out = []
    for path, name, _ in figure_nodes(report):
        if path[:1] == ("leaderboard",) and name == "invalid":
            name = report["leaderboard"]["invalid_metric"]
        out.append((path, name))
    return out


def test_every_figure_of_every_report_is_declared_with_its_unit(reports):
    undeclared = []
    for dataset, cases in reports.items():
        for case, report in cases.items():
            assert report["dataset"] == dataset
            figures = named_figures(report)
            assert len(figures) > 20
            for path, name in figures:
                declared = metrics.find(dataset, name)
                if declared is None:
                    undeclared.append(f"{dataset} {case}: {'.'.join(path)} -> {name}")
                else:
                    assert report["units"].get(name, declared.unit) == declared.unit, (dataset, name)
            assert set(report["units"]) == {name for _, name in figures}
    assert undeclared == []


def test_every_declaration_is_produced_and_optional_ones_only_with_their_input(reports):
    produced: dict[str, set[str]] = {}
    for dataset, cases in reports.items():
        for case, report in cases.items():
            found = {metrics.find(dataset, name) for _, name in named_figures(report)}
            produced.setdefault(dataset, set()).update(m.name for m in found)
            if case == "plain":  # one file, default options: nothing that needs an input or option of its own
                conditional = sorted(m.name for m in found if m.produced_when)
                assert conditional == [], (dataset, conditional)
    for dataset in metrics.datasets():
        never = [m.name for m in metrics.declared(dataset) if m.name not in produced[dataset]]
        assert never == [], f"{dataset}: declared but never produced: {never}"


def test_declarations_are_well_formed():
    seen = set()
    for m in metrics.METRICS:
        assert (m.dataset, m.name) not in seen
        seen.add((m.dataset, m.name))
        assert m.unit in metrics.UNITS and m.higher_is_better in (True, False, None)
        assert m.section and m.interval and m.description and "\n" not in m.description
        assert m.dataset in registry.names()
        if m.unit == metrics.COUNT:
            assert m.higher_is_better is None and m.interval == metrics.NONE
    assert metrics.lookup("gsm-ic", "4k.micro.topic=off").name == "<scope>micro.<factor>"
    assert metrics.lookup("gsm-ic", "macro.multistep").section == "§3.2, Table 3"
    assert metrics.lookup("misleadqa", "supplement.cf.common.S_with_G.gold.cf").name == "<part>cf.common.S_with_G.gold.cf"
    assert metrics.lookup("misleadqa", "dependency_groups.option_order.stable.mean.delta.LR").unit == metrics.DIFFERENCE
    assert metrics.lookup("pseudowords", "INS.adjusted").unit == metrics.DIFFERENCE  # observed minus a floor: can be < 0
    assert metrics.lookup("misleadqa", "bootstrap.undefined.dependency_groups.delta.LR").unit == metrics.COUNT
    assert metrics.lookup("pseudowords", "difference.INS.adjusted").higher_is_better is None


@pytest.mark.parametrize(
    ("dataset", "name"),
    [
        ("gsm-ic", "accuracy.micro"),  # a renamed figure
        ("gsm-ic", "micro.topic=elsewhere"),  # a level the family does not hold
        ("gsm-ic", "difference.accuracy.micro"),  # a difference of an undeclared figure
        ("misleadqa", "LR.G"),
        ("gsm-ic", "difference.difference.micro"),  # no block repeats its own figures
        ("gsm-ic", "difference.invalid"),  # differences carry the headline accuracies only
        ("misleadqa", "difference.gold.S"),
        ("misleadqa", "dependency_groups.size.items"),  # not a contrast
        ("misleadqa", "dependency_groups.LR.S"),  # rates get no dependency-group interval
        ("misleadqa", "bootstrap.undefined.size.A"),  # a count has no interval
        ("misleadqa", "bootstrap.undefined.difference.LR.S"),
        ("misleadqa", "supplement.group.fred.time.LR.S"),  # the supplement has no source-scope groups
        ("pseudowords", "difference.tail_share"),
        ("pseudowords", "INS.adjusted.extra"),
    ],
)
def test_lookup_refuses_an_undeclared_name_in_one_line(dataset, name):
    with pytest.raises(UndeclaredMetric) as caught:
        metrics.lookup(dataset, name)
    message = str(caught.value)
    assert "\n" not in message and repr(name) in message and dataset in message


def test_condition_supplement_responses_to_the_cf_prompt_score_with_declared_figures(reports):
    report = reports["misleadqa"]["options"]
    names = {name for _, name in named_figures(report)}
    assert {"supplement.cf.common.S_with_G.gold.cf", "supplement.cf.kept.A_common", "supplement.cf.outcome.all.G.gold"} <= names
    assert report["units"]["supplement.cf.size.A_common"] == metrics.COUNT
    # every block that repeats figures repeats declared, produced ones
    for name in names:
        for block in ("difference.", "dependency_groups.", "bootstrap.undefined."):
            if name.startswith(block) and block != "bootstrap.undefined.":
                assert metrics.find("misleadqa", name[len(block) :]) is not None, name


def test_lookup_of_an_unknown_dataset_names_the_declared_ones():
    with pytest.raises(UndeclaredMetric, match="declared: gsm-ic, misleadqa, pseudowords"):
        metrics.lookup("nope", "micro")


def test_a_scorer_writing_an_undeclared_figure_fails_loudly():
    report = {"dataset": "gsm-ic", "models": {"m": {"metrics": {"micro": {"estimate": 0.5, "ci": None, "n": 2}}}}}
    assert with_units(report)["units"] == {"micro": "fraction"}
    report["models"]["m"]["metrics"]["accuracy.micro"] = {"estimate": 0.5, "ci": None, "n": 2}
    with pytest.raises(UndeclaredMetric, match="accuracy.micro"):
        with_units(report)


def test_a_renderer_asked_for_a_renamed_figure_fails_instead_of_printing_na(reports, monkeypatch):
    report = reports["gsm-ic"]["plain"]
    assert "| alpha |" in gsm_render.render_markdown(report)
    metrics_block = checked(report)["models"]["alpha"]["metrics"]
    assert metrics_block.get("sc.recall") is None  # declared, not produced here: a legitimate gap
    with pytest.raises(UndeclaredMetric):
        metrics_block.get("accuracy.micro")
    with pytest.raises(UndeclaredMetric):
        "accuracy.micro" in metrics_block  # noqa: B015
    renamed = [("Micro Overall" if key == "micro" else h, "accuracy.micro" if key == "micro" else key) for h, key in gsm_render.TABLE3]
    monkeypatch.setattr(gsm_render, "TABLE3", renamed)
    with pytest.raises(UndeclaredMetric, match="accuracy.micro"):
        gsm_render.render_markdown(report)
    with pytest.raises(UndeclaredMetric, match="accuracy.micro"):
        gsm_render.render_html(report)


def test_the_leaderboard_and_tidy_rows_refuse_undeclared_columns(reports):
    report = json.loads(json.dumps(reports["gsm-ic"]["submissions"]))
    assert " micro [95% CI] |" in lb.leaderboard_markdown(report)
    report["leaderboard"]["columns"].append("accuracy.micro")
    with pytest.raises(UndeclaredMetric):
        lb.leaderboard_markdown(report)
    with pytest.raises(UndeclaredMetric):
        lb.leaderboard_csv(report)
    report["models"]["a"]["metrics"]["accuracy.micro"] = {"estimate": 0.5, "ci": None, "n": 3}
    with pytest.raises(UndeclaredMetric):
        tidy_rows(report)


def _board_report() -> dict:
    """Three models whose order differs by figure: micro a > b > c, invalid (lower better) c < a < b."""
    figures = {"a": (0.9, 0.2, 0.5), "b": (0.6, 0.3, None), "c": (0.3, 0.1, 0.9)}
    models = {
        name: {
            "metrics": {
                "micro": {"estimate": micro, "ci": None, "n": 10},
                "invalid": {"estimate": invalid, "ci": None, "n": 10},
                **({"normalised.micro": {"estimate": norm, "ci": None, "n": 10}} if norm is not None else {}),
            }
        }
        for name, (micro, invalid, norm) in figures.items()
    }
    return {"dataset": "gsm-ic", "models": models, "units": {}}


class _Sub:
    status = "scored"

    def __init__(self, label: str, model: str) -> None:
        self.label, self.models = label, {model: model}


def test_the_leaderboard_ranks_on_any_declared_figure_in_its_direction():
    report, spec = _board_report(), registry.get("gsm-ic").load("leaderboard")
    owners = [_Sub(f"{m}.jsonl", m) for m in "abc"]
    default = lb.leaderboard(report, spec, owners)
    assert (default["ranked_by"], default["better"]) == ("micro", "higher")
    assert [r["model"] for r in default["rows"]] == ["a", "b", "c"]
    by_invalid = lb.leaderboard(report, spec, owners, rank_by="invalid")  # not a headline figure; lower is better
    assert (by_invalid["ranked_by"], by_invalid["better"]) == ("invalid", "lower")
    assert [r["model"] for r in by_invalid["rows"]] == ["c", "a", "b"] and [r["rank"] for r in by_invalid["rows"]] == [1, 2, 3]
    assert by_invalid["columns"] == ["micro", "invalid"] and by_invalid["rows"][0]["submission"] == "c.jsonl"
    by_norm = lb.leaderboard(report, spec, owners, rank_by="normalised.micro")  # higher is better; b has none: last
    assert [r["model"] for r in by_norm["rows"]] == ["c", "a", "b"]
    report["leaderboard"] = by_invalid
    text = lb.leaderboard_markdown(report)
    assert "Ranked by invalid; lower is better." in text and text.index("| c |") < text.index("| a |") < text.index("| b |")
    csv_lines = lb.leaderboard_csv(report).splitlines()
    assert csv_lines[0].startswith("rank,model,submission,micro,") and csv_lines[1].startswith("1,c,c.jsonl,0.3,")
    assert [r["model"] for r in lb.rerank(report, spec, "micro")["rows"]] == ["a", "b", "c"]


@pytest.mark.parametrize(("rank_by", "message"), [("accuracy.micro", "no figure named"), ("difference.micro", "no better direction")])
def test_ranking_on_an_undeclared_or_directionless_figure_is_one_clear_error(rank_by, message):
    from ctxrobust.errors import CtxRobustError

    with pytest.raises(CtxRobustError, match=message):
        lb.leaderboard(_board_report(), registry.get("gsm-ic").load("leaderboard"), [], rank_by=rank_by)


def test_the_leaderboards_of_real_submissions_rank_on_the_headline(reports):
    for dataset, cases in reports.items():
        board = cases["submissions"]["leaderboard"]
        spec = registry.get(dataset).load("leaderboard")
        assert board["ranked_by"] == lb.headline(spec)[0]
        assert board["better"] == metrics.lookup(dataset, board["ranked_by"]).better
        values = [r["metrics"][board["ranked_by"]]["estimate"] for r in board["rows"]]
        assert values == sorted(values, reverse=board["better"] == "higher")


def test_registry_specs_name_declared_figures_in_their_declared_direction():
    for dataset in metrics.datasets():
        spec = registry.get(dataset).load("leaderboard")
        assert spec["headline"]
        for name, better in spec["headline"]:
            assert metrics.lookup(dataset, name).better == better, (dataset, name)
        for name in spec["invalid"]:
            assert metrics.lookup(dataset, name).higher_is_better is False


def test_the_summary_and_tidy_rows_take_units_and_directions_from_the_registry(reports):
    report = reports["misleadqa"]["options"]
    spec = registry.get("misleadqa").load("leaderboard")
    legend = summary_table(report, spec).splitlines()[-1]
    assert "lower is better: LR.F, LR.S, RLR.F, RLR.S" in legend
    for row in tidy_rows(report):
        declared = metrics.lookup("misleadqa", row["metric"])
        assert (row["unit"], row["higher_is_better"]) == (declared.unit, declared.higher_is_better)


def test_the_metrics_page_is_the_registry():
    page = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert page == metrics.markdown_page(), "docs/metrics.md is stale: python -m ctxrobust.evaluation.metrics > docs/metrics.md"
    for m in metrics.METRICS:
        assert f"| `{m.name}` |" in page
