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
    """A FRED series, fetched with fredapi and written as `DATE,<series_id>` CSV."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["fred"]
    series_id: str = Field(pattern=r"^[A-Z0-9]+$")


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
    def _unique_and_sorted(self) -> "Lock":
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
