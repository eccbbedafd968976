"""One SQLite file that remembers work: per-blob file analyses, the extractor's memo of
pieces of files, per-blob settings facts, explanations by content key, what each LLM
server accepts, and the batches submitted to a Batch API (so an interrupted run resumes
polling them).

WAL mode lets readers run beside the single writer; every write is its own short
transaction, so an interrupted run leaves what it finished and nothing half-written.

A store opened with `keep_decoded` also keeps what the per-blob tables give back or are given
decoded in memory while it is open: rows are keyed by content (blob SHA and token), so they
never change, and a store kept open across the releases of a history answers each release's
unchanged blobs without reading and decoding them again.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Generic, ParamSpec, TypeVar

from pydantic import BaseModel, ConfigDict

from extractors.facts import FileExtraction
from extractors.settings_model import FileSettings, Outline
from pipeline.dataset.models import Explanation
from pipeline.explainers.base import Usage
from pipeline.explainers.server import ServerProfile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS blob_analysis (
    blob TEXT NOT NULL,
    token TEXT NOT NULL,
    extraction TEXT,
    PRIMARY KEY (blob, token)
);
CREATE TABLE IF NOT EXISTS memo (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS blob_settings (
    blob TEXT NOT NULL,
    token TEXT NOT NULL,
    outline TEXT NOT NULL,
    settings TEXT,
    PRIMARY KEY (blob, token)
);
CREATE TABLE IF NOT EXISTS explanation (
    key TEXT PRIMARY KEY,
    explanation TEXT NOT NULL,
    usage TEXT NOT NULL,
    analyzed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS llm_server (
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    profile TEXT NOT NULL,
    PRIMARY KEY (base_url, model)
);
CREATE TABLE IF NOT EXISTS llm_batch (
    id TEXT PRIMARY KEY,
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    state TEXT NOT NULL,
    open INTEGER NOT NULL
);
"""


T = TypeVar("T")
_ABSENT = object()  # no row kept (None is a row: nothing worth analysing)


class _Kept(Generic[T]):
    """Decoded rows of one table by (token, blob), and which of them were asked for or given
    since the last `forget_unused`."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], T] = {}
        self._used: set[tuple[str, str]] = set()

    def take(self, token: str, blobs: Iterable[str], found: dict[str, T]) -> list[str]:
        """The blobs' kept rows copied into `found`; the blobs to read from the file."""
        wanted = []
        for blob in blobs:
            row = self.rows.get((token, blob), _ABSENT)
            if row is _ABSENT:
                wanted.append(blob)
            else:
                found[blob] = row  # type: ignore[assignment]
                self._used.add((token, blob))
        return wanted

    def keep(self, token: str, blob: str, row: T) -> None:
        self.rows[token, blob] = row
        self._used.add((token, blob))

    def forget_unused(self) -> None:
        self.rows = {key: row for key, row in self.rows.items() if key in self._used}
        self._used = set()


def _chunks(values: list[str], size: int = 500) -> Iterator[tuple[list[str], str]]:
    """The values in slices that stay under SQLite's limit on `?` parameters, each with its
    `?,?,...` list for an `IN (...)`."""
    for start in range(0, len(values), size):
        chunk = values[start : start + size]
        yield chunk, ",".join("?" * len(chunk))


class CachedExplanation(BaseModel):
    """An explanation as first obtained: `analyzed_at` stays the first time it was made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    explanation: Explanation
    usage: Usage
    analyzed_at: str


class StoreError(Exception):
    """A cache file SQLite cannot use (corrupt, not a database, locked for too long): one
    line naming the file; the command adds how to get past it."""

    def __init__(self, path: Path, error: sqlite3.Error) -> None:
        super().__init__(f"{path}: cannot use this cache file ({error})")
        self.path = path
        # SQLITE_FULL: the file is sound (SQLite rolled the write back) and works again
        # once there is room, so removing it would only throw the cache away.
        self.disk_full = getattr(error, "sqlite_errorname", "") == "SQLITE_FULL"

    def advice(self, hint: str) -> str:
        """How to get past it; `hint` is the command's own way round (`pass --cache PATH`)."""
        if self.disk_full:
            return (
                "the disk is full: free some space and run again (the cache keeps what it "
                f"holds and works again then), or {hint}"
            )
        return f"remove it (it only saves time) or {hint}"


P = ParamSpec("P")
R = TypeVar("R")


def _guarded(method: Callable[P, R]) -> Callable[P, R]:
    """A Store method whose SQLite errors become a StoreError naming the file."""

    @functools.wraps(method)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.DatabaseError as error:
            raise StoreError(args[0].path, error) from None  # type: ignore[attr-defined]

    return guarded


