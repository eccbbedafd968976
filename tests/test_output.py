"""Where `vmine extract -o` writes (pipeline/output.py): a regular file or a new path is replaced
atomically with the usual mode; a device, FIFO or symlink is written into, never replaced;
`-` is stdout."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.output import FILE_MODE, UMASK, replaceable, write_output
from tests.git_fixtures import Upstream, make_upstream


def status(kind: int) -> os.stat_result:
    return os.stat_result((kind | 0o666, 0, 0, 1, 0, 0, 0, 0, 0, 0))


REPLACEABLE = [
    ("nothing there", None, True),
    ("a regular file", status(stat.S_IFREG), True),
    ("a character device such as /dev/null", status(stat.S_IFCHR), False),
    ("a block device", status(stat.S_IFBLK), False),
    ("a FIFO", status(stat.S_IFIFO), False),
    ("a socket", status(stat.S_IFSOCK), False),
    ("a symlink (lstat), e.g. /dev/stdout", status(stat.S_IFLNK), False),
    ("a directory", status(stat.S_IFDIR), False),
]


@pytest.mark.parametrize(("what", "lstat", "atomic"), REPLACEABLE, ids=[c[0] for c in REPLACEABLE])
def test_only_regular_files_and_new_paths_are_replaced(what, lstat, atomic):
    assert replaceable(lstat) is atomic


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return make_upstream(tmp_path / "src")


def extract_to(upstream: Upstream, tmp_path: Path, output: str):
    return CliRunner().invoke(
        main, ["extract", str(upstream.path), "--cache-dir", str(tmp_path / "cache"), "-o", output]
    )


def test_a_new_file_gets_the_usual_mode(upstream, tmp_path):
    out = tmp_path / "sites.jsonl"
    result = extract_to(upstream, tmp_path, str(out))
    assert result.exit_code == 1, result.output  # a file of the fixture is skipped
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~UMASK == FILE_MODE
    assert out.read_text().count("\n") == 2


def test_a_replaced_file_keeps_its_mode(upstream, tmp_path):
    out = tmp_path / "sites.jsonl"
    out.write_text("old\n")
    out.chmod(0o640)
    extract_to(upstream, tmp_path, str(out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert out.read_text().count("\n") == 2


def test_dash_is_stdout(upstream, tmp_path):
    result = extract_to(upstream, tmp_path, "-")
    assert result.stdout.count("\n") == 2
    assert not (Path.cwd() / "-").exists()


def test_a_symlink_is_written_through_and_kept(upstream, tmp_path):
    target, link = tmp_path / "target.jsonl", tmp_path / "link.jsonl"
    target.write_text("old\n")
    link.symlink_to(target)
    extract_to(upstream, tmp_path, str(link))
    assert link.is_symlink()
    assert target.read_text().count("\n") == 2


def test_a_fifo_is_written_into_not_replaced(upstream, tmp_path):
    fifo = tmp_path / "sites.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = extract_to(upstream, tmp_path, str(fifo))
    reader.join(timeout=30)
    assert result.exit_code == 1, result.output
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert received[0].count(b"\n") == 2
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".vmine")] == []


def test_identical_bytes_leave_a_regular_file_untouched(tmp_path):
    out = tmp_path / "sites.jsonl"
    assert write_output(out, "same\n") is True
    inode = out.stat().st_ino
    assert write_output(out, "same\n") is False
    assert out.stat().st_ino == inode
