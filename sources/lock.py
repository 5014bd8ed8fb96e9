"""The source lock: every upstream snapshot a build may read, pinned by sha256.

`sources/lock.json` is the committed source of truth. It can be regenerated
from a mirror directory (laid out like `fred/`, `situatedqa/`, `gsm_ic/`,
`gsm8k/`) with

    python -m sources.lock --regenerate-from DIR [--out sources/lock.json]

Regeneration hashes every file in DIR, checks DIR/SHA256SUMS when present,
and fills in licence and upstream from the catalogue below; entries whose
sha256 is unchanged keep the `retrieved` date already in the lock.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ctxrobust.canonical import dumps_pretty, sha256_file
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

FRED_LICENCE = "Public domain (U.S. Department of Labor data, distributed by FRED, Federal Reserve Bank of St. Louis)"
SITUATEDQA_COMMIT = "e49dadba396217b65185c4ae2b16208f0f4baeee"
GSM_IC_COMMIT = "0c1da13552afcc5d995d6f1ad5288417cb110246"

# folder -> (licence, URL template for {file}, note or None). FRED is handled apart.
HTTPS_CATALOGUE: dict[str, tuple[str, str, str | None]] = {
    "situatedqa": (
        "Not stated: SituatedQA (Zhang and Choi, 2021) specifies no licence; its questions come from Natural Questions (CC BY-SA 3.0)",
        f"https://raw.githubusercontent.com/mikejqzhang/SituatedQA/{SITUATEDQA_COMMIT}/data/qa_data/{{file}}",
        "The MisleadQA paper notes that SituatedQA specifies no licence, and the repository names none; check it before "
        "redistributing. URL pinned to the commit whose qa_data file matches these bytes.",
    ),
    "gsm_ic": (
        "Not stated: the google-research-datasets/GSM-IC README names no licence; the problems are drawn "
        "from GSM8K (MIT)",
        f"https://raw.githubusercontent.com/google-research-datasets/GSM-IC/{GSM_IC_COMMIT}/{{file}}",
        "Repository is archived with a single commit; URL pinned to it.",
    ),
    "gsm8k": (
        "MIT (Copyright (c) 2021 OpenAI; see gsm8k/LICENSE)",
        "https://raw.githubusercontent.com/openai/grade-school-math/master/{path}",
        "URL follows the master branch; the sha256 pins the bytes.",
    ),
}
GSM8K_PATHS = {"train.jsonl": "grade_school_math/data/train.jsonl", "LICENSE": "LICENSE"}

LOCK_NOTE = (
    "retrieved: the date of the mirror copy these hashes were taken from (the mirror records no upstream "
    "retrieval dates). Regenerate with: python -m sources.lock --regenerate-from DIR"
)

SKIP_FILES = {"README.md", "SHA256SUMS"}


def _fred_series_id(path: Path) -> str:
    """The series the CSV header names (the file name may differ, e.g. federal-series files)."""
    with open(path, encoding="utf-8", newline="") as handle:
        header = handle.readline().strip()
    match = re.fullmatch(r"DATE,([A-Z0-9]+)", header)
    if match is None:
        raise CtxRobustError(f"{path}:1: expected a 'DATE,<SERIES_ID>' header, found {header!r}")
    return match.group(1)


def _fred_note(path: Path, series_id: str) -> str | None:
    from sources.fetch import fred_csv_reproducible

    notes = []
    stem = path.stem
    if series_id != stem:
        federal = " (the federal minimum wage: the state has no minimum-wage law)" if series_id == "STTMINWGFG" else ""
        notes.append(f"file named {stem} but its header names series {series_id}{federal}; that series is fetched")
    if not fred_csv_reproducible(path):
        notes.append(
            "these bytes are not in the CSV form a fresh FRED download is written in (ISO dates, shortest "
            "values, LF line ends), so re-fetching cannot reproduce this sha256: use a mirror"
        )
    return "; ".join(notes) or None


def describe(mirror: Path, name: str) -> tuple[str, dict, str | None]:
    """(licence, upstream, note) for a mirror file, from the catalogue."""
    folder, _, file = name.partition("/")
    path = mirror / name
    if folder == "fred":
        series_id = _fred_series_id(path)
        return FRED_LICENCE, {"kind": "fred", "series_id": series_id}, _fred_note(path, series_id)
    if folder not in HTTPS_CATALOGUE or "/" in file:
        raise CtxRobustError(f"{path}: no upstream known for this file; add its folder to sources/lock.py HTTPS_CATALOGUE")
    licence, template, note = HTTPS_CATALOGUE[folder]
    if folder == "gsm8k":
        if file not in GSM8K_PATHS:
            raise CtxRobustError(f"{path}: no upstream known for this GSM8K file; add it to sources/lock.py GSM8K_PATHS")
        url = template.format(path=GSM8K_PATHS[file])
    else:
        url = template.format(file=file)
    return licence, {"kind": "https", "url": url}, note


def _mirror_files(mirror: Path) -> list[str]:
    names = [
        p.relative_to(mirror).as_posix()
        for p in mirror.rglob("*")
        if p.is_file() and p.relative_to(mirror).as_posix() not in SKIP_FILES
    ]
    return sorted(names)


def _read_sha256sums(mirror: Path) -> dict[str, str]:
    sums_path = mirror / "SHA256SUMS"
    if not sums_path.exists():
        return {}
    sums = {}
    for number, line in enumerate(sums_path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        match = re.fullmatch(r"([0-9a-f]{64}) [ *](?:\./)?(.+)", line.strip())
        if match is None:
            raise CtxRobustError(f"{sums_path}:{number}: not a '<sha256>  <path>' line")
        sums[match.group(2)] = match.group(1)
    return sums


def regenerate(mirror: Path, previous: dict[str, Snapshot] | None = None) -> Lock:
    """A lock naming every file of `mirror`, checked against its SHA256SUMS when present."""
    mirror = Path(mirror)
    if not mirror.is_dir():
        raise CtxRobustError(f"{mirror}: not a directory; pass a mirror laid out like fred/, situatedqa/, gsm_ic/, gsm8k/")
    previous = previous or {}
    sums = _read_sha256sums(mirror)
    names = _mirror_files(mirror)
    if sums and sorted(sums) != names:
        extra = sorted(set(names) ^ set(sums))
        raise CtxRobustError(f"{mirror}/SHA256SUMS and the mirror's files differ: {', '.join(extra)}")
    snapshots = []
    for name in names:
        path = mirror / name
        digest = sha256_file(path)
        if sums and sums[name] != digest:
            raise CtxRobustError(f"{path}: sha256 {digest} differs from SHA256SUMS ({sums[name]}); the mirror is damaged")
        licence, upstream, note = describe(mirror, name)
        old = previous.get(name)
        if old is not None and old.sha256 == digest:
            retrieved = old.retrieved
        else:
            retrieved = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.timezone.utc).date()
        snapshots.append(
            Snapshot(
                name=name,
                sha256=digest,
                bytes=path.stat().st_size,
                licence=licence,
                retrieved=retrieved,
                upstream=upstream,
                note=note,
            )
        )
    return Lock(note=LOCK_NOTE, snapshots=snapshots)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sources.lock", description="Regenerate the source lock from a mirror.")
    parser.add_argument("--regenerate-from", metavar="DIR", required=True, type=Path)
    parser.add_argument("--out", metavar="PATH", type=Path, default=DEFAULT_LOCK_PATH)
    args = parser.parse_args(argv)
    try:
        previous = load_lock(args.out) if args.out.exists() else {}
        lock = regenerate(args.regenerate_from, previous)
    except CtxRobustError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = dump_lock(lock)
    tmp = args.out.with_name(f".{args.out.name}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    tmp.replace(args.out)
    print(f"{args.out}: {len(lock.snapshots)} snapshots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
