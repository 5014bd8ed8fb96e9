"""Hostile release folders: names that leave the folder, links, FIFOs, devices, folders and unknown datasets.

Every command that reads a release goes through one checked opener: nothing outside the release is
read or written, nothing hangs, and `validate` reports each problem as a failure of that release and
goes on to the next one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from hostile import built, edit_manifest, error_lines, fingerprint, predictions, release, root, run  # noqa: F401
from hub_server import HubServer

TOKEN = "hf_test_token_hostile_0123456789"


# -- 1. arbitrary file write through push ----------------------------------------------------------


def add_escaping_entry(release: Path, name: str = "../.bashrc") -> None:
    def change(manifest):
        manifest["files"].append({"name": name, "sha256": "0" * 64, "bytes": 1, "rows": 0, "schema": "pseudowords.contexts"})

    edit_manifest(release, change)


def test_push_dry_run_never_writes_a_manifest_named_path_outside_the_stage(release, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / ".bashrc").write_text("echo original\n")
    add_escaping_entry(release)
    (release.parent / ".bashrc").write_text("echo PAYLOAD\n")  # what the attacker's name points at
    before = fingerprint(tmp_path)
    result = run("push", str(release), "--repo", "my-org/pw", "--dry-run", str(victim / "stage"))
    assert result.returncode == 2
    assert error_lines(result.stderr) == [
        f"error: {release / 'manifest.json'}: file name '../.bashrc' is not a plain file name inside the release folder "
        "(it has a folder part); nothing was staged or pushed: the release is corrupted, rebuild it"
    ]
    assert fingerprint(tmp_path) == before


def test_a_real_push_of_such_a_release_talks_to_no_hub_and_writes_nothing(release, tmp_path):
    add_escaping_entry(release, "../../../PAYLOAD.txt")
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    before = fingerprint(tmp_path)
    with HubServer(TOKEN) as server:
        result = run(
            "push", str(release), "--repo", "my-org/pw", env={"HF_ENDPOINT": server.url, "HF_TOKEN": TOKEN, "TMPDIR": str(scratch)}
        )
        assert server.hub.requests == [] and server.hub.repos == {}
    assert result.returncode == 2
    assert "file name '../../../PAYLOAD.txt' is not a plain file name" in result.stderr
    assert fingerprint(tmp_path) == before


# -- 5. FIFOs and links to devices do not hang anything ----------------------------------------------


def fifo(release: Path, name: str) -> None:
    (release / name).unlink()
    os.mkfifo(release / name)


def link_to_zero(release: Path, name: str) -> None:
    (release / name).unlink()
    os.symlink("/dev/zero", release / name)


@pytest.mark.parametrize(("make", "kind"), [(fifo, "a FIFO"), (link_to_zero, "a symbolic link")])
def test_special_files_are_refused_without_opening_them(release, root, predictions, tmp_path, make, kind):
    make(release, "contexts.jsonl")
    before = fingerprint(tmp_path)
    checked = run("validate", str(root), timeout=60)
    assert checked.returncode == 1
    assert f"FAIL pseudowords 1.0.0 contexts.jsonl - contents: is {kind}; a release holds regular files only" in checked.stdout
    assert "validated 1 release(s): " in checked.stdout
    scored = run("score", str(release), str(predictions), timeout=60)
    assert scored.returncode == 2
    assert error_lines(scored.stderr) == [
        f"error: {release}: contexts.jsonl: is {kind}; a release holds regular files only, and it was not read: "
        f"replace it with the file itself or rebuild the release; run `validate {release}` and use an intact release"
    ]
    staged = run("push", str(release), "--repo", "my-org/pw", "--dry-run", str(tmp_path / "stage"), timeout=60)
    assert staged.returncode == 2 and f"contexts.jsonl: is {kind}" in staged.stderr
    assert fingerprint(tmp_path) == before


# -- 7. validate reads nothing outside the release and passes nothing it should not ---------------------


def test_a_manifest_name_outside_the_release_is_a_failure_and_never_read(root, release, tmp_path):
    (tmp_path / "outside.txt").write_text("SECRET-CONTENT-7\n")
    add_escaping_entry(release, "../../../outside.txt")
    before = fingerprint(tmp_path)
    result = run("validate", str(root))
    assert result.returncode == 1
    assert "SECRET-CONTENT-7" not in result.stdout + result.stderr
    assert (
        "FAIL pseudowords 1.0.0 manifest.json - hashes: file name '../../../outside.txt' is not a plain file name "
        "inside the release folder (it has a folder part); nothing outside the release is read"
    ) in result.stdout
    assert fingerprint(tmp_path) == before


def test_a_sha256sums_line_naming_a_system_file_prints_no_hash_of_it(root, release, tmp_path):
    target = Path("/etc/hostname")
    with open(release / "SHA256SUMS", "a") as sums:
        sums.write(f"{'0' * 64}  ../../../../etc/hostname\n")
    before = fingerprint(tmp_path)
    result = run("validate", str(root))
    assert result.returncode == 1
    if target.is_file():
        assert hashlib.sha256(target.read_bytes()).hexdigest() not in result.stdout
    assert (
        "FAIL pseudowords 1.0.0 SHA256SUMS - hashes: line 7: file name '../../../../etc/hostname' is not a plain file name" in result.stdout
    )
    assert fingerprint(tmp_path) == before


def test_a_linked_data_file_is_a_failure_even_with_the_right_content(root, release, tmp_path):
    real = tmp_path / "elsewhere.jsonl"
    shutil.move(release / "vocabulary.jsonl", real)
    os.symlink(real, release / "vocabulary.jsonl")
    result = run("validate", str(root))
    assert result.returncode == 1
    assert "FAIL pseudowords 1.0.0 vocabulary.jsonl - contents: is a symbolic link; a release holds regular files only" in result.stdout


def test_unknown_datasets_extra_folders_and_nested_releases_fail_and_the_run_goes_on(root, release, built, tmp_path):
    unknown = root / "nosuch" / "1.0.0"
    shutil.copytree(built, unknown)
    edit_manifest(unknown, lambda m: m.update(dataset="nosuch"))
    (release / "extra").mkdir()
    (release / "extra" / "notes.txt").write_text("x")
    other = root / "pseudowords" / "2.0.0"
    shutil.copytree(built, other)
    edit_manifest(other, lambda m: m.update(version="2.0.0"))
    shutil.copytree(built, other / "inner")
    broken = root / "pseudowords" / "3.0.0"
    shutil.copytree(built, broken)
    (broken / "manifest.json").unlink()
    (broken / "manifest.json").mkdir()
    last = root / "pseudowords" / "4.0.0"
    shutil.copytree(built, last)
    edit_manifest(last, lambda m: m.update(version="4.0.0"))
    before = fingerprint(tmp_path)
    result = run("validate", str(root))
    out = result.stdout
    assert result.returncode == 1
    assert (
        f"FAIL nosuch 1.0.0 manifest.json - load: {unknown / 'manifest.json'}: unknown dataset 'nosuch'; this ctxrobust knows gsm-ic, misleadqa, pseudowords"
        in out
    )
    assert "FAIL pseudowords 1.0.0 extra - contents: a folder inside the release; a release holds files only: remove it" in out
    assert "FAIL pseudowords 2.0.0 inner - contents: a release nested inside this release" in out
    assert (
        f"FAIL pseudowords 3.0.0 manifest.json - load: {broken / 'manifest.json'}: is a folder; a release holds regular files only" in out
    )
    assert "pseudowords 4.0.0: " in out and "pseudowords 4.0.0: 0 checks" not in out  # checked after all of them
    assert fingerprint(tmp_path) == before


def test_a_manifest_that_is_a_fifo_is_a_failure_of_its_release(root, release):
    (release / "manifest.json").unlink()
    os.mkfifo(release / "manifest.json")
    result = run("validate", str(root), timeout=60)
    assert result.returncode == 1
    assert f"FAIL pseudowords 1.0.0 manifest.json - load: {release / 'manifest.json'}: is a FIFO" in result.stdout


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_manifest_is_a_failure_of_its_release(root, release):
    (release / "manifest.json").chmod(0)
    result = run("validate", str(root))
    assert result.returncode == 1
    assert "FAIL pseudowords 1.0.0 manifest.json - load: " in result.stdout and "Permission denied" in result.stdout


def test_terminal_control_characters_in_a_manifest_never_reach_the_terminal(root, release):
    edit_manifest(release, lambda m: m.update(version="1.0.0\x1b[2J\x1b[31m\nFAKE ok"))
    result = run("validate", str(root))
    assert result.returncode == 1
    assert "\x1b" not in result.stdout + result.stderr
    assert "holds pseudowords 1.0.0\\x1b[2J\\x1b[31m\\x0aFAKE ok by its manifest" in result.stdout
    assert not any(line.startswith("FAKE") for line in result.stdout.splitlines())


def test_a_manifest_that_is_not_text_is_a_failure_and_the_next_release_is_checked(root, release, built):
    (release / "manifest.json").write_bytes(b"\xff\xfe\x00garbage")
    later = root / "pseudowords" / "2.0.0"
    shutil.copytree(built, later)
    edit_manifest(later, lambda m: m.update(version="2.0.0"))
    result = run("validate", str(root))
    assert result.returncode == 1
    assert (
        f"FAIL pseudowords 1.0.0 manifest.json - load: {release / 'manifest.json'}: not UTF-8 (byte 0); the release is corrupted, rebuild it"
        in result.stdout
    )
    assert "pseudowords 2.0.0: " in result.stdout and "validated 2 release(s): 1 failure(s)" in result.stdout
