"""`ctxrobust run` against hostile files and endpoints: links planted at its temporary, cache and lock
names, bodies that drip or never end, signals with requests in flight, answers that are not text,
poisoned cache lines, another model answering, bad base URLs and keys, and two runs on one output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chat_server import ChatServer
from hostile import error_lines, fingerprint
from paths import REPO
from test_eval_gsm_ic import BASES, SUBSET, VARIANTS
from test_eval_gsm_ic import write_release as write_gsm_ic

from ctxrobust.cli import main
from ctxrobust.evaluation.run.client import parse_completion

REQUESTS = 12  # the gsm-ic test release: 12 requests
FAST = ["--retry-base", "0.01", "--timeout", "2"]


@pytest.fixture
def release(tmp_path) -> Path:
    return write_gsm_ic(tmp_path / "releases" / "gsm-ic" / "0.0.1", BASES, VARIANTS, SUBSET).path


@pytest.fixture(autouse=True)
def no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def answer(messages, n) -> str:
    return "The answer is 12."


def argv(release: Path, url: str, out: Path, *extra: str) -> list[str]:
    return ["run", str(release), "--base-url", url, "--model", "m", "-o", str(out), *FAST, *extra]


def record_of(out: Path) -> dict:
    return json.loads(out.with_name(out.name + ".run.json").read_text(encoding="utf-8"))


def cache_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def child(args: list[str]) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "CTXROBUST_DEBUG")}
    return subprocess.Popen(
        [sys.executable, "-m", "ctxrobust.cli", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


# -- planted links -------------------------------------------------------------------------------------


def test_links_planted_at_the_temporary_names_are_not_followed(release, tmp_path):
    before = fingerprint(release)
    out = tmp_path / "run.jsonl"
    victim = release / "manifest.json"
    (tmp_path / ".run.jsonl.part").symlink_to(victim)  # the old fixed temporary names
    (tmp_path / ".run.jsonl.run.json.part").symlink_to(release / "SHA256SUMS")
    with ChatServer(answer) as server:
        assert main(argv(release, server.url, out)) == 0
    assert fingerprint(release) == before
    for written in (out, tmp_path / "run.jsonl.run.json", tmp_path / "run.jsonl.cache.jsonl"):
        assert written.is_file() and not written.is_symlink()
    assert len(out.read_text(encoding="utf-8").splitlines()) == REQUESTS
    assert not (tmp_path / ".run.jsonl.lock").exists()  # the lock file goes when the run ends
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".part")) == [".run.jsonl.part", ".run.jsonl.run.json.part"]


def test_an_output_that_is_a_link_is_replaced_not_written_through(release, tmp_path):
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("keep\n", encoding="utf-8")
    out = tmp_path / "run.jsonl"
    out.symlink_to(elsewhere)
    with ChatServer(answer) as server:
        assert main(argv(release, server.url, out)) == 0
    assert elsewhere.read_text(encoding="utf-8") == "keep\n"
    assert out.is_file() and not out.is_symlink()


@pytest.mark.parametrize("where", ["default cache", "explicit cache", "lock"])
@pytest.mark.parametrize("dangling", [True, False])
def test_a_cache_or_lock_path_that_is_a_link_is_refused(release, tmp_path, capsys, where, dangling):
    before = fingerprint(release)
    out = tmp_path / "run.jsonl"
    target = release / ("planted.jsonl" if dangling else "manifest.json")
    outside = tmp_path / "outside.jsonl"
    outside.write_text("", encoding="utf-8")
    extra = []
    if where == "default cache":
        (tmp_path / "run.jsonl.cache.jsonl").symlink_to(target)
    elif where == "explicit cache":
        (tmp_path / "my.cache").symlink_to(target if dangling else outside)
        extra = ["--cache", str(tmp_path / "my.cache")]
    else:
        (tmp_path / ".run.jsonl.lock").symlink_to(target)
    with ChatServer(answer) as server:
        assert main(argv(release, server.url, out, *extra)) == 2
        assert server.calls == 0
    errors = error_lines(capsys.readouterr().err)
    assert len(errors) == 1 and "is a symbolic link" in errors[0]
    assert fingerprint(release) == before and not out.exists() and outside.read_text() == ""


def test_a_cache_with_another_hard_link_is_refused(release, tmp_path, capsys):
    before = fingerprint(release)
    (tmp_path / "run.jsonl.cache.jsonl").hardlink_to(release / "SHA256SUMS")
    with ChatServer(answer) as server:
        assert main(argv(release, server.url, tmp_path / "run.jsonl")) == 2
        assert server.calls == 0
    assert "has another hard link" in capsys.readouterr().err
    assert fingerprint(release) == before


# -- deadlines -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["drip", "endless", "hang"])
def test_timeout_is_a_deadline_for_one_whole_answer(release, tmp_path, fault):
    out = tmp_path / "run.jsonl"
    with ChatServer(answer, every=fault, drip_seconds=0.05) as server:  # a dripped answer takes about 14 s
        started = time.monotonic()
        code = main(argv(release, server.url, out, "--timeout", "1", "--retries", "1", "--concurrency", str(REQUESTS)))
        elapsed = time.monotonic() - started
    assert code == 1 and elapsed < 8
    record = record_of(out)
    assert record["counts"]["failed"] == REQUESTS and server.calls == 2 * REQUESTS
    assert {f["error"] for f in record["failures"]} == {"timed out (no whole answer within 1 s)"}


def test_a_dripped_answer_within_the_deadline_is_taken(release, tmp_path):
    out = tmp_path / "run.jsonl"
    with ChatServer(answer, every="drip", drip_seconds=0.001) as server:
        assert main(argv(release, server.url, out, "--timeout", "20", "--concurrency", str(REQUESTS))) == 0
    assert record_of(out)["counts"]["answered"] == REQUESTS
    assert {json.loads(line)["response"] for line in out.read_text(encoding="utf-8").splitlines()} == {"The answer is 12."}


# -- signals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "signum, fault, extra",
    [
        (signal.SIGINT, "endless", []),
        (signal.SIGTERM, "hang", []),
        (signal.SIGTERM, "drip", []),
        (signal.SIGINT, "500", ["--retry-base", "300"]),  # waiting to retry
    ],
)
def test_a_signal_stops_the_run_at_once_and_keeps_the_finished_answers(release, tmp_path, signum, fault, extra):
    out, cache = tmp_path / "run.jsonl", tmp_path / "run.jsonl.cache.jsonl"
    with ChatServer(answer, faults=[None] * 3, every=fault, drip_seconds=1.0) as server:
        args = [*argv(release, server.url, out), "--concurrency", "4", "--timeout", "600", *extra]
        process = child(args)
        try:
            wait_for(lambda: len(cache_lines(cache)) == 3 and server.calls >= 7)  # 3 answered, 4 more in flight
            time.sleep(0.3)
            process.send_signal(signum)
            sent = time.monotonic()
            _, err = process.communicate(timeout=20)
            stopped = time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert process.returncode == 128 + signum and stopped < 6, (process.returncode, stopped, err)
        errors = error_lines(err)
        assert len(errors) == 1 and f"interrupted by {signal.Signals(signum).name}" in errors[0], err
        assert "3 answer(s) of this run were kept in the cache" in errors[0]
        assert len(cache_lines(cache)) == 3 and not out.exists()
        assert not (tmp_path / ".run.jsonl.lock").exists() and not list(tmp_path.glob(".*.part"))
        server.every = None
        calls = server.calls
        assert main(argv(release, server.url, out)) == 0  # the same command resumes
        assert server.calls - calls == REQUESTS - 3
    assert record_of(out)["counts"]["cached"] == 3


# -- answers that are not text, poisoned cache lines, another model -------------------------------------


def test_an_answer_that_is_not_text_is_retried(release, tmp_path):
    out = tmp_path / "run.jsonl"
    with ChatServer(answer, faults=["list-content", "number-content", "no-content"]) as server:
        assert main(argv(release, server.url, out, "--concurrency", "1")) == 0
        assert server.calls == REQUESTS + 3
    assert all(isinstance(entry["response"], str) for entry in cache_lines(tmp_path / "run.jsonl.cache.jsonl"))
    assert {json.loads(line)["response"] for line in out.read_text(encoding="utf-8").splitlines()} == {"The answer is 12."}


@pytest.mark.parametrize("fault, kind", [("list-content", "a list"), ("number-content", "a number")])
def test_an_answer_that_stays_not_text_is_failed_not_cached(release, tmp_path, capsys, fault, kind):
    out, cache = tmp_path / "run.jsonl", tmp_path / "run.jsonl.cache.jsonl"
    with ChatServer(answer, every=fault) as server:
        assert main(argv(release, server.url, out, "--retries", "1")) == 1
        record = record_of(out)
        assert record["counts"]["failed"] == REQUESTS and cache_lines(cache) == []
        assert record["failures"][0]["error"] == f"malformed response body (the message content is {kind}, not text)"
        assert {json.loads(line)["response"] for line in out.read_text(encoding="utf-8").splitlines()} == {""}
        server.every = None
        calls = server.calls
        assert main(argv(release, server.url, out)) == 0  # a rerun asks them all again
        assert server.calls - calls == REQUESTS
    report = tmp_path / "report.json"
    assert main(["score", str(release), str(out), "--replicates", "0", "-o", str(report)]) == 0


@pytest.mark.parametrize(
    "body, problem",
    [
        (b"[1, 2]", "a list, not a chat completion"),
        (b'{"choices": []}', "no choices"),
        (b'{"choices": ["x"]}', "no choices"),
        (b'{"choices": [{"message": "hi"}]}', "no message"),
        (b'{"choices": [{"message": {"content": {"text": "hi"}}}]}', "the message content is an object, not text"),
        (b'{"choices": [{"message": {"content": true}}]}', "the message content is a boolean, not text"),
        (b'{"choices": [{"message": {"content": "\\ud800"}}]}', "the message content is not valid Unicode text"),
        (b"[" * 100_000, "not JSON"),
        (b"\xff\xfe", "not JSON"),
    ],
)
def test_bodies_that_are_not_a_text_answer(body, problem):
    from ctxrobust.evaluation.run.client import Failure

    with pytest.raises(Failure) as caught:
        parse_completion(body)
    assert str(caught.value) == f"malformed response body ({problem})" and caught.value.retry


def test_a_refusal_is_an_empty_answer():
    answer = parse_completion(b'{"model": "x", "choices": [{"message": {"content": null, "refusal": "no"}, "finish_reason": "stop"}]}')
    assert (answer.text, answer.served_model, answer.finish_reason) == ("", "x", "stop")


@pytest.mark.parametrize("poison", [{"response": 123}, {}, {"response": None}, {"response": ["a"]}])
def test_a_poisoned_cache_line_is_asked_again_not_copied(release, tmp_path, capsys, poison):
    out, cache = tmp_path / "run.jsonl", tmp_path / "run.jsonl.cache.jsonl"
    with ChatServer(answer) as server:
        assert main(argv(release, server.url, out)) == 0
        entries = cache_lines(cache)
        first = {k: v for k, v in entries[0].items() if k != "response"} | poison
        cache.write_text("".join(json.dumps(e) + "\n" for e in [first, *entries[1:]]), encoding="utf-8")
        out.unlink()
        capsys.readouterr()
        calls = server.calls
        assert main(argv(release, server.url, out)) == 0
        assert server.calls - calls == 1
    err = capsys.readouterr().err
    assert "1 cache line(s) hold no text answer (first: line 1); their requests are asked again" in err
    assert record_of(out)["counts"] == {
        "requests": REQUESTS,
        "cached": REQUESTS - 1,
        "sent": 1,
        "answered": 1,
        "failed": 0,
        "unanswered": 0,
    }
    assert {json.loads(line)["response"] for line in out.read_text(encoding="utf-8").splitlines()} == {"The answer is 12."}


@pytest.mark.parametrize("line", ["[" * 100_000, "[1, 2]", '{"id": "x"}', "not json"])
def test_a_cache_line_that_is_no_cache_line_is_refused_with_one_line(release, tmp_path, capsys, line):
    cache = tmp_path / "run.jsonl.cache.jsonl"
    cache.write_text(line + "\n", encoding="utf-8")
    with ChatServer(answer) as server:
        assert main(argv(release, server.url, tmp_path / "run.jsonl")) == 2
        assert server.calls == 0
    errors = error_lines(capsys.readouterr().err)
    assert len(errors) == 1 and errors[0].endswith(":1: not a cache line; delete the cache file to start the run afresh")


def test_an_endpoint_answering_as_another_model_is_recorded_and_warned_once(release, tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ChatServer(answer, model="other-model\x1b[31m") as server:
        assert main(argv(release, server.url, out)) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {REQUESTS} of {REQUESTS} answer(s) came from model 'other-model\\x1b[31m', not 'm' (--model); "
        "each answer's model is kept in the cache and counted in the run record (served_models)"
    ]
    assert record_of(out)["served_models"] == {"other-model\x1b[31m": REQUESTS}
    assert {e["served_model"] for e in cache_lines(tmp_path / "run.jsonl.cache.jsonl")} == {"other-model\x1b[31m"}
    with ChatServer(answer, model="m") as server:  # the requested name: no warning
        assert main(argv(release, server.url, tmp_path / "same.jsonl")) == 0
    assert "warning:" not in capsys.readouterr().err


# -- the base URL and the key --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, message",
    [
        ("http://127.0.0.1:99999/v1", "--base-url http://127.0.0.1:99999/v1: port '99999' is not a number from 1 to 65535"),
        ("http://127.0.0.1:0/v1", "--base-url http://127.0.0.1:0/v1: port 0 is not a number from 1 to 65535"),
        ("http://[::1", "--base-url http://[::1: not a URL (Invalid IPv6 URL); give the endpoint URL"),
        ("http://u:secret@[::1/v1?key=secret", "--base-url http://[::1/v1: not a URL (Invalid IPv6 URL)"),
        ("ftp://127.0.0.1/v1", "not an http:// or https:// URL"),
        ("localhost:8000/v1", "not an http:// or https:// URL"),
        ("http:///v1", "names no host"),
        ("http://127.0.0.1/v1\n", "holds a space or control character"),
    ],
)
def test_a_bad_base_url_is_refused_before_any_request(release, tmp_path, capsys, url, message):
    out = tmp_path / "run.jsonl"
    assert main(["run", str(release), "--base-url", url, "--model", "m", "-o", str(out)]) == 2
    errors = error_lines(capsys.readouterr().err)
    assert len(errors) == 1 and message in errors[0] and "secret" not in errors[0], errors
    assert list(tmp_path.iterdir()) == [tmp_path / "releases"]  # no cache, lock or record


def test_a_query_in_the_base_url_is_sent_as_the_query_not_spliced_into_the_path(release, tmp_path):
    out = tmp_path / "run.jsonl"
    with ChatServer(answer) as server:
        assert main(argv(release, f"{server.url}?api-version=2024-06-01&x=", out)) == 0
        assert server.queries == [{"api-version": "2024-06-01", "x": ""}] * REQUESTS
    assert record_of(out)["endpoint"] == server.url  # without the query, which may carry a key


@pytest.mark.parametrize("key", ["sk-abc\n", "sk-a\rbc", " sk-abc", "sk-\x01abc", "sk-abcé"])
def test_an_api_key_that_cannot_be_sent_is_refused_before_any_request(release, tmp_path, capsys, monkeypatch, key):
    monkeypatch.setenv("MY_KEY", key)
    out = tmp_path / "run.jsonl"
    with ChatServer(answer) as server:
        assert main([*argv(release, server.url, out), "--api-key-env", "MY_KEY"]) == 2
        assert server.calls == 0
    errors = error_lines(capsys.readouterr().err)
    assert len(errors) == 1 and errors[0].startswith("error: the API key in $MY_KEY holds ") and "abc" not in errors[0]
    assert list(tmp_path.iterdir()) == [tmp_path / "releases"]


# -- two runs on one output ----------------------------------------------------------------------------


@pytest.mark.parametrize("shared", ["output", "cache"])
def test_a_second_run_on_the_same_output_or_cache_is_refused(release, tmp_path, capsys, shared):
    out, cache = tmp_path / "run.jsonl", tmp_path / "shared.cache.jsonl"
    with ChatServer(answer, every="endless") as server:
        first = child([*argv(release, server.url, out, "--cache", str(cache)), "--timeout", "600"])
        try:
            wait_for(lambda: server.calls >= 8)
            second_out = out if shared == "output" else tmp_path / "other.jsonl"
            second_cache = tmp_path / "other.cache.jsonl" if shared == "output" else cache
            calls = server.calls
            assert main(argv(release, server.url, second_out, "--cache", str(second_cache))) == 2
            assert server.calls == calls
            errors = error_lines(capsys.readouterr().err)
            assert len(errors) == 1, errors
            if shared == "output":
                assert errors[0] == (
                    f"error: -o {out}: another `ctxrobust run` is writing it (it holds {tmp_path / '.run.jsonl.lock'}); "
                    "wait for that run to end, or write elsewhere"
                )
            else:
                assert errors[0].startswith(f"error: --cache {cache}: another `ctxrobust run` is using this cache")
        finally:
            first.send_signal(signal.SIGTERM)
            first.communicate(timeout=20)
        assert first.returncode == 143
        server.every = None
        assert main(argv(release, server.url, out, "--cache", str(cache))) == 0  # the lock went with the first run
