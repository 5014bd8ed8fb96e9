"""The command line: build, release, sources, validate, prompts, score, push."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ctxrobust.canonical import dumps
from ctxrobust.errors import CtxRobustError


def _store(args=None):
    from sources.store import SnapshotStore

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
    from ctxrobust.release import ValidationFailed, build_release

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
    import builders
    from ctxrobust.release import ValidationFailed, build_release

    names = builders.dataset_names() if not args.datasets else [n for chunk in args.datasets for n in chunk.replace(",", " ").split()]
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
    from validators.registry import run_checks

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


def _options(args, dataset: str, accepted: dict[str, set[str]], names: list[str]) -> dict:
    """The options given on the command line; one that does not apply to the dataset is refused."""
    given = {name: getattr(args, name) for name in names if getattr(args, name, None) is not None and getattr(args, name) is not False}
    stray = sorted(set(given) - accepted.get(dataset, set()))
    if stray:
        flags = ", ".join("--" + name.replace("_", "-") for name in stray)
        raise CtxRobustError(f"{flags}: not an option for {dataset} (it takes: {', '.join('--' + n.replace('_', '-') for n in sorted(accepted.get(dataset, set()))) or 'none'})")
    return given


def _frozen_release(path: Path):
    """A release whose files still match their SHA256SUMS: prompts and scores are never made from a changed one."""
    from ctxrobust.release import Release
    from validators.integrity import hashes_match

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
    from evaluation import PROMPT_OPTIONS, prompts_for

    release = _frozen_release(Path(args.release))
    options = _options(args, release.dataset, PROMPT_OPTIONS, ["benchmark", "prompt", "instruction", "seed", "kinds", "lengths"])
    requests = prompts_for(release.dataset)(release, options)
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


def cmd_score(args) -> int:
    from evaluation import SCORE_OPTIONS, scorer_for

    release = _frozen_release(Path(args.release))
    predictions = Path(args.predictions)
    if predictions.is_dir():
        raise CtxRobustError(f"{predictions}: is a folder; give the predictions JSON Lines file")
    if not predictions.is_file():
        raise CtxRobustError(f"{predictions}: no such predictions file")
    if args.output:
        _writable(args.output)
    options = _options(args, release.dataset, SCORE_OPTIONS, ["strict", "seed", "replicates", "lenient_letters", "export", "min_clusters"])
    form = args.format
    if form is None:
        form = FORMATS_BY_SUFFIX.get(Path(args.output).suffix.lower(), "json") if args.output else "json"
    report = scorer_for(release.dataset)(release, predictions, options)
    if form == "json":
        text = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    elif form == "md":
        text = scorer_for(release.dataset, "render_markdown")(report)
    else:
        text = scorer_for(release.dataset, "render_html")(report)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0  # under --strict, a file with any bad row was refused before scoring


def cmd_push(args) -> int:
    from ctxrobust.hub import push_release

    return push_release(Path(args.release), args.repo, dry_run=Path(args.dry_run) if args.dry_run else None)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="ctxrobust", description="Build, validate, publish and score context-robustness datasets.")
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="build one dataset release")
    p.add_argument("dataset")
    p.add_argument("--version", required=True)
    p.add_argument("--seed", type=int)
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a build configuration field")
    p.add_argument("--out", default="releases")
    p.add_argument("--mirror", help="a source mirror folder (default: $SOURCES_MIRROR)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("release", help="build several datasets at one version (default: all)")
    p.add_argument("--version", required=True)
    p.add_argument("--datasets", nargs="+", help="dataset names (space or comma separated)")
    p.add_argument("--out", default="releases")
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
    p.add_argument("release")
    p.add_argument("--benchmark", help="pseudowords: a JSONL of {id, question, options?, answer?}")
    p.add_argument("--prompt", help="misleadqa: original|cf|scope (default original); gsm-ic: cot|cot-ic|ltm|ltm-ic|program|program-ic|0-cot (default cot)")
    p.add_argument("--instruction", action="store_true", default=None, help="gsm-ic: prepend the paper's instruction")
    p.add_argument("--kinds", nargs="+", help="pseudowords: CHA TOK WEB SQA (default: CHA, the paper's main setting)")
    p.add_argument("--lengths", nargs="+", type=int, help="pseudowords: context lengths in tokens (default: the release's longest, 10000 by default)")
    p.add_argument("--seed", type=int)
    p.add_argument("-o", "--output")
    p.set_defaults(func=cmd_prompts)

    p = sub.add_parser("score", help="score a predictions file against a release")
    p.add_argument("release")
    p.add_argument("predictions")
    p.add_argument("-o", "--output")
    p.add_argument("--format", choices=["json", "md", "html"], help="default: from the -o file's suffix (.md, .html), else json")
    p.add_argument("--strict", action="store_true", help="refuse to score a file with any bad row")
    p.add_argument("--seed", type=int)
    p.add_argument("--replicates", type=int, help="bootstrap replicates (default: the paper's)")
    p.add_argument("--lenient-letters", dest="lenient_letters", action="store_true", default=None, help="misleadqa: accept 'B.' and '(B)'")
    p.add_argument("--min-clusters", dest="min_clusters", type=int, help="misleadqa: source clusters A_m must cover for a model to enter inference (default 20)")
    p.add_argument("--export", help="pseudowords: write per-example changes to this CSV or Parquet file")
    p.set_defaults(func=cmd_score)

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
