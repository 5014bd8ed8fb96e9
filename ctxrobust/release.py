"""Frozen, hashed releases: build into a temporary folder, validate, hash, rename into place."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

import ctxrobust
from builders import get_builder
from builders.base import Builder, BuildOutput
from ctxrobust.canonical import dumps, dumps_pretty, iter_jsonl, sha256_file, write_jsonl
from ctxrobust.errors import CtxRobustError

MANIFEST = "manifest.json"
VERSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
SUMS = "SHA256SUMS"
CARD = "README.md"


class Release:
    """A read-only view of one release folder (or one being built)."""

    def __init__(self, path: Path, store: Any = None, manifest: dict | None = None):
        self.path = Path(path)
        self.store = store
        self._rows: dict[str, list[dict]] = {}
        if manifest is None:
            manifest_path = self.path / MANIFEST
            if not manifest_path.exists():
                raise CtxRobustError(f"{manifest_path}: missing; {self.path} is not a release folder (build one with `ctxrobust build`)")
            try:
                manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise CtxRobustError(f"{manifest_path}: not valid JSON ({exc}); the release is corrupted, rebuild it") from None
            if not isinstance(manifest, dict) or not all(isinstance(manifest.get(k), str) for k in ("dataset", "version")):
                raise CtxRobustError(f"{manifest_path}: names no dataset and version; the release is corrupted, rebuild it")
        self.manifest = manifest

    @property
    def dataset(self) -> str:
        return self.manifest["dataset"]

    @property
    def version(self) -> str:
        return self.manifest["version"]

    @property
    def config(self) -> dict:
        return self.manifest.get("config", {})

    @property
    def files(self) -> list[dict]:
        return self.manifest.get("files", [])

    def file_path(self, name: str) -> Path:
        return self.path / name

    def rows(self, name: str) -> list[dict]:
        if name not in self._rows:
            self._rows[name] = list(self.iter_rows(name))
        return self._rows[name]

    def iter_rows(self, name: str) -> Iterator[dict]:
        if name in self._rows:
            yield from self._rows[name]
            return
        path = self.file_path(name)
        if not path.exists():
            raise CtxRobustError(f"{path}: missing from the release; rebuild it")
        for _, row in iter_jsonl(path):
            yield row

    def manifest_sha256(self) -> str:
        return sha256_file(self.path / MANIFEST)


@dataclass
class BuildResult:
    path: Path
    status: str  # "built" or "reproduced"
    manifest: dict


class ValidationFailed(CtxRobustError):
    def __init__(self, message: str, failures: list):
        super().__init__(message)
        self.failures = failures


def code_sha256(builder_cls: type[Builder]) -> str:
    """Hash of the builder's own source and data files (and the builder contract): the code version."""
    import importlib

    import builders.base

    module_name = builder_cls.__module__
    if module_name.startswith("builders."):
        module_name = ".".join(module_name.split(".")[:2])  # the dataset's module or package
    origin = Path(importlib.import_module(module_name).__file__)
    if origin.name == "__init__.py":
        root = origin.parent.parent
        paths = [p for p in origin.parent.rglob("*") if p.is_file() and p.suffix in {".py", ".json", ".txt"} and "__pycache__" not in p.parts]
    else:
        root, paths = origin.parent, [origin]
    named = [(p.relative_to(root).as_posix(), p) for p in paths]
    named.append(("builders/base.py", Path(builders.base.__file__)))
    digest = hashlib.sha256()
    for name, path in sorted(named):
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()


def write_parquet(rows: list[dict], path: Path, source_name: str, schema_name: str) -> None:
    """The Parquet copy of a data file, its column types declared by the file's JSON Schema."""
    from schemas import load_schema
    from schemas.arrow import arrow_schema

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
    try:
        return builder_cls.Config(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(config)"
        raise CtxRobustError(f"build configuration for {builder_cls.dataset}: {field}: {first['msg']}") from None


def write_sums(folder: Path) -> None:
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name != SUMS)
    lines = [f"{sha256_file(folder / name)}  {name}\n" for name in names]
    (folder / SUMS).write_text("".join(lines), encoding="utf-8", newline="\n")


