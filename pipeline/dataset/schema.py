"""The JSON Schemas of the dataset files, as `vmine schema` prints them and `schemas/` holds them."""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import BaseModel

from pipeline.dataset.manifest import Manifest
from pipeline.dataset.models import (
    RECORD_ID_RE,
    REPO_NAME_RE,
    SHA40_RE,
    TIMESTAMP_RE,
    Envelope,
    ErrorRecord,
    IndexEntry,
    Setting,
)
from pipeline.dataset.verification import Verification

SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "record": ErrorRecord,
    "envelope": Envelope,
    "index": IndexEntry,
    "manifest": Manifest,
    "verification": Verification,
}


# Formats the models check in validators, which pydantic cannot put into the schema itself.
_PATTERNS = {
    "id": RECORD_ID_RE.pattern,
    "repo": REPO_NAME_RE.pattern,
    "analyzedSha": SHA40_RE.pattern,
    "analyzedAt": TIMESTAMP_RE.pattern,
    "datasetVersion": TIMESTAMP_RE.pattern,
}


def _tighten(node: object, added: Mapping[str, frozenset[str]]) -> None:
    """Every property is required (files spell out every field, as `load_dataset` demands)
    but those added since datasets were first written (`added`, by the model's title), and
    the checked string formats carry their pattern."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            later = added.get(str(node.get("title")), frozenset())
            node["required"] = [name for name in properties if name not in later]
            for name, prop in properties.items():
                if name in _PATTERNS and prop.get("type") == "string":
                    prop["pattern"] = _PATTERNS[name]
        for value in node.values():
            _tighten(value, added)
    elif isinstance(node, list):
        for value in node:
            _tighten(value, added)


# the models nested in the dataset files whose fields came later
_NESTED: tuple[type[BaseModel], ...] = (Setting,)


def json_schema(kind: str = "record") -> str:
    """The JSON Schema (draft 2020-12) of one file kind of a dataset, as committed under
    `schemas/{kind}.schema.json`."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **SCHEMA_MODELS[kind].model_json_schema(mode="serialization"),
    }
    added = {
        model.__name__: getattr(model, "added_fields", frozenset())
        for model in (SCHEMA_MODELS[kind], *_NESTED)
    }
    _tighten(schema, added)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
