"""The command line: build, release, sources, validate, prompts, score, push.

Dataset names and the per-dataset flags of `prompts` and `score` come from the registry: each field
of a dataset's PromptOptions / ScoreOptions model is one flag, refused for datasets without it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import typing
from pathlib import Path

from pydantic import BaseModel

from ctxrobust import registry
from ctxrobust.canonical import dumps
from ctxrobust.errors import CtxRobustError, ValidationFailed
from ctxrobust.options import flag, parse_options


def _store(args=None):
    from ctxrobust.sources.store import SnapshotStore

    mirror = getattr(args, "mirror", None) if args is not None else None
    return SnapshotStore(mirror=Path(mirror) if mirror else None)


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


def cmd_build(args) -> int:
    from ctxrobust.build import build_release

    started = time.perf_counter()
    try:
        result = build_release(args.dataset, args.version, _overrides(args), Path(args.out), _store(args))
    except ValidationFailed as exc:
        _print_failures(exc.failures, args.dataset, args.version)
        raise
    rows = ", ".join(f"{f['name']} {f['rows']}" for f in result.manifest["files"])
    print(f"{result.status} {result.path} ({rows}) in {time.perf_counter() - started:.1f}s")
    return 0


def cmd_release(args) -> int:
    """Build several datasets; a dataset whose build fails does not stop the others."""
    from ctxrobust.build import build_release

    names = registry.names() if not args.datasets else [n for chunk in args.datasets for n in chunk.replace(",", " ").split()]
    store, failed = _store(args), []
    for name in names:
        started = time.perf_counter()
        try:
            result = build_release(name, args.version, {}, Path(args.out), store)
        except ValidationFailed as exc:
            _print_failures(exc.failures, name, args.version)
            print(f"error: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        except CtxRobustError as exc:
            print(f"error: {name}: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        print(f"{result.status} {result.path} in {time.perf_counter() - started:.1f}s")
    if failed:
        print(f"{len(failed)} of {len(names)} dataset(s) not built: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def cmd_sources(args) -> int:
    store = _store(args)
    store.fill(args.names or None, report=lambda name, how: print(f"{how:10s} {name}", flush=True))
    return 0


def _print_failures(failures, dataset: str, version: str) -> None:
    for f in failures:
        print(f"FAIL {dataset} {version} {f.file or '-'} {f.item or '-'} {f.check}: {f.message}")


def cmd_validate(args) -> int:
    from ctxrobust.release import Release, find_folders_without_manifest, find_releases
    from ctxrobust.validators.checks import run_checks

    root = Path(args.path)
    if not root.exists():
        raise CtxRobustError(f"{root}: no such folder; give a release folder or a folder of releases (e.g. releases/)")
    folders, partial = find_releases(root), find_folders_without_manifest(root)
    if not folders and not partial:
        raise CtxRobustError(f"{root}: no release found (no <dataset>/<version>/manifest.json below it)")
    for folder in partial:
        print(f"FAIL {folder.parent.name} {folder.name} manifest.json - load: {folder} holds no manifest.json; the release is incomplete, rebuild it")
    store = _store(args)
    total_failures = len(partial)
    for folder in folders:
        try:
            release = Release(folder, store=store)
            results = run_checks(release)
        except CtxRobustError as exc:
            print(f"FAIL {folder.parent.name} {folder.name} manifest.json - load: {exc}")
            total_failures += 1
            continue
        failures = [f for found in results.values() for f in found]
        dataset, version = folder.parent.name, folder.name  # the folder, which a `location` failure compares with the manifest
        _print_failures(failures, dataset, version)
        total_failures += len(failures)
        state = "ok" if not failures else f"{len(failures)} failure(s)"
        print(f"{dataset} {version}: {len(results)} checks, {state}")
    print(f"validated {len(folders) + len(partial)} release(s): {'all passed' if not total_failures else f'{total_failures} failure(s)'}")
    return 0 if not total_failures else 1


OPTION_PARTS = {"prompts": "prompt_options", "score": "score_options"}


def _option_fields(command: str) -> dict[str, list[tuple[str, typing.Any]]]:
    """Every option field of `command` over the registered datasets: name -> [(dataset, FieldInfo)]."""
    fields: dict[str, list[tuple[str, typing.Any]]] = {}
    for dataset in registry.datasets():
        model = dataset.load(OPTION_PARTS[command])
        for name, info in model.model_fields.items():
            fields.setdefault(name, []).append((dataset.name, info))
    return fields


def _add_option_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """One flag per options field; its type from the annotation, its help from each dataset's description."""
    for name, owners in sorted(_option_fields(command).items()):
        info = owners[0][1]
        annotation = info.annotation
        args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
        kind = args[0]
        helps = "; ".join(f"{ds}: {i.description}" for ds, i in owners if i.description)
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
            helps = "; ".join(f"{ds}: {i.description}" for ds, i in owners)
        parser.add_argument(flag(name), dest=name, type=converter, nargs=nargs, default=None, help=helps,
                            metavar=name.upper() if not choices else None, choices=choices)


