"""CondAmbigQA (Li et al., 2025) -> typed records and facts (condition scope).

Format (JSON Lines, or a JSON array): `{id, question, properties: [{condition,
groundtruth, condition_citations, answer_citations}], ctxs: [{title, text}]}`;
each property is one interpretation of the question (the condition) with its
answer (groundtruth). Citations are kept as given.

CondAmbigQA is not in the pinned mirror: the user supplies the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.facts import Fact, Provenance, Scope
from ctxrobust.sources.records import Located, object_list, read_records, text_field

EXPECTED = "the CondAmbigQA JSON or JSON Lines file (records of id, question, properties, ctxs)"  # the file to give, in errors


class Property(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    position: int  # index in the record's `properties`
    condition: str
    groundtruth: tuple[str, ...]  # the answer(s) under this condition
    condition_citations: str  # canonical JSON of the field as given
    answer_citations: str


class Passage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    title: str
    text: str


class CondAmbigQARecord(Located):
    upstream_id: str
    question: str
    properties: tuple[Property, ...]
    ctxs: tuple[Passage, ...]

    def answer_provenance(self, prop: Property, answer: str) -> Provenance:
        return self.provenance(self.upstream_id, f"properties[{prop.position}].groundtruth", answer)


def _answers(value, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, (str, int, float)) for v in value):
        raise CtxRobustError(f"{where}: field 'groundtruth' must be a string or a list of strings")
    answers = tuple(str(v).strip() for v in value if str(v).strip())
    if not answers:
        raise CtxRobustError(f"{where}: field 'groundtruth' is empty")
    return answers


def read_file(path: Path, snapshot: str | None = None, sha256: str | None = None) -> list[CondAmbigQARecord]:
    """Every record of a user-supplied CondAmbigQA file; errors name the file and line."""
    return [
        CondAmbigQARecord(
            **located.model_dump(),
            upstream_id=text_field(obj, "id", where),
            question=text_field(obj, "question", where),
            properties=tuple(
                Property(
                    position=position,
                    condition=text_field(prop, "condition", prop_where),
                    groundtruth=_answers(prop.get("groundtruth"), prop_where),
                    condition_citations=json.dumps(prop.get("condition_citations"), sort_keys=True),
                    answer_citations=json.dumps(prop.get("answer_citations"), sort_keys=True),
                )
                for position, prop_where, prop in object_list(
                    obj, "properties", where, "{condition, groundtruth, ...} (not a CondAmbigQA record?)"
                )
            ),
            ctxs=tuple(
                Passage(title=str(ctx.get("title", "")), text=str(ctx.get("text", "")))
                for _, _, ctx in object_list(obj, "ctxs", where, "{title, text}", required=False)
            ),
        )
        for located, where, obj in read_records(path, snapshot, sha256, EXPECTED)
    ]


def facts(record: CondAmbigQARecord) -> list[Fact]:
    """One fact per property: the answer under that condition."""
    return [
        Fact(
            subject=record.question,
            attribute=record.question,
            scope=Scope(condition=prop.condition),
            value=prop.groundtruth[0],
            alternatives=prop.groundtruth[1:],
            provenance=record.answer_provenance(prop, prop.groundtruth[0]),
        )
        for prop in record.properties
    ]
