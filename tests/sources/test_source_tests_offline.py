"""Source tests on any machine: skipped with one count line without snapshots, a failure under CTXROBUST_REQUIRE_SOURCES=1."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from paths import TESTS as TESTS_DIR

CONFTEST = TESTS_DIR / "conftest.py"

TESTS = """
import pytest

def test_plain():
    assert True

def test_needs_the_store(store):
    assert store.names()

@pytest.mark.sources
def test_marked_by_hand():
    assert True

def test_skips_itself(mirror):
    pytest.skip("not today")

def test_asks_for_the_store_late(request):
    assert request.getfixturevalue("store").names()
"""


def _run(folder: Path, tmp_path: Path, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("SOURCES_MIRROR", "CTXROBUST_CACHE", "CTXROBUST_REQUIRE_SOURCES")}
    environment.update(CTXROBUST_CACHE=str(tmp_path / "empty-cache"), **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir(parents=True)
    shutil.copy(CONFTEST, folder / "conftest.py")
    (folder / "test_example.py").write_text(TESTS, encoding="utf-8")
    return folder


def test_without_snapshots_source_tests_are_skipped_and_counted(tmp_path):
    run = _run(_suite(tmp_path), tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed, 4 skipped" in run.stdout
    assert "4 source test(s) skipped: no third-party source snapshots (SOURCES_MIRROR not set" in run.stdout
    assert "set SOURCES_MIRROR=DIR" in run.stdout


def test_a_mirror_that_lacks_pinned_files_is_named(tmp_path):
    (tmp_path / "half-mirror").mkdir()
    run = _run(_suite(tmp_path), tmp_path, SOURCES_MIRROR=str(tmp_path / "half-mirror"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "lacks 69 of 69 pinned files (first: condambigqa/mcaqa.json)" in run.stdout


def test_required_sources_turn_every_skipped_source_test_into_a_failure(tmp_path):
    run = _run(_suite(tmp_path), tmp_path, CTXROBUST_REQUIRE_SOURCES="1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed, 3 errors" in run.stdout
    assert "CTXROBUST_REQUIRE_SOURCES=1 but no third-party source snapshots" in run.stdout


def test_required_sources_fail_a_source_test_that_skips_itself(tmp_path, mirror):
    run = _run(_suite(tmp_path), tmp_path, SOURCES_MIRROR=str(mirror), CTXROBUST_REQUIRE_SOURCES="1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 4 passed" in run.stdout
    assert "a source test was skipped under CTXROBUST_REQUIRE_SOURCES=1: Skipped: not today" in run.stdout
    relaxed = _run(_suite(tmp_path / "again"), tmp_path, SOURCES_MIRROR=str(mirror))
    assert relaxed.returncode == 0 and "4 passed, 1 skipped" in relaxed.stdout, relaxed.stdout
