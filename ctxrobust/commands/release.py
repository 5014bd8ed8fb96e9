"""`ctxrobust release`: build several datasets at one version; a failed build does not stop the others."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ctxrobust.commands.common import MIRROR_HELP, _add_quiet, _print_failures, _progress, _report_error, _report_removed, _store
from ctxrobust.errors import CtxRobustError, ValidationFailed

HELP = "build several datasets at one version (default: all)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ctxrobust import registry

    p.add_argument("--version", required=True, help="the release version (e.g. 1.0.0)")
    p.add_argument("--datasets", nargs="+", help=f"dataset names, space or comma separated (default: all of {', '.join(registry.names())})")
    p.add_argument("--out", default="releases", help="the releases folder (default: %(default)s)")
    p.add_argument("--mirror", help=MIRROR_HELP)
    p.add_argument("-v", "--verbose", action="store_true", help="list every missing or mismatching source file")
    _add_quiet(p)


def run(args) -> int:
    """Build several datasets; a dataset whose build fails does not stop the others."""
    from ctxrobust import registry
    from ctxrobust.build import build_release, check_out_root, check_version

    check_version(args.version)
    check_out_root(Path(args.out))
    names = registry.names() if not args.datasets else [n for chunk in args.datasets for n in chunk.replace(",", " ").split()]
    store, failed, progress = _store(args), [], _progress(args)
    for name in names:
        started = time.perf_counter()
        try:
            result = build_release(name, args.version, {}, Path(args.out), store, progress)
        except ValidationFailed as exc:
            _print_failures(exc.failures, name, args.version)
            print(f"error: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        except CtxRobustError as exc:
            _report_error(name, exc, store, args.verbose)
            failed.append(name)
            continue
        store.clear_report(name)
        _report_removed(result)
        print(f"{result.status} {result.path} in {time.perf_counter() - started:.1f}s")
    if failed:
        print(f"{len(failed)} of {len(names)} dataset(s) not built: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