def _options(args, dataset: registry.Dataset, command: str) -> BaseModel:
    """The dataset's options model from the flags given; a flag that does not apply to it is refused."""
    given = {name: getattr(args, name) for name in _option_fields(command) if getattr(args, name, None) is not None}
    return parse_options(dataset.load(OPTION_PARTS[command]), given, f"{dataset.name} {command}")


def _frozen_release(path: Path):
    """A release whose files still match their SHA256SUMS: prompts and scores are never made from a changed one."""
    from ctxrobust.release import Release
    from ctxrobust.validators.integrity import hashes_match

    release = Release(path)
    changed = list(hashes_match(release))
    if changed:
        first = changed[0]
        raise CtxRobustError(f"{path}: {first.file}: {first.message}; run `validate {path}` and use an intact release")
    return release


def _writable(output: str) -> Path:
    """The -o path, checked before any work: its folder must exist."""
    target = Path(output)
    if not target.parent.is_dir():
        raise CtxRobustError(f"{target}: the folder {target.parent} does not exist; create it or write elsewhere")
    return target


FORMATS_BY_SUFFIX = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json"}


def cmd_prompts(args) -> int:
    release = _frozen_release(Path(args.release))
    dataset = registry.get(release.dataset)
    options = _options(args, dataset, "prompts")
    requests = dataset.load("prompts")(release, options)
    if not args.output:
        count = 0
        for request in requests:
            sys.stdout.write(dumps(request) + "\n")
            count += 1
        print(f"wrote {count} request(s)", file=sys.stderr)
        return 0
    # written beside the target and renamed on success, so a failed run leaves no partial file
    target = _writable(args.output)
    partial = target.with_name(target.name + ".part")
    count = 0
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as out:
            for request in requests:
                out.write(dumps(request) + "\n")
                count += 1
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    print(f"wrote {count} request(s) to {target}", file=sys.stderr)
    return 0


def cmd_screen(args) -> int:
    release = _frozen_release(Path(args.release))
    dataset = registry.get(release.dataset)
    if dataset.screen is None:
        raise CtxRobustError(f"{release.path}: dataset {release.dataset} has no screening stage; `screen` is for misleadqa releases")
    summary = dataset.load("screen")(release, [Path(p) for p in args.judgments], _writable(args.output))
    for problem in summary["problems"]:
        print(f"warning: {problem}", file=sys.stderr)
    sys.stdout.write(dumps({k: v for k, v in summary.items() if k != "problems"}) + "\n")
    print(f"flagged {summary['flagged']} of {summary['candidates']} candidate(s); {summary['unparseable']} unparseable answer(s); "
          f"wrote {', '.join(summary['files'])}", file=sys.stderr)
    return 0


