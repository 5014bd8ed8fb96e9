"""Hostile releases for `validate`: Parquet copies that disagree with their JSON Lines files (the manifest and
SHA256SUMS recomputed as a tamperer would), Parquet decompression bombs, a nesting bomb in one manifest of
a releases tree, a folder chain too deep to walk, and a SHA256SUMS that lists a file twice.

Each is one clear failure (or, for a folder tree that is no releases tree, one error line), in bounded time
and memory, and the intact releases beside it are still judged.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import REPO, built, edit_manifest, error_lines, fingerprint, release, root, run  # noqa: F401

from ctxrobust.build import write_sums
from ctxrobust.canonical import sha256_file
from ctxrobust.release import MANIFEST_LIMIT, MAX_FOLDER_DEPTH
from ctxrobust.validators.integrity import DECODED_FACTOR, SUMS_LIMIT, _decoded_bytes

WRITER_OPTIONS = {"compression": "zstd", "write_statistics": False, "store_schema": False}  # as the build writes copies
FAIL = "FAIL pseudowords 1.0.0 contexts.parquet - parquet_copies: "


def replace_parquet(folder: Path, table: pa.Table, name: str = "contexts.parquet", **options) -> None:
    """Write `table` as the release's Parquet copy and record it in manifest.json and SHA256SUMS, as a
    tamperer would: every hash and row count agrees with the new file."""
    pq.write_table(table, folder / name, **{**WRITER_OPTIONS, **options})
    rows = pq.ParquetFile(folder / name).metadata.num_rows

    def record(manifest):
        for entry in manifest["parquet"]:
            if entry["name"] == name:
                entry.update(sha256=sha256_file(folder / name), bytes=(folder / name).stat().st_size, rows=rows)

    edit_manifest(folder, record)


def contexts(folder: Path) -> pa.Table:
    return pq.read_table(folder / "contexts.parquet")


def jsonl_rows(folder: Path, name: str = "contexts.jsonl") -> list[dict]:
    return [json.loads(line) for line in (folder / name).read_text().splitlines()]


def validate(root: Path, **kwargs) -> subprocess.CompletedProcess:
    result = run("validate", str(root), **kwargs)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    return result


def fails(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("FAIL ")]


def peak_memory_mb(*args: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess, int]:
    """`ctxrobust ARGS...` run below a watcher process that reports the command's peak resident memory."""
    watcher = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'ctxrobust.cli', *sys.argv[1:]], capture_output=True, text=True)\n"
        "sys.stdout.write(done.stdout); sys.stderr.write(done.stderr)\n"
        "print('PEAK', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n"
        "sys.exit(done.returncode)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests")}
    env.pop("CTXROBUST_DEBUG", None)
    result = subprocess.run(
        [sys.executable, "-c", watcher, *args], capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
    )
    peak = int(result.stdout.rsplit("PEAK ", 1)[1].split()[0])
    return result, peak


# -- a Parquet copy that disagrees with its JSON Lines file ---------------------------------------------


def inject_a_row(folder: Path) -> pa.Table:
    table = contexts(folder)
    rows = table.to_pylist()
    return pa.Table.from_pylist(rows + [dict(rows[-1], id="CHA-000040-999", text="an injected row")], schema=table.schema)


def drop_a_row(folder: Path) -> pa.Table:
    table = contexts(folder)
    return table.slice(0, table.num_rows - 1)


@pytest.mark.parametrize(("tamper", "rows"), [(inject_a_row, 13), (drop_a_row, 11)])
def test_a_parquet_copy_with_a_row_more_or_less_fails_validate_and_push(root, release, tmp_path, tamper, rows):
    replace_parquet(release, tamper(release))
    result = validate(root)
    assert result.returncode == 1
    assert fails(result) == [
        f"{FAIL}{rows} rows by its metadata, but contexts.jsonl has 12 by manifest.json: a copy holds the same rows (its rows were not read)"
    ]
    before = fingerprint(tmp_path)
    staged = run("push", str(release), "--repo", "my-org/pw", "--dry-run", str(tmp_path / "stage"))
    assert staged.returncode == 2 and f"contexts.parquet: {rows} rows by its metadata" in staged.stderr
    assert "nothing was staged or pushed" in staged.stderr
    assert fingerprint(tmp_path) == before


