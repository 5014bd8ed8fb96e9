"""Human adjudication of screened candidates, a pinned build input (paper Appendix B.1 "Human
adjudication", "Release membership").

An adjudication file (JSON Lines or CSV) holds one row per reviewed candidate: `id`, `item_sha256`
(the hash of the item as the reviewer read it: `item_sha256` below, given by candidates.jsonl),
`decision` (retain | exclude | revise | verify), `criterion` (the screening criterion at issue, 1-6,
or empty), `reason` and `reviewer`. A decision holds only for the item it names: when the question,
a context, an option, the gold or the lure changes, the hash changes and the candidate is unreviewed
again. A candidate without a current decision is unreviewed: it is excluded (`adjudication_unreviewed`)
unless the build keeps unreviewed items (`keep_unreviewed`), and it is counted as unreviewed either way,
never as reviewed. A candidate whose decision is not `retain` leaves the release and is listed in
exclusions.jsonl with its decision and reason. Rows naming ids that are not in the candidate pool
are reported in the build notes (`ids_not_in_pool`). The file's sha256 is recorded in the manifest
like any user source.

The file is read as a regular file of at most MAX_BYTES of UTF-8 text; a line that is not UTF-8, not
JSON, JSON nested deeper than any decision, or a CSV row the csv module refuses is one error naming
the file and line.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
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
FIELDS = ("id", "item_sha256", "decision", "criterion", "reason", "reviewer")
MAX_BYTES = 64 << 20  # a decision per candidate, a few thousand short rows


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    item_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # the item as read (item_sha256); another version voids the decision
    decision: Literal["retain", "exclude", "revise", "verify"]
    criterion: int | None = Field(None, ge=1, le=6)
    reason: str = Field(min_length=1)
    reviewer: str = Field(min_length=1)


def item_sha256(item: dict) -> str:
    """The sha256 a decision is pinned to: what a reader of the item reads (question, the G, S and F
    texts, the gold, the lure, the two distractors and E), independent of the option letters, which
    are balanced only after adjudication (Appendix B.1 "Final option assignment"). Any change to
    one of these texts gives another hash, and the decision no longer applies."""
    options = item["options"]
    shown = {
        "question": item["question"],
        "G": item["contexts"]["G"]["text"],
        "S": item["contexts"]["S"]["text"],
        "F": item["contexts"]["F"]["text"],
        "gold": options[item["gold"]],
        "lure": options[item["lure"]],
        "distractors": sorted(options[k] for k in "ABCD" if k not in (item["gold"], item["lure"])),
        "abstain": options["E"],
    }
    text = json.dumps(shown, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
        missing = [f for f in ("id", "item_sha256", "decision", "reason", "reviewer") if f not in fields]
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
                f"{path}:{number}: {where}: {err['msg']}; decisions are retain|exclude|revise|verify, criterion 1-6 or empty, "
                "item_sha256 the 64-hex hash of the item read (candidates.jsonl gives it)"
            ) from None
        if decision.id in out:
            raise CtxRobustError(f"{path}:{number}: candidate {decision.id} is decided twice; keep one row per candidate")
        out[decision.id] = decision
    return out


def exclusion_detail(decision: Decision) -> str:
    criterion = f"criterion {decision.criterion} ({CRITERIA[decision.criterion]}): " if decision.criterion else ""
    return f"{criterion}{decision.reason} (reviewer: {decision.reviewer})"


def judgments(decisions: dict[str, Decision], candidates: list[dict], model: str = "project-maintainers") -> list[dict]:
    """The maintainers' decisions as screening judgments (`ctxrobust screen` input, App. B.1), one per
    candidate with a current decision: the criterion an exclusion names fails, the others are not
    judged further (uncertain); a retained candidate passes all six. Candidates without a current
    decision get no judgment, so `screen` lists them as not judged."""
    rows = []
    for item in candidates:
        decision = decisions.get(item["id"])
        if decision is None or decision.item_sha256 != item.get("item_sha256"):
            continue
        answer = {}
        for number in CRITERIA:
            if decision.decision == "retain":
                answer[str(number)] = {"judgment": "pass", "reason": decision.reason}
            elif decision.criterion == number:
                answer[str(number)] = {"judgment": "fail", "reason": decision.reason}
            else:
                answer[str(number)] = {"judgment": "uncertain", "reason": "not judged: the item was excluded on another criterion"}
        rows.append({"model": model, "id": item["id"], "condition": "screen", "response": json.dumps(answer, ensure_ascii=False)})
    return rows


def _main(argv: list[str]) -> int:
    """python -m ctxrobust.builders.misleadqa.adjudication judgments RELEASE OUTPUT: the project's decisions
    on a release's candidates as a screening judgments file."""
    import sys

    from ctxrobust.canonical import read_jsonl, write_jsonl

    if len(argv) != 3 or argv[0] != "judgments":
        print("usage: python -m ctxrobust.builders.misleadqa.adjudication judgments RELEASE OUTPUT.jsonl", file=sys.stderr)
        return 2
    output = Path(argv[2])
    if output.exists():
        print(f"{output}: exists; give a new file", file=sys.stderr)
        return 2
    try:
        rows = judgments(read(DEFAULT), read_jsonl(Path(argv[1]) / "candidates.jsonl"))
    except (OSError, ValueError, CtxRobustError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_jsonl(output, rows)
    print(f"wrote {len(rows)} judgment(s) to {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(_main(sys.argv[1:]))
