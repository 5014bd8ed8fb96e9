"""Croissant 1.1 metadata (croissant.json, JSON-LD) for the folder a release is published as.

One FileObject per file of the folder (sha256 and size from the bytes on disk), one RecordSet
per Parquet file, one Field per column (types read from the Parquet schema, nested structs
and lists as sub-fields), descriptions from the project's card text. Deterministic: no clock
is read; `datePublished` is written only when SOURCE_DATE_EPOCH sets it.
"""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ctxrobust.canonical import sha256_file
from ctxrobust.card import card_text, config_name, dataset_text, release_licence, parquet_files
from ctxrobust.errors import CtxRobustError

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
    raise CtxRobustError(f"Parquet type {arrow_type} has no Croissant data type; write the field as a string, number, boolean, list or struct")


def _field(record: str, file_id: str, column: str, path: list[str], json_path: str, arrow_type: pa.DataType, descriptions: dict[str, str]) -> dict:
    """One Field for the value at `path` inside `column`; `json_path` reaches it from the column's value ("" for the column)."""
    dotted = ".".join([column, *path])
    field: dict[str, Any] = {"@type": "cr:Field", "@id": f"{record}/{'/'.join([column, *path])}", "name": path[-1] if path else column}
    if dotted in descriptions:
        field["description"] = descriptions[dotted]
    is_array = pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    inner = arrow_type.value_type if is_array else arrow_type
    if pa.types.is_list(inner) or pa.types.is_large_list(inner):
        raise CtxRobustError(f"{record}.{dotted}: a list of lists has no Croissant description here; nest the inner list in a struct")
    if is_array:
        field["isArray"] = True
        field["arrayShape"] = "-1"
    if pa.types.is_struct(inner):
        base = json_path + ("[*]" if is_array else "")
        field["subField"] = [
            _field(record, file_id, column, [*path, child.name], f"{base}.{child.name}" if base else child.name, child.type, descriptions)
            for child in inner
        ]
        return field
    field["dataType"] = data_type(inner)
    field["source"] = {"fileObject": {"@id": file_id}, "extract": {"column": column}}
    if json_path:
        field["source"]["transform"] = {"jsonPath": json_path}
    return field


def record_set(parquet_path: Path, descriptions: dict[str, str], description: str) -> dict:
    """A RecordSet for one Parquet file: one Field per column, keyed by `id`."""
    record = config_name(parquet_path.name)
    schema = pq.read_schema(parquet_path)
    fields = [_field(record, parquet_path.name, f.name, [], "", f.type, descriptions) for f in schema]
    entry: dict[str, Any] = {"@type": "cr:RecordSet", "@id": record, "name": record, "description": description, "field": fields}
    if "id" in schema.names:
        entry["key"] = {"@id": f"{record}/id"}
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


def croissant(manifest: dict, folder: Path, url: str) -> dict:
    """The Croissant document describing every file in `folder` (except croissant.json itself) and every field."""
    folder = Path(folder)
    text = dataset_text(manifest["dataset"])
    cards = card_text()
    licence = cards.licences[release_licence(manifest)]
    parquet_names = {entry["name"] for entry in parquet_files(manifest)}
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != FILE_NAME)
    distribution, record_sets = [], []
    for path in files:
        config = text.configs.get(config_name(path.name))
        if path.name in parquet_names:
            description = f"Configuration `{config_name(path.name)}`, split `test`" + (f": {config.description}" if config else ".")
            record_sets.append(record_set(path, config.fields if config else {}, config.description if config else f"Rows of {path.name}."))
        else:
            description = FILE_DESCRIPTIONS.get(path.name, f"{path.name}.")
        distribution.append(file_object(path, description))
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": manifest["dataset"],
        "alternateName": text.pretty_name,
        "description": text.summary,
        "license": licence.url,
        "url": url,
        "version": manifest["version"],
        "creator": {"@type": "sc:Organization", "name": "ctxrobust"},
        "citeAs": cards.citations[text.primary_citation].bibtex,
        "keywords": list(text.tags),
        "inLanguage": list(text.language),
        "isAccessibleForFree": True,
        "distribution": distribution,
        "recordSet": record_sets,
    }
    published = date_published()
    if published:
        document["datePublished"] = published
    return document
