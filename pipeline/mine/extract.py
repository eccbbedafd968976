"""A `Snapshot` -> sorted `Site`s and skipped files, across processes, with a per-blob cache."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict

from extractors.classes import FileClasses, rules_for_file
from extractors.facts import FileExtraction, MessageStatus, RaiseSite, Rules
from extractors.limits import size_problem
from extractors.settings_model import FileSettings
from pipeline.console import Console, Tracker, line_of, skipped_markdown, workflow_command
from pipeline.dataset.models import Site
from pipeline.keys import analysis_token
from pipeline.mine.classes import TreeClasses, scan_blob, store_classes, stored_classes
from pipeline.mine.settings_facts import SnapshotSettings
from pipeline.mine.workers import FILE_TIMEOUT, FileResult, Item, WorkerPool
from pipeline.output import write_output
from pipeline.source import Snapshot, open_source, resolve_cache_dir
from pipeline.store import Store, default_store_path

# Below this many files to analyse, starting more than one worker costs more than it saves.
_ONE_WORKER_BELOW = 24
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


# Why a path of a crafted tree (`../evil.py`, `./x.py`) is not analysed.
UNSAFE_PATH = "not a safe path (a '..' or '.' part)"


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


def _raises_one_of(data: bytes, rules: Rules) -> bool:
    return is_candidate(data, [name.encode() for name in rules.error_classes])


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
    file_timeout: float = FILE_TIMEOUT,
    settings: bool = True,
) -> Extraction:
    """Every site of the snapshot's `.py` files, analysing only blobs the store lacks; a file
    that takes longer than `file_timeout` seconds is skipped. With `settings` (the default),
    each site comes with the settings it reads."""
    repo = snapshot.require_repo()
    prefix = snapshot.path_prefix
    files = [f for f in snapshot.files if selected(prefix + f.path, include, exclude)]
    stats = ExtractStats(files_total=len(files))
    paths_of: dict[str, list[str]] = {}
    for tree_file in files:
        paths_of.setdefault(tree_file.blob, []).append(tree_file.path)

    # Which classes are error classes or configuration classes depends on the whole tree, so
    # each file is analysed (and cached) under the rules in effect for it, which every file's
    # class scan decides. Blobs the store has scanned before are not read for it.
    by_blob = stored_classes(store, paths_of)
    new = [blob for blob in paths_of if blob not in by_blob]
    rules_of: dict[str, Rules]  # set on both paths below, once the classes are known
    if new:
        # A blob whose scan the store lacks is new to it: it is analysed at once under the
        # rules its own classes give while the rest is read (almost always the rules in
        # effect), and again in the few cases the other files' classes change them.
        own_of = {blob: rules_for_file(rules, facts) for blob, facts in by_blob.items()}
        known = _stored(store, {blob: analysis_token(own_of[blob]) for blob in by_blob})
        expected = len(new) + sum(1 for blob in by_blob if blob not in known)
    else:
        rules_of = TreeClasses(by_blob).rules_by_blob(rules)
        known = _stored(store, {blob: analysis_token(rules_of[blob]) for blob in by_blob})
        expected = sum(1 for blob in paths_of if blob not in known)
    store_path = store.path if store is not None else None
    tree_settings = SnapshotSettings(snapshot, store) if settings else None
    # Workers are forked before the blob reader and the progress display start threads;
    # they analyse the first files while the rest are still being read.
    with _Analysis(rules, workers, store_path, expected, file_timeout, settings) as analysis:
        read: dict[str, bytes] = {}
        for blob, data in snapshot.read_blobs(new):
            read[blob] = data
            by_blob[blob] = facts = scan_blob(data)
            own_of[blob] = own = rules_for_file(rules, facts)
            if tree_settings is not None:
                tree_settings.saw(blob, data)
            if _raises_one_of(data, own):
                analysis.add(
                    blob,
                    paths_of[blob][0],
                    data,
                    len(paths_of[blob]),
                    (own, facts),
                    analysis_token(own),
                )
            elif tree_settings is not None and tree_settings.wants_parse(blob):
                analysis.add_settings_only(blob, paths_of[blob][0], data)  # a parser
        if new:
            store_classes(store, by_blob, new)
            rules_of = TreeClasses(by_blob).rules_by_blob(rules)
        token_of = {blob: analysis_token(rules_of[blob]) for blob in paths_of}
        # Blobs whose rules are not those they were looked up or analysed under: their
        # stored analyses, if any, are under the tokens of the rules in effect.
        changed = [
            blob for blob in paths_of if new and analysis_token(own_of[blob]) != token_of[blob]
        ]
        for blob in changed:
            known.pop(blob, None)
        known.update(_stored(store, {blob: token_of[blob] for blob in changed}))
        # Every blob seen before is known without reading it: its analysis, or that it
        # holds nothing worth analysing (None).
        again = set(changed)
        unknown = [
            blob for blob in paths_of if blob not in known and (blob not in read or blob in again)
        ]
        plain = [blob for blob in read if blob not in again and blob not in analysis]
        for blob, data in _contents(snapshot, unknown, read):
            if tree_settings is not None:
                tree_settings.saw(blob, data)
            if _raises_one_of(data, rules_of[blob]):
                analysis.add(
                    blob,
                    paths_of[blob][0],
                    data,
                    len(paths_of[blob]),
                    (rules_of[blob], by_blob[blob]),
                    token_of[blob],
                )
            else:
                plain.append(blob)
        read.clear()
        analysis.submit()
        if store is not None and plain:
            for token, blobs in _by_token({blob: token_of[blob] for blob in plain}).items():
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
        raws: list[tuple[str, RaiseSite]] = []
        skipped: list[SkippedFile] = []
        for tree_file in files:
            extraction = results.get(tree_file.blob)
            if extraction is None:
                continue
            if extraction.skipped is not None:
                skipped.append(
                    SkippedFile(filePath=prefix + tree_file.path, reason=extraction.skipped)
                )
                continue
            for raw in extraction.sites:
                # A cached analysis may come from another path holding the same bytes.
                placed = (
                    raw
                    if raw.filePath == tree_file.path
                    else raw.model_copy(update={"filePath": tree_file.path})
                )
                raws.append((tree_file.path, placed))
        found: list[list] = [[] for _ in raws]
        if tree_settings is not None:
            for blob, made in analysis.settings.items():
                tree_settings.add(blob, made)
            # the files the join asks for are parsed by the workers, still up
            tree_settings.analyse_many = analysis.settings_facts
            found = tree_settings.settings_of(raws)

    sites = [
        Site.place(raw, repo, snapshot.sha, prefix, url_ref=snapshot.url_ref, settings=read)
        for (_, raw), read in zip(raws, found, strict=True)
    ]
    sites.sort(key=lambda site: (site.filePath, site.lineNumber))
    skipped += [
        SkippedFile(filePath=prefix + path, reason=UNSAFE_PATH)
        for path in snapshot.unsafe_paths
        if selected(prefix + path, include, exclude)
    ]
    skipped.sort(key=lambda item: item.filePath)
    return Extraction(sites=sites, skipped=skipped, stats=stats)


def _by_token(token_of: dict[str, str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for blob, token in token_of.items():
        groups.setdefault(token, []).append(blob)
    return groups


def _stored(store: Store | None, token_of: dict[str, str]) -> dict[str, FileExtraction | None]:
    """The analyses the store has of these blobs, each under its token."""
    known: dict[str, FileExtraction | None] = {}
    if store is not None:
        for token, blobs in _by_token(token_of).items():
            known.update(store.get_files(blobs, token))
    return known


def _contents(
    snapshot: Snapshot, blobs: list[str], read: dict[str, bytes]
) -> Iterator[tuple[str, bytes]]:
    """The blobs' bytes in order: those read already, then the rest from git."""
    rest = [blob for blob in blobs if blob not in read]
    for blob in blobs:
        if blob in read:
            yield blob, read[blob]
    yield from snapshot.read_blobs(rest)


