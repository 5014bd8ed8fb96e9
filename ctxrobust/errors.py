"""User-facing errors: one line naming the file, line or item and what to do.

Every error a command prints without a traceback is one of these classes; the command line
prints `error: <message>` and exits 2.
"""

from __future__ import annotations


class CtxRobustError(Exception):
    """An error the command line prints as one line, without a traceback."""


class SourceError(CtxRobustError):
    """A source snapshot is missing or does not match the lock; the message says which and what to do."""


class PredictionsError(CtxRobustError):
    """A predictions file cannot be scored as a whole (unreadable, empty, or refused under --strict)."""


class ValidationFailed(CtxRobustError):
    """A build whose validators failed: nothing was written; `failures` lists what each check found."""

    def __init__(self, message: str, failures: list):
        super().__init__(message)
        self.failures = failures


class Interrupted(CtxRobustError):
    """A command stopped by SIGTERM or SIGINT after cleaning up; the message says what was left where."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code
