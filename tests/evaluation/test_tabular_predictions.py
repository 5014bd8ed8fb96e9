"""Predictions as CSV and Parquet tables (evaluation/formats/tabular.py): each dataset's CSV and Parquet twin
of a JSON Lines file scores, through `ctxrobust score`, to the same figures; cells typed by the predictions
schema; a bad cell is one problem at its line naming its column; a header that cannot make rows is one line;
both formats read within bounds; examples/gsm-ic.csv is the twin of examples/gsm-ic.jsonl."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from paths import REPO
from test_eval_gsm_ic import ALPHA, BASES, BETA, SUBSET, VARIANTS
from test_eval_gsm_ic import write_release as write_gsm_ic
from test_eval_misleadqa import M1, M1_CF, M1_SUPPLEMENT, M2, MAIN, SUPPLEMENT, prediction_lines
from test_eval_misleadqa import write_release as write_misleadqa
from test_eval_pseudowords import CHA, hand_rows, make_release

from ctxrobust.cli import main
from ctxrobust.errors import PredictionsError
from ctxrobust.evaluation.formats import tabular
from ctxrobust.evaluation.formats.convert import convert, detect
from ctxrobust.evaluation.gsm_ic import prompts as gsm_ic_prompts
from ctxrobust.evaluation.misleadqa import prompts as misleadqa_prompts
from ctxrobust.evaluation.pseudowords import prompts as pseudowords_prompts

PREDICTION = {"gsm-ic": gsm_ic_prompts.prediction, "misleadqa": misleadqa_prompts.prediction, "pseudowords": pseudowords_prompts.prediction}
EXAMPLES = REPO / "examples"
SAME_KEY = re.compile(r"\(same key as line (\d+)\)")
STARTS: dict[Path, list[int]] = {}  # a CSV twin's line of each row

# ------------------------------------------------------------------ twins of a JSON Lines file


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def cell(value) -> str:
    """A JSON value as a CSV cell: null (or absent) empty, text as written, numbers as JSON writes them."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def columns_of(rows: list[dict], dataset: str) -> list[str]:
    used = {key for row in rows for key in row}
    return [name for name in tabular.shape_of(dataset).fields if name in used]


def write_csv(path: Path, rows: list[dict], dataset: str, bom: bool = False) -> Path:
    """The rows as a CSV table; `path.starts` (a list kept beside it) is the line each row starts on."""
    columns = columns_of(rows, dataset)
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(columns)
    starts = []
    for row in rows:
        starts.append(text.getvalue().count("\n") + 1)  # a quoted cell's line breaks are lines of the file
        writer.writerow([cell(row.get(name)) for name in columns])
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.getvalue().encode("utf-8"))
    STARTS[path] = starts
    return path


def arrow_column(values: list):
    """A column as pandas would type it: integers int64, numbers float64, anything else text (numbers as JSON text)."""
    given = [v for v in values if v is not None]
    if given and all(isinstance(v, int) and not isinstance(v, bool) for v in given):
        return pa.array(values, pa.int64())
    if given and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in given):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    return pa.array([None if v is None else cell(v) for v in values], pa.string())


