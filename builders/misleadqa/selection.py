"""Candidate selection (paper Appendix A.1 "Candidate selection").

Candidates are examined in a fixed order, the SHA-256 ranking of their ids
under the build seed (model responses and lure effects play no part). A
candidate is left out, with its reason, when its cluster already holds the
per-cluster maximum, when it repeats a target fact already selected, when it
reverses a selected fact pair, or when it breaks a construction rule.
Examination stops once `n` candidates are accepted; a shortfall is reported.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from ctxrobust.builders.misleadqa.candidate import Candidate, Excluded, Spec


def rank_key(seed: int, candidate_id: str) -> str:
    return hashlib.sha256(f"misleadqa-select:{seed}:{candidate_id}".encode()).hexdigest()


@dataclass
class Selected:
    requested: int
    accepted: list[Candidate] = field(default_factory=list)
    exclusions: list[dict] = field(default_factory=list)
    available: int = 0  # candidates enumerated
    examined: int = 0


@dataclass
class SelectionState:
    """What earlier selections in the same source already used (targets are not repeated across scopes)."""

    targets: set[str] = field(default_factory=set)
    pairs: set[tuple[str, str]] = field(default_factory=set)


def exclusion_row(spec: Spec, reason: str, detail: str) -> dict:
    return {
        "id": spec.id,
        "source": spec.source,
        "scope_dimension": spec.scope_dimension,
        "cluster_id": spec.cluster_id,
        "reason": reason,
        "detail": detail,
    }


def select(
    specs: list[Spec],
    n: int,
    per_cluster: int,
    seed: int,
    state: SelectionState,
    screen: Callable[[Candidate], None],
) -> Selected:
    """Accept up to n candidates in rank order under the caps; `screen` raises Excluded for a bad candidate."""
    out = Selected(requested=n, available=len(specs))
    per = Counter()
    for spec in sorted(specs, key=lambda s: (rank_key(seed, s.id), s.id)):
        if len(out.accepted) >= n:
            break
        out.examined += 1
        if per[spec.cluster_id] >= per_cluster:
            out.exclusions.append(exclusion_row(spec, "cluster_cap", f"cluster {spec.cluster_id} already has {per_cluster} items"))
            continue
        if spec.target_key in state.targets:
            out.exclusions.append(exclusion_row(spec, "repeated_target", f"target fact {spec.target_key} is already used"))
            continue
        if (spec.alt_key, spec.target_key) in state.pairs:
            out.exclusions.append(exclusion_row(spec, "reversed_pair", f"reverses the selected pair {spec.alt_key} / {spec.target_key}"))
            continue
        try:
            candidate = spec.build()
            screen(candidate)
        except Excluded as excluded:
            out.exclusions.append(exclusion_row(spec, excluded.reason, excluded.detail))
            continue
        out.accepted.append(candidate)
        per[spec.cluster_id] += 1
        state.targets.add(spec.target_key)
        state.pairs.add((spec.target_key, spec.alt_key))
    return out
