"""Lays a `DatasetDiff` out as text for a terminal, Markdown for a PR comment, or JSON."""

from __future__ import annotations

import json

import click

from pipeline.diff import DatasetDiff

JSON_VERSION = 1
_COLOURS = {"added": "green", "removed": "red", "reworded": "yellow", "moved": "cyan",
            "changed": "magenta"}
# Past this many rows a Markdown report says how many it left out (PR comments are capped).
MARKDOWN_MAX_ROWS = 200


def render_text(diff: DatasetDiff, color: bool = False) -> str:
    """One line per change, grouped by kind, then the summary line."""
    lines = [f"{diff.old.title} -> {diff.new.title}"]
    for change in diff.changes:
        line = change.one_line()
        lines.append(click.style(line, fg=_COLOURS[change.kind]) if color else line)
    summary = diff.summary()
    lines.append(click.style(summary, bold=True) if color else summary)
    return "\n".join(lines) + "\n"


def _table(rows: list[str]) -> list[str]:
    return ["| change | where | validator | error | note |", "|---|---|---|---|---|", *rows]


def render_markdown(diff: DatasetDiff, max_rows: int = MARKDOWN_MAX_ROWS) -> str:
    """A heading, the summary in bold, a table of the changes; moves folded away."""
    lines = [f"### vmine diff: `{diff.old.title}` → `{diff.new.title}`", "",
             f"**{diff.summary()}**", ""]
    if not diff.changes:
        lines.append("No error was added, removed, reworded, moved or changed.")
        return "\n".join(lines) + "\n"
    main = [change for change in diff.changes if change.kind != "moved"]
    moved = [change for change in diff.changes if change.kind == "moved"]
    budget = max_rows
    if main:
        shown = main[:budget]
        budget -= len(shown)
        lines += _table([change.markdown_row(_urls(diff, change)) for change in shown])
        lines.append("")
    if moved:
        shown_moved = moved[:budget]
        budget -= len(shown_moved)
        if shown_moved:
            lines += [f"<details><summary>{len(moved)} moved</summary>", ""]
            lines += _table([change.markdown_row(_urls(diff, change)) for change in shown_moved])
            lines += ["", "</details>", ""]
    left_out = len(diff.changes) - (max_rows - budget)
    if left_out > 0:
        lines += [f"… and {left_out} more changes (run `vmine diff --format json` for all).", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _urls(diff: DatasetDiff, change) -> dict[str, str]:
    return diff.old.urls if change.new is None else diff.new.urls


def _side(error_set) -> dict:
    return {"label": error_set.label, "repo": error_set.repo, "analyzedSha": error_set.sha,
            "records": len(error_set.entries)}


def diff_json(diff: DatasetDiff) -> dict:
    """The documented shape of `vmine diff --format json` (docs/diff.md)."""
    return {
        "version": JSON_VERSION,
        "old": _side(diff.old),
        "new": _side(diff.new),
        "counts": diff.counts,
        "changes": [change.to_json(diff.old.urls, diff.new.urls) for change in diff.changes],
    }


def render_json(diff: DatasetDiff) -> str:
    return json.dumps(diff_json(diff), indent=2, ensure_ascii=False) + "\n"


def render(diff: DatasetDiff, fmt: str, color: bool = False) -> str:
    if fmt == "markdown":
        return render_markdown(diff)
    if fmt == "json":
        return render_json(diff)
    return render_text(diff, color=color)
