"""GSM-IC command-line options: each field is one flag of `ctxrobust prompts` or `ctxrobust score`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_SEED = 0
DEFAULT_REPLICATES = 1000
PromptFormat = Literal["cot", "cot-ic", "ltm", "ltm-ic", "program", "program-ic", "0-cot"]


class PromptOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: PromptFormat = Field(
        "cot", description="prompt format (Section 4.2, Appendix C): cot, cot-ic, ltm, ltm-ic, program, program-ic or 0-cot"
    )
    instruction: bool = Field(False, description="prepend the paper's instruction to ignore irrelevant information (Section 4.3)")
    subset: Literal["all", "4k"] = Field(
        "all", description="all: every base problem and variant; 4k: the base problems and the GSM-IC-4K variants (Section 5)"
    )


class ScoreOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    strict: bool = Field(False, description="refuse to score a file with any bad row")
    requests: Optional[Path] = Field(
        None, description="the requests `prompts` wrote (JSONL) or a `run` record: score only the items they ask for"
    )
    seed: int = Field(DEFAULT_SEED, ge=0, description="seed of the bootstrap draws and tie-breaks")
    replicates: int = Field(DEFAULT_REPLICATES, ge=0, le=100_000, description="bootstrap replicates (0: no intervals)")
