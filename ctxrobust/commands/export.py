"""`ctxrobust export lm-eval RELEASE DIR`: a release's requests as an lm-evaluation-harness task folder."""

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
)

HELP = "write a release's requests as a task folder for an evaluation runner (lm-evaluation-harness)"
RUNNERS = ("lm-eval",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ctxrobust.integrations.lm_eval_task import DEFAULT_MAX_GEN_TOKS

    parser.add_argument("runner", choices=RUNNERS, help="the evaluation runner to write tasks for (lm-eval: lm-evaluation-harness)")
    parser.add_argument("release", metavar="RELEASE", help=RELEASE_HELP)
    parser.add_argument("folder", metavar="DIR", help="the task folder to write (new, or empty): give it to lm_eval --include_path")
    parser.add_argument("--name", help="the task name, and the prefix of its parts' names (default: ctxrobust_<dataset>)")
    _add_option_flags(parser, "prompts")
    _add_sampling_flags(parser, model=False, max_tokens_default=f"{DEFAULT_MAX_GEN_TOKS}; lm-eval always sends one")
    _add_quiet(parser)


def run(args) -> int:
    from ctxrobust import registry
    from ctxrobust.evaluation.run.requests import check_unique
    from ctxrobust.integrations.lm_eval_task import check_folder, write_task_folder

    target = check_folder(Path(args.folder))  # before the release is read or anything written
    release = _frozen_release(_release_path(args.release))
    dataset = registry.get(release.dataset)
    _, options, _, requests = _requests(args, release, dataset)
    with _progress(args).stage("writing requests") as stage:
        written = write_task_folder(
            _counted(check_unique(requests), stage), dataset.name, target, args.name, inputs=[release.path, *_input_paths(options)]
        )
    for task in written.tasks:
        print(f"wrote {task.yaml} ({task.requests} request(s))", file=sys.stderr)
    print(
        f"wrote {written.folder}; run: lm_eval --include_path {written.folder} --tasks {written.entry} "
        "--model local-chat-completions --model_args base_url=URL/chat/completions,model=NAME "
        "--apply_chat_template --log_samples --output_path OUT, "
        f"then: ctxrobust score {args.release} OUT/<model>",
        file=sys.stderr,
    )
    return 0


def _counted(requests, stage):
    """The requests, each counted on the progress line as it is written."""
    for request in requests:
        stage.advance()
        yield request
