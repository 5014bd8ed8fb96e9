"""Every command in the README's code blocks runs on a fresh clone with the source mirror.

The commands are read from the README's ```sh blocks, one per line, as a reader would type them.
Those a test can run (`ctxrobust ...`, `validate ...`, the local `load_dataset` call) run in a folder
holding the default releases (built once with `ctxrobust release`, what `make release` runs) and
`examples/`; the others are matched by EXTERNAL, which says what each needs, so a new README command
is either run here or named there.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO

README = REPO / "README.md"
BIN = Path(sys.executable).parent

# (pattern a command line matches, what it needs that a test cannot have)
EXTERNAL = [
    (r"^make (install|test|docs|bench)\b", "a Makefile target that CI's own steps run (.ci/run)"),
    (r"^make release\b", "`ctxrobust release` then `validate`, which this test runs to build its releases"),
    (r"^source ", "a change to the reader's shell"),
    (r"^vllm ", "a model server with a GPU"),
    (r"--base-url http://localhost:8000", "the model server started by the line above"),
    (r"\bqwen\.jsonl\b", "the predictions of the model server's run"),
    (r"^HF_TOKEN=", "a Hugging Face account"),
]


def blocks(language: str) -> list[list[str]]:
    """The lines of every fenced block of `language` in the README."""
    return [block.splitlines() for block in re.findall(rf"^```{language}\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)]


def commands() -> list[str]:
    out = []
    for block in blocks("sh"):
        for line in block:
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command:
                out.append(command)
    return out


def external(command: str) -> str | None:
    return next((why for pattern, why in EXTERNAL if re.search(pattern, command)), None)


def test_every_readme_command_is_run_here_or_named_as_external():
    listed = commands()
    assert len(listed) >= 15
    runnable = [c for c in listed if external(c) is None]
    assert all(shlex.split(c)[0] in ("ctxrobust", "validate") for c in runnable), runnable
    assert {shlex.split(c)[1] for c in runnable if c.startswith("ctxrobust")} >= {"prompts", "score", "push"}


def reader_env(mirror: Path, work: Path) -> dict:
    """The environment of a reader who set SOURCES_MIRROR, as `make release` and `validate` read it."""
    return {**os.environ, "SOURCES_MIRROR": str(mirror), "CTXROBUST_CACHE": str(work / ".cache")}


@pytest.fixture(scope="module")
def workdir(mirror, tmp_path_factory) -> Path:
    """A folder laid out like a clone after `make release VERSION=1.0.0`: releases/ and examples/."""
    work = tmp_path_factory.mktemp("readme")
    env = reader_env(mirror, work)
    built = subprocess.run(
        [BIN / "ctxrobust", "release", "--version", "1.0.0", "--out", "releases"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert built.returncode == 0, built.stderr
    shutil.copytree(REPO / "examples", work / "examples")
    return work


@pytest.mark.parametrize("command", [c for c in commands() if external(c) is None])
def test_a_readme_command_runs(command, workdir, mirror):
    argv = shlex.split(command)
    argv[0] = str(BIN / argv[0])
    run = subprocess.run(argv, cwd=workdir, env=reader_env(mirror, workdir), capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"{command}\n{run.stderr[-2000:]}"
    assert "internal error" not in run.stderr
    if argv[1:2] == ["score"] and "-o" not in argv:
        assert run.stdout.strip(), command  # the report goes to standard output


def test_the_readme_loads_a_local_release_with_datasets(workdir):
    lines = [line for block in blocks("python") for line in block if "load_dataset(" in line and "releases/" in line]
    assert lines, "the README shows no local load_dataset call"
    code = "from datasets import load_dataset\n" + "\n".join(lines) + "\nprint(len(local))\n"
    run = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout.split()[-1]) > 0


def test_the_readme_scores_from_python_as_the_command_does(workdir, mirror):
    """The README's Python scoring block runs as written and prints the figures `ctxrobust score` reports."""
    code = next((block for block in blocks("python") if any("ctxrobust.score(" in line for line in block)), None)
    assert code, "the README shows no ctxrobust.score call"
    env = reader_env(mirror, workdir)
    shown = "\n".join(code) + '\nimport json\nprint(json.dumps(report.to_dict()["models"]))\n'
    run = subprocess.run([sys.executable, "-c", shown], cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    cli = subprocess.run(
        [BIN / "ctxrobust", "score", "releases/gsm-ic/1.0.0", "examples/gsm-ic.jsonl", "--format", "json"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert cli.returncode == 0, cli.stderr[-2000:]
    models = json.loads(cli.stdout)["models"]
    api = json.loads(run.stdout.strip().splitlines()[-1])
    assert api and {m: v["metrics"] for m, v in api.items()} == {m: v["metrics"] for m, v in models.items()}
