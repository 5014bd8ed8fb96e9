"""MisleadQA command-line options: each field is one flag of `ctxrobust prompts` or `ctxrobust score`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from ctxrobust.evaluation import defaults

MIN_CLUSTERS = 20  # App. C.2: a model enters inference if its A_m covers at least 20 source clusters


class PromptOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: Literal["original", "cf", "scope", "screen"] = Field(
        "original",
        description="original (Figure 4), cf: context-faithful (Figure 5b), scope: scope judgment of G, S, F (Figure 5a) "
        "or screen: the six screening criteria for every candidate (App. B.1)",
    )
    option_orders: Optional[int] = Field(
        None,
        ge=1,
        le=4,
        description="the option-order check (§6.3, App. D.6): each item without context, with S alone and with F alone under "
        "the first K cyclic rotations of options A-D (E fixed; the paper uses 3), the order recorded in each request id",
    )
    diagnostic_sample: bool = Field(
        False, description="only the 200-item diagnostic sample of App. D.4 (40 main items per source-scope group, seed 2027)"
    )


class ScoreOptions(BaseModel):
    """The scorer's options, recorded as the report's "parameters"."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strict: bool = Field(False, description="refuse to score a file with any bad row")
    requests: Optional[Path] = Field(
        None, description="the requests `prompts` wrote (JSONL) or a `run` record: score only the items they ask for"
    )
    lenient_letters: bool = Field(
        False,
        description="accept 'B.' and '(B)' as well as a bare letter (App. C.1 reads only a bare letter), and scope labels in any case "
        "with a final period",
    )
    replicates: int = Field(
        defaults.CLUSTER_BOOTSTRAP_REPLICATES, ge=0, le=100_000, description="cluster-bootstrap replicates (0: no intervals)"
    )
    seed: int = Field(defaults.CLUSTER_BOOTSTRAP_SEED, ge=0, description="seed of the bootstrap draws")
    min_clusters: int = Field(
        MIN_CLUSTERS, ge=0, description="source clusters a model's A_m must cover for it to enter inference (App. C.2)"
    )
    exclude_models: Optional[list[str]] = Field(
        None, max_length=100, description='also report the means without these models (Table 2\'s "w/o" rows), with their intervals'
    )

    def parameters(self) -> dict:
        return {
            "replicates": self.replicates,
            "seed": self.seed,
            "lenient_letters": self.lenient_letters,
            "min_clusters": self.min_clusters,
            "exclude_models": sorted(self.exclude_models) if self.exclude_models else None,
            "levels": {"primary": defaults.PRIMARY_LEVEL, "other": defaults.LEVEL},
        }
