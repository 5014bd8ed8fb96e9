"""Human adjudication of screened candidates, a pinned build input (paper Appendix B.1 "Human
adjudication", "Release membership").

An adjudication file (JSON Lines or CSV) holds one row per reviewed candidate: `id`, `decision`
(retain | exclude | revise | verify), `criterion` (the screening criterion at issue, 1-6, or empty),
`reason` and `reviewer`. A candidate whose decision is not `retain` leaves the release and is
listed in exclusions.jsonl with its decision and reason; a candidate without a row was not flagged
and stays, except in the project's own file (DEFAULT), which decides every SituatedQA candidate: a
SituatedQA candidate without a row there is excluded as `adjudication_unreviewed`. Rows naming ids
that are not in the candidate pool are reported in the build notes (`ids_not_in_pool`). The file's sha256 is recorded in the manifest like any user source.

The file is read as a regular file of at most MAX_BYTES of UTF-8 text; a line that is not UTF-8, not
JSON, JSON nested deeper than any decision, or a CSV row the csv module refuses is one error naming
the file and line.
"""

from __future__ import annotations

import csv
import io
import os
import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxrobust import jsontext
from ctxrobust.errors import CtxRobustError

DEFAULT = Path(__file__).with_name("review") / "adjudication.jsonl"
CRITERIA = {
    1: "source support",
    2: "explicit scopes",
    3: "single-dimension change",
    4: "answer uniqueness",
    5: "F edits and fluency",
    6: "distractor validity",
}
FIELDS = ("id", "decision", "criterion", "reason", "reviewer")
MAX_BYTES = 64 << 20  # a decision per candidate, a few thousand short rows
# sources the project's own file (DEFAULT) decides in full: a candidate of these without a row there
# was not read and is excluded as unreviewed (a user file keeps the paper's rule: no row, not flagged)
FULLY_REVIEWED = frozenset({"situatedqa"})


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    decision: Literal["retain", "exclude", "revise", "verify"]
    criterion: int | None = Field(None, ge=1, le=6)
    reason: str = Field(min_length=1)
    reviewer: str = Field(min_length=1)


def _text(path: Path) -> str:
    """The file's text: a regular file (a FIFO or device would block or never end) of at most MAX_BYTES, in
    UTF-8; otherwise one error naming the file (and the line of the first byte that is not UTF-8)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise CtxRobustError(f"adjudication={path}: cannot read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CtxRobustError(f"adjudication={path}: is not a regular file (a FIFO or device cannot be read as one); give the file")
        if info.st_size > MAX_BYTES:
            raise CtxRobustError(f"adjudication={path}: {info.st_size} bytes, more than the {MAX_BYTES} an adjudication file may hold")
        os.set_blocking(fd, True)
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise CtxRobustError(f"adjudication={path}: more than the {MAX_BYTES} bytes an adjudication file may hold")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise CtxRobustError(f"{path}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8") from None


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict]]:
    reader = csv.DictReader(io.StringIO(text))
    try:
        fields = reader.fieldnames or []
        missing = [f for f in ("id", "decision", "reason", "reviewer") if f not in fields]
        if missing:
            raise CtxRobustError(f"{path}: CSV header lacks {', '.join(missing)}; expected columns {', '.join(FIELDS)}")
        rows = []
        for row in reader:
            rows.append((reader.line_num, dict(row)))
        return rows
    except csv.Error as exc:
        raise CtxRobustError(f"{path}:{reader.line_num}: not a CSV row ({exc}); expected columns {', '.join(FIELDS)}") from None


def _rows(path: Path) -> list[tuple[int, dict]]:
    text = _text(path)
    if path.suffix.lower() == ".csv":
        return _csv_rows(path, text)
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = jsontext.loads(line)
        except ValueError as exc:  # not JSON, or nested deeper than any decision
            raise CtxRobustError(f"{path}:{number}: not JSON ({getattr(exc, 'msg', exc)}); each line is one decision object") from None
        if not isinstance(row, dict):
            raise CtxRobustError(f"{path}:{number}: a decision must be a JSON object with {', '.join(FIELDS)}")
        rows.append((number, row))
    return rows


def read(path: Path) -> dict[str, Decision]:
    """candidate id -> its decision; a malformed row or a candidate decided twice is one error naming the line."""
    if not os.path.lexists(path):
        raise CtxRobustError(
            f"adjudication={path}: file not found; give a JSON Lines or CSV file with columns {', '.join(FIELDS)}, or adjudication=none"
        )
    out: dict[str, Decision] = {}
    for number, row in _rows(path):
        if row.get("criterion") in ("", None):
            row["criterion"] = None
        try:
            decision = Decision.model_validate(row)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "row"
            raise CtxRobustError(
                f"{path}:{number}: {where}: {err['msg']}; decisions are retain|exclude|revise|verify, criterion 1-6 or empty"
            ) from None
        if decision.id in out:
            raise CtxRobustError(f"{path}:{number}: candidate {decision.id} is decided twice; keep one row per candidate")
        out[decision.id] = decision
    return out


def exclusion_detail(decision: Decision) -> str:
    criterion = f"criterion {decision.criterion} ({CRITERIA[decision.criterion]}): " if decision.criterion else ""
    return f"{criterion}{decision.reason} (reviewer: {decision.reviewer})"