def test_the_row_count_of_the_json_lines_file_changed_too_is_caught_by_streaming(root, release):
    replace_parquet(release, inject_a_row(release))
    edit_manifest(release, lambda m: m["files"][0].update(rows=13))
    result = validate(root)
    assert result.returncode == 1
    assert f"{FAIL}has more rows than contexts.jsonl, which ends after 12" in fails(result)
    assert "FAIL pseudowords 1.0.0 contexts.jsonl - row_counts: 12 rows, manifest.json says 13" in fails(result)


def test_a_missing_last_row_with_both_counts_changed_names_the_line_left_out(root, release):
    replace_parquet(release, drop_a_row(release))
    edit_manifest(release, lambda m: m["files"][0].update(rows=11))
    result = validate(root)
    assert f"{FAIL}ends after 11 rows; contexts.jsonl has more (line 12 is not in the copy)" in fails(result)


def test_integers_turned_to_floats_and_an_extra_column_fail_from_the_metadata(root, release):
    table = contexts(release)
    at = table.schema.get_field_index("n_chars")
    table = table.set_column(at, "n_chars", table["n_chars"].cast(pa.float64()))
    table = table.append_column("note", pa.array([None] * table.num_rows, pa.string()))
    replace_parquet(release, table)
    result = validate(root)
    assert result.returncode == 1
    assert fails(result) == [
        f"{FAIL}columns differ from schema pseudowords.contexts (column 'note' is not declared; "
        "column 'n_chars' is double, declared int64); its rows were not read"
    ]


def test_a_missing_column_is_named(root, release):
    replace_parquet(release, contexts(release).drop_columns(["tokenizer"]))
    assert fails(validate(root)) == [
        f"{FAIL}columns differ from schema pseudowords.contexts (column 'tokenizer' is missing); its rows were not read"
    ]


def test_columns_in_another_order_are_named(root, release):
    table = contexts(release)
    replace_parquet(release, table.select(list(reversed(table.column_names))))
    assert fails(validate(root)) == [
        f"{FAIL}columns differ from schema pseudowords.contexts (its columns are in another order than the declared one); its rows were not read"
    ]


def test_a_changed_value_names_the_row_the_line_and_the_field(root, release):
    rows = contexts(release).to_pylist()
    rows[4]["text"] = "a different text"
    replace_parquet(release, pa.Table.from_pylist(rows, schema=contexts(release).schema))
    item = jsonl_rows(release)[4]["id"]
    assert fails(validate(root)) == [
        f"FAIL pseudowords 1.0.0 contexts.parquet {item} parquet_copies: row 5 differs from contexts.jsonl line 5: field 'text' differs"
    ]


def test_rows_in_another_order_differ(root, release):
    rows = contexts(release).to_pylist()
    rows[0], rows[1] = rows[1], rows[0]
    replace_parquet(release, pa.Table.from_pylist(rows, schema=contexts(release).schema))
    assert "row 1 differs from contexts.jsonl line 1: field 'id' differs" in validate(root).stdout


def test_a_faithful_copy_written_with_other_parquet_options_passes(root, release):
    """Dictionary-typed columns, a stored Arrow schema, statistics, small row groups: the same rows and types."""
    table = contexts(release)
    dictionary = table.set_column(table.schema.get_field_index("kind"), "kind", table["kind"].dictionary_encode())
    replace_parquet(release, dictionary, compression="snappy", write_statistics=True, store_schema=True, row_group_size=5)
    result = validate(root)
    assert result.returncode == 0, result.stdout
    assert "validated 1 release(s): all passed" in result.stdout


# -- Parquet decompression bombs: bounded memory, one clear line ------------------------------------------


def constant_contexts(rows: int, text: str, ids: list[str] | None = None) -> pa.Table:
    """A contexts table of `rows` rows that all share one text (dictionary-encoded: a few KB on disk)."""

    def same(value: str) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array([value]))

    numbers = pa.array(np.full(rows, 10, dtype=np.int64))
    return pa.table(
        {
            "id": pa.array(ids) if ids else same("CHA-000010-000"),
            "kind": same("CHA"),
            "n_chars": numbers,
            "n_tokens": numbers,
            "target_tokens": numbers,
            "text": same(text),
            "tokenizer": same("o200k_base"),
        }
    )


def test_three_million_rows_of_2kb_text_fail_from_the_metadata_in_bounded_memory(root, release):
    replace_parquet(release, constant_contexts(3_000_000, "x" * 2048))
    assert (release / "contexts.parquet").stat().st_size < 2_000_000
    result, peak = peak_memory_mb("validate", str(root))
    assert result.returncode == 1 and "internal error" not in result.stderr
    assert fails(result) == [
        f"{FAIL}3000000 rows by its metadata, but contexts.jsonl has 12 by manifest.json: a copy holds the same rows (its rows were not read)"
    ]
    assert peak < 1500, f"validate took {peak} MB"


