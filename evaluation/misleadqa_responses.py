"""MisleadQA predictions rows, and the option letter a response names (paper Appendix C.1)."""
from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

LETTERS = "ABCDE"  # E is always "Insufficient information"
CONDITIONS = ("none", "G", "S", "F", "G+S", "S+G", "G+F", "F+G")  # §4.1, order of presentation
PROMPTS = ("original", "cf")  # Figure 4 answering prompt; Figure 5(b) context-faithful prompt

INVALID = -1  # a response that names no single option letter (stays in every denominator)
MISSING = -2  # no row for this (model, item, condition, prompt); scored as invalid

_LETTER_INDEX = {letter: i for i, letter in enumerate(LETTERS)}
_LENIENT = re.compile(r"([A-E])\.|\(([A-E])\)")


class MisleadQAPrediction(BaseModel):
    """One model response; mirrors schemas/predictions.misleadqa.schema.json."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: str = Field(min_length=1, description="model name; every figure is reported per model")
    id: str = Field(min_length=1, description="item id in main.jsonl or condition.jsonl")
    condition: str = Field(json_schema_extra={"enum": list(CONDITIONS)}, description="context sequence shown after the options (§4.1)")
    response: str = Field(description="the raw completion; valid only if it is a single letter A-E once whitespace is stripped")
    prompt: str = Field(default="original", json_schema_extra={"enum": list(PROMPTS)}, description="original (Figure 4) or cf (Figure 5b)")


def row_problem(row: MisleadQAPrediction, item_ids) -> str | None:
    """A message for a well-formed row that cannot be scored (unknown condition, prompt or id), else None."""
    if row.condition not in CONDITIONS:
        return f"unknown condition {row.condition!r}; expected one of {', '.join(CONDITIONS)}"
    if row.prompt not in PROMPTS:
        return f"unknown prompt {row.prompt!r}; expected original or cf"
    if row.id not in item_ids:
        return f"unknown id {row.id!r}: no such item in this release"
    return None


def parse_letter(response: str, lenient: bool = False) -> tuple[int, bool]:
    """(index of the option letter 0-4, or INVALID; whether a lenient form was needed).

    Appendix C.1 "Valid responses": after stripping whitespace, exactly one letter A-E. With
    `lenient`, "B." and "(B)" are also read as B (and counted, so the report can say so).
    """
    text = response.strip()
    index = _LETTER_INDEX.get(text)
    if index is not None:
        return index, False
    if lenient:
        match = _LENIENT.fullmatch(text)
        if match:
            return _LETTER_INDEX[match.group(1) or match.group(2)], True
    return INVALID, False
