"""The bench scripts cannot rot: each has a quick mode, and CI runs every one of them in it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from paths import REPO

SCRIPTS = sorted((REPO / "bench").glob("*.py"))


def test_ci_runs_every_bench_in_its_quick_mode():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "BENCH_QUICK=1 make bench" in ci
    assert "for script in bench/*.py" in (REPO / "Makefile").read_text(encoding="utf-8")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_bench_script_has_a_quick_mode(script):
    text = script.read_text(encoding="utf-8")
    assert 'os.environ.get("BENCH_QUICK") == "1"' in text and "--quick" in text


def test_the_scoring_benches_run_quickly_against_a_release_with_its_sums(tmp_path):
    """The scoring benches build their synthetic releases with SHA256SUMS, which `score` requires."""
    env = {**os.environ, "BENCH_QUICK": "1"}
    for name in ("score_gsm_ic.py", "score_misleadqa.py"):
        done = subprocess.run(
            [sys.executable, str(REPO / "bench" / name), *(["--out", str(tmp_path / "gsm")] if "gsm" in name else [])],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "error" not in done.stdout + done.stderr
