"""Integrity: every file's hash, size and row count as the release says, and sources as the lock pins them."""
from __future__ import annotations

from typing import Iterable

from ctxrobust.canonical import sha256_file
from ctxrobust.validators.checks import Failure, check

SUMS = "SHA256SUMS"
FROZEN_ONLY = ("hashes", "location")  # checks of the frozen folder: a build runs every other check before it hashes
HUB_MANAGED = {".gitattributes"}  # the Hub writes it into every repository: a download has it, no release lists it


def _read_sums(release) -> tuple[dict[str, str], list[Failure]]:
    path = release.path / SUMS
    if not path.exists():
        return {}, [Failure(SUMS, None, "missing; the release is incomplete, rebuild it")]
    sums, problems = {}, []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            problems.append(Failure(SUMS, None, f"line {number} is not '<sha256>  <file>'"))
            continue
        sums[name] = digest
    return sums, problems


@check("*", "hashes")
def hashes_match(release) -> Iterable[Failure]:
    sums, problems = _read_sums(release)
    yield from problems
    present = {p.name for p in release.path.iterdir() if p.is_file() and p.name != SUMS and p.name not in HUB_MANAGED}
    for name in sorted(present - set(sums)):
        yield Failure(name, None, f"file is not listed in {SUMS}")
    entries = release.manifest.get("files", []) + release.manifest.get("parquet", [])
    recorded = {e.get("name"): e.get("sha256") for e in entries if isinstance(e, dict)}
    reported: set[str] = set()  # one failure per changed file, however many records disagree with it
    for name, digest in sorted(sums.items()):
        path = release.path / name
        if not path.exists():
            yield Failure(name, None, f"listed in {SUMS} but missing")
            reported.add(name)
            continue
        actual = sha256_file(path)
        if actual != digest and recorded.get(name) == actual:
            yield Failure(SUMS, name, f"says {digest} for {name}, but the file and manifest.json agree on {actual}: {SUMS} was changed after the release was frozen")
        elif actual != digest:
            yield Failure(name, None, f"sha256 is {actual}, {SUMS} says {digest}: the file was changed after the release was frozen")
            reported.add(name)
    for entry in entries:
        if not isinstance(entry, dict) or not {"name", "sha256", "bytes"} <= entry.keys():
            yield Failure("manifest.json", None, f"file entry {entry!r} lacks name, sha256 or bytes: manifest.json was changed after the release was frozen")
            continue
        if entry["name"] in reported:
            continue
        path = release.path / entry["name"]
        if path.exists() and sha256_file(path) != entry["sha256"]:
            yield Failure(entry["name"], None, f"sha256 differs from manifest.json ({entry['sha256']})")
        elif path.exists() and path.stat().st_size != entry["bytes"]:
            yield Failure(entry["name"], None, f"size {path.stat().st_size} differs from manifest.json ({entry['bytes']})")


@check("*", "location")
def folder_matches_manifest(release) -> Iterable[Failure]:
    """A release in a releases tree (a folder inside one named after a dataset) lives in <dataset>/<version>/ as
    its manifest names them; a folder elsewhere (a Hub download, a copy) may have any name."""
    from ctxrobust import registry

    where = (release.path.parent.name, release.path.name)
    if where[0] not in registry.names() and where[0] != release.dataset:
        return
    if where != (release.dataset, release.version):
        yield Failure("manifest.json", None, f"the folder {where[0]}/{where[1]} holds {release.dataset} {release.version} by its manifest; move it to {release.dataset}/{release.version}/")


@check("*", "row_counts")
def row_counts_match(release) -> Iterable[Failure]:
    for entry in release.manifest.get("files", []):
        count = sum(1 for _ in release.iter_rows(entry["name"]))
        if count != entry["rows"]:
            yield Failure(entry["name"], None, f"{count} rows, manifest.json says {entry['rows']}")
    for entry in release.manifest.get("parquet", []):
        import pyarrow.parquet as pq

        path = release.path / entry["name"]
        if not path.exists():
            yield Failure(entry["name"], None, "Parquet copy missing")
            continue
        try:
            rows = pq.ParquetFile(path).metadata.num_rows
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
        path = release.path / entry["name"]
        if not path.exists():
            continue  # reported by row_counts
        try:
            copied = pq.read_table(path).to_pylist()
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
