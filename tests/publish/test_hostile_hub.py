"""A Hub that fails midway: 500 on the tag, 500 after tagging, no answer, malformed answers, and SIGTERM or
SIGINT during the commit. Each message states what is on the Hub, and a rerun completes the publish."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import REPO, TIMEOUT, built, error_lines, fingerprint, release, root, run  # noqa: F401
from hub_server import HubServer

TOKEN = "hf_test_token_faults_0123456789abcdef"
REPO_ID = "my-org/pw"
TAG = "v1.0.0"


@pytest.fixture
def hub():
    with HubServer(TOKEN) as server:
        yield server


@pytest.fixture
def scratch(tmp_path) -> Path:
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    return folder


def environment(hub, scratch, timeout: float = 5) -> dict:
    return {
        "HF_ENDPOINT": hub.url,
        "HF_TOKEN": TOKEN,
        "TMPDIR": str(scratch),
        "CTXROBUST_HUB_TIMEOUT": str(timeout),
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }


def push(release, hub, scratch, timeout: float = 5):
    return run("push", str(release), "--repo", REPO_ID, env=environment(hub, scratch, timeout), timeout=TIMEOUT)


def state(hub) -> tuple[list[str], str | None]:
    """The repository's tags and the commit main points at."""
    repo = hub.hub.repo("dataset", REPO_ID)
    return (sorted(repo.tags), repo.branches.get("main")) if repo else ([], None)


def commits(hub) -> int:
    return len(hub.hub.commit_payloads)


def assert_published(hub, release):
    tags, head = state(hub)
    repo = hub.hub.repo("dataset", REPO_ID)
    assert tags == [TAG] and repo.tags[TAG] == head
    assert repo.commits[head].files["manifest.json"] == (release / "manifest.json").read_bytes()


def assert_clean(scratch, release, before):
    assert list(scratch.iterdir()) == []  # no staged copy left behind
    assert fingerprint(release) == before


def test_a_500_on_the_tag_says_the_commit_is_untagged_and_a_rerun_tags_it(hub, release, scratch):
    before = fingerprint(release)
    hub.hub.fail("tag", "500")
    first = push(release, hub, scratch)
    tags, head = state(hub)
    assert first.returncode == 2 and tags == [] and commits(hub) == 1
    assert error_lines(first.stderr) == [
        f"error: {hub.url}/datasets/{REPO_ID}: the Hub answered 500 (Internal Error - We're working hard to fix this as soon as possible!); "
        f"try again later, or stage the upload with --dry-run DIR; while tagging commit {head[:12]} as {TAG}; "
        f"on the Hub: commit {head[:12]} on main holds every file but is not tagged {TAG}; "
        "rerun the same `ctxrobust push` command to tag it (nothing is uploaded again)"
    ]
    second = push(release, hub, scratch)
    assert second.returncode == 0, second.stderr
    assert f"commit already on main from an earlier push {head[:12]}, tagged {TAG}" in second.stdout
    assert commits(hub) == 1  # nothing uploaded twice
    assert_published(hub, release)
    assert_clean(scratch, release, before)


def test_a_500_after_the_tag_was_made_is_a_complete_publish(hub, release, scratch):
    hub.hub.fail("tag", "500", when="after")
    result = push(release, hub, scratch)
    assert result.returncode == 0, result.stderr
    assert_published(hub, release)


def test_a_passing_500_on_the_check_after_tagging_is_retried(hub, release, scratch):
    hub.hub.fail("tree", "500", skip=2)  # the check of the tag's files is the third listing
    result = push(release, hub, scratch)
    assert result.returncode == 0, result.stderr
    assert_published(hub, release)


