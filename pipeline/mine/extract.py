"""A `Snapshot` -> sorted `Site`s and skipped files, across processes, with a per-blob cache."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import nullcontext
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict

from extractors.classes import FileClasses
from extractors.facts import FileExtraction, MessageStatus, Rules
from pipeline.console import Console, Tracker, line_of, skipped_markdown, workflow_command
from pipeline.dataset.models import Site
from pipeline.dataset.writer import write_atomic
from pipeline.keys import analysis_token
from pipeline.mine.classes import scan_tree
from pipeline.source import Snapshot, open_source, resolve_cache_dir
from pipeline.store import MemoReader, Store, default_store_path

# Below this many files to analyse, starting worker processes costs more than it saves.
_IN_PROCESS_BELOW = 24
# Files go to a worker in batches of about this many bytes: small enough to keep both
# workers busy to the end, big enough that IPC stays cheap.
_BATCH_BYTES = 256 * 1024


class SkippedFile(BaseModel):
    """A file that could not be analysed, and why (one line)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    filePath: str
    reason: str


class ExtractStats(BaseModel):
    """How many `.py` files there were, passed the byte prefilter, were parsed, were reused."""

    model_config = ConfigDict(extra="forbid")

    files_total: int = 0
    files_candidate: int = 0
    files_parsed: int = 0
    files_reused: int = 0


class Extraction(BaseModel):
    """What a snapshot yielded: its sites sorted by (filePath, lineNumber), and skipped files."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sites: list[Site]
    skipped: list[SkippedFile]
    stats: ExtractStats

    def jsonl(self) -> str:
        """What `vmine extract` prints: one site per line, in order."""
        return "".join(site.to_json_line() + "\n" for site in self.sites)


def selected(path: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """A `.py` file kept by the globs (matched against the whole path; `*` also crosses `/`)."""
    if not path.endswith(".py"):
        return False
    if include and not any(fnmatchcase(path, glob) for glob in include):
        return False
    return not any(fnmatchcase(path, glob) for glob in exclude)


def is_candidate(data: bytes, needles: Sequence[bytes]) -> bool:
    """Cheap byte test before any decoding: a site needs `raise` and a configured class name."""
    return b"raise" in data and any(needle in data for needle in needles)


# The memo of a worker process, opened when it starts.
_worker_memo: MemoReader | None = None


def _start_worker(store_path: Path | None) -> None:
    global _worker_memo
    # Ctrl-C is the parent's to handle: it stops handing out chunks and keeps what finished.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import extractors.sites  # noqa: F401  (while the parent still reads blobs)

    _worker_memo = _open_memo(store_path)


def _open_memo(store_path: Path | None) -> MemoReader | None:
    if store_path is None:
        return None
    try:
        return MemoReader(store_path)
    except sqlite3.Error:  # the memo only saves time: go without it
        return None


# A file to analyse: its path, bytes, the rules in effect for it and its classes.
_Item = tuple[str, bytes, Rules, FileClasses]


def _extract_chunk(items: list[_Item]) -> tuple[list[FileExtraction], list[tuple[str, str]]]:
    """In a worker: the chunk's analyses, and the memo entries made on the way (for the
    parent to store)."""
    memo = _worker_memo
    results = _extract_items(items, memo)
    return results, memo.take() if memo is not None else []


def _extract_items(items: list[_Item], memo: MemoReader | None) -> list[FileExtraction]:
    from extractors.sites import extract_file

    results = []
    for path, data, rules, classes in items:
        try:
            results.append(extract_file(path, data, rules, memo, classes))
        except Exception as exc:  # extract_file must not raise; one bad file stays one file
            reason = f"extractor error: {type(exc).__name__}: {exc}".splitlines()[0]
            results.append(FileExtraction(filePath=path, skipped=reason))
    return results


class _Silent:
    """A tracker for library callers that passed no console."""

    def advance(self, count: int = 1, **fields: object) -> None:
        pass


def _progress(console: Console | None, total: int):
    return console.progress("files", total) if console else nullcontext(_Silent())


def extract_snapshot(
    snapshot: Snapshot,
    rules: Rules,
    *,
    store: Store | None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    workers: int | None = None,
    console: Console | None = None,
) -> Extraction:
    """Every site of the snapshot's `.py` files, analysing only blobs the store lacks."""
    repo = snapshot.require_repo()
    prefix = snapshot.path_prefix
    files = [f for f in snapshot.files if selected(prefix + f.path, include, exclude)]
    stats = ExtractStats(files_total=len(files))
    paths_of: dict[str, list[str]] = {}
    for tree_file in files:
        paths_of.setdefault(tree_file.blob, []).append(tree_file.path)

    # Which classes are error classes or configuration classes depends on the whole tree:
    # each file is analysed under the rules in effect for it (and cached under them).
    classes = scan_tree(snapshot, paths_of, store)
    rules_of = classes.rules_by_blob(rules)
    token_of = {blob: analysis_token(rules_of[blob]) for blob in paths_of}
    # Every blob seen before is known without reading it: its analysis, or that it holds
    # nothing worth analysing (None).
    known: dict[str, FileExtraction | None] = {}
    if store is not None:
        for token, blobs in _by_token(token_of).items():
            known.update(store.get_files(blobs, token))
    unknown = [blob for blob in paths_of if blob not in known]
    plain: list[tuple[str, None]] = []
    store_path = store.path if store is not None else None
    # Workers are forked before the blob reader and the progress display start threads (the
    # class scan's reader has finished); they analyse the first files while the rest, when
    # the scan did not need them, are still being read.
    with _Analysis(workers, store_path, len(unknown)) as analysis:
        for blob, data in _contents(snapshot, unknown, classes.read):
            file_rules = rules_of[blob]
            if is_candidate(data, [name.encode() for name in file_rules.error_classes]):
                analysis.add(blob, paths_of[blob][0], data, len(paths_of[blob]), file_rules,
                             token_of[blob], classes.by_blob[blob])
            else:
                plain.append((blob, None))
        classes.read.clear()
        analysis.submit()
        if store is not None and plain:
            for token, blobs in _by_token({blob: token_of[blob] for blob, _ in plain}).items():
                store.put_files([(blob, None) for blob in blobs], token)
        reused = [blob for blob, extraction in known.items() if extraction is not None]
        stats.files_reused = sum(len(paths_of[blob]) for blob in reused)
        stats.files_parsed = analysis.weight
        stats.files_candidate = stats.files_reused + stats.files_parsed
        with _progress(console, len(files)) as tracker:
            tracker.advance(len(files) - stats.files_parsed)
            # Stored chunk by chunk, so an interrupted run keeps what it finished.
            analysed = analysis.collect(tracker, store)

    results = {**{b: e for b, e in known.items() if e is not None}, **analysed}
    sites: list[Site] = []
    skipped: list[SkippedFile] = []
    for tree_file in files:
        extraction = results.get(tree_file.blob)
        if extraction is None:
            continue
        if extraction.skipped is not None:
            skipped.append(SkippedFile(filePath=prefix + tree_file.path, reason=extraction.skipped))
            continue
        for raw in extraction.sites:
            # A cached analysis may come from another path holding the same bytes.
            placed = raw if raw.filePath == tree_file.path else raw.model_copy(
                update={"filePath": tree_file.path}
            )
            sites.append(Site.place(placed, repo, snapshot.sha, prefix, url_ref=snapshot.url_ref))
    sites.sort(key=lambda site: (site.filePath, site.lineNumber))
    skipped.sort(key=lambda item: item.filePath)
    return Extraction(sites=sites, skipped=skipped, stats=stats)


