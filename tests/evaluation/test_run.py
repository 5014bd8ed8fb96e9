"""`ctxrobust run` against a stand-in OpenAI-compatible endpoint on 127.0.0.1, and the round trips
through OpenAI Batch / `vllm run-batch` output, lm-eval samples and Inspect logs: every path gives
the same report figures as the same answers written in the dataset's native format."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from chat_server import ChatServer
from paths import REPO
from test_eval_gsm_ic import BASES, SUBSET, VARIANTS
from test_eval_gsm_ic import write_release as write_gsm_ic
from test_eval_misleadqa import MAIN, SUPPLEMENT
from test_eval_misleadqa import write_release as write_misleadqa
from test_eval_pseudowords import make_release as make_pseudowords

from ctxrobust.canonical import dumps
from ctxrobust.cli import main
from ctxrobust.evaluation.formats import openai_batch
from ctxrobust.evaluation.pseudowords.grading import grade
from ctxrobust.evaluation.pseudowords.prompts import BenchmarkRecord
from ctxrobust.evaluation.run.requests import MAX_ID, Request, decode, request_id

SECRET = "sk-test-0123456789-do-not-leak"
FAST_RUN = ["--retry-base", "0.01", "--timeout", "2"]


def pick(options: list[str], *parts) -> str:
    digest = hashlib.sha256("|".join(map(str, parts)).encode("utf-8")).hexdigest()
    return options[int(digest, 16) % len(options)]


GSM_ANSWERS = ["The answer is 12.", "So 1250 in all. The answer is 1,250.", "The answer is 7.5.", "#### 8", "I cannot tell."]
MQA_ANSWERS = ["A", "B", "C", "D", "E", "B.", " C\n", "none of these"]
PW_ANSWERS = ["The answer is (A).", "Answer: B", "C", "Final answer: answer-3", "I am not sure.", "answer: 42", "It is answer-5."]


def answer_for(dataset: str):
    table = {"gsm-ic": GSM_ANSWERS, "misleadqa": MQA_ANSWERS, "pseudowords": PW_ANSWERS}[dataset]
    return lambda messages, n: pick(table, json.dumps(messages, sort_keys=True), n)


def write_benchmark(path: Path, n: int = 12, long_id: bool = False) -> Path:
    records = []
    for k in range(n):
        record = {"id": f"q{k:03d}", "question": f"Question {k}?", "answer": f"answer-{k}" if k % 3 else "42"}
        if k % 2 == 0:
            record.update(options=["alpha", "beta", "gamma"], answer="ABC"[k % 3])
        records.append(record)
    if long_id:
        records[1]["id"] = "a-benchmark-question-id-that-is-far-too-long-for-a-batch-custom-id-" + "x" * 20
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def case(request, tmp_path):
    """(dataset, release folder, prompt flags, score flags)."""
    name = request.param
    if name == "gsm-ic":
        return name, write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path, [], ["--replicates", "50"]
    if name == "misleadqa":
        return name, write_misleadqa(tmp_path / "release", MAIN, SUPPLEMENT), [], ["--replicates", "50", "--min-clusters", "1"]
    bench = write_benchmark(tmp_path / "bench.jsonl")
    return (
        name,
        make_pseudowords(tmp_path / "release").path,
        ["--benchmark", str(bench)],
        ["--benchmark", str(bench), "--replicates", "50", "--null-experiments", "50", "--splits", "10"],
    )


def chat_lines(release: Path, flags: list[str], out: Path, extra=()) -> list[dict]:
    assert main(["prompts", str(release), *flags, *extra, "-o", str(out)]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def native_row(dataset: str, line: dict, model: str, text: str, bench: dict | None = None) -> dict:
    """The row a user would write by hand for this answer, in the dataset's documented format."""
    if dataset == "gsm-ic":
        return {"model": model, "id": line["item"], "response": text}
    if dataset == "misleadqa":
        row = {"model": model, "id": line["item"], "condition": line["condition"], "response": text}
        if line["meta"]["prompt"] != "original":
            row["prompt"] = line["meta"]["prompt"]
        return row
    record = BenchmarkRecord.model_validate(bench[line["item"]])
    return {
        "model": model,
        "id": line["item"],
        "context": line["condition"],
        "trial": line["sample"],
        "correct": grade(text, record).correct,
    }


