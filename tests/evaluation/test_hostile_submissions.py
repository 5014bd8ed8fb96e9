"""Hostile submission folders (issue 27): submissions are told apart by their file, never by a name a
submitter writes; no CSV cell runs as a formula; every user string is escaped in Markdown, HTML and on the
terminal; a nesting bomb, another encoding, a compressed or special file is one problem of its line or
file while the other submissions are judged; the stream is scored once (twice when a file is refused),
however many files there are."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hostile import run
from test_eval_gsm_ic import ALPHA, BASES, SUBSET, VARIANTS, write_release

from ctxrobust import registry
from ctxrobust.cli import main
from ctxrobust.evaluation import submissions
from ctxrobust.evaluation.predictions import TOO_DEEP
from ctxrobust.evaluation.report import csv_cell
from ctxrobust.release import Release

FAST = ["--replicates", "20"]
FORMULAS = ['=HYPERLINK("http://evil.example","x")', "@SUM(1+1)", "+cmd|' /C calc'!A0", "-1+1"]


@pytest.fixture
def gsm(tmp_path) -> Path:
    return write_release(tmp_path / "release", BASES, VARIANTS, SUBSET).path


def rows(model: str, wrong: set[str] = frozenset()) -> list[dict]:
    """ALPHA's rows under another model name; the ids in `wrong` answered 999."""
    return [({**r, "model": model} if r["id"] not in wrong else {"model": model, "id": r["id"], "answer": "999"}) for r in ALPHA]


def write(path: Path, lines: list) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8")
    return path


def scored(release: Path, *args, code: int = 0) -> dict:
    out = Path(str(args[-1]))
    assert main(["score", str(release), *map(str, args[:-1]), *FAST, "-o", str(out)]) == code
    return json.loads(out.read_text(encoding="utf-8")) if code == 0 else {}


def by_label(report: dict) -> dict:
    return {s["label"]: s for s in report["submissions"]}


# -- High: a submitter cannot take another's place --------------------------------------------------------


@pytest.mark.parametrize("intruder", ["c.jsonl", "0.jsonl"])  # read after the honest files, or before them
def test_a_name_written_like_another_files_model_neither_displaces_nor_impersonates_it(gsm, tmp_path, intruder):
    folder = tmp_path / "subs"
    folder.mkdir()
    write(folder / "a.jsonl", rows("m1"))
    write(folder / "b.jsonl", rows("m1", {"v11", "v12"}))
    write(folder / intruder, [{"model": "m1 [a.jsonl]", "id": r["id"], "answer": "12"} for r in ALPHA])
    board = tmp_path / "board.csv"
    report = scored(gsm, folder, "--leaderboard", board, tmp_path / "r.json")
    subs = by_label(report)
    assert {label: s["status"] for label, s in subs.items()} == {"a.jsonl": "scored", "b.jsonl": "scored", intruder: "scored"}
    assert all(s["problems"] == [] for s in subs.values())
    assert subs["a.jsonl"]["models"] == {"m1": "m1 [a.jsonl]"}
    assert subs[intruder]["models"] == {"m1 [a.jsonl]": f"m1 [a.jsonl] [{intruder}]"}
    assert sorted(report["models"]) == sorted(["m1 [a.jsonl]", "m1 [b.jsonl]", f"m1 [a.jsonl] [{intruder}]"])
    # a.jsonl's figures are its own rows' figures: those it gets alone
    alone = scored(gsm, folder / "a.jsonl", tmp_path / "a.json")
    assert report["models"]["m1 [a.jsonl]"]["metrics"] == alone["models"]["m1"]["metrics"]
    frame = pd.read_csv(board)
    assert dict(zip(frame["model"], frame["submission"])) == {
        "m1 [a.jsonl]": "a.jsonl",
        "m1 [b.jsonl]": "b.jsonl",
        f"m1 [a.jsonl] [{intruder}]": intruder,
    }


