"""SituatedQA `qa_data` files (temp.*.jsonl, geo.*.jsonl) -> typed records and facts.

temp rows: question, id, edited_question, date, date_type, answer, any_answer.
geo rows:  question, id, edited_question, location, answer, any_answer.
All rows sharing `id` are contexts of one upstream question.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Literal

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.facts import Fact, Provenance, Scope
from ctxrobust.sources.records import Located, read_records

Kind = Literal["temp", "geo"]


class SituatedQARecord(Located):
    """One context of one upstream question: the answer(s) at one time or location."""

    kind: Kind
    upstream_id: str
    question: str
    edited_question: str
    scope_value: str  # the date (temp) or location (geo)
    date_type: str | None
    answers: tuple[str, ...]
    any_answer: tuple[str, ...]

    def answer_provenance(self, answer: str) -> Provenance:
        """Where `answer` (one of the record's answers) was read."""
        return self.provenance(self.upstream_id, "answer", answer)

    @property
    def dimension(self) -> str:
        return "time" if self.kind == "temp" else "location"


def kind_of(snapshot: str) -> Kind:
    name = PurePosixPath(snapshot).name
    if name.startswith("temp."):
        return "temp"
    if name.startswith("geo."):
        return "geo"
    raise CtxRobustError(f"{snapshot}: not a SituatedQA qa_data file (expected temp.*.jsonl or geo.*.jsonl)")


def _strings(value, where: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CtxRobustError(f"{where}: field {field!r} must be a list of strings")
    return tuple(v.strip() for v in value if v.strip())


def read_file(path: Path, snapshot: str, sha256: str) -> list[SituatedQARecord]:
    kind = kind_of(snapshot)
    scope_field = "date" if kind == "temp" else "location"
    records = []
    for located, where, row in read_records(path, snapshot, sha256):
        missing = [f for f in ("question", "id", "edited_question", scope_field, "answer", "any_answer") if f not in row]
        if missing:
            raise CtxRobustError(f"{where}: missing field(s) {', '.join(missing)}; not a SituatedQA {kind} row")
        if not isinstance(row["id"], (int, str)) or isinstance(row["id"], bool):
            raise CtxRobustError(f"{where}: field 'id' must be an integer or string")
        records.append(
            SituatedQARecord(
                **located.model_dump(),
                kind=kind,
                upstream_id=str(row["id"]),
                question=str(row["question"]).strip(),
                edited_question=str(row["edited_question"]).strip(),
                scope_value=str(row[scope_field]).strip(),
                date_type=row.get("date_type") if kind == "temp" else None,
                answers=_strings(row["answer"], where, "answer"),
                any_answer=_strings(row["any_answer"], where, "any_answer"),
            )
        )
    return records


USER_PREFIX = "situatedqa_dir/"  # how records read from a user folder name their file


def folder_files(folder: Path) -> list[tuple[str, Path, str]]:
    """(name, path, sha256) of every SituatedQA qa_data file (temp.*.jsonl, geo.*.jsonl, the upstream
    file names) in a user-supplied folder, in name order; the names are `situatedqa_dir/<file>`."""
    from ctxrobust.canonical import sha256_file

    if not folder.is_dir():
        raise CtxRobustError(
            f"situatedqa_dir={folder}: not a folder; give the folder holding SituatedQA's qa_data files (temp.dev.jsonl, geo.train.jsonl, ...)"
        )
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(".jsonl") and p.name.startswith(("temp.", "geo.")))
    if not files:
        raise CtxRobustError(f"situatedqa_dir={folder}: holds no temp.*.jsonl or geo.*.jsonl file (SituatedQA's qa_data file names)")
    return [(USER_PREFIX + p.name, p, sha256_file(p)) for p in files]


def fact(record: SituatedQARecord) -> Fact | None:
    """The record's answer at its scope; None when the record gives no answer."""
    if not record.answers:
        return None
    scope = Scope(time=record.scope_value) if record.kind == "temp" else Scope(location=record.scope_value)
    return Fact(
        subject=record.question,
        attribute=record.question,
        scope=scope,
        value=record.answers[0],
        alternatives=record.answers[1:],
        provenance=record.answer_provenance(record.answers[0]),
    )
