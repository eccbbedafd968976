"""Worker processes that analyse files and may die doing it: a crash (libcst's native parser
can segfault), a file that runs too long, or a worker out of memory loses only the file it was
on. The worker is replaced by a new process and the rest of its batch carries on. Workers exit
when the parent dies, even by `kill -9`."""

from __future__ import annotations

import faulthandler
import gc
import multiprocessing
import os
import signal
import sqlite3
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path

from extractors.classes import FileClasses
from extractors.facts import FileExtraction, Rules
from extractors.settings_model import FileSettings
from pipeline.console import ignore_parse_warnings
from pipeline.store import MemoReader

# A file that takes longer than this is given up on (the largest real files take seconds).
FILE_TIMEOUT = 60.0
# What a worker may allocate beyond what it had when it started.
MEMORY_BUDGET = 2 * 2**30
# The reason of a file a worker ran out of memory on (extract_file says so itself).
OUT_OF_MEMORY = "out of memory"


@dataclass(frozen=True)
class SiteWork:
    """A file whose sites are wanted, under the rules in effect for it and with its classes
    (None: scanned by the worker); its settings facts come along when the join is sure to
    want them (extractors.sites.analyse_file)."""

    path: str
    data: bytes
    rules: Rules
    classes: FileClasses | None = None


@dataclass(frozen=True)
class FactsWork:
    """A blob whose settings facts alone are wanted: a parser with no site to find, or a
    file the settings join asks for."""

    blob: str
    data: bytes


Work = SiteWork | FactsWork


@dataclass(frozen=True)
class FileResult:
    """What one piece of work gave: the file's extraction (None for `FactsWork`), the memo
    entries made on the way, its settings facts when they were made, and whether the result
    may be cached: a crash, a timeout or memory running out says nothing lasting about a
    file."""

    work: Work
    extraction: FileExtraction | None
    memo: list[tuple[str, str]] = field(default_factory=list)
    settings: FileSettings | None = None

    @property
    def lasting(self) -> bool:
        if self.extraction is None:
            return False
        return self.extraction.skipped is None or not self.extraction.skipped.startswith(
            ("extractor crashed", "took longer than", OUT_OF_MEMORY)
        )


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector off while a file is parsed (or, in the parent, while a snapshot
    is extracted), then one collection of what it left. Parse trees, facts and sites are big,
    short-lived and free of cycles: the collector walked them again at every allocation
    threshold, for nothing (a third of a worker's time; 0.4 s of the parent's on vLLM)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.collect(0)


def settings_facts_of(data: bytes, rules: Rules) -> FileSettings:
    """A file's settings facts under the configured `rules`; none for a file too big for
    the extractor, one that is not Python, or one a bug of ours fails on (facts only add to
    sites)."""
    from extractors.limits import size_problem
    from extractors.settings import file_settings
    from extractors.sites import decode

    if size_problem(len(data)) is not None:
        return FileSettings()
    try:
        return file_settings(decode(data), rules=rules)
    except Exception:
        return FileSettings()


def analyse(
    items: Sequence[Work], memo: MemoReader | None, facts_rules: Rules | None = None
) -> list[tuple[FileExtraction | None, FileSettings | None]]:
    """The analyses of these files in this process (a bug of ours stays one file), with
    their settings facts made under `facts_rules` (None: no facts; `FactsWork` gets only
    facts, under the default rules then)."""
    from extractors.sites import analyse_file

    results: list[tuple[FileExtraction | None, FileSettings | None]] = []
    for work in items:
        with paused_gc():
            if isinstance(work, FactsWork):
                results.append((None, settings_facts_of(work.data, facts_rules or Rules())))
                continue
            try:
                results.append(
                    analyse_file(
                        work.path,
                        work.data,
                        work.rules,
                        memo,
                        work.classes,
                        facts_rules=facts_rules,
                    )
                )
            except Exception as exc:  # analyse_file must not raise
                reason = f"extractor error: {type(exc).__name__}: {exc}".splitlines()[0]
                results.append((FileExtraction(filePath=work.path, skipped=reason), None))
    return results


def _context() -> multiprocessing.context.BaseContext:
    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


