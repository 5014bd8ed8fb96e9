"""Hostile predictions files: huge numbers, duplicate keys, other encodings, special files, long values,
odd model names, and strings meant to break out of a report's format."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from pathlib import Path

import pytest
from hostile import built, error_lines, fingerprint, prediction_rows, release, root, run  # noqa: F401
from test_eval_gsm_ic import ALPHA, BASES, SUBSET, VARIANTS, write_release

FAST = ["--replicates", "5", "--null-experiments", "5", "--splits", "5"]


@pytest.fixture
def gsm(tmp_path) -> Path:
    return write_release(tmp_path / "gsm-ic" / "0.0.1", BASES, VARIANTS, SUBSET).path


def lines(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def score_json(release: Path, predictions: Path, *extra: str) -> tuple[dict | None, object]:
    result = run("score", str(release), str(predictions), "--replicates", "0", *extra)
    return (json.loads(result.stdout) if result.returncode == 0 else None), result


# -- 6. a number of any length is an invalid answer, not a crash ----------------------------------------


def test_numbers_of_any_length_are_invalid_answers_of_their_rows(gsm, tmp_path):
    rows = [r for r in ALPHA if r["id"] not in ("v33", "b3", "v34")]
    rows += [
        {"model": "alpha", "id": "v33", "response": "The answer is " + "1" * 4301},
        {"model": "alpha", "id": "b3", "answer": "9" * 5000},
        '{"model": "alpha", "id": "v34", "answer": ' + "7" * 5000 + "}",
    ]
    predictions = lines(tmp_path / "preds.jsonl", rows)
    before = fingerprint(gsm)
    report, result = score_json(gsm, predictions)
    assert result.returncode == 0, result.stderr
    alpha = report["models"]["alpha"]["metrics"]
    assert alpha["accuracy.base"]["estimate"] == pytest.approx(2 / 3)  # b3's huge answer is wrong, not a crash
    assert alpha["micro"]["estimate"] == pytest.approx(6 / 9)  # v33 and v34 are wrong too
    assert "internal error" not in result.stderr and "1" * 4301 not in result.stderr
    assert f"{predictions}:12: not valid JSON" in result.stderr  # a JSON number too long to read is a bad line
    assert fingerprint(gsm) == before


# -- 9. duplicate keys ---------------------------------------------------------------------------------


def test_a_duplicated_key_is_a_problem_of_its_line_whatever_the_order(gsm, tmp_path):
    rest = [r for r in ALPHA if r["id"] != "b1"]
    one = lines(tmp_path / "a.jsonl", ['{"model": "alpha", "id": "b1", "answer": "12", "answer": "-1"}', *rest])
    other = lines(tmp_path / "b.jsonl", ['{"model": "alpha", "id": "b1", "answer": "-1", "answer": "12"}', *rest])
    first, result = score_json(gsm, one)
    second, _ = score_json(gsm, other)
    assert f"{one}:1: key 'answer' occurs twice in the object; which value is meant is ambiguous, keep one" in result.stderr.splitlines()
    assert first["models"]["alpha"]["metrics"] == second["models"]["alpha"]["metrics"]
    assert first["models"]["alpha"]["metrics"]["accuracy.base"]["estimate"] == pytest.approx(1 / 3)  # b1 unscored: wrong


def test_a_duplicated_model_key_moves_no_row_to_another_model(gsm, tmp_path):
    predictions = lines(tmp_path / "p.jsonl", [*ALPHA, '{"model": "alpha", "model": "evil", "id": "b1", "answer": "12"}'])
    report, result = score_json(gsm, predictions)
    assert sorted(report["models"]) == ["alpha"]
    assert f"{predictions}:13: key 'model' occurs twice in the object; which value is meant is ambiguous, keep one" in result.stderr


# -- 11. encodings, special files, long values, odd model names ----------------------------------------


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda p, text: p.write_bytes(text.encode("utf-16")), "is UTF-16 text, not UTF-8; convert it"),
        (lambda p, text: p.write_bytes(text.encode("utf-16-le")), "is UTF-16 text, not UTF-8; convert it"),
        (lambda p, text: p.write_bytes(gzip.compress(text.encode(), mtime=0)), "is gzip-compressed; decompress it"),
        (lambda p, text: p.write_bytes(b"PAR1" + os.urandom(200)), "is a binary file, not JSON Lines text"),
    ],
)
def test_another_encoding_is_named_once(gsm, tmp_path, write, message):
    predictions = tmp_path / "p.jsonl"
    write(predictions, "".join(json.dumps(r) + "\n" for r in ALPHA))
    _, result = score_json(gsm, predictions)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {predictions}: {message}" + result.stderr.split(message, 1)[1].rstrip("\n")]
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("kind", ["fifo", "null", "stdin"])
def test_a_fifo_a_device_or_standard_input_is_named_as_such(gsm, tmp_path, kind):
    if kind == "fifo":
        target = tmp_path / "p.jsonl"
        os.mkfifo(target)
    target = {"fifo": str(tmp_path / "p.jsonl"), "null": "/dev/null", "stdin": "-"}[kind]
    _, result = score_json(gsm, Path(target))
    assert result.returncode == 2
    expected = (
        "standard input cannot be scored"
        if kind == "stdin"
        else "is not a regular file (a FIFO, device or standard input cannot be scored)"
    )
    assert (
        error_lines(result.stderr) == [line for line in error_lines(result.stderr) if expected in line]
        and len(error_lines(result.stderr)) == 1
    )


def test_long_values_are_cut_with_their_length(gsm, tmp_path):
    huge = "x" * 5_000_000
    predictions = lines(
        tmp_path / "p.jsonl", [*ALPHA, {"model": "alpha", "id": huge, "answer": "1"}, {"model": huge, "id": "b1", "answer": "1"}]
    )
    report, result = score_json(gsm, predictions)
    assert result.returncode == 0
    assert len(result.stderr) < 5_000 and len(result.stdout) < 100_000
    problems = {p["line"]: p["message"] for p in report["predictions"]["problems"]}
    assert problems[13].endswith("characters)") and len(problems[13]) < 500
    assert problems[14].startswith("field 'model' is 5000000 characters long, at most 200: xxxx") and len(problems[14]) < 200


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("   ", "field 'model': empty after removing spaces; give the model a name"),
        ("\x1b[2J\x1b[31mred", "field 'model': \\x1b[2J\\x1b[31mred holds control or format characters; use a plain name"),
        ("evil\nline", "field 'model': evil\\x0aline holds control or format characters; use a plain name"),
        ("abc\u202edef", "field 'model': abc\\u202edef holds control or format characters; use a plain name"),
    ],
)
def test_odd_model_names_are_refused_by_line(gsm, tmp_path, name, message):
    predictions = lines(tmp_path / "p.jsonl", [*ALPHA, {"model": name, "id": "b1", "answer": "12"}])
    report, result = score_json(gsm, predictions)
    assert sorted(report["models"]) == ["alpha"]
    assert f"{predictions}:13: {message}" in result.stderr.splitlines()
    assert "\x1b" not in result.stderr + result.stdout


# -- 10. every user-supplied string escaped for its format ---------------------------------------------

HOSTILE = "x|y <script>alert(1)</script> [click](javascript:alert(1)) `code` <b>"


def test_markdown_and_html_reports_escape_model_names(gsm, tmp_path):
    predictions = lines(tmp_path / "p.jsonl", [*ALPHA, *({**r, "model": HOSTILE} for r in ALPHA)])
    for suffix in ("md", "html"):
        out = tmp_path / f"r.{suffix}"
        result = run("score", str(gsm), str(predictions), "--replicates", "0", "-o", str(out))
        assert result.returncode == 0, result.stderr
        text = out.read_text()
        assert "<script>" not in text and "<b>" not in text
        assert "](javascript:" not in text if suffix == "md" else "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    markdown = (tmp_path / "r.md").read_text()
    row = next(line for line in markdown.splitlines() if line.startswith("| x"))
    header = next(line for line in markdown.splitlines() if line.startswith("| Model"))
    assert row.replace("\\|", "").count("|") == header.count("|")  # the name's bar does not add a cell
    assert "x\\|y &lt;script>" in row


def test_problem_lines_in_markdown_are_escaped(gsm, tmp_path):
    predictions = lines(tmp_path / "p.jsonl", [*ALPHA, {"model": "alpha", "id": "<img src=x onerror=alert(1)>", "answer": "1"}])
    out = tmp_path / "r.md"
    result = run("score", str(gsm), str(predictions), "--replicates", "0", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "<img" not in out.read_text() and "&lt;img src=x" in out.read_text()


def test_csv_export_cells_never_run_as_formulas(release, tmp_path):
    rows = prediction_rows('=HYPERLINK("http://evil.example","x")') + prediction_rows("@SUM(1+1)") + prediction_rows("+cmd")
    predictions = lines(tmp_path / "p.jsonl", rows)
    export = tmp_path / "changes.csv"
    result = run("score", str(release), str(predictions), *FAST, "--export", str(export), "-o", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stderr
    cells = list(csv.reader(io.StringIO(export.read_text())))[1:]
    models = {row[1] for row in cells}
    assert models == {'\'=HYPERLINK("http://evil.example","x")', "'@SUM(1+1)", "'+cmd"}
    assert all(not cell.startswith(("=", "+", "@")) for row in cells for cell in row[:2])
