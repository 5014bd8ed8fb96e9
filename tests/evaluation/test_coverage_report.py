"""Honest coverage and request ids: `--requests` scores only the items asked for (a pilot's own accuracy, not
diluted by the items it never asked), every report says per model how many items had no prediction, and
the request ids `prompts` writes are read wherever an item id is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_eval_gsm_ic as gsm
import test_eval_misleadqa as mqa
import test_eval_pseudowords as pw

from ctxrobust.cli import main

GOLD = {"b1": "12", "b2": "1250", "b3": "7.5"}
BASE_OF = {v: b for v, b, *_ in gsm.VARIANTS}


def lines(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def cli_report(release, predictions, *flags) -> dict:
    target = Path(str(predictions) + ".report.json")
    assert main(["score", str(release), str(predictions), "--replicates", "50", *map(str, flags), "-o", str(target)]) == 0
    return json.loads(target.read_text(encoding="utf-8"))


@pytest.fixture
def pilot(tmp_path):
    """A pilot that asked for 5 variants (prompts' own requests file, cut to them) and got 4 right."""
    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path
    assert main(["prompts", str(release), "-o", str(tmp_path / "all.jsonl")]) == 0
    asked = ["v11", "v12", "v21", "v31", "v33"]
    kept = [line for line in (tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines() if json.loads(line)["item"] in asked]
    requests = lines(tmp_path / "requests.jsonl", kept)
    rows = [{"model": "pilot", "id": v, "answer": GOLD[BASE_OF[v]] if v != "v33" else "1"} for v in asked]
    return release, requests, lines(tmp_path / "pilot.jsonl", rows)


def test_requests_give_the_pilots_own_accuracy(pilot):
    release, requests, predictions = pilot
    report = cli_report(release, predictions, "--requests", requests)
    figures = report["models"]["pilot"]["metrics"]
    assert figures["micro"]["estimate"] == pytest.approx(0.8) and figures["micro"]["n"] == 5
    covered = report["coverage"]
    assert covered["items_in_release"] == 12 and covered["items_requested"] == 5
    assert covered["models"]["pilot"] == {"items_predicted": 5, "items_scored": 5, "missing": 0}
    assert report["predictions"]["problems"] == []


def test_without_requests_the_report_says_how_many_items_had_no_prediction(pilot):
    release, _, predictions = pilot
    report = cli_report(release, predictions)
    figures = report["models"]["pilot"]["metrics"]
    assert figures["micro"]["estimate"] == pytest.approx(4 / 9) and figures["micro"]["n"] == 9  # the 4 unasked count wrong
    covered = report["coverage"]
    assert covered["items_requested"] is None and covered["missing_counted_as"] == "wrong"
    assert covered["models"]["pilot"] == {"items_predicted": 5, "items_scored": 9, "missing": 4}
    assert any("no prediction for 4 of 9 variant(s)" in p["message"] for p in report["predictions"]["problems"])


def test_a_row_for_an_item_not_asked_for_is_a_problem_of_its_line(pilot, tmp_path):
    release, requests, predictions = pilot
    extra = lines(
        tmp_path / "extra.jsonl", [*map(json.loads, predictions.read_text().splitlines()), {"model": "pilot", "id": "v13", "answer": "12"}]
    )
    report = cli_report(release, extra, "--requests", requests)
    assert report["models"]["pilot"]["metrics"]["micro"]["estimate"] == pytest.approx(0.8)
    (problem,) = report["predictions"]["problems"]
    assert problem["line"] == 6 and "'v13' was not asked for by --requests" in problem["message"]


def test_a_run_record_without_a_selection_asks_for_every_item(pilot, tmp_path):
    release, _, predictions = pilot
    record = tmp_path / "pilot.jsonl.run.json"
    record.write_text(json.dumps({"dataset": "gsm-ic", "model": "pilot", "sampling_plan": {"samples": 1}}, indent=2), encoding="utf-8")
    assert cli_report(release, predictions, "--requests", record)["coverage"]["models"]["pilot"]["missing"] == 4
    record.write_text(
        json.dumps({"dataset": "gsm-ic", "sampling_plan": {}, "subset": {"kind": "items", "item_ids": ["v11", "v12"]}}, indent=2)
    )
    report = cli_report(
        release,
        lines(tmp_path / "two.jsonl", [{"model": "m", "id": "v11", "answer": "12"}, {"model": "m", "id": "v12", "answer": "1"}]),
        "--requests",
        record,
    )
    assert report["models"]["m"]["metrics"]["micro"]["estimate"] == pytest.approx(0.5)


def test_requests_of_another_dataset_are_refused_in_one_line(pilot, tmp_path, capsys):
    release, _, predictions = pilot
    other = lines(tmp_path / "other.jsonl", [{"id": "q1/S/0", "dataset": "misleadqa", "item": "q1", "condition": "S", "sample": 0}])
    assert main(["score", str(release), str(predictions), "--requests", str(other)]) == 2
    err = capsys.readouterr().err
    assert "a request of misleadqa, not of gsm-ic" in err and "Traceback" not in err


# ------------------------------------------------------------------------------------------ request ids
def test_gsm_ic_request_ids_are_read_as_their_items(tmp_path):
    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS, gsm.SUBSET).path
    plain = gsm.write_predictions(tmp_path / "plain.jsonl", gsm.ALPHA)
    as_requests = [{**row, "id": f"{row['id']}/-/0"} for row in gsm.ALPHA]
    ids = gsm.write_predictions(tmp_path / "ids.jsonl", as_requests)
    a, b = cli_report(release, plain), cli_report(release, ids)
    assert a["models"] == b["models"] and b["predictions"]["problems"] == []


def test_request_ids_of_another_release_are_one_line(tmp_path, capsys):
    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path
    rows = [*gsm.ALPHA] + [{"model": "alpha", "id": f"pool-{k:04d}/-/0", "answer": "1"} for k in range(30)]
    report = cli_report(release, gsm.write_predictions(tmp_path / "p.jsonl", rows))
    foreign = [p for p in report["predictions"]["problems"] if "request ids of another release" in p["message"]]
    assert len(foreign) == 1 and foreign[0]["line"] is None
    assert foreign[0]["message"].startswith("30 id(s) look like request ids of another release (e.g. 'pool-0000/-/0'")
    assert report["predictions"]["excluded"] == 30
    assert not any("unknown id" in p["message"] for p in report["predictions"]["problems"])


def test_a_gsm_ic_request_id_with_a_condition_is_a_problem_of_its_line(tmp_path):
    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path
    report = cli_report(
        release, gsm.write_predictions(tmp_path / "p.jsonl", [*gsm.ALPHA, {"model": "alpha", "id": "b1/S/1", "answer": "12"}])
    )
    (problem,) = [p for p in report["predictions"]["problems"] if p["line"] == 13]
    assert "GSM-IC requests have none" in problem["message"]


def test_misleadqa_request_ids_name_the_condition(tmp_path):
    release = mqa.write_release(tmp_path / "release", mqa.MAIN, mqa.SUPPLEMENT)
    rows = [json.loads(line) for line in mqa.prediction_lines("m1", mqa.M1)]
    plain = lines(tmp_path / "plain.jsonl", rows)
    ids = lines(
        tmp_path / "ids.jsonl", [{"model": r["model"], "id": f"{r['id']}/{r['condition']}/0", "response": r["response"]} for r in rows]
    )
    a, b = cli_report(release, plain, "--min-clusters", 1), cli_report(release, ids, "--min-clusters", 1)
    assert b["predictions"]["problems"] == a["predictions"]["problems"]
    assert a["models"] == b["models"]


def test_pseudowords_request_ids_name_context_and_trial(tmp_path):
    release = pw.make_release(tmp_path / "release").path
    source = pw.simulated_file(tmp_path, models=1, n=20)
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    ids = lines(
        tmp_path / "ids.jsonl",
        [{"model": r["model"], "id": f"{r['id']}/{r['context'] or '-'}/{r['trial']}", "correct": r["correct"]} for r in rows],
    )
    fast = ["--null-experiments", "20", "--splits", "5"]
    a, b = cli_report(release, source, *fast), cli_report(release, ids, *fast)
    assert a["models"] == b["models"] and b["predictions"]["excluded"] == 0


# ------------------------------------------------------------------------------------------------ API
def test_api_rows_and_dataframe_score_like_the_file(tmp_path):
    import pandas as pd

    import ctxrobust

    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS, gsm.SUBSET).path
    path = gsm.write_predictions(tmp_path / "p.jsonl", gsm.ALPHA + gsm.BETA)
    loaded = ctxrobust.load_release(release)
    by_path = ctxrobust.score(loaded, path, replicates=50)
    by_rows = ctxrobust.score(loaded, gsm.ALPHA + gsm.BETA, replicates=50)
    by_frame = ctxrobust.score(loaded, pd.DataFrame(gsm.ALPHA + gsm.BETA), replicates=50)
    assert by_rows.to_dict()["models"] == by_path.to_dict()["models"] == by_frame.to_dict()["models"]
    assert by_rows.figure("alpha", "micro").estimate == pytest.approx(7 / 9)
    assert by_rows.coverage.models["beta"].model_dump() == {"items_predicted": 8, "items_scored": 8, "missing": 0}  # GSM-IC-4K and bases
    assert by_rows.coverage.models["alpha"].items_scored == 12


