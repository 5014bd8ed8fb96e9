"""Distractor choice (paper Appendix A.1 "Distractors").

Each item needs two distractors: source-supported values of the same
attribute at other scopes, wrong for the target scope, distinct from the
other options after normalisation, and absent from the question and every
context. Preferred values come first (e.g. the same upstream question);
fallback values are used only when too few preferred ones qualify. Items with
fewer than two valid distractors are deferred (left out).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from builders.misleadqa.candidate import Distractor, Excluded
from validators.normalise import mentions, same_answer


@dataclass(frozen=True)
class Pool:
    preferred: list[Distractor]
    fallback: list[Distractor] | Callable[[], list[Distractor]]  # a callable is only called when needed
    fallback_ranked: bool = False  # True: try fallback values in the given order (closest first), not at random


def item_rng(seed: int, candidate_id: str, purpose: str) -> np.random.Generator:
    digest = hashlib.sha256(f"misleadqa-{purpose}:{seed}:{candidate_id}".encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def choose(pool: Pool, wrong_for_target: list[str], texts: list[str], rng: np.random.Generator, k: int = 2) -> list[Distractor]:
    """k distractors, preferred first, each distinct from the answers in `wrong_for_target`
    (gold, lure and anything true at the target scope) and from each other, and mentioned in none of `texts`."""
    chosen: list[Distractor] = []

    def usable(d: Distractor) -> bool:
        if any(same_answer(d.text, other) for other in wrong_for_target):
            return False
        if any(same_answer(d.text, c.text) for c in chosen):
            return False
        return not any(mentions(text, d.text) for text in texts)

    for candidates, ranked in ((pool.preferred, False), (pool.fallback, pool.fallback_ranked)):
        if len(chosen) >= k:
            break
        if callable(candidates):
            candidates = candidates()
        if not candidates:
            continue
        order = range(len(candidates)) if ranked else rng.permutation(len(candidates))
        for index in order:
            candidate = candidates[int(index)]
            if usable(candidate):
                chosen.append(candidate)
                if len(chosen) >= k:
                    break
    if len(chosen) < k:
        raise Excluded("too_few_distractors", f"only {len(chosen)} valid distractor(s) found, {k} needed")
    return chosen
