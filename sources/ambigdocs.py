"""AmbigDocs (Lee et al., 2024) -> typed records and facts (entity scope).

Format (JSON Lines, or a JSON array as the upstream dev/train files):
`{question, ambiguous_entity, qid, documents: [{title, text, pid, answer}]}`;
each document is a Wikipedia excerpt about one of several distinct entities
sharing the name `ambiguous_entity`; `title` is the disambiguated entity and
`answer` the answer to `question` for that entity.

AmbigDocs is not in the pinned mirror: the user supplies the file, and its
sha256 is recorded with every fact read from it.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError
from sources.facts import Fact, Provenance, Scope, json_records


class Document(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    position: int  # index in the record's `documents`
    title: str
    text: str
    pid: str
    answer: str


class AmbigDocsRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    snapshot: str
    sha256: str
    line: int | None
    index: int | None
    qid: str
    question: str
    ambiguous_entity: str
    documents: tuple[Document, ...]

    def where(self) -> str:
        return f"{self.snapshot}:{self.line}" if self.line is not None else f"{self.snapshot} record {self.index}"


def _text(obj: dict, field: str, where: str) -> str:
    value = obj.get(field)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise CtxRobustError(f"{where}: field {field!r} must be a non-empty string")
    return value.strip()


def read_file(path: Path, snapshot: str | None = None, sha256: str | None = None) -> list[AmbigDocsRecord]:
    """Every record of a user-supplied AmbigDocs file; errors name the file and line."""
    path = Path(path)
    snapshot = snapshot or path.name
    sha256 = sha256 or sha256_file(path)
    records = []
    for line, index, obj in json_records(path, snapshot):
        where = f"{snapshot}:{line}" if line is not None else f"{snapshot} record {index}"
        docs_raw = obj.get("documents")
        if not isinstance(docs_raw, list):
            raise CtxRobustError(f"{where}: field 'documents' must be a list of {{title, text, pid, answer}}; not an AmbigDocs record")
        documents = []
        for position, doc in enumerate(docs_raw):
            doc_where = f"{where}: documents[{position}]"
            if not isinstance(doc, dict):
                raise CtxRobustError(f"{doc_where}: must be an object")
            documents.append(
                Document(
                    position=position,
                    title=_text(doc, "title", doc_where),
                    text=_text(doc, "text", doc_where),
                    pid=_text(doc, "pid", doc_where),
                    answer=_text(doc, "answer", doc_where),
                )
            )
        records.append(
            AmbigDocsRecord(
                snapshot=snapshot,
                sha256=sha256,
                line=line,
                index=index,
                qid=_text(obj, "qid", where),
                question=_text(obj, "question", where),
                ambiguous_entity=_text(obj, "ambiguous_entity", where),
                documents=tuple(documents),
            )
        )
    return records


def facts(record: AmbigDocsRecord) -> list[Fact]:
    """One fact per document: the answer for the disambiguated entity (its title)."""
    return [
        Fact(
            subject=record.ambiguous_entity,
            attribute=record.question,
            scope=Scope(entity=doc.title),
            value=doc.answer,
            provenance=Provenance(
                snapshot=record.snapshot,
                sha256=record.sha256,
                line=record.line,
                index=record.index,
                upstream_id=record.qid,
                pid=doc.pid,
                field=f"documents[{doc.position}].answer",
                value=doc.answer,
            ),
        )
        for doc in record.documents
    ]
