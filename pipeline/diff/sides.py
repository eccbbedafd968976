"""The two sides of a diff: a written dataset folder, or `SOURCE@REV` / `pypi:NAME==VERSION`
extracted on the spot (no explanations needed), each as an `ErrorSet`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from extractors.facts import Rules, Scope
from pipeline.console import Console
from pipeline.dataset.models import IndexEntry, Site
from pipeline.dataset.reader import DatasetError, load_dataset, one_dataset
from pipeline.diff.changes import ErrorSet, position
from pipeline.keys import identities
from pipeline.mine.extract import ExtractStats, extract_snapshot
from pipeline.source import SourceError, open_source, resolve_cache_dir
from pipeline.store import Store, default_store_path

_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


class DiffInputError(Exception):
    """OLD or NEW cannot be read as an error set; the message is one line for the user."""


def load_dataset_side(path: Path, role: str) -> ErrorSet:
    try:
        root = one_dataset(path)
    except DatasetError as exc:
        raise DiffInputError(f"{role} {exc}") from None
    try:
        dataset = load_dataset(root)
    except DatasetError as exc:
        raise DiffInputError(f"{role} {root}: {exc}") from None
    return ErrorSet.from_dataset(dataset, label=str(path))


def split_source(spec: str, role: str = "OLD") -> tuple[str, str | None]:
    """`SOURCE@REV` -> (SOURCE, REV); `pypi:NAME==VERSION` -> (spec, None)."""
    if spec.startswith("pypi:"):
        return spec, None
    source, at, rev = spec.rpartition("@")
    if not at or not source or not rev:
        raise DiffInputError(
            f"{role} {spec}: not a dataset folder, SOURCE@REV or pypi:NAME==VERSION"
        )
    return source, rev


def entries_of_sites(sites: Iterable[Site]) -> tuple[tuple[IndexEntry, ...], dict[str, str]]:
    """Index entries (and githubUrls by id) for freshly extracted `Site`s: no explanation
    is needed to diff."""
    sites = list(sites)
    entries, urls = [], {}
    for (rid, slug), site in zip(identities(sites), sites, strict=True):
        entries.append(IndexEntry.of(site, rid, slug))
        urls[rid] = site.githubUrl
    return tuple(sorted(entries, key=position)), urls


def stand_in_repo(source: str) -> str:
    """An `owner/name` for a tree without a GitHub origin, the same for every revision of one
    repository or release, so that the record ids of two sides stay comparable."""
    if source.startswith("pypi:"):
        name = source.removeprefix("pypi:").split("==", 1)[0]
        return "pypi/" + (_SAFE_NAME.sub("-", name) or "release")
    folder = Path(source).resolve().name.removesuffix(".git")  # a bare `vllm.git` is `vllm`
    return "local/" + (_SAFE_NAME.sub("-", folder) or "repo")


def extract_side(
    spec: str,
    role: str,
    *,
    cache_dir: Path | None,
    console: Console | None,
    fallback_repo: str | None = None,
    scope: Scope = "validators",
) -> ErrorSet:
    """Extract (no explanations) the sites of `SOURCE@REV` or `pypi:NAME==VERSION` in
    `scope`; a tree without a GitHub origin is named `fallback_repo`, else a stand-in."""
    errors, _ = extract_errors(
        spec, role, cache_dir=cache_dir, console=console, fallback_repo=fallback_repo, scope=scope
    )
    return errors


def extract_errors(
    spec: str,
    role: str,
    *,
    cache_dir: Path | None,
    console: Console | None,
    fallback_repo: str | None = None,
    scope: Scope = "validators",
    store: Store | None = None,
) -> tuple[ErrorSet, ExtractStats]:
    """`extract_side`, with the extraction's file counts; `store` is the cache's store, open
    already (a history keeps one open for all its releases), else it is opened here."""
    source, rev = split_source(spec, role)
    cache_dir = resolve_cache_dir(cache_dir)
    try:
        snapshot = open_source(source, rev, repo_name=None, cache_dir=cache_dir, console=console)
    except SourceError as exc:
        raise DiffInputError(f"{role} {spec}: {exc}") from None
    # a tree with no GitHub origin: its commit is not on GitHub, so its sites get no links
    on_github = snapshot.repo is not None
    if snapshot.repo is None:
        snapshot = replace(snapshot, repo=fallback_repo or stand_in_repo(source))
    with (
        nullcontext(store) if store is not None else Store(default_store_path(cache_dir)) as opened
    ):
        extraction = extract_snapshot(snapshot, Rules(scope=scope), store=opened, console=console)
    entries, urls = entries_of_sites(extraction.sites)
    if not on_github:
        urls = {}
    errors = ErrorSet(
        label=spec, repo=snapshot.repo, sha=snapshot.sha, entries=entries, urls=urls, scope=scope
    )
    return errors, extraction.stats


def is_dataset_spec(spec: str) -> bool:
    return not spec.startswith("pypi:") and Path(spec).is_dir()
