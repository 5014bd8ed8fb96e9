"""GSM8K and the GSM-IC base-problem pool -> typed base problems with provenance.

Two snapshots:
- `gsm_ic/gsm8k_validation.jsonl`: the 1,000-problem pool the GSM-IC authors drew
  from GSM8K's training split [§3.1]: {question, answer, n_steps};
- `gsm8k/train.jsonl`: GSM8K training split with worked solutions:
  {question, answer: "...#### <final answer>"}.
A pool problem is joined to the training line whose question is the same string
byte for byte. A pool question with no such line, with several, whose solution's
final answer differs from the pool's answer, or that repeats an earlier pool
question is reported as unjoined (never guessed) and is not a base problem.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ctxrobust.canonical import iter_jsonl, sha256_file
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.facts import Provenance

POOL = "gsm_ic/gsm8k_validation.jsonl"
TRAIN = "gsm8k/train.jsonl"


class PoolRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    question: str
    answer: str
    n_steps: int
    line: int


class SolutionRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    question: str
    solution: str  # the worked solution, including its "#### answer" line
    final_answer: str  # what follows "####", as written
    line: int
    topic: str | None = None  # a user's base_file line may give the problem's topic


class BaseProblem(BaseModel):
    """One pool problem joined with its worked solution."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str  # "pool-0001": the 1-based line of the pool file
    question: str
    answer: str  # the pool's final answer, as written
    n_steps: int
    solution: str
    pool: Provenance
    source: Provenance  # the training-split line holding the solution
    topic: str | None = None  # the topic a user's base_file line gives (None: none given)


