"""`ctxrobust run`: every request of a release sent to an OpenAI-compatible chat-completions endpoint,
answers cached as they arrive, predictions written atomically in the dataset's native format, and a
run record beside them.

The record (`<predictions>.run.json`) holds the model, the endpoint without credentials, the prompt
options and sampling plan, the subset of items asked (subsets.record; null for every item), the rate
cap, counts (requests, cached, sent, answered, failed, unanswered), the model names the endpoint
answered under, up to 200 failures with their reasons, why the run stopped early (null when it did
not), and the start and end times. It names the environment variable the key came from, never the key.

Files: the predictions and the record are written to temporary files created exclusively beside
them and renamed into place; the cache is never opened through a link (cache.py). While a run writes
an output it holds a lock on `.<output>.lock` beside it, so a second run with the same output is
refused with one line instead of sending every request again.

Requests are sent from one asyncio event loop, `concurrency` at a time. SIGINT and SIGTERM cancel
every request in flight at once, whatever the endpoint is doing; the finished answers stay in the
cache (the same command resumes), no predictions are written, and the run ends with `Interrupted`
(exit 130 or 143).

An endpoint that cannot be reached `max_connection_failures` times in a row stops the run: the answers
received are kept in the cache, the predictions (unanswered requests as invalid answers) and the record
are written, and the run ends with one line naming the endpoint and what failed (`EndpointUnreachable`).
When answers come under another model name than the one asked for, one warning says how many.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, TextIO

from ctxrobust.canonical import dumps, dumps_pretty
from ctxrobust.errors import CtxRobustError, Interrupted
from ctxrobust.evaluation.run.cache import Cache, open_regular, request_key, try_lock
from ctxrobust.evaluation.run.client import ChatClient, RetryPolicy, check_api_key, endpoint, public_url
from ctxrobust.evaluation.run.pacing import Breaker, RateCap
from ctxrobust.evaluation.run.requests import NO_CONDITION, SEPARATOR, Request, RequestKey, SamplingPlan, body, check_unique
from ctxrobust.output import atomic_open
from ctxrobust.progress import CLEAR, INTERVAL, eta_text, is_terminal, rate_text

MAX_FAILURES_LISTED = 200
NO_KEY = "EMPTY"  # what local servers (vLLM, llama.cpp) accept when no key is set
STOP_SECONDS = 5.0  # after SIGINT/SIGTERM, the longest wait for the requests in flight to be cancelled
MAX_CONNECTION_FAILURES = 10  # connection failures in a row that stop a run


class EndpointUnreachable(CtxRobustError):
    """The endpoint could not be reached too many times in a row; what was answered is written."""


@dataclass
class Progress:
    """The run's progress line on `stream`: requests done of the total, how many came from the cache,
    were answered or failed, the rate of requests sent per minute and the time left at that rate.

    On a terminal the line is redrawn in place (ctxrobust.progress); in a log file a line is written at
    each tenth and at the end; `quiet` writes no progress line at all (warnings still go out)."""

    total: int
    stream: TextIO
    quiet: bool = False
    cached: int = 0
    answered: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)
    _shown: float = float("-inf")
    _tenth: int = -1
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        """Sending begins: the rate and the time left count from now."""
        self.started = time.monotonic()

    def line(self) -> str:
        done = self.cached + self.answered + self.failed
        sent, elapsed = self.answered + self.failed, time.monotonic() - self.started
        width = 30
        filled = int(width * done / self.total) if self.total else width
        line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} ({self.cached} cached, {self.answered} answered, {self.failed} failed)"
        pace = [rate_text(sent, elapsed, "min"), eta_text(sent, self.total - self.cached, elapsed)]
        return ", ".join([line, *(p for p in pace if p)])

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.quiet or (not force and now - self._shown < INTERVAL):
            return
        self._shown = now
        done = self.cached + self.answered + self.failed
        if is_terminal(self.stream):
            self.stream.write(CLEAR + self.line() + ("\n" if force else ""))
        else:  # a log file: a line at each tenth, and the last
            tenth = 10 * done // self.total if self.total else 10
            if tenth <= self._tenth:
                return
            self._tenth = tenth
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def count(self, what: str) -> None:
        with self._lock:
            setattr(self, what, getattr(self, what) + 1)
            self.update()

    def say(self, line: str) -> None:
        """A line of its own (a warning), not mixed into the progress line."""
        with self._lock:
            self.stream.write((CLEAR if is_terminal(self.stream) and not self.quiet else "") + line + "\n")
            self.stream.flush()


def record_path(output: Path) -> Path:
    return output.with_name(output.name + ".run.json")


def default_cache(output: Path) -> Path:
    return output.with_name(output.name + ".cache.jsonl")


def lock_path(output: Path) -> Path:
    return output.with_name(f".{output.name}.lock")


@contextmanager
def output_lock(output: Path) -> Iterator[None]:
    """Held while a run writes `output`: `.<output>.lock` beside it, opened without following a link and
    locked; a second run with the same output is refused. The file is removed when the run ends."""
    path = lock_path(output)
    for _ in range(10):
        fd = open_regular(path, "-o", os.O_RDONLY)
        if not try_lock(fd):
            os.close(fd)
            raise CtxRobustError(
                f"-o {output}: another `ctxrobust run` is writing it (it holds {path}); wait for that run to end, or write elsewhere"
            )
        held = os.fstat(fd)
        try:  # the lock file may have been removed by the run that held it, between our open and our lock
            now = os.lstat(path)
        except FileNotFoundError:
            now = None
        if now is not None and stat.S_ISREG(now.st_mode) and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)
    else:
        raise CtxRobustError(f"-o {output}: could not lock {path} (other runs keep replacing it); try again")
    try:
        yield
    finally:
        try:
            now = os.lstat(path)
            if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                os.unlink(path)
        except OSError:
            pass
        os.close(fd)


def _differs(served: str | None, model: str) -> bool:
    return served is not None and served != model


def with_port(url: str) -> str:
    """The endpoint as a dead one is named: scheme://host:port/path, the port given even when the URL
    leaves it to the scheme; no credentials, query or fragment."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(public_url(url))
    if parts.port is not None:
        return public_url(url)
    port = 443 if parts.scheme.lower() == "https" else 80
    return urlunsplit((parts.scheme, f"{parts.netloc}:{port}", parts.path, "", ""))


