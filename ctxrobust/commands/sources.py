"""`ctxrobust sources`: fill the source cache, every file checked against the lock."""

from __future__ import annotations

import argparse

from ctxrobust.commands.common import MIRROR_HELP, _report_error, _store
from ctxrobust.errors import SourceError

HELP = "fill the source cache, verifying every sha256 against the lock"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("names", nargs="*", help="snapshot names (default: all in the lock)")
    p.add_argument("--mirror", help=MIRROR_HELP)
    p.add_argument("-v", "--verbose", action="store_true", help="list every missing or mismatching source file")


def run(args) -> int:
    store = _store(args)
    try:
        store.fill(args.names or None, report=lambda name, how: print(f"{how:10s} {name}", flush=True))
    except SourceError as exc:
        _report_error("sources", exc, store, args.verbose)
        return 2
    store.clear_report("sources")
    return 0
