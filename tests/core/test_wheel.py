"""The built wheel, installed (not editable) into a fresh virtual environment and run from another
folder: one top-level name, every data file the code reads, and the commands work."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from paths import REPO

TIMEOUT = 300


def run(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT, **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(REPO)])
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("ctxrobust-*.whl")
    return path


def test_the_wheel_ships_one_top_level_name_and_every_data_file(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (top,) = [n for n in names if n.endswith("top_level.txt")]
        assert archive.read(top).decode().split() == ["ctxrobust"]
    assert all(n.startswith(("ctxrobust/", "ctxrobust-")) for n in names)
    tracked = run(["git", "ls-files", "*.json", "*.txt"], cwd=REPO).stdout.split()
    folders = {"builders": "ctxrobust/builders", "sources": "ctxrobust/sources", "schemas": "ctxrobust/schemas", "ctxrobust": "ctxrobust"}
    for name in tracked:
        top, _, rest = name.partition("/")
        if top in folders:
            assert f"{folders[top]}/{rest}" in names, f"{name} is not in the wheel"


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh environment holding the wheel; its dependencies come from this environment's site-packages
    (a path entry, so this environment's editable-install hook does not run there)."""
    env = tmp_path_factory.mktemp("env") / "venv"
    assert run([sys.executable, "-m", "venv", "--without-pip", str(env)]).returncode == 0
    python = env / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index", str(wheel)])
    assert done.returncode == 0, done.stderr
    return env


def test_the_installed_wheel_builds_validates_prompts_and_scores(installed, tmp_path):
    bin_dir = installed / "bin"
    where = run(
        [
            str(bin_dir / "python"),
            "-c",
            "import ctxrobust.builders, ctxrobust.publish.card as c; print(ctxrobust.builders.__file__); print(c.CARD_TEXT.exists())",
        ],
        cwd=tmp_path,
    )
    assert str(installed) in where.stdout and where.stdout.split()[1] == "True", where.stderr
    settings = ["--set", "vocabulary_size=500", "--set", 'kinds=["CHA"]', "--set", "lengths=[10]", "--set", "contexts_per_length=2"]
    done = run([str(bin_dir / "ctxrobust"), "build", "pseudowords", "--version", "0.1.0", *settings, "--out", "releases"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run([str(bin_dir / "validate"), "releases"], cwd=tmp_path)
    assert done.returncode == 0 and "validated 1 release(s): all passed" in done.stdout, done.stdout + done.stderr
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i} + 1?", "answer": str(i + 1)}) + "\n" for i in range(3)))
    release = "releases/pseudowords/0.1.0"
    done = run([str(bin_dir / "ctxrobust"), "prompts", release, "--benchmark", str(bench), "-o", "requests.jsonl"], cwd=tmp_path)
    assert done.returncode == 0 and len((tmp_path / "requests.jsonl").read_text().splitlines()) == 3 * (20 + 2 * 2), (
        done.stderr
    )  # the sampling plan: 20 no-context samples, 2 per context
    rows = [
        {"model": "m", "id": f"q{i}", "context": c, "trial": t, "correct": (i + t) % 2}
        for i in range(3)
        for c in (None, "CHA-000010-000", "CHA-000010-001")
        for t in range(4)
    ]
    (tmp_path / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run([str(bin_dir / "ctxrobust"), "score", release, "preds.jsonl", "--replicates", "20", "-o", "report.json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "m" in json.loads((tmp_path / "report.json").read_text())["models"]
