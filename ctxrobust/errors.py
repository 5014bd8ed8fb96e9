"""User-facing errors: one line naming the file, line or item and what to do."""


class CtxRobustError(Exception):
    """An error the command line prints as one line, without a traceback."""