def test_a_line_speaks_only_for_its_own_file(gsm, tmp_path):
    """A row cannot carry another file's model: a second "model" key (plain or escaped) or a row the parser
    cannot read is a problem of its line and never reaches the scorer; an escaped key is the same key."""
    folder = tmp_path / "subs"
    folder.mkdir()
    write(folder / "a.jsonl", rows("m1"))
    attack = [
        '{"model": "c", "model": "m1", "id": "v11", "answer": "12"}',
        '{"model": "c", "mod\\u0065l": "m1", "id": "v12", "answer": "12"}',
        '{"model": "m1", "id": "v13", "answer": "12", "x": ' + "[" * 300 + "]" * 300 + "}",
        '{"mod\\u0065l": "c", "id": "v21", "answer": "1250"}',
    ]
    write(folder / "c.jsonl", [*rows("c"), *attack])
    report = scored(gsm, folder, tmp_path / "r.json")
    subs = by_label(report)
    assert subs["a.jsonl"]["models"] == {"m1": "m1"} and subs["c.jsonl"]["models"] == {"c": "c"}
    twice = "key 'model' occurs twice in the object; which value is meant is ambiguous, keep one"
    assert [(p["line"], p["message"]) for p in subs["c.jsonl"]["problems"]] == [
        (13, twice),
        (14, twice),
        (15, TOO_DEEP),
        (16, "duplicate row (same key as line 7)"),  # the escaped "model" key is read as "model": c's own v21 again
    ]
    alone = scored(gsm, folder / "a.jsonl", tmp_path / "a.json")
    assert report["models"]["m1"]["metrics"] == alone["models"]["m1"]["metrics"]


def test_names_of_files_with_the_same_name_in_two_folders(gsm, tmp_path):
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder / "a.jsonl", rows("m1"))
    report = scored(gsm, tmp_path / "x" / "a.jsonl", tmp_path / "y" / "a.jsonl", tmp_path / "r.json")
    assert sorted(by_label(report)) == ["x/a.jsonl", "y/a.jsonl"]
    assert sorted(report["models"]) == ["m1 [x/a.jsonl]", "m1 [y/a.jsonl]"]


def test_a_longest_allowed_name_in_two_files_is_scored_in_both(gsm, tmp_path):
    long = "n" * 200  # the longest name the reader takes; kept apart, it is longer, and still scored
    write(tmp_path / "a.jsonl", rows(long))
    write(tmp_path / "b.jsonl", rows(long))
    report = scored(gsm, tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "r.json")
    assert sorted(report["models"]) == [f"{long} [a.jsonl]", f"{long} [b.jsonl]"]
    assert all(s["status"] == "scored" and s["problems"] == [] for s in report["submissions"])


def test_another_files_problem_never_refuses_an_honest_file_under_strict(gsm, tmp_path, capsys):
    """A model named "'m1'" has messages that hold 'm1' (the honest model's repr): each message goes to the
    file whose model it names, so only the broken file is refused."""
    write(tmp_path / "a.jsonl", rows("m1"))
    write(tmp_path / "c.jsonl", [r for r in rows("'m1'") if r["id"] not in ("b1", "v11")])
    report = scored(gsm, tmp_path / "a.jsonl", tmp_path / "c.jsonl", "--strict", tmp_path / "r.json")
    subs = by_label(report)
    assert subs["a.jsonl"]["status"] == "scored" and subs["a.jsonl"]["problems"] == []
    assert subs["c.jsonl"]["status"] == "refused" and subs["c.jsonl"]["reason"] == "2 problem(s) and --strict"
    assert list(report["models"]) == ["m1"]


def test_a_file_changed_between_its_two_reads_is_refused(gsm, tmp_path, monkeypatch):
    write(tmp_path / "a.jsonl", rows("m1"))
    b = write(tmp_path / "b.jsonl", rows("m2"))
    original, calls = submissions._read_stream, []

    def changing(subs, keep):
        if not calls:
            write(b, rows("m1"))  # b now claims a's model name
        calls.append(1)
        return original(subs, keep)

    monkeypatch.setattr(submissions, "_read_stream", changing)
    report = scored(gsm, tmp_path / "a.jsonl", b, tmp_path / "r.json")
    subs = by_label(report)
    assert subs["b.jsonl"]["status"] == "refused" and "changed while it was being scored" in subs["b.jsonl"]["reason"]
    assert subs["a.jsonl"]["status"] == "scored" and list(report["models"]) == ["m1"]


# -- Medium: CSV cells never run as formulas; every user string escaped -------------------------------------


