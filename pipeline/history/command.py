"""What `vmine history` does: mine each release once (extracted, no explanations; the
per-blob cache makes every release after the first pay only for the files it changed),
chain the diffs into timelines, and render them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from extractors.facts import Scope
from pipeline.console import Console
from pipeline.diff.sides import DiffInputError, extract_side
from pipeline.history.releases import HistoryError, release_specs
from pipeline.history.report import render
from pipeline.history.timeline import History, Release, Timeline, build_history


def mine_releases(
    source: str,
    releases: Sequence[str],
    *,
    cache_dir: Path | None = None,
    console: Console | None = None,
    versions_of: Callable[[str], list[str]] | None = None,
    scope: Scope = "validators",
) -> list[Release]:
    """Each release's error set (the raises of `scope`), oldest first. A tree with no GitHub origin takes the repo
    of the first release that has one, else one stand-in for all: ids must be comparable."""
    specs = release_specs(source, releases, versions_of)
    mined: list[Release] = []
    repo: str | None = None
    for number, item in enumerate(specs, start=1):
        if console is not None:
            console.line(f"history: {item.spec} ({number}/{len(specs)})")
        try:
            errors = extract_side(
                item.spec,
                item.name,
                cache_dir=cache_dir,
                console=console,
                fallback_repo=repo,
                scope=scope,
            )
        except DiffInputError as error:
            raise HistoryError(str(error)) from None
        repo = repo or errors.repo
        mined.append(Release(item.name, errors))
    return mined


def matching(history: History, text: str | None) -> History:
    """Only the errors whose message, function or file (in any release) contains `text`."""
    if not text:
        return history
    needle = text.lower()

    def hit(line: Timeline) -> bool:
        return any(
            needle in entry.errorMessage.lower()
            or needle in entry.qualname.lower()
            or needle in entry.filePath.lower()
            for _, entry in line.entries
        )

    return replace(history, timelines=tuple(line for line in history.timelines if hit(line)))


def run_history(
    source: str,
    releases: Sequence[str],
    *,
    fmt: str = "text",
    match: str | None = None,
    cache_dir: Path | None = None,
    console: Console | None = None,
    versions_of: Callable[[str], list[str]] | None = None,
    scope: Scope = "validators",
) -> tuple[str, History]:
    mined = mine_releases(
        source, releases, cache_dir=cache_dir, console=console, versions_of=versions_of, scope=scope
    )
    history = matching(build_history(mined), match)
    return render(history, fmt), history