def test_api_problems_are_structured_and_nothing_is_printed(tmp_path, capsys):
    import ctxrobust

    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path
    rows = [*gsm.ALPHA, {"model": "alpha", "id": "v99", "answer": "1"}, {"model": "alpha", "id": "b1", "answer": "12"}]
    report = ctxrobust.score(release, rows, replicates=0)
    assert capsys.readouterr().err == ""
    kinds = {(p.line, p.kind) for p in report.problems}
    assert ("row 13", "row") in kinds and ("row 14", "row") in kinds
    duplicate = next(p for p in report.problems if p.line == "row 14")
    assert duplicate.message == "duplicate row (same key as row 1)" and duplicate.file == "rows"


def test_importing_ctxrobust_stays_light():
    import subprocess
    import sys

    code = "import sys, ctxrobust; print(any(m in sys.modules for m in ('numpy', 'pandas', 'pyarrow', 'pydantic', 'ctxrobust.api')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_api_reads_a_table_record_by_record_like_the_command(tmp_path):
    import ctxrobust

    release = gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path
    table = tmp_path / "p.csv"
    table.write_text("model,id,answer,sample\nalpha,b1,12,\nalpha,v11,12,x\nalpha,v12,12,\nalpha,v12,13,\nalpha,v99,1,\n", encoding="utf-8")
    command = cli_report(release, table)
    report = ctxrobust.score(release, table, replicates=50)
    assert report.to_dict()["models"] == command["models"]
    pairs = [(p["line"], p["message"]) for p in report.to_dict()["predictions"]["problems"]]
    assert pairs == [(p["line"], p["message"]) for p in command["predictions"]["problems"]]
    assert [p.model for p in report.problems if p.line is None] == ["alpha", "alpha"]  # said of its model, not only in words
    assert [(p.line, p.kind) for p in report.problems][:3] == [(3, "row"), (5, "row"), (6, "row")]
    assert all(not m.startswith("/tmp/ctxrobust-") for m in report.messages)  # the file's own name and lines


def test_pseudowords_request_ids_with_their_fields_are_read_as_their_question(tmp_path):
    """A row that gives its context and trial and a request id as its id: the question is the id's item."""
    release = pw.make_release(tmp_path / "release").path
    source = pw.simulated_file(tmp_path, models=1, n=20)
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    ids = lines(tmp_path / "ids.jsonl", [{**r, "id": f"{r['id']}/{r['context'] or '-'}/{r['trial']}"} for r in rows])
    fast = ["--null-experiments", "20", "--splits", "5"]
    assert cli_report(release, ids, *fast)["models"] == cli_report(release, source, *fast)["models"]
