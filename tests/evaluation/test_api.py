"""The Python scoring API: what it accepts (rows, a DataFrame, paths), how it refuses bad input in one line,
and the problems it returns typed (nothing printed)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import test_eval_gsm_ic as gsm
import test_eval_pseudowords as pw

import ctxrobust
from ctxrobust.cli import main
from ctxrobust.errors import CtxRobustError, PredictionsError
from ctxrobust.evaluation.rows import JsonlRows, Problem, RecordRows

REPO = Path(__file__).resolve().parents[2]
FOREIGN = [{"model": "delta", "id": f"pool-{k:04d}/-/0", "answer": "1"} for k in range(4)]


def write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def gsm_release(tmp_path):
    return gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path


# ------------------------------------------------------------------------------------------ DataFrames
def test_a_dataframe_of_pseudowords_predictions_scores_like_its_file(tmp_path):
    """An empty `context` cell is the no-context baseline (null), as the CSV reader reads it."""
    import pandas as pd

    release = pw.make_release(tmp_path / "release").path
    source = pw.simulated_file(tmp_path, models=1, n=20)
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    options = {"replicates": 50, "null_experiments": 20, "splits": 5}
    by_file = ctxrobust.score(release, source, **options)
    by_frame = ctxrobust.score(release, pd.DataFrame(rows), **options)
    assert by_frame.to_dict()["models"] == by_file.to_dict()["models"]
    assert by_frame.to_dict()["predictions"]["excluded"] == 0


def test_the_example_pseudowords_predictions_read_from_a_dataframe():
    import pandas as pd

    from ctxrobust.evaluation.rows import as_rows

    path = REPO / "examples" / "pseudowords" / "predictions.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    frame = pd.DataFrame(rows)
    read = [json.loads(raw) for _, raw in as_rows(frame, "pseudowords").raw()]
    assert [r.get("context", "absent") for r in read] == [r["context"] for r in rows]
    assert all("score" not in r and "correct" not in r for r in read)  # an optional field that cannot be null: left out


# ------------------------------------------------------------------------------------------ refusals
def test_one_dict_is_refused_in_one_line(gsm_release):
    with pytest.raises(PredictionsError, match="give a list of rows"):
        ctxrobust.score(gsm_release, {"model": "alpha", "id": "b1", "answer": "12"}, replicates=0)


def test_no_rows_say_so(gsm_release):
    with pytest.raises(PredictionsError) as caught:
        ctxrobust.score(gsm_release, [], replicates=0)
    assert "no rows given" in str(caught.value) and "empty" not in str(caught.value)


def test_a_rows_source_is_scored_as_given(gsm_release, tmp_path):
    path = gsm.write_predictions(tmp_path / "p.jsonl", gsm.ALPHA)
    by_source = ctxrobust.score(gsm_release, JsonlRows(path), replicates=50)
    assert by_source.to_dict()["models"] == ctxrobust.score(gsm_release, path, replicates=50).to_dict()["models"]
    by_records = ctxrobust.score(gsm_release, RecordRows(gsm.ALPHA), replicates=50)
    assert by_records.to_dict()["models"] == by_source.to_dict()["models"]


def test_strict_refusal_names_no_printed_lines_and_carries_the_problems(gsm_release, capsys):
    rows = [*gsm.ALPHA, {"model": "alpha", "id": "v99", "answer": "1"}]
    with pytest.raises(PredictionsError) as caught:
        ctxrobust.score(gsm_release, rows, replicates=0, strict=True)
    assert "listed above" not in str(caught.value) and "see the error's problems" in str(caught.value)
    lines = [(p.line, p.kind) for p in caught.value.problems]
    assert ("row 13", "row") in lines
    assert capsys.readouterr().err == ""


def test_no_valid_row_names_no_printed_lines(gsm_release):
    with pytest.raises(PredictionsError) as caught:
        ctxrobust.score(gsm_release, [{"model": "alpha", "id": "v99", "answer": "1"}], replicates=0)
    assert "listed above" not in str(caught.value)
    assert [p.line for p in caught.value.problems][0] == "row 1"


def test_an_unknown_model_or_figure_is_one_clear_error(gsm_release):
    report = ctxrobust.score(gsm_release, gsm.ALPHA, replicates=0)
    with pytest.raises(CtxRobustError, match="no model 'nobody' in the report; its models: alpha"):
        report.figure("nobody", "micro")
    with pytest.raises(CtxRobustError, match="no figure 'nothing'"):
        report.figure("alpha", "nothing")


def test_coverage_names_the_requests_file_as_a_path(gsm_release, tmp_path):
    assert main(["prompts", str(gsm_release), "-o", str(tmp_path / "requests.jsonl")]) == 0
    report = ctxrobust.score(gsm_release, gsm.ALPHA, replicates=0, requests=str(tmp_path / "requests.jsonl"))
    assert report.coverage.requests is not None and not report.coverage.requests.startswith("--requests")
    assert report.coverage.requests.endswith("requests.jsonl")


def test_a_clean_pilot_refused_under_strict_is_told_to_pass_its_requests(gsm_release, tmp_path):
    rows = [r for r in gsm.ALPHA if r["id"] in ("b1", "v11", "v12")]
    with pytest.raises(PredictionsError) as caught:
        ctxrobust.score(gsm_release, rows, replicates=0, strict=True)
    assert "--requests" in str(caught.value) and "fix the rows" not in str(caught.value)


def test_with_no_problem_the_notice_does_not_point_at_problems():
    from ctxrobust.evaluation.predictions import scored_line

    assert scored_line(5, 0) == "scored 5 valid row(s); none excluded"
    assert "see 'problems'" in scored_line(5, 2)


# ------------------------------------------------------------------------------------------ paths
def test_a_missing_or_special_path_is_one_line(gsm_release, tmp_path):
    with pytest.raises(CtxRobustError, match="no such predictions file"):
        ctxrobust.score(gsm_release, tmp_path / "absent.jsonl", replicates=0)
    with pytest.raises(CtxRobustError, match="is not a regular file"):
        ctxrobust.score(gsm_release, "/dev/null", replicates=0)


def test_a_runner_files_lost_records_are_printed_and_counted(gsm_release, tmp_path, capsys):
    """Records of a runner's file that give no row are said on standard error without --strict too, and the
    notice's count of rows excluded agrees with the report's."""
    lines = []
    for row in gsm.ALPHA:
        body = {"choices": [{"message": {"role": "assistant", "content": str(row.get("response", row.get("answer")))}}]}
        lines.append({"custom_id": f"{row['id']}/-/0", "response": {"status_code": 200, "body": {"model": "alpha", **body}}, "error": None})
    lines.append({"custom_id": "garbage", "response": {"status_code": 200, "body": {"model": "alpha"}}, "error": None})
    lines.append("{not json")
    path = write(tmp_path / "batch_output.jsonl", lines)
    target = tmp_path / "report.json"
    assert main(["score", str(gsm_release), str(path), "--replicates", "0", "-o", str(target)]) == 0
    err = capsys.readouterr().err
    report = json.loads(target.read_text(encoding="utf-8"))
    excluded = report["predictions"]["excluded"]
    assert excluded >= 2
    assert f"{excluded} excluded" in err
    assert "batch_output.jsonl:13" in err and "batch_output.jsonl:14" in err


# ------------------------------------------------------------------------------------------ problems typed
def test_a_problem_as_a_dict_says_where_its_twin_is():
    problem = Problem("p.jsonl", 3, "row", "duplicate row (same key as line 1)", same_as=1)
    assert problem.as_dict()["same_as"] == 1


def test_a_duplicate_among_several_files_says_where_its_twin_is(gsm_release, tmp_path):
    a = write(tmp_path / "a.jsonl", [*gsm.ALPHA, gsm.ALPHA[0]])
    b = write(tmp_path / "b.jsonl", gsm.BETA)
    report = ctxrobust.score(gsm_release, [a, b], replicates=0)
    (duplicate,) = [p for p in report.problems if "duplicate row" in p.message]
    assert duplicate.file == "a.jsonl" and duplicate.same_as == 1 and duplicate.line == len(gsm.ALPHA) + 1


def test_a_non_json_value_says_what_it_is(gsm_release):
    rows = [*gsm.ALPHA, {"model": "alpha", "id": "v13", "answer": math.nan}, {"model": "alpha", "id": "v14", "answer": {1, 2}}]
    report = ctxrobust.score(gsm_release, rows, replicates=0)
    messages = {p.line: p.message for p in report.problems}
    assert messages["row 13"] == "field 'answer': a float NaN is not JSON"
    assert messages["row 14"] == "field 'answer': a value of type set is not a JSON value"


# ------------------------------------------------------------------------------------------ several files
def test_a_file_of_request_ids_of_another_release_is_refused_among_several(gsm_release, tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    write(folder / "a.jsonl", gsm.ALPHA)
    write(folder / "d.jsonl", FOREIGN)
    target = tmp_path / "report.json"
    assert main(["score", str(gsm_release), str(folder), "--replicates", "0", "-o", str(target)]) == 0
    err = capsys.readouterr().err
    report = json.loads(target.read_text(encoding="utf-8"))
    (d,) = [s for s in report["submissions"] if s["label"] == "d.jsonl"]
    assert d["status"] == "refused"
    assert [p["message"] for p in d["problems"]] == [
        "4 id(s) look like request ids of another release; they name no item of this release: "
        "score the predictions against the release whose `prompts` wrote them"
    ]
    assert "d.jsonl: 4 id(s) look like request ids of another release" in err


def test_some_request_ids_of_another_release_are_a_problem_of_their_file_and_strict_refuses_it(gsm_release, tmp_path):
    a = write(tmp_path / "a.jsonl", gsm.ALPHA)
    b = write(tmp_path / "b.jsonl", [*gsm.BETA, *[{**r, "model": gsm.BETA[0]["model"]} for r in FOREIGN]])
    report = ctxrobust.score(gsm_release, [a, b], replicates=0)
    (problem,) = [p for p in report.problems if "another release" in p.message]
    assert problem.file == "b.jsonl" and problem.message.startswith("4 id(s)")
    by_label = {s["label"]: s for s in report.to_dict()["submissions"]}
    assert by_label["b.jsonl"]["status"] == "scored"
    strict = ctxrobust.score(gsm_release, [a, b], replicates=0, strict=True)
    by_label = {s["label"]: s for s in strict.to_dict()["submissions"]}
    assert by_label["b.jsonl"]["status"] == "refused" and by_label["a.jsonl"]["status"] == "scored"


# ------------------------------------------------------------------------------------------ bounded lines
def test_a_line_over_the_bound_is_one_problem_of_its_line(gsm_release, tmp_path, monkeypatch):
    from ctxrobust.evaluation import rows

    monkeypatch.setattr(rows, "MAX_LINE", 1000)
    path = tmp_path / "p.jsonl"
    long_row = json.dumps({"model": "alpha", "id": "v13", "response": "x" * 5000})
    path.write_text("".join(json.dumps(r) + "\n" for r in gsm.ALPHA[:5]) + long_row + "\n" + json.dumps(gsm.ALPHA[5]) + "\n")
    report = ctxrobust.score(gsm_release, path, replicates=0)
    assert [(p.line, p.message) for p in report.problems if p.kind == "row"] == [(6, "longer than 1000 bytes; not read")]
    assert report.to_dict()["predictions"]["excluded"] == 1
    import hashlib

    assert report.to_dict()["predictions"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_without_a_newline_over_the_bound_is_one_problem(gsm_release, tmp_path, monkeypatch):
    from ctxrobust.evaluation import rows

    monkeypatch.setattr(rows, "MAX_LINE", 1000)
    path = tmp_path / "p.jsonl"
    path.write_text('{"model": "alpha", "id": "b1", "response": "' + "x" * 50_000)
    with pytest.raises(PredictionsError) as caught:
        ctxrobust.score(gsm_release, path, replicates=0)
    assert [(p.line, p.message) for p in caught.value.problems][0] == (1, "longer than 1000 bytes; not read")


def test_the_readers_share_the_bounded_readers_words():
    from ctxrobust.evaluation import rows
    from ctxrobust.evaluation.formats import files

    assert (rows.NOT_JSON, rows.TOO_DEEP, rows.NOT_UTF8, rows.MAX_LINE) == (files.NOT_JSON, files.TOO_DEEP, files.NOT_UTF8, files.MAX_LINE)


def test_a_line_over_the_bound_among_several_files_is_one_problem_of_its_line(gsm_release, tmp_path, monkeypatch):
    from ctxrobust.evaluation import rows

    monkeypatch.setattr(rows, "MAX_LINE", 1000)
    a = tmp_path / "a.jsonl"
    a.write_text(
        "".join(json.dumps(r) + "\n" for r in gsm.ALPHA[:3]) + json.dumps({"model": "alpha", "id": "v13", "response": "x" * 5000}) + "\n"
    )
    b = write(tmp_path / "b.jsonl", gsm.BETA)
    report = ctxrobust.score(gsm_release, [a, b], replicates=0)
    assert [(p.file, p.line, p.message) for p in report.problems if p.kind == "row"] == [("a.jsonl", 4, "longer than 1000 bytes; not read")]
