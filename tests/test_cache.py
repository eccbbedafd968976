"""The SQLite store: first explanation wins, per-blob analyses round-trip, and several
processes writing one file at once leave every entry readable."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

from extractors.facts import FileExtraction
from extractors.settings_model import FileSettings, Outline
from pipeline.explainers.base import Usage
from pipeline.store import CachedExplanation, Store
from tests.site_factory import make_explanation


def _cached(text: str, at: str = "2026-08-14T21:17:39.825Z") -> CachedExplanation:
    return CachedExplanation(
        explanation=make_explanation(text), usage=Usage(requests=1), analyzed_at=at
    )


def test_an_explanation_is_kept_as_first_stored(tmp_path: Path) -> None:
    with Store(tmp_path / "store.sqlite") as store:
        store.put_explanation("k", _cached("first"))
        store.put_explanation("k", _cached("second", at="2026-09-01T00:00:00.000Z"))
        kept = store.get_explanation("k")
    assert kept == _cached("first")


def test_missing_keys_are_none_and_known_keys_are_listed(tmp_path: Path) -> None:
    with Store(tmp_path / "store.sqlite") as store:
        store.put_explanation("a", _cached("a"))
        assert store.get_explanation("b") is None
        assert store.has_explanations(["a", "b"]) == {"a"}


def test_file_analyses_round_trip_under_their_token(tmp_path: Path) -> None:
    broken = FileExtraction(filePath="engine/broken.py", skipped="syntax error at line 3")
    with Store(tmp_path / "store.sqlite") as store:
        store.put_files([("b" * 40, broken)], token="t1")
        assert store.get_files(["b" * 40], token="t1") == {"b" * 40: broken}
        assert store.get_files(["b" * 40], token="t2") == {}


def _write_many(path: str, worker: int, count: int) -> None:
    with Store(Path(path)) as store:
        for number in range(count):
            store.put_explanation(f"{worker}-{number}", _cached(f"{worker}-{number}"))


def test_a_store_that_keeps_rows_decoded_answers_as_the_file_does(tmp_path: Path) -> None:
    """Each call's answer is the file's, with or without rows kept in memory: settings facts
    stored before stay when an outline comes without them, and a row this process never read
    is still read from the file."""
    facts = FileSettings(constants={"MODES": ["a", "b"]})
    outline, other = Outline(classes=["CacheConfig"]), Outline(classes=["CacheConfig", "X"])
    blob, elsewhere = "b" * 40, "c" * 40
    with Store(tmp_path / "other.sqlite") as writer:  # another process's rows
        writer.put_settings([(elsewhere, outline, facts)], "t")
    (tmp_path / "other.sqlite").rename(tmp_path / "store.sqlite")
    answers = []
    for keep in (False, True):
        with Store(tmp_path / "store.sqlite", keep_decoded=keep) as store:
            store.put_settings([(blob, outline, facts)], "t")
            store.put_settings([(blob, other, None), (elsewhere, other, None)], "t")
            store.put_files([(blob, None)], "t")
            answers.append(
                (
                    store.get_settings([blob, elsewhere, "d" * 40], "t"),
                    store.get_files([blob, "d" * 40], "t"),
                    store.get_settings([blob], "u"),
                )
            )
    assert answers[0] == answers[1]
    assert answers[1][0] == {blob: (other, facts), elsewhere: (other, facts)}
    assert answers[1][1] == {blob: None}


def test_rows_kept_decoded_are_not_read_again_until_unused(tmp_path: Path) -> None:
    """Kept rows answer without the file (here emptied behind the store's back); those no
    call used since the last `forget_unused` are dropped by it, the others stay."""
    used, replaced = "b" * 40, "c" * 40
    extraction = FileExtraction(filePath="engine/config.py")
    with Store(tmp_path / "store.sqlite", keep_decoded=True) as store:
        store.put_files([(used, extraction), (replaced, extraction)], "t")
        store.forget_unused()  # both were just given: both stay
        assert store.get_files([used], "t") == {used: extraction}
        store.forget_unused()  # `replaced` was not asked for since: dropped
        with sqlite3.connect(tmp_path / "store.sqlite") as other:
            other.execute("DELETE FROM blob_analysis")
        assert store.get_files([used, replaced], "t") == {used: extraction}
    with Store(tmp_path / "store.sqlite") as store:
        assert store.get_files([used], "t") == {}


def test_concurrent_writers_leave_every_entry_readable(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    Store(path).close()
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(str(path), n, 40)) for n in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=120)
    assert [writer.exitcode for writer in writers] == [0, 0, 0, 0]

    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with Store(path) as store:
        keys = [f"{w}-{n}" for w in range(4) for n in range(40)]
        assert store.has_explanations(keys) == set(keys)
        assert store.get_explanation("3-39") == _cached("3-39")
