"""The published JSON Schema files, and compiled validators for them."""

from __future__ import annotations

import importlib
import json
from functools import cache
from pathlib import Path

import jsonschema_rs
from jsonschema import Draft202012Validator

from ctxrobust.errors import CtxRobustError

SCHEMA_DIR = Path(__file__).parent


def schema_path(name: str) -> Path:
    """The file of schema `name`: here, or in the schema package of the dataset that declares it."""
    path = SCHEMA_DIR / f"{name}.schema.json"
    if path.exists():
        return path
    from ctxrobust import registry

    for dataset in registry.datasets():
        if name in dataset.schemas and dataset.schema_package != __name__:
            return Path(importlib.import_module(dataset.schema_package).__file__).parent / f"{name}.schema.json"
    return path


@cache
def load_schema(name: str) -> dict:
    path = schema_path(name)
    if not path.exists():
        raise CtxRobustError(f"no JSON Schema {path.name} in {path.parent}; the release names a schema this version does not have")
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def validator_for(name: str) -> Draft202012Validator:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@cache
def fast_validator_for(name: str):
    """A compiled validator for the same schema: answers valid or not quickly; `validator_for` explains why not."""
    validator_for(name)  # the schema itself must be valid draft 2020-12
    return jsonschema_rs.Draft202012Validator(load_schema(name))
