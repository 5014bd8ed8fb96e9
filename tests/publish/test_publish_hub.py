"""`ctxrobust push`: the staged folder, the upload to a local Hub server, and one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import huggingface_hub.constants
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hub_server import HubServer, git_blob_oid
from paths import REPO
from publish_releases import NESTED_COLUMNS, build_pseudowords, nested_release, nested_rows, pseudowords_release, write_release  # noqa: F401

from ctxrobust.build import write_sums
from ctxrobust.canonical import sha256_file
from ctxrobust.cli import main
from ctxrobust.errors import CtxRobustError
from ctxrobust.publish.hub import check_repo_id, push_release, stage
from ctxrobust.release import Release

TOKEN = "hf_test_token_do_not_print_1234567890"
STAGED = [
    "README.md",
    "SHA256SUMS",
    "contexts.jsonl",
    "contexts.parquet",
    "croissant.json",
    "manifest.json",
    "vocabulary.jsonl",
    "vocabulary.parquet",
]


@pytest.fixture
def hub(monkeypatch):
    with HubServer(TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        # huggingface_hub reads HF_ENDPOINT once at import for its own side requests; point those here too
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", server.url)
        yield server


# -- staging ------------------------------------------------------------------------------------


def test_dry_run_writes_exactly_the_folder_to_upload(pseudowords_release, tmp_path, capsys):
    out = tmp_path / "stage"
    assert main(["push", str(pseudowords_release), "--repo", "my-org/pseudowords", "--dry-run", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == STAGED
    for name in STAGED:
        if name not in ("croissant.json", "README.md", "SHA256SUMS"):  # the release's own bytes
            assert (out / name).read_bytes() == (pseudowords_release / name).read_bytes()
    card = (out / "README.md").read_text(encoding="utf-8")
    assert 'load_dataset("my-org/pseudowords", "contexts", split="test", revision="v0.0.1")' in card and "ORG/NAME" not in card
    sums = dict(reversed(line.split("  ", 1)) for line in (out / "SHA256SUMS").read_text().splitlines())
    assert set(sums) == set(STAGED) - {"SHA256SUMS"}  # every published file, croissant.json and the card included
    for name in sums:
        assert sums[name] == sha256_file(out / name)
    assert "nothing uploaded" in capsys.readouterr().out


def test_staging_is_deterministic(pseudowords_release, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    stage(Release(pseudowords_release), "my-org/pw", a, "https://huggingface.co")
    stage(Release(pseudowords_release), "my-org/pw", b, "https://huggingface.co")
    assert {p.name: p.read_bytes() for p in a.iterdir()} == {p.name: p.read_bytes() for p in b.iterdir()}


def test_dry_run_refuses_a_non_empty_folder(pseudowords_release, tmp_path):
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    with pytest.raises(CtxRobustError, match="not an empty folder"):
        push_release(pseudowords_release, "my-org/pw", out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def flip_a_byte(folder: Path) -> None:
    data = bytearray((folder / "contexts.parquet").read_bytes())
    data[-20] ^= 1
    (folder / "contexts.parquet").write_bytes(bytes(data))


def card_without_configs(folder: Path) -> None:
    (folder / "README.md").write_text("# pseudowords\n", encoding="utf-8")
    write_sums(folder)


def manifest_without_a_hash(folder: Path) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["parquet"][1]["sha256"]
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (flip_a_byte, r"contexts\.parquet: sha256 differs from SHA256SUMS; the file changed after the release was frozen"),
        (card_without_configs, r"README\.md: its YAML header does not declare one Hub configuration per Parquet file"),
        (manifest_without_a_hash, r"manifest\.json: parquet\.1\.sha256: Field required; the release is corrupted"),
    ],
)
def test_a_tampered_release_is_refused_before_anything_is_staged(pseudowords_release, tmp_path, tamper, message):
    copy = tmp_path / "release"
    shutil.copytree(pseudowords_release, copy)
    tamper(copy)
    with pytest.raises(CtxRobustError, match=message):
        push_release(copy, "my-org/pw", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_empty_parquet_copy_with_a_row_group_is_refused(tmp_path):
    """`datasets` cannot read an empty row group (its batch size would be 0): such a file cannot be a configuration."""
    folder = write_release(
        tmp_path, "misleadqa", "0.0.1", {"main.jsonl": nested_rows(2), "condition.jsonl": []}, columns={"condition.jsonl": NESTED_COLUMNS}
    )
    pq.write_table(pa.Table.from_pylist([], schema=NESTED_COLUMNS), folder / "condition.parquet")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["parquet"][0]["sha256"] = sha256_file(folder / "condition.parquet")
    (folder / "manifest.json").write_text(json.dumps(manifest))
    write_sums(folder)
    with pytest.raises(CtxRobustError, match=r"condition\.parquet: has no rows but an empty row group, which `datasets` cannot read"):
        push_release(folder, "my-org/mq", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_dry_run_refuses_a_folder_inside_the_release(pseudowords_release):
    before = sorted(p.name for p in pseudowords_release.iterdir())
    with pytest.raises(CtxRobustError, match="is inside the release folder .* which is frozen"):
        push_release(pseudowords_release, "my-org/pw", pseudowords_release / "staged")
    assert sorted(p.name for p in pseudowords_release.iterdir()) == before


def test_not_a_release_folder(tmp_path):
    with pytest.raises(CtxRobustError, match="manifest.json: missing"):
        push_release(tmp_path, "my-org/pw", tmp_path / "out")


@pytest.mark.parametrize(
    "repo", ["pseudowords", "my-org/", "/name", "a/b/c", "my org/x", "-org/x", "org/x-", "org--x/y", "org/x..y", "o/" + "n" * 97, ""]
)
def test_repository_names_that_are_not_org_name(repo):
    with pytest.raises(CtxRobustError, match="is not a Hub repository name; give ORG/NAME"):
        check_repo_id(repo)


@pytest.mark.parametrize("repo", ["my-org/gsm-ic", "Org_1/data.set", "a/b"])
def test_repository_names_accepted(repo):
    assert check_repo_id(repo) == repo


# -- pushing to the local Hub -------------------------------------------------------------------


def files_at(server: HubServer, repo_id: str, revision: str) -> dict[str, bytes]:
    return server.hub.repo("dataset", repo_id).resolve(revision).files


def test_push_is_one_commit_with_exactly_the_staged_files_and_a_tag(hub, pseudowords_release, tmp_path, capsys):
    staged = tmp_path / "staged"
    assert main(["push", str(pseudowords_release), "--repo", "my-org/pseudowords", "--dry-run", str(staged)]) == 0
    assert main(["push", str(pseudowords_release), "--repo", "my-org/pseudowords"]) == 0
    out = capsys.readouterr()
    assert "pushed pseudowords 0.0.1 to " in out.out and "tagged v0.0.1" in out.out
    assert TOKEN not in out.out + out.err

    repo = hub.hub.repo("dataset", "my-org/pseudowords")
    assert repo is not None and ("POST", "/api/repos/create") in hub.hub.requests
    assert list(repo.tags) == ["v0.0.1"] and repo.tags["v0.0.1"] == repo.branches["main"]
    assert len(hub.hub.commit_payloads) == 1  # one commit, all files in it
    lines = hub.hub.commit_payloads[0]
    assert lines[0]["key"] == "header" and lines[0]["value"]["summary"] == "pseudowords 0.0.1"
    assert sorted(line["value"]["path"] for line in lines[1:]) == STAGED
    assert all(line["key"] == "file" for line in lines[1:])  # small regular files, no LFS
    received = files_at(hub, "my-org/pseudowords", "v0.0.1")
    assert sorted(received) == [".gitattributes", *STAGED]
    for name in STAGED:
        if name == "croissant.json":  # names the endpoint it was pushed to
            assert hub.url.encode() in received[name]
        else:
            assert received[name] == (staged / name).read_bytes()


def test_same_content_again_is_a_no_op(hub, pseudowords_release, capsys):
    assert push_release(pseudowords_release, "my-org/pw", None) == 0
    commits = len(hub.hub.repo("dataset", "my-org/pw").commits)
    capsys.readouterr()
    assert push_release(pseudowords_release, "my-org/pw", None) == 0
    assert "already has v0.0.1 with exactly these files" in capsys.readouterr().out
    assert len(hub.hub.repo("dataset", "my-org/pw").commits) == commits
    assert len(hub.hub.commit_payloads) == 1
    assert hub.hub.requests.count(("POST", "/api/repos/create")) == 1


def test_same_version_with_other_content_is_refused(hub, pseudowords_release, tmp_path):
    assert push_release(pseudowords_release, "my-org/pw", None) == 0
    before = dict(files_at(hub, "my-org/pw", "v0.0.1"))
    other = build_pseudowords(tmp_path / "other", seed=1)  # same version 0.0.1, other bytes
    with pytest.raises(
        CtxRobustError,
        match=r"tag v0\.0\.1 already exists with different content \(.*contexts\.parquet.*\); a published version is never replaced",
    ):
        push_release(other, "my-org/pw", None)
    assert files_at(hub, "my-org/pw", "v0.0.1") == before
    assert files_at(hub, "my-org/pw", "main") == before
    assert len(hub.hub.commit_payloads) == 1


def test_a_new_version_replaces_the_files_of_the_previous_one(hub, nested_release, tmp_path):
    assert push_release(nested_release, "my-org/mq", None) == 0
    smaller = write_release(tmp_path, "misleadqa", "0.0.2", {"main.jsonl": nested_rows(4)})
    assert push_release(smaller, "my-org/mq", None) == 0
    repo = hub.hub.repo("dataset", "my-org/mq")
    assert sorted(repo.tags) == ["v0.0.1", "v0.0.2"]
    assert sorted(files_at(hub, "my-org/mq", "v0.0.2")) == [
        ".gitattributes",
        "README.md",
        "SHA256SUMS",
        "croissant.json",
        "main.jsonl",
        "main.parquet",
        "manifest.json",
    ]
    assert "condition.parquet" in files_at(hub, "my-org/mq", "v0.0.1")  # the old tag still has the old files
    deleted = [line["value"]["path"] for line in hub.hub.commit_payloads[1] if line["key"] == "deletedFile"]
    assert deleted == ["audit_sample.jsonl", "audit_sample.parquet", "condition.jsonl", "condition.parquet"]


def test_a_lost_tag_is_recreated_on_the_same_commit_without_a_new_one(hub, pseudowords_release):
    assert push_release(pseudowords_release, "my-org/pw", None) == 0
    repo = hub.hub.repo("dataset", "my-org/pw")
    head = repo.branches["main"]
    del repo.tags["v0.0.1"]  # as if the tag request had failed after the commit
    assert push_release(pseudowords_release, "my-org/pw", None) == 0
    assert repo.tags == {"v0.0.1": head} and repo.branches["main"] == head
    assert len(hub.hub.commit_payloads) == 1


def test_the_token_is_in_no_file_received(hub, pseudowords_release):
    assert push_release(pseudowords_release, "my-org/pw", None) == 0
    assert all(TOKEN.encode() not in data for data in files_at(hub, "my-org/pw", "v0.0.1").values())


def test_existing_repository_is_used_not_recreated(hub, pseudowords_release):
    hub.hub.create("dataset", "my-org/existing")
    assert push_release(pseudowords_release, "my-org/existing", None) == 0
    assert ("POST", "/api/repos/create") not in hub.hub.requests
    assert "v0.0.1" in hub.hub.repo("dataset", "my-org/existing").tags


def test_remote_comparison_uses_git_blob_ids(hub, pseudowords_release, tmp_path):
    assert push_release(pseudowords_release, "my-org/pw", None) == 0
    files = files_at(hub, "my-org/pw", "v0.0.1")
    staged = tmp_path / "staged"
    stage(Release(pseudowords_release), "my-org/pw", staged, hub.url)
    assert git_blob_oid(files["README.md"]) == git_blob_oid((staged / "README.md").read_bytes())


def test_a_wrong_token_is_one_clear_line(hub, pseudowords_release, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_token_123")
    with pytest.raises(CtxRobustError) as caught:
        push_release(pseudowords_release, "my-org/pw", None)
    message = str(caught.value)
    assert "answered 401" in message and "check HF_TOKEN" in message and "\n" not in message
    assert "hf_wrong_token_123" not in message


# -- the command line: one line on stderr, exit 2, no traceback ----------------------------------


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("HF_") and k != "CTXROBUST_DEBUG"}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "ctxrobust.cli", *args], cwd=REPO, env=full, capture_output=True, text=True, timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess, pattern: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    assert pattern in lines[0], lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_missing_token(pseudowords_release, tmp_path):
    result = run_cli(["push", str(pseudowords_release), "--repo", "my-org/pw"], {"HF_HOME": str(tmp_path / "hf-home")})
    assert_one_line_error(result, "no Hugging Face token: set HF_TOKEN or log in")


def test_cli_pushes_with_the_stored_login(hub, pseudowords_release, tmp_path):
    """No HF_TOKEN: the token `hf auth login` stored under HF_HOME is used, and printed nowhere."""
    (tmp_path / "hf-home").mkdir()
    (tmp_path / "hf-home" / "token").write_text(TOKEN)
    result = run_cli(
        ["push", str(pseudowords_release), "--repo", "my-org/stored"], {"HF_HOME": str(tmp_path / "hf-home"), "HF_ENDPOINT": hub.url}
    )
    assert result.returncode == 0, result.stderr
    assert "tagged v0.0.1" in result.stdout and TOKEN not in result.stdout + result.stderr
    assert sorted(files_at(hub, "my-org/stored", "v0.0.1")) == [".gitattributes", *STAGED]


def test_cli_unreachable_endpoint(pseudowords_release, tmp_path):
    env = {"HF_HOME": str(tmp_path / "hf-home"), "HF_TOKEN": TOKEN, "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
    result = run_cli(["push", str(pseudowords_release), "--repo", "my-org/pw"], env)
    assert_one_line_error(result, "cannot reach the Hub at http://127.0.0.1:")
    assert TOKEN not in result.stdout + result.stderr


def test_cli_bad_repository_name(pseudowords_release, tmp_path):
    result = run_cli(["push", str(pseudowords_release), "--repo", "no-slash"], {"HF_HOME": str(tmp_path / "hf-home"), "HF_TOKEN": TOKEN})
    assert_one_line_error(result, "--repo 'no-slash' is not a Hub repository name; give ORG/NAME")
