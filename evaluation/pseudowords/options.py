"""Pseudowords command-line options: each field is one flag of `ctxrobust prompts` or `ctxrobust score`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from ctxrobust.evaluation import defaults

DEFAULT_SEED = 0
MAX_REPLICATES = 100_000  # bounds the work (and memory) one command may ask for


class PromptOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    benchmark: Path = Field(description="a JSONL of {id, question, options?, answer?} to prepend the contexts to")
    seed: Optional[int] = Field(None, ge=0, description="seed of the SQA histories (default: the release's build seed)")
    kinds: Optional[list[str]] = Field(None, description="context kinds CHA TOK WEB SQA (default: CHA, the paper's main setting)")
    lengths: Optional[list[int]] = Field(None, description="context lengths in tokens (default: the release's longest)")


class ScoreOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    strict: bool = Field(False, description="refuse to score a file with any bad row")
    requests: Optional[Path] = Field(
        None, description="the requests `prompts` wrote (JSONL) or a `run` record: score only the items they ask for"
    )
    seed: int = Field(DEFAULT_SEED, ge=0, description="seed of the bootstrap, null experiments and splits")
    replicates: int = Field(
        defaults.QUESTION_BOOTSTRAP_REPLICATES, ge=0, le=MAX_REPLICATES, description="question-bootstrap replicates (0: no intervals)"
    )
    null_experiments: int = Field(
        defaults.NULL_EXPERIMENTS, ge=1, le=MAX_REPLICATES, description="synthetic null experiments of the noise floor (Section 2)"
    )
    splits: int = Field(defaults.SPLITS, ge=1, le=MAX_REPLICATES, description="symmetric splits of the split-sample WTD (Appendix A)")
    split_intervals: Literal["all-splits", "per-split"] = Field(
        "all-splits",
        description="intervals of the split-sample correlates: all-splits recomputes the mean over every split per replicate (Appendix B); per-split uses split b mod splits for replicate b (the earlier, wider scheme)",
    )
    shift_null_simulations: Optional[int] = Field(
        None,
        ge=0,
        le=defaults.MAX_SIMULATIONS,
        description="simulations of Appendix F's homogeneous-shift null (default: 200 where questions x splits x 200 is at most 70,000,000, else not computed; 0: not computed; at most 1,000,000,000 question-splits)",
    )
    annotations: Optional[Path] = Field(
        None, description="JSONL of {id, ambiguity}: per-question ambiguity levels for Table 3's ambiguity rows (Appendix E)"
    )
    jobs: Optional[int] = Field(
        None,
        ge=1,
        le=64,
        description="worker processes for the per-model statistics (default: the CPU count, at most 4); the figures do not depend on it",
    )
    export: Optional[Path] = Field(
        None, description="write per-example changes (id, model, s_i0, s_ic, delta_i) to this CSV or Parquet file"
    )
    benchmark: Optional[Path] = Field(
        None, description="the benchmark JSONL whose 'answer' grades 'response' rows (and decodes long request ids)"
    )
