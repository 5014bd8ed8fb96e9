"""The rows MisleadQA evaluation reads, checked at the boundary: release items (the fields prompts and
scoring use) and predictions rows; and the option letter a response names (paper Appendix C.1)."""

from __future__ import annotations

import itertools
import re
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ctxrobust.errors import CtxRobustError
from ctxrobust.release import Release

LETTERS = "ABCDE"  # E is always "Insufficient information"
CONDITIONS = ("none", "G", "S", "F", "G+S", "S+G", "G+F", "F+G")  # §4.1, order of presentation
ANSWER_PROMPTS = ("original", "cf")  # Figure 4 answering prompt; Figure 5(b) context-faithful prompt
PROMPTS = ANSWER_PROMPTS + ("scope",)  # and the scope judgment of Figure 5(a), one context per request (§6.1)
SCOPE_CONTEXTS = ("G", "S", "F")  # the contexts a scope judgment is asked about (§6.1)
SCOPE_LABELS = ("Applicable", "Not applicable", "Cannot determine")  # Figure 5(a); a response is one of them
ORDER_CONDITIONS = ("none", "S", "F")  # the conditions of the option-order check (App. D.6)
ORIGINAL_ORDER = "ABCD"
# an option order names, for each shown position A-D, the release letter whose text it shows; E stays E (App. D.6)
OPTION_ORDERS = tuple("".join(p) for p in itertools.permutations(ORIGINAL_ORDER))
FILES = (("main.jsonl", "main"), ("condition.jsonl", "condition"))  # the main split; the condition supplement (App. D.3)

INVALID = -1  # a response that names no single option letter (stays in every denominator)
MISSING = -2  # no row for this (model, item, condition, prompt); scored as invalid

_LETTER_INDEX = {letter: i for i, letter in enumerate(LETTERS)}
_LENIENT = re.compile(r"([A-E])\.|\(([A-E])\)")


class Context(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    text: str


class ReleaseItem(BaseModel):
    """One item of main.jsonl or condition.jsonl, as far as prompts and scoring read it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    question: str
    options: dict[str, str]
    contexts: dict[str, Context]
    gold: Literal["A", "B", "C", "D"]
    lure: Literal["A", "B", "C", "D"]
    source: str
    scope_dimension: str
    cluster_id: str  # the resampling unit, within its source (App. A.4)
    dependency_group_id: str  # the coarser unit of App. D.6

    @field_validator("options")
    @classmethod
    def _five_options(cls, options: dict[str, str]) -> dict[str, str]:
        if sorted(options) != list(LETTERS):
            raise ValueError("must be exactly A-E")
        return options

    @field_validator("contexts")
    @classmethod
    def _three_contexts(cls, contexts: dict[str, Context]) -> dict[str, Context]:
        if not {"G", "S", "F"} <= set(contexts):
            raise ValueError("must hold G, S and F")
        return contexts

    @model_validator(mode="after")
    def _gold_is_not_lure(self) -> ReleaseItem:
        if self.gold == self.lure:
            raise ValueError(f"gold and lure are both {self.gold}")
        return self


def read_items(release: Release) -> list[tuple[str, ReleaseItem]]:
    """(split, item) for every item of the main split and then the condition supplement, in file order."""
    if not release.file_path("main.jsonl").exists():
        raise CtxRobustError(f"{release.path}: no main.jsonl; this is not a MisleadQA release (build one with `ctxrobust build misleadqa`)")
    items: list[tuple[str, ReleaseItem]] = []
    seen: set[str] = set()
    for name, split in FILES:
        path = release.file_path(name)
        if not path.exists():
            continue
        for row in release.iter_rows(name):
            try:
                item = ReleaseItem.model_validate(row)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) + ": " if first["loc"] else ""
                item_id = row.get("id") if isinstance(row, dict) else None
                message = first["msg"].removeprefix("Value error, ")
                raise CtxRobustError(f"{path}: item {item_id!r}: {where}{message}; rebuild the release") from None
            if item.id in seen:
                raise CtxRobustError(f"{path}: item id {item.id!r} appears twice in the release; rebuild it")
            seen.add(item.id)
            items.append((split, item))
    return items


class MisleadQAPrediction(BaseModel):
    """One model response; mirrors schemas/predictions.misleadqa.schema.json."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: str = Field(min_length=1, description="model name; every figure is reported per model")
    id: str = Field(min_length=1, description="item id in main.jsonl or condition.jsonl")
    condition: str = Field(json_schema_extra={"enum": list(CONDITIONS)}, description="context sequence shown after the options (§4.1)")
    response: str = Field(description="the raw completion; valid only if it is a single letter A-E once whitespace is stripped")
    prompt: str = Field(
        default="original",
        json_schema_extra={"enum": list(PROMPTS)},
        description="original (Figure 4), cf (Figure 5b) or scope (Figure 5a: the response is a scope label, the condition G, S or F)",
    )
    option_order: Optional[str] = Field(
        default=None,
        json_schema_extra={"anyOf": [{"type": "string", "enum": list(OPTION_ORDERS)}, {"type": "null"}]},
        description="the option order shown (App. D.6): for each position A-D, the release letter whose text it held; E stays E. "
        "Absent for the main run",
    )


def row_problem(row: MisleadQAPrediction, item_ids) -> str | None:
    """A message for a well-formed row that cannot be scored (unknown condition, prompt or id), else None."""
    if row.condition not in CONDITIONS:
        return f"unknown condition {row.condition!r}; expected one of {', '.join(CONDITIONS)}"
    if row.prompt not in PROMPTS:
        return f"unknown prompt {row.prompt!r}; expected one of {', '.join(PROMPTS)}"
    if row.id not in item_ids:
        return f"unknown id {row.id!r}: no such item in this release"
    if row.prompt == "scope" and row.condition not in SCOPE_CONTEXTS:
        return f"a scope judgment is about one context G, S or F (§6.1), not condition {row.condition!r}"
    if row.option_order is not None:
        if row.option_order not in OPTION_ORDERS:
            return f"unknown option order {row.option_order!r}: give the release letters shown at A-D, a permutation of ABCD (E stays E)"
        if row.prompt != "original":
            return f"option order {row.option_order} with prompt {row.prompt}: the option-order check uses the original prompt (App. D.6)"
        if row.condition not in ORDER_CONDITIONS:
            return f"option order {row.option_order} with condition {row.condition!r}: the option-order check asks none, S and F (App. D.6)"
    return None


def parse_label(response: str, lenient: bool = False) -> tuple[int, bool]:
    """(index into SCOPE_LABELS, or INVALID; whether a lenient form was needed).

    App. C.1: scope judgments are decoded as exactly one of the three labels. With `lenient`, case and
    a final period are ignored ("not applicable.").
    """
    text = response.strip()
    if text in SCOPE_LABELS:
        return SCOPE_LABELS.index(text), False
    if lenient:
        folded = text.removesuffix(".").strip().casefold()
        for index, label in enumerate(SCOPE_LABELS):
            if folded == label.casefold():
                return index, True
    return INVALID, False


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