def test_a_failed_check_after_tagging_says_the_version_is_tagged(hub, release, scratch):
    """A lasting 500 would end the same way, after the client's own backoff (about 20 s); a malformed
    answer is not retried, so it shows the same state at once."""
    before = fingerprint(release)
    hub.hub.fail("tree", "malformed", skip=2)
    first = push(release, hub, scratch)
    tags, head = state(hub)
    assert first.returncode == 2 and tags == [TAG]
    assert error_lines(first.stderr)[0].endswith(
        f"while checking the files of {TAG}; on the Hub: {TAG} is tagged at commit {head[:12]}; "
        "rerun the same `ctxrobust push` command to check its files again (nothing is uploaded again)"
    )
    second = push(release, hub, scratch)
    assert second.returncode == 0 and f"already has {TAG} with exactly these files" in second.stdout
    assert commits(hub) == 1
    assert_clean(scratch, release, before)


def test_a_hub_that_never_answers_is_given_up_on_in_bounded_time(hub, release, scratch):
    before = fingerprint(release)
    hub.hub.fail("refs", "hang", times=3)
    started = time.monotonic()
    first = push(release, hub, scratch, timeout=1)
    assert time.monotonic() - started < 60
    assert first.returncode == 2
    assert error_lines(first.stderr) == [
        f"error: the Hub at {hub.url} did not answer within 1 s (3 attempts for a read); check the network and HF_ENDPOINT, "
        "or allow more time with CTXROBUST_HUB_TIMEOUT; while reading the repository's branches and tags; "
        f"on the Hub: nothing was changed: no commit of this version and no tag {TAG}; rerun the same `ctxrobust push` command"
    ]
    assert state(hub) == ([], None) and commits(hub) == 0
    hub.hub.release_hangs()
    second = push(release, hub, scratch)
    assert second.returncode == 0, second.stderr
    assert_published(hub, release)
    assert_clean(scratch, release, before)


def test_a_commit_left_unanswered_is_looked_up_before_anything_is_claimed(hub, release, scratch):
    hub.hub.fail("commit", "hang")
    first = push(release, hub, scratch, timeout=2)
    assert first.returncode == 2
    assert f"on the Hub: no commit of this version reached main and there is no tag {TAG}" in first.stderr
    hub.hub.release_hangs()
    second = push(release, hub, scratch)
    assert second.returncode == 0, second.stderr
    assert_published(hub, release)


@pytest.mark.parametrize("route", ["refs", "tree"])
def test_a_malformed_answer_is_one_line_not_an_internal_error(hub, release, scratch, route):
    hub.hub.fail(route, "malformed")
    first = push(release, hub, scratch)
    assert first.returncode == 2
    [line] = error_lines(first.stderr)
    assert "the Hub's answer could not be read" in line and "internal error" not in first.stderr
    assert line.endswith(
        f"on the Hub: nothing was changed: no commit of this version and no tag {TAG}; rerun the same `ctxrobust push` command"
    )
    second = push(release, hub, scratch)
    assert second.returncode == 0, second.stderr
    assert_published(hub, release)


def test_a_malformed_answer_to_a_commit_that_went_through_still_publishes(hub, release, scratch):
    hub.hub.fail("commit", "malformed", when="after")
    result = push(release, hub, scratch)
    assert result.returncode == 0, result.stderr
    assert commits(hub) == 1
    assert_published(hub, release)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_the_commit_cleans_up_says_so_and_a_rerun_publishes(hub, release, scratch, signum, code):
    before = fingerprint(release)
    hub.hub.fail("commit", "hang")
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests"), **environment(hub, scratch, timeout=60)}
    child = subprocess.Popen(
        [sys.executable, "-m", "ctxrobust.cli", "push", str(release), "--repo", REPO_ID],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert hub.hub.hanging.wait(TIMEOUT), "the commit never reached the Hub"
        child.send_signal(signum)
        out, err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
    assert child.returncode == code
    assert error_lines(err) == [
        f"error: interrupted by {signal.Signals(signum).name} while committing 8 files to main; on the Hub: unknown whether the "
        f"commit reached main (no tag {TAG}); a rerun looks first and commits only if main does not already hold these files; "
        "rerun the same `ctxrobust push` command; the staged copy was removed"
    ]
    assert_clean(scratch, release, before)
    hub.hub.release_hangs()
    second = push(release, hub, scratch)
    assert second.returncode == 0, second.stderr
    assert_published(hub, release)
