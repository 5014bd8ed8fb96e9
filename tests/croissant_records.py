"""Reading mlcroissant records back as the release's JSONL values, field by field."""

from __future__ import annotations


def plain(value):
    """A value as mlcroissant yields it, with bytes decoded."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value.decode("utf-8") if isinstance(value, bytes) else value


def follow(value, json_path: str):
    """Evaluate a JSON path of croissant.json ("a.b", "[*].a", "a[*].b") on a JSONL value, every match."""
    if not json_path:
        return value
    head, _, rest = json_path.partition(".")
    if head == "[*]":
        return [follow(item, rest) for item in value]
    if head.endswith("[*]"):
        return [follow(item, rest) for item in value[head[:-3]]]
    return follow(value[head], rest)


def readable(field: dict, sub: dict) -> bool:
    """mlcroissant 1.1.1 applies a JSON path per element of a list column and keeps its first match:
    leaves below a second list level are described but not fully read by it."""
    crossings = sub["source"]["transform"]["jsonPath"].count("[*]")
    return crossings == 0 or (field.get("isArray") and crossings == 1)


def assert_records_match(document: dict, name: str, records: list[dict], rows: list[dict]) -> int:
    """Every field mlcroissant can read equals the JSONL value; returns the number of leaf values compared."""
    record_set = next(rs for rs in document["recordSet"] if rs["@id"] == name)
    assert len(records) == len(rows)
    compared = 0
    for record, row in zip(records, rows):
        record = plain(record)
        for field in record_set["field"]:
            got, want = record[field["@id"]], row[field["name"]]
            if "subField" not in field:
                assert got == want, (row["id"], field["name"])
                compared += 1
                continue
            for sub in field["subField"]:
                if not readable(field, sub):
                    continue
                path = sub["source"]["transform"]["jsonPath"]
                if field.get("isArray"):  # one dict per element, the path applied to each element
                    assert [element[sub["@id"]] for element in got] == follow(want, path), (row["id"], sub["@id"])
                else:
                    assert got[sub["@id"]] == follow(want, path), (row["id"], sub["@id"])
                compared += 1
    return compared
