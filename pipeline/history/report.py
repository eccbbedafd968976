"""Renders a `History`: a line per error for a terminal, a table for Markdown, and the JSON
shape of docs/history.md. Each says, per error, where it first and last appears and the
releases where it was reworded, moved or changed."""

from __future__ import annotations

import json
from typing import Any

from pipeline.console import printable
from pipeline.diff.report import change_json
from pipeline.history.timeline import History, Timeline
from pipeline.site.markdown import md_code

JSON_VERSION = 1


def span(line: Timeline, history: History) -> str:
    """`0.28.0..0.33.0`, `0.30.0` (one release), with the releases missing in between."""
    first, last = line.first_seen, line.last_seen
    said = first if first == last else f"{first}..{last}"
    names = history.names
    inside = names[names.index(first) : names.index(last) + 1]
    gaps = [name for name in inside if name not in line.present_in]
    return said + (f" (not in {', '.join(gaps)})" if gaps else "")


def _changed_fields(fields: tuple[str, ...]) -> str:
    named = {"guards": "guards", "messagePattern": "pattern", "settings": "settings"}
    return "+".join(named[name] for name in fields if name in named)


def story(line: Timeline) -> str:
    """`reworded in 0.30.0; moved in 0.29.0, 0.31.0; changed in 0.32.0 (settings)`, or ''."""
    parts = []
    if line.reworded_in():
        parts.append(f"reworded in {', '.join(line.reworded_in())}")
    if line.moved_in():
        parts.append(f"moved in {', '.join(line.moved_in())}")
    changed = [e for e in line.events if e.kind == "changed"]
    if changed:
        said = ", ".join(f"{e.release} ({_changed_fields(e.fields)})" for e in changed)
        parts.append(f"changed in {said}")
    if line.removed_in:
        parts.append(f"removed in {line.removed_in}")
    return "; ".join(parts)


def since(line: Timeline, history: History) -> str:
    """What `vmine explain` says of a record's past: `present since 0.28.0; reworded in
    0.30.0`. Seen in the oldest release searched, it may be older still: that is said."""
    first = line.first_seen
    said = f"present since {first}"
    if first == history.names[0]:
        said += " (the oldest release searched)"
    more = story(line)
    return f"{said}; {more}" if more else said


def summary(history: History) -> str:
    counts = history.counts()
    if not history.releases:
        return "0 errors"
    first, last = history.names[0], history.names[-1]
    return (
        f"{counts['errors']} errors: {counts['inLast']} in {last}, "
        f"{counts['addedAfterFirst']} added after {first}, {counts['removed']} removed, "
        f"{counts['reworded']} reworded, {counts['moved']} moved, {counts['changed']} changed "
        f"({counts['settingsChanged']} in their settings)"
    )


def _title(history: History) -> str:
    names = history.names
    where = f"{names[0]} -> {names[-1]}" if names else "no release"
    return f"{history.repo or 'history'}: {len(names)} releases, {where}"


def render_text(history: History) -> str:
    lines = [_title(history)]
    for line in history.timelines:
        latest = line.latest
        lines.append(
            f"{span(line, history)}  {latest.filePath}:{latest.lineNumber}  "
            f"{latest.qualname}: {json.dumps(latest.errorMessage, ensure_ascii=False)}"
        )
        more = story(line)
        if more:
            lines.append(f"    {more}")
    lines.append(summary(history))
    return printable("\n".join(lines), keep_newlines=True) + "\n"


def _cell(text: str) -> str:
    return md_code(text.replace("\n", "\\n"), spaced=True).replace("|", "\\|")


def _list(names: list[str]) -> str:
    return ", ".join(names) or "–"


def render_markdown(history: History) -> str:
    urls = {release.name: release.errors.urls for release in history.releases}
    lines = [f"### vmine history: `{_title(history)}`", "", f"**{summary(history)}**", ""]
    lines += [
        "| error | where | first seen | last seen | reworded in | moved in | changed in |",
        "|---|---|---|---|---|---|---|",
    ]
    for line in history.timelines:
        latest = line.latest
        place = _cell(f"{latest.filePath}:{latest.lineNumber}")
        url = urls.get(line.last_seen, {}).get(latest.id)
        if url:
            place = f"[{place}]({url})"
        changed = [
            f"{e.release} ({_changed_fields(e.fields)})" for e in line.events if e.kind == "changed"
        ]
        last = line.last_seen + (f" (removed in {line.removed_in})" if line.removed_in else "")
        cells = [
            f"{_cell(latest.qualname)}: {_cell(latest.errorMessage)}",
            place,
            line.first_seen,
            last,
            _list(line.reworded_in()),
            _list(line.moved_in()),
            _list(changed),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return printable("\n".join(lines) + "\n", keep_newlines=True)


def timeline_json(line: Timeline, history: History) -> dict[str, Any]:
    sets = {release.name: release.errors for release in history.releases}
    names = history.names
    latest = line.latest
    events = []
    for event in line.events:
        before = names[names.index(event.release) - 1]
        described = change_json(event.change, sets[before].urls, sets[event.release].urls)
        events.append({"release": event.release, **described})
    return {
        "id": latest.id,
        "ids": line.ids,
        "qualname": latest.qualname,
        "errorClass": latest.errorClass,
        "errorMessage": latest.errorMessage,
        "filePath": latest.filePath,
        "lineNumber": latest.lineNumber,
        "githubUrl": sets[line.last_seen].urls.get(latest.id),
        "firstSeen": line.first_seen,
        "lastSeen": line.last_seen,
        "presentIn": line.present_in,
        "removedIn": line.removed_in,
        "rewordedIn": line.reworded_in(),
        "movedIn": line.moved_in(),
        "changedIn": line.changed_in(),
        "settingsChangedIn": line.settings_changed_in(),
        "events": events,
    }


def history_json(history: History) -> dict[str, Any]:
    """The documented shape of `vmine history --format json` (docs/history.md)."""
    return {
        "version": JSON_VERSION,
        "repo": history.repo,
        "releases": [
            {
                "release": release.name,
                "label": release.errors.label,
                "analyzedSha": release.errors.sha,
                "records": len(release.errors.entries),
            }
            for release in history.releases
        ],
        "counts": history.counts(),
        "errors": [timeline_json(line, history) for line in history.timelines],
    }


def render_json(history: History) -> str:
    return json.dumps(history_json(history), indent=2, ensure_ascii=False) + "\n"


def render(history: History, fmt: str) -> str:
    if fmt == "markdown":
        return render_markdown(history)
    if fmt == "json":
        return render_json(history)
    return render_text(history)
