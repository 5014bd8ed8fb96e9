"""Typed fact records: (subject, attribute, scope, value, provenance).

A scope is a set of qualifiers (entity, time, location, condition) that
determine the answer (MisleadQA paper, Section 3.1). Every fact names the
snapshot file it came from, that file's sha256, and the record inside it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SCOPE_KEYS = ("condition", "entity", "location", "time")


class Provenance(BaseModel):
    """Where a fact was read: snapshot (lock name or user file name), its sha256, and the record.

    Every field is always present (None when it does not apply), so provenance
    columns have one type in every row of a release.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    snapshot: str
    sha256: str
    line: int | None = None  # 1-based line in a CSV / JSON Lines file
    index: int | None = None  # 0-based position in a JSON array file
    series_id: str | None = None  # FRED series the file's header names
    date: str | None = None  # FRED observation date, ISO
    upstream_id: str | None = None  # upstream question / record id, as a string
    pid: str | None = None  # upstream document id (AmbigDocs)
    field: str | None = None  # the field holding the value, e.g. "answer", "documents[2].answer"
    value: str  # the value as the source writes it


class Scope(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    condition: str | None = None
    entity: str | None = None
    location: str | None = None
    time: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {key: getattr(self, key) for key in SCOPE_KEYS}

    def differing(self, other: Scope) -> list[str]:
        """The qualifiers whose values differ (compared as written; builders normalise first)."""
        return [key for key in SCOPE_KEYS if getattr(self, key) != getattr(other, key)]


class Fact(BaseModel):
    """One source-supported value of `attribute` for `subject` at `scope`.

    `alternatives` holds any further answers the source gives for the same
    scope (e.g. a SituatedQA answer list); a fact with alternatives that are
    not the same answer has no unique value at that scope.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    subject: str
    attribute: str
    scope: Scope
    value: str
    alternatives: tuple[str, ...] = ()
    provenance: Provenance
