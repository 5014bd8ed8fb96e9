"""Progress lines on a terminal (and nothing elsewhere or under -q), and the short summary `score` prints at a terminal."""

from __future__ import annotations

import io
import json
import re
import sys
import time

import pytest
from test_cli import predictions  # noqa: F401  (fixture: the small pseudowords predictions file)

from ctxrobust import cli
from ctxrobust.build import build_release
from ctxrobust.evaluation.run.runner import Progress as RunProgress
from ctxrobust.evaluation.summary import summary_table
from ctxrobust.progress import CLEAR, Progress

SMALL = {"vocabulary_size": 2000, "kinds": ["CHA"], "lengths": [10, 20], "contexts_per_length": 2}
SMALL_FLAGS = [
    "--set",
    "vocabulary_size=2000",
    "--set",
    'kinds=["CHA"]',
    "--set",
    "lengths=[10, 20]",
    "--set",
    "contexts_per_length=2",
]


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("releases")
    return build_release("pseudowords", "1.0.0", SMALL, root, None).path


def test_a_stage_on_a_terminal_shows_its_count_rate_and_time_left_then_clears():
    stream, clock = Terminal(), Clock()
    progress = Progress(stream, clock=clock)
    with progress.stage("items", total=10) as stage:
        clock.now += 6.0
        stage.advance(3, note="the third")
        assert stage.text() == "items: 3/10, 0.5/s, ETA 0:14 (the third)"
        stage.advance(failed=True)
        assert stage.text().startswith("items: 4/10, 1 failed, ")
    written = stream.getvalue()
    assert written.startswith(CLEAR + "items: 0/10, 0:00") and "items: 3/10, 0.5/s, ETA 0:14 (the third)" in written
    assert written.endswith(CLEAR)  # the line is gone when the stage ends


def test_nothing_is_written_off_a_terminal_or_when_quiet():
    for progress in (Progress(io.StringIO()), Progress(Terminal(), quiet=True)):
        with progress.stage("items", total=3) as stage:
            stage.advance(3)
        progress.clear()
        assert progress.stream.getvalue() == ""


def test_a_warning_during_a_stage_clears_the_line_and_the_line_comes_back(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    progress = Progress()
    with progress.stage("scoring"):
        print("warning: something", file=sys.stderr)
        assert sys.stderr is not terminal  # writes go through the line's keeper while the stage runs
    assert sys.stderr is terminal
    written = terminal.getvalue()
    assert CLEAR + "warning: something\n" + CLEAR + "scoring: " in written


def test_the_run_line_has_the_rate_per_minute_the_time_left_and_the_failures():
    terminal = Terminal()
    progress = RunProgress(10, terminal, answered=2, failed=1)
    progress.started = time.monotonic() - 60
    assert progress.line() == "[#########.....................] 3/10 (0 cached, 2 answered, 1 failed), 3.0/min, ETA 2:20"
    progress.update(force=True)
    assert terminal.getvalue() == CLEAR + progress.line() + "\n"
    quiet = RunProgress(10, Terminal(), quiet=True, answered=10)
    quiet.update(force=True)
    assert quiet.stream.getvalue() == ""


def _stages(text: str) -> list[str]:
    return [part for part in text.replace("\033[K", "").split("\r") if part]


def test_build_and_validate_show_their_stages_on_a_terminal_and_not_under_q(tmp_path, monkeypatch, capsys):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    out = tmp_path / "releases"
    assert cli.main(["build", "pseudowords", "--version", "1.0.0", "--out", str(out), *SMALL_FLAGS]) == 0
    lines = _stages(terminal.getvalue())
    assert "pseudowords: building items: 0:00" in lines
    assert any(re.fullmatch(r"pseudowords: writing files: \d/2, .*", line) for line in lines)
    assert any(re.fullmatch(r"pseudowords: checks: \d+/\d+, .*", line) for line in lines)
    assert cli.main(["validate", str(out)]) == 0
    assert any(re.fullmatch(r"validating pseudowords 1\.0\.0: \d+/\d+, .*", line) for line in _stages(terminal.getvalue()))
    assert "all passed" in capsys.readouterr().out

    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert cli.main(["validate", "-q", str(out)]) == 0
    assert cli.main(["build", "pseudowords", "-q", "--version", "1.0.1", "--out", str(out), *SMALL_FLAGS]) == 0
    assert quiet.getvalue() == ""


def test_score_off_a_terminal_prints_the_json_report_and_writes_no_file(release, predictions, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["score", str(release), str(predictions)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["dataset"] == "pseudowords"
    assert "\r" not in captured.err
    assert not list(tmp_path.glob("*.report*.json"))


def test_score_at_a_terminal_prints_a_summary_and_writes_the_full_report_beside(release, predictions, tmp_path, monkeypatch, capsys):
    assert cli.main(["score", str(release), str(predictions)]) == 0
    full = capsys.readouterr().out
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # standard output (captured) as a terminal
    assert cli.main(["score", str(release), str(predictions)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["model", "INS.adjusted", "WTD.adjusted", "accuracy.baseline", "accuracy.context"]
    assert lines[1].split()[0] == "m" and re.search(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", lines[1])
    assert lines[-1] == "full report: preds.report.json"
    assert (tmp_path / "preds.report.json").read_text(encoding="utf-8") == full  # the same report as on standard output
    assert cli.main(["score", str(release), str(predictions)]) == 0  # an existing report is kept: the next name is taken
    assert capsys.readouterr().out.splitlines()[-1] == "full report: preds.report-2.json"
    assert (tmp_path / "preds.report.json").read_text(encoding="utf-8") == full
    assert cli.main(["score", str(release), str(predictions), "--format", "json"]) == 0  # asked for: as before
    assert capsys.readouterr().out == full


def test_score_at_a_terminal_inside_a_release_is_one_error_line(release, predictions, monkeypatch, capsys):
    monkeypatch.chdir(release)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # standard output (captured) as a terminal
    assert cli.main(["score", str(release), str(predictions)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: the full report preds.report.json: is inside the release folder")
    assert err[0].endswith("; or give -o FILE")


def test_the_summary_lists_models_in_leaderboard_order_with_intervals_and_the_invalid_rate():
    spec = {"headline": [("micro", "higher"), ("macro", "higher"), ("absent", "higher")], "invalid": ["invalid"]}
    report = {
        "dataset": "gsm-ic",
        "units": {"micro": "fraction", "macro": "fraction", "invalid": "fraction"},
        "models": {
            "b": {"metrics": {"micro": {"estimate": 0.5, "ci": [0.4, 0.6]}, "invalid": {"estimate": 0.02, "ci": [0.01, 0.03]}}},
            "a": {"metrics": {"micro": {"estimate": 0.9, "ci": [0.85, 0.95]}, "macro": {"estimate": 0.8, "ci": None}}},
        },
        "leaderboard": {"rows": [{"model": "a"}, {"model": "b"}]},
    }
    lines = summary_table(report, spec).splitlines()
    assert lines[0].split() == ["model", "micro", "macro", "invalid"]  # a figure no model has is left out
    assert lines[1].split() == ["a", "90.0", "[85.0,", "95.0]", "80.0", "n/a"]
    assert lines[2].split() == ["b", "50.0", "[40.0,", "60.0]", "n/a", "2.0", "[1.0,", "3.0]"]
    assert lines[3] == "estimate [95% CI], fractions in %; higher is better: micro, macro; invalid: the invalid figure"