def served_warning(served: Counter, model: str, answers: int) -> str | None:
    """One line when answers came under model names other than `model` (None when none did)."""
    from ctxrobust.release_files import shown

    others = {name: n for name, n in served.items() if _differs(name, model)}
    if not others:
        return None
    names = ", ".join(shown(name) for name in sorted(others, key=lambda name: (-others[name], name))[:3])
    more = f" and {len(others) - 3} other name(s)" if len(others) > 3 else ""
    return (
        f"warning: {sum(others.values())} of {answers} answer(s) came from model {names}{more}, not {shown(model)} (--model); "
        "each answer's model is kept in the cache and counted in the run record (served_models)"
    )


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
    quiet: bool = False,
    subset: dict | None = None,
    max_per_minute: float | None = None,
    max_connection_failures: int = MAX_CONNECTION_FAILURES,
) -> dict:
    """Send `requests` (a subset's when `subset`, its record, is given), write the predictions and the
    record, and return the record; EndpointUnreachable after writing both when the endpoint is down."""
    from ctxrobust.release_files import printable

    started, clock = datetime.now(timezone.utc), time.monotonic()
    endpoint(base_url)  # one clear line for a URL that cannot be used, before anything is opened or sent
    api_key = os.environ.get(api_key_env) or NO_KEY
    check_api_key(api_key, api_key_env)
    requests = list(check_unique(requests))
    stream = stream if stream is not None else sys.stderr
    bodies = {r.id: body(r, model) for r in requests}
    keys = {r.id: request_key(r.id, bodies[r.id]) for r in requests}
    with output_lock(output):
        cache = Cache(cache_path)
        try:
            progress = Progress(len(requests), stream, quiet)
            if cache.dropped:
                progress.say(
                    f"warning: {printable(str(cache_path))}: {len(cache.dropped)} cache line(s) hold no text answer "
                    f"(first: line {cache.dropped[0]}); their requests are asked again"
                )
            failures: dict[str, str] = {}
            todo = []
            for r in requests:
                if cache.get(keys[r.id]) is not None:
                    progress.cached += 1
                else:
                    todo.append(r)
            progress.update(force=not todo)
            pace = RateCap(max_per_minute) if max_per_minute is not None else None
            breaker = Breaker(max_connection_failures)
            client = ChatClient(base_url, api_key, policy, pace=pace, breaker=breaker)
            progress.start()

            async def ask(r: Request) -> None:
                answer = await client.complete(bodies[r.id])
                if answer.text is None:
                    failures[r.id] = answer.error or "failed"
                    progress.count("failed")
                else:
                    cache.put(keys[r.id], r.id, answer.text, answer.served_model, answer.finish_reason)
                    progress.count("answered")

            signum = _send(todo, ask, concurrency, client, breaker)
            if todo and signum is None and not breaker.tripped:
                progress.update(force=True)
        finally:
            cache.close()
        if signum is not None:
            name = signal.Signals(signum).name
            raise Interrupted(
                f"interrupted by {name}; {progress.answered} answer(s) of this run were kept in the cache {printable(str(cache_path))} "
                f"({progress.cached + progress.answered} of {len(requests)} in all) and no predictions were written; "
                "the same command resumes, sending only the rest",
                128 + signum,
            )

        served: Counter = Counter()
        with atomic_open(output) as handle:
            for r in requests:
                entry = cache.get(keys[r.id])
                text = entry["response"] if entry is not None else ""  # a failed request: no answer, invalid
                if entry is not None and isinstance(entry.get("served_model"), str):
                    served[entry["served_model"]] += 1
                _, token, _ = r.id.rsplit(SEPARATOR, 2)
                key = RequestKey(r.item, None if token == NO_CONDITION else token, r.sample)
                handle.write(dumps(prediction(key, model, text)) + "\n")
        warning = served_warning(served, model, sum(served.values()))
        if warning:
            progress.say(warning)
        stopped = None
        if breaker.tripped:
            stopped = (
                f"{with_port(base_url)}: {breaker.limit} connection failures in a row ({breaker.last}); "
                f"stopped with {progress.cached + progress.answered} of {len(requests)} request(s) answered"
            )
        finished = datetime.now(timezone.utc)
        record = {
            "dataset": dataset,
            "release": release,
            "model": model,
            "served_models": dict(sorted(served.items())),
            "endpoint": public_url(base_url),
            "api_key_env": api_key_env,
            "api_key_set": api_key != NO_KEY,
            "prompt_options": options,
            "sampling_plan": plan.model_dump(),
            "subset": subset,
            "concurrency": concurrency,
            "max_requests_per_minute": max_per_minute,
            "max_connection_failures": max_connection_failures,
            "retries": {
                "retries": policy.retries,
                "base_seconds": policy.base,
                "cap_seconds": policy.cap,
                "timeout_seconds": policy.timeout,
            },
            "predictions": str(output),
            "cache": str(cache_path),
            "counts": {
                "requests": len(requests),
                "cached": progress.cached,
                "sent": len(todo),
                "answered": progress.answered,
                "failed": progress.failed,
                "unanswered": len(requests) - progress.cached - progress.answered - progress.failed,
            },
            "failures": [{"id": i, "error": failures[i]} for i in sorted(failures)[:MAX_FAILURES_LISTED]],
            "stopped": stopped,
            "started": started.isoformat(timespec="seconds"),
            "finished": finished.isoformat(timespec="seconds"),
            "seconds": round(time.monotonic() - clock, 3),
        }
        with atomic_open(record_path(output)) as handle:
            handle.write(dumps_pretty(record))
    if stopped is not None:
        unanswered = record["counts"]["unanswered"] + record["counts"]["failed"]
        raise EndpointUnreachable(
            f"{stopped}; the answers are kept in the cache {printable(str(cache_path))} and the predictions written to "
            f"{printable(str(output))} with the {unanswered} unanswered as invalid answers; "
            "check that the endpoint is up at --base-url, then rerun the same command to send only the rest"
        )
    return record


