"""A read-only view of one release folder: its manifest, its typed build configuration, its rows."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator, TypeVar

from pydantic import BaseModel, ValidationError

from ctxrobust import release_files
from ctxrobust.canonical import parse_jsonl
from ctxrobust.errors import CtxRobustError
from ctxrobust.manifest import MANIFEST, Manifest, read_manifest

SUMS = "SHA256SUMS"
CARD = "README.md"
MANIFEST_LIMIT = 64 << 20  # bytes: a manifest is some kilobytes (GSM-IC's, the largest, about 160 KB)
ConfigT = TypeVar("ConfigT", bound=BaseModel)


class Release:
    """A read-only view of one release folder (or one being built)."""

    def __init__(self, path: Path, store: Any = None, manifest: dict | None = None):
        self.path = Path(path)
        self.store = store
        self._rows: dict[str, list[dict]] = {}
        self._json: dict[str, Any] = {}
        self._configs: dict[type, BaseModel] = {}
        if manifest is None:
            manifest_path = self.path / MANIFEST
            if not os.path.lexists(manifest_path):
                raise CtxRobustError(f"{manifest_path}: missing; {self.path} is not a release folder (build one with `ctxrobust build`)")
            manifest = release_files.read_json(self.path, MANIFEST, MANIFEST_LIMIT)  # bounded: a bomb is this release's failure
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
    def extra_files(self) -> list[dict]:
        """The files its builder declared besides the data files (manifest `extra_files`; none in older releases)."""
        value = self.manifest.get("extra_files", [])
        return value if isinstance(value, list) else []  # a malformed value: reported by the manifest and hashes checks

    def extra_file(self, name: str) -> dict | None:
        return next((entry for entry in self.extra_files if isinstance(entry, dict) and entry.get("name") == name), None)

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
                raise CtxRobustError(
                    f"config {field}: {error['msg']} ({self.path / MANIFEST}); the release was not built by this version of its builder"
                ) from None
            self._configs[config_cls] = cached
        return cached

    def file_path(self, name: str) -> Path:
        """The path of a release file, its name checked (a plain name inside the folder)."""
        return release_files.path_of(self.path, name)

    def has(self, name: str) -> bool:
        return release_files.exists(self.path, name)

    def open(self, name: str):
        """A release file opened for reading in binary, through the one checked opener."""
        return release_files.open_binary(self.path, name)

    def sha256(self, name: str) -> str:
        return release_files.sha256(self.path, name)

    def rows(self, name: str) -> list[dict]:
        if name not in self._rows:
            self._rows[name] = list(self.iter_rows(name))
        return self._rows[name]

    def iter_rows(self, name: str) -> Iterator[dict]:
        if name in self._rows:
            yield from self._rows[name]
            return
        path = self.file_path(name)
        if not self.has(name):
            raise CtxRobustError(f"{path}: missing from the release; rebuild it")
        for _, row in parse_jsonl(release_files.iter_lines(self.path, name), path):  # a nesting bomb: one line naming file and line
            yield row

    def json(self, name: str) -> Any:
        """A JSON file of the release (an extra file) parsed, read once through the checked opener."""
        if name not in self._json:
            path = self.file_path(name)
            if not self.has(name):
                raise CtxRobustError(f"{path}: missing from the release; rebuild it")
            self._json[name] = release_files.read_json(self.path, name)
        return self._json[name]

    def records(self, name: str) -> list:
        """The records of an extra file holding a JSON array; one line naming the file otherwise."""
        value = self.json(name)
        if not isinstance(value, list):
            raise CtxRobustError(f"{self.file_path(name)}: holds no JSON array of records; the release is corrupted, rebuild it")
        return value

    def manifest_sha256(self) -> str:
        return self.sha256(MANIFEST)


BUILDING = re.compile(r"\.(?P<version>.+)\.building-(?P<pid>\d+)")


def _subfolders(folder: Path) -> list[Path]:
    """Visible real subfolders (links to folders are not followed)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    return sorted(Path(e.path) for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))


def find_folders_without_manifest(root: Path) -> list[Path]:
    """<dataset>/<version>/ folders below a releases root that hold no manifest.json (a damaged or partial release)."""
    root = Path(root)
    if os.path.lexists(root / MANIFEST):
        return []
    return [
        version
        for dataset in _subfolders(root)
        if not os.path.lexists(dataset / MANIFEST)
        for version in _subfolders(dataset)
        if not os.path.lexists(version / MANIFEST)
    ]


MAX_FOLDER_DEPTH = 32  # levels below a releases root the search goes: a releases tree is <dataset>/<version>/, 2 deep


def find_releases(root: Path) -> list[Path]:
    """Every release folder at or below root (a folder holding manifest.json, of any kind), sorted; links
    to folders are not followed and hidden folders are skipped. The walk is iterative and bounded: folders
    nested more than MAX_FOLDER_DEPTH levels below root are one clear error, or, inside a release (whose
    `contents` check reports its folders), not searched further."""
    root = Path(root)
    if os.path.lexists(root / MANIFEST):
        return [root]
    found = []
    pending = [(root, 0, False)]  # (folder, levels below root, inside a release)
    while pending:
        folder, depth, inside = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable or vanished: as os.walk, skipped
        is_release = any(e.name == MANIFEST for e in entries)
        if is_release:
            found.append(folder)
        subfolders = sorted(e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
        if not subfolders:
            continue
        if depth >= MAX_FOLDER_DEPTH:
            if inside or is_release:
                continue
            raise CtxRobustError(
                f"{root}: folders nest more than {MAX_FOLDER_DEPTH} levels deep below it "
                f"(at {release_files.shown(str(folder.relative_to(root)), 120)}); a releases folder holds "
                "<dataset>/<version>/ release folders: give a release folder, or a folder of them"
            )
        pending.extend((folder / name, depth + 1, inside or is_release) for name in subfolders)
    return sorted(found)


def find_interrupted_builds(root: Path) -> list[Path]:
    """Temporary `.<version>.building-<pid>` folders an interrupted build left below a releases root."""
    root = Path(root)
    scan = [root.parent] if os.path.lexists(root / MANIFEST) else [root, *_subfolders(root)]
    found = []
    for folder in scan:
        try:
            found += [Path(e.path) for e in os.scandir(folder) if BUILDING.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
    return sorted(found)
