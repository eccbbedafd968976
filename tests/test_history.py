"""`vmine history`: timelines chained from the diffs of neighbouring releases, the release
series a SOURCE and --releases name, the three renderers, and the command end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.dataset.models import Setting
from pipeline.diff.changes import ErrorSet
from pipeline.history.releases import (
    HistoryError,
    ReleaseSpec,
    parse_index_versions,
    release_specs,
)
from pipeline.history.report import render_json, render_markdown, render_text, since
from pipeline.history.timeline import Release, build_history
from tests.git_fixtures import commit, git
from tests.test_diff import REPO, entry_of, raise_site

BLOCK = raise_site("CacheConfig.__post_init__", "block_size must be positive", line=12)
SWAP = raise_site("CacheConfig.__post_init__", "swap_space must be non-negative", line=20)
WORLD = raise_site("ParallelConfig.check", "world size {ws} exceeds the device count", line=40)
WORLD_2 = {**WORLD, "errorMessage": "world size {ws} exceeds the number of devices"}
WORLD_2["messagePattern"] = WORLD_2["errorMessage"]
LORA = raise_site("LoRAConfig.check_rank", "rank must be at most 64", line=60)
SPEC = raise_site("SpecConfig.__post_init__", "k must be set", line=80)


def _method(choices: list[str]) -> Setting:
    return Setting(
        expr="self.method",
        cls="SpecConfig",
        field="method",
        type="str",
        default='"ngram"',
        choices=choices,
        doc=None,
        flags=["--method"],
    )


def release(name: str, sites: list[dict], settings: dict[str, list[Setting]] | None = None):
    settings = settings or {}
    entries = tuple(
        entry_of(site).model_copy(update={"settings": settings.get(site["errorMessage"], [])})
        for site in sites
    )
    return Release(name, ErrorSet(label=name, repo=REPO, sha=None, entries=entries))


# Five releases: WORLD is reworded in 3, SWAP moves in 2, SPEC arrives in 2 and its settings
# change in 4, LORA goes away in 3 and comes back in 5, BLOCK never changes.
SERIES = [
    release("1", [BLOCK, SWAP, WORLD, LORA]),
    release("2", [BLOCK, {**SWAP, "lineNumber": 24}, WORLD, LORA, SPEC]),
    release(
        "3", [BLOCK, {**SWAP, "lineNumber": 24}, WORLD_2, SPEC], {"k must be set": [_method(["a"])]}
    ),
    release(
        "4",
        [BLOCK, {**SWAP, "lineNumber": 24}, WORLD_2, SPEC],
        {"k must be set": [_method(["a", "b"])]},
    ),
    release(
        "5",
        [BLOCK, {**SWAP, "lineNumber": 24}, WORLD_2, LORA, SPEC],
        {"k must be set": [_method(["a", "b"])]},
    ),
]


def _by_message(history):
    return {line.latest.errorMessage: line for line in history.timelines}


def test_each_error_gets_one_timeline_through_every_kind_of_change():
    history = build_history(SERIES)
    lines = _by_message(history)
    assert len(history.timelines) == 5
    block = lines["block_size must be positive"]
    assert (block.first_seen, block.last_seen, block.events, block.removed_in) == (
        "1",
        "5",
        [],
        None,
    )
    swap = lines["swap_space must be non-negative"]
    assert (swap.moved_in(), swap.reworded_in(), swap.changed_in()) == (["2"], [], [])
    world = lines["world size {ws} exceeds the number of devices"]
    assert (world.first_seen, world.reworded_in()) == ("1", ["3"])
    assert world.ids == [entry_of(WORLD).id, entry_of(WORLD_2).id]
    spec = lines["k must be set"]
    # release 3 starts reading the setting (one side only: no change), release 4 changes it
    assert (spec.first_seen, spec.changed_in(), spec.settings_changed_in()) == ("2", ["4"], ["4"])
    lora = lines["rank must be at most 64"]
    assert (lora.present_in, lora.removed_in) == (["1", "2", "5"], None)


def test_an_error_that_went_away_says_where():
    history = build_history(SERIES[:3])
    lora = _by_message(history)["rank must be at most 64"]
    assert (lora.last_seen, lora.removed_in) == ("2", "3")


def test_counts_and_the_explain_sentence():
    history = build_history(SERIES)
    assert history.counts() == {
        "errors": 5,
        "inLast": 5,
        "addedAfterFirst": 1,
        "removed": 0,
        "reworded": 1,
        "moved": 1,
        "changed": 1,
        "settingsChanged": 1,
    }
    lines = _by_message(history)
    assert since(lines["k must be set"], history) == "present since 2; changed in 4 (settings)"
    assert since(lines["world size {ws} exceeds the number of devices"], history) == (
        "present since 1 (the oldest release searched); reworded in 3"
    )


def test_one_release_is_a_history_without_events():
    history = build_history(SERIES[:1])
    assert [line.events for line in history.timelines] == [[], [], [], []]
    assert build_history([]).timelines == ()


EXPECTED_TEXT = """\
acme/engine: 5 releases, 1 -> 5
1..5  engine/config.py:12  CacheConfig.__post_init__: "block_size must be positive"
1..5  engine/config.py:24  CacheConfig.__post_init__: "swap_space must be non-negative"
    moved in 2
