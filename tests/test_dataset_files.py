"""A dataset someone else wrote may hold a FIFO or a device where a file should be: `render`,
`diff` and `explain` read only regular files, opened so that none can block them (issue
17). Each command runs as its own process with a time limit, so a hang fails the test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.datasets import CASES, write_fixture_dataset

VMINE = Path(sys.executable).parent / "vmine"


def _vmine(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VMINE), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CI": "true"},
        stdin=subprocess.DEVNULL,
    )


def _dataset_with_fifo(tmp_path: Path, where: str) -> tuple[Path, Path]:
    """The fixture dataset with a FIFO in place of one of its files: a stray `records/`
    entry, the first record, or the index."""
    root = write_fixture_dataset(tmp_path / "output")
    first = CASES[0].id
    path = {
        "stray record": root / "records" / "ffff000000000000.json",
        "a record": root / "records" / f"{first}.json",
        "the index": root / "index.jsonl",
        "the manifest": root / "manifest.json",
    }[where]
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return root, path


WHERE = ["stray record", "a record", "the index", "the manifest"]


def _problem(root: Path, fifo: Path) -> str:
    if fifo.name == "manifest.json":  # a folder without a manifest file holds no dataset
        return f"{root}: no dataset (manifest.json) under this folder; write one with `vmine run`"
    return f"{fifo}: not a regular file"


@pytest.mark.parametrize("where", WHERE)
def test_render_refuses_a_fifo_in_a_dataset(tmp_path: Path, where: str) -> None:
    root, fifo = _dataset_with_fifo(tmp_path, where)
    done = _vmine("render", str(root), "-o", str(tmp_path / "pages"))
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"Error: {_problem(root, fifo)}\n"
    assert not (tmp_path / "pages").exists()


def test_diff_refuses_a_fifo_in_a_dataset(tmp_path: Path) -> None:
    root, fifo = _dataset_with_fifo(tmp_path, "stray record")
    other = write_fixture_dataset(tmp_path / "other")
    done = _vmine("diff", str(other), str(root))
    assert done.returncode == 2, done.stderr
    assert done.stderr.endswith(f"{_problem(root, fifo)}\n")
    assert len(done.stderr.splitlines()) == 1


def test_explain_does_not_block_on_a_fifo_record(tmp_path: Path) -> None:
    root, fifo = _dataset_with_fifo(tmp_path, "a record")
    done = _vmine("explain", CASES[0].errorMessage, "--dataset", str(root))
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"Error: {fifo}: cannot read the record: not a regular file\n"


def test_explain_skips_a_dataset_whose_index_is_a_fifo(tmp_path: Path) -> None:
    root, fifo = _dataset_with_fifo(tmp_path, "the index")
    done = _vmine("explain", CASES[0].errorMessage, "--dataset", str(root))
    assert done.returncode == 2
    assert "not a regular file" in done.stderr