def build_release(dataset: str, version: str, overrides: dict, out_root: Path, store: Any = None) -> BuildResult:
    """Build `dataset` at `version` under out_root/<dataset>/<version>/, frozen once written."""
    from validators.registry import run_checks
    from ctxrobust.card import render_card

    if not VERSION_NAME.fullmatch(version or ""):
        raise CtxRobustError(f"version {version!r}: use letters, digits, '.', '_', '+' or '-', starting with a letter or digit (e.g. 1.0.0); it names a folder and a Hub tag")
    builder_cls = get_builder(dataset)
    config = make_config(builder_cls, overrides)
    config_json = config.model_dump(mode="json")
    target = Path(out_root) / dataset / version
    if target.exists() and not (target / MANIFEST).exists():
        raise CtxRobustError(f"{target} exists but holds no release (no {MANIFEST}); remove the folder or choose another version")
    if target.exists():
        existing = Release(target).manifest
        if existing.get("config") != config_json:
            changed = sorted(k for k in set(existing.get("config", {})) | set(config_json) if existing.get("config", {}).get(k) != config_json.get(k))
            raise CtxRobustError(
                f"{target} already exists with a different build configuration ({', '.join(changed)}); "
                "releases are frozen: choose a new version"
            )
    builder = builder_cls(config, store)
    needed = builder.required_snapshots()
    if needed:
        if store is None:
            raise CtxRobustError(f"{dataset} needs source snapshots but no source store was given")
        store.require(needed)
    output: BuildOutput = builder.build()

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{version}.building-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        manifest = _write_files(tmp, dataset, version, builder_cls, config_json, needed, store, output)
        release = Release(tmp, store=store, manifest=manifest)
        results = run_checks(release, skip={"hashes", "location"})  # not yet hashed, not yet in place
        failures = [f for found in results.values() for f in found]
        manifest["validators"] = {name: {"passed": not found, "failures": len(found)} for name, found in results.items()}
        if failures:
            raise ValidationFailed(
                f"{dataset} {version}: {len(failures)} validator failure(s); nothing was written to {target}", failures
            )
        (tmp / MANIFEST).write_text(dumps_pretty(manifest), encoding="utf-8", newline="\n")
        (tmp / CARD).write_text(render_card(manifest), encoding="utf-8", newline="\n")
        write_sums(tmp)
        if target.exists():
            if (tmp / SUMS).read_bytes() == (target / SUMS).read_bytes():
                shutil.rmtree(tmp)
                return BuildResult(target, "reproduced", manifest)
            differing = _differing_files(tmp, target)
            raise CtxRobustError(
                f"{target} exists and rebuilding it gave different bytes ({', '.join(differing)}); "
                "the release was left untouched: choose a new version"
            )
        os.replace(tmp, target)
        return BuildResult(target, "built", manifest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def _differing_files(new: Path, old: Path) -> list[str]:
    def sums(folder: Path) -> dict[str, str]:
        pairs = (line.split("  ", 1) for line in (folder / SUMS).read_text(encoding="utf-8").splitlines() if line)
        return {name: digest for digest, name in pairs}

    a, b = sums(new), sums(old)
    return sorted(name for name in set(a) | set(b) if a.get(name) != b.get(name)) or [SUMS]


def _write_files(tmp: Path, dataset: str, version: str, builder_cls, config_json: dict, needed: list[str], store, output: BuildOutput) -> dict:
    files, parquet = [], []
    names = [f.name for f in output.files]
    if len(set(names)) != len(names):
        raise CtxRobustError(f"{dataset}: the builder returned two files with the same name")
    for data_file in output.files:
        if not data_file.name.endswith(".jsonl"):
            raise CtxRobustError(f"{dataset}: data file {data_file.name} must be .jsonl")
        path = tmp / data_file.name
        count = write_jsonl(path, data_file.rows)
        files.append({"name": data_file.name, "sha256": sha256_file(path), "bytes": path.stat().st_size, "rows": count, "schema": data_file.schema})
        pq_path = tmp / (data_file.name[: -len(".jsonl")] + ".parquet")
        write_parquet([row for _, row in iter_jsonl(path)], pq_path, data_file.name, data_file.schema)
        parquet.append({"name": pq_path.name, "sha256": sha256_file(pq_path), "bytes": pq_path.stat().st_size, "rows": count, "from": data_file.name})
    sources = [{"name": name, "sha256": store.snapshot(name).sha256} for name in sorted(needed)] if needed else []
    # round-trip the notes through canonical JSON so only JSON values reach the manifest
    notes = json.loads(dumps(output.notes))
    return {
        "dataset": dataset,
        "version": version,
        "builder": {"package_version": ctxrobust.__version__, "code_sha256": code_sha256(builder_cls)},
        "config": config_json,
        "sources": sources,
        "files": sorted(files, key=lambda f: f["name"]),
        "parquet": sorted(parquet, key=lambda f: f["name"]),
        "build_notes": notes,
    }


def find_folders_without_manifest(root: Path) -> list[Path]:
    """<dataset>/<version>/ folders below a releases root that hold no manifest.json (a damaged or partial release)."""
    root = Path(root)
    if (root / MANIFEST).exists():
        return []
    return sorted(
        version for dataset in root.iterdir() if dataset.is_dir() and not dataset.name.startswith(".")
        for version in dataset.iterdir() if version.is_dir() and not version.name.startswith(".") and not (version / MANIFEST).exists()
    )


def find_releases(root: Path) -> list[Path]:
    """Every release folder at or below root (a folder holding manifest.json), sorted."""
    root = Path(root)
    if (root / MANIFEST).exists():
        return [root]
    found = []
    for path in sorted(root.rglob(MANIFEST)):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        found.append(path.parent)
    return found
