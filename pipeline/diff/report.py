"""Renders a `DatasetDiff`: each change as a line of text, a Markdown table row, a JSON object
or a GitHub annotation, and a whole diff as text for a terminal, Markdown for a PR comment,
or JSON (the shape of docs/diff.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import click

from pipeline.console import printable, workflow_command
from pipeline.dataset.models import IndexEntry
from pipeline.diff.changes import (
    Change,
    Changed,
    DatasetDiff,
    ErrorSet,
    Reworded,
    SettingChange,
)
from pipeline.site.markdown import md_code

JSON_VERSION = 1
_SYMBOLS = {"added": "+", "removed": "-", "reworded": "~", "moved": ">", "changed": "!"}
_COLOURS = {
    "added": "green",
    "removed": "red",
    "reworded": "yellow",
    "moved": "cyan",
    "changed": "magenta",
}
# GitHub annotation level: what went away or changed meaning warns, the rest notes.
_LEVELS = {
    "added": "notice",
    "removed": "warning",
    "reworded": "warning",
    "moved": "notice",
    "changed": "warning",
}
# Past this many rows a Markdown report says how many it left out (PR comments are capped).
MARKDOWN_MAX_ROWS = 200


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _where(entry: IndexEntry) -> str:
    return f"{entry.filePath}:{entry.lineNumber}"


def _cell_code(text: str) -> str:
    """An inline code span that survives a GFM table cell (pipes escaped, one line)."""
    return md_code(text.replace("\n", "\\n"), spaced=True).replace("|", "\\|")


def detail(change: Change) -> str:
    """What a change says after `qualname: `: the message, or old -> new for a rewording."""
    if isinstance(change, Reworded):
        assert change.old is not None and change.new is not None
        return f"{_quote(change.old.errorMessage)} -> {_quote(change.new.errorMessage)}"
    return _quote(change.entry.errorMessage)


def detail_markdown(change: Change) -> str:
    if isinstance(change, Reworded):
        assert change.old is not None and change.new is not None
        return f"{_cell_code(change.old.errorMessage)} → {_cell_code(change.new.errorMessage)}"
    return _cell_code(change.entry.errorMessage)


def note(change: Change) -> str:
    """What else changed, in a few words ('' when nothing)."""
    moved = f"was {_where(change.old)}" if change.old and change.moved else ""
    if not isinstance(change, Changed):
        return moved
    assert change.old is not None and change.new is not None
    parts = [
        f"{name} {json.dumps(getattr(change.old, name), ensure_ascii=False)} -> "
        f"{json.dumps(getattr(change.new, name), ensure_ascii=False)}"
        for name in ("guards", "messagePattern")
        if name in change.fields
    ]
    parts += [setting_note(setting) for setting in change.settings]
    return "; ".join([*parts, moved] if moved else parts)


def setting_note(change: SettingChange) -> str:
    """`self.method: choices -medusa +mtp, default "ngram" -> "mtp"`: the values a list of
    choices lost and gained, old -> new for the rest (a default as its source text)."""
    said = []
    for name in change.facts:
        before, after = getattr(change.old, name), getattr(change.new, name)
        if name == "choices" and before is not None and after is not None:
            gone = [f"-{value}" for value in before if value not in after]
            new = [f"+{value}" for value in after if value not in before]
            said.append(f"choices {' '.join(gone + new) or 'reordered'}")
        else:
            said.append(f"{name} {_setting_value(name, before)} -> {_setting_value(name, after)}")
    return f"{change.expr}: {', '.join(said)}"


def _setting_value(name: str, value: str | list[str] | None) -> str:
    if value is None:
        return "(not listed)" if name == "choices" else "(none)"
    return value if isinstance(value, str) else " ".join(value) or "(none)"


def change_line(change: Change) -> str:
    """A change as one line of text: its mark, kind, place, function and what changed."""
    said = note(change)
    tail = f" ({said})" if said else ""
    return (
        f"{_SYMBOLS[change.kind]} {change.kind:<8} {_where(change.entry)}  "
        f"{change.entry.qualname}: {detail(change)}{tail}"
    )


def markdown_row(change: Change, urls: Mapping[str, str] | None = None) -> str:
    urls = urls or {}
    entry = change.entry
    place = _cell_code(_where(entry))
    if urls.get(entry.id):
        place = f"[{place}]({urls[entry.id]})"
    cells = [
        change.kind,
        place,
        _cell_code(entry.qualname),
        detail_markdown(change),
        note(change).replace("|", "\\|"),
    ]
    return "| " + " | ".join(cells) + " |"


def _entry_json(entry: IndexEntry | None, urls: Mapping[str, str]) -> dict[str, Any] | None:
    if entry is None:
        return None
    return {
        "id": entry.id,
        "filePath": entry.filePath,
        "lineNumber": entry.lineNumber,
        "errorMessage": entry.errorMessage,
        "messagePattern": entry.messagePattern,
        "guards": list(entry.guards),
        "githubUrl": urls.get(entry.id),
    }


def change_json(
    change: Change,
    old_urls: Mapping[str, str] | None = None,
    new_urls: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    similarity = round(change.similarity, 3) if isinstance(change, Reworded) else None
    return {
        "kind": change.kind,
        "qualname": change.entry.qualname,
        "errorClass": change.entry.errorClass,
        "fields": change.fields,
        "similarity": similarity,
        "settings": [
            {
                "expr": setting.expr,
                "class": setting.new.cls,
                "field": setting.new.field,
                "flags": setting.new.flags,
                "old": {name: getattr(setting.old, name) for name in setting.facts},
                "new": {name: getattr(setting.new, name) for name in setting.facts},
            }
            for setting in change.settings
        ],
        "old": _entry_json(change.old, old_urls or {}),
        "new": _entry_json(change.new, new_urls or {}),
    }


def annotation(change: Change) -> str:
    """A GitHub workflow command that pins this change to its line."""
    entry = change.entry
    said = note(change)
    tail = f" ({said})" if said else ""
    return workflow_command(
        _LEVELS[change.kind],
        f"{entry.qualname}: {detail(change)}{tail}",
        file=entry.filePath,
        line=entry.lineNumber,
        title=f"vmine diff: {change.kind}",
    )


def render_text(diff: DatasetDiff, color: bool = False) -> str:
    """One line per change, grouped by kind, then the summary line (what comes from the
    datasets has its control characters escaped: this goes to a terminal)."""
    lines = [printable(f"{diff.old.title} -> {diff.new.title}")]
    for change in diff.changes:
        line = printable(change_line(change))
        lines.append(click.style(line, fg=_COLOURS[change.kind]) if color else line)
    summary = diff.summary()
    lines.append(click.style(summary, bold=True) if color else summary)
    return "\n".join(lines) + "\n"


def _table(rows: list[str]) -> list[str]:
    return ["| change | where | validator | error | note |", "|---|---|---|---|---|", *rows]


def render_markdown(diff: DatasetDiff, max_rows: int = MARKDOWN_MAX_ROWS) -> str:
    """A heading, the summary in bold, a table of the changes; moves folded away. Control
    characters are escaped (it is printed on terminals too)."""
    lines = [
        f"### vmine diff: `{diff.old.title}` → `{diff.new.title}`",
        "",
        f"**{diff.summary()}**",
        "",
    ]
    if not diff.changes:
        lines.append("No error was added, removed, reworded, moved or changed.")
        return printable("\n".join(lines) + "\n", keep_newlines=True)
    main = [change for change in diff.changes if change.kind != "moved"]
    moved = [change for change in diff.changes if change.kind == "moved"]
    budget = max_rows
    if main:
        shown = main[:budget]
        budget -= len(shown)
        lines += _table([markdown_row(change, _urls(diff, change)) for change in shown])
        lines.append("")
    if moved:
        shown_moved = moved[:budget]
        budget -= len(shown_moved)
        if shown_moved:
            lines += [f"<details><summary>{len(moved)} moved</summary>", ""]
            lines += _table([markdown_row(change, _urls(diff, change)) for change in shown_moved])
            lines += ["", "</details>", ""]
    left_out = len(diff.changes) - (max_rows - budget)
    if left_out > 0:
        lines += [f"… and {left_out} more changes (run `vmine diff --format json` for all).", ""]
    return printable("\n".join(lines).rstrip("\n") + "\n", keep_newlines=True)


def _urls(diff: DatasetDiff, change: Change) -> Mapping[str, str]:
    return diff.old.urls if change.new is None else diff.new.urls


def _side(error_set: ErrorSet) -> dict:
    return {
        "label": error_set.label,
        "repo": error_set.repo,
        "analyzedSha": error_set.sha,
        "records": len(error_set.entries),
    }


def diff_json(diff: DatasetDiff) -> dict:
    """The documented shape of `vmine diff --format json` (docs/diff.md)."""
    return {
        "version": JSON_VERSION,
        "old": _side(diff.old),
        "new": _side(diff.new),
        "counts": diff.counts,
        "changes": [change_json(change, diff.old.urls, diff.new.urls) for change in diff.changes],
    }


def render_json(diff: DatasetDiff) -> str:
    return json.dumps(diff_json(diff), indent=2, ensure_ascii=False) + "\n"


def render(diff: DatasetDiff, fmt: str, color: bool = False) -> str:
    if fmt == "markdown":
        return render_markdown(diff)
    if fmt == "json":
        return render_json(diff)
    return render_text(diff, color=color)
