"""The one request shape every dataset's `prompts` writes, its ids, and the sampling plans.

A request is one chat completion to ask for: `id` (unique, at most 64 characters, usable as an
OpenAI Batch `custom_id`) maps back to (item, condition or context, sample). Every dataset yields
`Request`s from its prompts module; `chat_line` is the line `prompts` writes by default and
`body` the chat-completions body sent by `run` and written into OpenAI Batch input files.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

from ctxrobust.errors import CtxRobustError

MAX_ID = 64  # OpenAI Batch API: custom_id is at most 64 characters
SEPARATOR = "/"
NO_CONDITION = "-"
HASHED = "#"  # an item id too long for the request id is written as "#" + 16 hex digits of its sha256


class SamplingPlan(BaseModel):
    """How many responses to ask for and how: `samples` per condition, `baseline_samples` for the
    no-context condition of datasets that have one (pseudowords), decoding parameters for all."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(0.0, ge=0.0, le=2.0)
    top_p: Optional[float] = Field(None, gt=0.0, le=1.0)
    max_tokens: Optional[int] = Field(None, ge=1)
    samples: int = Field(1, ge=1, le=1000)
    baseline_samples: Optional[int] = Field(None, ge=1, le=1000)

    def samples_for(self, baseline: bool) -> int:
        return self.baseline_samples if baseline and self.baseline_samples is not None else self.samples

    def sampling(self) -> dict:
        """The decoding parameters a request carries (unset ones left out)."""
        out: dict[str, Any] = {"temperature": self.temperature}
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        return out


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=MAX_ID)
    dataset: str
    item: str
    condition: Optional[str]  # condition (misleadqa), context id (pseudowords), None (no context / gsm-ic)
    sample: int = Field(ge=0)
    messages: list[dict]
    sampling: dict
    meta: dict = Field(default_factory=dict)  # the dataset's own fields (kind, split, prompt, ...)


@dataclass(frozen=True)
class RequestKey:
    """What a request id says: the item (or its hashed form), the condition token and the sample."""

    item: str
    condition: Optional[str]
    sample: int


def item_token(item: str) -> str:
    return HASHED + hashlib.sha256(item.encode("utf-8")).hexdigest()[:16]


def request_id(item: str, condition: Optional[str], sample: int) -> str:
    """ "item/condition/sample" ("-" for no condition); an item making it longer than 64 characters
    is replaced by its hashed token, which `decode` maps back through the dataset's item ids."""
    tail = f"{SEPARATOR}{condition if condition is not None else NO_CONDITION}{SEPARATOR}{sample}"
    full = item + tail
    if len(full) <= MAX_ID and not item.startswith(HASHED):
        return full
    short = item_token(item) + tail
    if len(short) > MAX_ID:
        raise CtxRobustError(f"condition {condition!r} of item {item!r}: too long for a {MAX_ID}-character request id")
    return short


def decode(custom_id: str, aliases: dict[str, str] | None = None) -> RequestKey | None:
    """The key of a request id written by `request_id`, or None if it is not one."""
    parts = custom_id.rsplit(SEPARATOR, 2)
    if len(parts) != 3 or not parts[0] or not parts[2].isdigit():
        return None
    item, condition, sample = parts
    if item.startswith(HASHED):
        if aliases is None or item not in aliases:
            return None
        item = aliases[item]
    return RequestKey(item, None if condition == NO_CONDITION else condition, int(sample))


def aliases_of(items) -> dict[str, str]:
    """Hashed token -> item id, for decoding ids of long items."""
    return {item_token(i): i for i in items}


def body(request: Request, model: str) -> dict:
    """The chat-completions body: model, messages and the request's sampling parameters."""
    return {"model": model, "messages": request.messages, **request.sampling}


def chat_line(request: Request, model: str | None = None) -> dict:
    """The line `prompts` writes by default (`--format chat`)."""
    line = request.model_dump()
    if model:
        line["model"] = model
    return line


def check_unique(requests):
    """Yield the requests, refusing a repeated id (which would make the mapping back ambiguous)."""
    seen: set[str] = set()
    for request in requests:
        if request.id in seen:
            raise CtxRobustError(f"request id {request.id!r} repeats; the release or benchmark has two items with one id")
        seen.add(request.id)
        yield request