def test_formula_names_are_text_in_the_leaderboard_and_tidy_csv(gsm, tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    for k, name in enumerate(FORMULAS):
        write(folder / f"{k}.jsonl", rows(name, {"v1" + str(k + 1)}))
    board, tidy = tmp_path / "board.csv", tmp_path / "r.csv"
    assert main(["score", str(gsm), str(folder), *FAST, "--leaderboard", str(board), "-o", str(tidy)]) == 0
    for path in (board, tidy):
        for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8"))):
            for cell in row:  # a cell a spreadsheet would read as a formula is a number, or nothing
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or _number(cell), cell
    frame = pd.read_csv(tidy)
    assert frame["estimate"].dtype == "float64" and (frame["estimate"] < 0).any()  # a negative difference stays a number
    assert set(frame.loc[frame["section"] == "model", "model"]) == {"'" + name for name in FORMULAS}
    assert set(pd.read_csv(board)["model"]) == {"'" + name for name in FORMULAS}


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_csv_cell_is_the_one_escape():
    assert [csv_cell(v) for v in ("=1+1", "+1", "-x", "@A1", "\tx", "\uff1d1", "plain", " =1")] == [
        "'=1+1",
        "'+1",
        "'-x",
        "'@A1",
        "\\x09x",
        "'\uff1d1",
        "plain",
        " =1",
    ]
    assert [csv_cell(v) for v in (None, -0.5, np.float64(-0.25), np.int64(-3), 7, True)] == ["", "-0.5", "-0.25", "-3", "7", "True"]


HOSTILE_FILE = "a\x1b[31m<img src=x onerror=alert(1)>.jsonl"


def test_file_and_model_names_are_escaped_on_the_terminal_and_in_reports(gsm, tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    write(folder / HOSTILE_FILE, ["{not json", *rows("<script>alert(1)</script>")])
    write(folder / "b.jsonl", rows("x|y"))
    for suffix in ("md", "html"):
        out = tmp_path / f"r.{suffix}"
        result = run("score", str(gsm), str(folder), *FAST, "-o", str(out))
        assert result.returncode == 0, result.stderr
        assert "\x1b" not in result.stderr and "\\x1b[31m<img" in result.stderr  # the file named, its escape written out
        text = out.read_text(encoding="utf-8")
        assert "\x1b" not in text and "<img src=x" not in text and "<script>" not in text
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    problems = markdown.split("### Problems by file", 1)[1]
    assert "- a\\\\x1b[31m&lt;img src=x onerror=alert(1)>.jsonl line 1: not valid JSON" in problems
    row = next(line for line in markdown.split("## Submissions", 1)[1].splitlines() if line.startswith("| b.jsonl"))
    assert row.replace("\\|", "").count("|") == 7  # the model's bar does not add a cell
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "<h3>Problems by file</h3>" in page


# -- Medium and Low: one file's trouble is that file's -----------------------------------------------------


@pytest.mark.parametrize("bomb", ["[" * 100_000, "[" * 100_000 + "]" * 100_000, '{"a":' * 100_000])
def test_a_nesting_bomb_is_one_problem_and_the_other_submissions_are_judged(gsm, tmp_path, bomb):
    folder = tmp_path / "subs"
    folder.mkdir()
    write(folder / "a.jsonl", rows("m1"))
    write(folder / "z.jsonl", [bomb, *rows("m2")])
    result = run("score", str(gsm), str(folder), *FAST, "-o", str(tmp_path / "r.json"))
    assert result.returncode == 0 and "internal error" not in result.stderr, result.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert sorted(report["models"]) == ["m1", "m2"]
    assert by_label(report)["z.jsonl"]["problems"] == [{"line": 1, "message": TOO_DEEP}]
    assert f"{folder / 'z.jsonl'}:1: {TOO_DEEP}" in result.stderr.splitlines()


@pytest.mark.parametrize("bomb", ["[" * 100_000, '{"model": "m1", "id": "b1", "answer": ' + "[" * 100_000 + "]" * 100_000 + "}"])
def test_a_nesting_bomb_first_line_of_a_native_file_is_one_problem(gsm, tmp_path, bomb):
    predictions = write(tmp_path / "p.jsonl", [bomb, *rows("m1")])
    result = run("score", str(gsm), str(predictions), *FAST)
    assert result.returncode == 0 and "internal error" not in result.stderr, result.stderr
    block = json.loads(result.stdout)["predictions"]
    assert block["problems"] == [{"line": 1, "message": TOO_DEEP}] and block["excluded"] == 1


def test_another_encoding_or_compression_is_one_line_per_file(gsm, tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    write(folder / "a.jsonl", rows("m1"))
    text = "".join(json.dumps(r) + "\n" for r in rows("m2") * 200)
    (folder / "u16.jsonl").write_bytes(text.encode("utf-16"))
    (folder / "u16le.jsonl").write_bytes(text.encode("utf-16-le"))
    (folder / "z.jsonl").write_bytes(gzip.compress(text.encode(), mtime=0))
    result = run("score", str(gsm), str(folder), *FAST, "-o", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    for name, message in (("u16.jsonl", "is UTF-16 text"), ("u16le.jsonl", "is UTF-16 text"), ("z.jsonl", "is gzip-compressed")):
        about = [line for line in lines if str(folder / name) in line]
        assert len(about) == 1 and message in about[0] and "refused" in about[0], about
    assert "not UTF-8 text" not in result.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert list(report["models"]) == ["m1"]
    assert by_label(report)["z.jsonl"]["reason"].startswith("is gzip-compressed; decompress it")


def test_a_fifo_or_a_dangling_link_in_the_folder_is_refused_without_waiting(gsm, tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    write(folder / "a.jsonl", rows("m1"))
    os.mkfifo(folder / "fifo.jsonl")
    (folder / "gone.jsonl").symlink_to(tmp_path / "missing.jsonl")
    result = run("score", str(gsm), str(folder), *FAST, "-o", str(tmp_path / "r.json"), timeout=60)
    assert result.returncode == 0, result.stderr
    subs = by_label(json.loads((tmp_path / "r.json").read_text(encoding="utf-8")))
    assert subs["fifo.jsonl"]["status"] == "refused" and "not a regular file" in subs["fifo.jsonl"]["reason"]
    assert subs["gone.jsonl"]["status"] == "refused" and "cannot read" in subs["gone.jsonl"]["reason"]


# -- Medium: the mechanism scales with the rows, not with the files squared -------------------------------------


def test_the_stream_is_scored_once_and_once_more_only_when_a_file_is_refused(gsm, tmp_path, monkeypatch):
    from ctxrobust.evaluation.gsm_ic import scorer

    folder = tmp_path / "subs"
    folder.mkdir()
    ids = [r["id"] for r in ALPHA]
    for k in range(300):
        write(folder / f"s{k:03d}.jsonl", [{"model": "m", "id": ids[k % len(ids)], "answer": "12"}])
    calls = []
    original = scorer.score_rows
    monkeypatch.setattr(scorer, "score_rows", lambda *a, **k: calls.append(1) or original(*a, **k))
    monkeypatch.delattr(scorer, "without_models")  # a scorer whose figures are not per model: a refusal scores again
    release, dataset = Release(gsm), registry.get("gsm-ic")
    options = dataset.load("score_options")(replicates=10)
    report = submissions.score_submissions(release, dataset, [folder], options, False, lambda line: None)
    assert len(calls) == 1 and len(report["models"]) == 300 and "m [s000.jsonl]" in report["models"]
    assert len(report["predictions"]["path"]) < 300  # the files are listed under "submissions", not in one line
    assert report["differences"]["by_pair"] == {} and "300 models" in report["differences"]["skipped"]
    write(folder / "s998.jsonl", ["{broken"])  # refused before scoring: no line of it is given to the scorer
    calls.clear()
    report = submissions.score_submissions(release, dataset, [folder], options, False, lambda line: None)
    assert len(calls) == 1 and by_label(report)["s998.jsonl"]["status"] == "refused"
    write(folder / "s999.jsonl", [{"model": "m", "id": "v99", "answer": "1"}])  # refused by the scorer: scored again without it
    calls.clear()
    report = submissions.score_submissions(release, dataset, [folder], options, False, lambda line: None)
    subs = by_label(report)
    assert (
        len(calls) == 2 and subs["s999.jsonl"]["status"] == "refused" and "unknown id 'v99'" in subs["s999.jsonl"]["problems"][0]["message"]
    )
    assert len(report["models"]) == 300 and "m [s999.jsonl]" not in report["models"]


def test_a_runners_file_in_a_folder_is_converted_in_memory_under_its_own_name(gsm, tmp_path):
    from test_run import batch_output, write_rows

    requests = tmp_path / "requests.jsonl"
    assert main(["prompts", str(gsm), "-o", str(requests)]) == 0
    lines = [json.loads(line) for line in requests.read_text(encoding="utf-8").splitlines()]
    folder = tmp_path / "subs"
    folder.mkdir()
    inputs = [{"custom_id": line["id"], "body": {"model": "m1"}} for line in lines]
    write_rows(folder / "batch.jsonl", batch_output(inputs, {line["id"]: "The answer is 12." for line in lines}, set()))
    write(folder / "native.jsonl", rows("m1"))
    release, dataset = Release(gsm), registry.get("gsm-ic")
    seen: list[str] = []
    report = submissions.score_submissions(release, dataset, [folder], dataset.load("score_options")(replicates=10), False, seen.append)
    subs = by_label(report)
    assert subs["batch.jsonl"]["input_format"] == "openai-batch" and subs["batch.jsonl"]["file"] == str(folder / "batch.jsonl")
    assert subs["batch.jsonl"]["status"] == "scored" and subs["batch.jsonl"]["rows"] == len(lines)
    assert sorted(report["models"]) == ["m1 [batch.jsonl]", "m1 [native.jsonl]"]
    assert any("batch.jsonl: read as openai-batch" in line for line in seen)
