"""The builder contract: one class per dataset, a config object, files of items."""

from __future__ import annotations

import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

if TYPE_CHECKING:
    from ctxrobust.sources.store import SnapshotStore


class BuildConfig(BaseModel):
    """Everything that determines a release's bytes, besides the sources. Recorded in the manifest."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    seed: int = 0

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, data: Any) -> Any:
        """`true` is no count: a boolean is refused wherever a setting takes numbers (pydantic would read it as 1)."""
        if isinstance(data, dict):
            for name, value in data.items():
                field = cls.model_fields.get(name)
                if field is not None and _holds_bool(value) and not _admits_bool(field.annotation):
                    raise PydanticCustomError(
                        "bool_for_number",
                        "{name}: {value} is a boolean, not a number; give a number",
                        {"name": name, "value": repr(value).lower() if isinstance(value, bool) else repr(value)},
                    )
        return data


def _holds_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_bool(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_bool(v) for v in value.values())
    return False


def _admits_bool(annotation: Any) -> bool:
    return annotation is bool or any(_admits_bool(arg) for arg in typing.get_args(annotation))


@dataclass
class DataFile:
    """One release data file: `name` (e.g. "variants.jsonl"), its rows, and its JSON Schema stem."""

    name: str
    rows: list[dict]
    schema: str


EXTRA_FORMATS = ("json",)


@dataclass
class ExtraFile:
    """A release file besides the JSON Lines data files, declared by its builder (e.g. a copy in another
    project's format). `format` "json": `value` is a JSON value; a list is written as a JSON array, one
    canonical record per line, and counted as rows. `schema`: the JSON Schema stem of each record (None: not
    checked record by record); `mirrors`: the data file whose rows it restates, if any."""

    name: str
    value: Any
    description: str
    format: str = "json"
    schema: str | None = None
    mirrors: str | None = None


@dataclass
class BuildOutput:
    files: list[DataFile]
    notes: dict[str, Any] = field(default_factory=dict)
    extra_files: list[ExtraFile] = field(default_factory=list)


class Builder(ABC):
    """Turns verified source snapshots into the data files of one dataset."""

    dataset: ClassVar[str]
    Config: ClassVar[type[BuildConfig]] = BuildConfig

    def __init__(self, config: BuildConfig, store: SnapshotStore | None = None):
        self.config = config
        self.store = store

    def required_snapshots(self) -> list[str]:
        """Lock names this build reads; the release pipeline fetches and verifies them first."""
        return []

    @abstractmethod
    def build(self) -> BuildOutput:
        """Return every data file of the release."""
