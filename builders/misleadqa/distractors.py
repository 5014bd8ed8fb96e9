"""Distractor choice (paper Section 3.3 "Answer options", Appendix A.1 "Distractors").

Each item needs two distractors: source-supported values of the same
attribute at other scopes, wrong for the target scope, distinct from the
other options after normalisation, similar to the gold answer in type and
precision, and absent from the question and every context. Preferred values
(the same upstream question, jurisdiction or date) come first and must match
the gold answer's precision; fallback values (other questions asking the same
relation) are used only when too few preferred ones qualify, and must also
match its type. Items with fewer than two valid distractors are deferred (left out).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ctxrobust.builders.misleadqa.answer_types import is_garbled, kind, precision
from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded
from ctxrobust.builders.misleadqa.normalise import entity_clash, mentions


@dataclass(frozen=True)
class Pool:
    preferred: list[Distractor]
    fallback: list[Distractor] | Callable[[], list[Distractor]] = ()  # a callable is only called when needed
    fallback_ranked: bool = False  # True: try fallback values in the given order (closest first), not at random


def item_rng(seed: int, candidate_id: str, purpose: str) -> np.random.Generator:
    digest = hashlib.sha256(f"misleadqa-{purpose}:{seed}:{candidate_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def choose(pool: Pool, gold: str, lure: str, texts: list[str], rng: np.random.Generator, k: int = 2) -> list[Distractor]:
    """k distractors, preferred first: each distinct from gold, lure and each other, of the gold answer's
    precision (and, from the fallback, its type), and mentioned in none of `texts`."""
    chosen: list[Distractor] = []

    def usable(d: Distractor, form: Callable[[str], str]) -> bool:
        if is_garbled(d.text) or form(d.text) != form(gold):
            return False
        if any(entity_clash(d.text, other) is not None for other in [gold, lure, *(c.text for c in chosen)]):
            return False
        return not any(mentions(text, d.text) for text in texts)

    for candidates, ranked, form in ((pool.preferred, False, precision), (pool.fallback, pool.fallback_ranked, kind)):
        if len(chosen) >= k:
            break
        if callable(candidates):
            candidates = candidates()
        order = range(len(candidates)) if ranked else rng.permutation(len(candidates))
        for index in order:
            if usable(candidates[int(index)], form):
                chosen.append(candidates[int(index)])
                if len(chosen) >= k:
                    break
    if len(chosen) < k:
        raise Excluded("too_few_distractors", f"only {len(chosen)} valid distractor(s) of the gold answer's type found, {k} needed")
    return chosen


def with_distractors(candidate: Candidate, pool: Pool, seed: int) -> Candidate:
    """The candidate with two distractors from `pool`, none of them in the question, G, S or F; the
    clusters they come from are linked to the candidate's (dependency groups, Appendix A.4)."""
    f_text, _ = candidate.f_text_and_edits()
    texts = [candidate.question, candidate.g_text, candidate.s_text, f_text]
    distractors = choose(pool, candidate.gold, candidate.lure, texts, item_rng(seed, candidate.id, "distractors"))
    linked = (candidate.linked_clusters | {d.cluster_id for d in distractors}) - {candidate.cluster_id}
    return dataclasses.replace(candidate, distractors=distractors, linked_clusters=linked)
