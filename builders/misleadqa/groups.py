"""Dependency groups (paper Appendix A.4): source clusters merged when their items share source
documents or distractor sources; all FRED items form one group.

Clusters are linked by the candidates themselves (`Candidate.linked_clusters`: the clusters their
distractors come from, AmbigDocs questions sharing a document, SituatedQA questions that reword one
another); a group is a connected component of those links, named after its smallest cluster id.
"""

from __future__ import annotations

from typing import Iterable

from ctxrobust.builders.misleadqa.candidate import Candidate

FRED_GROUP = "fred"


def components(links: Iterable[tuple[str, str]], nodes: Iterable[str] = ()) -> dict[str, str]:
    """node -> the smallest node of its connected component (union-find; independent of link order)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for node in nodes:
        root(node)
    for a, b in links:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {node: root(node) for node in sorted(parent)}


def dependency_groups(candidates: list[Candidate]) -> dict[str, str]:
    """cluster_id -> dependency_group_id for every released candidate's cluster."""
    links = [(c.cluster_id, FRED_GROUP) for c in candidates if c.source == "fred"]
    links += [(c.cluster_id, linked) for c in candidates for linked in c.linked_clusters]
    roots = components(links, (c.cluster_id for c in candidates))
    return {c.cluster_id: f"group-{roots[c.cluster_id]}" for c in candidates}
