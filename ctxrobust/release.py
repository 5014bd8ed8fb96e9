"""A read-only view of one release folder: its manifest, its typed build configuration, its rows."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, TypeVar

from pydantic import BaseModel, ValidationError

from ctxrobust.canonical import iter_jsonl, sha256_file
from ctxrobust.errors import CtxRobustError
from ctxrobust.manifest import MANIFEST, Manifest, read_manifest

SUMS = "SHA256SUMS"
CARD = "README.md"
ConfigT = TypeVar("ConfigT", bound=BaseModel)


class Release:
    """A read-only view of one release folder (or one being built)."""

    def __init__(self, path: Path, store: Any = None, manifest: dict | None = None):
        self.path = Path(path)
        self.store = store
        self._rows: dict[str, list[dict]] = {}
        self._configs: dict[type, BaseModel] = {}
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

    @property
    def model(self) -> Manifest:
        """The manifest as its typed model (one line naming the first malformed field otherwise)."""
        return read_manifest(self.manifest, self.path / MANIFEST)

    def config_as(self, config_cls: type[ConfigT]) -> ConfigT:
        """The build configuration as the builder's own Config: every default stated once, in the Config."""
        cached = self._configs.get(config_cls)
        if cached is None:
            try:
                cached = config_cls.model_validate(self.config)
            except ValidationError as exc:
                error = exc.errors()[0]
                field = ".".join(str(p) for p in error["loc"]) or "(config)"
                raise CtxRobustError(f"config {field}: {error['msg']} ({self.path / MANIFEST}); the release was not built by this "
                                     "version of its builder") from None
            self._configs[config_cls] = cached
        return cached

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