def test_the_same_bomb_with_the_manifest_row_count_raised_too_stops_after_one_batch(root, release):
    replace_parquet(release, constant_contexts(3_000_000, "x" * 2048))
    edit_manifest(release, lambda m: m["files"][0].update(rows=3_000_000))
    result, peak = peak_memory_mb("validate", str(root))
    assert result.returncode == 1
    assert f"{FAIL}has more rows than contexts.jsonl, which ends after 12" in fails(result)
    assert peak < 1500, f"validate took {peak} MB"


def test_few_rows_of_huge_compressible_values_are_refused_from_the_metadata(root, release):
    ids = [row["id"] for row in jsonl_rows(release)]
    replace_parquet(release, constant_contexts(12, "y" * 50_000_000, ids))
    assert (release / "contexts.parquet").stat().st_size < 100_000
    result, peak = peak_memory_mb("validate", str(root))
    size = (release / "contexts.jsonl").stat().st_size
    (line,) = fails(result)
    assert line.startswith(f"{FAIL}its pages decode to ")
    assert line.endswith(
        f"bytes by its metadata, more than {DECODED_FACTOR} times the {size} bytes of contexts.jsonl: no faithful copy is that large (its rows were not read)"
    )
    assert peak < 1000, f"validate took {peak} MB"


def test_a_dictionary_value_repeated_past_the_json_lines_size_is_refused_before_decoding(root, release):
    ids = [row["id"] for row in jsonl_rows(release)]
    replace_parquet(release, constant_contexts(12, "y" * 900_000, ids))  # one 0.9 MB page: under the file bound
    (line,) = fails(validate(root))
    assert line.startswith(f"{FAIL}rows 1-12 decode to 108")
    assert line.endswith(
        f"bytes, more than {DECODED_FACTOR} times the same rows of contexts.jsonl: they differ from them (and were not compared one by one)"
    )


def test_a_copy_file_far_larger_than_its_json_lines_file_is_refused_unopened(root, release):
    rows = jsonl_rows(release)
    noise = [os.urandom(200_000).hex() for _ in rows]  # incompressible: a 4.8 MB file for 2.8 KB of JSON Lines
    table = pa.Table.from_pylist([dict(row, text=text) for row, text in zip(rows, noise)], schema=contexts(release).schema)
    replace_parquet(release, table, compression="none")
    size, source = (release / "contexts.parquet").stat().st_size, (release / "contexts.jsonl").stat().st_size
    assert fails(validate(root)) == [
        f"{FAIL}is {size} bytes, more than {DECODED_FACTOR} times the {source} bytes of contexts.jsonl: no faithful copy is that large (it was not read)"
    ]


def test_an_encoding_whose_values_expand_is_refused(root, release):
    replace_parquet(release, contexts(release), use_dictionary=False, column_encoding={"text": "DELTA_BYTE_ARRAY"})
    assert fails(validate(root)) == [
        f"{FAIL}column 'text' is written with DELTA_BYTE_ARRAY encoding, whose values can decode far larger than the file; "
        "ctxrobust never writes it: its rows were not read"
    ]


def test_a_parquet_copy_that_is_not_parquet_is_one_line(root, release):
    (release / "contexts.parquet").write_bytes(b"PAR1" + b"\0" * 100 + b"PAR1")
    edit_manifest(release, lambda m: m["parquet"][0].update(sha256=sha256_file(release / "contexts.parquet"), bytes=108))
    lines = fails(validate(root))
    assert [line for line in lines if "parquet_copies" in line][0].startswith(f"{FAIL}not readable as Parquet (")


def test_decoded_sizes_of_nested_dictionary_strings_are_counted_without_decoding_them():
    value = "z" * 100_000
    strings = pa.DictionaryArray.from_arrays(pa.array(np.zeros(10_000, dtype=np.int32)), pa.array([value]))
    nested = pa.ListArray.from_arrays(pa.array([0, 10_000], pa.int32()), strings)  # one row: 10,000 refs to 100 KB
    structs = pa.StructArray.from_arrays([nested, pa.array([1])], names=["tags", "n"])
    assert _decoded_bytes(structs) >= 10_000 * 100_000
    assert structs.nbytes < 1_000_000  # what was counted was never decoded


# -- a nesting bomb in one manifest of a releases tree ----------------------------------------------------


