"""Two error sets (written datasets or freshly extracted trees) -> typed `Change`s.

Matching, in order:
1. by record id (same repo, file, function, class, message and occurrence);
2. unmatched records of the same function with the same class and message (the id changed
   because the function moved to another file, or an identical raise before it went away):
   treated as the same error;
3. unmatched records of the same function whose messages are similar (difflib ratio >= 0.6),
   paired greedily best-first: `reworded`;
4. what is left: `added` (only in NEW) or `removed` (only in OLD).

A pair from 1 or 2 whose guards or messagePattern differ, or one of whose settings now
accepts other values, defaults to another one or is set by other flags (`settings`), is
`changed` (and notes a move when the file or line moved too: `changed` wins over `moved`);
one whose file or line moved is `moved`; otherwise it is unchanged and only counted.

The changes are plain data; `pipeline/diff/report.py` renders them as text, Markdown, JSON
or GitHub annotations.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Literal

from pipeline.dataset.models import IndexEntry, Setting
from pipeline.dataset.reader import Dataset

ChangeKind = Literal["added", "removed", "reworded", "moved", "changed"]
KINDS: tuple[ChangeKind, ...] = ("added", "removed", "reworded", "moved", "changed")
REWORD_THRESHOLD = 0.6
# The facts a pair of records is compared on, in the order they are reported.
COMPARED_FIELDS = ("filePath", "lineNumber", "errorMessage", "messagePattern", "guards", "settings")
# What a user sets of a setting: a change to one of these changes how the error is avoided.
# Its doc is not among them (rewording a docstring changes no fix).
SETTING_FACTS = ("choices", "default", "flags")
# The facts whose change makes a pair `changed` rather than `moved` or unchanged.
MEANING_FIELDS = ("messagePattern", "guards", "settings")


@dataclass(frozen=True)
class SettingChange:
    """A setting both records read (the same `expr`, see `pair_settings`) whose accepted values, default or flags
    differ: `facts` names which, in SETTING_FACTS order."""

    old: Setting
    new: Setting
    facts: tuple[str, ...]

    @property
    def expr(self) -> str:
        return self.new.expr


def setting_changes(old: IndexEntry, new: IndexEntry) -> list[SettingChange]:
    """The settings read on both sides that a user now sets differently. A setting only one
    side reads is not one: which settings a site resolves follows from its guards (compared
    on their own), and a dataset of an older vmine has none at all."""
    found = []
    for was, setting in pair_settings(old.settings, new.settings):
        facts = tuple(
            name for name in SETTING_FACTS if getattr(was, name) != getattr(setting, name)
        )
        if facts:
            found.append(SettingChange(was, setting, facts))
    return found


def pair_settings(old: Sequence[Setting], new: Sequence[Setting]) -> list[tuple[Setting, Setting]]:
    """The settings two records both read, paired. One expr can resolve to several settings
    (a property whose branches return different fields), so a setting is what its expr reads
    *and* where that resolves:

    | old                | new                        | paired                         |
    |--------------------|----------------------------|--------------------------------|
    | e -> A.x           | e -> A.x                   | A.x with A.x                   |
    | e -> A.x, e -> B.y | e -> B.y, e -> A.x         | A.x with A.x, B.y with B.y     |
    | e -> A.x           | e -> C.x (the field moved) | A.x with C.x: one left on each |
    | e -> A.x, e -> B.y | e -> C.z                   | none: no telling which it was  |

    First by (expr, class, field), then what is left of an expr when each side has exactly
    one setting of it left."""
    waiting: dict[tuple, list[Setting]] = {}
    for setting in old:
        waiting.setdefault(_resolved(setting), []).append(setting)
    pairs, left_new = [], []
    for setting in new:
        candidates = waiting.get(_resolved(setting))
        if candidates:
            pairs.append((candidates.pop(0), setting))
        else:
            left_new.append(setting)
    left_old: dict[str, list[Setting]] = {}
    for candidates in waiting.values():
        for setting in candidates:
            left_old.setdefault(setting.expr, []).append(setting)
    new_by_expr: dict[str, list[Setting]] = {}
    for setting in left_new:
        new_by_expr.setdefault(setting.expr, []).append(setting)
    for expr, settings in new_by_expr.items():
        before = left_old.get(expr, [])
        if len(settings) == 1 and len(before) == 1:
            pairs.append((before[0], settings[0]))
    return pairs


def _resolved(setting: Setting) -> tuple:
    return (setting.expr, setting.cls, setting.field)


@dataclass(frozen=True)
class ErrorSet:
    """One side of a diff: the records of a repository at a commit, as index entries."""

    label: str
    repo: str | None
    sha: str | None
    entries: tuple[IndexEntry, ...]
    urls: Mapping[str, str] = field(default_factory=dict)  # id -> githubUrl, when known
    scope: str = "validators"  # which raises it holds: those in validators, or `all`

    @classmethod
    def from_dataset(cls, dataset: Dataset, label: str | None = None) -> ErrorSet:
        """Wrap a dataset as `load_dataset` returns it."""
        return cls(
            label=label or str(dataset.root),
            repo=dataset.repo,
            sha=dataset.sha,
            entries=tuple(dataset.entries),
            urls={key: record.githubUrl for key, record in dataset.records.items()},
            scope=dataset.manifest.scope,
        )

    @property
    def title(self) -> str:
        """`owner/name@sha12`, or the label the user gave when the commit is unknown."""
        if self.repo and self.sha:
            return f"{self.repo}@{self.sha[:12]}"
        return self.label


@dataclass(frozen=True)
class Change:
    """One difference between OLD and NEW; the subclass says which kind."""

    kind: ClassVar[ChangeKind]

    old: IndexEntry | None
    new: IndexEntry | None

    @property
    def entry(self) -> IndexEntry:
        """The record as it is now (as it was, for a removed one)."""
        entry = self.new or self.old
        assert entry is not None
        return entry

    @cached_property  # a change is frozen: its facts are worked out once
    def fields(self) -> list[str]:
        """Which compared facts differ between the old and the new record."""
        if self.old is None or self.new is None:
            return []
        return [
            name
            for name in COMPARED_FIELDS
            if (
                bool(self.settings)
                if name == "settings"
                else getattr(self.old, name) != getattr(self.new, name)
            )
        ]

    @cached_property
    def settings(self) -> list[SettingChange]:
        """The settings read on both sides that a user now sets differently."""
        if self.old is None or self.new is None:
            return []
        return setting_changes(self.old, self.new)

    @property
    def moved(self) -> bool:
        return any(name in ("filePath", "lineNumber") for name in self.fields)

    def sort_key(self) -> tuple:
        entry = self.entry
        return (KINDS.index(self.kind), entry.filePath, entry.lineNumber, entry.qualname, entry.id)


@dataclass(frozen=True)
class Added(Change):
    kind: ClassVar[ChangeKind] = "added"


@dataclass(frozen=True)
class Removed(Change):
    kind: ClassVar[ChangeKind] = "removed"


@dataclass(frozen=True)
class Reworded(Change):
    kind: ClassVar[ChangeKind] = "reworded"

    similarity: float = 0.0


@dataclass(frozen=True)
class Moved(Change):
    kind: ClassVar[ChangeKind] = "moved"


@dataclass(frozen=True)
class Changed(Change):
    kind: ClassVar[ChangeKind] = "changed"


@dataclass(frozen=True)
class DatasetDiff:
    """The changes from OLD to NEW, sorted by kind then place, and how many stayed the same."""

    old: ErrorSet
    new: ErrorSet
    changes: tuple[Change, ...]
    unchanged: int
    # The records that did not change, as (old, new) pairs (`unchanged` counts them); the
    # history of a release series follows an error through them.
    same: tuple[tuple[IndexEntry, IndexEntry], ...] = field(default=(), repr=False)

    def count(self, kind: ChangeKind) -> int:
        return sum(1 for change in self.changes if change.kind == kind)

    @property
    def counts(self) -> dict[str, int]:
        return {**{kind: self.count(kind) for kind in KINDS}, "unchanged": self.unchanged}

    @property
    def differs(self) -> bool:
        return bool(self.changes)

    def summary(self) -> str:
        """`3 added, 1 removed, 2 reworded, 4 moved, 1 changed, 120 unchanged`."""
        return ", ".join(f"{count} {kind}" for kind, count in self.counts.items())


def position(entry: IndexEntry) -> tuple:
    """Where a record sits, for a deterministic order."""
    return (entry.filePath, entry.lineNumber, entry.id)


def _pair_same_message(old: list[IndexEntry], new: list[IndexEntry]):
    """Step 2: same function, class and message, in order of place; returns the pairs
    and what is left on each side."""
    waiting: dict[tuple, list[IndexEntry]] = {}
    for entry in sorted(new, key=position):
        waiting.setdefault((entry.qualname, entry.errorClass, entry.errorMessage), []).append(entry)
    pairs, left_old = [], []
    for entry in sorted(old, key=position):
        candidates = waiting.get((entry.qualname, entry.errorClass, entry.errorMessage))
        if candidates:
            pairs.append((entry, candidates.pop(0)))
        else:
            left_old.append(entry)
    paired_new = {id(b) for _, b in pairs}
    return pairs, left_old, [entry for entry in new if id(entry) not in paired_new]


def _pair_reworded(old: list[IndexEntry], new: list[IndexEntry]):
    """Step 3: greedy best-first pairing of similar messages within one function."""
    candidates = []
    for a in old:
        for b in new:
            if a.qualname != b.qualname:
                continue
            ratio = difflib.SequenceMatcher(
                None, a.errorMessage, b.errorMessage, autojunk=False
            ).ratio()
            if ratio >= REWORD_THRESHOLD:
                # Ties: the same file first, then by place, so the result is deterministic.
                candidates.append(
                    (-ratio, a.filePath != b.filePath, position(a), position(b), a, b)
                )
    candidates.sort(key=lambda item: item[:4])
    used_old: set[int] = set()
    used_new: set[int] = set()
    pairs = []
    for negative_ratio, _, _, _, a, b in candidates:
        if id(a) in used_old or id(b) in used_new:
            continue
        used_old.add(id(a))
        used_new.add(id(b))
        pairs.append((a, b, -negative_ratio))
    return (
        pairs,
        [a for a in old if id(a) not in used_old],
        [b for b in new if id(b) not in used_new],
    )


def diff_error_sets(old: ErrorSet, new: ErrorSet) -> DatasetDiff:
    old_by_id = {entry.id: entry for entry in old.entries}
    new_by_id = {entry.id: entry for entry in new.entries}
    same = [(old_by_id[key], new_by_id[key]) for key in old_by_id if key in new_by_id]
    left_old = [entry for key, entry in old_by_id.items() if key not in new_by_id]
    left_new = [entry for key, entry in new_by_id.items() if key not in old_by_id]
    relocated, left_old, left_new = _pair_same_message(left_old, left_new)
    reworded, left_old, left_new = _pair_reworded(left_old, left_new)

    changes: list[Change] = [Added(None, entry) for entry in left_new]
    changes += [Removed(entry, None) for entry in left_old]
    changes += [Reworded(a, b, similarity=ratio) for a, b, ratio in reworded]
    kept = []
    for a, b in same + relocated:
        pair = Changed(a, b)
        if any(name in pair.fields for name in MEANING_FIELDS):
            changes.append(pair)
        elif pair.moved:
            changes.append(Moved(a, b))
        else:
            kept.append((a, b))
    changes.sort(key=Change.sort_key)
    return DatasetDiff(
        old=old, new=new, changes=tuple(changes), unchanged=len(kept), same=tuple(kept)
    )
