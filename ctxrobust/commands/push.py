"""`ctxrobust push`: upload a release to the Hugging Face Hub (or write what would be uploaded)."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "upload a release to the Hugging Face Hub"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", help="a release folder")
    p.add_argument("--repo", required=True, help="the Hub dataset repository, ORG/NAME (created if absent)")
    p.add_argument("--dry-run", dest="dry_run", metavar="DIR", help="write the folder that would be uploaded, upload nothing")


def run(args) -> int:
    from ctxrobust.publish.hub import push_release

    return push_release(Path(args.release), args.repo, dry_run=Path(args.dry_run) if args.dry_run else None)
