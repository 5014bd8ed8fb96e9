"""Toy prompts, scorer and rendering."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ctxrobust.canonical import iter_jsonl
from ctxrobust.evaluation.run.requests import Request, RequestKey, SamplingPlan, request_id
from ctxrobust.options import parse_options

PLAN = SamplingPlan(temperature=0.0, samples=1)


class PromptOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shout: bool = Field(False, description="ask in capitals")


class ScoreOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    strict: bool = Field(False, description="refuse a file with any bad row")


def requests(release, options, plan: SamplingPlan):
    options = parse_options(PromptOptions, options, "toy prompts")
    for row in release.rows("items.jsonl"):
        text = row["question"].upper() if options.shout else row["question"]
        for sample in range(plan.samples):
            yield Request(
                id=request_id(row["id"], None, sample),
                dataset="toy",
                item=row["id"],
                condition=None,
                sample=sample,
                messages=[{"role": "user", "content": text}],
                sampling=plan.sampling(),
            )


def prediction(key: RequestKey, model: str, response: str) -> dict:
    return {"model": model, "id": key.item, "response": response}


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
