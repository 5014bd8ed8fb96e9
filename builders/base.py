"""The builder contract: one class per dataset, a config object, files of items."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from ctxrobust.sources.store import SnapshotStore


class BuildConfig(BaseModel):
    """Everything that determines a release's bytes, besides the sources. Recorded in the manifest."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    seed: int = 0


@dataclass
class DataFile:
    """One release data file: `name` (e.g. "variants.jsonl"), its rows, and its JSON Schema stem."""

    name: str
    rows: list[dict]
    schema: str


@dataclass
class BuildOutput:
    files: list[DataFile]
    notes: dict[str, Any] = field(default_factory=dict)


class Builder(ABC):
    """Turns verified source snapshots into the data files of one dataset."""

    dataset: ClassVar[str]
    Config: ClassVar[type[BuildConfig]] = BuildConfig

    def __init__(self, config: BuildConfig, store: "SnapshotStore | None" = None):
        self.config = config
        self.store = store

    def required_snapshots(self) -> list[str]:
        """Lock names this build reads; the release pipeline fetches and verifies them first."""
        return []

    @abstractmethod
    def build(self) -> BuildOutput:
        """Return every data file of the release."""