class Unjoined(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    question: str
    reason: str
    pool: Provenance


class GsmPool(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    problems: list[BaseProblem]
    unjoined: list[Unjoined]


def base_id(line: int) -> str:
    return f"pool-{line:04d}"


def _require(row: object, path: Path, line: int, fields: dict[str, type], what: str = "the snapshot is not in the expected format") -> dict:
    if not isinstance(row, dict):
        raise CtxRobustError(f"{path}:{line}: expected a JSON object; {what}")
    for name, kind in fields.items():
        value = row.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise CtxRobustError(f"{path}:{line}: field {name!r} missing or not {kind.__name__}; {what}")
    return row


def read_pool(path: Path) -> list[PoolRecord]:
    records = []
    for line, row in iter_jsonl(path):
        row = _require(row, path, line, {"question": str, "answer": str, "n_steps": int})
        records.append(PoolRecord(question=row["question"], answer=row["answer"], n_steps=row["n_steps"], line=line))
    return records


def read_solutions(path: Path, what: str = "the snapshot is not in the expected format", with_topic: bool = False) -> list[SolutionRecord]:
    """`with_topic`: each line may carry an optional string field `topic` (a user's base_file)."""
    records = []
    for line, row in iter_jsonl(path):
        row = _require(row, path, line, {"question": str, "answer": str}, what)
        solution = row["answer"]
        if "####" not in solution:
            raise CtxRobustError(f"{path}:{line}: solution has no '#### <answer>' line; {what}")
        final = solution.rsplit("####", 1)[1].strip()
        topic = row.get("topic") if with_topic else None
        if with_topic and "topic" in row and not isinstance(topic, str):
            raise CtxRobustError(f"{path}:{line}: field 'topic' is not a string; give a topic name or leave the field out")
        records.append(SolutionRecord(question=row["question"], solution=solution, final_answer=final, line=line, topic=topic))
    return records


def _same_answer(a: str, b: str) -> bool:
    return a.replace(",", "").strip() == b.replace(",", "").strip()


def join(
    pool: list[PoolRecord], solutions: list[SolutionRecord], pool_name: str, pool_sha: str, train_name: str, train_sha: str
) -> GsmPool:
    """Join each pool problem to its worked solution by exact question text."""
    by_question: dict[str, list[SolutionRecord]] = {}
    for record in solutions:
        by_question.setdefault(record.question, []).append(record)
    problems, unjoined = [], []
    first_line: dict[str, int] = {}
    for record in pool:
        pool_prov = Provenance(snapshot=pool_name, sha256=pool_sha, line=record.line, field="answer", value=record.answer)
        matches = by_question.get(record.question, [])
        reason = None
        if record.question in first_line:
            reason = f"same question as {base_id(first_line[record.question])} of {pool_name}"
        elif not matches:
            reason = f"question not found verbatim in {train_name}"
        elif len(matches) > 1:
            reason = f"question occurs on {len(matches)} lines of {train_name} ({', '.join(str(m.line) for m in matches)})"
        elif not _same_answer(matches[0].final_answer, record.answer):
            reason = f"{train_name}:{matches[0].line} gives answer {matches[0].final_answer!r}, the pool {record.answer!r}"
        first_line.setdefault(record.question, record.line)
        if reason:
            unjoined.append(Unjoined(id=base_id(record.line), question=record.question, reason=reason, pool=pool_prov))
            continue
        match = matches[0]
        problems.append(
            BaseProblem(
                id=base_id(record.line),
                question=record.question,
                answer=record.answer,
                n_steps=record.n_steps,
                solution=match.solution,
                pool=pool_prov,
                source=Provenance(snapshot=train_name, sha256=train_sha, line=match.line, field="answer", value=match.final_answer),
            )
        )
    return GsmPool(problems=problems, unjoined=unjoined)


def load(store) -> GsmPool:
    """The pool joined with its solutions, from verified snapshots of a SnapshotStore."""
    pool_path, train_path = store.path(POOL), store.path(TRAIN)
    return join(
        read_pool(pool_path),
        read_solutions(train_path),
        POOL,
        store.snapshot(POOL).sha256,
        TRAIN,
        store.snapshot(TRAIN).sha256,
    )


def load_files(pool_path: Path, train_path: Path) -> GsmPool:
    """The same, from two files named by path (their sha256 computed here)."""
    return join(
        read_pool(pool_path),
        read_solutions(train_path),
        POOL,
        sha256_file(pool_path),
        TRAIN,
        sha256_file(train_path),
    )


USER_PREFIX = "user"


def user_id(line: int) -> str:
    return f"{USER_PREFIX}-{line:04d}"


def solution_steps(solution: str) -> int:
    """Reasoning steps of a GSM8K worked solution: its non-empty lines before the '#### answer' line."""
    worked = solution.rsplit("####", 1)[0]
    return sum(1 for line in worked.splitlines() if line.strip())


def read_user_file(path: Path) -> GsmPool:
    """Problems from a user's GSM8K-format JSONL file ({question, answer: worked solution ending in '#### N'}, optionally
    topic: the problem's topic, checked by the builder), as a pool: ids user-NNNN (the 1-based line), steps counted from
    each solution, provenance the file's name and sha256. A repeated question is reported as unjoined, never used twice."""
    sha = sha256_file(path)
    problems, unjoined, first_line = [], [], {}
    for record in read_solutions(
        path, 'give each line as {"question": ..., "answer": "<worked solution>\\n#### <number>"} (optionally "topic")', with_topic=True
    ):
        prov = Provenance(snapshot=path.name, sha256=sha, line=record.line, field="answer", value=record.final_answer)
        if record.question in first_line:
            unjoined.append(
                Unjoined(
                    id=user_id(record.line),
                    question=record.question,
                    reason=f"same question as {user_id(first_line[record.question])} of {path.name}",
                    pool=prov,
                )
            )
            continue
        first_line[record.question] = record.line
        problems.append(
            BaseProblem(
                id=user_id(record.line),
                question=record.question,
                answer=record.final_answer,
                n_steps=solution_steps(record.solution),
                solution=record.solution,
                pool=prov,
                source=prov,
                topic=record.topic,
            )
        )
    if not problems:
        raise CtxRobustError(
            f"{path}: no problems; give one JSON object per line with 'question' and 'answer' (the worked solution ending in '#### N')"
        )
    return GsmPool(problems=problems, unjoined=unjoined)
