"""The command line on a small pseudowords release: intact releases only, options that apply, one-line errors."""

from __future__ import annotations

import json
import shutil

import pytest

from ctxrobust import cli
from ctxrobust.build import build_release

SMALL = {"vocabulary_size": 2000, "kinds": ["CHA"], "lengths": [10, 20], "contexts_per_length": 2}


@pytest.fixture(scope="module")
def release_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("releases")
    build_release("pseudowords", "1.0.0", SMALL, root, None)
    return root


@pytest.fixture
def release(release_root, tmp_path):
    """A private copy, free to damage."""
    copy = tmp_path / "pseudowords" / "1.0.0"
    shutil.copytree(release_root / "pseudowords" / "1.0.0", copy)
    return copy


@pytest.fixture
def benchmark(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)}) + "\n" for i in range(3)))
    return path


@pytest.fixture
def predictions(tmp_path):
    path = tmp_path / "preds.jsonl"
    rows = [{"model": "m", "id": f"q{i}", "context": None, "trial": t, "correct": (i + t) % 2} for i in range(12) for t in range(4)]
    rows += [
        {"model": "m", "id": f"q{i}", "context": c, "trial": t, "correct": (i * t) % 2}
        for i in range(12)
        for c in ("CHA-000020-000", "CHA-000020-001")
        for t in range(2)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_prompts_and_score_refuse_a_changed_release(release, benchmark, predictions, capsys):
    data = bytearray((release / "contexts.jsonl").read_bytes())
    data[40] = ord("q") if data[40] != ord("q") else ord("z")
    (release / "contexts.jsonl").write_bytes(bytes(data))
    assert cli.main(["prompts", str(release), "--benchmark", str(benchmark)]) == 2
    assert cli.main(["score", str(release), str(predictions)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(
        line.startswith("error: ") and "contexts.jsonl: sha256 is" in line and "run `validate" in line for line in err
    )


def test_an_option_of_another_dataset_is_refused(release, benchmark, predictions, capsys):
    assert cli.main(["prompts", str(release), "--benchmark", str(benchmark), "--instruction"]) == 2
    assert cli.main(["score", str(release), str(predictions), "--lenient-letters", "--min-clusters", "3"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: --instruction: not an option for pseudowords prompts (it takes: --benchmark,")
    assert err[1].startswith("error: --lenient-letters, --min-clusters: not an option for pseudowords score")


def test_report_format_follows_the_output_suffix(release, predictions, tmp_path):
    assert cli.main(["score", str(release), str(predictions), "--replicates", "20", "-o", str(tmp_path / "r.md")]) == 0
    assert cli.main(["score", str(release), str(predictions), "--replicates", "20", "-o", str(tmp_path / "r.html")]) == 0
    assert cli.main(["score", str(release), str(predictions), "--replicates", "20", "-o", str(tmp_path / "r.txt")]) == 0
    markdown = (tmp_path / "r.md").read_text()
    assert markdown.startswith("# pseudowords: context-induced instability") and "| Model | AVG |" in markdown
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert json.loads((tmp_path / "r.txt").read_text())["dataset"] == "pseudowords"


def test_an_output_folder_that_does_not_exist_is_one_line(release, benchmark, predictions, tmp_path, capsys):
    missing = tmp_path / "nope"
    assert cli.main(["score", str(release), str(predictions), "--replicates", "5", "-o", str(missing / "r.json")]) == 2
    assert cli.main(["prompts", str(release), "--benchmark", str(benchmark), "-o", str(missing / "p.jsonl")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if line.startswith("error:")] == [
        f"error: {missing / 'r.json'}: the folder {missing} does not exist; create it or write elsewhere",
        f"error: {missing / 'p.jsonl'}: the folder {missing} does not exist; create it or write elsewhere",
    ]


def test_prompts_leave_no_partial_file_when_they_fail(release, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1", "question": "x"}\n{"id": "q1", "question": "y"}\n')
    out = tmp_path / "p.jsonl"
    out.write_text("earlier output\n")
    assert cli.main(["prompts", str(release), "--benchmark", str(bad), "-o", str(out)]) == 2
    assert out.read_text() == "earlier output\n" and not (tmp_path / "p.jsonl.part").exists()
    assert "already used on line 1" in capsys.readouterr().err


def test_validate_names_the_folder_and_checks_it_matches_the_manifest(release_root, tmp_path, capsys):
    misplaced = tmp_path / "gsm-ic" / "2.0.0"
    shutil.copytree(release_root / "pseudowords" / "1.0.0", misplaced)
    assert cli.validate_main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL gsm-ic 2.0.0 manifest.json - location: the folder gsm-ic/2.0.0 holds pseudowords 1.0.0 by its manifest" in out
    assert "gsm-ic 2.0.0: " in out and "1 failure(s)" in out


def test_zero_is_an_option_value_not_an_absent_option(release, predictions, tmp_path):
    assert cli.main(["score", str(release), str(predictions), "--replicates", "0", "--seed", "0", "-o", str(tmp_path / "r.json")]) == 0
    parameters = json.loads((tmp_path / "r.json").read_text())["parameters"]
    assert parameters["replicates"] == 0 and parameters["seed"] == 0


def test_a_folder_without_predictions_files_is_named(release, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["score", str(release), str(empty)]) == 2
    assert f"error: {empty}: a folder with no predictions file (*.jsonl) in it" in capsys.readouterr().err


def test_predictions_with_nothing_to_compare_are_refused(release, tmp_path, capsys):
    path = tmp_path / "baseline_only.jsonl"
    path.write_text("".join(json.dumps({"model": "m", "id": f"q{i}", "context": None, "trial": 0, "correct": 1}) + "\n" for i in range(5)))
    assert cli.main(["score", str(release), str(path)]) == 2
    assert "no question of any model has both no-context rows" in capsys.readouterr().err


def test_lengths_with_only_sqa_is_refused(release, tmp_path, capsys):
    bench = tmp_path / "b.jsonl"
    bench.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?", "answer": "A"}) + "\n" for i in range(25)))
    assert cli.main(["prompts", str(release), "--benchmark", str(bench), "--kinds", "SQA", "--lengths", "10"]) == 2
    assert "SQA histories are 20 turns, not a token length" in capsys.readouterr().err
