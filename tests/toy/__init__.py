"""A tiny fourth dataset defined only in the tests: each part written as docs/architecture.md's
"Adding a dataset" says, registered with one `Dataset(...)` declaration (`DATASET` below)."""

from __future__ import annotations

from ctxrobust.registry import Dataset

DATASET = Dataset(
    name="toy",
    builder="toy.builder:ToyBuilder",
    checks="toy.checks",
    prompts="toy.evaluation",
    prompt_options="toy.evaluation:PromptOptions",
    scorer="toy.evaluation:score",
    score_options="toy.evaluation:ScoreOptions",
    renderers={"md": "toy.evaluation:render_markdown"},
    card="toy:card.json",
    schemas=("toy.item", "predictions.toy"),
    schema_package="toy",
)
