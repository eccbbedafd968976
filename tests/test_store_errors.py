"""A cache file SQLite cannot use stops `run`, `extract` and `diff` in one line (exit 2) that
says how to get past it, instead of a traceback."""

from __future__ import annotations

import sqlite3
import subprocess

import pytest
from click.testing import CliRunner

from extractors.facts import FileExtraction
from pipeline.cli import main
from pipeline.store import Store, StoreError
from tests.conftest import make_git_repo


@pytest.fixture
def engine(tmp_path):
    repo = make_git_repo(
        tmp_path / "engine",
        {
            "engine/config.py": "def check(n):\n    if n < 0:\n        raise ValueError('negative')\n",
        },
    )
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "store.sqlite").write_bytes(b"this is not an SQLite file\n" * 100)
    return repo, cache


def test_a_corrupt_cache_file_stops_run_in_one_line(engine, tmp_path):
    repo, cache = engine
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(repo),
            "--repo-name",
            "acme/engine",
            "-o",
            str(tmp_path / "out"),
            "--cache-dir",
            str(cache),
            "--llm",
            "offline",
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: {cache / 'store.sqlite'}: cannot use this cache file (file is not a "
        "database); remove it (it only saves time) or pass --cache PATH"
    )


def test_a_corrupt_cache_file_stops_extract_and_diff_in_one_line(engine):
    repo, cache = engine
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    where = f"Error: {cache / 'store.sqlite'}: cannot use this cache file (file is not a database)"
    extract = CliRunner().invoke(
        main, ["extract", str(repo), "--repo-name", "acme/engine", "--cache-dir", str(cache)]
    )
    assert extract.exit_code == 2
    assert extract.stderr.splitlines()[-1] == (
        f"{where}; remove it (it only saves time) or pass --no-cache or --cache-dir DIR"
    )
    diff = CliRunner().invoke(
        main, ["diff", f"{repo}@{sha}", f"{repo}@{sha}", "--cache-dir", str(cache)]
    )
    assert diff.exit_code == 2
    assert diff.stderr.splitlines()[-1] == (
        f"{where}; remove it (it only saves time) or pass --cache-dir DIR"
    )


def test_a_cache_damaged_past_its_first_page_is_caught_when_read(tmp_path):
    path = tmp_path / "store.sqlite"
    blobs = [f"{number:040x}" for number in range(200)]
    with Store(path) as store:
        store.put_files([(blob, FileExtraction(filePath="p" * 2000)) for blob in blobs], "t")
    data = bytearray(path.read_bytes())
    data[8192:16384] = b"\xff" * 8192  # a page of the analyses table
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="cannot use this cache file"):
        with Store(path) as store:
            store.get_files(blobs, "t")


@pytest.mark.parametrize(
    ("table", "call"),
    [
        ("memo", lambda store: store.get_memos(["k"])),
        ("memo", lambda store: store.put_memo([("k", "v")])),
        ("llm_batch", lambda store: store.open_batches("http://127.0.0.1:1/v1", "m")),
        ("llm_batch", lambda store: store.put_batch("b", "http://127.0.0.1:1/v1", "m", "sent")),
        ("llm_batch", lambda store: store.close_batch("b")),
    ],
)
def test_every_store_method_names_the_file_when_sqlite_fails(tmp_path, table, call):
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        store._db.execute(f"DROP TABLE {table}")  # as a damaged or foreign file would be
        with pytest.raises(StoreError, match="cannot use this cache file"):
            call(store)


def _disk_full_error(tmp_path) -> sqlite3.OperationalError:
    """The error SQLite gives when the disk is full, as it gives it (SQLITE_FULL): a database
    allowed no more pages than it has is full."""
    db = sqlite3.connect(tmp_path / "full.sqlite")
    db.execute("CREATE TABLE t (x)")
    db.execute("PRAGMA max_page_count = 2")
    try:
        db.execute("INSERT INTO t VALUES (randomblob(100000))")
    except sqlite3.OperationalError as error:
        return error
    finally:
        db.close()
    raise AssertionError("SQLite took 100 kB into two pages")


def test_a_full_disk_is_not_a_reason_to_remove_the_cache(tmp_path):
    from pipeline.cli import _store_problem

    error = StoreError(tmp_path / "store.sqlite", _disk_full_error(tmp_path))
    assert _store_problem(error, "pass --cache PATH") == (
        f"{tmp_path / 'store.sqlite'}: cannot use this cache file (database or disk is full); "
        "the disk is full: free some space and run again (the cache keeps what it holds and "
        "works again then), or pass --cache PATH"
    )
    damaged = StoreError(tmp_path / "store.sqlite", sqlite3.DatabaseError("file is not a database"))
    assert _store_problem(damaged, "pass --cache PATH").endswith(
        "; remove it (it only saves time) or pass --cache PATH"
    )
