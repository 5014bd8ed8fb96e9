"""Hostile inputs to the pilot paths: an --items file is never overwritten, a --requests file or run record
is bounded and checked before its ids are used, and runner files with many bad rows stay readable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_eval_gsm_ic as gsm
from hostile import error_lines

from ctxrobust.cli import main
from ctxrobust.errors import PredictionsError
from ctxrobust.evaluation.rows import read_requests


@pytest.fixture
def release(tmp_path) -> Path:
    return gsm.write_release(tmp_path / "release", gsm.BASES, gsm.VARIANTS).path


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- --items is an input -------------------------------------------------------------------------------


def test_prompts_refuses_to_write_over_its_items_file(release, tmp_path, capsys):
    items = write(tmp_path / "items.txt", "v11\nv12\n")
    assert main(["prompts", str(release), "--items", str(items), "-o", str(items)]) == 2
    assert items.read_text(encoding="utf-8") == "v11\nv12\n"
    assert len(error_lines(capsys.readouterr().err)) == 1


def test_run_refuses_to_write_over_its_items_file(release, tmp_path, capsys):
    items = write(tmp_path / "items2.txt", "v11\n")
    code = main(["run", str(release), "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--items", str(items), "-o", str(items)])
    assert code == 2 and items.read_text(encoding="utf-8") == "v11\n"
    assert len(error_lines(capsys.readouterr().err)) == 1


def test_an_items_file_with_a_byte_order_mark_is_read(release, tmp_path):
    items = write(tmp_path / "bom.txt", "\ufeffv11\nv12\n")
    assert main(["prompts", str(release), "--items", str(items), "-o", str(tmp_path / "out.jsonl")]) == 0
    asked = [json.loads(line)["item"] for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert asked == ["v11", "v12"]


# -- --requests reading ----------------------------------------------------------------------------------


def test_requests_keeps_item_ids_and_refuses_unknown_items(tmp_path):
    path = write(
        tmp_path / "r.jsonl", "".join(json.dumps({"item": i, "messages": [{"content": "x" * 50}]}) + "\n" for i in ("v11", "zz1", "zz2"))
    )
    assert read_requests(path, "gsm-ic").items == {"v11", "zz1", "zz2"}
    with pytest.raises(PredictionsError) as caught:
        read_requests(path, "gsm-ic", known={"v11", "v12"}.__contains__)
    message = str(caught.value)
    assert message.startswith("--requests ") and "2 of its 3 item(s) are not in the release" in message and "'zz1'" in message


def test_requests_with_a_huge_line_or_id_is_one_line(tmp_path):
    huge = write(tmp_path / "huge.jsonl", b'{"item": "' + b"a" * (65 << 20) + b'"}\n')
    with pytest.raises(PredictionsError, match=r"^--requests .*:1: longer than"):
        read_requests(huge, "gsm-ic")
    long_id = write(tmp_path / "long.jsonl", json.dumps({"item": "a" * 5000}) + "\n")
    with pytest.raises(PredictionsError, match="longer than 4096 characters"):
        read_requests(long_id, "gsm-ic")


def test_requests_errors_name_the_flag_and_the_files_it_takes(tmp_path):
    bad = write(tmp_path / "bad.jsonl", "[1, 2]\n")
    with pytest.raises(PredictionsError) as caught:
        read_requests(bad, "gsm-ic")
    message = str(caught.value)
    assert message.startswith("--requests ") and "give a requests JSONL written by `ctxrobust prompts` or a run record" in message
    assert "predictions JSON Lines" not in message


def test_a_compact_run_record_is_read_as_a_record(tmp_path):
    record = write(
        tmp_path / "c.run.json", json.dumps({"dataset": "gsm-ic", "subset": {"kind": "items", "item_ids": ["v11", "v12"]}}) + "\n"
    )
    assert read_requests(record, "gsm-ic").items == {"v11", "v12"}
    long = write(tmp_path / "l.run.json", json.dumps({"subset": {"kind": "items", "item_ids": [f"v{i}" for i in range(2000)]}}))
    assert len(read_requests(long, "gsm-ic").items) == 2000


@pytest.mark.parametrize("ids", ["v11", {"a": 1}, [["v11"]], [1, 2], None, [None]])
def test_a_run_record_with_bad_item_ids_is_one_line(tmp_path, ids):
    record = write(
        tmp_path / "x.run.json",
        json.dumps({"dataset": "gsm-ic", "sampling_plan": {}, "subset": {"kind": "items", "item_ids": ids}}, indent=2),
    )
    with pytest.raises(PredictionsError, match=r"^--requests .*x\.run\.json: the run record's `subset\.item_ids`"):
        read_requests(record, "gsm-ic")


def test_a_run_record_naming_more_ids_than_the_release_is_refused(tmp_path):
    record = write(
        tmp_path / "big.run.json", json.dumps({"sampling_plan": {}, "subset": {"item_ids": [str(i) for i in range(100)]}}, indent=2)
    )
    with pytest.raises(PredictionsError, match="names 100 ids, more than the release's 12 items"):
        read_requests(record, "gsm-ic", limit=12)


def test_score_with_bad_requests_is_one_line(release, tmp_path, capsys):
    predictions = write(tmp_path / "p.jsonl", json.dumps({"model": "m", "id": "v11", "answer": "12"}) + "\n")
    record = write(tmp_path / "r.run.json", json.dumps({"dataset": "gsm-ic", "sampling_plan": {}, "subset": {"item_ids": "v11"}}, indent=2))
    assert main(["score", str(release), str(predictions), "--requests", str(record)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(error_lines(err)) == 1 and "subset.item_ids" in err


@pytest.mark.parametrize("subset", [{"item_ids": ["v11", "not-in-this-release"]}, {"item_ids": [f"v{k}" for k in range(10_000)]}])
def test_score_refuses_requests_for_items_the_release_does_not_have(release, tmp_path, capsys, subset):
    predictions = write(tmp_path / "p.jsonl", json.dumps({"model": "m", "id": "v11", "answer": "12"}) + "\n")
    record = write(tmp_path / "r.run.json", json.dumps({"dataset": "gsm-ic", "sampling_plan": {}, "subset": subset}, indent=2))
    assert main(["score", str(release), str(predictions), "--requests", str(record)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(error_lines(err)) == 1 and "--requests" in err


# -- runner files ---------------------------------------------------------------------------------------


def lm_eval_run(release: Path, folder: Path, bad: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    assert main(["prompts", str(release), "-o", str(folder.parent / "requests.jsonl")]) == 0
    docs = [json.loads(line) for line in (folder.parent / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [{"doc_id": k, "doc": d, "target": "", "resps": [["12"]], "filtered_resps": ["12"]} for k, d in enumerate(docs)]
    path = folder / "samples_ctxrobust_2026-01-01T00-00-00.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{broken\n" * bad, encoding="utf-8")
    return path


def test_a_runner_file_with_many_bad_records_echoes_a_bounded_number_of_lines(release, tmp_path, capsys):
    samples = lm_eval_run(release, tmp_path / "run", bad=450)
    report = tmp_path / "report.json"
    assert main(["score", str(release), str(samples), "--replicates", "0", "-o", str(report)]) == 0
    err = capsys.readouterr().err
    assert len(err.splitlines()) < 260 and "more problem(s)" in err
    assert len(json.loads(report.read_text(encoding="utf-8"))["predictions"]["problems"]) >= 450


@pytest.mark.parametrize("kind", ["folder", "link", "bomb", "invalid"])
def test_every_bad_results_companion_is_passed_over_with_one_note(release, tmp_path, capsys, kind):
    samples = lm_eval_run(release, tmp_path / "run")
    results = tmp_path / "run" / "results_2026-01-01T00-00-00.json"
    if kind == "folder":
        results.mkdir()
    elif kind == "link":
        write(tmp_path / "elsewhere.json", json.dumps({"model_name": "followed"}))
        results.symlink_to(tmp_path / "elsewhere.json")
    elif kind == "bomb":
        write(results, "[" * 100_000 + "]" * 100_000)
    else:
        write(results, "{not json")
    report = tmp_path / "report.json"
    assert main(["score", str(release), str(samples), "--replicates", "0", "-o", str(report)]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "results_2026-01-01T00-00-00.json beside it" in line]
    assert len(notes) == 1 and not error_lines(err)
    assert "followed" not in json.loads(report.read_text(encoding="utf-8"))["models"]
