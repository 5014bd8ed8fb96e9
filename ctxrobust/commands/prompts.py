"""`ctxrobust prompts`: write the exact model inputs of a release, as chat lines or OpenAI Batch input."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ctxrobust.commands.common import (
    RELEASE_HELP,
    _add_option_flags,
    _add_quiet,
    _add_sampling_flags,
    _frozen_release,
    _input_paths,
    _progress,
    _release_path,
    _requests,
    _stdout_is_terminal,
)
from ctxrobust.errors import CtxRobustError

HELP = "write the exact model inputs of a release as JSONL"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", help=RELEASE_HELP)
    _add_option_flags(p, "prompts")
    p.add_argument("-o", "--output", help="the JSONL file to write (default: standard output)")
    p.add_argument(
        "--format",
        choices=["chat", "openai-batch"],
        default="chat",
        help="chat: one request per line {id, dataset, item, condition, sample, messages, sampling, meta}; "
        "openai-batch: OpenAI Batch input lines (default: %(default)s)",
    )
    _add_sampling_flags(p)
    add_subset_flags(p)
    _add_quiet(p)


def add_subset_flags(parser: argparse.ArgumentParser) -> None:
    """--limit, --sample with its seed, --items: one of them, for `prompts` and `run` alike."""
    group = parser.add_argument_group("subset (a pilot: every request of each selected item is kept)")
    one = group.add_mutually_exclusive_group()
    one.add_argument("--limit", type=int, metavar="N", help="only the first N items in release order")
    one.add_argument(
        "--sample", type=int, metavar="N", help="N items drawn uniformly without replacement, seeded (the same items in prompts and run)"
    )
    one.add_argument(
        "--items", metavar="FILE", help="only the items listed in FILE: one id per line, or JSONL with an `item` or `id` field"
    )
    group.add_argument(
        "--sample-seed",
        dest="sample_seed",
        type=int,
        metavar="S",
        help="the seed of --sample (default: 0); --seed S gives it too for datasets whose prompts take no seed of their own",
    )


def subset_asked(args, dataset):
    """The subset the flags ask for, or None; called before the prompts are made (a --seed that seeds
    the draw is taken off `args`, see subsets.from_args)."""
    from ctxrobust.evaluation.run.subsets import from_args

    return from_args(args, "seed" in dataset.load("prompt_options").model_fields)


def selected(requests, subset):
    """(requests, selection): every request of the items the subset selects, with a line saying what was
    selected; the requests as they are and None when no subset is asked."""
    if subset is None:
        return requests, None
    from ctxrobust.evaluation.run.subsets import select, summary

    selection = select(requests, subset)
    print(summary(selection), file=sys.stderr)
    return selection.requests, selection


def _batch_prompts(args, plan_requests, target: Path | None, inputs=()) -> int:
    from ctxrobust.evaluation.formats.openai_batch import write_input

    if target is None or not args.model:
        raise CtxRobustError(
            "--format openai-batch needs -o FILE (parts are split at 50,000 lines or 200 MB) and --model NAME (the body's model)"
        )
    with _progress(args).stage("writing requests"):
        parts = write_input(plan_requests, args.model, target, inputs=inputs)
    for path, lines in parts:
        print(f"wrote {lines} request(s) to {path}", file=sys.stderr)
    return 0


def items_input(args) -> list[Path]:
    """The --items file as an input: an output may not overwrite it."""
    items = getattr(args, "items", None)
    return [Path(items)] if items else []


def run(args) -> int:
    from ctxrobust import registry
    from ctxrobust.output import atomic_open, check_output

    release = _frozen_release(_release_path(args.release))
    dataset = registry.get(release.dataset)
    subset = subset_asked(args, dataset)
    _, options, _, plan_requests = _requests(args, release, dataset)
    inputs = [*_input_paths(options), *items_input(args)]
    target = check_output(args.output, "-o", inputs) if args.output else None
    plan_requests, _ = selected(plan_requests, subset)
    if args.format == "openai-batch":
        return _batch_prompts(args, plan_requests, target, inputs)
    from ctxrobust.evaluation.run.requests import chat_line, check_unique

    requests = (chat_line(r, args.model) for r in check_unique(plan_requests))
    if target is None:
        # on a terminal the lines themselves show: no progress line among them
        count = _write_requests(requests, sys.stdout, _progress(args, quiet=_stdout_is_terminal()))
        print(f"wrote {count} request(s)", file=sys.stderr)
        return 0
    with atomic_open(target) as out:  # a failed run leaves the old file and no partial one
        count = _write_requests(requests, out, _progress(args))
    print(f"wrote {count} request(s) to {target}", file=sys.stderr)
    return 0


def _write_requests(requests, out, progress) -> int:
    """Write chat request lines to `out`, counted on the progress line; how many were written."""
    from ctxrobust.canonical import dumps

    count = 0
    with progress.stage("writing requests") as stage:
        for request in requests:
            out.write(dumps(request) + "\n")
            count += 1
            stage.advance()
    return count
