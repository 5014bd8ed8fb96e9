"""Clumsy settings and leftovers: booleans for counts, unbounded work sizes, versions that are no git tag,
interrupted builds' temporary folders, and an edited SHA256SUMS blamed on the right file."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from hostile import built, error_lines, fingerprint, predictions, release, root, run  # noqa: F401

SMALL = ["--set", "vocabulary_size=2000", "--set", "lengths=[10,40]", "--set", "contexts_per_length=3", "--set", 'kinds=["CHA","TOK"]']


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "contexts_per_length=true",
            "error: build configuration for pseudowords: contexts_per_length: true is a boolean, not a number; give a number",
        ),
        ("lengths=[10,true]", "error: build configuration for pseudowords: lengths: [True, 10] is a boolean, not a number; give a number"),
        (
            "vocabulary_size=1000000000",
            "error: build configuration for pseudowords: vocabulary_size: Input should be less than or equal to 1000000",
        ),
    ],
)
def test_build_settings_are_strictly_typed_and_bounded(tmp_path, setting, message):
    before = fingerprint(tmp_path)
    result = run("build", "pseudowords", "--version", "1.0.0", "--set", setting, "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert error_lines(result.stderr) == [message.replace("[True, 10]", "[10, True]")]
    assert fingerprint(tmp_path) == before


def test_gsm_ic_work_sizes_are_bounded(tmp_path):
    result = run("build", "gsm-ic", "--version", "1.0.0", "--set", "n_variants=1000000000", "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert error_lines(result.stderr) == [
        "error: build configuration for gsm-ic: n_variants: Input should be less than or equal to 1000000"
    ]


def test_replicates_have_an_upper_bound(release, predictions, tmp_path):
    before = fingerprint(tmp_path)
    result = run("score", str(release), str(predictions), "--replicates", "1000000000", timeout=60)
    assert result.returncode == 2
    assert error_lines(result.stderr) == ["error: --replicates 1000000000: input should be less than or equal to 100000"]
    assert fingerprint(tmp_path) == before


@pytest.mark.parametrize("version", ["1..0", "1.0.", "1.0.lock", "1.0.0/../x", "v" + "1" * 70, "1.0.0; echo x"])
def test_versions_must_be_valid_git_tags(tmp_path, version):
    before = fingerprint(tmp_path)
    for command in (["build", "pseudowords"], ["release", "--datasets", "pseudowords"]):
        result = run(*command, "--version", version, "--out", str(tmp_path / "out"))
        assert result.returncode == 2
        assert error_lines(result.stderr)[0].startswith(f"error: version {version[:80]!r}: use letters, digits")
    assert fingerprint(tmp_path) == before


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    return child.pid


def test_an_interrupted_build_is_reported_by_validate_and_removed_by_the_next_build(built, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(built, out / "pseudowords" / "1.0.0")
    leftover = out / "pseudowords" / f".2.0.0.building-{dead_pid()}"
    leftover.mkdir()
    (leftover / "contexts.jsonl").write_bytes(b"x" * 10_000)
    running = out / "pseudowords" / f".3.0.0.building-{subprocess.os.getpid()}"  # a build still going on keeps its folder
    running.mkdir()
    checked = run("validate", str(out))
    assert f"WARN {leftover}: the temporary folder of an interrupted build" in checked.stdout
    assert checked.returncode == 0  # the releases themselves are intact
    rebuilt = run("build", "pseudowords", "--version", "1.0.0", *SMALL, "--out", str(out), timeout=300)
    assert f"removed {leftover}: the temporary folder of an interrupted build" in rebuilt.stderr
    assert not leftover.exists() and running.exists()


def test_an_edited_digest_of_the_card_blames_no_file_alone(root, release):
    sums = (release / "SHA256SUMS").read_text().splitlines()
    edited = [("0" * 64 + line[64:]) if line.endswith("  README.md") else line for line in sums]
    (release / "SHA256SUMS").write_text("\n".join(edited) + "\n")
    result = run("validate", str(root))
    assert result.returncode == 1
    assert (
        "README.md - hashes: sha256 is " in result.stdout
        and "SHA256SUMS says "
        + "0" * 64
        + ", and nothing else records it: this file or SHA256SUMS was changed after the release was frozen"
        in result.stdout
    )


def test_a_full_disk_during_a_build_names_the_file_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    import errno
    import os

    from ctxrobust import build, cli

    def no_space(path, rows):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(build, "write_jsonl", no_space)
    out = tmp_path / "out"
    assert cli.main(["build", "pseudowords", "--version", "1.0.0", *SMALL, "--out", str(out)]) == 2
    [line] = error_lines(capsys.readouterr().err)
    assert line.startswith(f"error: {out / 'pseudowords'}/.1.0.0.building-") and line.endswith(
        f".jsonl: cannot write (No space left on device); nothing was written to {out / 'pseudowords' / '1.0.0'}"
    )
    assert fingerprint(out) == {"pseudowords": "folder"}