def native_answers(dataset: str, lines: list[dict], model: str, answer, bench_path: Path | None, failed=frozenset()) -> list[dict]:
    bench = None
    if bench_path is not None:
        bench = {r["id"]: r for r in map(json.loads, bench_path.read_text(encoding="utf-8").splitlines())}
    counts: dict[str, int] = {}
    rows = []
    for line in lines:
        key = json.dumps(line["messages"], sort_keys=True)
        n = counts.get(key, 0)
        counts[key] = n + 1
        rows.append(native_row(dataset, line, model, "" if line["id"] in failed else answer(line["messages"], n), bench))
    return rows


def score(release: Path, predictions: Path, flags: list[str], out: Path, extra=()) -> dict:
    assert main(["score", str(release), str(predictions), *flags, *extra, "-o", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def figures(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "predictions"}


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def bench_of(flags: list[str]) -> Path | None:
    return Path(flags[flags.index("--benchmark") + 1]) if "--benchmark" in flags else None


# ---------------------------------------------------------------------------------------- requests


@pytest.mark.parametrize("case", ["gsm-ic", "misleadqa", "pseudowords"], indirect=True)
def test_one_request_shape_with_unique_ids_that_map_back(case, tmp_path):
    dataset, release, flags, _ = case
    lines = chat_lines(release, flags, tmp_path / "requests.jsonl")
    assert all(set(line) == {"id", "dataset", "item", "condition", "sample", "messages", "sampling", "meta"} for line in lines)
    assert len({line["id"] for line in lines}) == len(lines)
    for line in lines:
        assert len(line["id"]) <= MAX_ID and line["dataset"] == dataset
        key = decode(line["id"])
        assert (key.item, key.sample) == (line["item"], line["sample"])
        Request.model_validate({k: v for k, v in line.items()})


def test_the_papers_sampling_plans(tmp_path):
    release = make_pseudowords(tmp_path / "pw").path
    lines = chat_lines(release, ["--benchmark", str(write_benchmark(tmp_path / "b.jsonl", n=2))], tmp_path / "r.jsonl")
    no_context = [l for l in lines if l["condition"] is None and l["item"] == "q000"]
    with_context = [l for l in lines if l["condition"] == "CHA-010000-000" and l["item"] == "q000"]
    assert [l["sample"] for l in no_context] == list(range(20)) and [l["sample"] for l in with_context] == [
        0,
        1,
    ]  # Section 2: p = 20, q = 2
    assert {json.dumps(l["sampling"]) for l in lines} == {'{"temperature": 1.0}'}
    gsm = write_gsm_ic(tmp_path / "gsm", BASES, VARIANTS, SUBSET).path
    assert {json.dumps(l["sampling"]) for l in chat_lines(gsm, [], tmp_path / "g.jsonl")} == {'{"temperature": 0.0}'}  # greedy
    sc = chat_lines(gsm, [], tmp_path / "sc.jsonl", ["--samples", "3", "--temperature", "0.7", "--max-tokens", "256"])
    assert len(sc) == 3 * 12 and sc[0]["sampling"] == {"temperature": 0.7, "max_tokens": 256}
    assert main(["prompts", str(gsm), "--samples", "0", "-o", str(tmp_path / "x.jsonl")]) == 2


def test_subset_4k_writes_the_base_problems_and_the_4k_variants(tmp_path):
    gsm = write_gsm_ic(tmp_path / "gsm", BASES, VARIANTS, SUBSET).path
    items = [l["item"] for l in chat_lines(gsm, ["--subset", "4k"], tmp_path / "r.jsonl")]
    assert items == ["b1", "b2", "b3", *sorted(SUBSET)]
    no_subset = write_gsm_ic(tmp_path / "gsm2", BASES, VARIANTS).path
    assert main(["prompts", str(no_subset), "--subset", "4k", "-o", str(tmp_path / "y.jsonl")]) == 2


def test_long_item_ids_are_hashed_into_64_characters_and_decoded_through_the_benchmark(tmp_path):
    long_item = "x" * 80
    rid = request_id(long_item, "CHA-010000-003", 19)
    assert len(rid) <= MAX_ID and decode(rid) is None
    assert decode(rid, {rid.split("/")[0]: long_item}).item == long_item


def test_openai_batch_input_lines_and_splitting(tmp_path):
    gsm = write_gsm_ic(tmp_path / "gsm", BASES, VARIANTS, SUBSET).path
    out = tmp_path / "batch.jsonl"
    assert main(["prompts", str(gsm), "--format", "openai-batch", "--model", "gpt-x", "-o", str(out)]) == 0
    lines = [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 12 and set(lines[0]) == {"custom_id", "method", "url", "body"}
    assert lines[0]["method"] == "POST" and lines[0]["url"] == "/v1/chat/completions"
    assert set(lines[0]["body"]) == {"model", "messages", "temperature"} and lines[0]["body"]["model"] == "gpt-x"
    assert openai_batch.MAX_LINES == 50_000 and openai_batch.MAX_BYTES == 200 * 1024 * 1024
    from ctxrobust.evaluation.gsm_ic.prompts import PLAN, requests
    from ctxrobust.release import Release

    parts = openai_batch.write_input(requests(Release(gsm), {}, PLAN), "gpt-x", tmp_path / "split.jsonl", max_lines=5)
    assert [(p.name, n) for p, n in parts] == [("split-001.jsonl", 5), ("split-002.jsonl", 5), ("split-003.jsonl", 2)]
    joined = [l for p, _ in parts for l in p.read_text(encoding="utf-8").splitlines()]
    assert [json.loads(l) for l in joined] == lines
    by_size = openai_batch.write_input(requests(Release(gsm), {}, PLAN), "gpt-x", tmp_path / "small.jsonl", max_bytes=2000)
    assert all(p.stat().st_size <= 2000 for p, _ in by_size) and sum(n for _, n in by_size) == 12
    assert main(["prompts", str(gsm), "--format", "openai-batch", "-o", str(tmp_path / "z.jsonl")]) == 2  # needs --model


def test_a_batch_input_is_split_at_50000_lines(tmp_path):
    many = (
        Request(
            id=request_id(f"v{k:05d}", None, 0),
            dataset="gsm-ic",
            item=f"v{k:05d}",
            condition=None,
            sample=0,
            messages=[{"role": "user", "content": "Q"}],
            sampling={"temperature": 0.0},
        )
        for k in range(50_001)
    )
    parts = openai_batch.write_input(many, "m", tmp_path / "big.jsonl")
    assert [(p.name, n) for p, n in parts] == [("big-001.jsonl", 50_000), ("big-002.jsonl", 1)]
    assert not (tmp_path / "big.jsonl").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["big-001.jsonl", "big-002.jsonl"]


# --------------------------------------------------------------------------------------------- run


@pytest.mark.parametrize("case", ["gsm-ic", "misleadqa", "pseudowords"], indirect=True)
def test_run_then_score_equals_the_native_answers(case, tmp_path, monkeypatch, capsys):
    dataset, release, flags, score_flags = case
    monkeypatch.setenv("CTXROBUST_TEST_KEY", SECRET)
    answer = answer_for(dataset)
    lines = chat_lines(release, flags, tmp_path / "requests.jsonl")
    faults = ["429", "500", "malformed", "no-choices", "429", "slow"]
    with ChatServer(answer, faults=faults, slow_seconds=2.5) as server:
        # one request at a time, so the n-th answer to repeated messages is the n-th sample
        argv = [
            "run",
            str(release),
            *flags,
            "--base-url",
            server.url,
            "--model",
            "m",
            "--api-key-env",
            "CTXROBUST_TEST_KEY",
            "--concurrency",
            "1",
            "-o",
            str(tmp_path / "run.jsonl"),
            *FAST_RUN,
        ]
        assert main(argv) == 0
    assert server.authorizations == {f"Bearer {SECRET}"}
    assert server.calls == len(lines) + len(faults) and server.answered == len(lines)
    record = json.loads((tmp_path / "run.jsonl.run.json").read_text(encoding="utf-8"))
    assert record["counts"] == {
        "requests": len(lines),
        "cached": 0,
        "sent": len(lines),
        "answered": len(lines),
        "failed": 0,
        "unanswered": 0,
    }
    assert record["subset"] is None and record["stopped"] is None
    assert record["endpoint"] == server.url and record["model"] == "m" and record["api_key_env"] == "CTXROBUST_TEST_KEY"
    native = write_rows(tmp_path / "native.jsonl", native_answers(dataset, lines, "m", answer, bench_of(flags)))
    via_run = score(release, tmp_path / "run.jsonl", score_flags, tmp_path / "run-report.json")
    by_hand = score(release, native, score_flags, tmp_path / "native-report.json")
    assert figures(via_run) == figures(by_hand)
    assert via_run["predictions"]["excluded"] == 0
    if dataset == "pseudowords":
        grading = via_run["predictions"]["grading"]
        assert grading["graded"] == len(lines) and set(grading["rules"]) == {"multiple_choice", "short_answer", "unreadable"}
    output = capsys.readouterr()
    assert SECRET not in output.out + output.err
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_requests_that_keep_failing_are_invalid_listed_and_retried_on_rerun(tmp_path, capsys):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    answer = answer_for("gsm-ic")
    out = tmp_path / "run.jsonl"
    with ChatServer(answer, faults=["500"] * 3) as server:  # the first request fails all 1 + 2 attempts
        argv = [
            "run",
            str(release),
            "--base-url",
            server.url,
            "--model",
            "m",
            "--concurrency",
            "1",
            "--retries",
            "2",
            "-o",
            str(out),
            *FAST_RUN,
        ]
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "1 request(s) failed after retries" in err and "12/12 (0 cached, 11 answered, 1 failed)" in err  # the progress line
        record = json.loads((tmp_path / "run.jsonl.run.json").read_text(encoding="utf-8"))
        assert record["counts"]["failed"] == 1 and record["failures"] == [{"id": "b1/-/0", "error": "HTTP 500"}]
        assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["response"] == ""  # invalid, kept in the denominators
        calls = server.calls
        assert main(argv) == 0
        assert server.calls - calls == 1  # only the failed request is sent again


def test_a_bad_request_is_not_retried(tmp_path):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    with ChatServer(answer_for("gsm-ic")) as server:
        url = server.url.replace("/v1", "/missing")  # 404: a client error stays one, so it is not retried
        argv = [
            "run",
            str(release),
            "--base-url",
            url,
            "--model",
            "m",
            "--concurrency",
            "2",
            "--retries",
            "3",
            "-o",
            str(tmp_path / "o.jsonl"),
            *FAST_RUN,
        ]
        assert main(argv) == 1
        assert server.calls == 12
    record = json.loads((tmp_path / "o.jsonl.run.json").read_text(encoding="utf-8"))
    assert record["counts"]["failed"] == 12 and record["failures"][0]["error"] == "HTTP 404"


def test_a_killed_run_resumes_sending_only_unfinished_requests(tmp_path):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    scripted = answer_for("gsm-ic")
    answer = lambda messages, n: scripted(messages, 0)  # noqa: E731  (a request cut off by the kill is answered again alike)
    out, cache = tmp_path / "run.jsonl", tmp_path / "run.jsonl.cache.jsonl"
    with ChatServer(answer, delay=0.4) as server:
        argv = ["run", str(release), "--base-url", server.url, "--model", "m", "--concurrency", "2", "-o", str(out), *FAST_RUN]
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        child = subprocess.Popen(
            [sys.executable, "-m", "ctxrobust.cli", *argv], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (not cache.exists() or cache.read_bytes().count(b"\n") < 4):
                time.sleep(0.05)
        finally:
            child.kill()
            child.wait(timeout=10)
        time.sleep(0.5)  # requests the child sent before it died reach the server and are counted as its calls
        assert not out.exists()  # killed before the predictions were written
        finished = cache.read_bytes().count(b"\n")  # complete lines; one cut short is dropped on resuming
        assert 4 <= finished < 12
        first_calls = server.calls
        server.delay = 0.0
        assert main(argv) == 0
        resent = server.calls - first_calls
    assert resent == 12 - finished
    record = json.loads((tmp_path / "run.jsonl.run.json").read_text(encoding="utf-8"))
    assert record["counts"]["cached"] == finished and record["counts"]["sent"] == 12 - finished
    lines = chat_lines(release, [], tmp_path / "requests.jsonl")
    native = write_rows(tmp_path / "native.jsonl", native_answers("gsm-ic", lines, "m", answer, None))
    flags = ["--replicates", "20"]
    assert figures(score(release, out, flags, tmp_path / "a.json")) == figures(score(release, native, flags, tmp_path / "b.json"))


def test_a_cache_line_cut_short_is_dropped(tmp_path):
    from ctxrobust.evaluation.run.cache import Cache

    path = tmp_path / "c.jsonl"
    path.write_text('{"key": "k1", "id": "a", "response": "x"}\n{"key": "k2", "id"', encoding="utf-8")
    cache = Cache(path)
    cache.put("k3", "b", "y", None, None)
    cache.close()
    assert [json.loads(l)["key"] for l in path.read_text(encoding="utf-8").splitlines()] == ["k1", "k3"]


def test_the_endpoint_is_recorded_without_credentials():
    from ctxrobust.evaluation.run.client import public_url

    assert public_url("https://user:pw@api.example.com:8443/v1?api-key=abc#x") == "https://api.example.com:8443/v1"


# ------------------------------------------------------------------------------- runners' files


def completion(model: str, text: str, n: int) -> dict:
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
    }


def batch_output(inputs: list[dict], texts: dict[str, str], failed: set[str], vllm: bool = False) -> list[dict]:
    """Output lines as the OpenAI Batch API documents them (vLLM's BatchRequestOutput has the same shape)."""
    out = []
    for n, line in enumerate(inputs):
        cid = line["custom_id"]
        prefix = ("vllm-", "vllm-batch-") if vllm else ("batch_req_", "req_")
        if cid in failed:
            if vllm:
                out.append(
                    {
                        "id": f"{prefix[0]}{n:032x}",
                        "custom_id": cid,
                        "response": {"status_code": 400, "request_id": f"{prefix[1]}{n:032x}", "body": None},
                        "error": {"object": "error", "message": "prompt too long", "type": "BadRequestError", "code": 400},
                    }
                )
            elif n % 2:
                out.append(
                    {
                        "id": f"{prefix[0]}{n}",
                        "custom_id": cid,
                        "response": None,
                        "error": {"code": "server_error", "message": "internal error"},
                    }
                )
            else:  # an error-file line: the request was answered with an HTTP error
                out.append(
                    {
                        "id": f"{prefix[0]}{n}",
                        "custom_id": cid,
                        "error": None,
                        "response": {
                            "status_code": 400,
                            "request_id": f"{prefix[1]}{n}",
                            "body": {"error": {"message": "context too long", "type": "invalid_request_error"}},
                        },
                    }
                )
            continue
        out.append(
            {
                "id": f"{prefix[0]}{n}",
                "custom_id": cid,
                "response": {"status_code": 200, "request_id": f"{prefix[1]}{n}", "body": completion(line["body"]["model"], texts[cid], n)},
                "error": None,
            }
        )
    random.Random(0).shuffle(out)  # output lines come in any order
    return out


@pytest.mark.parametrize("case", ["gsm-ic", "misleadqa", "pseudowords"], indirect=True)
@pytest.mark.parametrize("vllm", [False, True])
def test_batch_output_scores_like_the_native_answers(case, vllm, tmp_path, capsys):
    dataset, release, flags, score_flags = case
    answer = answer_for(dataset)
    lines = chat_lines(release, flags, tmp_path / "requests.jsonl")
    batch_in = tmp_path / "batch.jsonl"
    assert main(["prompts", str(release), *flags, "--format", "openai-batch", "--model", "m", "-o", str(batch_in)]) == 0
    inputs = [json.loads(l) for l in batch_in.read_text(encoding="utf-8").splitlines()]
    failed = {lines[1]["id"], lines[2]["id"]}
    native_rows = native_answers(dataset, lines, "m", answer, bench_of(flags), failed=failed)
    counts: dict[str, int] = {}
    texts = {}
    for line in lines:
        key = json.dumps(line["messages"], sort_keys=True)
        texts[line["id"]] = answer(line["messages"], counts.get(key, 0))
        counts[key] = counts.get(key, 0) + 1
    output = write_rows(tmp_path / "batch_output.jsonl", batch_output(inputs, texts, failed, vllm))
    via_batch = score(release, output, score_flags, tmp_path / "batch-report.json")
    by_hand = score(release, write_rows(tmp_path / "native.jsonl", native_rows), score_flags, tmp_path / "native-report.json")
    assert figures(via_batch) == figures(by_hand)
    block = via_batch["predictions"]
    assert block["input_format"] == ("vllm-batch" if vllm else "openai-batch") and block["failed_requests"] == 2
    assert block["path"] == str(output) and any("counted as an invalid response" in p["message"] for p in block["problems"])
    assert by_hand["predictions"]["input_format"] == "native"
    forced = score(release, output, score_flags, tmp_path / "forced.json", ["--input-format", "openai-batch"])
    assert forced["predictions"]["input_format"] == "openai-batch" and figures(forced) == figures(by_hand)


@pytest.mark.parametrize("case", ["gsm-ic", "misleadqa", "pseudowords"], indirect=True)
def test_lm_eval_samples_score_like_the_native_answers(case, tmp_path):
    dataset, release, flags, score_flags = case
    answer = answer_for(dataset)
    lines = chat_lines(release, flags, tmp_path / "requests.jsonl")
    run_dir = tmp_path / "lm-eval" / "m"
    run_dir.mkdir(parents=True)
    counts: dict[str, int] = {}
    samples = []
    for doc_id, line in enumerate(lines):  # the task's dataset is the requests file: each doc is a request line
        key = json.dumps(line["messages"], sort_keys=True)
        text = answer(line["messages"], counts.get(key, 0))
        counts[key] = counts.get(key, 0) + 1
        samples.append(
            {
                "doc_id": doc_id,
                "doc": line,
                "target": "",
                "arguments": {
                    "gen_args_0": {"arg_0": json.dumps(line["messages"]), "arg_1": {"until": [], "do_sample": False, "temperature": 0.0}}
                },
                "resps": [[text]],
                "filtered_resps": [text.strip()],
                "filter": "none",
                "metrics": ["exact_match"],
                "doc_hash": hashlib.sha256(dumps(line).encode()).hexdigest(),
                "prompt_hash": "0" * 64,
                "target_hash": "0" * 64,
                "exact_match": 0.0,
            }
        )
    samples_path = write_rows(run_dir / "samples_ctxrobust_2026-01-01T00-00-00.000000.jsonl", samples)
    (run_dir / "results_2026-01-01T00-00-00.000000.json").write_text(
        json.dumps({"results": {}, "model_name": "m", "config": {"model": "local-chat-completions"}}), encoding="utf-8"
    )
    via_lm_eval = score(release, samples_path, score_flags, tmp_path / "lm-report.json")
    native = write_rows(tmp_path / "native.jsonl", native_answers(dataset, lines, "m", answer, bench_of(flags)))
    assert figures(via_lm_eval) == figures(score(release, native, score_flags, tmp_path / "native-report.json"))
    assert via_lm_eval["predictions"]["input_format"] == "lm-eval"


def inspect_sample(line: dict, text: str, model: str) -> dict:
    return {
        "id": line["id"],
        "epoch": 1,
        "input": line["messages"],
        "target": "",
        "messages": [*line["messages"], {"role": "assistant", "content": text, "source": "generate"}],
        "output": {
            "model": model,
            "choices": [{"message": {"role": "assistant", "content": [{"type": "text", "text": text}]}, "stop_reason": "stop"}],
            "completion": text,
            "usage": {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13},
        },
        "scores": {"match": {"value": "I", "answer": text}},
        "metadata": line["meta"],
        "store": {},
        "events": [],
    }


@pytest.mark.parametrize("case", ["gsm-ic", "misleadqa", "pseudowords"], indirect=True)
@pytest.mark.parametrize("zipped", [True, False])
def test_inspect_logs_score_like_the_native_answers(case, zipped, tmp_path):
    dataset, release, flags, score_flags = case
    answer = answer_for(dataset)
    lines = chat_lines(release, flags, tmp_path / "requests.jsonl")
    counts: dict[str, int] = {}
    samples = []
    for line in lines:
        key = json.dumps(line["messages"], sort_keys=True)
        samples.append(inspect_sample(line, answer(line["messages"], counts.get(key, 0)), "openai/m"))
        counts[key] = counts.get(key, 0) + 1
    header = {
        "version": 2,
        "status": "success",
        "eval": {
            "run_id": "r1",
            "task": "ctxrobust",
            "task_id": "t1",
            "created": "2026-01-01T00:00:00+00:00",
            "model": "openai/m",
            "dataset": {"name": "requests", "samples": len(lines)},
            "config": {},
        },
        "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}]},
        "results": {"total_samples": len(lines), "completed_samples": len(lines), "scores": []},
        "stats": {"started_at": "2026-01-01T00:00:00+00:00", "completed_at": "2026-01-01T00:01:00+00:00", "model_usage": {}},
    }
    if zipped:
        log = tmp_path / "2026-01-01T00-00-00+00-00_ctxrobust_abc.eval"
        with zipfile.ZipFile(log, "w") as archive:
            archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": header["eval"], "plan": header["plan"]}))
            for sample in samples:
                archive.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))
            archive.writestr("summaries/1.json", json.dumps([{"id": s["id"], "epoch": 1} for s in samples]))
            archive.writestr("header.json", json.dumps(header))
    else:
        log = tmp_path / "log.json"
        log.write_text(json.dumps({**header, "samples": samples}, indent=2), encoding="utf-8")
    via_inspect = score(release, log, score_flags, tmp_path / "inspect-report.json")
    native = write_rows(tmp_path / "native.jsonl", native_answers(dataset, lines, "openai/m", answer, bench_of(flags)))
    assert figures(via_inspect) == figures(score(release, native, score_flags, tmp_path / "native-report.json"))
    assert via_inspect["predictions"]["input_format"] == "inspect"


def test_a_batch_line_with_an_unknown_id_is_reported_not_dropped_silently(tmp_path, capsys):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    good = {
        "id": "batch_req_1",
        "custom_id": "b1/-/0",
        "response": {"status_code": 200, "request_id": "req_1", "body": completion("m", "The answer is 12.", 1)},
        "error": None,
    }
    bad = {**good, "custom_id": "request-7"}
    path = write_rows(tmp_path / "out.jsonl", [good, bad])
    report = score(release, path, ["--replicates", "0"], tmp_path / "r.json")
    assert report["predictions"]["rows"] == 2 and report["predictions"]["excluded"] == 1
    assert {"line": 2, "message": "request id 'request-7' is not one `ctxrobust prompts` wrote (item/condition/sample)"} in report[
        "predictions"
    ]["problems"]


# --------------------------------------------------------------------------------- pseudowords grading


@pytest.mark.parametrize(
    "response, record, correct, rule",
    [
        ("Paris is the capital. The answer is (B).", {"options": ["Lyon", "Paris"], "answer": "B"}, 1, "multiple_choice"),
        ("**Answer:** A", {"options": ["Lyon", "Paris"], "answer": "B"}, 0, "multiple_choice"),
        ("B", {"options": ["Lyon", "Paris"], "answer": "Paris"}, 1, "multiple_choice"),
        ("I think (A) at first, but the final answer is B.", {"options": ["Lyon", "Paris"], "answer": "B"}, 1, "multiple_choice"),
        ("No idea.", {"options": ["Lyon", "Paris"], "answer": "B"}, 0, "unreadable"),
        ("It is the Eiffel Tower.\nAnswer: The Eiffel tower", {"answer": "Eiffel Tower"}, 1, "short_answer"),
        ("Adding them up gives 1,250.", {"answer": "1250"}, 1, "short_answer"),
        ("Adding them up gives 1,251.", {"answer": "1250"}, 0, "short_answer"),
        ("", {"answer": "x"}, 0, "unreadable"),
    ],
)
def test_grading_rules(response, record, correct, rule):
    result = grade(response, BenchmarkRecord.model_validate({"id": "q", "question": "?", **record}))
    assert (result.correct, result.rule) == (correct, rule)


def test_response_rows_need_the_benchmark(tmp_path, capsys):
    release = make_pseudowords(tmp_path / "release").path
    path = write_rows(tmp_path / "p.jsonl", [{"model": "m", "id": "q000", "context": None, "trial": 0, "response": "A"}])
    assert main(["score", str(release), str(path)]) == 2
    assert "grading them needs --benchmark FILE" in capsys.readouterr().err


def test_long_benchmark_ids_round_trip_through_a_batch_file(tmp_path):
    release = make_pseudowords(tmp_path / "release").path
    bench = write_benchmark(tmp_path / "bench.jsonl", long_id=True)
    flags = ["--benchmark", str(bench)]
    batch_in = tmp_path / "batch.jsonl"
    assert main(["prompts", str(release), *flags, "--format", "openai-batch", "--model", "m", "-o", str(batch_in)]) == 0
    inputs = [json.loads(l) for l in batch_in.read_text(encoding="utf-8").splitlines()]
    assert max(len(l["custom_id"]) for l in inputs) <= MAX_ID and any(l["custom_id"].startswith("#") for l in inputs)
    texts = {l["custom_id"]: "Answer: B" for l in inputs}
    output = write_rows(tmp_path / "out.jsonl", batch_output(inputs, texts, set()))
    report = score(release, output, [*flags, "--replicates", "0", "--null-experiments", "10", "--splits", "2"], tmp_path / "r.json")
    assert report["predictions"]["excluded"] == 0 and report["predictions"]["grading"]["graded"] == len(inputs)
