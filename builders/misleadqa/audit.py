"""The human-audit sample (paper Appendix B.2): a stratified sample of released main items,
fixed before annotation by SHA-256 ranking within each stratum under a recorded seed."""

from __future__ import annotations

import hashlib
from collections import defaultdict

AUDIT_SEED = 20261007  # Appendix B.2
AUDIT_SIZES = {  # Appendix B.2, Table 10
    "fred/time": 15,
    "fred/location": 15,
    "situatedqa/time": 35,
    "situatedqa/location": 35,
    "ambigdocs/entity": 50,
    "ramdocs/entity": 50,  # the default entity group; ambigdocs/entity when AmbigDocs records are supplied
}


def rank_hash(seed: int, item_id: str) -> str:
    return hashlib.sha256(f"misleadqa-audit:{seed}:{item_id}".encode()).hexdigest()


def audit_sample(main_items: list[dict], seed: int = AUDIT_SEED, sizes: dict[str, int] | None = None) -> list[dict]:
    """The k lowest-ranked items of each stratum (source/scope); a stratum smaller than k is taken whole."""
    sizes = AUDIT_SIZES if sizes is None else sizes
    strata: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for item in main_items:
        stratum = f"{item['source']}/{item['scope_dimension']}"
        if stratum in sizes:
            strata[stratum].append((rank_hash(seed, item["id"]), item["id"]))
    rows = []
    for stratum in sorted(strata):
        for rank, (digest, item_id) in enumerate(sorted(strata[stratum])[: sizes[stratum]], start=1):
            rows.append({"id": item_id, "stratum": stratum, "rank": rank, "rank_sha256": digest, "seed": seed})
    return sorted(rows, key=lambda row: row["id"])
