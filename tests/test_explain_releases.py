"""`vmine explain` against several releases of one repository, and the note it prints when the
wording of the pasted message differs from every record's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from tests.datasets import SHA, write_fixture_dataset
from tests.explain_corpus import (
    FAST_DECODE,
    GPU_NEW,
    GPU_OLD,
    OLD_SHA,
    write_corpus_dataset,
    write_old_release,
)


@pytest.fixture()
def releases(tmp_path: Path) -> Path:
    """A folder holding serve 0.1.0 and serve 0.2.0."""
    write_old_release(tmp_path / "output")
    write_corpus_dataset(tmp_path / "output")
    return tmp_path / "output"


def _explain(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["explain", *args])
    return result.exit_code, result.output.splitlines()


def test_a_record_in_both_releases_lists_both(releases: Path) -> None:
    code, lines = _explain(FAST_DECODE, "--dataset", str(releases))
    assert (code, lines[:4]) == (
        0,
        [
            "Match: exact message.",
            "Releases holding this record: serve==0.1.0, serve==0.2.0 (2 of 2 datasets of "
            "acme/serve searched); shown: serve==0.2.0.",
            "",
            "acme/serve · error · ValueError",
        ],
    )


def test_repeated_dataset_options_are_the_same_as_a_folder(releases: Path) -> None:
    old, new = (releases / "acme" / "serve" / sha for sha in (OLD_SHA, SHA))
    assert _explain(FAST_DECODE, "--dataset", str(new), "--dataset", str(old)) == _explain(
        FAST_DECODE, "--dataset", str(releases)
    )


def test_the_release_whose_wording_matches_is_named(releases: Path) -> None:
    code, lines = _explain(
        "ValueError: gpu_memory_utilization must be in (0, 1], got 1.5.", "--dataset", str(releases)
    )
    assert (code, lines[:4]) == (
        0,
        [
            "Match: message pattern, 93% of the message is literal text.",
            "Releases holding this record: serve==0.1.0 (1 of 2 datasets of acme/serve searched); "
            "shown: serve==0.1.0.",
            # the pasted wording is the old one: the page says when it changed
            "History: present since serve==0.1.0 (the oldest release searched); reworded in "
            "serve==0.2.0.",
            "",
        ],
    )


def test_drifted_wording_names_the_closest_release_and_what_differs(releases: Path) -> None:
    pasted = (
        "gpu_memory_utilization must be in (0, 1], got 1.5. (this flag also controls CPU memory)"
    )
    code, lines = _explain(pasted, "--dataset", str(releases))
    assert (code, lines[:5]) == (
        0,
        [
            "Match: approximate, wording differs; the record explains 100% of your message.",
            'Wording: your message lacks "reservation when --cpu-offload-gb is set"; it may come '
            "from another release.",
            "Closest wording, in serve==0.2.0 (1 of 2 datasets of acme/serve searched); shown: "
            "serve==0.2.0.",
            "History: present since serve==0.1.0 (the oldest release searched); reworded in "
            "serve==0.2.0.",
            "",
        ],
    )
    assert f"Record {GPU_NEW.id}: " in lines[-1]


def test_all_lists_each_record_once_with_its_other_releases(releases: Path) -> None:
    code, lines = _explain(FAST_DECODE, "--dataset", str(releases), "--all")
    assert (code, lines) == (
        0,
        [
            "1.000  exact        aaaa000000000002  acme/serve@c0ffee1234 (+1 more)  "
            "serve/config/engine.py:108  --use-fast-decode requires --decode-backend flash",
        ],
    )


def test_json_carries_the_releases_and_the_wording(releases: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "explain",
            "gpu_memory_utilization must be in (0, 1], "
            "got 1.5. (this flag also controls CPU memory)",
            "--dataset",
            str(releases),
            "--json",
        ],
    )
    assert result.exit_code == 0
    line = json.loads(result.stdout)
    dataset = str((releases / "acme" / "serve" / SHA).resolve())
    assert line["match"] == {
        "kind": "reworded",
        "score": 0.87,
        "message": "gpu_memory_utilization must be in (0, 1], got 1.5. (this flag also controls "
        "CPU memory)",
        "values": [],
        "wording": {
            "containment": 1.0,
            "lacks": ["reservation when --cpu-offload-gb is set"],
            "adds": [],
        },
        "releases": [
            {
                "release": "serve==0.2.0",
                "repo": "acme/serve",
                "analyzedSha": SHA,
                "dataset": dataset,
                "shown": True,
            }
        ],
        "history": {
            "firstSeen": "serve==0.1.0",
            "lastSeen": "serve==0.2.0",
            "presentIn": ["serve==0.1.0", "serve==0.2.0"],
            "removedIn": None,
            "rewordedIn": ["serve==0.2.0"],
            "movedIn": [],
            "changedIn": [],
            "settingsChangedIn": [],
            "releasesSearched": ["serve==0.1.0", "serve==0.2.0"],
        },
    }
    assert line["envelope"]["record"]["id"] == GPU_NEW.id


def test_json_of_a_record_in_two_releases(releases: Path) -> None:
    result = CliRunner().invoke(
        main, ["explain", FAST_DECODE, "--dataset", str(releases), "--json"]
    )
    line = json.loads(result.stdout)
    assert [(r["release"], r["shown"]) for r in line["match"]["releases"]] == [
        ("serve==0.1.0", False),
        ("serve==0.2.0", True),
    ]
    assert line["envelope"]["record"]["analyzedSha"] == SHA


def test_drift_note_on_one_dataset(tmp_path: Path) -> None:
    write_corpus_dataset(tmp_path / "output")
    code, lines = _explain(
        "ValueError: gpu_memory_utilization must be in (0, 1], got 1.5.",
        "--dataset",
        str(tmp_path / "output"),
    )
    assert (code, lines[:3]) == (
        0,
        [
            "Match: approximate, wording differs; the record explains 100% of your message.",
            'Wording: your message lacks "this flag also controls CPU memory reservation when '
            '--cpu-o…"; it may come from another release.',
            "",
        ],
    )


def test_old_wording_alone_is_an_exact_pattern_in_the_old_release(tmp_path: Path) -> None:
    write_old_release(tmp_path / "output")
    code, lines = _explain(
        "gpu_memory_utilization must be in (0, 1], got 2.",
        "--dataset",
        str(tmp_path / "output"),
        "--all",
    )
    assert (code, lines) == (
        0,
        [
            f"0.976  pattern      {GPU_OLD.id}  acme/serve@01dc0de000  serve/config/cache.py:14  "
            "gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}.",
        ],
    )


def test_a_record_in_every_release_names_the_range(tmp_path: Path) -> None:
    for minor in range(4):
        write_fixture_dataset(
            tmp_path / "output", sha=f"{minor:x}" * 40, source=f"pypi:serve==0.{minor}.0"
        )
    code, lines = _explain(FAST_DECODE, "--dataset", str(tmp_path / "output"))
    assert (code, lines[:2]) == (
        0,
        [
            "Match: exact message.",
            "Releases holding this record: all 4 datasets of acme/serve searched (serve==0.0.0 to "
            "serve==0.3.0); shown: serve==0.3.0.",
        ],
    )
