"""What `vmine explain` does: find the datasets, look the pasted text up, print a page or JSON."""

from __future__ import annotations

from pathlib import Path

from pipeline.lookup.index import index_dataset, resolve_datasets
from pipeline.lookup.match import Match, lookup
from pipeline.lookup.page import format_candidates, format_lookup


def explain(text: str, dataset_paths: list[Path], *, fmt: str = "text",
            show_all: bool = False, default_root: Path = Path("output")) -> tuple[str, int]:
    """The `explain` command: the output to print and the exit code (0 a match, 1 only
    approximate results). `fmt` is `text` (a page) or `json` (JSON Lines of envelopes)."""
    datasets = [index_dataset(path) for path in resolve_datasets(dataset_paths, default_root)]
    found = lookup(text, datasets)
    code = 1 if found.approximate else 0
    if fmt == "json":
        shown = found.matches if show_all or found.approximate else _tied_best(found.matches)
        lines = [m.dataset.envelope(m.entry.id).model_dump_json() + "\n" for m in shown]
        return "".join(lines), code
    if show_all:
        return format_candidates(found), code
    return format_lookup(found), code


def _tied_best(matches: list[Match]) -> list[Match]:
    """Every match as good as the first (the same error in several datasets or places)."""
    if not matches:
        return []
    head = matches[0]
    return [m for m in matches if (m.kind, round(m.score, 6)) == (head.kind, round(head.score, 6))]
