"""Arrow column types from a JSON Schema, for the Parquet copies of data files.

Declared types rather than types inferred from the rows: a field that happens to be null in every
row still gets its type, and a file with no rows still has its columns (Parquet readers and
`datasets` reject a file without any). Struct fields are sorted by name, as canonical JSON sorts
the keys of every row.
"""

from __future__ import annotations

import pyarrow as pa

_SCALARS = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(), "boolean": pa.bool_(), "null": pa.null()}


def _resolve(node: dict, root: dict) -> dict:
    while "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref is supported, not {ref!r}")
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _value_type(value) -> pa.DataType:
    if isinstance(value, bool):
        return pa.bool_()
    if isinstance(value, int):
        return pa.int64()
    if isinstance(value, float):
        return pa.float64()
    if value is None:
        return pa.null()
    return pa.string()


def _common(types: list[pa.DataType]) -> pa.DataType:
    """One type for several alternatives: nulls give way; int widens to float; otherwise string."""
    concrete = [t for t in types if t != pa.null()]
    if not concrete:
        return pa.null()
    if all(t == concrete[0] for t in concrete):
        return concrete[0]
    if set(concrete) <= {pa.int64(), pa.float64()}:
        return pa.float64()
    if all(pa.types.is_struct(t) for t in concrete):
        fields: dict[str, list[pa.DataType]] = {}
        for t in concrete:
            for f in t:
                fields.setdefault(f.name, []).append(f.type)
        return pa.struct([pa.field(name, _common(kinds)) for name, kinds in sorted(fields.items())])
    return pa.string()


def arrow_type(node: dict, root: dict) -> pa.DataType:
    node = _resolve(node, root)
    if "const" in node:
        return _value_type(node["const"])
    if "enum" in node:
        return _common([_value_type(v) for v in node["enum"]])
    for key in ("oneOf", "anyOf"):
        if key in node:
            return _common([arrow_type(branch, root) for branch in node[key]])
    declared = node.get("type")
    if isinstance(declared, list):
        return _common([arrow_type({**node, "type": t}, root) for t in declared])
    if declared == "array":
        return pa.list_(arrow_type(node.get("items", {}), root))
    if declared == "object" or "properties" in node:
        properties = node.get("properties", {})
        if not properties:
            return pa.string()  # free-form object: no columns to declare
        return pa.struct([pa.field(name, arrow_type(properties[name], root)) for name in sorted(properties)])
    return _SCALARS.get(declared, pa.string())


def arrow_schema(schema: dict) -> pa.Schema:
    """The Arrow schema of a row of `schema` (a JSON Schema whose rows are objects)."""
    row = arrow_type(schema, schema)
    if not pa.types.is_struct(row):
        raise ValueError("a data file's JSON Schema must describe objects")
    return pa.schema(list(row))
