"""`vmine export --format hf`: two releases as one Hugging Face dataset, read back with the
real `datasets` library (the Parquet files, and the folder through its card's configs)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.dataset.models import SURFACE_EXTRAS, Setting
from tests.datasets import CASES, write_fixture_dataset

OLD_SHA = "a" * 40
NEW_SHA = "b" * 40
TOKENS = Setting(
    expr="self.speculative_tokens",
    cls="EngineConfig",
    field="speculative_tokens",
    type="int",
    default="0",
    choices=None,
    doc="Tokens to propose.",
    flags=["--speculative-tokens"],
)
BACKEND = Setting(
    expr="self.decode_backend",
    cls="EngineConfig",
    field="decode_backend",
    type='Literal["flash", "naive"]',
    default='"flash"',
    choices=["flash", "naive"],
    doc=None,
    flags=["--decode-backend", "-b"],
)


def _cases():
    first = dataclasses.replace(CASES[0], settings=[TOKENS, BACKEND])
    return [first, *CASES[1:]]


@pytest.fixture
def two_releases(tmp_path: Path) -> Path:
    """serve 0.1.0 and 0.2.0 under one folder; 0.2.0 has a verification.jsonl."""
    out = tmp_path / "output"
    write_fixture_dataset(
        out, _cases(), sha=OLD_SHA, provider="offline", source="pypi:serve==0.1.0"
    )
    new = write_fixture_dataset(out, _cases(), sha=NEW_SHA, source="pypi:serve==0.2.0")
    ids = [line["id"] for line in _lines(new / "index.jsonl")]
    outcomes = [
        {"id": ids[0], "outcome": "verified", "line": 12, "reproducer": "EngineConfig(x=1)"},
        {"id": ids[1], "outcome": "no-raise", "line": None, "reproducer": None},
    ]
    (new / "verification.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outcomes))
    return out


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _export(*args: str):
    return CliRunner().invoke(main, ["export", *args])


@pytest.fixture
def exported(two_releases: Path, tmp_path: Path) -> Path:
    out = tmp_path / "hf"
    result = _export(str(two_releases), "-o", str(out), "--license", "apache-2.0")
    assert result.exit_code == 0, result.output
    return out


def _load(tmp_path: Path, *args, **kwargs):
    from datasets import load_dataset

    return load_dataset(*args, split="train", cache_dir=str(tmp_path / "hf-cache"), **kwargs)


def test_datasets_reads_the_records_back_equal_to_the_json(two_releases, exported, tmp_path):
    rows = _load(
        tmp_path, "parquet", data_files=str(exported / "data/records-00000-of-00001.parquet")
    )
    on_disk = {}
    for release, sha in (("0.1.0", OLD_SHA), ("0.2.0", NEW_SHA)):
        root = two_releases / "acme" / "serve" / sha
        for path in sorted((root / "records").glob("*.json")):
            envelope = json.loads(path.read_text())
            on_disk[(release, envelope["record"]["id"])] = envelope
    assert len(rows) == len(on_disk) == 2 * len(CASES)
    for row in rows:
        release, version = row.pop("release"), row.pop("datasetVersion")
        envelope = on_disk[(release, row["id"])]
        assert row == envelope["record"]
        assert version == envelope["datasetVersion"]
    assert [row["release"] for row in rows][:: len(CASES)] == ["0.1.0", "0.2.0"]  # oldest first


def test_the_index_nests_settings_and_verification(two_releases, exported, tmp_path):
    rows = _load(
        tmp_path, "parquet", data_files=str(exported / "data/index-00000-of-00001.parquet")
    )
    new_index = _lines(two_releases / "acme" / "serve" / NEW_SHA / "index.jsonl")
    verified = {
        o["id"]: o for o in _lines(two_releases / "acme" / "serve" / NEW_SHA / "verification.jsonl")
    }
    old_rows = [row for row in rows if row["release"] == "0.1.0"]
    new_rows = [row for row in rows if row["release"] == "0.2.0"]
    assert [row["verification"] for row in old_rows] == [None] * len(CASES)
    for row, line in zip(new_rows, new_index, strict=True):
        outcome = row.pop("verification")
        row.pop("release")
        # a struct has every field: what only some surfaces have is null where the index
        # leaves it out
        row["settings"] = [
            {k: v for k, v in item.items() if v is not None or k not in SURFACE_EXTRAS}
            for item in row["settings"]
        ]
        assert row == line  # settings as a list of structs, `class` key and all
        expected = verified.get(line["id"])
        assert outcome == ({k: v for k, v in expected.items() if k != "id"} if expected else None)
    assert new_rows[0]["settings"][1]["class"] == "EngineConfig"
    assert new_rows[0]["settings"][1]["choices"] == ["flash", "naive"]


def test_the_card_header_follows_the_hub_and_loads_by_config(exported, tmp_path):
    text = (exported / "README.md").read_text()
    assert text.startswith("---\n")
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["license"] == "apache-2.0"
    assert header["size_categories"] == ["n<1K"]
    assert {"task_categories", "tags", "language", "pretty_name"} <= set(header)
    assert [c["config_name"] for c in header["configs"]] == ["records", "index"]
    for config in header["configs"]:
        assert (exported / config["data_files"][0]["path"]).is_file()
    # the consumer's own reading of the card: the folder, by config name
    index = _load(tmp_path, str(exported), "index")
    assert set(index["release"]) == {"0.1.0", "0.2.0"}
    body = text.split("---\n", 2)[2]
    assert "| 0.1.0 | acme/serve | `" + OLD_SHA + "` | 4 |" in body
    assert "offline/test-model (explain-v1)" in body
    assert "Records with a verification outcome (`vmine verify`): 2." in body


def test_a_second_export_replaces_its_files_and_leaves_the_rest(two_releases, exported):
    (exported / ".gitattributes").write_text("*.parquet filter=lfs\n")
    (exported / ".git").mkdir()
    one = two_releases / "acme" / "serve" / NEW_SHA
    result = _export(str(one), "-o", str(exported))
    assert result.exit_code == 0, result.output
    assert (exported / ".gitattributes").read_text() == "*.parquet filter=lfs\n"
    assert (exported / ".git").is_dir()
    assert "| 0.1.0 |" not in (exported / "README.md").read_text()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            lambda out, data: (out.mkdir(), (out / "README.md").write_text("# my card\n")),
            "not written by vmine export",
        ),
        (
            lambda out, data: (data / "acme/serve" / NEW_SHA / "verification.jsonl").write_text(
                "{oops\n"
            ),
            "verification.jsonl:1: not JSON",
        ),
        (
            lambda out, data: (data / "acme/serve" / NEW_SHA / "verification.jsonl").write_text(
                '{"id": "ffffffffffffffff"}\n'
            ),
            "ffffffffffffffff is not a record of this dataset",
        ),
    ],
    ids=["foreign card", "bad line", "unknown id"],
)
def test_refusals_are_one_line_and_write_nothing(two_releases, tmp_path, setup, message):
    out = tmp_path / "hf"
    setup(out, two_releases)
    before = sorted(p.name for p in out.rglob("*")) if out.exists() else None
    result = _export(str(two_releases), "-o", str(out))
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    after = sorted(p.name for p in out.rglob("*")) if out.exists() else None
    assert after == before


def test_the_same_release_twice_is_refused(tmp_path):
    first = write_fixture_dataset(tmp_path / "a", source="pypi:serve==0.1.0")
    second = write_fixture_dataset(tmp_path / "b", source="pypi:serve==0.1.0")
    result = _export(str(first), str(second), "-o", str(tmp_path / "hf"))
    assert result.exit_code == 2
    assert "release 0.1.0 of acme/serve is also" in result.output