class _Worker:
    """A worker process, its end of the pipe, and the batch it is on."""

    def __init__(self, process: multiprocessing.process.BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.batch: list[Work] | None = None
        self.done = 0  # files of the batch answered
        self.since = 0.0  # when the file it is on was started

    def give(self, batch: list[Work]) -> None:
        self.conn.send(batch)
        self.batch, self.done, self.since = batch, 0, time.monotonic()


class WorkerPool:
    """`size` worker processes analysing batches of files; results come back file by file."""

    def __init__(
        self,
        size: int,
        store_path: Path | None,
        *,
        file_timeout: float = FILE_TIMEOUT,
        memory_budget: int = MEMORY_BUDGET,
        facts_rules: Rules | None = None,
    ) -> None:
        # the configured rules files' settings facts are made under (None: no facts)
        self._facts_rules = facts_rules
        self._size = size
        self._store_path = store_path
        self._file_timeout = file_timeout
        self._memory_budget = memory_budget
        self._workers: list[_Worker] = []
        self._queue: deque[list[Work]] = deque()

    def __enter__(self) -> WorkerPool:
        # Forked workers, and those that replace them, start with the extractor imported.
        import extractors.sites  # noqa: F401

        for _ in range(self._size):
            self._workers.append(self._start())
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in self._workers:
            try:
                worker.conn.send(None)  # an idle worker exits at once; a busy one is killed
            except OSError:
                pass
            if worker.batch is not None:
                worker.process.kill()
        for worker in self._workers:
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self._workers = []

    @property
    def busy(self) -> bool:
        return bool(self._queue) or any(worker.batch is not None for worker in self._workers)

    def submit(self, batch: Sequence[Work]) -> None:
        if batch:
            self._queue.append(list(batch))
            self._dispatch()

    def poll(self, timeout: float = 0.0) -> list[FileResult]:
        """What has come back within `timeout` seconds (handing out queued batches first)."""
        self._dispatch()
        busy = [worker for worker in self._workers if worker.batch is not None]
        if not busy:
            return []
        now = time.monotonic()
        nearest = min(worker.since + self._file_timeout for worker in busy) - now
        wait(
            [w.conn for w in busy] + [w.process.sentinel for w in busy],
            timeout=max(0.0, min(timeout, nearest)),
        )
        results: list[FileResult] = []
        for worker in busy:
            results += self._collect(worker)
        self._dispatch()
        return results

    def _collect(self, worker: _Worker) -> list[FileResult]:
        results: list[FileResult] = []
        assert worker.batch is not None
        try:
            while worker.batch is not None and worker.conn.poll():
                extraction, facts, memo = worker.conn.recv()
                settings = None if facts is None else FileSettings.model_validate_json(facts)
                results.append(FileResult(worker.batch[worker.done], extraction, memo, settings))
                worker.done += 1
                worker.since = time.monotonic()
                if worker.done == len(worker.batch):
                    worker.batch = None
        except (EOFError, OSError):
            pass  # it died: the sentinel tells
        if worker.batch is None:
            return results
        if not worker.process.is_alive():
            worker.process.join()
            results.append(self._lose(worker, f"extractor crashed: {_death(worker.process)}"))
        elif time.monotonic() - worker.since > self._file_timeout:
            worker.process.kill()
            worker.process.join()
            results.append(
                self._lose(worker, f"took longer than {self._file_timeout:g} s to analyse")
            )
        return results

    def _lose(self, worker: _Worker, reason: str) -> FileResult:
        """The file `worker` was on is given up; the rest of its batch goes back in the queue
        and a new process takes its place."""
        assert worker.batch is not None
        work = worker.batch[worker.done]
        rest = worker.batch[worker.done + 1 :]
        if rest:
            self._queue.appendleft(rest)
        worker.batch = None
        self._replace(worker)
        if isinstance(work, FactsWork):
            return FileResult(work, None)  # no facts: they only add to sites
        return FileResult(work, FileExtraction(filePath=work.path, skipped=reason))

    def _replace(self, worker: _Worker) -> None:
        worker.conn.close()
        self._workers.remove(worker)
        self._workers.append(self._start())

    def _dispatch(self) -> None:
        for worker in list(self._workers):
            if worker.batch is None and not worker.process.is_alive():
                worker.process.join()
                self._replace(worker)  # died between batches: nothing is lost
        for worker in self._workers:
            if not self._queue:
                return
            if worker.batch is None:
                batch = self._queue.popleft()
                try:
                    worker.give(batch)
                except OSError:  # died just now: its batch waits for the next one
                    self._queue.appendleft(batch)

    def _start(self) -> _Worker:
        context = _context()
        ours, theirs = context.Pipe()
        # A forked worker would hold the parent's ends of its own and the other workers' pipes
        # open, and none would see the parent go: it closes them first.
        forked = context.get_start_method() == "fork"
        others = [worker.conn for worker in self._workers] + [ours] if forked else []
        process = context.Process(
            target=_serve,
            daemon=True,
            args=(
                theirs,
                others,
                self._store_path,
                os.getpid(),
                self._memory_budget,
                self._facts_rules,
            ),
        )
        process.start()
        theirs.close()
        return _Worker(process, ours)


def _death(process: multiprocessing.process.BaseProcess) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


# --- in the worker -------------------------------------------------------------------------


def _serve(
    conn: Connection,
    others: list[Connection],
    store_path: Path | None,
    parent: int,
    memory_budget: int,
    facts_rules: Rules | None = None,
) -> None:
    """A worker's life: batches in, one answer per file out, until told to stop or the
    parent is gone."""
    _die_with(parent)
    gc.enable()  # forked while the parent had it paused
    for other in others:
        other.close()
    faulthandler.disable()  # a crash is reported as the file's skip reason, not a dump
    # Ctrl-C is the parent's to handle: it stops handing out batches and keeps what finished.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _limit_memory(memory_budget)
    ignore_parse_warnings()  # also where workers are spawned, not forked
    gc.enable()  # whatever the parent did with it (a history turns its own off)
    memo = open_memo(store_path)
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if batch is None:
            return
        for item in batch:
            ((extraction, facts),) = analyse([item], memo, facts_rules)
            # Facts cross the pipe as JSON: unpickling their many small models cost the
            # parent twice as much as validating the JSON (0.3-0.5 s on vLLM).
            wired = None if facts is None else facts.model_dump_json()
            try:
                conn.send((extraction, wired, memo.take() if memo is not None else []))
            except OSError:
                return


def open_memo(store_path: Path | None) -> MemoReader | None:
    """The store's memo, read-only, or None (the memo only saves time: go without it)."""
    if store_path is None:
        return None
    try:
        return MemoReader(store_path)
    except sqlite3.Error:
        return None


def _die_with(parent: int) -> None:
    """Ask Linux to kill this process when its parent dies (a blocked worker would otherwise
    be orphaned forever); elsewhere a worker notices at its next read of the pipe."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before we asked
        os._exit(0)


def _limit_memory(budget: int) -> None:
    """Cap the address space at what the worker has now plus `budget`, so a file that blows
    up fails with MemoryError (or kills only this worker) instead of exhausting the machine."""
    try:
        import resource

        with open("/proc/self/statm") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = size + budget
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, ValueError):
        pass  # no /proc (macOS): no cap