def cmd_score(args) -> int:
    release = _frozen_release(Path(args.release))
    dataset = registry.get(release.dataset)
    predictions = Path(args.predictions)
    if predictions.is_dir():
        raise CtxRobustError(f"{predictions}: is a folder; give the predictions JSON Lines file")
    if not predictions.is_file():
        raise CtxRobustError(f"{predictions}: no such predictions file")
    if args.output:
        _writable(args.output)
    options = _options(args, dataset, "score")
    form = args.format
    if form is None:
        form = FORMATS_BY_SUFFIX.get(Path(args.output).suffix.lower(), "json") if args.output else "json"
    if form != "json" and form not in dataset.renderers:
        raise CtxRobustError(f"--format {form}: {dataset.name} reports render as json or {', '.join(sorted(dataset.renderers))}")
    report = dataset.load("scorer")(release, predictions, options)
    if form == "json":
        text = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    else:
        text = dataset.load("render_" + form)(report)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0  # under --strict, a file with any bad row was refused before scoring


def cmd_push(args) -> int:
    from ctxrobust.publish.hub import push_release

    return push_release(Path(args.release), args.repo, dry_run=Path(args.dry_run) if args.dry_run else None)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="ctxrobust", description="Build, validate, publish and score context-robustness datasets.")
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="build one dataset release")
    p.add_argument("dataset", choices=registry.names())
    p.add_argument("--version", required=True, help="the release version; names the folder and the Hub tag (e.g. 1.0.0)")
    p.add_argument("--seed", type=int, help="the build seed (default: the builder's)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a build configuration field (VALUE as JSON, or a plain string)")
    p.add_argument("--out", default="releases", help="the releases folder (default: releases)")
    p.add_argument("--mirror", help="a source mirror folder (default: $SOURCES_MIRROR)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("release", help="build several datasets at one version (default: all)")
    p.add_argument("--version", required=True, help="the release version (e.g. 1.0.0)")
    p.add_argument("--datasets", nargs="+", help=f"dataset names, space or comma separated (default: all of {', '.join(registry.names())})")
    p.add_argument("--out", default="releases", help="the releases folder (default: releases)")
    p.add_argument("--mirror")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("sources", help="fill the source cache, verifying every sha256 against the lock")
    p.add_argument("names", nargs="*", help="snapshot names (default: all in the lock)")
    p.add_argument("--mirror")
    p.set_defaults(func=cmd_sources)

    p = sub.add_parser("validate", help="check every release under PATH")
    p.add_argument("path")
    p.add_argument("--mirror")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("prompts", help="write the exact model inputs of a release as JSONL")
    p.add_argument("release", help="a release folder")
    _add_option_flags(p, "prompts")
    p.add_argument("-o", "--output", help="the JSONL file to write (default: standard output)")
    p.set_defaults(func=cmd_prompts)

    p = sub.add_parser("score", help="score a predictions file against a release")
    p.add_argument("release", help="a release folder")
    p.add_argument("predictions", help="a predictions JSON Lines file")
    p.add_argument("-o", "--output", help="the report file to write (default: standard output)")
    p.add_argument("--format", choices=["json", "md", "html"], help="default: from the -o file's suffix (.md, .html), else json")
    _add_option_flags(p, "score")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("screen", help="flag candidates from screening models' judgments (MisleadQA App. B.1)")
    p.add_argument("release", help="a release folder")
    p.add_argument("judgments", nargs="+", help="one judgments JSONL file per screening model (answers to `prompts --prompt screen`)")
    p.add_argument("-o", "--output", required=True, help="the review sheet (.jsonl); its .csv and .table9.md are written beside it")
    p.set_defaults(func=cmd_screen)

    p = sub.add_parser("push", help="upload a release to the Hugging Face Hub")
    p.add_argument("release")
    p.add_argument("--repo", required=True, help="ORG/NAME")
    p.add_argument("--dry-run", dest="dry_run", metavar="DIR", help="write the folder that would be uploaded, upload nothing")
    p.set_defaults(func=cmd_push)
    return top


def _run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except CtxRobustError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file or folder the user named cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if os.environ.get("CTXROBUST_DEBUG"):
            raise
        print(f"error: internal error ({type(exc).__name__}: {exc}); rerun with CTXROBUST_DEBUG=1 for details", file=sys.stderr)
        return 3


def main(argv: list[str] | None = None) -> int:
    return _run(sys.argv[1:] if argv is None else argv)


def validate_main(argv: list[str] | None = None) -> int:
    return _run(["validate", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
