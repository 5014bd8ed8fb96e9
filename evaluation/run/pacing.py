"""How a run paces itself against an endpoint: a cap on the requests sent per minute, shared by every
worker, and a breaker that stops the run when the endpoint cannot be reached.

`RateCap` spaces the requests that go out (retries included) at least 60/R seconds apart, whatever
the number of workers: a worker takes its turn, waits until 60/R seconds have passed since the last
request went out, and gives the turn on when its own request goes out (when the HTTP client writes
its first bytes, so the time it takes to build a request or connect never narrows the spacing) or
fails before that. Every wait is an `asyncio` wait, so a signal that cancels the run ends it at once.
`Breaker` counts connection failures in a row (no connection at all: refused, no route, no such host, a
timeout before the connection is made); any answer from the endpoint, an HTTP error included, sets the
count back to zero.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Callable

from ctxrobust.errors import CtxRobustError

MIN_PER_MINUTE = 1.0  # the lowest cap: at most 60 s between two requests


class RateCap:
    """At most `per_minute` requests a minute, spaced evenly (one event loop: no thread lock needed)."""

    def __init__(self, per_minute: float):
        if not math.isfinite(per_minute) or per_minute < MIN_PER_MINUTE:
            raise CtxRobustError(f"--max-requests-per-minute {per_minute:g}: give a number of {MIN_PER_MINUTE:g} or more")
        self.per_minute = per_minute
        self.interval = 60.0 / per_minute
        self._last = float("-inf")  # when the last request went out
        self._turn: asyncio.Lock | None = None
        self._holder: object | None = None

    async def take(self, token: object) -> None:
        """Return when the request `token` stands for may go out: its turn taken, the spacing waited."""
        if self._turn is None:
            self._turn = asyncio.Lock()
        await self._turn.acquire()
        self._holder = token
        try:
            delay = self._last + self.interval - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        except BaseException:
            self.give(token)
            raise

    def give(self, token: object) -> None:
        """The request `token` stands for went out (or never will): the next turn counts from now."""
        if self._holder is token and self._turn is not None:
            self._holder = None
            self._last = time.monotonic()
            self._turn.release()


class Breaker:
    """Trips after `limit` connection failures in a row; `on_trip` (set by the runner) stops the run."""

    def __init__(self, limit: int):
        if limit < 1:
            raise CtxRobustError(f"--max-connection-failures {limit}: give a number of 1 or more")
        self.limit = limit
        self.in_a_row = 0
        self.last: str | None = None
        self.tripped = False
        self.on_trip: Callable[[], None] | None = None

    def reached(self) -> None:
        """The endpoint answered (whatever it answered)."""
        self.in_a_row = 0

    def failed(self, what: str) -> None:
        """An attempt that could not connect; `what` says how."""
        self.in_a_row += 1
        self.last = what
        if self.in_a_row >= self.limit and not self.tripped:
            self.tripped = True
            if self.on_trip is not None:
                self.on_trip()
