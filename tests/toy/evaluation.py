"""Toy prompts, scorer and rendering."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ctxrobust.canonical import iter_jsonl
from ctxrobust.options import parse_options


class PromptOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shout: bool = Field(False, description="ask in capitals")


class ScoreOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    strict: bool = Field(False, description="refuse a file with any bad row")


def prompts(release, options):
    options = parse_options(PromptOptions, options, "toy prompts")
    for row in release.rows("items.jsonl"):
        text = row["question"].upper() if options.shout else row["question"]
        yield {"id": row["id"], "messages": [{"role": "user", "content": text}]}


def score(release, predictions: Path, options):
    parse_options(ScoreOptions, options, "toy score")
    answers = {row["id"]: row["answer"] for row in release.rows("items.jsonl")}
    right: dict[str, list[int]] = {}
    for _, row in iter_jsonl(predictions):
        right.setdefault(row["model"], []).append(int(str(row["response"]).strip() == str(answers[row["id"]])))
    return {"dataset": "toy", "models": {m: {"accuracy": sum(v) / len(v), "n": len(v)} for m, v in sorted(right.items())}}


def render_markdown(report: dict) -> str:
    lines = ["| model | accuracy |", "|---|---|"]
    lines += [f"| {m} | {r['accuracy']:.2f} |" for m, r in report["models"].items()]
    return "\n".join(lines) + "\n"