class _Analysis:
    """blob -> FileExtraction for blobs not in the cache, in worker processes (one for a few
    files): a file that crashes, hangs or exhausts its worker loses only itself."""

    def __init__(
        self,
        rules: Rules,
        workers: int | None,
        store_path: Path | None,
        expected: int,
        file_timeout: float,
        settings: bool = True,
    ) -> None:
        self._size = 1 if expected < _ONE_WORKER_BELOW else workers or os.cpu_count() or 1
        self._rules, self._store_path, self._file_timeout = rules, store_path, file_timeout
        self._settings = settings
        self._pool = self._new_pool() if expected else None
        self.settings: dict[str, FileSettings] = {}  # blob -> facts the workers made
        self._items: list[Item] = []  # read, not yet handed to a worker
        self._batch_bytes = 0
        self._blob_of: dict[str, str] = {}
        self._blobs: set[str] = set()
        self._weight: dict[str, int] = {}
        self._token: dict[str, str] = {}  # path -> the store token of its rules
        self._arrived: list[FileResult] = []
        self.weight = 0  # files (paths) to analyse, a blob counting once per path

    def _new_pool(self) -> WorkerPool:
        return WorkerPool(
            self._rules,
            self._size,
            self._store_path,
            file_timeout=self._file_timeout,
            settings=self._settings,
        )

    def __enter__(self) -> _Analysis:
        if self._pool is not None:
            self._pool.__enter__()  # forks every worker now, before any thread starts
        return self

    def _started_pool(self) -> WorkerPool:
        if self._pool is None:  # no site to find, but facts to make
            self._pool = self._new_pool()
            self._pool.__enter__()
        return self._pool

    def add_settings_only(self, blob: str, path: str, data: bytes) -> None:
        """A file wanted for its settings facts only (a parser with no site to find)."""
        if size_problem(len(data)) is not None:
            return  # too big for the extractor: no facts
        self._blob_of[path] = blob
        self._weight.setdefault(path, 0)
        self._items.append((path, data, None, None))
        self._batch_bytes += len(data)
        if self._batch_bytes >= _BATCH_BYTES:
            self.submit()

    def settings_facts(self, texts: list[bytes]) -> list[FileSettings]:
        """The settings facts of these files, made by the workers side by side."""
        items: list[Item] = [(f"settings-{n}.py", data, None, None) for n, data in enumerate(texts)]
        pool = self._started_pool()
        per_batch = max(1, -(-len(items) // (2 * self._size)))  # two batches per worker
        for start in range(0, len(items), per_batch):
            pool.submit(items[start : start + per_batch])
        made: dict[str, FileSettings] = {}
        while pool.busy:
            for result in pool.poll(timeout=1.0):
                made[result.path] = result.settings or FileSettings()  # lost: no facts
        return [made.get(path, FileSettings()) for path, *_ in items]

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.close()

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
        problem = size_problem(len(data))
        if problem is not None:  # not worth sending to a worker
            self._arrived.append(
                FileResult(path, FileExtraction(filePath=path, skipped=problem), rules=context[0])
            )
            return
        self._items.append((path, data, *context))
        self._batch_bytes += len(data)
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

    def collect(self, tracker: Tracker | _Silent, store: Store | None) -> dict[str, FileExtraction]:
        results: dict[str, FileExtraction] = {}
        unsaved: list[FileResult] = []
        saved_at = time.monotonic()
        try:
            arrived, self._arrived = self._arrived, []
            while True:
                for result in arrived:
                    if result.settings is not None:  # the same whatever the rules
                        self.settings[self._blob_of[result.path]] = result.settings
                # an analysis under rules the file was added again under is left out, and
                # so is what a settings-only item brings but its facts
                arrived = [
                    result
                    for result in arrived
                    if result.extraction is not None and self._current(result)
                ]
                for result in arrived:
                    results[self._blob_of[result.path]] = result.extraction
                    tracker.advance(self._weight[result.path])
                unsaved += arrived
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

    def _current(self, result: FileResult) -> bool:
        return result.rules is None or analysis_token(result.rules) == self._token[result.path]

    def _save(self, results: list[FileResult], store: Store) -> None:
        """Lasting analyses under their tokens, with the memo entries made (one transaction
        per token; the memo goes with the first)."""
        groups: dict[str, list[tuple[str, FileExtraction]]] = {}
        for result in results:
            if result.lasting:
                groups.setdefault(self._token[result.path], []).append(
                    (self._blob_of[result.path], result.extraction)
                )
        memo = [entry for result in results for entry in result.memo]
        if not groups:
            store.put_memo(memo)
        for index, (token, items) in enumerate(groups.items()):
            store.put_files(items, token, memo if index == 0 else ())


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
    settings: bool = True,
) -> Extraction:
    """The `extract` command's job: open SOURCE at REV and extract it (SourceError on bad
    input, before any analysis); `tag` (a tag format) and `path_prefix` apply to a `pypi:`
    SOURCE; `settings=False` leaves each site's settings out."""
    cache_dir = resolve_cache_dir(cache_dir)
    snapshot = open_source(
        source,
        rev,
        repo_name=repo_name,
        cache_dir=cache_dir,
        console=console,
        tag=tag,
        path_prefix=path_prefix,
    )
    snapshot.require_repo()  # before the store file is created
    rules = rules or Rules()
    options = dict(
        include=include, exclude=exclude, workers=workers, console=console, settings=settings
    )
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
        console.annotate(
            workflow_command(
                "warning", f"skipped: {item.reason}", file=item.filePath, line=line_of(item.reason)
            )
        )


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
    skipped files, then write the JSON Lines to `output` (see `pipeline.output`), or hand
    them back for stdout (no `output`, or `-`). Returns (exit code, text to print or None). With `strict`, a skipped file means
    exit 1 and nothing written. SourceError for bad input; OSError naming the path that
    cannot be written."""
    extraction = extract_source(source, rev, console=console, **options)
    report_skipped(extraction, console)
    if strict and extraction.skipped:
        console.line(
            f"extract: --strict: {len(extraction.skipped)} file(s) skipped, no output written"
        )
        return 1, None
    text = extraction.jsonl()
    if output is not None and str(output) != "-":
        try:
            write_output(output, text)
        except OSError as error:  # name the file the user gave, not a temp file beside it
            raise OSError(error.errno, error.strerror, str(output)) from None
        text = None
    report_summary(extraction, source, console)
    return (1 if extraction.skipped else 0), text
