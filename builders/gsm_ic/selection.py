"""Which pool problems become base problems [§3.1] (Method step 1).

Default: a seeded uniform draw of `n_two_step` usable problems with two steps and
`n_more_steps` usable problems with three to `max_steps` steps (the paper's base
problems need two to seven steps, 60 of them two). Alternatively a list of base
ids chosen by the user, each of which must be usable. `reasons` maps every joined
pool id to why it cannot be used (empty: usable).
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.gsm8k import BaseProblem


def select_default(
    problems: list[BaseProblem], reasons: dict[str, list[tuple[str, str]]], n_two: int, n_more: int, max_steps: int, rng: np.random.Generator
) -> list[BaseProblem]:
    usable = [p for p in sorted(problems, key=lambda p: p.id) if not reasons[p.id]]
    two = [p for p in usable if p.n_steps == 2]
    more = [p for p in usable if p.n_steps > 2]
    for group, wanted, what in ((two, n_two, "two steps"), (more, n_more, f"3 to {max_steps} steps")):
        if len(group) < wanted:
            excluded = Counter(kind for p in problems for kind, _ in reasons[p.id])
            raise CtxRobustError(
                f"gsm-ic: only {len(group)} usable pool problems with {what}, {wanted} requested (pool problems excluded by reason: "
                f"{', '.join(f'{kind} {n}' for kind, n in sorted(excluded.items()))}); lower the count in the build configuration"
            )
    picked_two = [two[i] for i in sorted(rng.choice(len(two), size=n_two, replace=False))]
    picked_more = [more[i] for i in sorted(rng.choice(len(more), size=n_more, replace=False))]
    return sorted(picked_two + picked_more, key=lambda p: p.id)


def select_listed(
    problems: list[BaseProblem], reasons: dict[str, list[tuple[str, str]]], base_ids: list[str], unjoined: dict[str, str]
) -> list[BaseProblem]:
    by_id = {p.id: p for p in problems}
    if len(set(base_ids)) != len(base_ids):
        raise CtxRobustError("gsm-ic: base_ids lists an id more than once; list each base problem once")
    chosen = []
    for base in base_ids:
        if base in unjoined:
            raise CtxRobustError(f"gsm-ic: base id {base}: {unjoined[base]}; choose another base problem")
        if base not in by_id:
            raise CtxRobustError(f"gsm-ic: base id {base} is not in the pool (ids run pool-0001 to pool-{len(problems) + len(unjoined):04d})")
        if reasons[base]:
            raise CtxRobustError(f"gsm-ic: base id {base} cannot be used: {reasons[base][0][1]}; choose another base problem")
        chosen.append(by_id[base])
    return sorted(chosen, key=lambda p: p.id)
