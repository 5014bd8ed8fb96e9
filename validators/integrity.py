"""Integrity: every file's hash, size and row count as the release says, and sources as the lock pins them."""

from __future__ import annotations

import os
import re
from itertools import islice
from typing import Iterable, Iterator

from ctxrobust import release_files
from ctxrobust.errors import CtxRobustError
from ctxrobust.validators.checks import Failure, check

SUMS = "SHA256SUMS"
FROZEN_ONLY = ("hashes", "location")  # checks of the frozen folder: a build runs every other check before it hashes
HUB_MANAGED = {".gitattributes"}  # the Hub writes it into every repository: a download has it, no release lists it
HUB_DOWNLOAD_FOLDER = ".cache"  # huggingface_hub keeps its download metadata here (`.cache/huggingface/`) in a local_dir download
MANIFEST = "manifest.json"
RECORDED_ONLY_HERE = "this file or SHA256SUMS was changed after the release was frozen"
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
SUMS_LIMIT = 4 << 20  # bytes: a line per file, some hundred bytes each


def _read_sums(release) -> tuple[dict[str, str], list[Failure]]:
    problem = release_files.entry_problem(release.path, SUMS)
    if problem == "missing from the release":
        return {}, [Failure(SUMS, None, "missing; the release is incomplete, rebuild it")]
    if problem:
        return {}, []  # a special file: reported by `contents`
    try:
        text = release_files.read_bytes(release.path, SUMS, SUMS_LIMIT).decode("utf-8", errors="replace")
    except CtxRobustError as exc:
        return {}, [Failure(SUMS, None, str(exc))]
    sums, first_line, problems = {}, {}, []
    for number, line in enumerate(text.splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or not SHA256_HEX.fullmatch(digest):
            problems.append(Failure(SUMS, None, f"line {number} is not '<sha256>  <file>'"))
            continue
        bad = release_files.name_problem(name)
        if bad:
            problems.append(Failure(SUMS, None, f"line {number}: {bad}; nothing outside the release is read"))
            continue
        if name in sums:  # `sha256sum -c` checks every line: a second one, right or wrong, is never passed over
            other = "the same sha256" if digest == sums[name] else "another sha256"
            problems.append(
                Failure(
                    SUMS,
                    name,
                    f"line {number} lists {name} again (first on line {first_line[name]}), with {other}; a file is listed once: {RECORDED_ONLY_HERE}",
                )
            )
            continue
        sums[name], first_line[name] = digest, number
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


# -- Parquet copies: metadata first, then the rows in step with the JSON Lines file, a batch at a time -------

PARQUET_BATCH_ROWS = 1024  # rows of a Parquet copy decoded at a time, compared with as many JSON Lines rows
DECODED_FACTOR = 8  # a faithful copy decodes to at most a few times its JSON Lines bytes (an int64 for a digit and a comma)
DECODED_SLACK = 1 << 20  # bytes: page headers, levels and dictionaries of a small file
EXPANDING_ENCODINGS = ("DELTA_BYTE_ARRAY",)  # prefixes shared: values decode far longer than their pages; never written here
SHOWN_COLUMN_PROBLEMS = 5


def _without_nulls(value):
    """Parquet has a column for every declared field; JSON Lines may leave an empty one out."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _reason(exc: BaseException) -> str:
    """An exception from pyarrow as a short phrase (a MemoryError has no text of its own)."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    lines = str(exc).strip().splitlines()
    return release_files.printable(lines[0], 300) if lines else type(exc).__name__


def _type_text(kind) -> str:
    text = str(kind)
    return text if len(text) <= 120 else f"{text[:120]}..."


def _plain(kind):
    """An Arrow type as a reader of the values sees it: dictionary encoding and 64-bit offsets do not change them."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return _plain(kind.value_type)
    if pa.types.is_large_string(kind):
        return pa.string()
    if pa.types.is_large_binary(kind):
        return pa.binary()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return pa.list_(_plain(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(kind.field(i).name, _plain(kind.field(i).type)) for i in range(kind.num_fields)])
    return kind


def _declared_columns(release, schema_name):
    """The Arrow columns a data file's Parquet copy has by the file's JSON Schema; None when the release names
    no schema of its dataset that this version has (the `schema` check reports that)."""
    from ctxrobust import registry
    from ctxrobust.schemas import load_schema
    from ctxrobust.schemas.arrow import arrow_schema

    if not isinstance(schema_name, str) or release_files.name_problem(schema_name):
        return None
    try:
        if schema_name not in registry.get(release.dataset).schemas:
            return None
        return arrow_schema(load_schema(schema_name))
    except (CtxRobustError, ValueError, KeyError):
        return None


def _column_problem(actual, declared, schema_name: str) -> str | None:
    """How the Parquet copy's columns (names, order and types, from its metadata) differ from the declared ones."""
    from collections import Counter

    problems = []
    declared_names, actual_names = declared.names, actual.names
    counts = Counter(actual_names)
    problems += [f"column {release_files.shown(n)} occurs {counts[n]} times" for n in sorted(counts) if counts[n] > 1]
    problems += [f"column {release_files.shown(n)} is not declared" for n in counts if n not in declared_names]
    problems += [f"column {n!r} is missing" for n in declared_names if n not in counts]
    for name in declared_names:
        if counts.get(name) == 1:
            found, expected = _plain(actual.field(name).type), declared.field(name).type
            if not found.equals(expected):
                problems.append(f"column {name!r} is {_type_text(found)}, declared {_type_text(expected)}")
    if not problems and actual_names != declared_names:
        problems.append("its columns are in another order than the declared one")
    if not problems:
        return None
    more = len(problems) - SHOWN_COLUMN_PROBLEMS
    listed = "; ".join(problems[:SHOWN_COLUMN_PROBLEMS]) + (f"; and {more} more" if more > 0 else "")
    return f"columns differ from schema {schema_name} ({listed}); its rows were not read"


def _metadata_problem(metadata, source: str, declared_rows, source_bytes: int) -> str | None:
    """Why a Parquet copy cannot be the copy of `source`, from its metadata alone (nothing decoded): its row
    count, and a bound on what its pages decode to (a small file can expand to gigabytes)."""
    rows = metadata.num_rows
    if isinstance(declared_rows, int) and not isinstance(declared_rows, bool) and rows != declared_rows:
        return f"{rows} rows by its metadata, but {source} has {declared_rows} by manifest.json: a copy holds the same rows (its rows were not read)"
    if metadata.num_row_groups > rows + 1:
        return f"{metadata.num_row_groups} row groups for {rows} rows by its metadata; its rows were not read"
    limit = DECODED_FACTOR * source_bytes + DECODED_SLACK
    total, values = 0, {}
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            path = chunk.path_in_schema
            expanding = [e for e in EXPANDING_ENCODINGS if e in chunk.encodings]
            if expanding:
                return (
                    f"column {release_files.shown(path)} is written with {expanding[0]} encoding, whose values can decode far "
                    "larger than the file; ctxrobust never writes it: its rows were not read"
                )
            if chunk.total_uncompressed_size < 0 or chunk.num_values < 0:
                return f"column {release_files.shown(path)} has negative sizes in its metadata; its rows were not read"
            total += chunk.total_uncompressed_size
            values[path] = values.get(path, 0) + chunk.num_values
    if total > limit:
        return (
            f"its pages decode to {total} bytes by its metadata, more than {DECODED_FACTOR} times the {source_bytes} bytes of "
            f"{source}: no faithful copy is that large (its rows were not read)"
        )
    for path, count in values.items():
        if count > rows + source_bytes:
            return (
                f"column {release_files.shown(path)} holds {count} values by its metadata, more than {source} "
                f"({source_bytes} bytes) can hold: its rows were not read"
            )
    return None


def _decoded_bytes(array) -> int:
    """What a batch column holds once its values are decoded, without decoding them (dictionary-encoded
    strings counted by their dictionary entries' lengths)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = pc.binary_length(array.dictionary) if _is_bytes(kind.value_type) else None
        picked = 0 if lengths is None else pc.sum(pc.take(lengths, array.indices)).as_py()
        return 8 * len(array) + int(picked or 0)
    if _is_bytes(kind):
        return 8 * len(array) + int(pc.sum(pc.binary_length(array)).as_py() or 0)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return 8 * len(array) + _decoded_bytes(array.flatten())
    if pa.types.is_struct(kind):
        return len(array) + sum(_decoded_bytes(array.field(i)) for i in range(kind.num_fields))
    return 8 * len(array)


def _is_bytes(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _jsonl_rows(release, name: str) -> Iterator[tuple[int, int, object]]:
    """(line number, bytes of the line, row) of a JSON Lines data file, streamed (never held whole)."""
    from ctxrobust.canonical import parse_jsonl

    path = release.file_path(name)
    for number, raw in release_files.iter_lines(release.path, name):
        for _, row in parse_jsonl(((number, raw),), path):  # a nesting bomb: one error naming file and line
            yield number, len(raw), row


def _first_difference(original, copy, source: str) -> str | None:
    """Which field of a Parquet row differs from its JSON Lines row, or None when they are the same."""
    try:
        left, right = _without_nulls(original), _without_nulls(copy)
        if left == right:
            return None
        if not isinstance(left, dict):
            return f"the line of {source} holds no JSON object"
        for key in sorted(set(left) | set(right), key=str):
            if key not in right:
                return f"field {release_files.shown(key)} is missing from the copy"
            if key not in left:
                return f"field {release_files.shown(key)} is not in {source}"
            if left[key] != right[key]:
                return f"field {release_files.shown(key)} differs"
        return "the rows differ"
    except RecursionError:
        return f"the line of {source} nests too deeply to be compared"


def _rows_problems(release, handle, name: str, source: str, string_columns: list[str]) -> Iterator[Failure]:
    """The Parquet copy's rows compared with the JSON Lines rows streamed in step, PARQUET_BATCH_ROWS at a
    time: strings read as dictionaries and each batch's decoded size bounded by the same rows' JSON Lines
    bytes before any value is decoded. Stops at the first difference."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    originals_left = _jsonl_rows(release, source)
    done = 0
    try:
        batches = pq.ParquetFile(handle, read_dictionary=string_columns).iter_batches(batch_size=PARQUET_BATCH_ROWS, use_threads=False)
    except Exception as exc:
        yield Failure(name, None, f"not readable as Parquet ({_reason(exc)})")
        return
    while True:
        try:
            batch = next(batches, None)
        except Exception as exc:
            yield Failure(name, None, f"not readable as Parquet after row {done} ({_reason(exc)})")
            return
        if batch is None:
            break
        try:
            originals = list(islice(originals_left, batch.num_rows))
        except CtxRobustError as exc:
            yield Failure(source, None, str(exc))
            return
        if len(originals) < batch.num_rows:
            yield Failure(name, None, f"has more rows than {source}, which ends after {done + len(originals)}")
            return
        decoded = sum(_decoded_bytes(column) for column in batch.columns)
        budget = DECODED_FACTOR * sum(size for _, size, _ in originals) + DECODED_SLACK
        if decoded > budget:
            yield Failure(
                name,
                None,
                f"rows {done + 1}-{done + batch.num_rows} decode to {decoded} bytes, more than {DECODED_FACTOR} times "
                f"the same rows of {source}: they differ from them (and were not compared one by one)",
            )
            return
        try:  # the strings decoded (within the bound just checked), then made Python objects
            table = pa.Table.from_batches([batch])
            copies = table.cast(pa.schema([pa.field(f.name, _plain(f.type)) for f in table.schema])).to_pylist()
        except Exception as exc:
            yield Failure(name, None, f"not readable as Parquet after row {done} ({_reason(exc)})")
            return
        for offset, ((number, _, original), copy) in enumerate(zip(originals, copies)):
            difference = _first_difference(original, copy, source)
            if difference:
                item = original.get("id") if isinstance(original, dict) else None
                yield Failure(
                    name, None if item is None else str(item), f"row {done + offset + 1} differs from {source} line {number}: {difference}"
                )
                return
        done += batch.num_rows
    try:
        left = next(originals_left, None)
    except CtxRobustError as exc:
        yield Failure(source, None, str(exc))
        return
    if left is not None:
        yield Failure(name, None, f"ends after {done} rows; {source} has more (line {left[0]} is not in the copy)")


@check("*", "parquet_copies")
def parquet_equals_jsonl(release) -> Iterable[Failure]:
    """Every Parquet copy holds the same rows, field for field, as the JSON Lines file it was made from, in the
    columns and types its JSON Schema declares. Row count, columns and a bound on decoded sizes are checked
    from the Parquet metadata before any row is read; then the rows are compared in step, a batch at a time,
    in bounded memory."""
    import pyarrow.parquet as pq

    data_files = {e.get("name"): e for e in release.manifest.get("files", []) if isinstance(e, dict)}
    for entry in release.manifest.get("parquet", []):
        if not isinstance(entry, dict):
            continue  # reported by hashes and manifest
        name, source = entry.get("name"), entry.get("from")
        if not _readable(release, name) or not _readable(release, source) or not release.has(name) or not release.has(source):
            continue  # reported by hashes, contents or row_counts
        data = data_files.get(source)
        if data is None:
            yield Failure(name, None, f"is the copy of {source} by manifest.json, which lists no such data file")
            continue
        source_bytes, copy_bytes = release_files.size(release.path, source), release_files.size(release.path, name)
        if copy_bytes > DECODED_FACTOR * source_bytes + DECODED_SLACK:  # nothing opened: not even its footer is parsed
            yield Failure(
                name,
                None,
                f"is {copy_bytes} bytes, more than {DECODED_FACTOR} times the {source_bytes} bytes of {source}: no faithful copy is that large (it was not read)",
            )
            continue
        with release.open(name) as handle:
            try:
                parquet = pq.ParquetFile(handle)
                metadata, columns = parquet.metadata, parquet.schema_arrow
                string_columns = [column.path for column in parquet.schema if column.physical_type == "BYTE_ARRAY"]
            except Exception as exc:
                yield Failure(name, None, f"not readable as Parquet ({_reason(exc)})")
                continue
            try:
                problem = _metadata_problem(metadata, source, data.get("rows"), source_bytes)
                declared = _declared_columns(release, data.get("schema"))
                if problem is None and declared is not None:
                    problem = _column_problem(columns, declared, data["schema"])
                if problem:
                    yield Failure(name, None, problem)
                    continue
                yield from _rows_problems(release, handle, name, source, string_columns)
            except RecursionError:
                yield Failure(name, None, "its columns nest too deeply to be compared; a copy has the declared columns (it was not read)")


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
