"""What several commands share: the source store, error and progress reporting, the flags made from a
dataset's options models, the sampling flags, and reading a release that is still as it was frozen.

Nothing heavy is imported at the top: the parser of every command is built from here.
"""

from __future__ import annotations

import argparse
import os
import sys
import typing
from pathlib import Path

from ctxrobust.errors import CtxRobustError

if typing.TYPE_CHECKING:
    from pydantic import BaseModel

    from ctxrobust import registry

OPTION_PARTS = {"prompts": "prompt_options", "score": "score_options"}
RELEASE_HELP = "a release folder, or hf://datasets/ORG/NAME@vX.Y.Z (downloaded from the Hub)"
MIRROR_HELP = "a source mirror folder laid out like fred/, situatedqa/, gsm_ic/, gsm8k/ (default: $SOURCES_MIRROR)"
OUTPUT_OPTIONS = ("export",)  # options fields that name a file the command writes


def _store(args=None):
    from ctxrobust.sources.store import SnapshotStore

    mirror = getattr(args, "mirror", None) if args is not None else None
    return SnapshotStore(mirror=Path(mirror) if mirror else None)


def _report_error(dataset: str, exc: CtxRobustError, store, verbose: bool) -> None:
    """One error line per dataset; for unavailable sources the full list follows (-v) or goes to a file it names."""
    from ctxrobust.sources.store import SnapshotsUnavailable

    if not isinstance(exc, SnapshotsUnavailable):
        print(f"error: {dataset}: {exc}", file=sys.stderr)
        return
    if verbose:
        print(f"error: {dataset}: {exc}", file=sys.stderr)
        for line in exc.details:
            print(f"  {line}", file=sys.stderr)
        return
    report = store.write_report(dataset, exc)
    where = f"full list in {report}" if report is not None else "rerun with -v for the full list"
    print(f"error: {dataset}: {exc}; {where}", file=sys.stderr)


def _progress(args, quiet: bool = False):
    """The command's progress reporter on standard error: silent off a terminal, under -q, or when `quiet`."""
    from ctxrobust.progress import Progress

    return Progress(sys.stderr, quiet=quiet or bool(getattr(args, "quiet", False)))


def _stdout_is_terminal() -> bool:
    """Whether standard output is a terminal (a person reads it), not a pipe or a file."""
    from ctxrobust.progress import is_terminal

    return is_terminal(sys.stdout)


def _print_failures(failures, dataset: str, version: str) -> None:
    from ctxrobust.release_files import printable

    for f in failures:
        print(printable(f"FAIL {dataset} {version} {f.file or '-'} {f.item or '-'} {f.check}: {f.message}"))


def _report_removed(result) -> None:
    for path in result.removed:
        print(f"removed {path}: the temporary folder of an interrupted build", file=sys.stderr)


def _add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line on standard error (it shows only on a terminal)")


def _release_path(text: str) -> Path:
    """A release folder as given, or one named hf://datasets/ORG/NAME@vX.Y.Z, downloaded from the Hub."""
    from ctxrobust.publish.download import release_path

    return release_path(text)


def _frozen_release(path: Path):
    """A release whose files still match their SHA256SUMS: prompts and scores are never made from a changed one."""
    from ctxrobust.release import Release
    from ctxrobust.validators.integrity import frozen_problems

    release = Release(path)
    changed = frozen_problems(release)
    if changed:
        first = changed[0]
        raise CtxRobustError(f"{path}: {first.file}: {first.message}; run `validate {path}` and use an intact release")
    return release


# --- flags made from each dataset's PromptOptions / ScoreOptions ---------------------------------------
def _option_fields(command: str) -> dict[str, list[tuple[str, typing.Any]]]:
    """Every option field of `command` over the registered datasets: name -> [(dataset, FieldInfo)]."""
    from ctxrobust import registry

    fields: dict[str, list[tuple[str, typing.Any]]] = {}
    for dataset in registry.datasets():
        model = dataset.load(OPTION_PARTS[command])
        for name, info in model.model_fields.items():
            fields.setdefault(name, []).append((dataset.name, info))
    return fields


def _literal_values(annotation: typing.Any) -> list | None:
    """The values a Literal annotation allows (inside Optional[...] too), else None."""
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Literal:
            return list(typing.get_args(arg))
    return None


def _field_help(info) -> str:
    """A field's description with what it lacks of its values, its default and whether it is required:
    "(one of a, b)", "(default: X)", "(required)"; a description that already names them stays as it is."""
    import re

    text, notes = info.description or "", []
    values = _literal_values(info.annotation)
    if values and not all(re.search(rf"(?<![\w-]){re.escape(str(v))}(?![\w-])", text) for v in values):
        notes.append(f"one of {', '.join(map(str, values))}")
    if info.is_required():
        notes.append("required")
    elif info.default is not None and info.default is not False and "default" not in text:
        default = info.default
        notes.append(f"default: {', '.join(map(str, default)) if isinstance(default, (list, tuple)) else default}")
    return f"{text} ({'; '.join(notes)})" if notes else text


