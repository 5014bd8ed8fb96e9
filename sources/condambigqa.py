"""CondAmbigQA (Li et al., 2025) -> typed records and facts (condition scope).

Format (JSON Lines, or a JSON array): `{id, question, properties: [{condition,
groundtruth, condition_citations, answer_citations}], ctxs: [{title, text}]}`;
each property is one interpretation of the question (the condition) with its
answer (groundtruth). Citations are kept as given.

CondAmbigQA is not in the pinned mirror: the user supplies the file, and its
sha256 is recorded with every fact read from it.
"""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError
from sources.facts import Fact, Provenance, Scope, json_records


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


class CondAmbigQARecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    snapshot: str
    sha256: str
    line: int | None
    index: int | None
    upstream_id: str
    question: str
    properties: tuple[Property, ...]
    ctxs: tuple[Passage, ...]


def _text(obj: dict, field: str, where: str) -> str:
    value = obj.get(field)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise CtxRobustError(f"{where}: field {field!r} must be a non-empty string")
    return value.strip()


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
    path = Path(path)
    snapshot = snapshot or path.name
    sha256 = sha256 or sha256_file(path)
    records = []
    for line, index, obj in json_records(path, snapshot):
        where = f"{snapshot}:{line}" if line is not None else f"{snapshot} record {index}"
        props_raw = obj.get("properties")
        if not isinstance(props_raw, list):
            raise CtxRobustError(f"{where}: field 'properties' must be a list of {{condition, groundtruth, ...}}; not a CondAmbigQA record")
        properties = []
        for position, prop in enumerate(props_raw):
            prop_where = f"{where}: properties[{position}]"
            if not isinstance(prop, dict):
                raise CtxRobustError(f"{prop_where}: must be an object")
            properties.append(
                Property(
                    position=position,
                    condition=_text(prop, "condition", prop_where),
                    groundtruth=_answers(prop.get("groundtruth"), prop_where),
                    condition_citations=json.dumps(prop.get("condition_citations"), sort_keys=True),
                    answer_citations=json.dumps(prop.get("answer_citations"), sort_keys=True),
                )
            )
        ctxs_raw = obj.get("ctxs", [])
        if not isinstance(ctxs_raw, list):
            raise CtxRobustError(f"{where}: field 'ctxs' must be a list of {{title, text}}")
        ctxs = []
        for position, ctx in enumerate(ctxs_raw):
            if not isinstance(ctx, dict):
                raise CtxRobustError(f"{where}: ctxs[{position}] must be an object")
            ctxs.append(Passage(title=str(ctx.get("title", "")), text=str(ctx.get("text", ""))))
        records.append(
            CondAmbigQARecord(
                snapshot=snapshot,
                sha256=sha256,
                line=line,
                index=index,
                upstream_id=_text(obj, "id", where),
                question=_text(obj, "question", where),
                properties=tuple(properties),
                ctxs=tuple(ctxs),
            )
        )
    return records


def facts(record: CondAmbigQARecord) -> list[Fact]:
    """One fact per property: the answer under that condition."""
    return [
        Fact(
            subject=record.question,
            attribute=record.question,
            scope=Scope(condition=prop.condition),
            value=prop.groundtruth[0],
            alternatives=prop.groundtruth[1:],
            provenance=Provenance(
                snapshot=record.snapshot,
                sha256=record.sha256,
                line=record.line,
                index=record.index,
                upstream_id=record.upstream_id,
                field=f"properties[{prop.position}].groundtruth",
                value=prop.groundtruth[0],
            ),
        )
        for prop in record.properties
    ]
