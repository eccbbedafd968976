"""The error sets of a series of releases -> a timeline per error: where it first and last
appears, and the releases where it was reworded, moved or changed.

Each pair of neighbouring releases is diffed with `diff_error_sets` (so an error is followed
exactly as `vmine diff` pairs it: by id, then by function and message, then by wording), and
the pairs are chained into one timeline per error:

| between releases R and R+1                    | the timeline                                   |
|-----------------------------------------------|------------------------------------------------|
| unchanged                                     | goes on                                        |
| moved / reworded / changed (guards, pattern,  | goes on, with an event at R+1 naming what      |
| settings)                                     | changed (`fields`)                             |
| removed                                       | ends at R (`removedIn` R+1)                    |
| added, with the id of a timeline that ended   | goes on after the gap (`presentIn` shows it)   |
| added otherwise                               | a new timeline, first seen at R+1              |

Plain data in, plain data out; `pipeline/history/report.py` renders it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pipeline.dataset.models import IndexEntry
from pipeline.diff.changes import Change, ErrorSet, diff_error_sets

EventKind = Literal["reworded", "moved", "changed"]


@dataclass(frozen=True)
class Release:
    """One release of the series: its name (`0.28.0`, `v0.11.0`) and its error set."""

    name: str
    errors: ErrorSet


@dataclass(frozen=True)
class Event:
    """What happened to an error on its way into `release`."""

    release: str
    kind: EventKind
    fields: tuple[str, ...]  # from diff's COMPARED_FIELDS: what differs from the release before
    change: Change = field(repr=False)

    @property
    def moved(self) -> bool:
        """Its file or line differs (a rewording or a change may move it too)."""
        return "filePath" in self.fields or "lineNumber" in self.fields

    @property
    def settings_changed(self) -> bool:
        return "settings" in self.fields


@dataclass
class Timeline:
    """One error across the series: its entry in each release that holds it, oldest first."""

    entries: list[tuple[str, IndexEntry]]
    events: list[Event] = field(default_factory=list)
    removed_in: str | None = None  # the release after its last one, when it went away

    @property
    def first_seen(self) -> str:
        return self.entries[0][0]

    @property
    def last_seen(self) -> str:
        return self.entries[-1][0]

    @property
    def latest(self) -> IndexEntry:
        """The error as it reads in the newest release holding it."""
        return self.entries[-1][1]

    @property
    def present_in(self) -> list[str]:
        return [release for release, _ in self.entries]

    @property
    def ids(self) -> list[str]:
        """Every record id it had, oldest first, each once (a rewording or a move to another
        file gives it a new one)."""
        return list(dict.fromkeys(entry.id for _, entry in self.entries))

    def reworded_in(self) -> list[str]:
        return [event.release for event in self.events if event.kind == "reworded"]

    def moved_in(self) -> list[str]:
        return [event.release for event in self.events if event.moved]

    def changed_in(self) -> list[str]:
        """Where its guards, pattern or settings changed under the same message."""
        return [event.release for event in self.events if event.kind == "changed"]

    def settings_changed_in(self) -> list[str]:
        return [event.release for event in self.events if event.settings_changed]

    def sort_key(self) -> tuple:
        latest = self.latest
        return (latest.filePath, latest.lineNumber, latest.qualname, latest.id)


@dataclass(frozen=True)
class History:
    """The timelines of every error seen in any release of the series."""

    repo: str | None
    releases: tuple[Release, ...]
    timelines: tuple[Timeline, ...]

    @property
    def names(self) -> list[str]:
        return [release.name for release in self.releases]

    def counts(self) -> dict[str, int]:
        """How many errors were ever seen, are in the last release, were added after the
        first, went away, and were reworded, moved or changed at least once."""
        last = self.names[-1] if self.releases else None
        first = self.names[0] if self.releases else None
        lines = self.timelines
        return {
            "errors": len(lines),
            "inLast": sum(1 for t in lines if t.last_seen == last),
            "addedAfterFirst": sum(1 for t in lines if t.first_seen != first),
            "removed": sum(1 for t in lines if t.removed_in is not None),
            "reworded": sum(1 for t in lines if t.reworded_in()),
            "moved": sum(1 for t in lines if t.moved_in()),
            "changed": sum(1 for t in lines if t.changed_in()),
            "settingsChanged": sum(1 for t in lines if t.settings_changed_in()),
        }


def build_history(releases: Sequence[Release]) -> History:
    """Chain the diffs of neighbouring releases into one timeline per error."""
    releases = tuple(releases)
    if not releases:
        return History(repo=None, releases=(), timelines=())
    current: dict[str, Timeline] = {}  # record id in the latest release -> its timeline
    ended: dict[str, Timeline] = {}  # last id of a timeline that went away -> it
    timelines: list[Timeline] = []
    first = releases[0]
    for entry in first.errors.entries:
        line = Timeline(entries=[(first.name, entry)])
        timelines.append(line)
        current[entry.id] = line
    for before, after in zip(releases, releases[1:], strict=False):
        diff = diff_error_sets(before.errors, after.errors)
        following: dict[str, Timeline] = {}
        for old, new in diff.same:
            line = current[old.id]
            line.entries.append((after.name, new))
            following[new.id] = line
        for change in diff.changes:
            if change.kind == "removed":
                assert change.old is not None
                line = current[change.old.id]
                line.removed_in = after.name
                ended[change.old.id] = line
                continue
            assert change.new is not None
            if change.kind == "added":
                line = ended.pop(change.new.id, None)  # it comes back after a gap
                if line is None:
                    line = Timeline(entries=[])
                    timelines.append(line)
                line.removed_in = None
            else:
                assert change.old is not None
                line = current[change.old.id]
                fields = tuple(change.fields)
                line.events.append(Event(after.name, change.kind, fields, change))  # type: ignore[arg-type]
            line.entries.append((after.name, change.new))
            following[change.new.id] = line
        current = following
    timelines.sort(key=Timeline.sort_key)
    repo = next((r.errors.repo for r in reversed(releases) if r.errors.repo), None)
    return History(repo=repo, releases=releases, timelines=tuple(timelines))


def timeline_of(history: History, release: str, record_id: str) -> Timeline | None:
    """The timeline holding the record `record_id` of `release`."""
    for line in history.timelines:
        if any(name == release and entry.id == record_id for name, entry in line.entries):
            return line
    return None
