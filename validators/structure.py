"""Structure: every item validates against its JSON Schema, and ids are unique."""

from __future__ import annotations

from typing import Iterable

from ctxrobust import release_files
from ctxrobust.errors import CtxRobustError
from ctxrobust.schemas import fast_validator_for, validator_for
from ctxrobust.validators.checks import Failure, check

MAX_REPORTED_PER_FILE = 50


def _schema_name_problem(name) -> str | None:
    """Why a manifest's schema name is no schema stem (a plain name: never a path to a file elsewhere), or None."""
    if isinstance(name, str) and not release_files.name_problem(name):
        return None
    return (
        f"schema {release_files.shown(name)} is not the name of a JSON Schema (a plain stem such as pseudowords.contexts); nothing was read"
    )


@check("*", "schema")
def items_match_schema(release) -> Iterable[Failure]:
    for entry in release.files:
        if _schema_name_problem(entry.get("schema")):
            yield Failure(entry.get("name"), None, _schema_name_problem(entry.get("schema")))
            continue
        fast = fast_validator_for(entry["schema"])
        reported = 0
        for row in release.iter_rows(entry["name"]):
            if fast.is_valid(row):
                continue
            for error in validator_for(entry["schema"]).iter_errors(row):
                where = "/".join(str(p) for p in error.absolute_path) or "(item)"
                yield Failure(entry["name"], str(row.get("id")), f"{where}: {error.message} (schema {entry['schema']})")
                reported += 1
            if reported >= MAX_REPORTED_PER_FILE:
                yield Failure(entry["name"], None, f"{MAX_REPORTED_PER_FILE} schema failures listed; stopped checking this file")
                break


@check("*", "extra_schema")
def extra_records_match_schema(release) -> Iterable[Failure]:
    """Every record of an extra file that names a record schema validates against it (by position: such
    records need carry no id)."""
    for entry in release.extra_files:
        if not isinstance(entry, dict) or not entry.get("schema") or release_files.name_problem(entry.get("name")):
            continue
        if _schema_name_problem(entry["schema"]):
            yield Failure(entry["name"], None, _schema_name_problem(entry["schema"]))
            continue
        if release_files.entry_problem(release.path, entry["name"]):
            continue  # missing or not a regular file: reported by hashes and contents
        try:
            records = release.records(entry["name"])
        except CtxRobustError as exc:
            yield Failure(entry["name"], None, str(exc))
            continue
        fast, reported = fast_validator_for(entry["schema"]), 0
        for number, record in enumerate(records, start=1):
            if fast.is_valid(record):
                continue
            for error in validator_for(entry["schema"]).iter_errors(record):
                where = "/".join(str(p) for p in error.absolute_path) or "(record)"
                yield Failure(entry["name"], f"record {number}", f"{where}: {error.message} (schema {entry['schema']})")
                reported += 1
            if reported >= MAX_REPORTED_PER_FILE:
                yield Failure(entry["name"], None, f"{MAX_REPORTED_PER_FILE} schema failures listed; stopped checking this file")
                break


@check("*", "manifest")
def manifest_matches_schema(release) -> Iterable[Failure]:
    for error in validator_for("manifest").iter_errors(release.manifest):
        where = "/".join(str(p) for p in error.absolute_path) or "(manifest)"
        yield Failure("manifest.json", None, f"{where}: {error.message} (schema manifest)")


@check("*", "unique_ids")
def ids_unique(release) -> Iterable[Failure]:
    for entry in release.files:
        seen: set[str] = set()
        for row in release.iter_rows(entry["name"]):
            item = row.get("id")
            if item in seen:
                yield Failure(entry["name"], str(item), "id occurs more than once")
            seen.add(item)
