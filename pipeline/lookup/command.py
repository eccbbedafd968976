"""What `vmine explain` does: find the datasets, look the pasted text up, print a page or JSON."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.lookup.index import load_datasets
from pipeline.lookup.match import lookup
from pipeline.lookup.page import format_candidates, format_json, format_lookup, printable


@dataclass
class Explained:
    """The output to print, the exit code (0 a match, 1 only approximate results) and the
    warnings for stderr (datasets skipped, index lines not read), all safe to print."""

    output: str
    code: int
    warnings: list[str] = field(default_factory=list)


def explain(
    text: str,
    dataset_paths: list[Path],
    *,
    fmt: str = "text",
    show_all: bool = False,
    default_root: Path = Path("output"),
) -> Explained:
    """The `explain` command. `fmt` is `text` (a page, or with `show_all` one line per
    candidate) or `json` (JSON Lines of the matches and their envelopes)."""
    # The index is many small dicts and nothing of it is cyclic: the collector would walk
    # them again and again while they are parsed, for nothing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        datasets, warnings = load_datasets(dataset_paths, default_root)
        found = lookup(text, datasets)
    finally:
        if enabled:
            gc.enable()
    code = 1 if found.approximate else 0
    if fmt == "json":
        output = format_json(found, show_all)
    else:
        output = printable(format_candidates(found) if show_all else format_lookup(found))
    return Explained(output, code, [printable(warning) for warning in warnings])
