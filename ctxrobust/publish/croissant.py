"""Croissant 1.1 metadata (croissant.json, JSON-LD) for the folder a release is published as.

One FileObject per file of the folder (sha256 and size from the bytes on disk), one RecordSet
per Parquet file, one Field per column (types read from the Parquet schema; the leaves of a
struct or list-of-struct column as sub-fields with JSON paths), descriptions from the
project's card text. Deterministic: no clock is read; `datePublished` is written only when
SOURCE_DATE_EPOCH sets it.

mlcroissant (1.1.1) reads every field except one kind: a leaf below a list nested inside
the column's value (e.g. `provenance.distractors[*].line`), where its JSON-path transform
keeps the first match only. Such leaves are described correctly but read partially by it.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError
from ctxrobust.manifest import Manifest
from ctxrobust.publish.card import SPLIT, card_text, config_fields, dataset_text, licence_text, release_licence

FILE_NAME = "croissant.json"
CONFORMS_TO = "http://mlcommons.org/croissant/1.1"

# The JSON-LD context Croissant 1.1 recommends (spec Appendix 1), as mlcroissant writes it.
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

ENCODINGS = {".parquet": "application/x-parquet", ".json": "application/json", ".md": "text/markdown", ".jsonl": "application/jsonlines"}
FILE_DESCRIPTIONS = {
    "README.md": "The dataset card.",
    "manifest.json": "The release manifest: dataset, version, builder code version, build configuration, source snapshots, every file with sha256 and rows, build notes, validator results.",
    "SHA256SUMS": "sha256 of every file of the release (sha256sum format).",
}


def data_type(arrow_type: pa.DataType) -> str:
    """The Croissant data type of a Parquet leaf column."""
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_null(arrow_type):
        return "sc:Text"  # a column of nulls only: no value to type, read as text
    if pa.types.is_integer(arrow_type):
        return "sc:Integer"
    if pa.types.is_floating(arrow_type):
        return "sc:Float"
    if pa.types.is_boolean(arrow_type):
        return "sc:Boolean"
    raise CtxRobustError(
        f"Parquet type {arrow_type} has no Croissant data type; write the field as a string, number, boolean, list or struct"
    )


def _is_list(arrow_type: pa.DataType) -> bool:
    return pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)


def leaves(
    arrow_type: pa.DataType, path: tuple[str, ...] = (), json_path: str = "", in_list: bool = False
) -> Iterator[tuple[tuple[str, ...], str, pa.DataType, bool]]:
    """(path, JSON path from the column's value, leaf type, inside a list) for every leaf value of a column type."""
    if pa.types.is_struct(arrow_type):
        for child in arrow_type:
            yield from leaves(child.type, (*path, child.name), f"{json_path}.{child.name}" if json_path else child.name, in_list)
    elif _is_list(arrow_type):
        if _is_list(arrow_type.value_type):
            raise CtxRobustError(
                f"field {'.'.join(path) or '(column)'}: a list of lists has no Croissant description here; nest the inner list in a struct"
            )
        if pa.types.is_struct(arrow_type.value_type):
            yield from leaves(arrow_type.value_type, path, f"{json_path}[*]", True)
        else:
            yield path, json_path, arrow_type.value_type, True
    else:
        yield path, json_path, arrow_type, in_list


def _field(record: str, file_id: str, column: pa.Field, descriptions: dict[str, str]) -> dict:
    """One Field per column. A struct or list-of-struct column gets one sub-field per leaf, at any depth,
    named by its dotted path and read with a JSON path from the column's value (mlcroissant reads one
    level of sub-fields, so deeper structure is flattened into paths rather than nested)."""
    field: dict[str, Any] = {"@type": "cr:Field", "@id": f"{record}/{column.name}", "name": column.name}
    if column.name in descriptions:
        field["description"] = descriptions[column.name]
    source = {"fileObject": {"@id": file_id}, "extract": {"column": column.name}}
    is_array = _is_list(column.type)
    inner = column.type.value_type if is_array else column.type
    if is_array:
        field["isArray"], field["arrayShape"] = True, "-1"
    if not pa.types.is_struct(inner):
        if _is_list(inner):
            raise CtxRobustError(f"field {column.name}: a list of lists has no Croissant description here; nest the inner list in a struct")
        return {**field, "dataType": data_type(inner), "source": source}
    subfields = []
    for path, json_path, leaf_type, in_list in leaves(column.type):
        dotted = ".".join(path)
        sub: dict[str, Any] = {"@type": "cr:Field", "@id": f"{record}/{column.name}/{'/'.join(path)}", "name": dotted}
        description = descriptions.get(f"{column.name}.{dotted}")
        if description:
            sub["description"] = description
        if in_list and (not is_array or json_path.count("[*]") > 1):
            sub["isArray"], sub["arrayShape"] = True, "-1"  # a list inside the column's value (or inside its elements)
        sub["dataType"] = data_type(leaf_type)
        sub["source"] = {**source, "transform": {"jsonPath": json_path}}
        subfields.append(sub)
    field["subField"] = subfields
    return field


def record_set(parquet_path: Path, name: str, descriptions: dict[str, str], description: str) -> dict:
    """A RecordSet for one Parquet file: one Field per column, keyed by `id`."""
    schema = pq.read_schema(parquet_path)
    fields = [_field(name, parquet_path.name, f, descriptions) for f in schema]
    entry: dict[str, Any] = {"@type": "cr:RecordSet", "@id": name, "name": name, "description": description, "field": fields}
    if "id" in schema.names:
        entry["key"] = {"@id": f"{name}/id"}
    return entry


def file_object(path: Path, description: str) -> dict:
    return {
        "@type": "cr:FileObject",
        "@id": path.name,
        "name": path.name,
        "description": description,
        "contentUrl": path.name,
        "contentSize": f"{path.stat().st_size} B",
        "encodingFormat": ENCODINGS.get(path.suffix, "text/plain"),
        "sha256": sha256_file(path),
    }


def date_published() -> str | None:
    """SOURCE_DATE_EPOCH (the reproducible-builds convention) as a date, or None: no clock is read."""
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if not value:
        return None
    try:
        return dt.datetime.fromtimestamp(int(value), tz=dt.timezone.utc).date().isoformat()
    except (ValueError, OverflowError, OSError):
        raise CtxRobustError(f"SOURCE_DATE_EPOCH={value!r} is not a Unix time in seconds; unset it or give e.g. 1767225600") from None


def croissant(manifest: Manifest, folder: Path, url: str) -> dict:
    """The Croissant document describing every file in `folder` (except croissant.json itself) and every field."""
    folder = Path(folder)
    text = dataset_text(manifest.dataset)
    published = {entry.name: entry for entry in manifest.published}
    described_files = {**FILE_DESCRIPTIONS, **{entry.name: entry.description for entry in manifest.extra_files}}
    distribution, record_sets = [], []
    for path in sorted(p for p in folder.iterdir() if p.is_file() and p.name != FILE_NAME):
        entry = published.get(path.name)
        if entry is None:
            distribution.append(file_object(path, described_files.get(path.name, f"{path.name}.")))
            continue
        described = text.configs.get(entry.config)
        summary = (described.description if described else f"Rows of {path.name}.") + (" Empty in this build." if entry.rows == 0 else "")
        distribution.append(file_object(path, f"Configuration `{entry.config}`, split `{SPLIT}`: {summary}"))
        record_sets.append(record_set(path, entry.config, config_fields(text, entry.config), summary))
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": manifest.dataset,
        "alternateName": text.pretty_name,
        "description": text.summary,
        "license": licence_text(release_licence(manifest)).url,
        "url": url,
        "version": manifest.version,
        "creator": {"@type": "sc:Organization", "name": "ctxrobust"},
        "keywords": list(text.tags),
        "inLanguage": list(text.language),
        "isAccessibleForFree": True,
        "distribution": distribution,
        "recordSet": record_sets,
    }
    if text.primary_citation is not None:
        document["citeAs"] = card_text().citations[text.primary_citation].bibtex
    date = date_published()
    if date:
        document["datePublished"] = date
    return document