def _option_help(owners: list[tuple[str, typing.Any]]) -> str:
    """One flag's help over the datasets that take it: each text once, after the datasets it holds for
    ("gsm-ic, misleadqa: refuse ..."), not once per dataset."""
    texts: dict[str, list[str]] = {}
    for dataset, info in owners:
        texts.setdefault(_field_help(info), []).append(dataset)
    return "; ".join(f"{', '.join(datasets)}: {text}" for text, datasets in texts.items())


def _add_option_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """One flag per options field; its type from the annotation, its help from each dataset's description
    (with its default and values), each text once."""
    from ctxrobust.options import flag

    for name, owners in sorted(_option_fields(command).items()):
        info = owners[0][1]
        annotation = info.annotation
        args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
        kind = args[0]
        helps = _option_help(owners)
        if kind is bool:
            parser.add_argument(flag(name), dest=name, action="store_true", default=None, help=helps)
            continue
        nargs, element = None, kind
        if typing.get_origin(kind) is list:
            nargs, element = "+", typing.get_args(kind)[0]
        converter = element if element in (int, float) else str
        choices = list(typing.get_args(element)) if typing.get_origin(element) is typing.Literal else None
        if choices and len(owners) > 1:
            choices = None  # datasets differ: each model checks its own values
        shown = _literal_values(annotation) if len(owners) == 1 else None  # the values, shown (the model checks them)
        parser.add_argument(
            flag(name),
            dest=name,
            type=converter,
            nargs=nargs,
            default=None,
            help=helps,
            metavar=("{" + ",".join(map(str, shown)) + "}" if shown else name.upper()) if not choices else None,
            choices=choices,
        )


def _options(args, dataset: registry.Dataset, command: str) -> BaseModel:
    """The dataset's options model from the flags given; a flag that does not apply to it is refused."""
    from ctxrobust.options import parse_options

    given = {name: getattr(args, name) for name in _option_fields(command) if getattr(args, name, None) is not None}
    return parse_options(dataset.load(OPTION_PARTS[command]), given, f"{dataset.name} {command}")


def _input_paths(options: BaseModel) -> list[Path]:
    """The files an options model names as inputs (e.g. --benchmark), each a regular file if it is there
    (a FIFO or device would hang or never end); an output may not be one of them."""
    from ctxrobust.options import flag

    inputs = []
    for name, value in options:
        if not isinstance(value, Path) or name in OUTPUT_OPTIONS:
            continue
        if os.path.lexists(value) and not value.is_dir() and not value.is_file():
            raise CtxRobustError(f"{flag(name)} {value}: is not a regular file (a FIFO or device cannot be read as one); give the file")
        inputs.append(value)
    return inputs


# --- model runs and request formats -----------------------------------------------------------------
SAMPLING_FLAGS = ("temperature", "top_p", "max_tokens", "samples", "baseline_samples")


# the sampling plans' defaults as the help states them (each dataset's prompts.PLAN; a test keeps them equal):
# reading the plans here would import every dataset's prompt code on every command
PLAN_DEFAULTS = {
    "temperature": "0 for gsm-ic and misleadqa, 1 for pseudowords",
    "samples": "1 for gsm-ic and misleadqa, 2 for pseudowords",
    "baseline_samples": "20 for pseudowords",
}


def _add_sampling_flags(p: argparse.ArgumentParser, model: bool = True, max_tokens_default: str = "not sent") -> None:
    """The sampling settings of a run plan; `model`: whether the plan names the model sent in each request."""
    if model:
        p.add_argument("--model", help="the model name sent in each request (openai-batch bodies, run)")
    p.add_argument("--temperature", type=float, help=f"sampling temperature (default: the paper's, {PLAN_DEFAULTS['temperature']})")
    p.add_argument("--top-p", dest="top_p", type=float, help="nucleus sampling (default: not sent)")
    p.add_argument("--max-tokens", dest="max_tokens", type=int, help=f"longest answer in tokens (default: {max_tokens_default})")
    p.add_argument("--samples", type=int, help=f"responses per condition (default: the paper's, {PLAN_DEFAULTS['samples']})")
    p.add_argument(
        "--baseline-samples",
        dest="baseline_samples",
        type=int,
        help=f"responses without context, for datasets with a no-context condition (default: the paper's, {PLAN_DEFAULTS['baseline_samples']})",
    )


def _requests(args, release, dataset):
    """(module, options, plan, requests) of the release: the dataset's sampling plan with the flags given."""
    from ctxrobust.evaluation.run.requests import SamplingPlan
    from ctxrobust.options import parse_options

    options = _options(args, dataset, "prompts")
    _input_paths(options)  # an input that is a FIFO or device is refused before anything opens it
    module = dataset.load("prompts")
    given = {name: getattr(args, name) for name in SAMPLING_FLAGS if getattr(args, name, None) is not None}
    plan = parse_options(SamplingPlan, {**module.PLAN.model_dump(), **given}, f"{dataset.name} sampling plan")
    return module, options, plan, module.requests(release, options, plan)
