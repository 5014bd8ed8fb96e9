"""Integrity: every file's hash, size and row count as the release says, and sources as the lock pins them."""

from __future__ import annotations

import os
from typing import Iterable

from ctxrobust import release_files
from ctxrobust.errors import CtxRobustError
from ctxrobust.validators.checks import Failure, check

SUMS = "SHA256SUMS"
FROZEN_ONLY = ("hashes", "location")  # checks of the frozen folder: a build runs every other check before it hashes
HUB_MANAGED = {".gitattributes"}  # the Hub writes it into every repository: a download has it, no release lists it
HUB_DOWNLOAD_FOLDER = ".cache"  # huggingface_hub keeps its download metadata here (`.cache/huggingface/`) in a local_dir download
MANIFEST = "manifest.json"
RECORDED_ONLY_HERE = "this file or SHA256SUMS was changed after the release was frozen"


def _read_sums(release) -> tuple[dict[str, str], list[Failure]]:
    problem = release_files.entry_problem(release.path, SUMS)
    if problem == "missing from the release":
        return {}, [Failure(SUMS, None, "missing; the release is incomplete, rebuild it")]
    if problem:
        return {}, []  # a special file: reported by `contents`
    try:
        text = release_files.read_bytes(release.path, SUMS).decode("utf-8", errors="replace")
    except CtxRobustError as exc:
        return {}, [Failure(SUMS, None, str(exc))]
    sums, problems = {}, []
    for number, line in enumerate(text.splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            problems.append(Failure(SUMS, None, f"line {number} is not '<sha256>  <file>'"))
            continue
        bad = release_files.name_problem(name)
        if bad:
            problems.append(Failure(SUMS, None, f"line {number}: {bad}; nothing outside the release is read"))
            continue
        sums[name] = digest
    return sums, problems


def _special(release, name: str) -> bool:
    """A release entry that is there but is no regular file (reported by `contents`)."""
    problem = release_files.entry_problem(release.path, name)
    return problem is not None and problem != "missing from the release"


def _hub_metadata_only(path: str) -> bool:
    """A `.cache` folder holding nothing but huggingface_hub's `huggingface/` metadata folder."""
    try:
        return [e.name for e in os.scandir(path)] == ["huggingface"] and not os.path.islink(path)
    except OSError:
        return False


@check("*", "contents")
def only_regular_files(release) -> Iterable[Failure]:
    """A release folder holds regular files only: no folder (nor a release nested in one), link, FIFO or device."""
    try:
        entries = sorted(os.scandir(release.path), key=lambda e: e.name)
    except OSError as exc:
        yield Failure(None, None, f"{release.path}: cannot list the folder ({exc.strerror})")
        return
    for entry in entries:
        kind = release_files.kind_of(os.lstat(entry.path).st_mode)
        if kind is None or (kind == "a folder" and entry.name == HUB_DOWNLOAD_FOLDER and _hub_metadata_only(entry.path)):
            continue
        name = release_files.shown(entry.name) if release_files.name_problem(entry.name) else entry.name
        if kind == "a folder" and os.path.lexists(os.path.join(entry.path, MANIFEST)):
            yield Failure(
                name,
                None,
                "a release nested inside this release; a release holds no folders: move it to a <dataset>/<version>/ folder of its own",
            )
        elif kind == "a folder":
            yield Failure(name, None, "a folder inside the release; a release holds files only: remove it")
        else:
            yield Failure(
                name,
                None,
                f"is {kind}; a release holds regular files only, and it was not read: replace it with the file itself or rebuild the release",
            )


@check("*", "hashes")
def hashes_match(release) -> Iterable[Failure]:
    sums, problems = _read_sums(release)
    yield from problems
    present = {
        p.name
        for p in release.path.iterdir()
        if p.name != SUMS and p.name not in HUB_MANAGED and release_files.kind_of(os.lstat(p).st_mode) is None
    }
    for name in sorted(present - set(sums)):
        yield Failure(name if not release_files.name_problem(name) else release_files.shown(name), None, f"file is not listed in {SUMS}")
    entries = release.manifest.get("files", []) + release.manifest.get("parquet", []) + _listed(release.manifest.get("extra_files", []))
    recorded = {e.get("name"): e.get("sha256") for e in entries if isinstance(e, dict)}
    reported: set[str] = set()  # one failure per changed file, however many records disagree with it
    for name, digest in sorted(sums.items()):
        if not release_files.exists(release.path, name):
            yield Failure(name, None, f"listed in {SUMS} but missing")
            reported.add(name)
            continue
        if _special(release, name):
            reported.add(name)
            continue
        actual = release.sha256(name)
        if actual != digest and recorded.get(name) == actual:
            yield Failure(
                SUMS,
                name,
                f"says {digest} for {name}, but the file and manifest.json agree on {actual}: {SUMS} was changed after the release was frozen",
            )
        elif actual != digest and name not in recorded:
            yield Failure(name, None, f"sha256 is {actual}, {SUMS} says {digest}, and nothing else records it: {RECORDED_ONLY_HERE}")
            reported.add(name)
        elif actual != digest:
            yield Failure(name, None, f"sha256 is {actual}, {SUMS} says {digest}: the file was changed after the release was frozen")
            reported.add(name)
    for entry in entries:
        if not isinstance(entry, dict) or not {"name", "sha256", "bytes"} <= entry.keys():
            yield Failure(
                "manifest.json",
                None,
                f"file entry {release_files.shown(entry)} lacks name, sha256 or bytes: manifest.json was changed after the release was frozen",
            )
            continue
        names = [entry["name"]] + ([entry["from"]] if "from" in entry else [])
        bad = next((release_files.name_problem(n) for n in names if release_files.name_problem(n)), None)
        if bad:
            yield Failure(
                "manifest.json", None, f"{bad}; nothing outside the release is read: manifest.json was changed after the release was frozen"
            )
            continue
        if entry["name"] in reported or _special(release, entry["name"]):
            continue
        if not release_files.exists(release.path, entry["name"]):
            yield Failure(entry["name"], None, "listed in manifest.json but missing from the release: rebuild it")
            reported.add(entry["name"])
            continue
        if release.sha256(entry["name"]) != entry["sha256"]:
            yield Failure(entry["name"], None, f"sha256 differs from manifest.json ({entry['sha256']})")
        elif release_files.size(release.path, entry["name"]) != entry["bytes"]:
            yield Failure(
                entry["name"], None, f"size {release_files.size(release.path, entry['name'])} differs from manifest.json ({entry['bytes']})"
            )


def _listed(value) -> list:
    return value if isinstance(value, list) else [value]  # a malformed value is reported as a malformed entry


def frozen_problems(release) -> list[Failure]:
    """Why a release may not be read as frozen: special files or folders inside it, and changed files."""
    return list(only_regular_files(release)) + list(hashes_match(release))


def _readable(release, name) -> bool:
    """A manifest-named file that can be opened (a bad name or special file is reported by `hashes`/`contents`)."""
    return not release_files.name_problem(name) and not _special(release, name)


@check("*", "location")
def folder_matches_manifest(release) -> Iterable[Failure]:
    """A release in a releases tree (a folder inside one named after a dataset) lives in <dataset>/<version>/ as
    its manifest names them; a folder elsewhere (a Hub download, a copy) may have any name."""
    from ctxrobust import registry

    where = (release.path.parent.name, release.path.name)
    if where[0] not in registry.names() and where[0] != release.dataset:
        return
    if where != (release.dataset, release.version):
        yield Failure(
            "manifest.json",
            None,
            f"the folder {where[0]}/{where[1]} holds {release.dataset} {release.version} by its manifest; move it to {release.dataset}/{release.version}/",
        )


@check("*", "row_counts")
def row_counts_match(release) -> Iterable[Failure]:
    for entry in release.manifest.get("files", []):
        if not _readable(release, entry["name"]):
            continue
        count = sum(1 for _ in release.iter_rows(entry["name"]))
        if count != entry["rows"]:
            yield Failure(entry["name"], None, f"{count} rows, manifest.json says {entry['rows']}")
    for entry in release.extra_files:
        if not isinstance(entry, dict) or entry.get("rows") is None or not _readable(release, entry.get("name")):
            continue
        if not release.has(entry["name"]):
            continue  # reported by hashes
        try:
            records = release.records(entry["name"])
        except CtxRobustError as exc:
            yield Failure(entry["name"], None, str(exc))
            continue
        if len(records) != entry["rows"]:
            yield Failure(entry["name"], None, f"{len(records)} records, manifest.json says {entry['rows']}")
    for entry in release.manifest.get("parquet", []):
        import pyarrow.parquet as pq

        if not _readable(release, entry["name"]):
            continue
        if not release.has(entry["name"]):
            yield Failure(entry["name"], None, "Parquet copy missing")
            continue
        try:
            with release.open(entry["name"]) as handle:
                rows = pq.ParquetFile(handle).metadata.num_rows
        except Exception as exc:
            yield Failure(entry["name"], None, f"not readable as Parquet ({exc})")
            continue
        if rows != entry["rows"]:
            yield Failure(entry["name"], None, f"{rows} rows, manifest.json says {entry['rows']}")


def _without_nulls(value):
    """Parquet has a column for every declared field; JSON Lines may leave an empty one out."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


@check("*", "parquet_copies")
def parquet_equals_jsonl(release) -> Iterable[Failure]:
    """Every Parquet copy holds the same rows, field for field, as the JSON Lines file it was made from."""
    import pyarrow.parquet as pq

    for entry in release.manifest.get("parquet", []):
        if not _readable(release, entry["name"]) or not _readable(release, entry.get("from")) or not release.has(entry["name"]):
            continue  # reported by hashes, contents or row_counts
        try:
            with release.open(entry["name"]) as handle:
                copied = pq.read_table(handle).to_pylist()
        except Exception as exc:
            yield Failure(entry["name"], None, f"not readable as Parquet ({exc})")
            continue
        for original, copy in zip(release.iter_rows(entry["from"]), copied):
            if _without_nulls(original) != _without_nulls(copy):
                yield Failure(entry["name"], str(original.get("id")), f"row differs from {entry['from']}")
                break


@check("*", "sources_locked")
def sources_match_lock(release) -> Iterable[Failure]:
    from ctxrobust.sources.lock import load_lock

    lock = load_lock()
    for source in release.manifest.get("sources", []):
        pinned = lock.get(source["name"])
        if pinned is None:
            yield Failure("manifest.json", source["name"], "source is not in the lock file sources/lock.json")
        elif pinned.sha256 != source["sha256"]:
            yield Failure("manifest.json", source["name"], f"sha256 {source['sha256']} differs from the lock ({pinned.sha256})")
