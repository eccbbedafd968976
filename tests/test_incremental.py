"""Extracting a second commit: blobs already in the store are not read again, the memo
carries segments and validators across files, and the output is what a cold run gives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import extractors.sites
from extractors.facts import Rules
from pipeline.mine.extract import extract_snapshot
from pipeline.source import Snapshot, open_source
from pipeline.store import MemoReader, Store
from tests.git_fixtures import commit, make_upstream

CHECKS = '''\
"""Checks of plugin {n}."""
import os


def validate_plugin_{n}(cfg):
    if cfg.size > {n}:
        raise ValueError("plugin {n}: size above {n}")


def describe_{n}(cfg):
    return os.fspath(cfg.path)
'''

PLAIN = "def helper_{n}():\n    return {n}\n"


def _tree(count: int, edited: set[int]) -> dict[str, str]:
    files = {}
    for n in range(count):
        text = CHECKS.format(n=n)
        if n in edited:  # the validator is untouched, the file's head changes
            text = text.replace("import os", "import os\nimport sys")
        files[f"plugins/p{n:02d}.py"] = text
        files[f"helpers/h{n:02d}.py"] = PLAIN.format(n=n)
    return files


def _snapshots(tmp_path: Path, count: int, edited: set[int]) -> list[Snapshot]:
    upstream = make_upstream(tmp_path / "src")
    shas = [commit(upstream.path, _tree(count, set()), "plugins")]
    if edited:
        shas.append(commit(upstream.path, _tree(count, edited), "edits"))
    return [
        open_source(str(upstream.path), sha, repo_name=None, cache_dir=tmp_path) for sha in shas
    ]


def extract(snapshot: Snapshot, store: Store | None, workers: int):
    # the fixture's own widgets/ files are left out
    return extract_snapshot(
        snapshot, Rules(), store=store, workers=workers, include=["plugins/*", "helpers/*"]
    )


class _ReadSpy:
    """A blob reader that records which blobs were asked for; `spied` is the snapshot to use."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.asked: list[str] = []
        self._reader = snapshot.reader
        self.spied = replace(snapshot, reader=self)

    def read_blobs(self, blobs):
        wanted = list(blobs)
        self.asked += wanted
        return self._reader.read_blobs(wanted)


def test_a_second_commit_reads_and_parses_only_changed_blobs(tmp_path: Path) -> None:
    old, new = _snapshots(tmp_path, 4, edited={1, 2})
    cold = extract(new, None, workers=1)
    with Store(tmp_path / "store.sqlite") as store:
        extract(old, store, workers=1)
        spy = _ReadSpy(new)
        warm = extract(spy.spied, store, workers=1)
    changed = {f.blob for f in new.files if f.path in ("plugins/p01.py", "plugins/p02.py")}
    assert set(spy.asked) == changed
    assert warm.sites == cold.sites
    assert warm.stats.model_dump() == {
        "files_total": 8,
        "files_candidate": 4,
        "files_parsed": 2,
        "files_reused": 2,
    }


def test_nothing_changed_reads_no_blob(tmp_path: Path) -> None:
    (old,) = _snapshots(tmp_path, 3, edited=set())
    with Store(tmp_path / "store.sqlite") as store:
        first = extract(old, store, workers=1)
        spy = _ReadSpy(old)
        again = extract(spy.spied, store, workers=1)
    assert spy.asked == []
    assert again.sites == first.sites
    assert again.stats.model_dump() == {
        "files_total": 6,
        "files_candidate": 3,
        "files_parsed": 0,
        "files_reused": 3,
    }


def _no_libcst(*args: object) -> None:
    raise AssertionError("a validator was parsed again")


def test_worker_processes_share_the_memo_and_give_what_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = _snapshots(tmp_path, 30, edited=set(range(0, 30, 2)))
    single = extract(new, None, workers=1)
    with Store(tmp_path / "store.sqlite") as store:
        extract(old, store, workers=2)
        # the edited files' validators are unchanged: the memo the first run's workers
        # filled has them, so no worker parses one with libcst (it would skip the file)
        monkeypatch.setattr(extractors.sites, "parse_function", _no_libcst)
        pooled = extract(new, store, workers=2)
    assert pooled.skipped == []
    assert pooled.sites == single.sites
    assert (pooled.stats.files_parsed, pooled.stats.files_reused) == (15, 15)


def test_the_memo_round_trips_and_a_reader_keeps_what_it_made(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        store.put_files([], "token", memo=[("segment:a", "[]"), ("function:b", "[[1]]")])
        reader = MemoReader(path)
        assert reader.get("segment:a") == "[]"
        assert reader.get("function:b") == "[[1]]"
        reader.put("segment:c", "[2]")
        assert reader.get("segment:c") == "[2]"
        other = MemoReader(path)
        assert other.get("segment:c") is None  # the reader's owner stores it
        other.close()
        assert reader.take() == [("segment:c", "[2]")]
        assert reader.take() == []
        reader.close()
