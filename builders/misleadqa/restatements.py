"""Restatements written by the project's maintainers (paper Appendix A.1 "Questions and contexts": G
and S may restate source content without changing its meaning; the method is recorded).

Where a rule cannot write the sentence a careful writer would (a name's casing, a date written out,
one format for every option), a reviewer writes it: one row per candidate in
`review/restatements.jsonl`, `{id, base_sha256, question?, G?, S?, gold?, lure?, distractors?, reason,
reviewer}`. `base_sha256` is the `item_sha256` of the candidate as the rules built it; when the
candidate changes the row no longer applies (it is stale, and the candidate stays as built). A
restated candidate records the method `restated` for the contexts written anew, keeps every
provenance, and F is G with the registered gold-to-lure substitution only. The item rules are
replayed on the result.

`python -m ctxrobust.builders.misleadqa.restatements CANDIDATES [RESTATEMENTS]` prints, for each
candidate, its id and the `item_sha256` a decision on it must name (of the restated item where a row
applies): the hash reviewers copy into their decisions.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ctxrobust.builders.misleadqa.candidate import Candidate
from ctxrobust.errors import CtxRobustError

DEFAULT = Path(__file__).with_name("review") / "restatements.jsonl"
MAX_BYTES = 16 << 20


class Restatement(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    base_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    question: str | None = Field(None, min_length=1)
    G: str | None = Field(None, min_length=1)
    S: str | None = Field(None, min_length=1)
    gold: str | None = Field(None, min_length=1)
    lure: str | None = Field(None, min_length=1)
    distractors: tuple[str, str] | None = None
    reason: str = Field(min_length=1)
    reviewer: str = Field(min_length=1)


def read(path: Path) -> dict[str, Restatement]:
    """candidate id -> its restatement; a malformed row is one error naming the line."""
    from pydantic import ValidationError

    from ctxrobust import jsontext

    if not path.is_file():
        raise CtxRobustError(f"{path}: restatements file not found")
    if path.stat().st_size > MAX_BYTES:
        raise CtxRobustError(f"{path}: more than the {MAX_BYTES} bytes a restatements file may hold")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CtxRobustError(f"{path}: not UTF-8 (byte {exc.start}); save the file as UTF-8") from None
    out: dict[str, Restatement] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = Restatement.model_validate(jsontext.loads(line))
        except (ValueError, ValidationError) as exc:
            raise CtxRobustError(f"{path}:{number}: not a restatement row ({str(exc).splitlines()[0]})") from None
        if row.id in out:
            raise CtxRobustError(f"{path}:{number}: candidate {row.id} is restated twice; keep one row per candidate")
        out[row.id] = row
    return out


def apply(candidate: Candidate, row: Restatement, distractor_letters: tuple[str, str]) -> Candidate:
    """The candidate with the row's texts; contexts written anew are recorded as `restated`. The row's
    distractors are in the order of their letters in the candidate as read (`distractor_letters`: the
    letters of the candidate's distractors at its provisional positions)."""
    gold, lure = row.gold or candidate.gold, row.lure or candidate.lure
    registered = candidate.registered if (gold, lure) == (candidate.gold, candidate.lure) else [(gold, lure)]
    distractors = list(candidate.distractors)
    if row.distractors is not None:
        by_letter = sorted(range(len(distractors)), key=lambda i: distractor_letters[i])
        for index, text in zip(by_letter, row.distractors):
            distractors[index] = dataclasses.replace(distractors[index], text=text)
    construction = dict(candidate.construction)
    if row.gold or row.lure or row.distractors is not None:
        construction["options"] = "restated"  # provenance keeps the source values
    for role, text in (("G", row.G), ("S", row.S)):
        if text is not None:
            construction[role] = "restated"
    supplied = {"question": row.question, "G": row.G, "S": row.S}
    return dataclasses.replace(
        candidate,
        needs=tuple(part for part in candidate.needs if not supplied[part]),
        question=row.question or candidate.question,
        g_text=row.G or candidate.g_text,
        s_text=row.S or candidate.s_text,
        gold=gold,
        lure=lure,
        registered=registered,
        distractors=list(distractors),
        construction=construction,
    )


def _main(argv: list[str]) -> int:
    from ctxrobust.builders.misleadqa.adjudication import item_sha256
    from ctxrobust.canonical import read_jsonl

    if not 1 <= len(argv) <= 2:
        print("usage: python -m ctxrobust.builders.misleadqa.restatements CANDIDATES.jsonl [RESTATEMENTS.jsonl]", file=sys.stderr)
        return 2
    try:
        rows = read_jsonl(Path(argv[0]))
        restated = read(Path(argv[1])) if len(argv) == 2 else {}
    except (OSError, ValueError, CtxRobustError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for item in rows:
        row = restated.get(item["id"])
        if row is not None and row.base_sha256 == item_sha256(item):
            item = restated_row(item, row)
        print(f"{item['id']}\t{item_sha256(item)}")
    return 0


def restated_row(item: dict, row: Restatement) -> dict:
    """A candidates.jsonl row with a restatement applied, as the builder would release it (its hash input)."""
    from ctxrobust.builders.misleadqa.substitution import substitute

    item = json.loads(json.dumps(item))
    gold_letter, lure_letter = item["gold"], item["lure"]
    others = [k for k in "ABCD" if k not in (gold_letter, lure_letter)]
    old_gold, old_lure = item["options"][gold_letter], item["options"][lure_letter]
    gold, lure = row.gold or old_gold, row.lure or old_lure
    item["options"][gold_letter], item["options"][lure_letter] = gold, lure
    if row.distractors is not None:
        for letter, text in zip(others, row.distractors):
            item["options"][letter] = text
    item["question"] = row.question or item["question"]
    g = row.G or item["contexts"]["G"]["text"]
    item["contexts"]["G"]["text"] = g
    item["contexts"]["S"]["text"] = row.S or item["contexts"]["S"]["text"]
    registered = [(s["old"], s["new"]) for s in item["substitutions"]] if (gold, lure) == (old_gold, old_lure) else [(gold, lure)]
    item["contexts"]["F"]["text"] = substitute(g, registered)[0]
    return item


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
