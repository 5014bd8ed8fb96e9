"""Regenerate the source lock from a mirror directory (laid out like `fred/`, `situatedqa/`,
`gsm_ic/`, `gsm8k/`):

    python -m ctxrobust.sources.regenerate_lock --regenerate-from DIR [--out sources/lock.json] [--fred-vintage YYYY-MM-DD]

Regeneration hashes every file in DIR, checks DIR/SHA256SUMS when present, and fills in licence
and upstream from the catalogue below; entries whose sha256 is unchanged keep the `retrieved`
date already in the lock. A FRED file is pinned in its canonical CSV form (fred_csv.py; the
mirror file's own hash is kept as raw_sha256) at an ALFRED vintage: the one already in the
lock for that series, else --fred-vintage, else the file's date.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import re
import sys
from pathlib import Path

from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import fred_csv
from ctxrobust.sources.lock import DEFAULT_LOCK_PATH, Lock, Snapshot, dump_lock, load_lock

FRED_LICENCE = "Public domain (U.S. Department of Labor data, distributed by FRED, Federal Reserve Bank of St. Louis)"
# the commit that published the test-split annotations; the train and dev files are unchanged since e49dadb
SITUATEDQA_COMMIT = "1ef854512fe0f692ca55f92ff2feedf3d7612eda"
CONDAMBIGQA_COMMIT = "0880cef6d9c0bd7ca63c8ca29517bb092c5c7f4e"
GSM_IC_COMMIT = "0c1da13552afcc5d995d6f1ad5288417cb110246"

# folder -> (licence, URL template for {file}, note or None). FRED is handled apart.
HTTPS_CATALOGUE: dict[str, tuple[str, str, str | None]] = {
    "situatedqa": (
        "Not stated: SituatedQA (Zhang and Choi, 2021) specifies no licence; its questions come from Natural Questions (CC BY-SA 3.0)",
        f"https://raw.githubusercontent.com/mikejqzhang/SituatedQA/{SITUATEDQA_COMMIT}/data/qa_data/{{file}}",
        "The MisleadQA paper notes that SituatedQA specifies no licence, and the repository names none; check it before "
        "redistributing. URL pinned to the commit whose qa_data file matches these bytes.",
    ),
    "situatedqa_raw": (
        "Not stated: SituatedQA (Zhang and Choi, 2021) specifies no licence; its questions come from Natural Questions (CC BY-SA 3.0)",
        f"https://raw.githubusercontent.com/mikejqzhang/SituatedQA/{SITUATEDQA_COMMIT}/data/raw_data/{{file}}",
        "SituatedQA's annotation records (answer timelines); no licence named, as for qa_data. URL pinned to the commit whose "
        "raw_data file matches these bytes.",
    ),
    "condambigqa": (
        "Not stated: the innovation64/CondAmbigQA repository names no licence; the MisleadQA paper calls CondAmbigQA MIT",
        f"https://raw.githubusercontent.com/innovation64/CondAmbigQA/{CONDAMBIGQA_COMMIT}/{{file}}",
        "The 200-question release kept at the repository root from 2024-10-29 until its deletion on 2025-08-15; URL pinned to "
        "the commit that wrote these bytes.",
    ),
    "ramdocs": (
        "MIT (Copyright (c) 2025 Han Wang; see ramdocs/LICENSE)",
        "https://raw.githubusercontent.com/HanNight/RAMDocs/main/{file}",
        "RAMDocs (Wang et al., 2025), questions sampled from AmbigDocs; URL follows the main branch; the sha256 pins the bytes.",
    ),
    "gsm_ic": (
        "Not stated: the google-research-datasets/GSM-IC README names no licence; the problems are drawn from GSM8K (MIT)",
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
    "retrieval dates). FRED entries pin the canonical CSV form (ISO dates, values at cents) of the series "
    "at the ALFRED vintage named in upstream.vintage (the mirror copy's date, as the mirror records no "
    "download date); raw_sha256 is the mirror file as written. Regenerate with: "
    "python -m ctxrobust.sources.regenerate_lock --regenerate-from DIR"
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
    stem = path.stem
    if series_id == stem:
        return None
    federal = " (the federal minimum wage: the state has no minimum-wage law)" if series_id == "STTMINWGFG" else ""
    return f"file named {stem} but its header names series {series_id}{federal}; that series is fetched"


def describe(mirror: Path, name: str, vintage: dt.date | None = None) -> tuple[str, dict, str | None]:
    """(licence, upstream, note) for a mirror file, from the catalogue; FRED files need their vintage."""
    folder, _, file = name.partition("/")
    path = mirror / name
    if folder == "fred":
        series_id = _fred_series_id(path)
        upstream = {"kind": "fred", "series_id": series_id, "vintage": vintage}
        return FRED_LICENCE, upstream, _fred_note(path, series_id)
    if folder not in HTTPS_CATALOGUE or "/" in file:
        raise CtxRobustError(f"{path}: no upstream known for this file; add its folder to sources/regenerate_lock.py HTTPS_CATALOGUE")
    licence, template, note = HTTPS_CATALOGUE[folder]
    if folder == "gsm8k":
        if file not in GSM8K_PATHS:
            raise CtxRobustError(f"{path}: no upstream known for this GSM8K file; add it to sources/regenerate_lock.py GSM8K_PATHS")
        url = template.format(path=GSM8K_PATHS[file])
    else:
        url = template.format(file=file)
    return licence, {"kind": "https", "url": url}, note


def _mirror_files(mirror: Path) -> list[str]:
    names = [
        p.relative_to(mirror).as_posix() for p in mirror.rglob("*") if p.is_file() and p.relative_to(mirror).as_posix() not in SKIP_FILES
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


def _file_date(path: Path) -> dt.date:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.timezone.utc).date()


def _fred_vintage(old: Snapshot | None, series_id: str, default: dt.date | None, path: Path) -> dt.date:
    if old is not None and old.upstream.kind == "fred" and old.upstream.series_id == series_id:
        return old.upstream.vintage
    return default or _file_date(path)


def _pin(mirror: Path, name: str, old: Snapshot | None, fred_vintage: dt.date | None) -> dict:
    """The hashed fields of one entry: sha256/bytes of the pinned form (+ raw_* and vintage for FRED)."""
    path = mirror / name
    raw = path.read_bytes()
    if not name.startswith("fred/"):
        return {"sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw), "vintage": None}
    series_id = _fred_series_id(path)
    data = fred_csv.canonical(raw, series_id, str(path))
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "raw_sha256": hashlib.sha256(raw).hexdigest(),
        "raw_bytes": len(raw),
        "vintage": _fred_vintage(old, series_id, fred_vintage, path),
    }


def regenerate(mirror: Path, previous: dict[str, Snapshot] | None = None, fred_vintage: dt.date | None = None) -> Lock:
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
        old = previous.get(name)
        pinned = _pin(mirror, name, old, fred_vintage)
        licence, upstream, note = describe(mirror, name, pinned.pop("vintage"))
        unchanged = old is not None and old.sha256 in (pinned["sha256"], pinned.get("raw_sha256"))
        retrieved = old.retrieved if unchanged else _file_date(path)
        snapshots.append(Snapshot(name=name, licence=licence, retrieved=retrieved, upstream=upstream, note=note, **pinned))
    return Lock(note=LOCK_NOTE, snapshots=snapshots)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ctxrobust.sources.regenerate_lock", description="Regenerate the source lock from a mirror."
    )
    parser.add_argument("--regenerate-from", metavar="DIR", required=True, type=Path)
    parser.add_argument("--out", metavar="PATH", type=Path, default=DEFAULT_LOCK_PATH)
    parser.add_argument(
        "--fred-vintage",
        metavar="YYYY-MM-DD",
        type=dt.date.fromisoformat,
        help="ALFRED vintage for FRED series the lock does not pin yet (default: the file's date)",
    )
    args = parser.parse_args(argv)
    try:
        previous = load_lock(args.out) if args.out.exists() else {}
        lock = regenerate(args.regenerate_from, previous, args.fred_vintage)
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