1..5  engine/config.py:40  ParallelConfig.check: "world size {ws} exceeds the number of devices"
    reworded in 3
1..5 (not in 3, 4)  engine/config.py:60  LoRAConfig.check_rank: "rank must be at most 64"
2..5  engine/config.py:80  SpecConfig.__post_init__: "k must be set"
    changed in 4 (settings)
5 errors: 5 in 5, 1 added after 1, 0 removed, 1 reworded, 1 moved, 1 changed (1 in their settings)
"""


def test_text():
    assert render_text(build_history(SERIES)) == EXPECTED_TEXT


def test_markdown_table():
    report = render_markdown(build_history(SERIES))
    rows = [line for line in report.splitlines() if line.startswith("| `")]
    assert rows[2] == (
        "| `ParallelConfig.check`: `world size {ws} exceeds the number of devices` | "
        "`engine/config.py:40` | 1 | 5 | 3 | – | – |"
    )
    assert rows[4].endswith("| 2 | 5 | – | – | 4 (settings) |")
    assert report.startswith("### vmine history: `acme/engine: 5 releases, 1 -> 5`\n")


def test_json_shape():
    report = json.loads(render_json(build_history(SERIES)))
    assert list(report) == ["version", "repo", "releases", "counts", "errors"]
    assert report["releases"][0] == {
        "release": "1",
        "label": "1",
        "analyzedSha": None,
        "records": 4,
    }
    world = report["errors"][2]
    assert {key: world[key] for key in ("firstSeen", "lastSeen", "rewordedIn", "ids")} == {
        "firstSeen": "1",
        "lastSeen": "5",
        "rewordedIn": ["3"],
        "ids": [entry_of(WORLD).id, entry_of(WORLD_2).id],
    }
    event = world["events"][0]
    assert (event["release"], event["kind"], event["old"]["errorMessage"]) == (
        "3",
        "reworded",
        "world size {ws} exceeds the device count",
    )
    spec = report["errors"][4]["events"][0]
    assert (spec["kind"], spec["settings"][0]["new"]) == ("changed", {"choices": ["a", "b"]})


# --- the release series ------------------------------------------------------------------

PUBLISHED = ["0.9.0", "0.10.0", "0.10.1", "0.11.0", "0.12.0"]


@pytest.mark.parametrize(
    ("source", "releases", "expected"),
    [
        (
            "pypi:vllm",
            ["0.10.0", "0.11.0"],
            [("0.10.0", "pypi:vllm==0.10.0"), ("0.11.0", "pypi:vllm==0.11.0")],
        ),
        (
            "pypi:vllm",
            ["0.10.0..0.11.0"],
            [(v, f"pypi:vllm=={v}") for v in ("0.10.0", "0.10.1", "0.11.0")],
        ),
        ("../vllm", ["v1", "v2"], [("v1", "../vllm@v1"), ("v2", "../vllm@v2")]),
    ],
)
def test_release_specs(source, releases, expected):
    found = release_specs(source, releases, versions_of=lambda name: PUBLISHED)
    assert found == [ReleaseSpec(name, spec) for name, spec in expected]


@pytest.mark.parametrize(
    ("source", "releases", "message"),
    [
        ("pypi:vllm", [], "name the releases"),
        ("pypi:vllm==0.10.0", ["0.11.0"], "reads pypi:NAME"),
        (
            "pypi:vllm",
            ["0.10.0..0.99.0"],
            "0.99.0: not a published version of vllm (the newest is 0.12.0)",
        ),
        ("pypi:vllm", ["0.11.0..0.10.0"], "0.11.0 is newer than 0.10.0"),  # reversed
        ("pypi:vllm", ["0.10.0.."], "a range reads FIRST..LAST"),
        ("pypi:vllm", ["0.10.0", "0.10.0..0.11.0"], "0.10.0: named twice"),
        ("../vllm", ["v1..v2"], "a range of releases needs a pypi:NAME SOURCE"),
    ],
)
def test_release_specs_refuse_in_one_line(source, releases, message):
    with pytest.raises(HistoryError, match=re.escape(message)):
        release_specs(source, releases, versions_of=lambda name: PUBLISHED)


def test_release_specs_refuse_in_one_line_names_the_problem():
    with pytest.raises(HistoryError) as caught:
        release_specs("pypi:vllm", ["0.11.0..0.10.0"], versions_of=lambda name: PUBLISHED)
    assert str(caught.value) == "0.11.0..0.10.0: 0.11.0 is newer than 0.10.0; write OLDEST..NEWEST"


def test_pip_index_versions_output_is_read_oldest_first():
    stdout = "vllm (0.12.0)\nAvailable versions: 0.12.0, 0.11.0, 0.10.1\n"
    assert parse_index_versions("vllm", 0, stdout, "") == ["0.10.1", "0.11.0", "0.12.0"]
    with pytest.raises(HistoryError, match="ERROR: No matching distribution found for nope"):
        parse_index_versions(
            "nope", 1, "", "WARNING: x\nERROR: No matching distribution found for nope\n"
        )


# --- the command, on a repository with three tagged releases ------------------------------

V1 = """\
from dataclasses import dataclass


