"""The pseudo-word vocabulary: random a-z strings that are not English words (Section 2, Appendix B)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import wordfreq

from ctxrobust.errors import CtxRobustError

ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
BATCH = 4096  # candidates drawn per step; fixed, so the draw sequence depends on the seed only
MAX_DRAWS_PER_WORD = 50  # give up (with an error) after this many candidates per requested word


def zipf(word: str, language: str = "en", wordlist: str = "best") -> float:
    """English Zipf frequency of `word` as wordfreq reports it (2 decimals; 0.0 for unseen strings)."""
    return wordfreq.zipf_frequency(word, language, wordlist) + 0.0  # + 0.0 turns a -0.0 into 0.0


def candidates(rng: np.random.Generator, n: int, min_length: int, max_length: int) -> list[str]:
    """Section 2: n random strings, length uniform on [min_length, max_length], each letter uniform on a-z."""
    lengths = rng.integers(min_length, max_length + 1, size=n)
    letters = ALPHABET[rng.integers(0, len(ALPHABET), size=(n, max_length))].tobytes()
    return [letters[i * max_length : i * max_length + k].decode("ascii") for i, k in enumerate(lengths.tolist())]


@dataclass
class Vocabulary:
    rows: list[dict]  # {"id", "word", "zipf"}, sorted by word
    drawn: int  # candidates examined
    rejected: int  # candidates at or above the Zipf threshold
    duplicates: int  # candidates already in the vocabulary
    rejected_offensive: int = 0  # candidates below the threshold that hold an offensive string

    @property
    def words(self) -> list[str]:
        return [row["word"] for row in self.rows]


def build_vocabulary(
    rng: np.random.Generator,
    size: int,
    min_length: int,
    max_length: int,
    threshold: float,
    language: str = "en",
    wordlist: str = "best",
    offensive: Optional[Callable[[str], Optional[str]]] = None,
) -> Vocabulary:
    """Appendix B: keep the first `size` distinct candidates whose Zipf frequency is below `threshold`
    and, when `offensive` is given, for which it finds no offensive string (offensive.py)."""
    kept: dict[str, float] = {}
    drawn = rejected = duplicates = rejected_offensive = 0
    while len(kept) < size:
        if drawn >= MAX_DRAWS_PER_WORD * size:
            raise CtxRobustError(
                f"pseudowords vocabulary: only {len(kept)} of {size} words found in {drawn} candidates "
                f"(lengths {min_length}-{max_length}, Zipf < {threshold}); lower vocabulary_size or widen the word lengths"
            )
        for word in candidates(rng, BATCH, min_length, max_length):
            drawn += 1
            if word in kept:
                duplicates += 1
                continue
            value = zipf(word, language, wordlist)
            if value >= threshold:
                rejected += 1
                continue
            if offensive is not None and offensive(word) is not None:
                rejected_offensive += 1
                continue
            kept[word] = value
            if len(kept) == size:
                break
    rows = [{"id": word, "word": word, "zipf": value} for word, value in sorted(kept.items())]
    return Vocabulary(rows=rows, drawn=drawn, rejected=rejected, duplicates=duplicates, rejected_offensive=rejected_offensive)
