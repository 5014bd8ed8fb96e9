"""Which pool problems become base problems [§3.1] (Method step 1).

Default: a seeded uniform draw of `n_two_step` usable problems with two steps and,
for 3 to `max_steps` steps, the step mix the paper's variant counts imply (the
paper's base problems need two to seven steps, 60 of them two). Alternatively a list of base
ids chosen by the user, each of which must be usable. `reasons` maps every joined
pool id to why it cannot be used (empty: usable).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.gsm8k import BaseProblem

# variants per step count in the authors' files (3 to 7 steps): their base problems had about this mix [app. A]
PAPER_VARIANTS_BY_STEPS = {3: 8864, 4: 7392, 5: 5160, 6: 1776, 7: 640}


def paper_step_mix(n_more: int, max_steps: int) -> dict[int, int]:
    """`n_more` longer base problems split over 3..max_steps in proportion to the paper's variant counts
    (largest remainders; 40 -> {3: 15, 4: 12, 5: 9, 6: 3, 7: 1}); steps beyond 7 get none."""
    weights = {k: v for k, v in PAPER_VARIANTS_BY_STEPS.items() if k <= max_steps}
    total = sum(weights.values())
    exact = {k: n_more * v / total for k, v in weights.items()}
    mix = {k: int(x) for k, x in exact.items()}
    for k in sorted(exact, key=lambda k: (-(exact[k] - mix[k]), k))[: n_more - sum(mix.values())]:
        mix[k] += 1
    return mix


def closest_mix(wanted: dict[int, int], available: dict[int, int]) -> dict[int, int]:
    """The mix nearest `wanted` that `available` allows: each step count capped at what is usable, the shortfall
    given to the nearest step counts that have problems left (fewer steps first on a tie)."""
    mix = {k: min(n, available.get(k, 0)) for k, n in wanted.items()}
    missing = sum(wanted.values()) - sum(mix.values())
    while missing > 0:
        spare = [k for k in sorted(available) if available[k] > mix.get(k, 0)]
        if not spare:
            break
        short = [k for k in wanted if wanted[k] > mix[k]] or list(wanted)
        k = min(spare, key=lambda k: (min(abs(k - s) for s in short), k))
        mix[k] = mix.get(k, 0) + 1
        missing -= 1
    return mix


def select_default(
    problems: list[BaseProblem], reasons: dict[str, list[tuple[str, str]]], n_two: int, mix: dict[int, int], rng: np.random.Generator
) -> tuple[list[BaseProblem], str | None]:
    """A seeded uniform draw of `n_two` two-step problems and, per step count k, mix[k] usable problems with k steps.
    When the pool lacks some, the closest mix it allows is drawn and a note says so."""
    usable = [p for p in sorted(problems, key=lambda p: p.id) if not reasons[p.id]]
    by_steps: dict[int, list[BaseProblem]] = {}
    for p in usable:
        by_steps.setdefault(p.n_steps, []).append(p)
    max_steps = max(mix) if mix else 2
    available = {k: len(v) for k, v in by_steps.items() if 3 <= k <= max_steps}
    n_more = sum(mix.values())
    two = by_steps.get(2, [])
    if len(two) < n_two or sum(available.values()) < n_more:
        excluded = Counter(kind for p in problems for kind, _ in reasons[p.id])
        raise CtxRobustError(
            f"gsm-ic: only {len(two)} usable pool problems with two steps and {sum(available.values())} with 3 to {max_steps}, "
            f"{n_two} and {n_more} requested (pool problems excluded by reason: "
            f"{', '.join(f'{kind} {n}' for kind, n in sorted(excluded.items()))}); lower the count in the build configuration"
        )
    drawn = closest_mix(mix, available)
    note = None
    if drawn != mix:
        note = f"the usable pool allows no step mix {dict(sorted(mix.items()))} for the longer base problems; drew the closest, {dict(sorted(drawn.items()))}"
    picked = [two[i] for i in sorted(rng.choice(len(two), size=n_two, replace=False))]
    for k in sorted(drawn):
        group = by_steps.get(k, [])
        picked += [group[i] for i in sorted(rng.choice(len(group), size=drawn[k], replace=False))]
    return sorted(picked, key=lambda p: p.id), note


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
            raise CtxRobustError(
                f"gsm-ic: base id {base} is not in the pool (ids run pool-0001 to pool-{len(problems) + len(unjoined):04d})"
            )
        if reasons[base]:
            raise CtxRobustError(f"gsm-ic: base id {base} cannot be used: {reasons[base][0][1]}; choose another base problem")
        chosen.append(by_id[base])
    return sorted(chosen, key=lambda p: p.id)
