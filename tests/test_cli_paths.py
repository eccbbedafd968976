"""Every command reports an output or cache path it cannot write in one line, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from tests.datasets import write_fixture_dataset
from tests.git_fixtures import make_upstream


@pytest.fixture
def blocked(tmp_path: Path) -> Path:
    """A path below a regular file: no directory can be created there."""
    (tmp_path / "a-file").write_text("x")
    return tmp_path / "a-file" / "sub"


def _run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stderr


def test_extract_output_file_in_a_blocked_directory(tmp_path: Path, blocked: Path) -> None:
    upstream = make_upstream(tmp_path / "up")
    code, err = _run(
        [
            "extract",
            str(upstream.path),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--include",
            "widgets/config.py",
            "-o",
            str(blocked / "sites.jsonl"),
        ]
    )
    assert code == 2
    assert err.splitlines()[-1] == (
        f"Error: {blocked / 'sites.jsonl'}: Not a directory; pass a directory you can write to"
    )


@pytest.mark.parametrize("command", ["extract", "run"])
def test_cache_dir_that_cannot_be_created(tmp_path: Path, blocked: Path, command: str) -> None:
    upstream = make_upstream(tmp_path / "up")
    code, err = _run(
        [command, str(upstream.path), "--cache-dir", str(blocked), "-o", str(tmp_path / "out")]
    )
    assert code == 2
    assert err.splitlines()[-1] == (
        f"Error: {blocked}: Not a directory; pass a directory you can write to"
    )


def test_diff_cache_dir_that_cannot_be_created(tmp_path: Path, blocked: Path) -> None:
    upstream = make_upstream(tmp_path / "up")
    code, err = _run(
        ["diff", f"{upstream.path}@v1", f"{upstream.path}@v2", "--cache-dir", str(blocked)]
    )
    assert code == 2
    assert err.splitlines()[-1] == (
        f"Error: {blocked}: Not a directory; pass a directory you can write to"
    )


def test_render_into_a_blocked_directory(tmp_path: Path, blocked: Path) -> None:
    dataset = write_fixture_dataset(tmp_path / "output")
    code, err = _run(["render", str(dataset), "-o", str(blocked)])
    assert code == 2
    assert err == f"Error: {blocked}: Not a directory; pass a directory you can write to\n"
