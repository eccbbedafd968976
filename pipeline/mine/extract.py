"""A `Snapshot` -> sorted `Site`s and skipped files, across processes, with a per-blob cache."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict

from extractors.classes import FileClasses
from extractors.facts import FileExtraction, MessageStatus, RaiseSite, Rules, Scope
from pipeline.console import Console, line_of, skipped_markdown, workflow_command
from pipeline.dataset.models import Site
from pipeline.keys import analysis_token
from pipeline.mine.analysis import FileAnalysis, Silent
from pipeline.mine.classes import (
    TreeClasses,
    own_rules,
    scan_blob,
    store_classes,
    stored_classes,
)
from pipeline.mine.collector import paused_gc
from pipeline.mine.opening import open_importing
from pipeline.mine.reach import MAX_ROUNDS, Reach
from pipeline.mine.settings.tree_facts import TreeFacts
from pipeline.mine.test_modules import is_test_module
from pipeline.mine.workers import FILE_TIMEOUT
from pipeline.output import write_output
from pipeline.source import Snapshot, TreeFile, resolve_cache_dir
from pipeline.store import Store, default_store_path


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
    """A `.py` file kept by the globs (matched against the whole path; `*` also crosses `/`);
    test code never is (pipeline/mine/test_modules.py)."""
    if not path.endswith(".py") or is_test_module(path):
        return False
    if include and not any(fnmatchcase(path, glob) for glob in include):
        return False
    return not any(fnmatchcase(path, glob) for glob in exclude)


def is_candidate(data: bytes, needles: Sequence[bytes]) -> bool:
    """Cheap byte test before any decoding: a site needs `raise` and a configured class name."""
    return b"raise" in data and any(needle in data for needle in needles)


def _raises_one_of(data: bytes, rules: Rules) -> bool:
    return is_candidate(data, [name.encode() for name in rules.error_classes])


def _progress(console: Console | None, total: int):
    return console.progress("files", total) if console else nullcontext(Silent())


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
    each site comes with the settings it reads. Three steps: plan what the store cannot
    answer, analyse it, place the sites in the tree; then the settings join."""
    with paused_gc():
        return _extract_snapshot(
            snapshot, rules, store, include, exclude, workers, console, file_timeout, settings
        )


def _extract_snapshot(
    snapshot: Snapshot,
    rules: Rules,
    store: Store | None,
    include: Sequence[str],
    exclude: Sequence[str],
    workers: int | None,
    console: Console | None,
    file_timeout: float,
    settings: bool,
) -> Extraction:
    repo = snapshot.require_repo()
    plan = _plan(snapshot, rules, store, include, exclude)
    tree_facts = TreeFacts(snapshot, store, rules) if settings else None
    store_path = store.path if store is not None else None
    facts_rules = rules if settings else None
    # Workers are forked before the blob reader and the progress display start threads;
    # they analyse the first files while the rest are still being read.
    with FileAnalysis(workers, store_path, plan.expected, file_timeout, facts_rules) as analysis:
        results, stats = _analyse(plan, snapshot, rules, store, analysis, tree_facts, console)
        if rules.follow_calls:
            _follow_imports(plan, snapshot, store, analysis, results)
        raws, skipped = _place(plan, results, snapshot.path_prefix)
        found = (
            tree_facts.settings_of(raws, analysis.facts, analysis)  # the workers are still up
            if tree_facts is not None
            else [[] for _ in raws]
        )
    sites = [
        Site.place(
            raw, repo, snapshot.sha, snapshot.path_prefix, url_ref=snapshot.url_ref, settings=read
        )
        for (_, raw), read in zip(raws, found, strict=True)
    ]
    sites.sort(key=lambda site: (site.filePath, site.lineNumber))
    return Extraction(sites=sites, skipped=skipped, stats=stats)


@dataclass
class _Plan:
    """What extracting a snapshot takes, worked out from the store before any blob is read.

    Which classes are error classes or configuration classes depends on the whole tree, so
    each file is analysed (and cached) under the rules in effect for it, which every file's
    class scan decides. Blobs the store has scanned before are not read for it; a blob whose
    scan the store lacks (`new`) is analysed at once under the rules its own classes give
    while the rest is read (almost always the rules in effect), and again in the few cases
    the other files' classes change them."""

    files: list[TreeFile]  # the selected `.py` files
    unsafe: list[str]  # selected `.py` paths of a crafted tree (`../evil.py`): skipped
    paths_of: dict[str, list[str]]  # blob -> its paths, in tree order
    scans: dict[str, FileClasses]  # blob -> its classes (the stored ones, so far)
    new: list[str]  # blobs whose scan the store lacks
    own_of: dict[str, Rules]  # blob -> the rules its own classes give (when some are new)
    rules_of: dict[str, Rules] | None  # blob -> the rules in effect (None until known)
    known: dict[str, FileExtraction | None]  # the store's analyses (None: nothing to find)
    expected: int  # blobs to analyse, as far as the plan can tell


