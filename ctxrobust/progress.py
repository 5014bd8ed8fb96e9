"""Progress of long steps on standard error: one line, redrawn in place, while a stage runs.

A `Progress` writes only when its stream is a terminal and it is not quiet (`-q`); in a pipe, a log
file or a test it writes nothing, so what a command prints there is unchanged. A stage is a context
manager with an optional total: its line shows the label, the count (of the total), the rate and the
time left, redrawn at most a few times a second, and a clock that keeps ticking while the step has no
count to report. While a stage runs, other writes to `sys.stderr` (warnings) clear the line first and
it is redrawn after them; the line is cleared when the stage ends.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Callable, TextIO

INTERVAL = 0.25  # seconds between two redraws of the line
CLEAR = "\r\033[K"


def is_terminal(stream) -> bool:
    """Whether `stream` is a terminal (a stream without `isatty`, or a closed one, is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def duration(seconds: float) -> str:
    """Seconds as M:SS, or H:MM:SS from an hour on."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def rate_text(done: int, elapsed: float, per: str = "s") -> str:
    """How many per second ("s") or per minute ("min") so far; empty before anything is done."""
    if done <= 0 or elapsed <= 0:
        return ""
    rate = done / elapsed * (60 if per == "min" else 1)
    return f"{rate:,.1f}/{per}" if rate < 100 else f"{rate:,.0f}/{per}"


def eta_text(done: int, total: int | None, elapsed: float) -> str:
    """The time left at the rate so far; empty without a total or before anything is done."""
    if not total or done <= 0 or elapsed <= 0 or done >= total:
        return ""
    return f"ETA {duration((total - done) * elapsed / done)}"


class Stage:
    """One step's state: its label, how many of its total are done (and failed), and a note on what
    it is doing now (e.g. the check that runs)."""

    def __init__(self, owner: Progress, label: str, total: int | None, per: str, clock: Callable[[], float]):
        self.owner, self.label, self.total, self.per, self.clock = owner, label, total, per, clock
        self.done, self.failed, self.note = 0, 0, ""
        self.started = clock()

    def advance(self, count: int = 1, failed: bool = False, note: str | None = None) -> None:
        """`count` more done (`failed` ones counted apart as well); the line is redrawn if it is time."""
        self.done += count
        if failed:
            self.failed += count
        if note is not None:
            self.note = note
        self.owner.refresh()

    def describe(self, note: str) -> None:
        """Say what the stage is doing now, without counting anything."""
        self.note = note
        self.owner.refresh()

    def text(self) -> str:
        elapsed = self.clock() - self.started
        parts = []
        if self.total is not None:
            parts.append(f"{self.done}/{self.total}")
        elif self.done:
            parts.append(f"{self.done}")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.done:
            parts.append(rate_text(self.done, elapsed, self.per))
        parts.append(eta_text(self.done, self.total, elapsed) or duration(elapsed))
        line = f"{self.label}: " + ", ".join(p for p in parts if p)
        return f"{line} ({self.note})" if self.note else line


class _Interleaved:
    """Standard error while a stage shows its line: a write clears the line, and the line is redrawn
    after a write that ends a line."""

    def __init__(self, owner: Progress, stream: TextIO):
        self._owner, self._stream = owner, stream

    def write(self, text: str) -> int:
        with self._owner.lock:
            if self._owner.shown:
                self._stream.write(CLEAR)
                self._owner.shown = False
            written = self._stream.write(text)
            if text.endswith("\n"):
                self._owner.draw(force=True)
            return written

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class Progress:
    """The progress reporter of one command: stages on `stream` (standard error by default), shown only
    on a terminal and unless `quiet`."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, clock: Callable[[], float] = time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and is_terminal(self.stream)
        self.clock = clock
        self.lock = threading.RLock()
        self.stage_now: Stage | None = None
        self.shown = False
        self._drawn = float("-inf")

    @contextmanager
    def stage(self, label: str, total: int | None = None, per: str = "s") -> Iterator[Stage]:
        """A step of `total` things (or of unknown size), shown while the block runs; stages do not nest:
        an inner one replaces the outer one's line until it ends."""
        stage = Stage(self, label, total, per, self.clock)
        if not self.enabled:
            yield stage
            return
        outer, self.stage_now = self.stage_now, stage
        stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(stop,), daemon=True)
        swapped = self.stream is sys.stderr
        if swapped:
            sys.stderr = _Interleaved(self, self.stream)
        self.draw(force=True)
        ticker.start()
        try:
            yield stage
        finally:
            stop.set()
            ticker.join()
            if swapped and isinstance(sys.stderr, _Interleaved):
                sys.stderr = self.stream
            with self.lock:
                self.stage_now = outer
                self.clear()
                if outer is not None:
                    self.draw(force=True)

    def _tick(self, stop: threading.Event) -> None:
        """Redraw the line while nothing else does, so the clock of a step without a count moves."""
        while not stop.wait(INTERVAL * 2):
            self.draw(force=True)

    def refresh(self) -> None:
        """Redraw the line if the last redraw is old enough."""
        if self.enabled:
            self.draw()

    def draw(self, force: bool = False) -> None:
        """Write the current stage's line over the last one (at most every INTERVAL unless `force`)."""
        if not self.enabled:
            return
        with self.lock:
            now = self.clock()
            if self.stage_now is None or (not force and now - self._drawn < INTERVAL):
                return
            self._drawn = now
            self.stream.write(CLEAR + self.stage_now.text())
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        """Remove the line from the terminal."""
        with self.lock:
            if self.shown:
                self.stream.write(CLEAR)
                self.stream.flush()
                self.shown = False

    def say(self, line: str) -> None:
        """A line of its own (a warning), shown whether or not progress is: the line is cleared first
        and redrawn after it."""
        with self.lock:
            self.clear()
            self.stream.write(line + "\n")
            self.stream.flush()
            self.draw(force=True)


SILENT = Progress(stream=None, quiet=True)  # for callers that report no progress
