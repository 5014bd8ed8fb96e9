"""The source lock: every upstream snapshot a build may read, pinned by sha256.

`sources/lock.json` is the committed source of truth; `regenerate_lock.py` rebuilds it from a
mirror. This module holds the lock's model and reads and writes it.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ctxrobust.canonical import dumps_pretty
from ctxrobust.errors import CtxRobustError

DEFAULT_LOCK_PATH = Path(__file__).resolve().with_name("lock.json")


class FredUpstream(BaseModel):
    """A FRED series at an ALFRED vintage: its observations as FRED published them on `vintage`.

    Fetched with fredapi (observations endpoint, realtime_start = realtime_end = vintage), so
    revisions published after the vintage never change the pinned bytes. The snapshot's sha256
    is of the canonical CSV form (sources/fred_csv.py), whichever way the file came.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["fred"]
    series_id: str = Field(pattern=r"^[A-Z0-9]+$")
    vintage: dt.date


class HttpsUpstream(BaseModel):
    """A file served as-is at a URL (e.g. raw.githubusercontent.com at a pinned commit)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["https"]
    url: str = Field(pattern=r"^https?://")


class HfUpstream(BaseModel):
    """A file in a Hugging Face Hub repository at a pinned revision."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["hf"]
    repo_id: str
    filename: str
    revision: str
    repo_type: Literal["dataset", "model", "space"] = "dataset"


Upstream = Annotated[Union[FredUpstream, HttpsUpstream, HfUpstream], Field(discriminator="kind")]


class Snapshot(BaseModel):
    """One pinned file. `name` is its path inside a mirror or the cache."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=0)
    licence: str = Field(min_length=1)
    retrieved: dt.date
    upstream: Upstream
    note: str | None = None
    # FRED only: the mirror's file before conversion to the canonical form (sha256 and bytes above)
    raw_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    raw_bytes: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _raw_only_for_converted_files(self) -> Snapshot:
        if (self.raw_sha256 is None) != (self.raw_bytes is None):
            raise ValueError(f"{self.name}: give raw_sha256 and raw_bytes together")
        if self.raw_sha256 is not None and self.upstream.kind != "fred":
            raise ValueError(f"{self.name}: raw_sha256 is only for FRED files, which are pinned in their canonical form")
        return self

    @property
    def canonical_form(self) -> bool:
        """True when the pinned bytes are a canonical FRED CSV, made from a mirror's file or an API answer."""
        return self.upstream.kind == "fred"

    @field_validator("name")
    @classmethod
    def _relative_posix_path(cls, name: str) -> str:
        parts = PurePosixPath(name).parts
        if not parts or name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"name {name!r} must be a relative path like 'fred/STTMINWGNE.csv'")
        return name


class Lock(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    note: str | None = None
    snapshots: list[Snapshot]

    @model_validator(mode="after")
    def _unique_and_sorted(self) -> Lock:
        names = [s.name for s in self.snapshots]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"snapshot names repeated: {', '.join(duplicates)}")
        if names != sorted(names):
            raise ValueError("snapshots must be sorted by name")
        return self


def read_lock(path: Path | str | None = None) -> Lock:
    """The whole lock file (with its note); errors name the file and the problem."""
    path = Path(path) if path is not None else DEFAULT_LOCK_PATH
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CtxRobustError(f"{path}: lock file not found; restore sources/lock.json from the repository") from None
    except json.JSONDecodeError as exc:
        raise CtxRobustError(f"{path}:{exc.lineno}: lock file is not valid JSON ({exc.msg})") from None
    try:
        return Lock.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CtxRobustError(f"{path}: invalid lock entry at {where or 'top level'}: {first['msg']}") from None


def load_lock(path: Path | str | None = None) -> dict[str, Snapshot]:
    """Lock entries by name (sorted)."""
    return {s.name: s for s in read_lock(path).snapshots}


def dump_lock(lock: Lock) -> str:
    """The committed text form: canonical, indented JSON."""
    return dumps_pretty(lock.model_dump(mode="json", exclude_none=True))


# --- Regeneration from a mirror ------------------------------------------------
