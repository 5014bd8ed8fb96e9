"""`ctxrobust run`: every request of a release sent to an OpenAI-compatible chat-completions endpoint,
answers cached as they arrive, predictions written atomically in the dataset's native format, and a
run record beside them.

The record (`<predictions>.run.json`) holds the model, the endpoint without credentials, the prompt
options and sampling plan, counts (requests, cached, sent, answered, failed), up to 200 failures with
their reasons, and the start and end times. It names the environment variable the key came from,
never the key.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, TextIO

from ctxrobust.canonical import dumps, dumps_pretty
from ctxrobust.evaluation.run.cache import Cache, request_key
from ctxrobust.evaluation.run.client import ChatClient, RetryPolicy, public_url
from ctxrobust.evaluation.run.requests import NO_CONDITION, SEPARATOR, Request, RequestKey, SamplingPlan, body, check_unique

MAX_FAILURES_LISTED = 200
NO_KEY = "EMPTY"  # what local servers (vLLM, llama.cpp) accept when no key is set


@dataclass
class Progress:
    total: int
    stream: TextIO
    cached: int = 0
    answered: int = 0
    failed: int = 0
    _shown: float = 0.0
    _tenth: int = -1
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._shown < 0.2:
            return
        self._shown = now
        done = self.cached + self.answered + self.failed
        width = 30
        filled = int(width * done / self.total) if self.total else width
        line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} ({self.cached} cached, {self.answered} answered, {self.failed} failed)"
        if self.stream.isatty():
            self.stream.write("\r" + line + ("\n" if force else ""))
        else:  # a log file: a line at each tenth, and the last
            tenth = 10 * done // self.total if self.total else 10
            if tenth <= self._tenth:
                return
            self._tenth = tenth
            self.stream.write(line + "\n")
        self.stream.flush()

    def count(self, what: str) -> None:
        with self._lock:
            setattr(self, what, getattr(self, what) + 1)
            self.update()


def _atomic_write(target: Path, write: Callable[[TextIO], None]) -> None:
    partial = target.with_name(f".{target.name}.part")
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def record_path(output: Path) -> Path:
    return output.with_name(output.name + ".run.json")


def default_cache(output: Path) -> Path:
    return output.with_name(output.name + ".cache.jsonl")


def run(
    requests: list[Request],
    prediction: Callable[[RequestKey, str, str], dict],
    *,
    dataset: str,
    release: str,
    model: str,
    base_url: str,
    api_key_env: str,
    output: Path,
    cache_path: Path,
    concurrency: int,
    policy: RetryPolicy,
    options: dict,
    plan: SamplingPlan,
    stream: TextIO | None = None,
) -> dict:
    started, clock = datetime.now(timezone.utc), time.monotonic()
    requests = list(check_unique(requests))
    api_key = os.environ.get(api_key_env) or NO_KEY
    client = ChatClient(base_url, api_key, policy)
    cache = Cache(cache_path)
    progress = Progress(len(requests), stream if stream is not None else sys.stderr)
    bodies = {r.id: body(r, model) for r in requests}
    keys = {r.id: request_key(r.id, bodies[r.id]) for r in requests}
    failures: dict[str, str] = {}
    todo = []
    for r in requests:
        if cache.get(keys[r.id]) is not None:
            progress.cached += 1
        else:
            todo.append(r)
    progress.update(force=not todo)
    stop = threading.Event()

    def ask(r: Request) -> None:
        answer = client.complete(bodies[r.id], stop)
        if answer.text is None:
            failures[r.id] = answer.error or "failed"
            progress.count("failed")
        else:
            cache.put(keys[r.id], r.id, answer.text, answer.served_model, answer.finish_reason)
            progress.count("answered")

    pool = ThreadPoolExecutor(max_workers=concurrency)
    try:
        pending: set = set()
        for r in todo:  # at most 2 x concurrency requests queued at once
            pending.add(pool.submit(ask, r))
            if len(pending) >= 2 * concurrency:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    future.result()
        for future in pending:
            future.result()
        if todo:
            progress.update(force=True)
    except BaseException:  # interrupted: stop retrying, drop what is queued; finished answers are in the cache
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        cache.close()

    def write(handle: TextIO) -> None:
        for r in requests:
            entry = cache.get(keys[r.id])
            text = entry["response"] if entry is not None else ""  # a failed request: no answer, invalid
            _, token, _ = r.id.rsplit(SEPARATOR, 2)
            key = RequestKey(r.item, None if token == NO_CONDITION else token, r.sample)
            handle.write(dumps(prediction(key, model, text)) + "\n")

    _atomic_write(output, write)
    finished = datetime.now(timezone.utc)
    record = {
        "dataset": dataset,
        "release": release,
        "model": model,
        "endpoint": public_url(base_url),
        "api_key_env": api_key_env,
        "api_key_set": api_key != NO_KEY,
        "prompt_options": options,
        "sampling_plan": plan.model_dump(),
        "concurrency": concurrency,
        "retries": {"retries": policy.retries, "base_seconds": policy.base, "cap_seconds": policy.cap, "timeout_seconds": policy.timeout},
        "predictions": str(output),
        "cache": str(cache_path),
        "counts": {
            "requests": len(requests),
            "cached": progress.cached,
            "sent": len(todo),
            "answered": progress.answered,
            "failed": progress.failed,
        },
        "failures": [{"id": i, "error": failures[i]} for i in sorted(failures)[:MAX_FAILURES_LISTED]],
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "seconds": round(time.monotonic() - clock, 3),
    }
    _atomic_write(record_path(output), lambda handle: handle.write(dumps_pretty(record) + "\n"))
    return record