def _plan(
    snapshot: Snapshot,
    rules: Rules,
    store: Store | None,
    include: Sequence[str],
    exclude: Sequence[str],
) -> _Plan:
    prefix = snapshot.path_prefix
    files = [f for f in snapshot.files if selected(prefix + f.path, include, exclude)]
    unsafe = [path for path in snapshot.unsafe_paths if selected(prefix + path, include, exclude)]
    paths_of: dict[str, list[str]] = {}
    for tree_file in files:
        paths_of.setdefault(tree_file.blob, []).append(tree_file.path)
    scans = stored_classes(store, paths_of)
    new = [blob for blob in paths_of if blob not in scans]
    own_of: dict[str, Rules] = {}
    rules_of: dict[str, Rules] | None = None
    if new:
        own_of = {blob: own_rules(rules, facts) for blob, facts in scans.items()}
        known = _stored(store, {blob: analysis_token(own_of[blob]) for blob in scans})
        expected = len(new) + sum(1 for blob in scans if blob not in known)
    else:
        rules_of = TreeClasses(scans).rules_by_blob(rules)
        known = _stored(store, {blob: analysis_token(rules_of[blob]) for blob in scans})
        expected = sum(1 for blob in paths_of if blob not in known)
    return _Plan(files, unsafe, paths_of, scans, new, own_of, rules_of, known, expected)


def _analyse(
    plan: _Plan,
    snapshot: Snapshot,
    rules: Rules,
    store: Store | None,
    analysis: FileAnalysis,
    tree_facts: TreeFacts | None,
    console: Console | None,
) -> tuple[dict[str, FileExtraction], ExtractStats]:
    """Every blob's analysis (blob -> extraction; blobs with nothing to find left out): the
    store's, else made by the workers, which store them as they arrive."""
    paths_of = plan.paths_of
    read = _read_new(plan, snapshot, rules, analysis, tree_facts)
    if plan.new:
        store_classes(store, plan.scans, plan.new)
        plan.rules_of = TreeClasses(plan.scans).rules_by_blob(rules)
    rules_of = plan.rules_of
    assert rules_of is not None
    token_of = {blob: analysis_token(rules_of[blob]) for blob in paths_of}
    # Blobs whose rules are not those they were looked up or analysed under: their
    # stored analyses, if any, are under the tokens of the rules in effect.
    changed = [
        blob
        for blob in paths_of
        if plan.new and analysis_token(plan.own_of[blob]) != token_of[blob]
    ]
    known = plan.known
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
        if tree_facts is not None:
            tree_facts.note(blob, data)
        if not _hand_over(plan, analysis, blob, data, rules_of[blob], token_of[blob]):
            plain.append(blob)
    read.clear()
    analysis.submit()
    if store is not None and plain:
        for token, blobs in _by_token({blob: token_of[blob] for blob in plain}).items():
            store.put_files([(blob, None) for blob in blobs], token)
    reused = [blob for blob, extraction in known.items() if extraction is not None]
    stats = ExtractStats(files_total=len(plan.files))
    stats.files_reused = sum(len(paths_of[blob]) for blob in reused)
    stats.files_parsed = analysis.weight
    stats.files_candidate = stats.files_reused + stats.files_parsed
    with _progress(console, len(plan.files)) as tracker:
        tracker.advance(len(plan.files) - stats.files_parsed)
        # Stored chunk by chunk, so an interrupted run keeps what it finished.
        analysed = analysis.collect(tracker, store)
    return {**{b: e for b, e in known.items() if e is not None}, **analysed}, stats