def test_a_nesting_bomb_in_one_manifest_fails_that_release_and_the_others_are_judged(root, release, built):
    for version in ("0.9.0", "2.0.0"):
        shutil.copytree(built, root / "pseudowords" / version)
        edit_manifest(root / "pseudowords" / version, lambda m, v=version: m.update(version=v))
    (release / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    write_sums(release)
    result = validate(root)
    assert result.returncode == 1
    assert fails(result) == [
        f"FAIL pseudowords 1.0.0 manifest.json - load: {release / 'manifest.json'}: JSON nested more than 200 levels deep; "
        "the release is corrupted, rebuild it"
    ]
    assert "pseudowords 0.9.0: " in result.stdout and "pseudowords 2.0.0: " in result.stdout
    assert "pseudowords 2.0.0: 0 checks" not in result.stdout
    assert "validated 3 release(s): 1 failure(s)" in result.stdout


def test_a_nesting_bomb_in_an_object_of_the_manifest_is_refused_too(root, release):
    text = (release / "manifest.json").read_text()
    (release / "manifest.json").write_text(
        text.replace('"build_notes": {', '"build_notes": {"x": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + ",", 1)
    )
    write_sums(release)
    assert "JSON nested more than 200 levels deep" in fails(validate(root))[0]


def test_a_nesting_bomb_on_a_data_line_is_a_failure_naming_file_and_line(root, release):
    lines = (release / "contexts.jsonl").read_text().splitlines(keepends=True)
    lines[2] = "[" * 100_000 + "]" * 100_000 + "\n"
    (release / "contexts.jsonl").write_text("".join(lines))
    edit_manifest(
        release,
        lambda m: m["files"][0].update(sha256=sha256_file(release / "contexts.jsonl"), bytes=(release / "contexts.jsonl").stat().st_size),
    )
    result = validate(root)
    assert result.returncode == 1
    assert "RecursionError" not in result.stdout
    assert f"{release / 'contexts.jsonl'}:3: not valid JSON (JSON nested more than 200 levels deep)" in result.stdout


# -- a folder chain too deep to walk -------------------------------------------------------------------------


def folder_chain(top: Path, depth: int) -> None:
    """`depth` nested folders `d/d/...` below `top`, made through folder descriptors (the path is too long to name)."""
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def remove_chain(top: Path) -> None:
    """Remove a folder chain made by `folder_chain` without recursion (shutil.rmtree recurses): the folder two
    levels down moves up one level at a time."""
    while (top / "d").is_dir():
        if (top / "d" / "d").is_dir():
            os.rename(top / "d" / "d", top / "x")
            os.rmdir(top / "d")
            os.rename(top / "x", top / "d")
        else:
            os.rmdir(top / "d")
    os.rmdir(top)


@pytest.fixture
def chain_home():
    """A folder outside pytest's own temporary tree for a 1,500-deep chain: Python 3.11's shutil.rmtree (which
    pytest cleans its old folders with) recurses, so a chain left behind there would break later runs. The
    chain is removed here however the test ends."""
    home = Path(tempfile.mkdtemp(prefix="ctxrobust-chain-"))
    try:
        yield home
    finally:
        if (home / "tree").exists():
            remove_chain(home / "tree")
        shutil.rmtree(home)


def test_a_1500_deep_folder_chain_is_one_clear_line(chain_home):
    tree = chain_home / "tree"
    folder_chain(tree, 1500)
    result = validate(tree)
    assert result.returncode == 2
    assert result.stdout == ""
    assert error_lines(result.stderr) == [
        f"error: {tree}: folders nest more than {MAX_FOLDER_DEPTH} levels deep below it "
        f"(at '{'/'.join(['d'] * MAX_FOLDER_DEPTH)}'); a releases folder holds <dataset>/<version>/ release folders: "
        "give a release folder, or a folder of them"
    ]
    assert len(result.stderr.splitlines()) == 1


def test_a_deep_chain_inside_a_release_is_that_release_s_failure(root, release, built):
    folder_chain(release / "extra", 3 * MAX_FOLDER_DEPTH)  # deeper than the walk goes, shallow enough for rmtree
    later = root / "pseudowords" / "2.0.0"
    shutil.copytree(built, later)
    edit_manifest(later, lambda m: m.update(version="2.0.0"))
    result = validate(root)
    assert result.returncode == 1
    assert "FAIL pseudowords 1.0.0 extra - contents: a folder inside the release; a release holds files only: remove it" in fails(result)
    assert "validated 2 release(s)" in result.stdout


def test_a_releases_tree_a_few_levels_deep_is_still_searched(tmp_path, built):
    deep = tmp_path / "a" / "b" / "c" / "d" / "pseudowords" / "1.0.0"
    shutil.copytree(built, deep)
    result = validate(tmp_path / "a")
    assert re.search(r"^pseudowords 1\.0\.0: \d+ checks, ok$", result.stdout, re.M)  # found 6 levels down (a/b/c is reported as no release)


# -- SHA256SUMS listing a file twice -----------------------------------------------------------------------


def sums_lines(release: Path) -> list[str]:
    return (release / "SHA256SUMS").read_text().splitlines()


@pytest.mark.parametrize("wrong_first", [False, True])
def test_a_duplicate_wrong_line_in_sha256sums_is_refused_with_its_line(root, release, wrong_first):
    lines = sums_lines(release)
    number = next(i for i, line in enumerate(lines) if line.endswith("  contexts.jsonl"))
    wrong = f"{'a' * 64}  contexts.jsonl"
    lines = lines[:number] + [wrong] + lines[number:] if wrong_first else lines + [wrong]
    (release / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    sha256sum = shutil.which("sha256sum")
    if sha256sum:
        checked = subprocess.run([sha256sum, "-c", "SHA256SUMS"], cwd=release, capture_output=True, text=True)
        assert "contexts.jsonl: FAILED" in checked.stdout
    result = validate(root)
    assert result.returncode == 1
    first, again = (number + 1, number + 2) if wrong_first else (number + 1, len(lines))
    assert (
        f"FAIL pseudowords 1.0.0 SHA256SUMS contexts.jsonl hashes: line {again} lists contexts.jsonl again (first on line {first}), "
        "with another sha256; a file is listed once: this file or SHA256SUMS was changed after the release was frozen"
    ) in fails(result)


def test_a_duplicate_identical_line_is_refused_too(root, release):
    lines = sums_lines(release)
    (release / "SHA256SUMS").write_text("\n".join(lines + [lines[0]]) + "\n")
    name = lines[0].split("  ", 1)[1]
    assert any(
        f"line {len(lines) + 1} lists {name} again (first on line 1), with the same sha256" in line for line in fails(validate(root))
    )


def test_a_line_whose_hash_is_not_lowercase_hex_is_malformed(root, release):
    lines = sums_lines(release)
    lines[0] = "Z" * 64 + lines[0][64:]
    (release / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    assert "FAIL pseudowords 1.0.0 SHA256SUMS - hashes: line 1 is not '<sha256>  <file>'" in fails(validate(root))


def test_the_intact_release_passes(root):
    result = validate(root)
    assert result.returncode == 0 and fails(result) == []


# -- bounds on what a release's own lists may make `validate` read --------------------------------------------


def test_a_manifest_larger_than_any_release_writes_is_refused_before_it_is_read(root, release, built):
    with open(release / "manifest.json", "r+b") as manifest:
        manifest.truncate(MANIFEST_LIMIT + 10)  # sparse: nothing written, the size is what counts
    later = root / "pseudowords" / "2.0.0"
    shutil.copytree(built, later)
    edit_manifest(later, lambda m: m.update(version="2.0.0"))
    result = validate(root)
    assert fails(result) == [
        f"FAIL pseudowords 1.0.0 manifest.json - load: {release / 'manifest.json'}: more than {MANIFEST_LIMIT} bytes, far more than "
        "a release's manifest.json holds; the release is corrupted, rebuild it"
    ]
    assert re.search(r"^pseudowords 2\.0\.0: \d+ checks, ok$", result.stdout, re.M)


def test_an_oversized_sha256sums_is_one_failure(root, release):
    with open(release / "SHA256SUMS", "a") as sums:
        sums.write("#" * SUMS_LIMIT)
    assert (
        f"FAIL pseudowords 1.0.0 SHA256SUMS - hashes: {release / 'SHA256SUMS'}: more than {SUMS_LIMIT} bytes, far more than "
        "a release's SHA256SUMS holds; the release is corrupted, rebuild it"
    ) in fails(validate(root))


def test_a_schema_name_that_is_a_path_is_refused_and_nothing_outside_is_read(root, release):
    edit_manifest(release, lambda m: m["files"][0].update(schema="../../../tmp/evil"))  # would read /tmp/evil.schema.json
    result = validate(root)
    assert (
        "FAIL pseudowords 1.0.0 contexts.jsonl - schema: schema '../../../tmp/evil' is not the name of a JSON Schema "
        "(a plain stem such as pseudowords.contexts); nothing was read"
    ) in fails(result)
