"""The settings of a builder's Config, described for `ctxrobust build DATASET --help`: each field's
name, type, default and bounds, read from the pydantic model itself so the help cannot drift."""

from __future__ import annotations

import json
import types
import typing

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

BOUND_NAMES = (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"), ("min_length", "length >="), ("max_length", "length <="))


def type_name(annotation: typing.Any) -> str:
    """A short, readable name of a field's type: int, float, str | null, list[int], one of 'a', 'b'."""
    if annotation is type(None):
        return "null"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        inner = [a for a in args if a is not Ellipsis]
        return f"list[{type_name(inner[0])}]" if inner else "list"
    if origin is dict:
        return f"dict[{type_name(args[0])}, {type_name(args[1])}]" if args else "dict"
    return getattr(annotation, "__name__", str(annotation))


def bounds(info) -> list[str]:
    """The numeric and length constraints pydantic enforces on a field (Field(ge=..., le=...))."""
    found = []
    for meta in info.metadata:
        for attribute, symbol in BOUND_NAMES:
            value = getattr(meta, attribute, None)
            if value is not None:
                found.append(f"{symbol} {value}")
    return found


def default_value(info) -> typing.Any:
    if info.default_factory is not None:
        return info.default_factory()
    return None if info.default is PydanticUndefined else info.default


def describe_settings(config_cls: type[BaseModel]) -> str:
    """One line per setting: `name  type  default X  (bounds)  description`."""
    lines = []
    fields = config_cls.model_fields
    width = max((len(name) for name in fields), default=0)
    for name in sorted(fields):
        info = fields[name]
        default = default_value(info)
        parts = [type_name(info.annotation)]
        if info.is_required():
            parts.append("required")
        else:
            parts.append("default " + json.dumps(default if not isinstance(default, tuple) else list(default), ensure_ascii=False))
        parts += bounds(info)
        text = "; ".join(parts)
        if info.description:
            text += f". {info.description}"
        lines.append(f"  {name:{width}s}  {text}")
    return "\n".join(lines)
