"""`ctxrobust build`: build one dataset release, its settings from the builder's Config (`--set`)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ctxrobust.commands.common import MIRROR_HELP, _add_quiet, _print_failures, _progress, _report_error, _report_removed, _store
from ctxrobust.errors import CtxRobustError, SourceError, ValidationFailed

HELP = "build one dataset release"
ADD_HELP = False  # BuildHelp stands for -h: the usual help, then the dataset's settings


class BuildHelp(argparse.Action):
    """`build DATASET --help`: the usual help, then the dataset's settings (from its builder's Config)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from ctxrobust import registry
        from ctxrobust.settings_help import describe_settings

        parser.print_help()
        names = [namespace.dataset] if getattr(namespace, "dataset", None) else registry.names()
        for name in names:
            print(f"\nsettings of {name} (--set KEY=VALUE; VALUE as JSON, or a plain string):")
            print(describe_settings(registry.get(name).config_cls))
        parser.exit()


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ctxrobust import registry

    p.add_argument(
        "-h", "--help", action=BuildHelp, help="show this help and the settings of DATASET (of every dataset without one), then exit"
    )
    p.add_argument("dataset", choices=registry.names(), help="the dataset to build")
    p.add_argument("--version", required=True, help="the release version; names the folder and the Hub tag (e.g. 1.0.0)")
    p.add_argument("--seed", type=int, help="the build seed, recorded in the manifest (default: the builder's, 0)")
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a build setting (VALUE as JSON, or a plain string); `ctxrobust build DATASET --help` lists the settings",
    )
    p.add_argument("--out", default="releases", help="the releases folder (default: %(default)s)")
    p.add_argument("--mirror", help=MIRROR_HELP)
    p.add_argument("-v", "--verbose", action="store_true", help="list every missing or mismatching source file")
    _add_quiet(p)


def _overrides(args) -> dict:
    overrides = {}
    for pair in args.set or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CtxRobustError(f"--set {pair!r}: expected KEY=VALUE (VALUE as JSON, or a plain string)")
        try:
            overrides[key] = json.loads(value)
        except ValueError:
            overrides[key] = value
    if args.seed is not None:
        overrides["seed"] = args.seed
    return overrides


def run(args) -> int:
    from ctxrobust.build import build_release

    started = time.perf_counter()
    store = _store(args)
    try:
        result = build_release(args.dataset, args.version, _overrides(args), Path(args.out), store, _progress(args))
    except ValidationFailed as exc:
        _print_failures(exc.failures, args.dataset, args.version)
        raise
    except SourceError as exc:
        _report_error(args.dataset, exc, store, args.verbose)
        return 2
    store.clear_report(args.dataset)
    _report_removed(result)
    rows = ", ".join(f"{f['name']} {f['rows']}" for f in result.manifest["files"])
    print(f"{result.status} {result.path} ({rows}) in {time.perf_counter() - started:.1f}s")
    return 0
