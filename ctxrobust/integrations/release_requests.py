"""A release's requests for a runner's task, from Python: what `ctxrobust prompts` writes, built the same
way (the commands' own path) from options given as a dict, as a runner passes task arguments."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Iterator

from ctxrobust.errors import CtxRobustError

SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "samples", "baseline_samples")
TASK_FOLDER = Path(__file__).resolve().parent  # where the Inspect task file (inspect.py) lives


def user_path(text: str | os.PathLike) -> Path:
    """A path as the user typed it: a relative one is taken from the working folder, the one the command
    was started in."""
    path = Path(text).expanduser()
    if path.is_absolute():
        return path
    base = Path.cwd()
    # `inspect eval ctxrobust/integrations/inspect.py` builds the task inside the task file's folder (Inspect's
    # loader chdirs there), so only then is the folder the command was started in $PWD (the shell's)
    started = os.environ.get("PWD")
    if started and base.resolve() == TASK_FOLDER and Path(started).is_absolute() and Path(started).is_dir():
        base = Path(started)
    return base / path


def load_release(release: str | os.PathLike, dataset: str | None = None):
    """The release (a folder, or hf://datasets/ORG/NAME@vX.Y.Z), refused if its files no longer match
    their SHA256SUMS or if it is not of `dataset`."""
    from ctxrobust.commands.common import _frozen_release, _release_path

    text = os.fspath(release)
    loaded = _frozen_release(_release_path(text) if text.startswith("hf://") else user_path(text))
    if dataset is not None and loaded.dataset != dataset:
        raise CtxRobustError(f"{loaded.path}: a {loaded.dataset} release, not {dataset}")
    return loaded


def release_requests(release, options: dict | None = None, sampling: dict | None = None) -> tuple[str, Iterator]:
    """(dataset name, its Requests) of a loaded release: `options` are the dataset's prompt options (as
    `ctxrobust prompts` takes them, e.g. {"prompt": "cf"}), `sampling` overrides of its paper's plan."""
    from ctxrobust import registry
    from ctxrobust.commands.common import _option_fields, _requests

    dataset = registry.get(release.dataset)
    given = {k: v for k, v in (options or {}).items() if v is not None}
    unknown = sorted(set(given) - set(_option_fields("prompts")))
    if unknown:  # an option no dataset has is refused, not passed over
        takes = ", ".join(sorted(dataset.load("prompt_options").model_fields)) or "none"
        raise CtxRobustError(f"{', '.join(unknown)}: not a prompt option ({dataset.name} takes: {takes})")
    for name, info in dataset.load("prompt_options").model_fields.items():  # input files: where the command started
        if isinstance(given.get(name), (str, os.PathLike)) and "Path" in str(info.annotation):
            given[name] = user_path(given[name])
    overrides = {k: v for k, v in (sampling or {}).items() if v is not None}
    unknown = sorted(set(overrides) - set(SAMPLING_KEYS))
    if unknown:
        raise CtxRobustError(f"{', '.join(unknown)}: not a sampling setting (they are {', '.join(SAMPLING_KEYS)})")
    _, _, _, requests = _requests(argparse.Namespace(**given, **overrides), release, dataset)
    return dataset.name, requests
