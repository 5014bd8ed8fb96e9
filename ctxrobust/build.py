"""The build pipeline: build into a temporary folder, validate, hash, rename into place.

A version folder is written once. Its bytes depend on the sources, the configuration and the code
that shapes them; `code_sha256` records that code.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

import ctxrobust
from ctxrobust import registry, release_files
from ctxrobust.builders.base import EXTRA_FORMATS, Builder, BuildOutput, ExtraFile
from ctxrobust.canonical import dumps, dumps_pretty, iter_jsonl, sha256_file, write_json, write_jsonl
from ctxrobust.errors import CtxRobustError, ValidationFailed
from ctxrobust.manifest import read_manifest
from ctxrobust.output import release_folder_above
from ctxrobust.progress import SILENT, Progress
from ctxrobust.release import CARD, MANIFEST, SUMS, Release

# a version names a folder and the git tag v<version>: letters, digits and . _ + -, starting and ending with a
# letter or digit, no "..", no ".lock" ending (git refuses both), at most 64 characters
VERSION_NAME = re.compile(r"(?!.*\.\.)(?!.*\.lock$)[A-Za-z0-9](?:[A-Za-z0-9._+-]{0,62}[A-Za-z0-9])?")


def check_version(version: str) -> str:
    """A version usable as a folder name and a git tag; one line naming the rule otherwise."""
    if not isinstance(version, str) or not VERSION_NAME.fullmatch(version):
        shown = (
            repr(version) if not isinstance(version, str) or len(version) <= 80 else repr(version[:80]) + f"... ({len(version)} characters)"
        )
        raise CtxRobustError(
            f"version {shown}: use letters, digits, '.', '_', '+' or '-', starting and ending with a letter or digit, "
            "without '..' and at most 64 characters (e.g. 1.0.0); it names a folder and a Hub tag"
        )
    return version


@dataclass
class BuildResult:
    path: Path
    status: str  # "built" or "reproduced"
    manifest: dict
    removed: list[Path] = field(default_factory=list)  # temporary folders of interrupted builds, cleaned up


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_interrupted_builds(dataset_folder: Path) -> list[Path]:
    """Remove the `.<version>.building-<pid>` folders of builds whose process is gone (killed, or the machine
    stopped); a build still running keeps its own."""
    from ctxrobust.release import BUILDING

    removed = []
    if not dataset_folder.is_dir():
        return removed
    for entry in sorted(os.scandir(dataset_folder), key=lambda e: e.name):
        found = BUILDING.fullmatch(entry.name)
        if found and entry.is_dir(follow_symlinks=False) and not _alive(int(found.group("pid"))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


# modules that shape every release's bytes: the release writer, canonical JSON, the builder contract,
# the Parquet typing, the source lock and adapters, and the card
WRITER_MODULES = (
    "ctxrobust.build",
    "ctxrobust.canonical",
    "ctxrobust.manifest",
    "ctxrobust.builders.base",
    "ctxrobust.schemas.arrow",
    "ctxrobust.publish.card",
)
WRITER_PACKAGES = ("ctxrobust.sources",)
CODE_SUFFIXES = {".py", ".json", ".txt"}


def _package_files(package: str) -> list[tuple[str, Path]]:
    origin = Path(importlib.import_module(package).__file__)
    if origin.name != "__init__.py":  # a single-module builder
        return [(package, origin)]
    root = origin.parent
    return [
        (f"{package}/{p.relative_to(root).as_posix()}", p)
        for p in root.rglob("*")
        if p.is_file() and p.suffix in CODE_SUFFIXES and "__pycache__" not in p.parts and not _in_cache(p)
    ]


def _in_cache(path: Path) -> bool:
    """A file of the default source cache (sources/cache, inside the source adapters' folder): downloaded
    snapshots and reports of missing ones, not code, so they never change code_sha256."""
    from ctxrobust.sources.store import DEFAULT_CACHE_DIR

    return path.resolve().is_relative_to(DEFAULT_CACHE_DIR)


def code_files(dataset: registry.Dataset) -> list[tuple[str, Path]]:
    """Every file whose bytes can change the release: the dataset's builder package (code and the
    project's data files), its schemas, the release writer, the source adapters, the card text."""
    from ctxrobust import schemas

    builder_package = dataset.builder.partition(":")[0]
    named = []
    for package in (builder_package, *WRITER_PACKAGES, *dataset.code):
        named += _package_files(package)
    for module in WRITER_MODULES:
        named.append((module, Path(importlib.import_module(module).__file__)))
    named.append(
        ("ctxrobust.publish/card_text.json", Path(importlib.import_module("ctxrobust.publish.card").__file__).with_name("card_text.json"))
    )
    named += [(f"schemas/{stem}", path) for stem in dataset.schemas if (path := schemas.schema_path(stem)).is_file()]
    return sorted(set(named))


def code_sha256(dataset: registry.Dataset) -> str:
    """Hash of `code_files`: the code version recorded in the manifest."""
    digest = hashlib.sha256()
    for name, path in code_files(dataset):
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()


def write_parquet(rows: list[dict], path: Path, source_name: str, schema_name: str) -> None:
    """The Parquet copy of a data file, its column types declared by the file's JSON Schema."""
    from ctxrobust.schemas import load_schema
    from ctxrobust.schemas.arrow import arrow_schema

    try:
        table = pa.Table.from_pylist(rows, schema=arrow_schema(load_schema(schema_name)))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise CtxRobustError(f"{source_name}: rows do not fit the column types of schema {schema_name} ({exc})") from None
    options = {"compression": "zstd", "write_statistics": False, "store_schema": False}
    if table.num_rows:
        pq.write_table(table, path, **options)
    else:  # no row group at all: `datasets` cannot read an empty one
        pq.ParquetWriter(path, table.schema, **options).close()


def make_config(builder_cls: type[Builder], overrides: dict) -> Any:
    """The builder's Config from the given settings; a wrong key or value is one line naming it."""
    unknown = sorted(set(overrides) - set(builder_cls.Config.model_fields))
    if unknown:
        raise CtxRobustError(
            f"build configuration for {builder_cls.dataset}: no setting {', '.join(unknown)}; "
            f"its settings are {', '.join(sorted(builder_cls.Config.model_fields))}"
        )
    try:
        return builder_cls.Config(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise CtxRobustError(f"build configuration for {builder_cls.dataset}: {field + ': ' if field else ''}{first['msg']}") from None


def write_sums(folder: Path) -> None:
    """SHA256SUMS of the folder's regular files (links and special files are neither followed nor opened)."""
    names = sorted(p.name for p in folder.iterdir() if p.name != SUMS and release_files.kind_of(os.lstat(p).st_mode) is None)
    lines = [f"{release_files.sha256(folder, name)}  {name}\n" for name in names]
    (folder / SUMS).write_text("".join(lines), encoding="utf-8", newline="\n")


def check_out_root(out_root: Path) -> None:
    """A releases folder outside every release: a release folder is frozen once built, so no new release is nested
    in one (links resolved, so a link into a release is that release)."""
    frozen = release_folder_above(out_root.resolve()) or release_folder_above(out_root.absolute())
    if frozen is not None:
        raise CtxRobustError(
            f"--out {out_root}: is inside the release folder {frozen}, which is frozen; give a releases folder outside it (e.g. releases)"
        )


def build_release(
    dataset: str, version: str, overrides: dict, out_root: Path, store: Any = None, progress: Progress | None = None
) -> BuildResult:
    """Build `dataset` at `version` under out_root/<dataset>/<version>/, frozen once written; `progress`
    shows its stages (reading sources, building items, writing files, checks)."""
    from ctxrobust.publish.card import render_card
    from ctxrobust.validators.checks import run_checks
    from ctxrobust.validators.integrity import FROZEN_ONLY

    check_version(version)
    check_out_root(Path(out_root))
    declared = registry.get(dataset)
    builder_cls = declared.builder_cls
    config = make_config(builder_cls, overrides)
    config_json = config.model_dump(mode="json")
    target = Path(out_root) / dataset / version
    if target.exists() and not (target / MANIFEST).exists():
        raise CtxRobustError(f"{target} exists but holds no release (no {MANIFEST}); remove the folder or choose another version")
    if target.exists():
        existing = Release(target).manifest
        if existing.get("config") != config_json:
            changed = sorted(
                k for k in set(existing.get("config", {})) | set(config_json) if existing.get("config", {}).get(k) != config_json.get(k)
            )
            raise CtxRobustError(
                f"{target} already exists with a different build configuration ({', '.join(changed)}); "
                "releases are frozen: choose a new version"
            )
    progress = progress or SILENT
    builder = builder_cls(config, store)
    needed = builder.required_snapshots()
    if needed:
        if store is None:
            raise CtxRobustError(f"{dataset} needs source snapshots but no source store was given")
        with progress.stage(f"{dataset}: reading sources"):
            store.require(needed)
    with progress.stage(f"{dataset}: building items"):
        output: BuildOutput = builder.build()

    target.parent.mkdir(parents=True, exist_ok=True)
    removed = remove_interrupted_builds(target.parent)
    tmp = target.parent / f".{version}.building-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        with progress.stage(f"{dataset}: writing files", total=len(output.files) + len(output.extra_files)) as stage:
            manifest = _write_files(tmp, declared, version, config_json, needed, store, output, stage.advance)
        release = Release(tmp, store=store, manifest=manifest)
        results = run_checks(release, skip=FROZEN_ONLY, progress=progress, label=f"{dataset}: checks")  # not yet hashed, not yet in place
        failures = [f for found in results.values() for f in found]
        manifest["validators"] = {name: {"passed": not found, "failures": len(found)} for name, found in results.items()}
        if failures:
            raise ValidationFailed(f"{dataset} {version}: {len(failures)} validator failure(s); nothing was written to {target}", failures)
        read_manifest(manifest, tmp / MANIFEST)  # the typed model every reader uses accepts what is written
        (tmp / MANIFEST).write_text(dumps_pretty(manifest), encoding="utf-8", newline="\n")
        (tmp / CARD).write_text(render_card(manifest, folder=tmp), encoding="utf-8", newline="\n")
        write_sums(tmp)
        if target.exists():
            if (tmp / SUMS).read_bytes() == (target / SUMS).read_bytes():
                shutil.rmtree(tmp)
                return BuildResult(target, "reproduced", manifest, removed)
            differing = _differing_files(tmp, target)
            raise CtxRobustError(
                f"{target} exists and rebuilding it gave different bytes ({', '.join(differing)}); "
                "the release was left untouched: choose a new version"
            )
        _fsync_files(tmp)
        os.replace(tmp, target)
        return BuildResult(target, "built", manifest, removed)
    except OSError as exc:  # a full disk, a folder that cannot be written: named, and nothing left behind
        raise CtxRobustError(f"{exc.filename or tmp}: cannot write ({exc.strerror or exc}); nothing was written to {target}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def _fsync_files(folder: Path) -> None:
    """Every file of a finished release on disk before the folder is renamed into place."""
    for path in folder.iterdir():
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())


def _differing_files(new: Path, old: Path) -> list[str]:
    def sums(folder: Path) -> dict[str, str]:
        pairs = (line.split("  ", 1) for line in (folder / SUMS).read_text(encoding="utf-8").splitlines() if line)
        return {name: digest for digest, name in pairs}

    a, b = sums(new), sums(old)
    return sorted(name for name in set(a) | set(b) if a.get(name) != b.get(name)) or [SUMS]


def _write_files(
    tmp: Path,
    declared: registry.Dataset,
    version: str,
    config_json: dict,
    needed: list[str],
    store,
    output: BuildOutput,
    written: Callable[[], None] = lambda: None,
) -> dict:
    """Write the data files (JSON Lines and Parquet) and the extra files into `tmp`, calling `written`
    after each; the manifest that records them."""
    dataset = declared.name
    files, parquet = [], []
    names = [f.name for f in output.files]
    if len(set(names)) != len(names):
        raise CtxRobustError(f"{dataset}: the builder returned two files with the same name")
    for data_file in output.files:
        if not data_file.name.endswith(".jsonl"):
            raise CtxRobustError(f"{dataset}: data file {data_file.name} must be .jsonl")
        path = tmp / data_file.name
        count = write_jsonl(path, data_file.rows)
        files.append(
            {"name": data_file.name, "sha256": sha256_file(path), "bytes": path.stat().st_size, "rows": count, "schema": data_file.schema}
        )
        pq_path = tmp / (data_file.name[: -len(".jsonl")] + ".parquet")
        write_parquet([row for _, row in iter_jsonl(path)], pq_path, data_file.name, data_file.schema)
        parquet.append(
            {"name": pq_path.name, "sha256": sha256_file(pq_path), "bytes": pq_path.stat().st_size, "rows": count, "from": data_file.name}
        )
        written()
    taken = {f["name"] for f in files} | {f["name"] for f in parquet} | {MANIFEST, CARD, SUMS}
    extra = []
    for extra_file in output.extra_files:
        extra.append(_write_extra(tmp, dataset, extra_file, taken, {f["name"] for f in files}))
        written()
    sources = [{"name": name, "sha256": store.snapshot(name).sha256} for name in sorted(needed)] if needed else []
    # round-trip the notes through canonical JSON so only JSON values reach the manifest
    notes = json.loads(dumps(output.notes))
    return {
        "dataset": dataset,
        "version": version,
        "builder": {"package_version": ctxrobust.__version__, "code_sha256": code_sha256(declared)},
        "config": config_json,
        "sources": sources,
        "files": sorted(files, key=lambda f: f["name"]),
        "parquet": sorted(parquet, key=lambda f: f["name"]),
        "extra_files": sorted(extra, key=lambda f: f["name"]),
        "build_notes": notes,
    }


EXTRA_SUFFIXES = {"json": ".json"}


def _write_extra(tmp: Path, dataset: str, extra: ExtraFile, taken: set[str], data_files: set[str]) -> dict:
    """One file a builder declares besides its data files, written canonically and recorded like them."""
    from ctxrobust.schemas import schema_path

    problem = release_files.name_problem(extra.name)
    if problem:
        raise CtxRobustError(f"{dataset}: extra file {release_files.shown(extra.name)}: {problem}")
    if extra.format not in EXTRA_FORMATS:
        raise CtxRobustError(f"{dataset}: extra file {extra.name}: format {extra.format!r} is not one of {', '.join(EXTRA_FORMATS)}")
    if not extra.name.endswith(EXTRA_SUFFIXES[extra.format]) or extra.name.endswith((".jsonl", ".parquet")) or extra.name in taken:
        raise CtxRobustError(
            f"{dataset}: extra file {extra.name} must end in {EXTRA_SUFFIXES[extra.format]} and differ from every other file of the release"
        )
    if extra.mirrors is not None and extra.mirrors not in data_files:
        raise CtxRobustError(f"{dataset}: extra file {extra.name} mirrors {extra.mirrors}, which is no data file of the release")
    if extra.schema is not None and not schema_path(extra.schema).is_file():
        raise CtxRobustError(f"{dataset}: extra file {extra.name} names schema {extra.schema}, which schemas/ does not hold")
    if extra.schema is not None and not isinstance(extra.value, list):
        raise CtxRobustError(f"{dataset}: extra file {extra.name} has a record schema but its value is no list of records")
    taken.add(extra.name)
    path = tmp / extra.name
    rows = write_json(path, json.loads(dumps(extra.value)))  # only JSON values, written canonically
    entry = {"name": extra.name, "sha256": sha256_file(path), "bytes": path.stat().st_size, "format": extra.format}
    entry["description"] = extra.description
    if rows is not None:
        entry["rows"] = rows
    if extra.schema is not None:
        entry["schema"] = extra.schema
    if extra.mirrors is not None:
        entry["from"] = extra.mirrors
    return entry
