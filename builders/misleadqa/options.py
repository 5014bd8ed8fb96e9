"""Answer options and their positions (paper Section 3.3 "Answer options", Appendix A.2, B.1).

A-D hold the gold answer, the lure and two distractors; E is always
"Insufficient information". Positions set at construction are provisional;
once the item set is fixed, gold and lure positions are balanced within each
source-scope group: gold counts over A-D, lure counts over A-D and the 12
ordered (gold, lure) pair counts each differ by at most one (Appendix B.1,
"Final option assignment").
"""

from __future__ import annotations

import hashlib

import numpy as np

LETTERS = ("A", "B", "C", "D")

# The 12 ordered (gold, lure) pairs as three blocks of four, block k pairing letter i with
# letter i+k (mod 4): every prefix of the sequence uses each letter as gold at most once more
# than any other, and likewise as lure, so n items taken in order are balanced for any n.
PAIR_SEQUENCE = tuple((LETTERS[i], LETTERS[(i + shift) % 4]) for shift in (1, 2, 3) for i in range(4))


def _rng(*parts: object) -> np.random.Generator:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def provisional_letters(seed: int, item_id: str) -> tuple[str, str, tuple[str, str]]:
    """Construction-time positions (gold, lure, distractors): a seeded permutation of A-D."""
    order = [LETTERS[i] for i in _rng("misleadqa-provisional", seed, item_id).permutation(4)]
    return order[0], order[1], (order[2], order[3])


def balanced_letters(item_ids: list[str], seed: int, group: str) -> dict[str, tuple[str, str, tuple[str, str]]]:
    """Final positions for one group: items in seeded order take PAIR_SEQUENCE cyclically;
    the two distractors fill the other letters in seeded order."""
    ordered = sorted(item_ids)
    permutation = _rng("misleadqa-balance", seed, group).permutation(len(ordered))
    out = {}
    for position, index in enumerate(permutation):
        item_id = ordered[int(index)]
        gold, lure = PAIR_SEQUENCE[position % len(PAIR_SEQUENCE)]
        rest = [letter for letter in LETTERS if letter not in (gold, lure)]
        if _rng("misleadqa-distractors", seed, item_id).integers(2):
            rest.reverse()
        out[item_id] = (gold, lure, (rest[0], rest[1]))
    return out
