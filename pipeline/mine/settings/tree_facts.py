"""The per-file settings facts of a snapshot, for the join (`join.py`): made by the extract
workers beside the sites (from the parse they made anyway), kept in the store under the blob
SHA, and otherwise made when the join asks for a file, by whatever `FactsMaker` the caller
hands in (the extract's worker pool, which is still up).

Every `.py` file gets an outline (class names, whether it builds a parser and whether its
flags name their fields: a byte scan), so the join knows the tree's class names without
parsing; full facts are made for the files with sites, the parsers (a flag that no idiom
links is found by its field's name), and the files the join reaches from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from extractors.facts import RaiseSite, Rules
from extractors.settings import outline_of
from extractors.settings_model import FileSettings, Outline
from pipeline.dataset.models import Setting
from pipeline.keys import settings_token
from pipeline.mine.settings.join import SettingsJoin
from pipeline.mine.settings.modules import ModuleIndex
from pipeline.mine.workers import settings_facts_of
from pipeline.source import Snapshot
from pipeline.store import Store


class FactsMaker(Protocol):
    """Makes the settings facts of blobs read from the tree."""

    def make_facts(self, read: Sequence[tuple[str, bytes]]) -> dict[str, FileSettings]:
        """(blob, bytes) in, blob -> its facts out (empty facts for a file they fail on)."""
        ...


class MadeHere:
    """Facts made in this process, one file after the other, under `rules`."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules

    def make_facts(self, read: Sequence[tuple[str, bytes]]) -> dict[str, FileSettings]:
        return {blob: settings_facts_of(data, self.rules) for blob, data in read}


class TreeFacts:
    """Outlines and settings facts of one snapshot's `.py` files, by blob, made under the
    configured `rules` (what makes a configuration class)."""

    def __init__(self, snapshot: Snapshot, store: Store | None, rules: Rules) -> None:
        self._snapshot = snapshot
        self._store = store
        self._rules = rules
        self._token = settings_token(rules)
        self.blob_of = {f.path: f.blob for f in snapshot.files if f.path.endswith(".py")}
        self._blobs = set(self.blob_of.values())
        stored = store.get_settings(self._blobs, self._token) if store is not None else {}
        self._outlines: dict[str, Outline] = {blob: row[0] for blob, row in stored.items()}
        self._facts: dict[str, FileSettings] = {
            blob: row[1] for blob, row in stored.items() if row[1] is not None
        }
        self._new: dict[str, tuple[Outline, FileSettings | None]] = {}

    def note(self, blob: str, data: bytes) -> bool:
        """A blob read for the site pass: its outline, if not known yet. True when its facts
        are wanted though it may have no site to find: a parser not analysed before (the
        join starts from every parser)."""
        if blob not in self._outlines and blob in self._blobs:
            self._outlines[blob] = outline_of(data)
            self._new[blob] = (self._outlines[blob], self._facts.get(blob))
        outline = self._outlines.get(blob)
        return outline is not None and outline.parser and blob not in self._facts

    def settings_of(
        self,
        sites: list[tuple[str, RaiseSite]],
        made: Mapping[str, FileSettings] | None = None,
        maker: FactsMaker | None = None,
    ) -> list[list[Setting]]:
        """The settings of each site (given with its tree path): `made` are the facts the
        site pass made, by blob; what else the join asks for is made by `maker` (here, in
        this process, without one). What was made is stored."""
        maker = maker or MadeHere(self._rules)
        for blob, facts in (made or {}).items():
            self._add(blob, facts)
        self._complete_outlines(maker)
        outlines = {
            path: self._outlines[blob]
            for path, blob in self.blob_of.items()
            if blob in self._outlines
        }
        # every parser: a flag no idiom links is found by its field's name (lmdeploy's)
        self._load(
            {path for path, _ in sites} | {p for p, o in outlines.items() if o.parser}, maker
        )
        join = SettingsJoin(
            sites,
            outlines,
            ModuleIndex(self.blob_of),
            lambda p: self._facts.get(self.blob_of.get(p, "")),
        )
        while wanted := join.round():
            self._load(wanted, maker)
        self._save()
        return join.results

    def _add(self, blob: str, facts: FileSettings) -> None:
        self._facts[blob] = facts
        outline = self._outlines.get(blob)
        if outline is not None:
            self._new[blob] = (outline, facts)

    def _save(self) -> None:
        if self._store is not None and self._new:
            self._store.put_settings(
                ((blob, outline, facts) for blob, (outline, facts) in sorted(self._new.items())),
                self._token,
            )
        self._new.clear()

    def _complete_outlines(self, maker: FactsMaker) -> None:
        """The outline of every blob not read for the site pass; the parsers among them
        whose facts the join starts from are made from the same read."""
        missing = sorted(self._blobs - set(self._outlines))
        parsers = []
        for blob, data in self._snapshot.read_blobs(missing):
            if self.note(blob, data):
                parsers.append((blob, data))  # spare a second read
        self._make(parsers, maker)

    def _load(self, paths: Iterable[str], maker: FactsMaker) -> None:
        blobs = {self.blob_of[p] for p in paths if p in self.blob_of} - set(self._facts)
        self._make(list(self._snapshot.read_blobs(sorted(blobs))), maker)

    def _make(self, read: list[tuple[str, bytes]], maker: FactsMaker) -> None:
        if read:
            for blob, facts in maker.make_facts(read).items():
                self._add(blob, facts)
