"""The diagnostic sample of the scope and option-order analyses (paper §6.1, App. D.4): 40 main items
drawn without replacement from each source-scope group, seed 2027, without model responses. The draw is
a SHA-256 ranking of the item ids within each group under the seed (as the audit sample, App. B.2), so
the same release gives the same sample."""

from __future__ import annotations

import hashlib
from collections import defaultdict

from ctxrobust.evaluation.misleadqa.responses import ReleaseItem

SEED = 2027  # App. D.4
PER_GROUP = 40  # App. D.4: 40 from each of the five source-scope groups


def rank_hash(seed: int, item_id: str) -> str:
    return hashlib.sha256(f"misleadqa-diagnostic:{seed}:{item_id}".encode()).hexdigest()


def diagnostic_ids(main_items: list[ReleaseItem], seed: int = SEED, per_group: int = PER_GROUP) -> set[str]:
    """The ids of the `per_group` lowest-ranked items of each source-scope group (a smaller group whole)."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for item in main_items:
        groups[f"{item.source}/{item.scope_dimension}"].append((rank_hash(seed, item.id), item.id))
    return {item_id for ranked in groups.values() for _, item_id in sorted(ranked)[:per_group]}
