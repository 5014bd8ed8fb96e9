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


# --- raw_data: the annotation records (situatedqa_raw/) -------------------------------------------


class TimelineValue(Located):
    """One value of a question's answer timeline (raw_data temp files): `answers`, true from `start`
    (year, month or None, day or None) until the next value's start; `field` locates it in the record
    (`timelines[i].cur_answers` or `timelines[i].prev_answers`)."""

    upstream_id: str
    question: str
    field: str
    answers: tuple[str, ...]
    start: tuple[int, int | None, int | None] | None

    def answer_provenance(self, answer: str) -> Provenance:
        return self.provenance(self.upstream_id, self.field, answer)


def _start(value, where: str) -> tuple[int, int | None, int | None] | None:
    """A timeline start `{year, month, date}`; None when absent or without a year."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise CtxRobustError(f"{where}: a timeline start must be an object of year, month, date")
    parts = []
    for key, low, high in (("year", 1, 9999), ("month", 1, 12), ("date", 1, 31)):
        part = value.get(key)
        if isinstance(part, str) and part.strip().isdigit():
            part = int(part)
        parts.append(part if isinstance(part, int) and not isinstance(part, bool) and low <= part <= high else None)
    if parts[0] is None:
        return None
    return (parts[0], parts[1], parts[2] if parts[1] is not None else None)


def read_timelines(path: Path, snapshot: str, sha256: str) -> list[TimelineValue]:
    """Every dated value of every answer timeline of a raw_data temp file (geo files have none)."""
    if kind_of(snapshot) != "temp":
        return []
    out = []
    for located, where, row in read_records(path, snapshot, sha256):
        if "id" not in row or "question" not in row:
            raise CtxRobustError(f"{where}: missing field(s) id, question; not a SituatedQA raw_data temp record")
        timelines = row.get("timelines") or []
        if not isinstance(timelines, list):
            raise CtxRobustError(f"{where}: field 'timelines' must be a list")
        for i, timeline in enumerate(timelines):
            if not isinstance(timeline, dict):
                raise CtxRobustError(f"{where}: timelines[{i}] must be an object")
            for which in ("cur", "prev"):
                answers = timeline.get(f"{which}_answers")
                if answers is None:
                    continue
                field = f"timelines[{i}].{which}_answers"
                values = _strings(answers, where, field)
                if values:
                    out.append(
                        TimelineValue(
                            **located.model_dump(),
                            upstream_id=str(row["id"]),
                            question=str(row["question"]).strip(),
                            field=field,
                            answers=values,
                            start=_start(timeline.get(f"{which}_start"), f"{where}: {field}"),
                        )
                    )
    return out


def raw_field(row: dict, field: str):
    """The value at a raw_data locator such as `timelines[0].prev_answers` (None when absent)."""
    value = row
    for part in field.split("."):
        name, _, index = part.partition("[")
        value = value.get(name) if isinstance(value, dict) else None
        if index:
            position = int(index.rstrip("]"))
            value = value[position] if isinstance(value, list) and position < len(value) else None
    return value
