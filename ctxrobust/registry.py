"""Every dataset, declared once: its builder, checks, prompts, scorer, renderers, card text, schemas
and sources.

A declaration names each part by its import path ("module:attribute"), so nothing here imports a
dataset module: the core reaches a dataset only through `get(name).load(part)`. Adding a dataset
means writing its modules and adding one `Dataset(...)` line below (or, for a dataset outside this
package, an entry point in the `ctxrobust.datasets` group, or `register()` at run time).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata, resources
from typing import Any

from ctxrobust.errors import CtxRobustError

ENTRY_POINT_GROUP = "ctxrobust.datasets"
PARTS = ("builder", "checks", "prompts", "prompt_options", "scorer", "score_options")


@dataclass(frozen=True, eq=False)
class Dataset:
    """One dataset's parts. Callables and models are "module:attribute"; `checks` is a module whose
    `@check` functions register on import; `card` is "package:file.json" holding the card text."""

    name: str
    builder: str  # a Builder subclass; its `Config` is the build configuration model
    checks: str
    prompts: str  # module: PLAN (its paper's SamplingPlan), requests(release, PromptOptions, plan) -> Requests,
    #               prediction(key, model, response) -> its native predictions row
    prompt_options: str  # pydantic model: one command-line flag per field
    scorer: str  # (release, predictions path, ScoreOptions) -> report dict
    score_options: str
    renderers: dict[str, str]  # report format ("md", "html") -> (report) -> text
    card: str | dict  # "package:file.json", or the card text itself
    schemas: tuple[str, ...]  # JSON Schema stems of its items and predictions
    schema_package: str = "ctxrobust.schemas"  # where its `<stem>.schema.json` files are
    sources: tuple[str, ...] = ()  # lock-name prefixes of the snapshots its builder may read
    code: tuple[str, ...] = field(default=())  # packages beyond the builder's whose files shape its bytes
    leaderboard: str | dict = ""  # a dict (or "module:attr" naming one): "headline" [(metric, "higher"|"lower")], "invalid"
    #   [metric], "shared_draws" bool, "differences" "module:attr" or None; each metric declared in ctxrobust.evaluation.metrics,
    #   whose direction is the one that counts
    screen: str | None = (
        None  # (release, judgments paths, output) -> summary dict: `ctxrobust screen`, if the dataset has a screening stage
    )

    def load(self, part: str) -> Any:
        """The object a part names, imported on first use."""
        target = self.renderers[part[len("render_") :]] if part.startswith("render_") else getattr(self, part)
        if isinstance(target, dict):
            return target
        module_name, _, attribute = target.partition(":")
        try:
            module = importlib.import_module(module_name)
            return getattr(module, attribute) if attribute else module
        except (ImportError, AttributeError) as exc:
            raise CtxRobustError(f"dataset {self.name}: its {part} {target!r} cannot be loaded ({exc})") from None

    @property
    def builder_cls(self):
        return self.load("builder")

    @property
    def config_cls(self):
        return self.builder_cls.Config

    @cached_property
    def card_text(self) -> dict:
        if isinstance(self.card, dict):
            return self.card
        package, _, name = self.card.partition(":")
        try:
            return json.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))
        except (OSError, ValueError, ModuleNotFoundError) as exc:
            raise CtxRobustError(f"dataset {self.name}: card text {self.card!r} unreadable ({exc})") from None

    @property
    def licence(self) -> str:
        return self.card_text["licence"]


_DATASETS: dict[str, Dataset] = {}

# the leaderboards of several submissions: the headline figures (the first ranks by default), the invalid-response figure
GSM_IC_LEADERBOARD = {  # Section 3.2: accuracies; paired differences by base problem
    "headline": [("micro", "higher"), ("macro", "higher"), ("4k.micro", "higher"), ("4k.macro", "higher"), ("accuracy.base", "higher")],
    "invalid": ["invalid", "4k.invalid"],
    "shared_draws": True,  # one resampling of units for every model
    "differences": "ctxrobust.evaluation.gsm_ic.differences:paired_differences",
}
MISLEADQA_LEADERBOARD = {  # Section 4.2, Table 2: lure rates
    "headline": [("LR.F", "lower"), ("LR.S", "lower"), ("RLR.F", "lower"), ("RLR.S", "lower")],
    "invalid": ["responses.invalid.rate"],
    "shared_draws": True,  # one resampling of units for every model
    "differences": "ctxrobust.evaluation.misleadqa.differences:paired_differences",
}
PSEUDOWORDS_LEADERBOARD = {  # Section 2, Table 1: noise-adjusted instability and tail degradation
    "headline": [("INS.adjusted", "lower"), ("WTD.adjusted", "lower"), ("accuracy.baseline", "higher"), ("accuracy.context", "higher")],
    "invalid": [],
    "shared_draws": False,  # each model resamples questions with its own stream; the differences draw their own, paired
    "differences": "ctxrobust.evaluation.pseudowords.differences:paired_differences",
}


def register(dataset: Dataset) -> Dataset:
    """Add a dataset (replacing one of the same name)."""
    _DATASETS[dataset.name] = dataset
    return dataset


register(
    Dataset(
        name="gsm-ic",
        builder="ctxrobust.builders.gsm_ic:GsmIcBuilder",
        checks="ctxrobust.validators.gsm_ic",
        prompts="ctxrobust.evaluation.gsm_ic.prompts",
        prompt_options="ctxrobust.evaluation.gsm_ic.options:PromptOptions",
        scorer="ctxrobust.evaluation.gsm_ic.scorer:score",
        score_options="ctxrobust.evaluation.gsm_ic.options:ScoreOptions",
        renderers={"md": "ctxrobust.evaluation.gsm_ic.render:render_markdown", "html": "ctxrobust.evaluation.gsm_ic.render:render_html"},
        card="ctxrobust.builders.gsm_ic:card.json",
        leaderboard=GSM_IC_LEADERBOARD,
        schemas=("gsm-ic.base", "gsm-ic.variant", "gsm-ic.gsm-ic-4k", "gsm-ic.upstream", "predictions.gsm-ic"),
        sources=("gsm_ic/", "gsm8k/"),
    )
)
register(
    Dataset(
        name="misleadqa",
        builder="ctxrobust.builders.misleadqa:MisleadQABuilder",
        checks="ctxrobust.validators.misleadqa",
        prompts="ctxrobust.evaluation.misleadqa.prompts",
        prompt_options="ctxrobust.evaluation.misleadqa.options:PromptOptions",
        scorer="ctxrobust.evaluation.misleadqa.scorer:score",
        score_options="ctxrobust.evaluation.misleadqa.options:ScoreOptions",
        renderers={
            "md": "ctxrobust.evaluation.misleadqa.render:render_markdown",
            "html": "ctxrobust.evaluation.misleadqa.render:render_html",
        },
        card="ctxrobust.builders.misleadqa:card.json",
        leaderboard=MISLEADQA_LEADERBOARD,
        screen="ctxrobust.evaluation.misleadqa.screening:main",
        schemas=("misleadqa.item", "misleadqa.candidate", "misleadqa.exclusion", "misleadqa.audit", "predictions.misleadqa"),
        sources=("fred/", "situatedqa/", "situatedqa_raw/", "ramdocs/", "condambigqa/"),
    )
)
register(
    Dataset(
        name="pseudowords",
        builder="ctxrobust.builders.pseudowords:PseudowordsBuilder",
        checks="ctxrobust.validators.pseudowords",
        prompts="ctxrobust.evaluation.pseudowords.prompts",
        prompt_options="ctxrobust.evaluation.pseudowords.options:PromptOptions",
        scorer="ctxrobust.evaluation.pseudowords.scorer:score",
        score_options="ctxrobust.evaluation.pseudowords.options:ScoreOptions",
        renderers={
            "md": "ctxrobust.evaluation.pseudowords.render:render_markdown",
            "html": "ctxrobust.evaluation.pseudowords.render:render_html",
        },
        card="ctxrobust.builders.pseudowords:card.json",
        leaderboard=PSEUDOWORDS_LEADERBOARD,
        schemas=("pseudowords.vocabulary", "pseudowords.contexts", "predictions.pseudowords"),
    )
)

_plugins_loaded = False


def _load_plugins() -> None:
    """Datasets other distributions declare under the `ctxrobust.datasets` entry-point group."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        declared = entry.load()
        if isinstance(declared, Dataset):
            register(declared)


def names() -> list[str]:
    _load_plugins()
    return sorted(_DATASETS)


def datasets() -> list[Dataset]:
    return [_DATASETS[name] for name in names()]


def get(name: str) -> Dataset:
    _load_plugins()
    if name not in _DATASETS:
        raise CtxRobustError(f"unknown dataset {name!r}; choose one of: {', '.join(names())}")
    return _DATASETS[name]
