"""AmbigDocs (Lee et al., 2024) -> typed records and facts (entity scope).

Format (JSON Lines, or a JSON array as the upstream dev/train files):
`{question, ambiguous_entity, qid, documents: [{title, text, pid, answer}]}`;
each document is a Wikipedia excerpt about one of several distinct entities
sharing the name `ambiguous_entity`; `title` is the disambiguated entity and
`answer` the answer to `question` for that entity.

AmbigDocs is not in the pinned mirror: the user supplies the file.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ctxrobust.sources.facts import Fact, Provenance, Scope
from ctxrobust.sources.records import Located, object_list, read_records, text_field

EXPECTED = "the AmbigDocs JSON or JSON Lines file (records of question, ambiguous_entity, qid, documents)"  # the file to give, in errors


class Document(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    position: int  # index in the record's `documents`
    title: str
    text: str
    pid: str
    answer: str


class AmbigDocsRecord(Located):
    qid: str
    question: str
    ambiguous_entity: str
    documents: tuple[Document, ...]

    def document_provenance(self, doc: Document) -> Provenance:
        return self.provenance(self.qid, f"documents[{doc.position}].answer", doc.answer, pid=doc.pid)


def read_file(path: Path, snapshot: str | None = None, sha256: str | None = None) -> list[AmbigDocsRecord]:
    """Every record of a user-supplied AmbigDocs file; errors name the file and line."""
    return [
        AmbigDocsRecord(
            **located.model_dump(),
            qid=text_field(obj, "qid", where),
            question=text_field(obj, "question", where),
            ambiguous_entity=text_field(obj, "ambiguous_entity", where),
            documents=tuple(
                Document(
                    position=position,
                    title=text_field(doc, "title", doc_where),
                    text=text_field(doc, "text", doc_where),
                    pid=text_field(doc, "pid", doc_where),
                    answer=text_field(doc, "answer", doc_where),
                )
                for position, doc_where, doc in object_list(
                    obj, "documents", where, "{title, text, pid, answer} (not an AmbigDocs record?)"
                )
            ),
        )
        for located, where, obj in read_records(path, snapshot, sha256, EXPECTED)
    ]


def facts(record: AmbigDocsRecord) -> list[Fact]:
    """One fact per document: the answer for the disambiguated entity (its title)."""
    return [
        Fact(
            subject=record.ambiguous_entity,
            attribute=record.question,
            scope=Scope(entity=doc.title),
            value=doc.answer,
            provenance=record.document_provenance(doc),
        )
        for doc in record.documents
    ]
