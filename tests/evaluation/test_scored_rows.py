"""Scorers hand back what they found as data: `score_rows` returns the report with typed problems and
notices; `score` prints exactly those lines; the submissions layer and the API place them by their fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_eval_gsm_ic as gsm
import test_eval_misleadqa as mqa

from ctxrobust import registry
from ctxrobust.evaluation import submissions
from ctxrobust.evaluation.gsm_ic import scorer as gsm_scorer
from ctxrobust.evaluation.misleadqa import scorer as mqa_scorer
from ctxrobust.evaluation.rows import Notice, Problem
from ctxrobust.release import Release

BROKEN = [*gsm.ALPHA[:4], "{not json", {"model": "alpha", "id": "v99", "answer": "1"}, {"model": "alpha", "id": "b1", "answer": "12"}]


def test_score_rows_returns_typed_problems_and_notices_and_prints_nothing(tmp_path, capsys):
    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS)
    path = gsm.write_predictions(tmp_path / "p.jsonl", BROKEN)
    scored = gsm_scorer.score_rows(release, path, {"replicates": 0})
    assert capsys.readouterr().err == ""
    shown = str(path)
    rows = [(p.line, p.kind) for p in scored.problems if p.kind == "row"]
    assert rows == [(5, "row"), (6, "row"), (7, "row")]
    duplicate = next(p for p in scored.problems if p.line == 7)
    assert duplicate.same_as == 1 and duplicate.file == shown and duplicate.message == "duplicate row (same key as line 1)"
    missing = [p for p in scored.problems if p.kind == "missing"]
    assert missing and all(p.model == "alpha" and p.line is None for p in missing)
    assert scored.notices == [Notice(shown, "scored", "scored 4 valid row(s); 3 excluded, see 'problems' in the report")]
    assert [{"line": p.line, "message": p.message} for p in scored.problems] == [
        {k: v for k, v in entry.items() if k in ("line", "message")} for entry in scored.report["predictions"]["problems"]
    ]


def test_score_prints_the_lines_score_rows_echoes_in_the_same_order(tmp_path, capsys):
    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS)
    path = gsm.write_predictions(tmp_path / "p.jsonl", BROKEN)
    echoed: list[str] = []
    scored = gsm_scorer.score_rows(release, path, {"replicates": 0}, echo=echoed.append)
    assert echoed == [p.render() for p in scored.problems] + [n.render() for n in scored.notices]
    capsys.readouterr()
    report = gsm_scorer.score(release, path, {"replicates": 0})
    assert capsys.readouterr().err.splitlines() == echoed and report == scored.report


def test_misleadqa_warnings_are_notices_and_submissions_name_themselves(mqa_mini, tmp_path):
    release, predictions = mqa_mini
    scored = mqa_scorer.score_rows(release, predictions, {"replicates": 0, "min_clusters": 1})
    warnings = [n for n in scored.notices if n.kind == "warning"]
    assert warnings and all(n.message.startswith("warning: ") for n in warnings)
    assert any(n.message.startswith("warning: model 'm1' enters the means") for n in warnings)
    folder = tmp_path / "subs"
    folder.mkdir()
    for model in ("m1", "m2"):
        kept = [line for line in predictions.read_text(encoding="utf-8").splitlines() if json.loads(line)["model"] == model]
        (folder / f"{model}.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    dataset = registry.get("misleadqa")
    options = dataset.load("score_options")(replicates=0, min_clusters=1)
    logged: list[str] = []
    submissions.score_submissions(release, dataset, [folder], options, False, logged.append)
    assert any(line.startswith("submissions: warning: model 'm1' enters the means") for line in logged), logged
    assert not any(submissions.STREAM in line for line in logged)


def test_the_api_types_each_submissions_problems_by_its_fields(tmp_path):
    import ctxrobust

    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path
    a = gsm.write_predictions(tmp_path / "a.jsonl", gsm.ALPHA)
    b = gsm.write_predictions(tmp_path / "b.jsonl", [*gsm.ALPHA[:4], "{not json", {"model": "alpha", "id": "v99", "answer": "1"}])
    report = ctxrobust.score(release, [a, b], replicates=0)
    found = [(p.file, p.line, p.kind) for p in report.problems]
    assert ("b.jsonl", 5, "row") in found and ("b.jsonl", 6, "row") in found
    missing = [p for p in report.problems if p.kind == "missing"]
    assert missing and all(p.file == "b.jsonl" and p.model == "alpha [b.jsonl]" for p in missing)
    assert not any(p.file == "a.jsonl" for p in report.problems)
    assert not any(m.startswith("<submissions>") for m in report.messages)


def test_problem_fields_render_as_the_command_prints_them():
    assert Problem("p.jsonl", 3, "row", "not valid JSON").render() == "p.jsonl:3: not valid JSON"
    assert Problem("p.jsonl", None, "missing", "model 'm': no prediction", model="m").render() == "p.jsonl: model 'm': no prediction"
    assert Notice("p.jsonl", "warning", "warning: few clusters").render() == "p.jsonl: warning: few clusters"


def _mini(tmp_path: Path):
    release = mqa.write_release(tmp_path / "release", mqa.MAIN, mqa.SUPPLEMENT)
    lines = (
        mqa.prediction_lines("m1", mqa.M1)
        + mqa.prediction_lines("m1", mqa.M1_CF, "cf")
        + mqa.prediction_lines("m1", mqa.M1_SUPPLEMENT)
        + mqa.prediction_lines("m2", mqa.M2)
    )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Release(release), predictions


@pytest.fixture
def mqa_mini(tmp_path):
    return _mini(tmp_path)


def test_a_scorer_without_score_rows_gives_the_problems_its_report_holds(tmp_path, capsys):
    from ctxrobust.evaluation.predictions import rows_scorer

    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS)
    path = gsm.write_predictions(tmp_path / "p.jsonl", BROKEN)

    def external(release, rows, options):  # a dataset's scorer whose module has no score_rows
        return gsm_scorer.score(release, rows, options)

    scored = rows_scorer(external)(release, path, {"replicates": 0})
    assert capsys.readouterr().err  # it prints its own lines
    expected = gsm_scorer.score_rows(release, path, {"replicates": 0})
    assert [(p.line, p.kind, p.message, p.model, p.same_as) for p in scored.problems if p.line is not None] == [
        (p.line, p.kind, p.message, p.model, p.same_as) for p in expected.problems if p.line is not None
    ]
    assert {p.kind for p in scored.problems if p.line is None} == {"file"} and scored.notices == []
