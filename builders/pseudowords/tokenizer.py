"""The token counter: gpt-oss-120b's o200k encoding, offline, from bpe-openai (Section 3).

gpt-oss-120b tokenises ordinary text with o200k (its harmony variant only adds
special tokens), so counting with `o200k_base` gives the paper's token counts.
bpe-openai ships the o200k merge table inside the wheel: nothing is downloaded.
Text is always encoded as ordinary text: a context that happens to spell a
special token such as "<|endoftext|>" is counted as the characters it is.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

import numpy as np

from ctxrobust.errors import CtxRobustError

DEFAULT_TOKENIZER = "o200k_base"
MODELS = {"o200k_base": "gpt-oss-120b", "cl100k_base": "gpt-4"}  # encoding -> a model that uses it
SUPPORTED = tuple(sorted(MODELS))


class Tokenizer:
    """Encode, count and decode with one bundled encoding; a thin layer over bpe-openai's Rust backend."""

    def __init__(self, name: str):
        from bpe_openai import _bindings, registry

        self.name = name
        self._backend = _bindings.tokenizer_for_encoding(name)
        meta = registry.ENCODING_CONSTRUCTORS[name]()
        ranks: dict[bytes, int] = meta["mergeable_ranks"]
        self._token_bytes: list[bytes] = [b""] * (max(ranks.values()) + 1)
        for token, rank in ranks.items():
            self._token_bytes[rank] = token
        self._pool: np.ndarray | None = None

    def encode(self, text: str) -> list[int]:
        return self._backend.encode(text)

    def count(self, text: str) -> int:
        return len(self._backend.encode(text))

    def token_bytes(self, token: int) -> bytes:
        return self._token_bytes[token]

    def decode(self, tokens: list[int]) -> str:
        """The text of `tokens`; raises UnicodeDecodeError if they end inside a UTF-8 character."""
        return b"".join(self._token_bytes[t] for t in tokens).decode("utf-8")

    @property
    def n_ordinary(self) -> int:
        """Number of ordinary (non-special) token ids: 0 .. n_ordinary-1."""
        return len(self._token_bytes)

    def round_trip_pool(self) -> np.ndarray:
        """Sorted ids of the ordinary tokens whose bytes are valid UTF-8 and re-encode to that one token (Section 3.3, TOK)."""
        if self._pool is not None:
            return self._pool
        pool = []
        for token, raw in enumerate(self._token_bytes):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if text and self._backend.encode(text) == [token]:
                pool.append(token)
        self._pool = np.asarray(pool, dtype=np.int64)
        return self._pool


@cache
def load(name: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """The tokenizer called `name`, loaded once per process."""
    if name not in SUPPORTED:
        raise CtxRobustError(f"tokenizer {name!r} is not available offline; use one of: {', '.join(SUPPORTED)}")
    return Tokenizer(name)


def package_version() -> str:
    """The bpe-openai version that counted the tokens (recorded in the build notes)."""
    return f"bpe-openai {metadata.version('bpe-openai')}"