def _by_token(token_of: dict[str, str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for blob, token in token_of.items():
        groups.setdefault(token, []).append(blob)
    return groups


def _contents(snapshot: Snapshot, blobs: list[str],
              read: dict[str, bytes]) -> Iterator[tuple[str, bytes]]:
    """The blobs' bytes in order: those read already, then the rest from git."""
    rest = [blob for blob in blobs if blob not in read]
    for blob in blobs:
        if blob in read:
            yield blob, read[blob]
    yield from snapshot.read_blobs(rest)


class _Analysis:
    """blob -> FileExtraction for blobs not in the cache, in worker processes when many."""

    def __init__(self, workers: int | None, store_path: Path | None, expected: int) -> None:
        self._store_path = store_path
        self._workers = workers or os.cpu_count() or 1
        self._pooled = self._workers > 1 and expected >= _IN_PROCESS_BELOW
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[Future, list[_Item]] = {}
        self._items: list[_Item] = []  # read, not yet handed to a worker
        self._batch_bytes = 0
        self._blob_of: dict[str, str] = {}
        self._weight: dict[str, int] = {}
        self._token: dict[str, str] = {}  # path -> the store token of its rules
        self.weight = 0  # files (paths) to analyse, a blob counting once per path

    def __enter__(self) -> _Analysis:
        if self._pooled:
            context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
            self._pool = ProcessPoolExecutor(
                max_workers=self._workers, mp_context=context, initializer=_start_worker,
                initargs=(self._store_path,),
            )
            self._pool.submit(int)  # forks every worker now, before any thread starts
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def add(self, blob: str, path: str, data: bytes, weight: int, rules: Rules,
            token: str, classes: FileClasses) -> None:
        """A file to analyse under `rules` (stored under `token`): handed to a worker with
        the next batch."""
        self._items.append((path, data, rules, classes))
        self._blob_of[path] = blob
        self._weight[path] = weight
        self._token[path] = token
        self.weight += weight
        self._batch_bytes += len(data)
        if self._pool is not None and self._batch_bytes >= _BATCH_BYTES:
            self.submit()

    def submit(self) -> None:
        """Hand the files read so far to a worker."""
        if self._pool is not None and self._items:
            chunk, self._items, self._batch_bytes = self._items, [], 0
            future = self._pool.submit(_extract_chunk, chunk)
            self._futures[future] = chunk

    def collect(
        self, tracker: Tracker | _Silent, store: Store | None
    ) -> dict[str, FileExtraction]:
        results: dict[str, FileExtraction] = {}
        if self._pool is None:
            memo = _open_memo(self._store_path)
            done = []
            try:
                for item in self._items:
                    (extraction,) = _extract_items([item], memo)
                    done.append((item[0], extraction))
                    tracker.advance(self._weight[item[0]])
            finally:
                if memo is not None:
                    memo.close()
            results.update((self._blob_of[path], extraction) for path, extraction in done)
            if store is not None and done:
                self._store(store, done, memo.take() if memo is not None else [])
            return results
        for future in as_completed(self._futures):
            chunk = self._futures[future]
            crashed = False
            made: list[tuple[str, str]] = []
            try:
                extractions, made = future.result()
            except BrokenProcessPool as exc:
                crashed = True
                reason = f"extractor crashed: {exc}".splitlines()[0]
                extractions = [FileExtraction(filePath=item[0], skipped=reason) for item in chunk]
            done = [(item[0], extraction)
                    for extraction, item in zip(extractions, chunk, strict=True)]
            results.update((self._blob_of[path], extraction) for path, extraction in done)
            if store is not None and not crashed:  # a crash says nothing lasting about a file
                self._store(store, done, made)
            tracker.advance(sum(self._weight[item[0]] for item in chunk))
        return results

    def _store(self, store: Store, done: list[tuple[str, FileExtraction]],
               made: list[tuple[str, str]]) -> None:
        """Analyses (path, extraction) under their tokens, with the memo entries made."""
        groups: dict[str, list[tuple[str, FileExtraction]]] = {}
        for path, extraction in done:
            groups.setdefault(self._token[path], []).append((self._blob_of[path], extraction))
        for index, (token, items) in enumerate(groups.items()):
            store.put_files(items, token, made if index == 0 else ())


def extract_source(
    source: str,
    rev: str | None = None,
    *,
    repo_name: str | None = None,
    tag: str | None = None,
    path_prefix: str | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    rules: Rules | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    workers: int | None = None,
    console: Console | None = None,
) -> Extraction:
    """The `extract` command's job: open SOURCE at REV and extract it (SourceError on bad
    input, before any analysis); `tag` (a tag format) and `path_prefix` apply to a `pypi:`
    SOURCE."""
    cache_dir = resolve_cache_dir(cache_dir)
    snapshot = open_source(source, rev, repo_name=repo_name, cache_dir=cache_dir,
                           console=console, tag=tag, path_prefix=path_prefix)
    snapshot.require_repo()  # before the store file is created
    rules = rules or Rules()
    options = dict(include=include, exclude=exclude, workers=workers, console=console)
    if not use_cache:
        return extract_snapshot(snapshot, rules, store=None, **options)
    with Store(default_store_path(cache_dir)) as store:
        return extract_snapshot(snapshot, rules, store=store, **options)


def summary_line(extraction: Extraction) -> str:
    """The closing line of `vmine extract` on stderr: file counts, sites, sites by status."""
    stats = extraction.stats
    by_status = Counter(site.messageStatus for site in extraction.sites)
    statuses = " ".join(f"{name}={by_status[name]}" for name in get_args(MessageStatus))
    return (
        f"extract: files={stats.files_total} candidates={stats.files_candidate} "
        f"parsed={stats.files_parsed} reused={stats.files_reused} "
        f"sites={len(extraction.sites)} skipped={len(extraction.skipped)} {statuses}"
    )


def report_skipped(extraction: Extraction, console: Console) -> None:
    """Each skipped file as a line on stderr, and as a GitHub annotation in github mode."""
    for item in extraction.skipped:
        console.line(f"skipped: {item.filePath}: {item.reason}")
        console.annotate(workflow_command("warning", f"skipped: {item.reason}",
                                          file=item.filePath, line=line_of(item.reason)))


def report_summary(extraction: Extraction, source: str, console: Console) -> None:
    """The closing summary line, and the job summary under GitHub Actions."""
    console.line(summary_line(extraction))
    console.step_summary(
        f"### vmine extract: {source}\n\n- {summary_line(extraction)}\n"
        + skipped_markdown([(item.filePath, item.reason) for item in extraction.skipped])
    )



def run_extract(
    source: str,
    rev: str | None = None,
    *,
    output: Path | None = None,
    strict: bool = False,
    console: Console,
    **options: Any,
) -> tuple[int, str | None]:
    """The `extract` command's job: extract SOURCE at REV (options as `extract_source`), report
    skipped files, then write the JSON Lines to `output` atomically, or hand them back for
    stdout. Returns (exit code, text to print or None). With `strict`, a skipped file means
    exit 1 and nothing written. SourceError for bad input; OSError naming the path that
    cannot be written."""
    extraction = extract_source(source, rev, console=console, **options)
    report_skipped(extraction, console)
    if strict and extraction.skipped:
        console.line(f"extract: --strict: {len(extraction.skipped)} file(s) skipped, "
                     "no output written")
        return 1, None
    text = extraction.jsonl()
    if output is not None:
        try:
            write_atomic(output, text)
        except OSError as error:  # name the file the user gave, not a temp file beside it
            raise OSError(error.errno, error.strerror, str(output)) from None
        text = None
    report_summary(extraction, source, console)
    return (1 if extraction.skipped else 0), text
