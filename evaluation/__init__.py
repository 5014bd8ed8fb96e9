"""Evaluation: prompts out, predictions in, the papers' tables back."""
from __future__ import annotations

import importlib
from typing import Callable

from ctxrobust.errors import CtxRobustError

# dataset -> module holding `prompts(release, options)`
PROMPTS: dict[str, str] = {
    "gsm-ic": "evaluation.gsm_ic_prompts",
    "misleadqa": "evaluation.misleadqa_prompts",
    "pseudowords": "evaluation.pseudowords_prompts",
}
# dataset -> module holding `score(release, predictions, options)`, `render_markdown(report)`, `render_html(report)`
SCORERS: dict[str, str] = {
    "gsm-ic": "evaluation.gsm_ic",
    "misleadqa": "evaluation.misleadqa",
    "pseudowords": "evaluation.pseudowords",
}


# the command-line options each dataset's prompts and scorer understand; any other given option is refused
PROMPT_OPTIONS: dict[str, set[str]] = {
    "gsm-ic": {"prompt", "instruction"},
    "misleadqa": {"prompt"},
    "pseudowords": {"benchmark", "seed", "kinds", "lengths"},
}
SCORE_OPTIONS: dict[str, set[str]] = {
    "gsm-ic": {"strict", "seed", "replicates"},
    "misleadqa": {"strict", "seed", "replicates", "lenient_letters", "min_clusters"},
    "pseudowords": {"strict", "seed", "replicates", "export"},
}


def _function(table: dict[str, str], dataset: str, name: str) -> Callable:
    if dataset not in table:
        raise CtxRobustError(f"no evaluation for dataset {dataset!r}; known: {', '.join(sorted(table))}")
    return getattr(importlib.import_module(table[dataset]), name)


def prompts_for(dataset: str) -> Callable:
    return _function(PROMPTS, dataset, "prompts")


def scorer_for(dataset: str, name: str = "score") -> Callable:
    return _function(SCORERS, dataset, name)
