"""The release manifest as one typed model: build writes it, validate, the card, Croissant and the
Hub code read it. `schemas/manifest.schema.json` is its published contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxrobust.errors import CtxRobustError

MANIFEST = "manifest.json"


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc']) or '(top)'}: {error['msg']}"


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class BuilderEntry(_Entry):
    package_version: str
    code_sha256: str


class SnapshotEntry(_Entry):
    name: str
    sha256: str


class DataFileEntry(_Entry):
    name: str
    sha256: str
    bytes: int
    rows: int
    schema_name: Optional[str] = Field(None, alias="schema")


class ParquetEntry(_Entry):
    name: str
    sha256: str
    bytes: int
    rows: int
    copy_of: str = Field(alias="from")  # the JSON Lines file it is a copy of

    @property
    def config(self) -> str:
        """One configuration per Parquet file, named by its stem: variants.parquet -> variants."""
        return self.name.rsplit(".", 1)[0]


class ExtraFileEntry(_Entry):
    """A file its builder declares besides the data files (e.g. a copy in another project's format)."""

    name: str
    sha256: str
    bytes: int
    format: str
    description: str
    rows: Optional[int] = None  # records of a JSON array
    schema_name: Optional[str] = Field(None, alias="schema")  # JSON Schema stem of each record
    mirrors: Optional[str] = Field(None, alias="from")  # the data file whose rows it restates


class CheckEntry(_Entry):
    passed: bool
    failures: int


class Manifest(_Entry):
    dataset: str
    version: str
    builder: BuilderEntry
    config: dict[str, Any]
    sources: list[SnapshotEntry]
    files: list[DataFileEntry]
    parquet: list[ParquetEntry]
    extra_files: list[ExtraFileEntry] = []  # absent from manifests written before extra files existed
    build_notes: dict[str, Any]
    validators: dict[str, CheckEntry]

    @property
    def published(self) -> list[ParquetEntry]:
        """The Parquet copies, sorted by name: each one a configuration, empty ones included."""
        return sorted(self.parquet, key=lambda entry: entry.name)


def read_manifest(data: Any, where: str | Path = "manifest.json") -> Manifest:
    """The manifest checked at the boundary: one line naming the missing or malformed field."""
    if isinstance(data, Manifest):
        return data
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise CtxRobustError(f"{where}: {first_error(exc)}; the release is corrupted or was not written by ctxrobust, rebuild it") from None
