"""Outputs never overwrite inputs or frozen releases, are written atomically, and make variables are never shell text."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hostile import REPO, built, error_lines, fingerprint, predictions, release, root, run  # noqa: F401

from ctxrobust import cli, output

FAST = ["--replicates", "5", "--null-experiments", "5", "--splits", "5"]


@pytest.fixture
def benchmark(tmp_path) -> Path:
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)}) + "\n" for i in range(3)))
    return path


# -- 2. outputs never replace inputs or write into a release -------------------------------------------


def test_a_report_never_replaces_the_predictions_it_scores(release, predictions, tmp_path):
    before = fingerprint(tmp_path)
    result = run("score", str(release), str(predictions), *FAST, "-o", str(predictions))
    assert result.returncode == 2
    assert error_lines(result.stderr) == [
        f"error: -o {predictions}: is also an input of this command ({predictions}); writing it would destroy that input, write elsewhere"
    ]
    assert fingerprint(tmp_path) == before


@pytest.mark.parametrize("flag", ["-o", "--export"])
def test_score_writes_nothing_into_a_release(release, predictions, tmp_path, flag):
    target = release / ("README.md" if flag == "-o" else "contexts.parquet")
    before = fingerprint(tmp_path)
    result = run("score", str(release), str(predictions), *FAST, flag, str(target))
    assert result.returncode == 2
    assert error_lines(result.stderr) == [
        f"error: {flag} {target}: is inside the release folder {release}, which is frozen; write outside it"
    ]
    assert fingerprint(tmp_path) == before


def test_prompts_write_nothing_into_a_release_nor_over_their_benchmark(release, benchmark, tmp_path):
    before = fingerprint(tmp_path)
    inside = run("prompts", str(release), "--benchmark", str(benchmark), "-o", str(release / "main.jsonl"))
    over = run("prompts", str(release), "--benchmark", str(benchmark), "-o", str(benchmark))
    assert inside.returncode == over.returncode == 2
    assert error_lines(inside.stderr) == [
        f"error: -o {release / 'main.jsonl'}: is inside the release folder {release}, which is frozen; write outside it"
    ]
    assert error_lines(over.stderr)[0].startswith(f"error: -o {benchmark}: is also an input of this command")
    assert fingerprint(tmp_path) == before


def test_a_link_into_a_release_is_refused_as_the_release_itself(release, predictions, tmp_path):
    os.symlink(release / "README.md", tmp_path / "report.md")
    before = fingerprint(tmp_path)
    result = run("score", str(release), str(predictions), *FAST, "-o", str(tmp_path / "report.md"))
    assert result.returncode == 2 and "is inside the release folder" in result.stderr
    assert fingerprint(tmp_path) == before


def test_the_export_is_never_the_report(release, predictions, tmp_path):
    out = tmp_path / "r.csv"
    before = fingerprint(tmp_path)
    result = run("score", str(release), str(predictions), *FAST, "-o", str(out), "--export", str(out))
    assert result.returncode == 2 and f"error: --export {out}: is also an input of this command" in result.stderr
    assert fingerprint(tmp_path) == before


def test_push_dry_run_stages_nowhere_inside_any_release(release, built, tmp_path):
    other = tmp_path / "other" / "pseudowords" / "1.0.0"
    shutil.copytree(built, other)
    before = fingerprint(tmp_path)
    result = run("push", str(release), "--repo", "my-org/pw", "--dry-run", str(other / "stage"))
    assert result.returncode == 2
    assert error_lines(result.stderr) == [
        f"error: {other / 'stage'}: is inside the release folder {other}, which is frozen; give a folder outside it to stage into"
    ]
    assert fingerprint(tmp_path) == before


# -- 3. a failure midway leaves the old file intact --------------------------------------------------


def test_a_full_disk_leaves_the_old_report_and_names_the_path(release, predictions, tmp_path, monkeypatch, capsys):
    report = tmp_path / "report.json"
    report.write_text('{"earlier": "report"}\n')
    before = fingerprint(tmp_path)

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(output.os, "fsync", no_space)
    assert cli.main(["score", str(release), str(predictions), *FAST, "-o", str(report)]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"error: {report}: cannot write (No space left on device); the previous file, if any, is unchanged"
    ]
    assert fingerprint(tmp_path) == before  # no partial or temporary file either


def test_an_export_that_fails_leaves_the_old_export(release, predictions, tmp_path, monkeypatch, capsys):
    export = tmp_path / "changes.csv"
    export.write_text("id,model\n")
    before = fingerprint(tmp_path)
    monkeypatch.setattr(output.os, "replace", lambda *a: (_ for _ in ()).throw(OSError(errno.EIO, "Input/output error")))
    assert cli.main(["score", str(release), str(predictions), *FAST, "--export", str(export), "-o", str(tmp_path / "r.json")]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"error: {export}: cannot write (Input/output error); the previous file, if any, is unchanged"
    ]
    assert fingerprint(tmp_path) == before


def test_outputs_are_written_whole(release, predictions, tmp_path):
    result = run("score", str(release), str(predictions), *FAST, "-o", str(tmp_path / "r.json"), "--export", str(tmp_path / "x.csv"))
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["dataset"] == "pseudowords"
    assert (tmp_path / "x.csv").read_text().startswith("id,model,s_i0,s_ic,delta_i\n")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


# -- 4. make variables are single, checked arguments ----------------------------------------------------


@pytest.fixture
def venv(tmp_path) -> Path:
    """A stand-in for the Makefile's virtual environment: this interpreter's commands, already installed."""
    folder = tmp_path / "venv"
    (folder / "bin").mkdir(parents=True)
    bin_dir = Path(shutil.which("ctxrobust") or Path(os.sys.executable).parent / "ctxrobust").parent
    for name in ("ctxrobust", "validate"):
        os.symlink(bin_dir / name, folder / "bin" / name)
    (folder / "bin" / ".installed").touch()
    return folder


def make(venv: Path, **variables: str) -> subprocess.CompletedProcess:
    args = ["make", "-s", "-C", str(REPO), "release", f"VENV={venv}", *(f"{k}={v}" for k, v in variables.items())]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("VERSION", "1.0.0; touch {tmp}/INJECTED", "error: VERSION='1.0.0; touch {tmp}/INJECTED': use letters, digits"),
        ("VERSION", "$(shell touch {tmp}/INJECTED)", "error: VERSION='$(shell touch {tmp}/INJECTED)': use letters, digits"),
        ("VERSION", "1.0.0`touch {tmp}/INJECTED`", "error: VERSION='1.0.0`touch {tmp}/INJECTED`': use letters, digits"),
        ("DATASETS", "pseudowords; touch {tmp}/INJECTED", "error: DATASETS='pseudowords; touch {tmp}/INJECTED': give dataset names"),
        ("DATASETS", "$(shell touch {tmp}/INJECTED)", "error: DATASETS='$(shell touch {tmp}/INJECTED)': give dataset names"),
    ],
)
def test_make_variables_are_never_run_as_commands(venv, tmp_path, variable, value, message):
    value, message = value.format(tmp=tmp_path), message.format(tmp=tmp_path)
    settings = {"VERSION": "1.0.0", "OUT": str(tmp_path / "out"), variable: value}
    before = fingerprint(tmp_path)
    result = make(venv, **settings)
    assert result.returncode == 2
    assert error_lines(result.stderr)[0].startswith(message)
    assert not (tmp_path / "INJECTED").exists() and fingerprint(tmp_path) == before


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_passes_out_and_datasets_as_given(venv, tmp_path):
    out = tmp_path / "out dir; touch INJECTED"
    result = make(venv, VERSION="1..0", OUT=str(out), DATASETS="pseudowords")
    assert result.returncode == 2
    assert error_lines(result.stderr)[0].startswith("error: version '1..0': use letters, digits")
    assert not (tmp_path / "INJECTED").exists() and not (REPO / "INJECTED").exists() and not out.exists()


@pytest.mark.parametrize(("signum", "code", "name"), [(15, 143, "SIGTERM"), (2, 130, "SIGINT")])
def test_a_signal_while_writing_leaves_the_old_output_and_no_partial_file(
    release, benchmark, tmp_path, monkeypatch, capsys, signum, code, name
):
    import ctxrobust.evaluation.pseudowords.prompts as module

    real = module.prompts

    def interrupted(release, options):
        for number, request in enumerate(real(release, options)):
            if number == 2:
                os.kill(os.getpid(), signum)  # arrives while the output is half written
            yield request

    monkeypatch.setattr(module, "prompts", interrupted)
    out = tmp_path / "requests.jsonl"
    out.write_text("earlier requests\n")
    before = fingerprint(tmp_path)
    assert cli.main(["prompts", str(release), "--benchmark", str(benchmark), "-o", str(out)]) == code
    assert error_lines(capsys.readouterr().err) == [
        f"error: interrupted by {name}; no output was left half-written (earlier files are as they were)"
    ]
    assert fingerprint(tmp_path) == before


def test_a_benchmark_that_is_a_fifo_is_refused_without_waiting(release, tmp_path):
    fifo = tmp_path / "bench.jsonl"
    os.mkfifo(fifo)
    result = run("prompts", str(release), "--benchmark", str(fifo), timeout=60)
    assert result.returncode == 2
    assert error_lines(result.stderr) == [
        f"error: --benchmark {fifo}: is not a regular file (a FIFO or device cannot be read as one); give the file"
    ]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_builds_into_the_out_given_however_odd_its_name(venv, tmp_path):
    out = tmp_path / "out dir; touch INJECTED"
    result = subprocess.run(
        ["make", "-s", "-C", str(REPO), "release", f"VENV={venv}", "VERSION=1.0.0", f"OUT={out}", "DATASETS=pseudowords"],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "SOURCES_MIRROR": os.environ.get("SOURCES_MIRROR", "")},
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["pseudowords"]  # DATASETS honoured: nothing else built
    assert (out / "pseudowords" / "1.0.0" / "manifest.json").is_file()
    assert "validated 1 release(s): all passed" in result.stdout
    assert not (tmp_path / "INJECTED").exists() and not (REPO / "INJECTED").exists()


def test_pyarrow_floor_excludes_the_release_with_a_known_cve():
    import tomllib
    from packaging.requirements import Requirement
    from packaging.version import Version

    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pyarrow = next(Requirement(d) for d in dependencies if Requirement(d).name == "pyarrow")
    assert not pyarrow.specifier.contains(Version("14.0.0")) and pyarrow.specifier.contains(Version("14.0.1"))
