"""JSON from untrusted input, parsed with a depth limit.

A document nested deeper than MAX_DEPTH (a "nesting bomb": 100,000 opening brackets on one line)
is refused as `TooDeep`, a ValueError, so callers that already turn a bad line or file into one
problem do the same for it; the interpreter's RecursionError never escapes a parse. Every place
where a user, a release, an endpoint or the Hub hands the project JSON reads it through `loads`.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 200  # the limit of the parser pydantic reads predictions with; far above any file the project writes (6 levels)


class TooDeep(ValueError):
    """A JSON document nested deeper than the limit."""

    def __init__(self, limit: int = MAX_DEPTH):
        super().__init__(f"JSON nested more than {limit} levels deep")
        self.msg = str(self)


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed value holds lists or objects nested more than `limit` deep (an iterative walk)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _opens_deep(text: str | bytes, limit: int) -> bool:
    """A cheap prefilter: could the text nest more than `limit` deep at all?"""
    if isinstance(text, (bytes, bytearray)):
        return text.count(b"[") + text.count(b"{") > limit
    return text.count("[") + text.count("{") > limit


def loads(text: str | bytes, limit: int = MAX_DEPTH, **kwargs) -> Any:
    """json.loads with a depth limit: TooDeep (a ValueError) for a deeper document, never RecursionError."""
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        raise TooDeep(limit) from None
    if _opens_deep(text, limit) and depth_exceeds(value, limit):
        raise TooDeep(limit)
    return value
