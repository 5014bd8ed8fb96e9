"""CondAmbigQA (Li et al., 2025) -> typed records and facts (condition scope).

Format (a JSON array, or JSON Lines): `{id, question, properties, ctxs}`.
Each property is one interpretation of the question: `{condition, groundtruth,
citations: [{title, text}]}`, optionally with a `reason`. `groundtruth` is a
string (in the released file a long-form paragraph) or a list of strings; a
citation title reads "N. Title", N being the 1-based position of the passage
in `ctxs`. Files in the older annotation schema (`condition_citations`,
`answer_citations` instead of `citations`) are read too. `ctxs` are the
retrieved passages, `{title, text, score}`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict

from ctxrobust import canonical
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.facts import Fact, Provenance, Scope
from ctxrobust.sources.records import Located, object_list, read_records, text_field

EXPECTED = "the CondAmbigQA JSON or JSON Lines file (records of id, question, properties, ctxs)"  # the file to give, in errors
NUMBERED = re.compile(r"^\s*(\d+)\.\s*(.*)$", re.DOTALL)  # a citation title "N. Title"


class Citation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    number: int | None  # N of "N. Title": the passage ctxs[N - 1]; None when the title carries no number
    title: str  # the title without its number
    text: str

    @property
    def label(self) -> str:
        return self.title if self.number is None else f"{self.number}. {self.title}"


class Property(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    position: int  # index in the record's `properties`
    condition: str
    groundtruth: tuple[str, ...]  # the answer(s) under this condition, as given
    groundtruth_sha256: str  # sha256 of the canonical JSON of `groundtruth` as given (review rows pin it)
    citations: tuple[Citation, ...] = ()
    reason: str | None = None
    condition_citations: str = "null"  # older schema: canonical JSON of the field as given
    answer_citations: str = "null"


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

    def reviewed_provenance(self, prop: Property, answer: str) -> Provenance:
        """A short answer the project's review states for this property (see `facts`)."""
        return self.provenance(self.upstream_id, f"properties[{prop.position}].answer", answer)

    def passage_span(self, number: int, value: str) -> tuple[int, int] | None:
        """Where `value` first stands in passage `number` (1-based, as citation titles count), or None."""
        if not 1 <= number <= len(self.ctxs):
            return None
        start = self.ctxs[number - 1].text.find(value)
        return None if start < 0 else (start, start + len(value))

    def passage_provenance(self, number: int, value: str) -> Provenance:
        """A value the project's review found in passage `number`; the field names its character span."""
        span = self.passage_span(number, value)
        if span is None:
            raise CtxRobustError(f"{self.snapshot}: passage {number} of record {self.upstream_id} does not contain {value!r}")
        return self.provenance(self.upstream_id, f"ctxs[{number - 1}].text[{span[0]}:{span[1]}]", value)


def groundtruth_sha256(value) -> str:
    """sha256 of a groundtruth value's canonical JSON: a review row naming it goes stale if the source changes."""
    import hashlib

    return hashlib.sha256(canonical.dumps(value).encode("utf-8")).hexdigest()


def _answers(value, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        raise CtxRobustError(f"{where}: field 'groundtruth' must be a string or a list of strings")
    answers = tuple(" ".join(str(v).split()) for v in value if str(v).strip())
    if not answers:
        raise CtxRobustError(f"{where}: field 'groundtruth' is empty")
    return answers


def _citations(prop: dict, where: str, n_ctxs: int) -> tuple[Citation, ...]:
    out = []
    for _, cite_where, cite in object_list(prop, "citations", where, "{title, text}", required=False):
        title, text = cite.get("title"), cite.get("text", "")
        if not isinstance(title, str) or not isinstance(text, str):
            raise CtxRobustError(f"{cite_where}: fields 'title' and 'text' must be strings")
        numbered = NUMBERED.match(title)
        number = int(numbered.group(1)) if numbered else None
        if number is not None and n_ctxs and not 1 <= number <= n_ctxs:
            raise CtxRobustError(f"{cite_where}: title {title[:60]!r} points to passage {number}, but the record has {n_ctxs} ctxs")
        out.append(Citation(number=number, title=(numbered.group(2) if numbered else title).strip(), text=text))
    return tuple(out)


def _property(position: int, where: str, prop: dict, n_ctxs: int) -> Property:
    reason = prop.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise CtxRobustError(f"{where}: field 'reason' must be a string")
    return Property(
        position=position,
        condition=text_field(prop, "condition", where),
        groundtruth=_answers(prop.get("groundtruth"), where),
        groundtruth_sha256=groundtruth_sha256(prop.get("groundtruth")),
        citations=_citations(prop, where, n_ctxs),
        reason=reason,
        condition_citations=canonical.dumps(prop.get("condition_citations")),
        answer_citations=canonical.dumps(prop.get("answer_citations")),
    )


def _passages(obj: dict, where: str) -> tuple[Passage, ...]:
    out = []
    for _, ctx_where, ctx in object_list(obj, "ctxs", where, "{title, text}", required=False):
        title, text = ctx.get("title", ""), ctx.get("text", "")
        if not isinstance(title, str) or not isinstance(text, str):
            raise CtxRobustError(f"{ctx_where}: fields 'title' and 'text' must be strings")
        out.append(Passage(title=title, text=text))
    return tuple(out)


def read_file(path: Path, snapshot: str | None = None, sha256: str | None = None) -> list[CondAmbigQARecord]:
    """Every record of a CondAmbigQA file; errors name the file and the record."""
    records = []
    for located, where, obj in read_records(path, snapshot, sha256, EXPECTED):
        ctxs = _passages(obj, where)
        records.append(
            CondAmbigQARecord(
                **located.model_dump(),
                upstream_id=text_field(obj, "id", where),
                question=text_field(obj, "question", where),
                properties=tuple(
                    _property(position, prop_where, prop, len(ctxs))
                    for position, prop_where, prop in object_list(
                        obj, "properties", where, "{condition, groundtruth, citations} (not a CondAmbigQA record?)"
                    )
                ),
                ctxs=ctxs,
            )
        )
    return records


def facts(record: CondAmbigQARecord, reviewed: Callable[[CondAmbigQARecord], list[tuple[str, str]]] | None = None) -> list[Fact]:
    """One fact per property: the answer under that condition as given; then every (field, value) a
    review states for the record (`reviewed`, given by the caller: the MisleadQA builder's review of short
    answers of properties and extra values found in its passages)."""
    out = [
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
    for field, value in reviewed(record) if reviewed is not None else ():
        out.append(
            Fact(
                subject=record.question,
                attribute=record.question,
                scope=Scope(),
                value=value,
                provenance=record.provenance(record.upstream_id, field, value),
            )
        )
    return out
