"""Releases for the publishing tests: a small pseudowords build, and hand-written release folders.

A hand-written release is laid out as `ctxrobust.release.build_release` lays one out
(canonical JSONL, Parquet copies, manifest.json, README.md card, SHA256SUMS), with rows the
tests write themselves; it lets the publishing code be tested on nested fields, empty files
and manifests with sources, failed checks and exclusions, independently of any builder.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ctxrobust.build import build_release, write_sums
from ctxrobust.canonical import dumps_pretty, sha256_file, write_jsonl
from ctxrobust.publish.card import render_card
from ctxrobust.release import CARD, MANIFEST

SMALL_PSEUDOWORDS = {"vocabulary_size": 2000, "lengths": [10, 40], "contexts_per_length": 3, "kinds": ["CHA", "TOK"]}
PARQUET_OPTIONS = {"compression": "zstd", "write_statistics": False, "store_schema": False}


def build_pseudowords(out_root: Path, version: str = "0.0.1", **overrides) -> Path:
    return build_release("pseudowords", version, {**SMALL_PSEUDOWORDS, **overrides}, out_root, None).path


def write_parquet(rows: list[dict], path: Path, schema: pa.Schema | None) -> None:
    """The Parquet copy; an empty one has the given columns and no row group (as `datasets` needs to read it)."""
    if rows:
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, **PARQUET_OPTIONS)
    else:
        pq.ParquetWriter(path, schema, **PARQUET_OPTIONS).close()


def write_release(
    root: Path,
    dataset: str,
    version: str,
    files: dict[str, list[dict]],
    *,
    columns: dict[str, pa.Schema] | None = None,
    notes: dict | None = None,
    validators: dict | None = None,
    sources: list[dict] | None = None,
    config: dict | None = None,
) -> Path:
    """Write a release folder `root/<dataset>/<version>/` holding `files` ({"main.jsonl": rows, ...});
    `columns` gives the Arrow schema of a file's Parquet copy (needed for an empty file)."""
    folder = Path(root) / dataset / version
    folder.mkdir(parents=True)
    entries, parquet = [], []
    for name, rows in sorted(files.items()):
        path = folder / name
        count = write_jsonl(path, rows)
        entries.append(
            {"name": name, "sha256": sha256_file(path), "bytes": path.stat().st_size, "rows": count, "schema": f"{dataset}.{name[:-6]}"}
        )
        pq_path = folder / (name[: -len(".jsonl")] + ".parquet")
        write_parquet(sorted(rows, key=lambda row: row["id"]), pq_path, (columns or {}).get(name))
        parquet.append({"name": pq_path.name, "sha256": sha256_file(pq_path), "bytes": pq_path.stat().st_size, "rows": count, "from": name})
    manifest = {
        "dataset": dataset,
        "version": version,
        "builder": {"package_version": "0.1.0", "code_sha256": "0" * 64},
        "config": config if config is not None else {"seed": 0},
        "sources": sources or [],
        "files": entries,
        "parquet": parquet,
        "build_notes": notes or {},
        "validators": validators if validators is not None else {"schema": {"passed": True, "failures": 0}},
    }
    (folder / MANIFEST).write_text(dumps_pretty(manifest), encoding="utf-8", newline="\n")
    (folder / CARD).write_text(render_card(manifest), encoding="utf-8", newline="\n")
    write_sums(folder)
    return folder


def nested_rows(n: int, salt: str = "") -> list[dict]:
    """MisleadQA-shaped rows with every kind of field the Parquet copies can hold: strings, numbers,
    booleans, lists, structs, lists of structs, unicode and all-null columns."""
    rows = []
    for i in range(n):
        rows.append(
            {
                "id": f"item-{i:03d}{salt}",
                "question": f"What was the value in year {1990 + i}? — “quoted” ünïcode {salt}",
                "options": {
                    "A": f"${i}.25",
                    "B": f"${i + 1}.50",
                    "C": f"${i + 2}.75",
                    "D": f"${i + 3}.00",
                    "E": "Insufficient information",
                },
                "gold": "ABCD"[i % 4],
                "lure": "BCDA"[i % 4],
                "contexts": {
                    "G": {
                        "text": f"In {1990 + i} it was ${i}.25.",
                        "scope": {"time": str(1990 + i), "location": None},
                        "true": True,
                        "cues": ["year"] * (i % 3),
                    },
                    "S": {
                        "text": f"In {1980 + i} it was ${i + 1}.50.",
                        "scope": {"time": str(1980 + i), "location": None},
                        "true": True,
                        "cues": [],
                    },
                    "F": {
                        "text": f"In {1990 + i} it was ${i + 1}.50.",
                        "scope": {"time": str(1990 + i), "location": None},
                        "true": False,
                        "cues": ["year"],
                    },
                },
                "provenance": {
                    "G": {"line": i + 2, "snapshot": "fred/STTMINWGNE.csv"},
                    "distractors": [{"line": i + 10, "value": "1.00"}, {"line": i + 20, "value": "2.00"}],
                },
                "substitutions": [{"start": 17, "end": 17 + len(f"${i}.25"), "gold": f"${i}.25", "lure": f"${i + 1}.50"}] * (1 + i % 2),
                "tags": ["fred", "time"][: 1 + i % 2],
                "weight": 0.5 + i,
                "cluster": i // 3,
                "audited": i % 2 == 0,
                "note": None,
            }
        )
    return rows


NESTED_COLUMNS = pa.Table.from_pylist(nested_rows(3)).schema  # the columns every nested file has, rows or not


@pytest.fixture(scope="session")
def pseudowords_release(tmp_path_factory) -> Path:
    return build_pseudowords(tmp_path_factory.mktemp("pw-releases"))


@pytest.fixture(scope="session")
def nested_release(tmp_path_factory) -> Path:
    """A hand-written misleadqa-named release with nested fields, an empty file, a source snapshot and an exclusion note."""
    root = tmp_path_factory.mktemp("nested-releases")
    return write_release(
        root,
        "misleadqa",
        "0.0.1",
        {"main.jsonl": nested_rows(7), "condition.jsonl": [], "audit_sample.jsonl": nested_rows(2, "-a")},
        columns={"main.jsonl": NESTED_COLUMNS, "condition.jsonl": NESTED_COLUMNS, "audit_sample.jsonl": NESTED_COLUMNS},
        notes={"excluded": {"fred": 2, "situatedqa": 5}, "items": {"main": 7}},
        sources=[{"name": "fred/STTMINWGNE.csv", "sha256": "ab" * 32}],
        validators={"balance": {"passed": True, "failures": 0}, "span_replay": {"passed": True, "failures": 0}},
    )
