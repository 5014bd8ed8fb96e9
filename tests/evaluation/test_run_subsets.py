"""Pilots and pacing of `prompts` and `run`: subsets (--limit, --sample, --items) that keep every request
of each unit of analysis (a gsm-ic base problem with all its variants; a misleadqa or pseudowords item), the same draw in both commands, a cap on requests per minute, a dead
endpoint stopping the run, and answers served under another model name."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from chat_server import ChatServer
from hostile import error_lines
from paths import REPO
from test_eval_gsm_ic import BASES, SUBSET, VARIANTS
from test_eval_gsm_ic import write_release as write_gsm_ic
from test_eval_misleadqa import MAIN, SUPPLEMENT
from test_eval_misleadqa import write_release as write_misleadqa
from test_eval_pseudowords import make_release as make_pseudowords
from test_run import write_benchmark

from ctxrobust.cli import main
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.run.pacing import Breaker, RateCap
from ctxrobust.evaluation.run.requests import Request
from ctxrobust.evaluation.run.subsets import Subset, items_digest, rank, read_items, select

SECRET = "sk-test-subsets-do-not-leak"
FAST = ["--retry-base", "0.01", "--timeout", "2"]


@pytest.fixture(autouse=True)
def no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def gsm_ic(tmp_path) -> Path:
    return write_gsm_ic(tmp_path / "gsm-ic", BASES, VARIANTS, SUBSET).path  # 12 items, one request each


@pytest.fixture
def gsm_ic_large(tmp_path) -> Path:
    """12 base problems with 3 variants each: 48 items, one request each."""
    bases = [(f"b{b:02d}", "12", 2 + b % 2) for b in range(12)]
    cells = [("in_topic", "overlapped", "in_range"), ("off_topic", "nonoverlapped", "out_range"), ("in_topic", "nonoverlapped", "in_range")]
    variants = [(f"v{b:02d}{k}", f"b{b:02d}", *cell) for b in range(12) for k, cell in enumerate(cells)]
    return write_gsm_ic(tmp_path / "gsm-ic-large", bases, variants).path


@pytest.fixture
def misleadqa(tmp_path) -> Path:
    return write_misleadqa(tmp_path / "misleadqa", MAIN, SUPPLEMENT)  # 7 items, 8 conditions each


def answer(messages, n) -> str:
    return "The answer is 12."


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def record_of(out: Path) -> dict:
    return json.loads(out.with_name(out.name + ".run.json").read_text(encoding="utf-8"))


def prompts(release: Path, out: Path, *extra: str) -> list[dict]:
    assert main(["prompts", str(release), "-o", str(out), *extra]) == 0
    return lines_of(out)


def run(release: Path, url: str, out: Path, *extra: str) -> int:
    return main(["run", str(release), "--base-url", url, "--model", "m", "-o", str(out), *FAST, *extra])


def sent_items(server: ChatServer, requests: list[dict]) -> list[str]:
    """The item of each request the server answered, found through its messages."""
    by_messages = {json.dumps(r["messages"], sort_keys=True): r["item"] for r in requests}
    return [by_messages[json.dumps(b["messages"], sort_keys=True)] for b in server.bodies]


def requests_of(items: int, per_item: int) -> list[Request]:
    """Requests interleaved across items (condition-major), as a dataset may yield them."""
    return [
        Request(id=f"i{i:02d}/c{c}/0", dataset="d", item=f"i{i:02d}", condition=f"c{c}", sample=0, messages=[], sampling={})
        for c in range(per_item)
        for i in range(items)
    ]


# -- the selection -------------------------------------------------------------------------------------


def test_a_subset_keeps_every_request_of_each_item_in_release_order():
    requests = requests_of(10, 3)
    chosen = select(requests, Subset(kind="limit", n=4))
    assert chosen.items == ["i00", "i01", "i02", "i03"] and chosen.of_items == 10
    assert [r.id for r in chosen.requests] == [r.id for r in requests if r.item in set(chosen.items)]
    assert Counter(r.item for r in chosen.requests) == {item: 3 for item in chosen.items}
    assert select(requests, Subset(kind="limit", n=50)).items == [f"i{i:02d}" for i in range(10)]  # all there are


def test_a_draw_is_seeded_nested_and_uniform():
    requests = requests_of(20, 2)
    draw = select(requests, Subset(kind="sample", n=5, seed=3))
    assert draw.items == select(list(reversed(requests)), Subset(kind="sample", n=5, seed=3)).items[::-1]  # release order kept
    assert set(draw.items) <= set(select(requests, Subset(kind="sample", n=8, seed=3)).items)  # nested
    assert draw.items != select(requests, Subset(kind="sample", n=5, seed=4)).items
    counts = Counter(item for seed in range(2000) for item in select(requests, Subset(kind="sample", n=5, seed=seed)).items)
    assert len(counts) == 20 and all(400 <= n <= 600 for n in counts.values()), counts  # 2000 * 5 / 20 = 500 each
    for seed in range(30):  # the one-pass draw keeps the items of the n lowest ranks, whatever the interleaving
        for n in (1, 7, 20):
            lowest = sorted({r.item for r in requests}, key=lambda item: rank(item, seed))[:n]
            assert set(select(requests, Subset(kind="sample", n=n, seed=seed)).items) == set(lowest)
    with pytest.raises(CtxRobustError, match="--sample 21: the release .* has 20 item"):
        select(requests, Subset(kind="sample", n=21, seed=0))


def test_an_items_file_of_ids_or_json_lines(tmp_path):
    plain = tmp_path / "ids.txt"
    plain.write_text("i03\n\n  i01 \ni03\n", encoding="utf-8")
    assert read_items(plain) == ["i03", "i01"]
    rows = tmp_path / "ids.jsonl"
    rows.write_text('{"id": "i02", "response": "x"}\n{"id": "i05/c0/0", "item": "i05"}\n', encoding="utf-8")
    assert read_items(rows) == ["i02", "i05"]
    chosen = select(requests_of(10, 2), Subset(kind="items", file=str(rows)))
    assert chosen.items == ["i02", "i05"] and len(chosen.requests) == 4
    assert items_digest(chosen.items) == items_digest(["i05", "i02"])


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "names no item"),
        ('{"response": "x"}\n', ":1: a JSON line without an `item` or `id` string"),
        ("i01\n{not json\n", ":2: not a JSON line"),
    ],
)
def test_a_bad_items_file_is_one_line(tmp_path, text, message):
    path = tmp_path / "ids.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CtxRobustError, match=message):
        read_items(path)


def test_an_items_path_that_is_a_folder_fifo_or_not_utf8_is_refused(tmp_path):
    with pytest.raises(CtxRobustError, match="is not a regular file"):
        read_items(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(CtxRobustError, match="is not a regular file"):
        read_items(fifo)  # refused at once, not waited on
    path = tmp_path / "ids.txt"
    path.write_bytes(b"i01\n\xff\n")
    with pytest.raises(CtxRobustError, match=r"not UTF-8 text \(byte 4\)"):
        read_items(path)


# -- prompts and run -----------------------------------------------------------------------------------


def test_limit_sends_exactly_the_requests_of_the_first_items(misleadqa, tmp_path, capsys):
    every = prompts(misleadqa, tmp_path / "all.jsonl")
    order = list(dict.fromkeys(r["item"] for r in every))
    first = set(order[:5])
    wanted = [r for r in every if r["item"] in first]
    assert len(wanted) == 40  # 5 items, 8 conditions each
    assert prompts(misleadqa, tmp_path / "five.jsonl", "--limit", "5") == wanted
    out = tmp_path / "run.jsonl"
    with ChatServer(lambda messages, n: "A") as server:
        assert run(misleadqa, server.url, out, "--limit", "5") == 0
    assert Counter(sent_items(server, every)) == {item: 8 for item in first}
    assert server.calls == 40
    assert {row["id"] for row in lines_of(out)} == first and len(lines_of(out)) == 40
    subset = record_of(out)["subset"]
    assert {k: subset[k] for k in ("kind", "n", "seed", "items", "of_items", "requests", "of_requests")} == {
        "kind": "limit",
        "n": 5,
        "seed": None,
        "items": 5,
        "of_items": 7,
        "requests": 40,
        "of_requests": 56,
    }
    assert subset["item_ids"] == order[:5] and subset["items_sha256"] == items_digest(order[:5])
    assert "selected 5 of 7 item(s) (--limit 5): 40 of 56 request(s), every request of each item" in capsys.readouterr().err


def base_of(request: dict) -> str:
    return request["meta"]["base_id"]


def test_a_gsm_ic_sample_keeps_whole_base_problems_with_every_variant(gsm_ic_large, tmp_path, capsys):
    every = prompts(gsm_ic_large, tmp_path / "all.jsonl")
    drawn = prompts(gsm_ic_large, tmp_path / "pilot.jsonl", "--sample", "5", "--seed", "3")
    bases = {base_of(r) for r in drawn}
    assert len(bases) == 5
    assert drawn == [r for r in every if base_of(r) in bases]  # the base request and all 3 variants of each
    assert Counter(r["meta"]["kind"] for r in drawn) == {"base": 5, "variant": 15}
    assert "selected 5 of 12 base problem(s) (--sample 5 --sample-seed 3): 20 of 48 item(s), 20 of 48 request(s)" in capsys.readouterr().err
    assert {base_of(r) for r in prompts(gsm_ic_large, tmp_path / "more.jsonl", "--sample", "8", "--seed", "3")} > bases  # nested
    first = prompts(gsm_ic_large, tmp_path / "first.jsonl", "--limit", "2")
    assert [r["item"] for r in first] == ["b00", "b01", "v000", "v001", "v002", "v010", "v011", "v012"]
    out = tmp_path / "run.jsonl"
    with ChatServer(answer) as server:
        assert run(gsm_ic_large, server.url, out, "--sample", "5", "--seed", "3") == 0
    assert Counter(sent_items(server, every)) == {r["item"]: 1 for r in drawn}
    subset = record_of(out)["subset"]
    assert (subset["kind"], subset["n"], subset["seed"], subset["unit"], subset["units"], subset["of_units"]) == (
        "sample",
        5,
        3,
        "base problem",
        5,
        12,
    )
    assert set(subset["unit_ids"]) == bases and subset["item_ids"] == [r["item"] for r in drawn]
    assert (subset["items"], subset["of_items"], subset["requests"], subset["of_requests"]) == (20, 48, 20, 48)
    report = tmp_path / "pilot.json"  # the pilot scores like the full run: base accuracy and normalised figures
    assert main(["score", str(gsm_ic_large), str(out), "--requests", str(out) + ".run.json", "--replicates", "20", "-o", str(report)]) == 0
    figures = json.loads(report.read_text(encoding="utf-8"))["models"]["m"]["metrics"]
    assert figures["accuracy.base"]["estimate"] == 1.0 and figures["micro"]["estimate"] == 1.0
    assert figures["macro"]["n"] == 5 and figures["normalised.micro"]["estimate"] == 1.0


def test_sample_draws_the_same_units_in_prompts_and_run(gsm_ic, tmp_path):
    every = prompts(gsm_ic, tmp_path / "all.jsonl", "--samples", "2")
    drawn = prompts(gsm_ic, tmp_path / "pilot.jsonl", "--samples", "2", "--sample", "2", "--seed", "3")
    bases = {base_of(r) for r in drawn}
    items = {r["item"] for r in drawn}
    assert len(bases) == 2 and drawn == [r for r in every if base_of(r) in bases]  # both samples of each item
    again = prompts(gsm_ic, tmp_path / "again.jsonl", "--samples", "2", "--sample", "2", "--sample-seed", "3")
    assert again == drawn
    others = {
        frozenset(base_of(r) for r in prompts(gsm_ic, tmp_path / "o.jsonl", "--samples", "2", "--sample", "2", "--seed", str(s)))
        for s in range(4, 12)
    }
    assert len(others) > 1
    out = tmp_path / "run.jsonl"
    with ChatServer(answer) as server:
        assert run(gsm_ic, server.url, out, "--samples", "2", "--sample", "2", "--seed", "3") == 0
    assert Counter(sent_items(server, every)) == {item: 2 for item in items}
    subset = record_of(out)["subset"]
    assert (subset["kind"], subset["n"], subset["seed"], set(subset["item_ids"]), set(subset["unit_ids"])) == ("sample", 2, 3, items, bases)


def test_items_file_selects_and_an_unknown_id_fails_in_one_line(gsm_ic, tmp_path, capsys):
    every = prompts(gsm_ic, tmp_path / "all.jsonl")
    ids = tmp_path / "ids.txt"
    ids.write_text(f"{every[3]['item']}\n{every[1]['item']}\n", encoding="utf-8")
    chosen = prompts(gsm_ic, tmp_path / "chosen.jsonl", "--items", str(ids))
    assert chosen == [every[1], every[3]]
    assert prompts(gsm_ic, tmp_path / "again.jsonl", "--items", str(tmp_path / "chosen.jsonl")) == chosen  # a prompts file
    capsys.readouterr()
    ids.write_text("b1\nnope-1\nnope-2\nnope-3\nnope-4\n", encoding="utf-8")
    with ChatServer(answer) as server:
        assert run(gsm_ic, server.url, tmp_path / "run.jsonl", "--items", str(ids)) == 2
        assert main(["prompts", str(gsm_ic), "--items", str(ids), "-o", str(tmp_path / "p.jsonl")]) == 2
    assert server.calls == 0 and not (tmp_path / "run.jsonl").exists() and not (tmp_path / "p.jsonl").exists()
    errors = error_lines(capsys.readouterr().err)
    assert len(errors) == 2 and errors[0] == errors[1]
    assert "4 of its 5 id(s) are neither items nor request ids of the release" in errors[0]
    assert "'nope-1', 'nope-2', 'nope-3', ..." in errors[0]


def test_items_file_takes_request_ids_for_their_items(misleadqa, tmp_path):
    every = prompts(misleadqa, tmp_path / "all.jsonl")
    q2 = next(r for r in every if r["item"] == "q2" and r["condition"] == "S")
    ids = tmp_path / "ids.txt"
    ids.write_text(f"{q2['id']}\nq4\n", encoding="utf-8")  # one request of q2 stands for q2
    chosen = prompts(misleadqa, tmp_path / "chosen.jsonl", "--items", str(ids))
    assert chosen == [r for r in every if r["item"] in ("q2", "q4")] and len(chosen) == 16
    ids.write_text("q2/nope/0\n", encoding="utf-8")  # shaped like a request id of q2, but not one
    assert main(["prompts", str(misleadqa), "--items", str(ids), "-o", str(tmp_path / "bad.jsonl")]) == 2
    assert not (tmp_path / "bad.jsonl").exists()


def test_a_limit_above_the_release_says_so(misleadqa, gsm_ic, tmp_path, capsys):
    assert len(prompts(misleadqa, tmp_path / "all.jsonl", "--limit", "50")) == 56
    err = capsys.readouterr().err
    assert "selected 7 of 7 item(s) (--limit 50, more than the release's 7: every item): 56 of 56 request(s)" in err
    prompts(gsm_ic, tmp_path / "gsm.jsonl", "--limit", "9")
    assert "selected 3 of 3 base problem(s) (--limit 9, more than the release's 3: every base problem)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--limit", "0"], "--limit 0: give a number of items, 1 or more"),
        (["--sample-seed", "2"], "--sample-seed S seeds --sample N"),
    ],
)
def test_bad_subset_flags_are_one_line(gsm_ic, tmp_path, capsys, flags, message):
    assert main(["prompts", str(gsm_ic), *flags]) == 2
    errors = error_lines(capsys.readouterr().err)
    assert len(errors) == 1 and message in errors[0]


def test_a_rate_cap_spaces_the_requests(gsm_ic, tmp_path):
    with ChatServer(answer) as server:
        assert (
            run(gsm_ic, server.url, tmp_path / "run.jsonl", "--limit", "1", "--concurrency", "4", "--max-requests-per-minute", "120") == 0
        )
    assert server.calls == 4  # b1 and its three variants
    times = sorted(server.times)
    assert times[-1] - times[0] >= 1.45  # 4 starts at least 0.5 s apart, whatever the concurrency
    assert all(b - a >= 0.4 for a, b in zip(times, times[1:]))
    assert record_of(tmp_path / "run.jsonl")["max_requests_per_minute"] == 120


def test_a_run_waiting_under_the_rate_cap_stops_at_once_on_a_signal(gsm_ic, tmp_path):
    out = tmp_path / "run.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "CTXROBUST_DEBUG")}
    with ChatServer(answer) as server:
        args = ["run", str(gsm_ic), "--base-url", server.url, "--model", "m", "-o", str(out), *FAST, "--max-requests-per-minute", "1"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "ctxrobust.cli", *args],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        cache = tmp_path / "run.jsonl.cache.jsonl"
        deadline = time.monotonic() + 60
        while not (cache.exists() and cache.read_text(encoding="utf-8").count("\n") == 1):
            assert proc.poll() is None and time.monotonic() < deadline, "the first answer never came"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # the other workers wait a minute for their turn
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert server.calls == 1 and not out.exists()
    assert "interrupted by SIGINT; 1 answer(s) of this run were kept in the cache" in err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dead_endpoint_stops_the_run_in_one_line_keeping_the_answers(gsm_ic, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "run.jsonl"
    with ChatServer(answer) as server:  # four answers in the cache first: b1 and its variants
        assert run(gsm_ic, server.url, out, "--limit", "1") == 0
    capsys.readouterr()
    port = free_port()
    dead = f"http://user:pw@127.0.0.1:{port}/v1?key=abc"
    assert run(gsm_ic, dead, out, "--max-connection-failures", "4", "--retries", "6", "--concurrency", "2") == 2
    err = capsys.readouterr().err
    errors = error_lines(err)
    assert len(errors) == 1, err
    assert errors[0].startswith(f"error: http://127.0.0.1:{port}/v1: 4 connection failures in a row (")
    assert "stopped with 4 of 12 request(s) answered" in errors[0] and "rerun the same command" in errors[0]
    assert SECRET not in err and "pw" not in errors[0] and "key=abc" not in errors[0]
    record = record_of(out)
    assert record["stopped"].startswith("http://127.0.0.1:") and record["counts"]["cached"] == 4
    assert record["counts"]["answered"] == 0 and record["counts"]["unanswered"] + record["counts"]["failed"] == 8
    rows = lines_of(out)
    assert len(rows) == 12 and sum(row["response"] == "The answer is 12." for row in rows) == 4  # the rest invalid


def test_answers_under_another_model_name_are_warned_once_and_recorded(gsm_ic, tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    with ChatServer(answer, model="m") as server:
        assert run(gsm_ic, server.url, out, "--limit", "1") == 0  # b1 and its three variants
    with ChatServer(answer, model="m-2025") as server:
        assert run(gsm_ic, server.url, out) == 0  # 4 answers from the cache, 8 from "m-2025"
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: 8 of 12 answer(s) came from model 'm-2025', not 'm' (--model); "
        "each answer's model is kept in the cache and counted in the run record (served_models)"
    ]
    assert record_of(out)["served_models"] == {"m": 4, "m-2025": 8}
    served = Counter(json.loads(line)["served_model"] for line in (tmp_path / "run.jsonl.cache.jsonl").read_text().splitlines())
    assert served == {"m": 4, "m-2025": 8}


def test_pseudowords_keeps_seed_for_its_prompts_and_draws_with_sample_seed(tmp_path, capsys):
    release = make_pseudowords(tmp_path / "pseudowords").path
    bench = write_benchmark(tmp_path / "bench.jsonl")
    every = prompts(release, tmp_path / "all.jsonl", "--benchmark", str(bench))
    capsys.readouterr()
    assert main(["prompts", str(release), "--benchmark", str(bench), "--sample", "3", "--seed", "1"]) == 2
    errors = error_lines(capsys.readouterr().err)
    assert len(errors) == 1 and "give the draw's seed as --sample-seed S" in errors[0]
    drawn = prompts(release, tmp_path / "pilot.jsonl", "--benchmark", str(bench), "--sample", "3", "--sample-seed", "1")
    items = {r["item"] for r in drawn}
    assert len(items) == 3 and drawn == [r for r in every if r["item"] in items]  # the baseline and every context of each
    assert {r["condition"] is None for r in drawn} == {True, False}


def test_the_breaker_counts_connection_failures_in_a_row_only():
    stops = []
    breaker = Breaker(3)
    breaker.on_trip = lambda: stops.append(breaker.last)
    for what in ("refused", "refused", None, "refused", "refused"):  # None: the endpoint answered (an HTTP error too)
        breaker.reached() if what is None else breaker.failed(what)
    assert not breaker.tripped and breaker.in_a_row == 2
    breaker.failed("no route")
    breaker.failed("no route")
    assert breaker.tripped and stops == ["no route"]  # stopped once
    for bad in (0, -1):
        with pytest.raises(CtxRobustError, match="--max-connection-failures"):
            Breaker(bad)
    for bad in (0.5, float("nan"), float("inf")):
        with pytest.raises(CtxRobustError, match="--max-requests-per-minute"):
            RateCap(bad)


@pytest.fixture
def unanswering_ports():
    """(never connects, connects but never answers): a listening socket whose accept queue is full, so
    a new connection's handshake is never answered, and one that accepts and then says nothing."""
    full = socket.socket()
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    port = full.getsockname()[1]
    fillers = []
    for _ in range(4):  # fill the accept queue: later SYNs are dropped
        c = socket.socket()
        c.setblocking(False)
        try:
            c.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(c)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    time.sleep(0.1)
    yield port, silent.getsockname()[1]
    for s in (*fillers, full, silent):
        s.close()


def test_a_timeout_before_connecting_counts_as_a_connection_failure_and_one_after_does_not(unanswering_ports):
    import asyncio

    from ctxrobust.evaluation.run.client import ChatClient, RetryPolicy

    never, silent = unanswering_ports
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    breaker = Breaker(10)

    async def ask(port: int):
        client = ChatClient(f"http://127.0.0.1:{port}/v1", "k", RetryPolicy(retries=0, timeout=0.5), breaker=breaker)
        try:
            return await client.complete(body)
        finally:
            await client.close()

    answer = asyncio.run(ask(never))
    assert answer.text is None and "while connecting" in answer.error
    assert breaker.in_a_row == 1 and breaker.last == "timed out connecting"
    answer = asyncio.run(ask(silent))  # connected (the kernel completes the handshake), then no answer in time
    assert answer.text is None and "connecting" not in answer.error
    assert breaker.in_a_row == 1  # a read timeout neither counts nor resets
    asyncio.run(ask(never))
    assert breaker.in_a_row == 2
