"""Named checks: each a function of a release that yields its failures."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:
    from ctxrobust.progress import Progress
    from ctxrobust.release import Release


@dataclass(frozen=True)
class Failure:
    """One failed expectation: which file and item, and what was expected."""

    file: str | None
    item: str | None
    message: str
    check: str = ""


CheckFn = Callable[["Release"], Iterable[Failure]]

# dataset ("*" for every dataset) -> check name -> function
_CHECKS: dict[str, dict[str, CheckFn]] = {}
GENERIC_MODULES = ("ctxrobust.validators.integrity", "ctxrobust.validators.structure")


def check(dataset: str, name: str) -> Callable[[CheckFn], CheckFn]:
    """Register `fn` as check `name` for `dataset` ("*" runs on every release)."""

    def register(fn: CheckFn) -> CheckFn:
        _CHECKS.setdefault(dataset, {})[name] = fn
        return fn

    return register


def _load(dataset: str) -> None:
    """Import the generic checks and the dataset's own (its registry entry names the module)."""
    from ctxrobust import registry

    for module in (*GENERIC_MODULES, registry.get(dataset).checks):
        importlib.import_module(module)


def generic_checks() -> dict[str, CheckFn]:
    """The checks every release gets, whatever its dataset."""
    for module in GENERIC_MODULES:
        importlib.import_module(module)
    return {name: _CHECKS["*"][name] for name in sorted(_CHECKS.get("*", {}))}


def checks_for(dataset: str) -> dict[str, CheckFn]:
    """Every check that applies to `dataset`, generic ones first, in name order within each."""
    _load(dataset)
    ordered: dict[str, CheckFn] = {}
    for key in ("*", dataset):
        for name in sorted(_CHECKS.get(key, {})):
            ordered[name] = _CHECKS[key][name]
    return ordered


def run_checks(
    release: Release,
    skip: Iterable[str] = (),
    only: Iterable[str] | None = None,
    progress: Progress | None = None,
    label: str = "checks",
) -> dict[str, list[Failure]]:
    """Run every check for the release's dataset (or the generic ones named in `only`); a check that
    crashes is itself a failure. `progress` shows a stage named `label`: the checks done, and the one
    that runs."""
    from ctxrobust.progress import SILENT

    results: dict[str, list[Failure]] = {}
    skipped = set(skip)
    chosen = None if only is None else set(only)
    checks = checks_for(release.dataset) if chosen is None else generic_checks()
    todo = {name: fn for name, fn in checks.items() if name not in skipped and (chosen is None or name in chosen)}
    with (progress or SILENT).stage(label, total=len(todo)) as stage:
        for name, fn in todo.items():
            stage.describe(name)
            found: list[Failure] = []
            try:
                for f in fn(release):
                    found.append(Failure(f.file, f.item, f.message, name))
            except Exception as exc:  # reported, never hidden; failures found before it are kept
                found.append(Failure(None, None, f"check could not run: {type(exc).__name__}: {exc}", name))
            results[name] = found
            stage.advance(failed=bool(found))
    return results