def write_parquet(path: Path, rows: list[dict], dataset: str, row_group_size: int | None = None) -> Path:
    columns = columns_of(rows, dataset)
    table = pa.table({name: arrow_column([row.get(name) for row in rows]) for name in columns})
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def score(release: Path, path: Path, *options: str) -> dict:
    out = release.parent / f"{path.name}.report.json"  # beside the test's release, never beside a file of the repository
    assert main(["score", str(release), str(path), "-o", str(out), *options]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _placed(problem: dict) -> tuple:
    """(origin, message) of a table's problem: its line, or the "row N" its message starts with."""
    if problem["line"] is None and problem["message"].startswith("row "):
        origin, _, message = problem["message"].partition(": ")
        return origin, message
    return problem["line"], problem["message"]


def assert_twins(native: dict, table: dict, where) -> None:
    """The same figures and the same rows counted; each problem of the JSON Lines file at the table's row for its
    line (`where(line)`: the CSV line, or "row N" of a Parquet file), with the same message, except a cell the
    table could not type, which says so in its own words ("column ...")."""
    a, b = dict(native), dict(table)
    block_a, block_b = a.pop("predictions"), b.pop("predictions")
    assert a == b
    assert (block_a["rows"], block_a["excluded"]) == (block_b["rows"], block_b["excluded"])

    def moved(message: str) -> str:
        return SAME_KEY.sub(lambda m: f"(same key as {'line ' if isinstance(where(1), int) else ''}{where(int(m.group(1)))})", message)

    expected = sorted(("" if p["line"] is None else str(where(p["line"])), moved(p["message"])) for p in block_a["problems"])
    got = sorted(("" if o is None else str(o), m) for o, m in map(_placed, block_b["problems"]))
    assert [o for o, _ in expected] == [o for o, _ in got]  # "": about the file as a whole
    for (origin, message), (_, said) in zip(expected, got):
        assert said == message or (origin and said.startswith("column ")), (origin, message, said)


def csv_line(line: int) -> int:
    return line + 1  # the header is line 1 (a file without quoted line breaks)


def parquet_row(line: int) -> str:
    return f"row {line}"


def twin_case(tmp_path: Path, dataset: str, rows: list, release: Path, *options: str) -> None:
    native = score(release, write_jsonl(tmp_path / "p.jsonl", rows), *options)
    dicts = [r if isinstance(r, dict) else json.loads(r) for r in rows]
    table = write_csv(tmp_path / "p.csv", dicts, dataset)
    via_csv = score(release, table, *options)
    assert via_csv["predictions"]["input_format"] == "csv" and via_csv["predictions"]["path"].endswith("p.csv")
    assert_twins(native, via_csv, lambda line: STARTS[table][line - 1])
    via_parquet = score(release, write_parquet(tmp_path / "p.parquet", dicts, dataset, row_group_size=7), *options)
    assert via_parquet["predictions"]["input_format"] == "parquet"
    assert_twins(native, via_parquet, parquet_row)


def test_gsm_ic_twins_score_alike(tmp_path):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    rows = (
        ALPHA
        + BETA
        + [
            {"model": "alpha", "id": "nope", "response": "The answer is 3."},  # unknown id: the scorer's problem, at its line
            {"model": "gamma", "id": "b1", "response": "", "sample": 0},  # an empty response: counted, wrong
            {"model": "gamma", "id": "b2", "response": "The answer is 1250.", "sample": -1},  # the schema's minimum: the scorer's
            {"model": "gamma", "id": "b3", "answer": "7.5", "sample": 2},
        ]
    )
    twin_case(tmp_path, "gsm-ic", rows, release, "--replicates", "50", "--seed", "3")


def test_misleadqa_twins_score_alike(tmp_path):
    release = write_misleadqa(tmp_path / "release", MAIN, SUPPLEMENT)
    lines = prediction_lines("m1", M1) + prediction_lines("m1", M1_CF, "cf") + prediction_lines("m1", M1_SUPPLEMENT)
    lines += prediction_lines("m2", M2)  # holds an empty response and " D\n" (a quoted cell across two lines)
    extra = [
        {"model": "m1", "id": "q1", "condition": "S", "response": "A", "option_order": "BACD"},
        {"model": "m1", "id": "q2", "condition": "none", "response": "B", "option_order": None},  # null: the main run's row
        {"model": "m1", "id": "q99", "condition": "G", "response": "A"},  # unknown id
        {"model": "m1", "id": "q1", "condition": "GS", "response": "A"},  # unknown condition
        {"model": "m1", "id": "q1", "condition": "none", "response": "B"},  # duplicate
        {"model": "m1", "id": "q1", "condition": "F", "response": "A", "prompt": "zero-shot"},  # unknown prompt
    ]
    twin_case(tmp_path, "misleadqa", lines + extra, release, "--replicates", "50", "--min-clusters", "1")


def test_pseudowords_twins_score_alike(tmp_path):
    release = make_release(tmp_path / "release").path
    rows = hand_rows()
    for q, (base, ctx) in enumerate([(0.9, [0.5, 0.7]), (0.2, [0.2, 0.4]), (0.6, [0.6, 0.6])]):
        rows.append({"model": "local", "id": f"q{q}", "context": None, "score": base})
        rows += [{"model": "local", "id": f"q{q}", "context": CHA[j], "score": s} for j, s in enumerate(ctx)]
    rows.append({"model": "h", "id": "q0", "context": "CHA-999999-000", "trial": 0, "correct": 1})  # unknown context
    twin_case(tmp_path, "pseudowords", rows, release, "--replicates", "50", "--null-experiments", "50", "--splits", "10")


def test_pseudowords_example_twins_score_alike_with_its_benchmark(tmp_path):
    """The example's `response` rows, graded against its benchmark; its last row's trial "first" is a bad cell."""
    release = make_release(tmp_path / "release").path
    rows = (EXAMPLES / "pseudowords" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    options = ("--benchmark", str(EXAMPLES / "pseudowords" / "benchmark.jsonl"), "--replicates", "50", "--null-experiments", "50")
    twin_case(tmp_path, "pseudowords", rows, release, *options)
    report = score(release, tmp_path / "p.csv", *options)
    bad = [p for p in report["predictions"]["problems"] if p["line"] == len(rows) + 1]
    assert len(bad) == 1 and bad[0]["message"] == "column 'trial': 'first' is not an integer"


def test_a_bom_and_crlf_lines_read_alike(tmp_path):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    native = score(release, write_jsonl(tmp_path / "p.jsonl", ALPHA), "--replicates", "20")
    path = write_csv(tmp_path / "p.csv", ALPHA, "gsm-ic", bom=True)
    assert path.read_bytes().startswith(b"\xef\xbb\xbfmodel,id,") and b"\r\n" in path.read_bytes()
    assert_twins(native, score(release, path, "--replicates", "20"), csv_line)


# ------------------------------------------------------------------ examples/gsm-ic.csv


def test_the_gsm_ic_example_csv_is_the_twin_of_its_jsonl(tmp_path):
    """Its rows are the JSON Lines file's rows, its malformed line's row a bad cell at the same row; scored against
    a release holding the example's ids (the 1.0.0 release's figures agree too, but building it is slow for a test)."""
    jsonl, table = EXAMPLES / "gsm-ic.jsonl", EXAMPLES / "gsm-ic.csv"
    assert detect(table) == "csv"
    converted = convert(table, "csv", gsm_ic_prompts.prediction, {})
    parsed, broken = [], []
    for number, line in enumerate(jsonl.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            parsed.append(json.loads(line))
        except ValueError:
            broken.append(number)
    assert said(converted) == [(csv_line(n), "column 'sample': 'first' is not an integer") for n in broken] == [(7, said(converted)[0][1])]
    assert read_rows(converted) == parsed

    bases = [("pool-0001", "8", 2), ("pool-0023", "4", 3)]
    variants = [
        (f"{base}-v{k:04d}", base, topic, role, number)
        for base, ks in (("pool-0001", (1, 2, 3, 9)), ("pool-0023", (1, 2, 3)))
        for k, topic, role, number in zip(ks, ["in_topic", "off_topic"] * 2, ["overlapped", "nonoverlapped"] * 2, ["in_range"] * 4)
    ]
    release = write_gsm_ic(tmp_path / "release", bases, variants).path
    native = score(release, jsonl, "--replicates", "50")
    via_csv = score(release, table, "--replicates", "50")
    assert_twins(native, via_csv, csv_line)
    assert via_csv["predictions"]["problems"][0] == {"line": 7, "message": "column 'sample': 'first' is not an integer"}
    assert via_csv["models"]["example-model"]["metrics"]["micro"]["n"] == 7


# ------------------------------------------------------------------ cells


def said(got) -> list[tuple]:
    """Every row the table could not give whole: a row that is not one (problems) or a cell of another type (cells)."""
    return [*got.problems, *((got.origins[k], message) for k, message in sorted(got.cells.items()))]


def read_rows(got) -> list[dict]:
    """The rows the scorer can take: those whose every cell is its field's type."""
    return [row for k, row in enumerate(got.rows) if k not in got.cells]


def read(tmp_path: Path, text: str, dataset: str = "gsm-ic", name: str = "p.csv"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return convert(path, "csv", PREDICTION[dataset], {})


def test_cells_are_typed_by_the_predictions_schema(tmp_path):
    got = read(tmp_path, 'model,id,answer,sample\nm,007,007,1.0\nm,b1,-12,\nm,b2,1.5e3, 3 \nm,b3,"$1,250",+0\n')
    assert got.problems == []
    assert got.rows == [
        {"model": "m", "id": "007", "answer": "007", "sample": 1},  # ids and text as written; 1.0 is the integer 1
        {"model": "m", "id": "b1", "answer": "-12"},  # text or a number: the text, whose number the scorer reads
        {"model": "m", "id": "b2", "answer": "1.5e3", "sample": 3},  # an empty sample is absent
        {"model": "m", "id": "b3", "answer": "$1,250", "sample": 0},
    ]
    got = read(tmp_path, "model,id,context,trial,correct,score\nm,q1,,0,true,\nm,q1,C,1,FALSE,\nm,q1,C,2,1,\nm,q2,,,,0.25\n", "pseudowords")
    assert got.problems == []
    assert got.rows == [
        {"model": "m", "id": "q1", "context": None, "trial": 0, "correct": 1},  # an empty context: the baseline
        {"model": "m", "id": "q1", "context": "C", "trial": 1, "correct": 0},
        {"model": "m", "id": "q1", "context": "C", "trial": 2, "correct": 1},
        {"model": "m", "id": "q2", "context": None, "score": 0.25},
    ]
    got = read(tmp_path, "model,id,condition,response,prompt,option_order\nm,q1,G,,,\nm,q1,S,=1+1,cf,\nm,q2,S,A,,BACD\n", "misleadqa")
    assert got.problems == []
    assert got.rows == [
        {"model": "m", "id": "q1", "condition": "G", "response": ""},  # a required text field: the empty response
        {"model": "m", "id": "q1", "condition": "S", "response": "=1+1", "prompt": "cf"},  # a formula is text
        {"model": "m", "id": "q2", "condition": "S", "response": "A", "option_order": "BACD"},
    ]


def test_a_row_giving_no_answer_field_gets_the_empty_response(tmp_path):
    got = read(tmp_path, "model,id,response,answer\nm,b1,,\nm,b2,,7\n")
    assert got.rows == [{"model": "m", "id": "b1", "response": ""}, {"model": "m", "id": "b2", "answer": "7"}]
    got = read(tmp_path, "model,id,answer\nm,b1,\n")
    assert got.rows == [{"model": "m", "id": "b1", "answer": None}]  # no response column: no answer


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("model,id,response,sample\nm,b1,x,0\nm,b2,y,1.5\nm,b3,z,2\n", 3, "column 'sample': '1.5' is not an integer"),
        ("model,id,response,sample\nm,b1,x,0\nm,b2,y,two\nm,b3,z,2\n", 3, "column 'sample': 'two' is not an integer"),
        ("model,id,response,sample\nm,b1,x,0\nm,b2,y\nm,b3,z,2\n", 3, "3 cell(s), but the header names 4 column(s)"),
        ('model,id,response,sample\nm,b1,"x\ny",0\nm,b2,"a"b,1\nm,b3,z,2\n', 4, "not a CSV row"),
        ("model,id,response,sample\nm,b1,x,0\n\nm,b2,y,nan\nm,b3,z,2\n", 4, "column 'sample': 'nan' is not an integer"),
        (b"model,id,response,sample\nm,b1,x,0\nm,b2,\xff\xfe,1\nm,b3,z,2\n", 3, "not UTF-8 text"),
    ],
)
def test_a_bad_row_is_one_problem_at_its_line_and_the_others_are_read(tmp_path, text, line, message):
    got = read(tmp_path, text)
    assert len(said(got)) == 1 and said(got)[0][0] == line and said(got)[0][1].startswith(message)
    assert [row["id"] for row in read_rows(got)] == ["b1", "b3"]


def test_several_bad_cells_of_one_row_are_one_problem(tmp_path):
    got = read(tmp_path, "model,id,context,trial,correct\nm,q1,,x,7.5\nm,q2,,0,1\n", "pseudowords")
    assert said(got) == [(2, "column 'trial': 'x' is not an integer (and 1 more cell(s) of this row)")]
    assert got.rows[0] == {"model": "m", "id": "q1", "context": None, "trial": "x", "correct": "7.5"}  # for the scorer to refuse


def test_a_bad_cell_is_one_problem_of_the_report_and_the_rest_is_scored(tmp_path, capsys):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    rows = [dict(r) for r in ALPHA]
    rows[4]["sample"] = "second"
    report = score(release, write_csv(tmp_path / "p.csv", rows, "gsm-ic"), "--replicates", "20")
    block = report["predictions"]
    assert block["rows"] == len(ALPHA) and block["excluded"] == 1
    assert [p for p in block["problems"] if p["line"] is not None] == [
        {"line": 6, "message": "column 'sample': 'second' is not an integer"}
    ]
    assert report["models"]["alpha"]["metrics"]["micro"]["n"] == 9
    assert main(["score", str(release), str(tmp_path / "p.csv"), "--strict", "--replicates", "20"]) == 2  # --strict refuses it
    extra = write_csv(tmp_path / "q.csv", [*ALPHA, {"model": "alpha", "id": "b1", "response": "12", "sample": "x"}], "gsm-ic")
    assert main(["score", str(release), str(extra), "--strict", "--replicates", "20"]) == 2  # an extra row: no pair missing
    assert "--strict refuses" in capsys.readouterr().err
    assert main(["score", str(release), str(write_csv(tmp_path / "r.csv", ALPHA, "gsm-ic")), "--strict", "--replicates", "20"]) == 0


def test_an_unclosed_quote_is_one_problem_after_the_rows_before_it(tmp_path):
    got = read(tmp_path, 'model,id,response\nm,b1,x\nm,b2,"never closed\nm,b3,z\n')
    assert got.rows == [{"model": "m", "id": "b1", "response": "x"}]
    assert got.problems == [(3, "a quoted cell opened on this row is never closed (the file ends inside it)")]


def test_line_numbers_count_the_lines_of_quoted_cells(tmp_path):
    got = read(tmp_path, 'model,id,response,sample\nm,b1,"one\ntwo\nthree",0\n\nm,b2,y,x\n')
    assert read_rows(got) == [{"model": "m", "id": "b1", "response": "one\ntwo\nthree", "sample": 0}]
    assert said(got) == [(6, "column 'sample': 'x' is not an integer")]


# ------------------------------------------------------------------ the header


@pytest.mark.parametrize(
    "header, said",
    [
        ("model,response", "lacks column(s) 'id'"),
        ("id,response", "lacks column(s) 'model'"),
        ("response,answer", "lacks column(s) 'model', 'id'"),
        ("model,id,response,prompt_text", "column(s) 'prompt_text' are not gsm-ic predictions fields"),
        (",model,id,response", "(an index column? write the table without it"),
        ("model,id,response,response", "names column(s) 'response' more than once"),
        ("model;id;response", "not comma-separated"),
        ("model,id,sample", "the header has the columns of no kind of gsm-ic row: give (response) or (answer)"),
    ],
)
def test_a_header_that_cannot_make_rows_is_one_line(tmp_path, header, said):
    with pytest.raises(PredictionsError) as caught:
        read(tmp_path, f"{header}\nm,b1,x,y\n")
    message = str(caught.value)
    assert said in message and "\n" not in message and message.startswith(str(tmp_path / "p.csv"))


def test_a_header_without_id_is_one_clear_error_of_the_command(tmp_path, capsys):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    path = tmp_path / "p.csv"
    path.write_text("model,response\n" + "alpha,The answer is 12.\n" * 300, encoding="utf-8")
    assert main(["score", str(release), str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lacks column(s) 'id'" in err[0] and "not valid JSON" not in err[0]


def test_a_jsonl_file_named_csv_is_told_so(tmp_path):
    with pytest.raises(PredictionsError, match="first line is JSON, not a CSV header"):
        read(tmp_path, json.dumps(ALPHA[0]) + "\n")


@pytest.mark.parametrize(
    "text, dataset, said",
    [
        ("model,id\n", "gsm-ic", "no kind of gsm-ic row"),
        ("model,id,response\n", "gsm-ic", "no prediction rows (only a header)"),
        ("", "gsm-ic", "empty; a CSV predictions file starts with a header"),
        ("model,id,response,sample\nm,b1,x,y\n", "gsm-ic", "none of its 1 row(s) could be read (line 2: column 'sample'"),
        ("model,id,condition\nm,q1,G\n", "misleadqa", "lacks column(s) 'response'"),
        ("model,id,trial,correct\nm,q1,0,1\n", "pseudowords", "lacks column(s) 'context'"),
        (b"\xff\xfem\x00o\x00", "gsm-ic", "UTF-16"),
        (b"PK\x03\x04rest", "gsm-ic", "spreadsheet workbook"),
    ],
)
def test_a_file_with_nothing_to_read_is_one_line(tmp_path, text, dataset, said):
    with pytest.raises(PredictionsError, match=None) as caught:
        read(tmp_path, text, dataset)
    assert said in str(caught.value)


# ------------------------------------------------------------------ detection


def test_detection_by_name_header_and_magic_bytes(tmp_path):
    rows = ALPHA[:3]
    assert detect(write_csv(tmp_path / "p.csv", rows, "gsm-ic")) == "csv"
    assert detect(write_csv(tmp_path / "p.txt", rows, "gsm-ic")) == "csv"  # a header of predictions fields
    assert detect(write_csv(tmp_path / "q.jsonl", rows, "gsm-ic", bom=True)) == "csv"
    assert detect(write_parquet(tmp_path / "p.parquet", rows, "gsm-ic")) == "parquet"
    os.replace(tmp_path / "p.parquet", tmp_path / "p.bin")
    assert detect(tmp_path / "p.bin") == "parquet"  # PAR1 at both ends
    (tmp_path / "cut.bin").write_bytes((tmp_path / "p.bin").read_bytes()[:-1])
    assert detect(tmp_path / "cut.bin") == "native"  # the JSON Lines reader calls it a binary file
    assert detect(write_jsonl(tmp_path / "p.jsonl", rows)) == "native"
    assert detect(write_jsonl(tmp_path / "rows.csv", rows)) == "native"  # JSON Lines whatever its name
    assert detect(write_jsonl(tmp_path / "rows.parquet", rows)) == "native"
    (tmp_path / "other.txt").write_text("name,value\nx,1\n", encoding="utf-8")
    assert detect(tmp_path / "other.txt") == "native"  # a CSV of other columns: the reader says what it is


def test_a_fifo_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)
    assert detect(fifo) == "native"  # the native reader refuses it with its own line
    for form in ("csv", "parquet"):
        with pytest.raises(PredictionsError, match="FIFO"):
            convert(fifo, form, gsm_ic_prompts.prediction, {})


# ------------------------------------------------------------------ Parquet


def parquet(tmp_path: Path, columns: dict, name: str = "p.parquet", **options) -> Path:
    path = tmp_path / name
    pq.write_table(pa.table(columns), path, **options)
    return path


def test_parquet_values_are_typed_by_the_schema(tmp_path):
    path = parquet(
        tmp_path,
        {
            "model": pa.array(["m", "m", "m", "m"]),
            "id": pa.array(["q1", "q1", "q2", "q3"]).dictionary_encode(),  # a pandas category column
            "context": pa.array([None, "C", None, None]),
            "trial": pa.array([0.0, 1.0, math.nan, None]),  # pandas: an integer column with gaps is float
            "correct": pa.array([True, False, None, None]),
            "score": pa.array([None, None, 0.5, 1]),
        },
    )
    got = convert(path, "parquet", pseudowords_prompts.prediction, {})
    assert got.problems == []
    assert got.rows == [
        {"model": "m", "id": "q1", "context": None, "trial": 0, "correct": 1},
        {"model": "m", "id": "q1", "context": "C", "trial": 1, "correct": 0},
        {"model": "m", "id": "q2", "context": None, "score": 0.5},
        {"model": "m", "id": "q3", "context": None, "score": 1.0},
    ]
    assert got.origins == ["row 1", "row 2", "row 3", "row 4"]


def test_a_bad_parquet_value_is_one_problem_naming_its_row_and_column(tmp_path):
    path = parquet(
        tmp_path, {"model": ["m"] * 3, "id": ["b1", "b2", "b3"], "response": ["x", "y", "z"], "sample": [0.0, 1.5, 2.0]}, row_group_size=2
    )
    got = convert(path, "parquet", gsm_ic_prompts.prediction, {})
    assert said(got) == [("row 2", "column 'sample': 1.5 is not an integer")]
    assert [row["id"] for row in read_rows(got)] == ["b1", "b3"]
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    problems = score(release, path, "--replicates", "10")["predictions"]["problems"]
    assert ("row 2", "column 'sample': 1.5 is not an integer") in [_placed(p) for p in problems]


@pytest.mark.parametrize(
    "columns, said",
    [
        ({"model": ["m"], "id": [7], "response": ["x"]}, "'id' is int64 but must hold text"),
        ({"model": ["m"], "response": ["x"]}, "lacks column(s) 'id'"),
        ({"model": ["m"], "id": ["b1"], "response": ["x"], "__index_level_0__": [0]}, "an index column?"),
        ({"model": ["m"], "id": ["b1"], "response": ["x"], "sample": pa.array([[0]])}, "'sample' is list<"),
    ],
)
def test_a_parquet_table_of_other_columns_is_one_line(tmp_path, columns, said):
    with pytest.raises(PredictionsError) as caught:
        convert(parquet(tmp_path, columns), "parquet", gsm_ic_prompts.prediction, {})
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_broken_parquet_file_is_one_line(tmp_path):
    path = parquet(tmp_path, {"model": ["m"] * 100, "id": [f"b{k}" for k in range(100)], "response": ["x"] * 100})
    data = path.read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(PredictionsError, match="not a whole Parquet file"):
        convert(cut, "parquet", gsm_ic_prompts.prediction, {})
    named = tmp_path / "not.parquet"
    named.write_text(json.dumps(ALPHA[0]) + "\n", encoding="utf-8")
    with pytest.raises(PredictionsError, match="not a Parquet file"):
        convert(named, "parquet", gsm_ic_prompts.prediction, {})
    bad_footer = tmp_path / "footer.parquet"
    bad_footer.write_bytes(data[:4] + b"\0" * (len(data) - 12) + (len(data) - 12).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(PredictionsError, match="not a readable Parquet file"):
        convert(bad_footer, "parquet", gsm_ic_prompts.prediction, {})


# ------------------------------------------------------------------ bounds


def test_a_cell_over_its_bound_is_one_problem_and_the_next_rows_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(tabular, "MAX_CELL", 100)
    limit = csv.field_size_limit()
    got = read(tmp_path, f'model,id,response\nm,b1,"{"x" * 500}"\nm,b2,y\n')
    assert got.problems == [(2, "a cell longer than 100 bytes; not read")] and got.rows == [{"model": "m", "id": "b2", "response": "y"}]
    assert csv.field_size_limit() == limit  # the csv module's limit is put back


def test_a_line_over_its_bound_is_one_problem_and_a_row_over_it_stops_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tabular, "MAX_RECORD", 200)
    got = read(tmp_path, f"model,id,response\nm,b1,{'x' * 500}\nm,b2,y\n")
    assert got.problems == [(2, "longer than 200 bytes; not read")] and [r["id"] for r in got.rows] == ["b2"]
    lines = "\n".join("x" * 50 for _ in range(10))
    with pytest.raises(PredictionsError, match=r":3: a row longer than 200 bytes"):
        read(tmp_path, f'model,id,response\nm,b1,y\nm,b2,"{lines}"\n')


def test_row_count_and_row_group_size_are_checked_before_reading(tmp_path, monkeypatch):
    rows = [{"model": "m", "id": f"b{k}", "response": "x"} for k in range(5)]
    path = write_parquet(tmp_path / "p.parquet", rows, "gsm-ic")
    monkeypatch.setattr(tabular, "MAX_ROWS", 4)
    with pytest.raises(PredictionsError, match="more than 4 rows"):
        convert(path, "parquet", gsm_ic_prompts.prediction, {})
    with pytest.raises(PredictionsError, match="more than 4 rows"):
        convert(write_csv(tmp_path / "p.csv", rows, "gsm-ic"), "csv", gsm_ic_prompts.prediction, {})
    monkeypatch.setattr(tabular, "MAX_ROWS", 10)
    monkeypatch.setattr(tabular, "MAX_ROW_GROUP", 10)
    with pytest.raises(PredictionsError, match="row group 0 holds"):
        convert(path, "parquet", gsm_ic_prompts.prediction, {})
    monkeypatch.setattr(tabular, "MAX_FOOTER", 10)
    with pytest.raises(PredictionsError, match="Parquet metadata is"):
        convert(path, "parquet", gsm_ic_prompts.prediction, {})


def test_parquet_is_read_in_record_batches(tmp_path, monkeypatch):
    rows = [{"model": "m", "id": f"b{k}", "response": "x", "sample": k} for k in range(50)]
    path = write_parquet(tmp_path / "p.parquet", rows, "gsm-ic", row_group_size=16)
    seen = []
    original = pq.ParquetFile.iter_batches

    def spy(self, *args, **kwargs):
        for batch in original(self, *args, **kwargs):
            seen.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    monkeypatch.setattr(tabular, "BATCH", 8)
    got = convert(path, "parquet", gsm_ic_prompts.prediction, {})
    assert got.rows == rows and max(seen) <= 8 and sum(seen) == 50


# ------------------------------------------------------------------ several submissions


def submissions_case(tmp_path: Path, name: str, write) -> None:
    """A table submission scored beside a JSON Lines one: its figures are those of its JSON Lines twin alone."""
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    model = Path(name).stem
    rows = [{**row, "model": model} for row in ALPHA]
    table = write(tmp_path / name, rows, "gsm-ic")
    out = tmp_path / "board.json"
    assert (
        main(["score", str(release), str(write_jsonl(tmp_path / "alpha.jsonl", ALPHA)), str(table), "-o", str(out), "--replicates", "20"])
        == 0
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [s["status"] for s in report["submissions"]] == ["scored", "scored"], report["submissions"]
    alone = score(release, write_jsonl(tmp_path / "alone.jsonl", rows), "--replicates", "20")
    estimates = {metric: m["estimate"] for metric, m in report["models"][model]["metrics"].items()}
    assert estimates == {metric: m["estimate"] for metric, m in alone["models"][model]["metrics"].items()}


def test_a_csv_submission_is_scored_beside_a_jsonl_one(tmp_path):
    submissions_case(tmp_path, "beta.csv", write_csv)


def test_a_parquet_submission_is_scored_beside_a_jsonl_one(tmp_path):
    submissions_case(tmp_path, "gamma.parquet", write_parquet)