def _read_new(
    plan: _Plan,
    snapshot: Snapshot,
    rules: Rules,
    analysis: FileAnalysis,
    tree_facts: TreeFacts | None,
) -> dict[str, bytes]:
    """The blobs whose scan the store lacks, read: scanned, and handed to the workers under
    the rules their own classes give (a parser with no site, for its settings facts)."""
    read: dict[str, bytes] = {}
    for blob, data in snapshot.read_blobs(plan.new):
        read[blob] = data
        plan.scans[blob] = facts = scan_blob(data)
        plan.own_of[blob] = own = own_rules(rules, facts)
        wanted = tree_facts is not None and tree_facts.note(blob, data)
        if not _hand_over(plan, analysis, blob, data, own, analysis_token(own)) and wanted:
            analysis.add_facts(blob, data)  # a parser: the settings join starts from it
    return read


def _hand_over(
    plan: _Plan, analysis: FileAnalysis, blob: str, data: bytes, rules: Rules, token: str
) -> bool:
    """Give a read blob to the workers when it may hold sites; False when it cannot."""
    if not _raises_one_of(data, rules):
        return False
    paths = plan.paths_of[blob]
    analysis.add(blob, paths[0], data, len(paths), (rules, plan.scans[blob]), token)
    return True


def _follow_imports(
    plan: _Plan,
    snapshot: Snapshot,
    store: Store | None,
    analysis: FileAnalysis,
    results: dict[str, FileExtraction],
) -> None:
    """Analyse again, round by round, the files whose functions validators of other files
    call through imports (pipeline/mine/reach.py); `results` takes the new analyses."""
    rules_of = plan.rules_of
    assert rules_of is not None
    if not any(extraction.calls_out for extraction in results.values()):
        return
    reach = Reach(plan.paths_of, snapshot.read_blobs, lambda blob: rules_of[blob].error_classes)
    latest: Mapping[str, FileExtraction] = results
    for _ in range(MAX_ROUNDS):
        grown = reach.grown(latest)
        if not grown:
            return
        rules = {blob: reach.rules(blob, rules_of[blob]) for blob in grown}
        token_of = {blob: analysis_token(rules[blob]) for blob in grown}
        known = _stored(store, token_of)
        for blob, data in snapshot.read_blobs([blob for blob in grown if blob not in known]):
            paths = plan.paths_of[blob]
            context = (rules[blob], plan.scans[blob])
            analysis.add(blob, paths[0], data, len(paths), context, token_of[blob])
        analysis.submit()
        latest = {
            **{blob: found for blob, found in known.items() if found is not None},
            **analysis.collect(Silent(), store),
        }
        results.update(latest)


def _place(
    plan: _Plan, results: dict[str, FileExtraction], prefix: str
) -> tuple[list[tuple[str, RaiseSite]], list[SkippedFile]]:
    """Each tree file's sites (with its tree path) and the skipped files, in tree order: an
    analysis is the same for every path that holds the blob."""
    raws: list[tuple[str, RaiseSite]] = []
    skipped: list[SkippedFile] = []
    for tree_file in plan.files:
        extraction = results.get(tree_file.blob)
        if extraction is None:
            continue
        if extraction.skipped is not None:
            skipped.append(SkippedFile(filePath=prefix + tree_file.path, reason=extraction.skipped))
            continue
        for raw in extraction.sites:
            # A cached analysis may come from another path holding the same bytes.
            placed = (
                raw
                if raw.filePath == tree_file.path
                else raw.model_copy(update={"filePath": tree_file.path})
            )
            raws.append((tree_file.path, placed))
    skipped += [SkippedFile(filePath=prefix + path, reason=UNSAFE_PATH) for path in plan.unsafe]
    skipped.sort(key=lambda item: item.filePath)
    return raws, skipped


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
    scope: Scope | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    workers: int | None = None,
    console: Console | None = None,
    settings: bool = True,
    snapshot: Snapshot | None = None,
) -> Extraction:
    """The `extract` command's job: open SOURCE at REV and extract it (SourceError on bad
    input, before any analysis); `tag` (a tag format) and `path_prefix` apply to a `pypi:`
    SOURCE; `snapshot` is SOURCE at REV when the caller opened it already
    (pipeline/mine/opening.py); `scope`, when given, replaces the rules' scope (which
    raises are sites); `settings=False` leaves each site's settings out."""
    cache_dir = resolve_cache_dir(cache_dir)
    if snapshot is None:
        snapshot = open_importing(
            source,
            rev,
            cache_dir=cache_dir,
            repo_name=repo_name,
            tag=tag,
            path_prefix=path_prefix,
            console=console,
        )
    snapshot.require_repo()  # before the store file is created
    rules = rules or Rules()
    if scope is not None:
        rules = rules.model_copy(update={"scope": scope})
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
