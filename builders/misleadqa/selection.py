"""Candidate selection (paper Appendix A.1 "Candidate selection").

Candidates are examined in a fixed order, the SHA-256 ranking of their ids
under the build seed (model responses and lure effects play no part). A
candidate is left out, with its reason, when its cluster already holds the
per-cluster maximum or its question type the per-type maximum (SituatedQA), when it repeats a target fact already selected, when it
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


def exclusion_row(spec: Spec | Candidate, reason: str, detail: str) -> dict:
    """An exclusions.jsonl row for a candidate (or the spec it would be built from) left out with its reason."""
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
    screen: Callable[[Candidate], Candidate | None],
    per_type: int | None = None,
) -> Selected:
    """Accept up to n candidates in rank order under the caps; `screen` returns the candidate as it will be
    released (or None: as built) and raises Excluded for a bad candidate. Drafts (candidates a rule could not
    finish) are examined after every other, so that their restatements never displace another candidate."""
    out = Selected(requested=n, available=len(specs))
    per, types = Counter(), Counter()
    drafts: list[tuple[Spec, Candidate]] = []  # examined after every finished candidate, so they never displace one
    for spec in sorted(specs, key=lambda s: (rank_key(seed, s.id), s.id)):
        if len(out.accepted) >= n:
            break
        out.examined += 1
        capped = _capped(spec, per_cluster, per_type, per, types, state)
        if capped is not None:
            out.exclusions.append(exclusion_row(spec, *capped))
            continue
        try:
            candidate = spec.build()
            draft = bool(getattr(candidate, "needs", ()))  # as the rules wrote it, before any restatement
            candidate = screen(candidate) or candidate  # the candidate as released (a restatement applied)
        except Excluded as excluded:
            out.exclusions.append(exclusion_row(spec, excluded.reason, excluded.detail))
            continue
        if draft:
            drafts.append((spec, candidate))
            continue
        _accept(out, spec, candidate, per, types, state)
    for spec, candidate in drafts:  # drafts (App. A.1 restatements to be written) fill what is left under the caps
        capped = ("group_full", f"the group already has {n} candidates") if len(out.accepted) >= n else None
        capped = capped or _capped(spec, per_cluster, per_type, per, types, state)
        if capped is not None:
            out.exclusions.append(exclusion_row(spec, *capped))
        else:
            _accept(out, spec, candidate, per, types, state)
    return out


def _capped(
    spec: Spec, per_cluster: int, per_type: int | None, per: Counter, types: Counter, state: SelectionState
) -> tuple[str, str] | None:
    """(reason, detail) when a cap or an earlier selection leaves the spec out (App. A.1), else None."""
    if per[spec.cluster_id] >= per_cluster:
        return "cluster_cap", f"cluster {spec.cluster_id} already has {per_cluster} items"
    if per_type is not None and spec.type_key is not None and types[spec.type_key] >= per_type:
        return "question_type_cap", f"question type {spec.type_key!r} already has {per_type} items"
    if spec.target_key in state.targets:
        return "repeated_target", f"target fact {spec.target_key} is already used"
    if (spec.alt_key, spec.target_key) in state.pairs:
        return "reversed_pair", f"reverses the selected pair {spec.alt_key} / {spec.target_key}"
    return None


def _accept(out: Selected, spec: Spec, candidate: Candidate, per: Counter, types: Counter, state: SelectionState) -> None:
    out.accepted.append(candidate)
    per[spec.cluster_id] += 1
    types[spec.type_key] += 1
    state.targets.add(spec.target_key)
    state.pairs.add((spec.target_key, spec.alt_key))
