"""Helpers for the hostile-input tests: run the command line in a child process with a time bound, and
fingerprint a folder tree (without following links or opening special files) to show nothing changed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from publish_releases import build_pseudowords

from ctxrobust.build import write_sums
from ctxrobust.canonical import dumps_pretty

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 120  # seconds: a command that hangs fails its test instead of the suite


def run(*args: str, env: dict | None = None, timeout: float = TIMEOUT, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`ctxrobust ARGS...` in a child process, bounded by `timeout` (subprocess.TimeoutExpired fails the test)."""
    environment = {**os.environ, "PYTHONPATH": str(REPO / "tests"), **(env or {})}
    environment.pop("CTXROBUST_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "ctxrobust.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def fingerprint(root: Path) -> dict[str, str]:
    """relative path -> sha256 of a regular file, the target of a link, or the kind of a special file."""
    found = {}
    for folder, subfolders, files in os.walk(root, followlinks=False):
        for name in subfolders + files:
            path = Path(folder) / name
            mode = os.lstat(path).st_mode
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(mode):
                found[rel] = "link:" + os.readlink(path)
            elif stat.S_ISREG(mode):
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISDIR(mode):
                found[rel] = "folder"
            else:
                found[rel] = f"special:{stat.S_IFMT(mode)}"
    return found


def edit_manifest(folder: Path, change) -> None:
    """Change a release's manifest (and re-hash SHA256SUMS, as a careful attacker would)."""
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    (folder / "manifest.json").write_text(dumps_pretty(manifest))
    write_sums(folder)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


# -- fixtures: a small intact pseudowords release, copied per test -----------------------------------


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    return build_pseudowords(tmp_path_factory.mktemp("built"), "1.0.0")


@pytest.fixture
def root(built, tmp_path) -> Path:
    """A releases folder holding a private copy of one intact release, free to damage."""
    shutil.copytree(built, tmp_path / "releases" / "pseudowords" / "1.0.0")
    return tmp_path / "releases"


@pytest.fixture
def release(root) -> Path:
    return root / "pseudowords" / "1.0.0"


@pytest.fixture
def predictions(tmp_path) -> Path:
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in prediction_rows()))
    return path


def prediction_rows(model: str = "m") -> list[dict]:
    """Pseudowords predictions for 8 questions: baseline and two contexts of the release's longest length."""
    rows = [{"model": model, "id": f"q{i}", "context": None, "trial": t, "correct": (i + t) % 2} for i in range(8) for t in range(3)]
    rows += [
        {"model": model, "id": f"q{i}", "context": c, "trial": t, "correct": (i * t) % 2}
        for i in range(8)
        for c in ("CHA-000040-000", "CHA-000040-001")
        for t in range(2)
    ]
    return rows
