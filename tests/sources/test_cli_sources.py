"""`ctxrobust release` / `build` / `sources` without the source snapshots: one short line per dataset, the full list on -v or in a file."""

from __future__ import annotations

import hashlib

import pytest

from ctxrobust import cli
from ctxrobust.builders.misleadqa import MisleadQABuilder, MisleadQAConfig
from ctxrobust.sources.lock import load_lock

LOCK = load_lock()
GSM_IC = sorted(n for n in LOCK if n.startswith(("gsm8k/train", "gsm_ic/")))


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No mirror, an empty cache, no FRED key, and every HTTPS download sent to a closed local port."""
    for name in ("SOURCES_MIRROR", "FRED_API_KEY", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.setenv("CTXROBUST_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _errors(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]


def test_release_builds_what_it_can_and_says_one_short_line_per_dataset(offline, capsys):
    code = cli.main(["release", "--version", "1.0.0", "--out", str(offline / "releases")])
    captured = capsys.readouterr()
    assert code == 1
    assert (offline / "releases" / "pseudowords" / "1.0.0" / "manifest.json").exists()
    errors = captured.err.splitlines()
    assert [line.split(":")[1].strip() for line in errors[:2]] == ["gsm-ic", "misleadqa"]
    assert errors[2] == "2 of 3 dataset(s) not built: gsm-ic, misleadqa" and len(errors) == 3
    gsm_ic, misleadqa = errors[:2]
    report = offline / "cache" / "missing" / "gsm-ic.txt"
    assert gsm_ic == (
        f"error: gsm-ic: {len(GSM_IC)} source file(s) missing or mismatching (first: {GSM_IC[0]}, missing); to fix: set "
        f"SOURCES_MIRROR=DIR to a source mirror, or allow downloads from raw.githubusercontent.com; full list in {report}"
    )
    needed = len(MisleadQABuilder(MisleadQAConfig()).required_snapshots())  # FRED, the SituatedQA splits it reads, RAMDocs, CondAmbigQA
    assert misleadqa.startswith(
        f"error: misleadqa: {needed} source file(s) missing or mismatching (first: condambigqa/mcaqa.json, missing)"
    )
    assert "FRED (FRED_API_KEY)" in misleadqa and len(misleadqa) < 400
    lines = report.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + len(GSM_IC) and lines[0] in gsm_ic
    assert [line.split(":")[0] for line in lines[1:]] == GSM_IC
    assert all(f"expected sha256 {LOCK[name].sha256}" in line for name, line in zip(GSM_IC, lines[1:]))
    assert len((offline / "cache" / "missing" / "misleadqa.txt").read_text(encoding="utf-8").splitlines()) == 1 + needed


def test_verbose_lists_every_file_after_the_line(offline, capsys):
    assert cli.main(["build", "gsm-ic", "--version", "1.0.0", "--out", str(offline / "releases"), "-v"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: gsm-ic: 2 source file(s) missing") and "full list" not in err[0]
    assert [line.split(":")[0].strip() for line in err[1:]] == GSM_IC
    assert all(line.startswith("  ") and "download failed (" in line and "To fix:" in line for line in err[1:])
    assert not (offline / "cache" / "missing").exists()


def test_a_mismatching_mirror_file_is_counted_with_both_hashes_in_the_list(offline, capsys, monkeypatch):
    mirror = offline / "mirror"
    (mirror / "gsm_ic").mkdir(parents=True)
    (mirror / "gsm_ic" / "gsm8k_validation.jsonl").write_text('{"question": "?", "answer": "1"}\n', encoding="utf-8")
    monkeypatch.setenv("SOURCES_MIRROR", str(mirror))
    assert cli.main(["sources", *GSM_IC]) == 2
    (line,) = _errors(capsys)
    actual = hashlib.sha256((mirror / "gsm_ic" / "gsm8k_validation.jsonl").read_bytes()).hexdigest()
    assert line.startswith("error: sources: 2 source file(s) missing or mismatching (first: gsm8k/train.jsonl, missing)")
    report = offline / "cache" / "missing" / "sources.txt"
    expected = LOCK["gsm_ic/gsm8k_validation.jsonl"].sha256
    assert f"gsm_ic/gsm8k_validation.jsonl: expected sha256 {expected}, actual {actual} (mirror copy)" in report.read_text(encoding="utf-8")
    # once the sources are complete the stale list is removed
    from ctxrobust.sources.store import SnapshotStore

    SnapshotStore().clear_report("sources")
    assert not report.exists()


def test_an_unwritable_cache_points_to_verbose(offline, capsys, monkeypatch):
    blocker = offline / "file"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("CTXROBUST_CACHE", str(blocker / "cache"))
    assert cli.main(["sources", "gsm8k/LICENSE", "gsm8k/train.jsonl"]) == 2
    (line,) = _errors(capsys)
    assert line.startswith("error: sources: 2 source file(s)") and line.endswith("rerun with -v for the full list")
