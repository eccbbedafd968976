"""The files of a snapshot that the store cannot answer for, analysed in worker processes (one
for a few files) and stored as they arrive: a file that crashes, hangs or exhausts its worker
loses only itself. The pool also answers the settings join's requests for facts."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from extractors.classes import FileClasses
from extractors.facts import FileExtraction, Rules
from extractors.limits import size_problem
from extractors.settings_model import FileSettings
from pipeline.console import Tracker
from pipeline.keys import analysis_token
from pipeline.mine.workers import FactsWork, FileResult, SiteWork, Work, WorkerPool
from pipeline.store import Store

# Below this many files to analyse, starting more than one worker costs more than it saves.
_ONE_WORKER_BELOW = 24
# Files go to a worker in batches of about this many bytes: small enough to keep both
# workers busy to the end, big enough that IPC stays cheap.
_BATCH_BYTES = 256 * 1024


class Silent:
    """A tracker for library callers that passed no console."""

    def advance(self, count: int = 1, **fields: object) -> None:
        pass


class FileAnalysis:
    """blob -> FileExtraction for the blobs the store lacks, made by a pool of workers that is
    forked on entering (before any thread starts) and kept up until the settings join is
    done. Work is handed out in batches while the rest of the tree is still being read."""

    def __init__(
        self,
        workers: int | None,
        store_path: Path | None,
        expected: int,
        file_timeout: float,
        facts_rules: Rules | None = None,
    ) -> None:
        self._size = 1 if expected < _ONE_WORKER_BELOW else workers or os.cpu_count() or 1
        self._store_path, self._file_timeout = store_path, file_timeout
        self._facts_rules = facts_rules  # settings facts are made under these (None: none)
        self._pool = self._new_pool() if expected else None
        self.facts: dict[str, FileSettings] = {}  # blob -> settings facts the workers made
        self._items: list[Work] = []  # read, not yet handed to a worker
        self._batch_bytes = 0
        self._blob_of: dict[str, str] = {}
        self._blobs: set[str] = set()
        self._weight: dict[str, int] = {}
        self._token: dict[str, str] = {}  # path -> the store token of its rules
        self._arrived: list[FileResult] = []
        self.weight = 0  # files (paths) to analyse, a blob counting once per path

    def _new_pool(self) -> WorkerPool:
        return WorkerPool(
            self._size,
            self._store_path,
            file_timeout=self._file_timeout,
            facts_rules=self._facts_rules,
        )

    def __enter__(self) -> FileAnalysis:
        if self._pool is not None:
            self._pool.__enter__()  # forks every worker now, before any thread starts
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.close()

    def _started_pool(self) -> WorkerPool:
        if self._pool is None:  # no site to find, but facts to make
            self._pool = self._new_pool()
            self._pool.__enter__()
        return self._pool

    # -- work -------------------------------------------------------------------------------

    def add(
        self,
        blob: str,
        path: str,
        data: bytes,
        weight: int,
        context: tuple[Rules, FileClasses],
        token: str,
    ) -> None:
        """A file to analyse under the rules in effect for it (their store token is `token`)
        and with its classes: handed to a worker with the next batch. A file added again
        under other rules is analysed again, and only the last analysis counts."""
        if path not in self._blob_of:
            self.weight += weight
        self._blobs.add(blob)
        self._blob_of[path] = blob
        self._weight[path] = weight
        self._token[path] = token
        rules, classes = context
        problem = size_problem(len(data))
        if problem is not None:  # not worth sending to a worker
            lost = FileExtraction(filePath=path, skipped=problem)
            self._arrived.append(FileResult(SiteWork(path, b"", rules), lost))
            return
        self._queue(SiteWork(path, data, rules, classes))

    def add_facts(self, blob: str, data: bytes) -> None:
        """A blob wanted for its settings facts only (a parser with no site to find)."""
        if size_problem(len(data)) is None:  # too big for the extractor: no facts
            self._queue(FactsWork(blob, data))

    def _queue(self, work: SiteWork | FactsWork) -> None:
        self._items.append(work)
        self._batch_bytes += len(work.data)
        if self._batch_bytes >= _BATCH_BYTES:
            self.submit()

    def __contains__(self, blob: str) -> bool:
        return blob in self._blobs

    def submit(self) -> None:
        """Hand the files read so far to a worker."""
        if not self._items:
            return
        chunk, self._items, self._batch_bytes = self._items, [], 0
        pool = self._started_pool()
        pool.submit(chunk)
        self._arrived += pool.poll()

    # -- results ----------------------------------------------------------------------------

    def collect(self, tracker: Tracker | Silent, store: Store | None) -> dict[str, FileExtraction]:
        """Every analysis, by blob, once the workers are done; stored chunk by chunk, so an
        interrupted run keeps what it finished."""
        results: dict[str, FileExtraction] = {}
        unsaved: list[FileResult] = []
        saved_at = time.monotonic()
        try:
            arrived, self._arrived = self._arrived, []
            while True:
                kept = []
                for result in arrived:
                    work = result.work
                    if isinstance(work, FactsWork):
                        if result.settings is not None:
                            self.facts[work.blob] = result.settings
                        continue
                    blob = self._blob_of[work.path]
                    if result.settings is not None:  # the same whatever the rules
                        self.facts[blob] = result.settings
                    # an analysis under rules the file was added again under is left out
                    if result.extraction is not None and self._current(work):
                        results[blob] = result.extraction
                        tracker.advance(self._weight[work.path])
                        kept.append(result)
                unsaved += kept
                # Stored every second or so, so an interrupted run keeps what it finished.
                if store is not None and unsaved and time.monotonic() - saved_at > 1.0:
                    self._save(unsaved, store)
                    unsaved, saved_at = [], time.monotonic()
                if self._pool is None or not self._pool.busy:
                    return results
                arrived = self._pool.poll(timeout=1.0)
        finally:
            if store is not None and unsaved:
                self._save(unsaved, store)

    def _current(self, work: SiteWork) -> bool:
        return analysis_token(work.rules) == self._token[work.path]

    def _save(self, results: list[FileResult], store: Store) -> None:
        """Lasting analyses under their tokens, with the memo entries made (one transaction
        per token; the memo goes with the first)."""
        groups: dict[str, list[tuple[str, FileExtraction]]] = {}
        for result in results:
            if (
                result.lasting
                and isinstance(result.work, SiteWork)
                and result.extraction is not None
            ):
                path = result.work.path
                groups.setdefault(self._token[path], []).append(
                    (self._blob_of[path], result.extraction)
                )
        memo = [entry for result in results for entry in result.memo]
        if not groups:
            store.put_memo(memo)
        for index, (token, items) in enumerate(groups.items()):
            store.put_files(items, token, memo if index == 0 else ())

    # -- the settings join's requests -------------------------------------------------------

    def make_facts(self, read: Sequence[tuple[str, bytes]]) -> dict[str, FileSettings]:
        """The settings facts of these blobs (blob, bytes), made by the workers side by side;
        a blob whose worker was lost has none."""
        items = [FactsWork(blob, data) for blob, data in read]
        pool = self._started_pool()
        per_batch = max(1, -(-len(items) // (2 * self._size)))  # two batches per worker
        for start in range(0, len(items), per_batch):
            pool.submit(items[start : start + per_batch])
        made: dict[str, FileSettings] = {}
        while pool.busy:
            for result in pool.poll(timeout=1.0):
                if isinstance(result.work, FactsWork):
                    made[result.work.blob] = result.settings or FileSettings()  # lost: none
        return {blob: made.get(blob, FileSettings()) for blob, _ in read}
