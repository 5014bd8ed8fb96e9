"""JSON record files (SituatedQA's qa_data; AmbigDocs and CondAmbigQA files the user supplies):
records with their locators, and field checks.

A file is JSON Lines (one object a line) or a single JSON array of objects
(as the upstream AmbigDocs dev / train files are). A JSON Lines record is
located by its 1-based line, an array record by its 0-based index: the
locator a Provenance names. A user-supplied file is named by its file name
and its sha256 is recorded with every fact read from it. Every error is one
line naming the file and the record.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ctxrobust import jsontext
from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.facts import Provenance


class Located(BaseModel):
    """A record of a snapshot or user file: the file (lock name or file name), its sha256, and the record's locator."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    snapshot: str
    sha256: str
    line: int | None  # 1-based, JSON Lines
    index: int | None  # 0-based, JSON array

    def provenance(self, upstream_id: str, field: str, value: str, pid: str | None = None) -> Provenance:
        return Provenance(
            snapshot=self.snapshot,
            sha256=self.sha256,
            line=self.line,
            index=self.index,
            upstream_id=upstream_id,
            pid=pid,
            field=field,
            value=value,
        )


def read_text(path: Path, expected: str) -> str:
    """The file's text; a file that is not UTF-8 is one error naming the file (its path, to find and convert it)
    and the line of the first bad byte. `expected` names the file to give instead ("the AmbigDocs JSON or JSON Lines file")."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark is not part of the JSON
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CtxRobustError(
            f"{path}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {column}); convert the file to UTF-8, or give {expected}"
        ) from None


def read_records(
    path: Path, snapshot: str | None = None, sha256: str | None = None, expected: str = "a JSON or JSON Lines file of records"
) -> list[tuple[Located, str, dict]]:
    """(locator, "file:line" or "file record N", object) for every record; snapshot and sha256 default to the file's.
    `expected` names the file to give when this one is not UTF-8."""
    path = Path(path)
    snapshot = snapshot or path.name
    sha256 = sha256 or sha256_file(path)
    text = read_text(path, expected)
    out = []
    if text.lstrip().startswith("["):
        try:
            data = jsontext.loads(text)
        except jsontext.TooDeep as exc:
            raise CtxRobustError(f"{snapshot}: not valid JSON ({exc.msg}); fix the file or supply it as JSON Lines") from None
        except ValueError as exc:
            raise CtxRobustError(f"{snapshot}:{exc.lineno}: not valid JSON ({exc.msg}); fix the file or supply it as JSON Lines") from None
        for index, obj in enumerate(data):
            where = f"{snapshot} record {index}"
            if not isinstance(obj, dict):
                raise CtxRobustError(f"{where}: not a JSON object")
            out.append((Located(snapshot=snapshot, sha256=sha256, line=None, index=index), where, obj))
        return out
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{snapshot}:{number}"
        try:
            obj = jsontext.loads(line)
        except ValueError as exc:  # not JSON, or nested deeper than any record
            raise CtxRobustError(f"{where}: not valid JSON ({getattr(exc, 'msg', exc)}); fix or remove the line") from None
        if not isinstance(obj, dict):
            raise CtxRobustError(f"{where}: not a JSON object")
        out.append((Located(snapshot=snapshot, sha256=sha256, line=number, index=None), where, obj))
    return out


def text_field(obj: dict, field: str, where: str) -> str:
    """A required non-empty string (numbers are taken as written)."""
    value = obj.get(field)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise CtxRobustError(f"{where}: field {field!r} must be a non-empty string")
    return value.strip()


def object_list(obj: dict, field: str, where: str, shape: str, required: bool = True) -> list[tuple[int, str, dict]]:
    """(position, "where: field[i]", object) for each object of a list field; `shape` names the objects in errors."""
    value = obj.get(field, None if required else [])
    if not isinstance(value, list):
        raise CtxRobustError(f"{where}: field {field!r} must be a list of {shape}")
    out = []
    for position, item in enumerate(value):
        item_where = f"{where}: {field}[{position}]"
        if not isinstance(item, dict):
            raise CtxRobustError(f"{item_where}: must be an object {shape}")
        out.append((position, item_where, item))
    return out
