"""The per-file settings facts of a snapshot, for the join (`pipeline/mine/settings.py`): made
by the extract workers beside the sites (from the parse they made anyway), kept in the store
under the blob SHA, and otherwise parsed here when the join asks for a file.

Every `.py` file gets an outline (class names, whether it builds a parser and whether its
flags name their fields: a byte scan), so the join knows the tree's class names without
parsing; full facts are made for the files with sites, the parsers whose flags name their
fields, and the files the join reaches from them.
"""

from __future__ import annotations

from collections.abc import Callable

from extractors.facts import RaiseSite
from extractors.settings import outline_of
from extractors.settings_model import FileSettings, Outline
from pipeline.dataset.models import Setting
from pipeline.keys import settings_token
from pipeline.mine.settings import ModuleIndex, resolve_rounds
from pipeline.mine.workers import settings_facts_of
from pipeline.source import Snapshot
from pipeline.store import Store


class SnapshotSettings:
    """Outlines and settings facts of one snapshot's `.py` files, by blob."""

    def __init__(self, snapshot: Snapshot, store: Store | None) -> None:
        # makes the facts of many files at once (the extract workers, in parallel); None:
        # one after the other, here
        self.analyse_many: Callable[[list[bytes]], list[FileSettings]] | None = None
        self._snapshot = snapshot
        self._store = store
        self._token = settings_token()
        self.blob_of = {f.path: f.blob for f in snapshot.files if f.path.endswith(".py")}
        self._blobs = set(self.blob_of.values())
        stored = store.get_settings(self._blobs, self._token) if store is not None else {}
        self._outlines: dict[str, Outline] = {blob: row[0] for blob, row in stored.items()}
        self._facts: dict[str, FileSettings] = {
            blob: row[1] for blob, row in stored.items() if row[1] is not None
        }
        self._new: dict[str, tuple[Outline, FileSettings | None]] = {}

    def saw(self, blob: str, data: bytes) -> None:
        """A blob read for the site pass: its outline, if not known yet."""
        if blob not in self._outlines and blob in self._blobs:
            self._outlines[blob] = outline_of(data)
            self._new[blob] = (self._outlines[blob], self._facts.get(blob))

    def wants_parse(self, blob: str) -> bool:
        """Whether a blob read for the site pass needs its facts made though it has no site
        to find: a parser whose flags name their fields, not analysed before (the join
        starts from those)."""
        outline = self._outlines.get(blob)
        return outline is not None and outline.links and blob not in self._facts

    def add(self, blob: str, facts: FileSettings) -> None:
        """Facts the site pass made for a blob."""
        self._facts[blob] = facts
        outline = self._outlines.get(blob)
        if outline is not None:
            self._new[blob] = (outline, facts)

    def settings_of(self, sites: list[tuple[str, RaiseSite]]) -> list[list[Setting]]:
        """The settings of each site (given with its tree path), loading what the join needs;
        what was made is stored."""
        self._complete_outlines()
        outlines = {
            path: self._outlines[blob]
            for path, blob in self.blob_of.items()
            if blob in self._outlines
        }
        self._load({path for path, _ in sites} | {p for p, o in outlines.items() if o.links})
        results = resolve_rounds(
            sites,
            outlines,
            ModuleIndex(self.blob_of),
            lambda path: self._facts.get(self.blob_of.get(path, "")),
            self._load,
        )
        self.save()
        return results

    def save(self) -> None:
        if self._store is not None and self._new:
            self._store.put_settings(
                ((blob, outline, facts) for blob, (outline, facts) in sorted(self._new.items())),
                self._token,
            )
        self._new.clear()

    def _complete_outlines(self) -> None:
        missing = sorted(self._blobs - set(self._outlines))
        parsers = []
        for blob, data in self._snapshot.read_blobs(missing):
            self.saw(blob, data)
            if self._outlines[blob].links and blob not in self._facts:
                parsers.append((blob, data))  # the join starts from these: spare a second read
        self._analyse_read(parsers)

    def _load(self, paths: set[str]) -> None:
        blobs = {self.blob_of[p] for p in paths if p in self.blob_of} - set(self._facts)
        self._analyse_read(list(self._snapshot.read_blobs(sorted(blobs))))

    def _analyse_read(self, read: list[tuple[str, bytes]]) -> None:
        """The facts of blobs read: made in the workers when there are some, else here."""
        if self.analyse_many is not None and read:
            for (blob, _), facts in zip(read, self.analyse_many([d for _, d in read]), strict=True):
                self.add(blob, facts)
            return
        for blob, data in read:
            self._analyse(blob, data)

    def _analyse(self, blob: str, data: bytes) -> None:
        self.add(blob, settings_facts_of(data))
