"""`ctxrobust validate` (and the `validate` script): check every release under a folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctxrobust.commands.common import MIRROR_HELP, _add_quiet, _print_failures, _progress, _release_path, _store
from ctxrobust.errors import CtxRobustError

HELP = "check every release under PATH"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a release folder, a folder of releases (e.g. releases/), or hf://datasets/ORG/NAME@vX.Y.Z")
    p.add_argument("--mirror", help=MIRROR_HELP)
    _add_quiet(p)


def _check_release(folder: Path, store, progress=None) -> tuple[str, str, list, int]:
    """(dataset, version, failures, checks run) of one release folder; whatever is wrong with it is its
    own failure, so the run goes on to the next release. `progress` shows the checks as they run."""
    from ctxrobust import registry
    from ctxrobust.release import Release
    from ctxrobust.release_files import shown
    from ctxrobust.validators.checks import Failure, run_checks

    dataset, version = folder.parent.name, folder.name  # the folder, which a `location` failure compares with the manifest
    if not dataset.isprintable() or not version.isprintable():
        dataset, version = shown(dataset), shown(version)
    try:
        release = Release(folder, store=store)
        if release.dataset not in registry.names():
            raise CtxRobustError(
                f"{folder / 'manifest.json'}: unknown dataset {shown(release.dataset)}; this ctxrobust knows {', '.join(registry.names())}"
            )
        if folder.parent.name not in registry.names():  # a downloaded folder, under any name: named by its manifest
            dataset, version = (str(v) if str(v).isprintable() else shown(v) for v in (release.dataset, release.version))
        results = run_checks(release, progress=progress, label=f"validating {dataset} {version}")
    except (CtxRobustError, OSError) as exc:
        message = str(exc) if isinstance(exc, CtxRobustError) else f"{exc.filename or folder}: cannot be read ({exc.strerror})"
        return dataset, version, [Failure("manifest.json", None, message, "load")], 0
    except (ValueError, RecursionError) as exc:  # a hostile release no check foresaw: its own failure, the others still judged
        message = f"{folder}: cannot be validated ({type(exc).__name__}: {shown(str(exc))})"
        return dataset, version, [Failure("manifest.json", None, message, "load")], 0
    return dataset, version, [f for found in results.values() for f in found], len(results)


def run(args) -> int:
    from ctxrobust.release import find_folders_without_manifest, find_interrupted_builds, find_releases

    root = _release_path(args.path)
    if not root.exists():
        raise CtxRobustError(f"{root}: no such folder; give a release folder or a folder of releases (e.g. releases/)")
    folders, partial = find_releases(root), find_folders_without_manifest(root)
    if not folders and not partial:
        raise CtxRobustError(f"{root}: no release found (no <dataset>/<version>/manifest.json below it)")
    for leftover in find_interrupted_builds(root):
        print(
            f"WARN {leftover}: the temporary folder of an interrupted build; the next build of {leftover.parent.name} removes it, or remove it yourself"
        )
    for folder in partial:
        print(
            f"FAIL {folder.parent.name} {folder.name} manifest.json - load: {folder} holds no manifest.json; the release is incomplete, rebuild it"
        )
    store, progress = _store(args), _progress(args)
    total_failures = len(partial)
    for folder in folders:
        dataset, version, failures, checks = _check_release(folder, store, progress)
        _print_failures(failures, dataset, version)
        total_failures += len(failures)
        state = "ok" if not failures else f"{len(failures)} failure(s)"
        print(f"{dataset} {version}: {checks} checks, {state}")
    print(f"validated {len(folders) + len(partial)} release(s): {'all passed' if not total_failures else f'{total_failures} failure(s)'}")
    return 0 if not total_failures else 1
