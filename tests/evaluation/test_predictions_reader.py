"""The streaming predictions reader: every problem by line number, nothing silently dropped."""

from __future__ import annotations

import hashlib

import pytest
from pydantic import BaseModel, ConfigDict

from ctxrobust.evaluation.predictions import PredictionsError, PredictionsReader


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    id: str
    correct: int


def read(path, strict=False):
    reader = PredictionsReader(
        path, Row, check=lambda r: None if r.id in {"q1", "q2"} else f"unknown id {r.id!r}", key=lambda r: (r.model, r.id)
    )
    rows = list(reader)
    return rows, reader.finish(strict)


def test_problems_are_listed_by_line_and_valid_rows_kept(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    lines = [
        '{"model": "m", "id": "q1", "correct": 1}',
        "{not json",
        '{"model": "m", "id": "q9", "correct": 1}',
        '{"model": "m", "id": "q1", "correct": 0}',
        '{"model": "m", "id": "q2"}',
        '{"model": "m", "id": "q2", "correct": "yes"}',
        "[1, 2]",
        "",
        '{"model": "m", "id": "q2", "correct": 1, "extra": 1}',
        '{"model": "m", "id": "q2", "correct": 1}',
    ]
    path.write_text("\n".join(lines) + "\n")
    rows, block = read(path)
    assert [(r.id, r.correct) for r in rows] == [("q1", 1), ("q2", 1)]
    assert block["rows"] == 9 and block["excluded"] == 7
    assert block["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [(p["line"], p["message"]) for p in block["problems"]] == [
        (2, "not valid JSON"),
        (3, "unknown id 'q9'"),
        (4, "duplicate row (same key as line 1)"),
        (5, "missing field 'correct'"),
        (6, "field 'correct': Input should be a valid integer, unable to parse string as an integer"),
        (7, "not a JSON object (expected one predictions row per line)"),
        (9, "unknown field 'extra'"),
    ]
    assert f"{path}:2: not valid JSON" in capsys.readouterr().err


def test_strict_refuses_a_file_with_any_problem(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"model": "m", "id": "q1", "correct": 1}\n{"model": "m"}\n')
    with pytest.raises(PredictionsError, match="1 problem\\(s\\) listed above; --strict refuses"):
        read(path, strict=True)


def test_a_byte_order_mark_is_not_a_bad_line(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"model": "m", "id": "q1", "correct": 1}\n')
    rows, block = read(path, strict=True)
    assert len(rows) == 1 and block["problems"] == []


def test_an_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(PredictionsError, match="cannot read"):
        read(tmp_path / "missing.jsonl")


def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("\n\n")
    with pytest.raises(PredictionsError, match="no prediction rows"):
        read(path)


def test_a_file_with_no_valid_row_is_refused(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"model": "m"}\n\xff\xfe garbage\n')
    with pytest.raises(PredictionsError, match="none of its 2 row\\(s\\) is a valid prediction"):
        read(path)
    err = capsys.readouterr().err
    assert f"{path}:1: missing field 'id'" in err and f"{path}:2: not UTF-8 text" in err