def _send(todo: list[Request], ask, concurrency: int, client: ChatClient, breaker: Breaker) -> int | None:
    """Ask every request, `concurrency` at a time, in an event loop of its own; the signal that stopped
    it (SIGINT or SIGTERM, every request in flight cancelled), or None when all were asked or the
    breaker tripped (every request in flight cancelled too)."""
    loop = asyncio.new_event_loop()
    received: list[int] = []
    installed: list[tuple[int, object]] = []

    async def ask_all() -> None:
        queue = iter(todo)

        async def worker() -> None:
            for r in queue:  # one iterator shared by the workers (one thread: no lock needed)
                await ask(r)

        try:
            await asyncio.gather(*(worker() for _ in range(min(concurrency, len(todo)))))
        finally:
            await asyncio.shield(_close(client))

    main = loop.create_task(ask_all())
    breaker.on_trip = main.cancel

    def on_signal(signum: int) -> None:
        if received:
            return
        received.append(signum)
        main.cancel()
        loop.call_later(STOP_SECONDS, loop.stop)  # a request that does not end when cancelled is not waited for

    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                previous = signal.getsignal(signum)
                loop.add_signal_handler(signum, on_signal, signum)
            except (ValueError, RuntimeError, NotImplementedError, OSError):
                continue
            installed.append((signum, previous))
    try:
        loop.run_until_complete(main)
    except asyncio.CancelledError:
        if not received and not breaker.tripped:
            raise
    except RuntimeError:  # the loop stopped STOP_SECONDS after a signal, before every request was cancelled
        if not received:
            raise
    finally:
        for signum, previous in installed:
            loop.remove_signal_handler(signum)
            signal.signal(signum, previous)
        try:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
        finally:
            loop.close()
    return received[0] if received else None


async def _close(client: ChatClient) -> None:
    try:
        await asyncio.wait_for(client.close(), 2.0)
    except (Exception, asyncio.CancelledError):
        pass
