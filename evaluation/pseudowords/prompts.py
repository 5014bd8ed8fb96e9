"""Model inputs for a pseudowords release and a user's benchmark (Section 3, Section 3.3, Appendix H).

One chat request per (question, condition): the no-context baseline (context null),
each chosen context of the bank, and SQA histories. A context is its own user message
between the system message and the question (Section 3). SQA (Section 3.3) is a history
of other questions of the same benchmark, each answered with its reference answer.

By default the conditions are the paper's main setting (Section 3): the CHA contexts
of the release's longest length (10,000 tokens in the default release). `kinds` and
`lengths` choose others, e.g. the context-type and context-length ablations (Section 3.3).

The paper's text names its prompts (Appendix H.1: a system prompt and a user prompt for
multiple-choice and for general questions, asking for the answer with a brief
explanation) but does not give their wording; the wording below is this project's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ctxrobust.builders.pseudowords.builder import PseudowordsConfig
from ctxrobust.builders.pseudowords.contexts import context_id, context_rng
from ctxrobust.canonical import iter_jsonl
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.pseudowords.options import PromptOptions
from ctxrobust.evaluation.run.requests import Request, RequestKey, SamplingPlan, aliases_of, request_id
from ctxrobust.options import parse_options

# Appendix H.1: a simple prompt asking for the answer with a brief explanation (wording ours).
SYSTEM_PROMPT = "You are a helpful assistant. Answer the user's question and briefly explain your answer."
MULTIPLE_CHOICE_PROMPT = (
    "Answer the following multiple-choice question. Give a brief explanation, then state the letter of your final answer.\n\n"
    "Question: {question}\n\nOptions:\n{options}"
)
GENERAL_PROMPT = "Answer the following question. Give a brief explanation, then state your final answer.\n\nQuestion: {question}"
MAIN_KIND = "CHA"  # Section 3: pseudo-word contexts are the main setting
SQA_TURNS = 20  # Section 3.3: 20 question-answer turns
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
RECORD_SHAPE = '{"id", "question", "options"?, "answer"?}'


class BenchmarkRecord(BaseModel):
    """One benchmark line. `options`: a list (lettered A, B, ...) or an object letter -> text."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    id: Union[str, int]
    question: str = Field(min_length=1)
    options: Optional[Union[list[str], dict[str, str]]] = None
    answer: Optional[Union[str, int, float]] = None

    @field_validator("options")
    @classmethod
    def _options(cls, value):
        if value is not None and (len(value) == 0 or len(value) > len(LETTERS)):
            raise ValueError(f"give 1 to {len(LETTERS)} options")
        return value

    @property
    def key(self) -> str:
        return str(self.id)


@dataclass(frozen=True)
class Entry:
    line: int
    record: BenchmarkRecord


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(line)"
    return f"missing field {where!r}" if first["type"] == "missing" else f"field {where!r}: {first['msg']}"


def read_benchmark(path: Path) -> list[Entry]:
    """The benchmark's records sorted by id; a bad line is one error naming file and line."""
    if not path.is_file():
        raise CtxRobustError(f"{path}: no such benchmark file; give a JSONL of {RECORD_SHAPE} records")
    entries: list[Entry] = []
    lines_of: dict[str, int] = {}
    for number, raw in iter_jsonl(path):  # names the line of any text that is not UTF-8 or not JSON
        try:
            record = BenchmarkRecord.model_validate(raw)
        except ValidationError as exc:
            raise CtxRobustError(f"{path}:{number}: {_problem(exc)}; each line must be {RECORD_SHAPE}") from None
        if record.key in lines_of:
            raise CtxRobustError(f"{path}:{number}: id {record.key!r} already used on line {lines_of[record.key]}; ids must be unique")
        lines_of[record.key] = number
        entries.append(Entry(number, record))
    if not entries:
        raise CtxRobustError(f"{path}: no records; give a JSONL of {RECORD_SHAPE} records")
    return sorted(entries, key=lambda e: e.record.key)


def render_question(record: BenchmarkRecord) -> str:
    """Appendix H.1 user prompt: multiple-choice (options one per line as "A. text") or general QA."""
    if record.options is None:
        return GENERAL_PROMPT.format(question=record.question)
    if isinstance(record.options, dict):
        lines = [f"{key}. {text}" for key, text in sorted(record.options.items())]
    else:
        lines = [f"{LETTERS[i]}. {text}" for i, text in enumerate(record.options)]
    return MULTIPLE_CHOICE_PROMPT.format(question=record.question, options="\n".join(lines))


def messages(question: str, context: Optional[str] = None, history: tuple[tuple[str, str], ...] = ()) -> list[dict]:
    """Section 3: system message, then the context as its own user message (or the SQA turns), then the question."""
    out = [{"role": "system", "content": SYSTEM_PROMPT}]
    if context is not None:
        out.append({"role": "user", "content": context})
    for asked, answered in history:
        out += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
    out.append({"role": "user", "content": question})
    return out


def sqa_orders(n_records: int, histories: int, seed: int) -> list[np.ndarray]:
    """One seeded random order of the benchmark (sorted by id) per SQA history."""
    return [context_rng(seed, "SQA", SQA_TURNS, j).permutation(n_records) for j in range(histories)]


