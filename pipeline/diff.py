"""Two error sets (written datasets or freshly extracted trees) -> typed `Change`s.

Matching, in order:
1. by record id (same repo, file, function, class, message and occurrence);
2. unmatched records of the same function with the same class and message (the id changed
   because the function moved to another file, or an identical raise before it went away):
   treated as the same error;
3. unmatched records of the same function whose messages are similar (difflib ratio >= 0.6),
   paired greedily best-first: `reworded`;
4. what is left: `added` (only in NEW) or `removed` (only in OLD).

A pair from 1 or 2 whose guards or messagePattern differ is `changed` (and notes a move
when the file or line moved too: `changed` wins over `moved`); one whose file or line
moved is `moved`; otherwise it is unchanged and only counted.

Each change explains itself as one line of text, a Markdown table row, a JSON object and a
GitHub annotation; `pipeline/diff_render.py` lays a whole diff out in one of those forms.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pipeline.console import Console, workflow_command
from pipeline.dataset import Dataset, DatasetError, datasets_at, load_dataset
from pipeline.models import IndexEntry, Site

ChangeKind = Literal["added", "removed", "reworded", "moved", "changed"]
KINDS: tuple[ChangeKind, ...] = ("added", "removed", "reworded", "moved", "changed")
REWORD_THRESHOLD = 0.6
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
# The facts a pair of records is compared on, in the order they are reported.
COMPARED_FIELDS = ("filePath", "lineNumber", "errorMessage", "messagePattern", "guards")


class DiffInputError(Exception):
    """OLD or NEW cannot be read as an error set; the message is one line for the user."""


@dataclass(frozen=True)
class ErrorSet:
    """One side of a diff: the records of a repository at a commit, as index entries."""

    label: str
    repo: str | None
    sha: str | None
    entries: tuple[IndexEntry, ...]
    urls: Mapping[str, str] = field(default_factory=dict)  # id -> githubUrl, when known

    @classmethod
    def from_dataset(cls, dataset: Dataset, label: str | None = None) -> ErrorSet:
        """Wrap a dataset as `load_dataset` returns it."""
        return cls(
            label=label or str(dataset.root),
            repo=dataset.repo,
            sha=dataset.sha,
            entries=tuple(dataset.entries),
            urls={key: record.githubUrl for key, record in dataset.records.items()},
        )

    @property
    def title(self) -> str:
        """`owner/name@sha12`, or the label the user gave when the commit is unknown."""
        if self.repo and self.sha:
            return f"{self.repo}@{self.sha[:12]}"
        return self.label


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _where(entry: IndexEntry) -> str:
    return f"{entry.filePath}:{entry.lineNumber}"


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


def _md_code(text: str) -> str:
    """An inline code span that survives a GFM table cell."""
    text = text.replace("\n", "\\n").replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


@dataclass(frozen=True)
class Change:
    """One difference between OLD and NEW; subclasses say which kind and how it reads."""

    kind: ClassVar[ChangeKind]
    symbol: ClassVar[str]
    level: ClassVar[str] = "notice"  # GitHub annotation level

    old: IndexEntry | None
    new: IndexEntry | None

    @property
    def entry(self) -> IndexEntry:
        """The record as it is now (as it was, for a removed one)."""
        entry = self.new or self.old
        assert entry is not None
        return entry

    @property
    def fields(self) -> list[str]:
        """Which compared facts differ between the old and the new record."""
        if self.old is None or self.new is None:
            return []
        return [
            name for name in COMPARED_FIELDS
            if getattr(self.old, name) != getattr(self.new, name)
        ]

    @property
    def moved(self) -> bool:
        return any(name in ("filePath", "lineNumber") for name in self.fields)

    def sort_key(self) -> tuple:
        entry = self.entry
        return (KINDS.index(self.kind), entry.filePath, entry.lineNumber, entry.qualname,
                entry.id)

    # What each kind says after "qualname: "; plain text and Markdown versions.
    def detail(self) -> str:
        return _quote(self.entry.errorMessage)

    def detail_markdown(self) -> str:
        return _md_code(self.entry.errorMessage)

    def note(self) -> str:
        """What else changed, in a few words ('' when nothing)."""
        return f"was {_where(self.old)}" if self.old and self.moved else ""

    def one_line(self) -> str:
        note = f" ({self.note()})" if self.note() else ""
        return (f"{self.symbol} {self.kind:<8} {_where(self.entry)}  "
                f"{self.entry.qualname}: {self.detail()}{note}")

    def markdown_row(self, urls: Mapping[str, str] | None = None) -> str:
        urls = urls or {}
        entry = self.entry
        place = _md_code(_where(entry))
        if urls.get(entry.id):
            place = f"[{place}]({urls[entry.id]})"
        cells = [self.kind, place, _md_code(entry.qualname), self.detail_markdown(),
                 self.note().replace("|", "\\|")]
        return "| " + " | ".join(cells) + " |"

    def to_json(self, old_urls: Mapping[str, str] | None = None,
                new_urls: Mapping[str, str] | None = None) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "qualname": self.entry.qualname,
            "errorClass": self.entry.errorClass,
            "fields": self.fields,
            "similarity": None,
            "old": _entry_json(self.old, old_urls or {}),
            "new": _entry_json(self.new, new_urls or {}),
        }

    def annotation(self) -> str:
        """A GitHub workflow command that pins this change to its line."""
        entry = self.entry
        note = f" ({self.note()})" if self.note() else ""
        title = f"vmine diff: {self.kind}"
        message = f"{entry.qualname}: {self.detail()}{note}"
        return workflow_command(self.level, message, file=entry.filePath,
                                line=entry.lineNumber, title=title)


@dataclass(frozen=True)
class Added(Change):
    kind: ClassVar[ChangeKind] = "added"
    symbol: ClassVar[str] = "+"


@dataclass(frozen=True)
class Removed(Change):
    kind: ClassVar[ChangeKind] = "removed"
    symbol: ClassVar[str] = "-"
    level: ClassVar[str] = "warning"


@dataclass(frozen=True)
class Reworded(Change):
    kind: ClassVar[ChangeKind] = "reworded"
    symbol: ClassVar[str] = "~"
    level: ClassVar[str] = "warning"

    similarity: float = 0.0

    def detail(self) -> str:
        assert self.old is not None and self.new is not None
        return f"{_quote(self.old.errorMessage)} -> {_quote(self.new.errorMessage)}"

    def detail_markdown(self) -> str:
        assert self.old is not None and self.new is not None
        return f"{_md_code(self.old.errorMessage)} → {_md_code(self.new.errorMessage)}"

    def to_json(self, old_urls=None, new_urls=None) -> dict[str, Any]:
        return {**super().to_json(old_urls, new_urls), "similarity": round(self.similarity, 3)}


@dataclass(frozen=True)
class Moved(Change):
    kind: ClassVar[ChangeKind] = "moved"
    symbol: ClassVar[str] = ">"


@dataclass(frozen=True)
class Changed(Change):
    kind: ClassVar[ChangeKind] = "changed"
    symbol: ClassVar[str] = "!"
    level: ClassVar[str] = "warning"

    def note(self) -> str:
        assert self.old is not None and self.new is not None
        parts = [
            f"{name} {json.dumps(getattr(self.old, name), ensure_ascii=False)} -> "
            f"{json.dumps(getattr(self.new, name), ensure_ascii=False)}"
            for name in ("guards", "messagePattern")
            if name in self.fields
        ]
        if self.moved:
            parts.append(super().note())
        return "; ".join(parts)


@dataclass(frozen=True)
class DatasetDiff:
    """The changes from OLD to NEW, sorted by kind then place, and how many stayed the same."""

    old: ErrorSet
    new: ErrorSet
    changes: tuple[Change, ...]
    unchanged: int

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


def _position(entry: IndexEntry) -> tuple:
    return (entry.filePath, entry.lineNumber, entry.id)


def _pair_same_message(old: list[IndexEntry], new: list[IndexEntry]):
    """Step 2: same function, class and message, in order of place; returns the pairs
    and what is left on each side."""
    waiting: dict[tuple, list[IndexEntry]] = {}
    for entry in sorted(new, key=_position):
        waiting.setdefault((entry.qualname, entry.errorClass, entry.errorMessage), []).append(
            entry)
    pairs, left_old = [], []
    for entry in sorted(old, key=_position):
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
            ratio = difflib.SequenceMatcher(None, a.errorMessage, b.errorMessage,
                                            autojunk=False).ratio()
            if ratio >= REWORD_THRESHOLD:
                # Ties: the same file first, then by place, so the result is deterministic.
                candidates.append((-ratio, a.filePath != b.filePath, _position(a),
                                   _position(b), a, b))
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
    return (pairs, [a for a in old if id(a) not in used_old],
            [b for b in new if id(b) not in used_new])


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
    unchanged = 0
    for a, b in same + relocated:
        pair = Changed(a, b)
        if "guards" in pair.fields or "messagePattern" in pair.fields:
            changes.append(pair)
        elif pair.moved:
            changes.append(Moved(a, b))
        else:
            unchanged += 1
    changes.sort(key=Change.sort_key)
    return DatasetDiff(old=old, new=new, changes=tuple(changes), unchanged=unchanged)


def diff_datasets(old: Dataset, new: Dataset) -> DatasetDiff:
    """Diff two `pipeline.dataset.Dataset`s (as `load_dataset` returns them)."""
    return diff_error_sets(ErrorSet.from_dataset(old), ErrorSet.from_dataset(new))


# --- reading OLD and NEW -------------------------------------------------------------


def _dataset_dir(path: Path, role: str) -> Path:
    found = datasets_at(path)
    if len(found) == 1:
        return found[0]
    if not found:
        raise DiffInputError(f"{role} {path}: no dataset (manifest.json) under this folder")
    names = ", ".join(str(item.relative_to(path)) for item in found[:3])
    more = ", ..." if len(found) > 3 else ""
    raise DiffInputError(
        f"{role} {path}: {len(found)} datasets under this folder ({names}{more}); name one"
    )


def load_dataset_side(path: Path, role: str) -> ErrorSet:
    root = _dataset_dir(path, role)
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
    from pipeline.identity import identities

    sites = list(sites)
    entries, urls = [], {}
    for (rid, slug), site in zip(identities(sites), sites, strict=True):
        entries.append(IndexEntry.of(site, rid, slug))
        urls[rid] = site.githubUrl
    return tuple(sorted(entries, key=_position)), urls


def stand_in_repo(source: str) -> str:
    """An `owner/name` for a tree without a GitHub origin, the same for every revision of one
    repository or release, so that the record ids of two sides stay comparable."""
    if source.startswith("pypi:"):
        name = source.removeprefix("pypi:").split("==", 1)[0]
        return "pypi/" + (_SAFE_NAME.sub("-", name) or "release")
    folder = Path(source).resolve().name.removesuffix(".git")  # a bare `vllm.git` is `vllm`
    return "local/" + (_SAFE_NAME.sub("-", folder) or "repo")


def extract_side(spec: str, role: str, *, cache_dir: Path | None, console: Console | None,
                 fallback_repo: str | None = None) -> ErrorSet:
    """Extract (no explanations) the sites of `SOURCE@REV` or `pypi:NAME==VERSION`; a tree
    without a GitHub origin is named `fallback_repo`, else a stand-in."""
    source, rev = split_source(spec, role)
    from extractors.facts import Rules
    from pipeline.cache import Store, default_store_path
    from pipeline.extract import extract_snapshot
    from pipeline.sources import SourceError, open_source, resolve_cache_dir

    cache_dir = resolve_cache_dir(cache_dir)
    try:
        snapshot = open_source(source, rev, repo_name=None, cache_dir=cache_dir,
                               console=console)
    except SourceError as exc:
        raise DiffInputError(f"{role} {spec}: {exc}") from None
    # a tree with no GitHub origin: its commit is not on GitHub, so its sites get no links
    on_github = snapshot.repo is not None
    if snapshot.repo is None:
        snapshot.repo = fallback_repo or stand_in_repo(source)
    with Store(default_store_path(cache_dir)) as store:
        extraction = extract_snapshot(snapshot, Rules(), store=store, console=console)
    entries, urls = entries_of_sites(extraction.sites)
    if not on_github:
        urls = {}
    return ErrorSet(label=spec, repo=snapshot.repo, sha=snapshot.sha, entries=entries,
                    urls=urls)


def _is_dataset_spec(spec: str) -> bool:
    return not spec.startswith("pypi:") and Path(spec).is_dir()


def run_diff(old_spec: str, new_spec: str, *, fmt: str = "text", console: Console | None = None,
             color: bool = False, cache_dir: Path | None = None) -> tuple[str, DatasetDiff]:
    """What `vmine diff` does: read both sides, diff, render; under GitHub Actions also
    annotate each change (moves aside) and append the Markdown report to the job summary."""
    from pipeline.diff_render import render, render_markdown

    sides: dict[str, ErrorSet] = {}
    # Datasets first: an extracted side whose repository has no GitHub origin (a release,
    # a local path) takes the other side's repo, so that record ids are comparable.
    for role, spec in (("OLD", old_spec), ("NEW", new_spec)):
        if _is_dataset_spec(spec):
            sides[role] = load_dataset_side(Path(spec), role)
    for role, spec in (("OLD", old_spec), ("NEW", new_spec)):
        if role not in sides:
            other = next((side.repo for side in sides.values() if side.repo), None)
            sides[role] = extract_side(spec, role, cache_dir=cache_dir, console=console,
                                       fallback_repo=other)
    diff = diff_error_sets(sides["OLD"], sides["NEW"])
    if console is not None and console.mode == "github":
        for change in diff.changes:
            if change.kind != "moved":
                console.annotate(change.annotation())
        console.step_summary(render_markdown(diff))
    return render(diff, fmt, color=color), diff
