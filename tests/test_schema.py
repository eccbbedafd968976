"""`vmine schema` prints the dataset's JSON Schemas; the copies under schemas/ must match."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.dataset.schema import SCHEMA_MODELS, json_schema

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


@pytest.mark.parametrize("kind", sorted(SCHEMA_MODELS))
def test_committed_schema_is_current(kind):
    committed = SCHEMAS / f"{kind}.schema.json"
    assert committed.read_text(encoding="utf-8") == json_schema(kind), (
        f"{committed} is stale; regenerate it with: vmine schema {kind} > schemas/{kind}.schema.json"
    )


def test_schema_command_prints_the_record_schema_by_default():
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0
    assert result.output == json_schema("record")


def test_record_schema_requires_every_field_in_record_order():
    schema = json.loads(json_schema("record"))
    assert schema["required"] == list(schema["properties"])
    assert schema["required"][:4] == ["id", "repo", "slug", "errorCode"]
    assert schema["required"][-3:] == ["analyzedSha", "analyzedAt", "schemaVersion"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["id"]["pattern"] == "^[0-9a-f]{16}$"


def test_unknown_schema_kind_is_a_usage_error():
    result = CliRunner().invoke(main, ["schema", "site"])
    assert result.exit_code == 2