def sqa_history(questions: list[str], answers: list[str], order: np.ndarray, target: int) -> tuple[tuple[str, str], ...]:
    """Section 3.3 SQA: the first 20 questions of `order` other than the target, with their reference answers."""
    chosen = [k for k in order[: SQA_TURNS + 1].tolist() if k != target][:SQA_TURNS]
    return tuple((questions[k], answers[k]) for k in chosen)


def _selection(release, opts: PromptOptions, entries: list[Entry], path: Path) -> tuple[list[dict], bool]:
    """The bank contexts to use and whether to add SQA: options `kinds` / `lengths`, else the main setting (Section 3)."""
    bank = release.rows("contexts.jsonl")
    available_kinds = sorted({row["kind"] for row in bank})
    available_lengths = sorted({row["target_tokens"] for row in bank})
    kinds = opts.kinds if opts.kinds is not None else [MAIN_KIND] if MAIN_KIND in available_kinds else available_kinds
    for kind in kinds:
        if kind != "SQA" and kind not in available_kinds:
            why = release.manifest.get("build_notes", {}).get("kinds_not_built", {}).get(kind, "not a context kind")
            raise CtxRobustError(f"kind {kind!r} is not in {release.path} ({why}); choose from {', '.join(available_kinds + ['SQA'])}")
    if opts.lengths is not None and set(kinds) == {"SQA"}:
        raise CtxRobustError(
            "--lengths chooses bank contexts (CHA, TOK, WEB); SQA histories are 20 turns, not a token length: drop --lengths or add a bank kind"
        )
    lengths = opts.lengths if opts.lengths is not None else available_lengths[-1:]
    for length in lengths:
        if length not in available_lengths:
            raise CtxRobustError(f"length {length} is not in {release.path}; choose from {', '.join(map(str, available_lengths))}")
    chosen = sorted((row for row in bank if row["kind"] in kinds and row["target_tokens"] in lengths), key=lambda row: row["id"])
    if "SQA" in kinds:
        if len(entries) <= SQA_TURNS:
            raise CtxRobustError(
                f"{path}: {len(entries)} questions; SQA histories of {SQA_TURNS} other questions need at least {SQA_TURNS + 1}"
            )
        for entry in entries:
            if entry.record.answer is None:
                raise CtxRobustError(
                    f'{path}:{entry.line}: no "answer"; SQA histories use reference answers, so add one (or leave SQA out of kinds)'
                )
    elif not chosen:
        raise CtxRobustError(
            f"{release.path} has no contexts of kinds {', '.join(kinds) or '(none)'} at lengths {', '.join(map(str, lengths)) or '(none)'}; choose --kinds and --lengths it has"
        )
    return chosen, "SQA" in kinds


def prompts(release, opts: PromptOptions | dict) -> Iterator[dict]:
    """One {"id", "context", "request": {"messages"}} per (question, condition), sorted by question id then context id."""
    opts = parse_options(PromptOptions, opts, "pseudowords prompts")
    entries = read_benchmark(opts.benchmark)
    bank, with_sqa = _selection(release, opts, entries, opts.benchmark)
    config = release.config_as(PseudowordsConfig)
    seed = opts.seed if opts.seed is not None else config.seed
    histories = config.contexts_per_length  # M SQA histories, like M contexts per length
    orders = sqa_orders(len(entries), histories, seed) if with_sqa else []
    questions = [render_question(entry.record) for entry in entries]
    answers = [str(entry.record.answer) for entry in entries]
    for target, entry in enumerate(entries):
        question = questions[target]
        conditions: list[tuple[str, list[dict]]] = [(row["id"], messages(question, context=row["text"])) for row in bank]
        for j, order in enumerate(orders):
            conditions.append((context_id("SQA", SQA_TURNS, j), messages(question, history=sqa_history(questions, answers, order, target))))
        yield {"id": entry.record.key, "context": None, "request": {"messages": messages(question)}}
        for cid, msgs in sorted(conditions, key=lambda c: c[0]):
            yield {"id": entry.record.key, "context": cid, "request": {"messages": msgs}}


# Section 2 (Experiment details): temperature 1.0, p = 20 samples without context and q = 2 per context
PLAN = SamplingPlan(temperature=1.0, samples=2, baseline_samples=20)


def requests(release, options: PromptOptions | dict, plan: SamplingPlan) -> Iterator[Request]:
    """The requests of `prompts`, `plan.baseline_samples` for the no-context baseline and `plan.samples`
    per context; the id is "question/context/trial" ("-" for no context)."""
    for row in prompts(release, options):
        context = row["context"]
        for trial in range(plan.samples_for(context is None)):
            yield Request(
                id=request_id(row["id"], context, trial),
                dataset="pseudowords",
                item=row["id"],
                condition=context,
                sample=trial,
                messages=row["request"]["messages"],
                sampling=plan.sampling(),
            )


def prediction(key: RequestKey, model: str, response: str) -> dict:
    """The native predictions row of one response, graded by `score` against the benchmark's answer."""
    return {"model": model, "id": key.item, "context": key.condition, "trial": key.sample, "response": response}


def item_aliases(options) -> dict[str, str]:
    """Hashed token -> question id, for request ids of questions whose id is too long to write whole."""
    benchmark = getattr(options, "benchmark", None)
    return aliases_of(entry.record.key for entry in read_benchmark(Path(benchmark))) if benchmark else {}
