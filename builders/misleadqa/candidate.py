"""A MisleadQA candidate: one fact pair with its question, contexts and distractors (paper Section 3.3).

Source modules describe candidates cheaply (`Spec`: id, cluster, the keys
selection needs) and build the full `Candidate` only when selection reaches
it; a candidate that breaks a construction rule raises `Excluded`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import permutations
from pathlib import Path
from typing import Any, Callable

from ctxrobust.builders.misleadqa.normalise import same_answer
from ctxrobust.builders.misleadqa.substitution import substitute
from ctxrobust.sources.facts import Provenance, Scope

_TEMPLATES = Path(__file__).with_name("templates.json")


@lru_cache(maxsize=1)
def templates() -> dict:
    """The fixed templates (templates.json); read once, never modified."""
    return json.loads(_TEMPLATES.read_text(encoding="utf-8"))


def safe_id(text: str) -> str:
    """An upstream id as an id part: a leading minus sign becomes 'n', other punctuation '_'."""
    return re.sub(r"[^A-Za-z0-9_.]+", "_", re.sub(r"^-(?=\d)", "n", text))


def cluster_id(source: str, upstream_id: str) -> str:
    """Items derived from one upstream question share a source cluster (paper Section 3.2, Appendix A.4)."""
    return f"{source}-{safe_id(upstream_id)}"


ABSTAIN = templates()["abstain"]


class Excluded(Exception):
    """A candidate left out: `reason` (a short code counted in the build notes) and a one-line detail."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Distractor:
    text: str
    provenance: Provenance
    cluster_id: str  # the source cluster it was drawn from (links dependency groups)


@dataclass
class Candidate:
    id: str
    source: str  # fred | situatedqa | ambigdocs | condambigqa
    scope_dimension: str  # time | location | entity | condition
    cluster_id: str
    question: str
    target_scope: Scope
    alt_scope: Scope
    gold: str
    lure: str
    g_text: str
    s_text: str
    registered: list[tuple[str, str]]  # gold expression -> lure expression
    provenance_g: Provenance
    provenance_s: Provenance
    construction: dict[str, str]  # how G and S were written: template | extract | restatement | restated (and options: restated)
    distractors: list[Distractor] = field(default_factory=list)  # chosen by distractors.with_distractors
    linked_clusters: set[str] = field(default_factory=set)  # clusters sharing source documents or distractor sources
    # a draft: the parts no rule could write ("G S": the sentences; "question": a question that does not give the
    # answer away), held as placeholders until a maintainer's restatement supplies them; never released as it is
    needs: tuple[str, ...] = ()

    @property
    def split(self) -> str:
        """CondAmbigQA items form the separate condition supplement (Section 3.2); all others the main split."""
        return "condition" if self.source == "condambigqa" else "main"

    def f_text_and_edits(self) -> tuple[str, list[dict]]:
        return substitute(self.g_text, self.registered)

    def item(self, gold_letter: str, lure_letter: str, distractor_letters: tuple[str, str]) -> dict:
        """The release row, with options placed at the given letters; E is always the abstention."""
        f_text, edits = self.f_text_and_edits()
        options = {gold_letter: self.gold, lure_letter: self.lure}
        for letter, distractor in zip(distractor_letters, self.distractors):
            options[letter] = distractor.text
        options["E"] = ABSTAIN
        target, alt = self.target_scope.as_dict(), self.alt_scope.as_dict()
        return {
            "id": self.id,
            "split": self.split,
            "source": self.source,
            "scope_dimension": self.scope_dimension,
            "cluster_id": self.cluster_id,
            "dependency_group_id": "",  # filled once the item set is fixed
            "question": self.question,
            "options": {letter: options[letter] for letter in ("A", "B", "C", "D", "E")},
            "gold": gold_letter,
            "lure": lure_letter,
            "target_scope": target,
            "alt_scope": alt,
            "contexts": {
                "G": {"text": self.g_text, "scope": target, "value": self.gold, "true": True, "in_scope": True},
                "S": {"text": self.s_text, "scope": alt, "value": self.lure, "true": True, "in_scope": False},
                "F": {"text": f_text, "scope": target, "value": self.lure, "true": False, "in_scope": True},
            },
            "f_edits": edits,
            "substitutions": [{"old": old, "new": new} for old, new in self.registered],
            "construction": {
                "G": self.construction["G"],
                "S": self.construction["S"],
                "F": "substitution",
                "options": self.construction.get("options", "source"),
            },
            "provenance": {
                "G": self.provenance_g.model_dump(),
                "S": self.provenance_s.model_dump(),
                "distractors": [d.provenance.model_dump() for d in self.distractors],
            },
        }


@dataclass(frozen=True)
class Spec:
    """A candidate before it is built: what selection needs to rank and cap it, and how to build it."""

    id: str
    source: str
    scope_dimension: str
    cluster_id: str
    target_key: str  # equal keys: the same target fact (repeated targets are excluded)
    alt_key: str  # (target_key, alt_key) reversed is the reversed pair
    make: Callable[[Spec], Candidate]  # raises Excluded for a candidate that breaks a construction rule
    type_key: str | None = None  # the question type (SituatedQA: at most `situatedqa_per_type` per type, App. A.1)

    def build(self) -> Candidate:
        return self.make(self)

    def candidate(self, **fields) -> Candidate:
        """The Candidate this spec describes: its id, source, scope dimension and cluster, with the rest of `fields`."""
        return Candidate(id=self.id, source=self.source, scope_dimension=self.scope_dimension, cluster_id=self.cluster_id, **fields)


def pair_specs(
    source: str,
    dimension: str,
    upstream_id: str,
    members: list[Any],
    answer: Callable[[Any], str],
    fact_key: Callable[[Any], str],
    tag: Callable[[Any], str],
    make: Callable[[Spec, Any, Any], Candidate],
    type_key: str | None = None,
) -> list[Spec]:
    """One spec per ordered pair (target, alternative) of one upstream question's contexts whose answers
    differ (a fact pair, Section 3.3): id `<source>-<dimension>-<upstream id>-<target tag>-<alternative tag>`,
    fact keys `<source>:<fact_key(member)>`, built by `make(spec, target, alternative)`."""
    return [
        Spec(
            id=f"{source}-{dimension}-{safe_id(upstream_id)}-{tag(t)}-{tag(a)}",
            source=source,
            scope_dimension=dimension,
            cluster_id=cluster_id(source, upstream_id),
            target_key=f"{source}:{fact_key(t)}",
            alt_key=f"{source}:{fact_key(a)}",
            make=lambda spec, t=t, a=a: make(spec, t, a),
            type_key=type_key,
        )
        for t, a in permutations(members, 2)
        if not same_answer(answer(t), answer(a))
    ]
