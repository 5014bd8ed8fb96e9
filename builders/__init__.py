"""Dataset builders, by dataset name."""
from __future__ import annotations

import importlib

from ctxrobust.errors import CtxRobustError

# dataset name -> (module, class)
REGISTRY: dict[str, tuple[str, str]] = {
    "gsm-ic": ("builders.gsm_ic", "GsmIcBuilder"),
    "misleadqa": ("builders.misleadqa", "MisleadQABuilder"),
    "pseudowords": ("builders.pseudowords", "PseudowordsBuilder"),
}


def dataset_names() -> list[str]:
    return sorted(REGISTRY)


def get_builder(name: str):
    """The Builder class for a dataset name."""
    if name not in REGISTRY:
        raise CtxRobustError(f"unknown dataset {name!r}; choose one of: {', '.join(dataset_names())}")
    module, cls = REGISTRY[name]
    return getattr(importlib.import_module(module), cls)
