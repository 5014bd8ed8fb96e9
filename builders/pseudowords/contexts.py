"""Context banks of exact token lengths: CHA pseudo-words and TOK random tokens (Section 2, Section 3.3).

Every context is drawn from its own generator, seeded by (seed, kind, length, index),
so adding a length or a kind never changes the contexts already in a bank.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ctxrobust.builders.pseudowords.tokenizer import Tokenizer
from ctxrobust.errors import CtxRobustError

KIND_CODES = {"CHA": 1, "TOK": 2, "WEB": 3, "SQA": 4}
MAX_ROUNDS = 1000  # re-count rounds allowed to land a TOK text on its target
MAX_REDRAWS = 100  # attempts to draw a context distinct from every earlier one


def context_id(kind: str, size: int, index: int) -> str:
    """E.g. CHA-010000-003: kind, target tokens (or SQA turns), index within the length."""
    return f"{kind}-{size:06d}-{index:03d}"


def context_rng(seed: int, kind: str, size: int, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, KIND_CODES[kind], size, index])


def word_costs(words: list[str], tokenizer: Tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Tokens of each word at the start of a context, and after a space."""
    first = np.array([tokenizer.count(w) for w in words], dtype=np.int64)
    rest = np.array([tokenizer.count(" " + w) for w in words], dtype=np.int64)
    return first, rest


def cha_text(words: list[str], first: np.ndarray, rest: np.ndarray, target: int, rng: np.random.Generator) -> str:
    """Section 2: pseudo-words drawn uniformly from the vocabulary, joined by single spaces.

    The pre-tokenizer cuts before every " word", so the token count of the text is the
    sum of its words' counts. Words are appended while the sum is below `target`; a
    drawn word that would pass `target` is skipped, so the sum lands on it exactly.
    """
    chosen: list[int] = []
    total = 0
    while total < target:
        costs = rest if chosen else first
        if target - total < int(costs.min()):
            raise CtxRobustError(
                f"pseudowords CHA: no vocabulary word fits the last {target - total} token(s) of a {target}-token context; enlarge the vocabulary"
            )
        for index in rng.integers(0, len(words), size=max(16, (target - total) // 2)).tolist():
            cost = int((rest if chosen else first)[index])
            if total + cost <= target:
                chosen.append(index)
                total += cost
                if total == target:
                    break
    return " ".join(words[i] for i in chosen)


def tok_text(tokenizer: Tokenizer, pool: np.ndarray, target: int, rng: np.random.Generator) -> str:
    """Section 3.3 TOK: tokens drawn uniformly from the vocabulary's round-trip tokens, decoded, concatenated.

    Neighbouring pieces may merge or split when the text is re-tokenised, so the text is
    re-counted: while under `target`, draw as many more tokens as are missing; while over,
    drop as many pieces from the end as there are extra tokens; stop when it is exact.
    """
    pieces: list[int] = []
    count = 0
    for _ in range(MAX_ROUNDS):
        if count < target:
            pieces.extend(rng.choice(pool, size=target - count).tolist())
        elif count > target:
            del pieces[max(0, len(pieces) - (count - target)) :]
        else:
            return tokenizer.decode(pieces)
        count = tokenizer.count(tokenizer.decode(pieces))
    raise CtxRobustError(f"pseudowords TOK: no text of exactly {target} tokens after {MAX_ROUNDS} rounds; try another seed")


def context_row(kind: str, size: int, index: int, text: str, tokenizer: Tokenizer) -> dict:
    return {
        "id": context_id(kind, size, index),
        "kind": kind,
        "target_tokens": size,
        "n_tokens": tokenizer.count(text),
        "n_chars": len(text),
        "tokenizer": tokenizer.name,
        "text": text,
    }


def bank(
    kind: str,
    lengths: tuple[int, ...],
    per_length: int,
    seed: int,
    make_text: Callable[[np.random.Generator, int], str],
    tokenizer: Tokenizer,
    seen: set[str],
) -> list[dict]:
    """`per_length` contexts of `kind` at each length, each distinct from all texts in `seen` (which it extends)."""
    rows = []
    for length in lengths:
        for index in range(per_length):
            rng = context_rng(seed, kind, length, index)
            for _ in range(MAX_REDRAWS):
                text = make_text(rng, length)
                if text not in seen:
                    break
            else:
                raise CtxRobustError(
                    f"pseudowords {context_id(kind, length, index)}: no context distinct from the others in {MAX_REDRAWS} draws; "
                    "lower contexts_per_length or enlarge the vocabulary / corpus"
                )
            row = context_row(kind, length, index, text, tokenizer)
            if row["n_tokens"] != length:
                raise CtxRobustError(
                    f"pseudowords {row['id']}: text re-tokenises to {row['n_tokens']} tokens, not {length}; this is a bug, please report it"
                )
            seen.add(text)
            rows.append(row)
    return rows