@dataclass
class CacheConfig:
    block_size: int = 16
    swap_space: int = 4

    def __post_init__(self):
        if self.block_size <= 0:
            raise ValueError("block_size must be positive")
        if self.swap_space < 0:
            raise ValueError("swap_space must be non-negative")
"""
# v2 rewords the first message and adds a check; v3 moves everything down two lines
V2 = V1.replace("block_size must be positive", "block_size must be a positive integer").replace(
    '            raise ValueError("swap_space must be non-negative")\n',
    '            raise ValueError("swap_space must be non-negative")\n'
    "        if self.block_size > 256:\n"
    '            raise ValueError(f"block_size {self.block_size} is above 256")\n',
)
V3 = V2.replace(
    "from dataclasses import dataclass\n", "from dataclasses import dataclass\n\nLIMIT = 256\n\n"
)


@pytest.fixture
def tagged_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "engine"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for tag, text in (("v1", V1), ("v2", V2), ("v3", V3)):
        commit(repo, {"engine/config.py": text}, tag)
        git(repo, "tag", tag)
    return repo


def test_cli_history_of_a_repository(tagged_repo, tmp_path):
    args = ["history", str(tagged_repo), "--releases", "v1", "v2", "v3"]
    result = CliRunner().invoke(main, [*args, "--cache-dir", str(tmp_path / "cache"), "--ci"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "local/engine: 3 releases, v1 -> v3",
        'v1..v3  engine/config.py:14  CacheConfig.__post_init__: "block_size must be a positive integer"',
        "    reworded in v2; moved in v3",
        'v1..v3  engine/config.py:16  CacheConfig.__post_init__: "swap_space must be non-negative"',
        "    moved in v3",
        'v2..v3  engine/config.py:18  CacheConfig.__post_init__: "block_size {self.block_size} is above 256"',
        "    moved in v3",
        "3 errors: 3 in v3, 1 added after v1, 0 removed, 1 reworded, 3 moved, 0 changed (0 in their settings)",
    ]


def test_cli_history_json_and_match(tagged_repo, tmp_path):
    args = ["history", str(tagged_repo), "--releases", "v1", "--releases", "v3", "--format", "json"]
    result = CliRunner().invoke(
        main, [*args, "--match", "SWAP_space", "--cache-dir", str(tmp_path / "cache"), "--ci"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [error["errorMessage"] for error in report["errors"]] == [
        "swap_space must be non-negative"
    ]
    assert [r["release"] for r in report["releases"]] == ["v1", "v3"]


LOADER = """\
def load_weights(path: str):
    if not path.endswith(".safetensors"):
        raise ValueError(f"cannot load {path}: only .safetensors files are read")
"""


def test_cli_history_scope_all_follows_the_raises_outside_validators(tmp_path):
    repo = tmp_path / "engine"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for tag, text in (("v1", V1), ("v2", V2)):
        commit(repo, {"engine/config.py": text, "engine/loader.py": LOADER}, tag)
        git(repo, "tag", tag)
    args = ["history", str(repo), "--releases", "v1", "v2", "--format", "json"]

    def messages(*more: str) -> list[str]:
        cache = str(tmp_path / "cache")
        result = CliRunner().invoke(main, [*args, *more, "--cache-dir", cache, "--ci"])
        assert result.exit_code == 0, result.output
        return sorted(error["errorMessage"] for error in json.loads(result.stdout)["errors"])

    loader = "cannot load {path}: only .safetensors files are read"
    assert loader not in messages()
    assert loader in messages("--scope", "all")
    assert set(messages()) < set(messages("--scope", "all"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["v1"], "name the releases after --releases"),
        (["--releases", "v1", "--releases", "nope"], "nope"),
        (["--releases", "v1..v3"], "a range of releases needs a pypi:NAME SOURCE"),
    ],
)
def test_cli_history_refuses_in_one_line(tagged_repo, tmp_path, args, message):
    result = CliRunner().invoke(
        main, ["history", str(tagged_repo), *args, "--cache-dir", str(tmp_path / "c"), "--ci"]
    )
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
