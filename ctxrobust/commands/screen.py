"""`ctxrobust screen`: flag candidates from screening models' judgments (MisleadQA App. B.1)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ctxrobust.commands.common import _frozen_release
from ctxrobust.errors import CtxRobustError

HELP = "flag candidates from screening models' judgments (MisleadQA App. B.1)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", help="a release folder")
    p.add_argument("judgments", nargs="+", help="one judgments JSONL file per screening model (answers to `prompts --prompt screen`)")
    p.add_argument("-o", "--output", required=True, help="the review sheet (.jsonl); its .csv and .table9.md are written beside it")


def run(args) -> int:
    from ctxrobust import registry
    from ctxrobust.canonical import dumps
    from ctxrobust.output import check_output

    release = _frozen_release(Path(args.release))
    dataset = registry.get(release.dataset)
    if dataset.screen is None:
        raise CtxRobustError(f"{release.path}: dataset {release.dataset} has no screening stage; `screen` is for misleadqa releases")
    judgments = [Path(p) for p in args.judgments]
    summary = dataset.load("screen")(release, judgments, check_output(args.output, "-o", judgments))
    for problem in summary["problems"]:
        print(f"warning: {problem}", file=sys.stderr)
    sys.stdout.write(dumps({k: v for k, v in summary.items() if k != "problems"}) + "\n")
    print(
        f"flagged {summary['flagged']} of {summary['candidates']} candidate(s); {summary['unparseable']} unparseable answer(s); "
        f"wrote {', '.join(summary['files'])}",
        file=sys.stderr,
    )
    return 0
