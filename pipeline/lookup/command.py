"""What `vmine explain` does: find the datasets, look the pasted text up, print a page or JSON."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cache_dir import datasets_dir, resolve_cache_dir
from pipeline.lookup.index import ExplainError, IndexedDataset, load_datasets
from pipeline.lookup.match import lookup
from pipeline.lookup.mined import MiningFailed, cached_release, mine_release
from pipeline.lookup.page import format_candidates, format_json, format_lookup, printable
from pipeline.lookup.where import (
    installed_version,
    parse_release,
    release_of,
    releases_to_search,
    where_to_look,
)

if TYPE_CHECKING:
    from pipeline.console import Console


@dataclass
class Explained:
    """The output to print, the exit code (0 a match, 1 only approximate results) and the
    warnings for stderr (datasets skipped, index lines not read), all safe to print."""

    output: str
    code: int
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for stderr: which release (--json)


def explain(
    text: str,
    dataset_paths: list[Path],
    *,
    fmt: str = "text",
    show_all: bool = False,
    default_root: Path = Path("output"),
    release: str | None = None,
    cache_dir: Path | None = None,
    console: Console | None = None,
) -> Explained:
    """The `explain` command. `fmt` is `text` (a page, or with `show_all` one line per
    candidate) or `json` (JSON Lines of the matches and their envelopes). Without
    `dataset_paths`, ./output and <cache>/datasets are searched, for the release of each
    target installed here when there is a dataset of it; `release` (NAME==VERSION) searches
    that release alone, mined into <cache>/datasets on first use (where.py, mined.py)."""
    cache = resolve_cache_dir(cache_dir)
    folders = where_to_look(dataset_paths, default_root, datasets_dir(cache))
    # The index is many small dicts and nothing of it is cyclic: the collector would walk
    # them again and again while they are parsed, for nothing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        if release is not None:
            datasets, warnings, notes = _release(release, folders, cache, console)
        else:
            datasets, warnings = _found(folders, bool(dataset_paths), cache)
            chosen = releases_to_search(datasets, installed_version, bool(dataset_paths))
            datasets, notes = chosen.datasets, chosen.notes
        found = lookup(text, datasets)
    finally:
        if enabled:
            gc.enable()
    code = 0 if found.sure else 1
    if fmt == "json":
        output = format_json(found, show_all)
    else:
        found.notes[:0] = notes
        output = printable(format_candidates(found) if show_all else format_lookup(found))
        notes = []
    return Explained(
        output,
        code,
        [printable(warning) for warning in warnings],
        [printable(note) for note in notes],
    )


def _found(folders: list[Path], given: bool, cache: Path) -> tuple[list[IndexedDataset], list[str]]:
    try:
        return load_datasets(folders)
    except ExplainError as error:
        if given:
            raise
        raise ExplainError(
            f"no vmine dataset under {folders[0]} or {datasets_dir(cache)}: write one with "
            "`vmine run SOURCE`, or pass --release NAME==VERSION to mine a published release",
            error.warnings,
        ) from None


def _release(
    spec: str, folders: list[Path], cache: Path, console: Console | None
) -> tuple[list[IndexedDataset], list[str], list[str]]:
    """The datasets of the release `spec` among those found, else the one mined for it."""
    try:
        name, version = parse_release(spec)
    except ValueError as error:
        raise ExplainError(str(error)) from None
    try:
        datasets, warnings = load_datasets(folders)
    except ExplainError as error:
        datasets, warnings = [], error.warnings
    mine = [d for d in datasets if release_of(d) == (name, version)]
    if mine:
        return mine, warnings, [f"Searched {name}=={version}."]
    root = cached_release(cache, name, version)
    mined = root is None
    if root is None:
        from pipeline.console import Console

        try:
            root = mine_release(cache, name, version, console or Console.detect())
        except MiningFailed as error:
            raise ExplainError(str(error)) from None
    datasets, more = load_datasets([root])
    how = "mined just now" if mined else "mined before"
    return datasets, warnings + more, [f"Searched {name}=={version} ({how}, in {root})."]
