"""Source adapters for MisleadQA: FRED, SituatedQA, AmbigDocs, CondAmbigQA -> typed facts."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest
from paths import FIXTURES

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import ambigdocs, condambigqa, fred, situatedqa


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- FRED ------------------------------------------------------------------


def test_fred_two_digit_years_run_forward_across_the_century(tmp_path):
    path = write(tmp_path, "STTMINWGAK.csv", "DATE,STTMINWGAK\n1/1/68,2.1\n1/1/99,5.65\n1/1/00,5.65\n1/1/24,11.73\n")
    series = fred.read_series(path, "fred/STTMINWGAK.csv", "0" * 64)
    assert [o.date.year for o in series.observations] == [1968, 1999, 2000, 2024]
    assert series.frequency == "annual" and series.holds_own_series


def test_fred_federal_series_under_a_state_name_yields_no_facts(tmp_path):
    path = write(tmp_path, "STTMINWGAL.csv", "DATE,STTMINWGFG\n1990-01-01,3.8\n1991-01-01,4.25\n")
    series = fred.read_series(path, "fred/STTMINWGAL.csv", "0" * 64)
    assert series.is_federal and not series.holds_own_series
    assert fred.january_facts(series) == []


def test_fred_monthly_series_gives_its_january_values(tmp_path):
    rows = "".join(f"{year}-{month:02d}-01,{'3.25' if year < 2002 else '5.15'}\n" for year in (2000, 2001, 2002) for month in range(1, 13))
    path = write(tmp_path, "STTMINWGGAM.csv", "DATE,STTMINWGGAM\n" + rows)
    series = fred.read_series(path, "fred/STTMINWGGAM.csv", "0" * 64)
    assert series.frequency == "monthly" and series.code == "GA" and series.holds_own_series
    facts = fred.january_facts(series)
    assert [f.scope.time for f in facts] == ["2000-01-01", "2001-01-01", "2002-01-01"]
    assert facts[2].value == "5.15" and facts[2].provenance.line == 26


def test_fred_values_are_exact_whatever_their_precision_and_missing_rows_are_not_values(tmp_path):
    path = write(tmp_path, "STTMINWGNE.csv", "DATE,STTMINWGNE\n2021-01-01,12\n2022-01-01,12.00\n2023-01-01,.\n2024-01-01,12.006\n")
    series = fred.read_series(path, "fred/STTMINWGNE.csv", "a" * 64)
    facts = fred.january_facts(series)
    assert [f.value for f in facts] == ["12", "12", "12.006"]
    assert [o.value for o in series.observations][2] is None
    fact = facts[0]
    assert fact.subject == "Nebraska" and fact.scope.location == "Nebraska" and fact.scope.time == "2021-01-01"
    assert fact.provenance.snapshot == "fred/STTMINWGNE.csv" and fact.provenance.sha256 == "a" * 64
    assert fact.provenance.series_id == "STTMINWGNE" and fact.provenance.line == 2 and fact.provenance.value == "12"


def test_fred_mirror_quirks(store):
    """The real snapshot: five federal files, an M/D/YY file, a monthly series, uneven coverage."""
    names = [n for n in store.names() if n.startswith("fred/")]
    series = {s.file_series: s for s in (fred.read_series(store.path(n), n, store.snapshot(n).sha256) for n in names)}
    federal = sorted(name for name, s in series.items() if s.is_federal)
    assert federal == ["STTMINWGAL", "STTMINWGLA", "STTMINWGMS", "STTMINWGSC", "STTMINWGTN"]
    ak = series["STTMINWGAK"]
    assert ak.observations[0].date == dt.date(1968, 1, 1) and ak.observations[-1].date == dt.date(2024, 1, 1)
    assert series["STTMINWGGAM"].frequency == "monthly" and len(series["STTMINWGGAM"].observations) == 569
    assert min(series["STTMINWGAZ"].january_values()).year == 2007
    assert max(series["STTMINWGWY"].january_values()).year == 2023
    nebraska = {f.scope.time: f.value for f in fred.january_facts(series["STTMINWGNE"])}
    assert nebraska["1997-01-01"] == "4.25" and nebraska["1998-01-01"] == "5.15"  # paper Table 5


# --- SituatedQA ------------------------------------------------------------


def test_situatedqa_records_and_facts(tmp_path):
    rows = [
        {
            "question": "who chairs the board",
            "id": -12,
            "edited_question": "who chairs the board as of 2001",
            "date": "2001",
            "date_type": "sampled_year",
            "answer": ["Ann Lee"],
            "any_answer": ["Ann Lee", "Bo Chan"],
        },
        {
            "question": "who chairs the board",
            "id": -12,
            "edited_question": "who chairs the board as of 2010",
            "date": "2010",
            "date_type": "start",
            "answer": ["Bo Chan", "B. Chan"],
            "any_answer": ["Ann Lee", "Bo Chan"],
        },
    ]
    path = write(tmp_path, "temp.dev.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    records = situatedqa.read_file(path, "situatedqa/temp.dev.jsonl", "b" * 64)
    assert [r.upstream_id for r in records] == ["-12", "-12"] and records[1].line == 2
    fact = situatedqa.fact(records[1])
    assert fact.scope.time == "2010" and fact.value == "Bo Chan" and fact.alternatives == ("B. Chan",)
    assert fact.provenance.line == 2 and fact.provenance.upstream_id == "-12" and fact.provenance.field == "answer"


def test_situatedqa_geo_scope_is_the_location(tmp_path):
    row = {
        "question": "who is the governor",
        "id": 5,
        "edited_question": "who is the governor in ohio",
        "location": "ohio",
        "answer": ["Mike DeWine"],
        "any_answer": ["Mike DeWine"],
    }
    path = write(tmp_path, "geo.dev.jsonl", json.dumps(row) + "\n")
    (record,) = situatedqa.read_file(path, "situatedqa/geo.dev.jsonl", "b" * 64)
    assert record.kind == "geo" and situatedqa.fact(record).scope.location == "ohio"


def test_situatedqa_missing_field_names_file_and_line(tmp_path):
    path = write(
        tmp_path,
        "geo.dev.jsonl",
        json.dumps({"question": "q", "id": 1, "edited_question": "q in x", "answer": ["a"], "any_answer": ["a"]}) + "\n",
    )
    with pytest.raises(CtxRobustError, match=r"situatedqa/geo.dev.jsonl:1: missing field\(s\) location"):
        situatedqa.read_file(path, "situatedqa/geo.dev.jsonl", "b" * 64)


# --- AmbigDocs / CondAmbigQA (project-written fixtures) ------------------------


def test_ambigdocs_fixture_records_and_facts():
    path = FIXTURES / "ambigdocs_sample.jsonl"
    records = ambigdocs.read_file(path)
    assert len(records) == 5 and records[0].snapshot == "ambigdocs_sample.jsonl" and len(records[0].sha256) == 64
    facts = ambigdocs.facts(records[0])
    assert [f.scope.entity for f in facts][0] == "Maple Grove Township, Barry County, Michigan"
    assert facts[1].value == "612" and facts[1].provenance.pid == "p-1002"
    assert (
        facts[1].provenance.field == "documents[1].answer"
        and facts[1].provenance.line == 1
        and facts[1].provenance.upstream_id == "adx-0001"
    )


def test_ambigdocs_reads_a_json_array_file_with_record_indices(tmp_path):
    records = [json.loads(line) for line in (FIXTURES / "ambigdocs_sample.jsonl").read_text().splitlines()]
    path = write(tmp_path, "dev.json", json.dumps(records[:2]))
    read = ambigdocs.read_file(path)
    assert [(r.line, r.index) for r in read] == [(None, 0), (None, 1)]
    assert ambigdocs.facts(read[1])[0].provenance.index == 1


def test_ambigdocs_bad_record_is_one_line_error(tmp_path):
    path = write(
        tmp_path,
        "bad.jsonl",
        json.dumps({"qid": "x", "question": "q", "ambiguous_entity": "e", "documents": [{"title": "t", "text": "x", "pid": "1"}]}) + "\n",
    )
    with pytest.raises(CtxRobustError, match=r"bad.jsonl:1: documents\[0\]: field 'answer'"):
        ambigdocs.read_file(path)


@pytest.mark.parametrize(
    "read, content, line, column, byte, expected",
    [
        # JSON Lines with a Latin-1 byte on its second record
        (ambigdocs.read_file, b'{"qid": "a"}\n{"qid": "caf\xe9"}\n', 2, 13, "0xe9", "the AmbigDocs JSON or JSON Lines file"),
        # a JSON array saved as UTF-16
        (ambigdocs.read_file, '[{"qid": "a"}]'.encode("utf-16"), 1, 1, "0xff", "the AmbigDocs JSON or JSON Lines file"),
        (condambigqa.read_file, b"\x00\x01\xfe\xfe binary", 1, 3, "0xfe", "the CondAmbigQA JSON or JSON Lines file"),
    ],
)
def test_a_user_file_that_is_not_utf8_is_one_line_naming_file_line_and_remedy(tmp_path, read, content, line, column, byte, expected):
    path = tmp_path / "garbage.bin"
    path.write_bytes(content)
    with pytest.raises(CtxRobustError) as info:
        read(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: not UTF-8 (byte {byte} at column {column}); convert the file to UTF-8, or give {expected}")
    assert "\n" not in message and "UnicodeDecodeError" not in message


def test_a_byte_order_mark_is_not_part_of_the_json(tmp_path):
    text = (FIXTURES / "ambigdocs_sample.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert [r.qid for r in ambigdocs.read_file(path)] == [r.qid for r in ambigdocs.read_file(FIXTURES / "ambigdocs_sample.jsonl")]


def test_condambigqa_fixture_records_and_facts():
    records = condambigqa.read_file(FIXTURES / "condambigqa_sample.jsonl")
    assert [r.upstream_id for r in records] == ["cdx-01", "cdx-02", "cdx-03"]
    facts = condambigqa.facts(records[0])
    assert facts[1].scope.condition == "the digital download release" and facts[1].value == "September 20, 2016"
    assert facts[1].provenance.field == "properties[1].groundtruth"
    assert json.loads(records[0].properties[0].answer_citations) == [0]


def test_condambigqa_missing_properties_is_one_line_error(tmp_path):
    path = write(tmp_path, "c.jsonl", json.dumps({"id": "1", "question": "q"}) + "\n")
    with pytest.raises(CtxRobustError, match=r"c.jsonl:1: field 'properties'"):
        condambigqa.read_file(path)


def test_decimal_canonical_form():
    assert fred.canonical_decimal(Decimal("12.00")) == "12"
    assert fred.canonical_decimal(Decimal("4.250")) == "4.25"


def _fred(path):
    return fred.read_series(path, "fred/STTMINWGNE.csv", "0" * 64)


@pytest.mark.parametrize(
    "name, read, text, expected",
    [
        ("STTMINWGNE.csv", _fred, "DATE,STTMINWGNE\n2021-01-01,abc\n", "fred/STTMINWGNE.csv:2: value 'abc' is not a number"),
        ("STTMINWGNE.csv", _fred, "DATE,STTMINWGNE\n2021-13-45,1\n", "fred/STTMINWGNE.csv:2: date '2021-13-45' is not a calendar date"),
        (
            "STTMINWGNE.csv",
            _fred,
            "DATE,STTMINWGNE\n2022-01-01,1\n2021-01-01,1\n",
            "fred/STTMINWGNE.csv:3: date 2021-01-01 does not follow",
        ),
        ("STTMINWGNE.csv", _fred, "WHEN,STTMINWGNE\n2021-01-01,1\n", "fred/STTMINWGNE.csv:1: expected a 'DATE,<SERIES_ID>' header"),
        ("u.json", ambigdocs.read_file, '[{"qid": "a"}, 7]', "u.json record 1: not a JSON object"),
        ("u.json", ambigdocs.read_file, '[{"qid": "a"},', "u.json:1: not valid JSON"),
        ("u.json", ambigdocs.read_file, '{"qid": "a"}\n\n{"qid": \n', "u.json:3: not valid JSON"),
        (
            "u.json",
            ambigdocs.read_file,
            '{"qid": "a", "question": "q", "ambiguous_entity": "e", "documents": ["x"]}\n',
            "u.json:1: documents[0]: must be an object",
        ),
        (
            "u.json",
            ambigdocs.read_file,
            '{"qid": "a", "question": "", "ambiguous_entity": "e", "documents": []}\n',
            "u.json:1: field 'question' must be a non-empty string",
        ),
    ],
)
def test_bad_source_records_are_one_line_errors_naming_file_and_record(tmp_path, name, read, text, expected):
    with pytest.raises(CtxRobustError) as info:
        read(write(tmp_path, name, text))
    assert str(info.value).startswith(expected) and "\n" not in str(info.value)