class Store:
    """The cache file. Safe to share between threads of one process; other processes
    may open the same file (SQLite serialises writers, WAL keeps readers unblocked)."""

    def __init__(self, path: Path, *, keep_decoded: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._keep = keep_decoded
        # decoded rows by (token, blob), when kept: analyses, and (outline, facts) pairs
        self._analyses: _Kept[FileExtraction | None] = _Kept()
        self._settings: _Kept[tuple[Outline, FileSettings | None]] = _Kept()
        self._decoded: dict[str, dict[str, Any]] = {}
        try:
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            with self._lock:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
                self._db.commit()
        except sqlite3.DatabaseError as error:  # a damaged page further in fails its query
            raise StoreError(self.path, error) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- per-blob analyses -------------------------------------------------------------

    @_guarded
    def get_files(self, blobs: Iterable[str], token: str) -> dict[str, FileExtraction | None]:
        """Cached analyses of these blobs under `token` (extractor version + rules); None for
        a blob known to hold nothing worth analysing."""
        found: dict[str, FileExtraction | None] = {}
        with self._lock:
            wanted = self._analyses.take(token, blobs, found)
            for chunk, marks in _chunks(wanted):
                rows = self._db.execute(
                    f"SELECT blob, extraction FROM blob_analysis WHERE token = ? AND blob IN ({marks})",
                    [token, *chunk],
                ).fetchall()
                for blob, text in rows:
                    found[blob] = None if text is None else FileExtraction.model_validate_json(text)
                    if self._keep:
                        self._analyses.keep(token, blob, found[blob])
        return found

    @_guarded
    def put_files(
        self,
        items: Iterable[tuple[str, FileExtraction | None]],
        token: str,
        memo: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Store analyses (None: nothing worth analysing), with the memo entries made while
        analysing them, in one transaction."""
        items = list(items)
        rows = [
            (blob, token, None if extraction is None else extraction.model_dump_json())
            for blob, extraction in items
        ]
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO blob_analysis (blob, token, extraction) VALUES (?, ?, ?)",
                rows,
            )
            self._insert_memo(memo)
            self._db.commit()
            if self._keep:
                for blob, extraction in items:
                    self._analyses.keep(token, blob, extraction)

    # -- per-blob settings facts (pipeline/mine/settings/tree_facts.py) -----------------------

    @_guarded
    def get_settings(
        self, blobs: Iterable[str], token: str
    ) -> dict[str, tuple[Outline, FileSettings | None]]:
        """Stored outlines of these blobs, each with its settings facts when they were made
        (None: not analysed yet, which is not the same as having none)."""
        found: dict[str, tuple[Outline, FileSettings | None]] = {}
        with self._lock:
            wanted = self._settings.take(token, blobs, found)
            for chunk, marks in _chunks(wanted):
                rows = self._db.execute(
                    "SELECT blob, outline, settings FROM blob_settings "
                    f"WHERE token = ? AND blob IN ({marks})",
                    [token, *chunk],
                ).fetchall()
                for blob, outline, settings in rows:
                    found[blob] = (
                        Outline.model_validate_json(outline),
                        None if settings is None else FileSettings.model_validate_json(settings),
                    )
                    if self._keep:
                        self._settings.keep(token, blob, found[blob])
        return found

    @_guarded
    def put_settings(
        self, items: Iterable[tuple[str, Outline, FileSettings | None]], token: str
    ) -> None:
        """Store outlines, with settings facts where made; facts stored before are kept when
        an item brings none."""
        items = list(items)
        rows = [
            (
                blob,
                token,
                outline.model_dump_json(),
                None if settings is None else settings.model_dump_json(),
            )
            for blob, outline, settings in items
        ]
        if not rows:
            return
        with self._lock:
            self._db.executemany(
                "INSERT INTO blob_settings (blob, token, outline, settings) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (blob, token) DO UPDATE SET outline = excluded.outline, "
                "settings = COALESCE(excluded.settings, blob_settings.settings)",
                rows,
            )
            self._db.commit()
            for blob, outline, settings in items if self._keep else ():
                known = self._settings.rows.get((token, blob))
                if settings is None and known is not None:
                    settings = known[1]  # as the COALESCE keeps them
                if settings is not None or known is not None:
                    self._settings.keep(token, blob, (outline, settings))
                # else the file may hold facts this process never read: left to the file

    # -- the extractor's memo (extractors.facts.Memo) ----------------------------------

    @_guarded
    def get_memos(self, keys: Iterable[str]) -> dict[str, str]:
        """The memo entries of these keys that the store has."""
        found: dict[str, str] = {}
        with self._lock:
            for chunk, marks in _chunks(list(keys)):
                rows = self._db.execute(
                    f"SELECT key, value FROM memo WHERE key IN ({marks})", chunk
                ).fetchall()
                found.update(rows)
        return found

    @_guarded
    def put_memo(self, items: Iterable[tuple[str, str]]) -> None:
        rows = list(items)
        if not rows:
            return
        with self._lock:
            self._insert_memo(rows)
            self._db.commit()

    def forget_unused(self) -> None:
        """Drop the kept rows of the per-blob tables that no call asked for or gave since the
        last time (a history calls it after each release: the next one needs what this one
        had, not the files it replaced)."""
        with self._lock:
            self._analyses.forget_unused()
            self._settings.forget_unused()

    def decoded(self, kind: str) -> dict[str, Any]:
        """Memo entries of one kind as their reader decoded them, by key, kept while the store
        is open (a memo key names its content, so its value never changes); a store that keeps
        nothing decoded gives an empty dict each time."""
        return self._decoded.setdefault(kind, {}) if self._keep else {}

    def _insert_memo(self, rows: Iterable[tuple[str, str]]) -> None:
        """Memo entries, in the caller's transaction (the lock held)."""
        self._db.executemany("INSERT OR REPLACE INTO memo (key, value) VALUES (?, ?)", rows)

    # -- explanations ------------------------------------------------------------------

    @_guarded
    def get_explanation(self, key: str) -> CachedExplanation | None:
        with self._lock:
            row = self._db.execute(
                "SELECT explanation, usage, analyzed_at FROM explanation WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return CachedExplanation(
            explanation=Explanation.model_validate_json(row[0]),
            usage=Usage.model_validate_json(row[1]),
            analyzed_at=row[2],
        )

    @_guarded
    def has_explanations(self, keys: Iterable[str]) -> set[str]:
        found: set[str] = set()
        with self._lock:
            for chunk, marks in _chunks(list(keys)):
                rows = self._db.execute(
                    f"SELECT key FROM explanation WHERE key IN ({marks})", chunk
                ).fetchall()
                found.update(key for (key,) in rows)
        return found

    @_guarded
    def put_explanation(self, key: str, cached: CachedExplanation) -> None:
        """Keep the first explanation stored under a key (a rerun never rewrites it)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO explanation (key, explanation, usage, analyzed_at) "
                "VALUES (?, ?, ?, ?)",
                (
                    key,
                    cached.explanation.model_dump_json(),
                    cached.usage.model_dump_json(),
                    cached.analyzed_at,
                ),
            )
            self._db.commit()

    # -- LLM servers (explainers/server.py) -------------------------------------------

    @_guarded
    def get_server_profile(self, base_url: str, model: str) -> ServerProfile | None:
        with self._lock:
            row = self._db.execute(
                "SELECT profile FROM llm_server WHERE base_url = ? AND model = ?",
                (base_url, model),
            ).fetchone()
        if row is None:
            return None
        try:
            return ServerProfile.remembered(row[0])
        except ValueError:  # written by another vmine: learn it again
            return None

    @_guarded
    def put_server_profile(self, base_url: str, model: str, profile: ServerProfile) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO llm_server (base_url, model, profile) VALUES (?, ?, ?)",
                (base_url, model, profile.model_dump_json()),
            )
            self._db.commit()

    # -- batches (explainers/batch.py) -------------------------------------------------

    @_guarded
    def open_batches(self, base_url: str, model: str) -> list[tuple[str, str]]:
        """(batch id, state) of the batches submitted to this server and model and not yet
        ingested, oldest first."""
        with self._lock:
            return self._db.execute(
                "SELECT id, state FROM llm_batch WHERE base_url = ? AND model = ? AND open = 1 "
                "ORDER BY rowid",
                (base_url, model),
            ).fetchall()

    @_guarded
    def put_batch(self, batch_id: str, base_url: str, model: str, state: str) -> None:
        """A batch sent and not yet ingested (open until `close_batch`)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO llm_batch (id, base_url, model, state, open) "
                "VALUES (?, ?, ?, ?, 1)",
                (batch_id, base_url, model, state),
            )
            self._db.commit()

    @_guarded
    def close_batch(self, batch_id: str) -> None:
        with self._lock:
            self._db.execute("UPDATE llm_batch SET open = 0 WHERE id = ?", (batch_id,))
            self._db.commit()


class MemoReader:
    """Read-only access to a store's memo from another process (an extract worker), with the
    entries this process made kept aside for the store's owner to write."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True, timeout=30)
        self.made: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        if key in self.made:
            return self.made[key]
        try:
            row = self._db.execute("SELECT value FROM memo WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:  # a memo that cannot be read only costs time
            return None
        return None if row is None else row[0]

    def put(self, key: str, value: str) -> None:
        self.made[key] = value

    def close(self) -> None:
        self._db.close()

    def take(self) -> list[tuple[str, str]]:
        """The entries made since the last call."""
        made, self.made = self.made, {}
        return list(made.items())


STORE_NAME = "store.sqlite"


def default_store_path(cache_dir: Path) -> Path:
    """Where the store lives inside a cache directory (`--cache` overrides it)."""
    return Path(cache_dir) / STORE_NAME
