"""Human adjudication of screened candidates, a pinned build input (paper Appendix B.1 "Human
adjudication", "Release membership").

An adjudication file (JSON Lines or CSV) holds one row per reviewed candidate: `id`, `decision`
(retain | exclude | revise | verify), `criterion` (the screening criterion at issue, 1-6, or empty),
`reason` and `reviewer`. A candidate whose decision is not `retain` leaves the release and is
listed in exclusions.jsonl with its decision and reason; a candidate without a row was not flagged
and stays, except in the project's own file (DEFAULT), which decides every SituatedQA candidate: a
SituatedQA candidate without a row there is excluded as `adjudication_unreviewed`. Rows naming ids
that are not in the candidate pool are reported in the build notes (`ids_not_in_pool`). The file's sha256 is recorded in the manifest like any user source.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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


def _rows(path: Path) -> list[tuple[int, dict]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = [f for f in ("id", "decision", "reason", "reviewer") if f not in (reader.fieldnames or [])]
        if missing:
            raise CtxRobustError(f"{path}: CSV header lacks {', '.join(missing)}; expected columns {', '.join(FIELDS)}")
        return [(number, dict(row)) for number, row in enumerate(reader, start=2)]
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CtxRobustError(f"{path}:{number}: not JSON ({exc.msg}); each line is one decision object") from None
        if not isinstance(row, dict):
            raise CtxRobustError(f"{path}:{number}: a decision must be a JSON object with {', '.join(FIELDS)}")
        rows.append((number, row))
    return rows


def read(path: Path) -> dict[str, Decision]:
    """candidate id -> its decision; a malformed row or a candidate decided twice is one error naming the line."""
    if not path.is_file():
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
