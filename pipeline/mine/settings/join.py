"""The settings join: each site's settings over the facts of its tree, as a pure stage.

The join reads facts through `facts_of(path)` and changes nothing: a round resolves the
sites over the facts loaded so far and returns its request, the files it asked for and did
not have. The caller loads them (the worker pool makes them) and runs the next round, until
a round asks for nothing new. A round resolves again only the sites that asked for
something, all of them when the flags or the carriers did or a parser came in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from extractors.facts import RaiseSite
from extractors.settings_model import FileSettings, Outline
from pipeline.dataset.models import Setting
from pipeline.mine.settings.chains import RESOLVERS, ChainWalk, Resolver, SiteReads
from pipeline.mine.settings.flags import FlagIndex
from pipeline.mine.settings.loaded import Loaded
from pipeline.mine.settings.modules import ModuleIndex
from pipeline.mine.settings.names import Symbol, TreeNames

MAX_ROUNDS = 16  # rounds of loading what the join asked for


class SettingsJoin:
    """The settings of `sites` (each given with its file's tree path), round by round;
    `resolvers` are the kinds of chain roots understood, in the order they are asked."""

    def __init__(
        self,
        sites: list[tuple[str, RaiseSite]],
        outlines: Mapping[str, Outline],
        modules: ModuleIndex,
        facts_of: Callable[[str], FileSettings | None],
        resolvers: tuple[Resolver, ...] = RESOLVERS,
    ) -> None:
        self.resolvers = resolvers
        self.outlines = outlines
        self.modules = modules
        self.facts_of = facts_of
        self.results: list[list[Setting]] = [[] for _ in sites]
        self._reads = [SiteReads.of(path, site, facts_of(path)) for path, site in sites]
        self._pending = list(range(len(sites)))
        self._requested: set[str] = set()
        self._rounds = 0
        # what one round found without missing a file holds in the next ones too
        self._lookups: dict[tuple[str, str], Symbol | None] = {}
        self._class_files: dict[str, list[str]] = {}
        for path, outline in outlines.items():
            for name in outline.classes:
                self._class_files.setdefault(name, []).append(path)

    def round(self) -> frozenset[str]:
        """Resolve the pending sites; the files to load before the next round (none: done)."""
        if self._rounds >= MAX_ROUNDS or not self._pending:
            return frozenset()
        self._rounds += 1
        loaded = Loaded(self.facts_of)
        names = TreeNames(loaded, self.outlines, self.modules, self._lookups, self._class_files)
        flags = FlagIndex(names, loaded, self.outlines)
        shared = set(loaded.asked)  # what the flags and carriers missed concerns every site
        asked, again = set(shared), []
        walk = ChainWalk(names, flags, loaded, self.resolvers)
        for index in self._pending:
            with loaded.noting() as missed:
                self.results[index] = walk.settings_of(self._reads[index])
            if missed:
                again.append(index)
                asked |= missed
        wanted = {p for p in asked if p in self.outlines} - self._requested
        if not wanted:
            self._pending = []
            return frozenset()
        self._requested |= wanted
        # a parser loaded changes the flags every site may have
        new_flags = any(self.outlines[p].parser for p in wanted)
        self._pending = list(range(len(self._reads))) if shared & wanted or new_flags else again
        return frozenset(wanted)


def resolve_rounds(
    sites: list[tuple[str, RaiseSite]],
    outlines: Mapping[str, Outline],
    modules: ModuleIndex,
    facts_of: Callable[[str], FileSettings | None],
    load: Callable[[frozenset[str]], None],
) -> list[list[Setting]]:
    """Each site's settings, `load` fulfilling each round's request for facts."""
    join = SettingsJoin(sites, outlines, modules, facts_of)
    while wanted := join.round():
        load(wanted)
    return join.results
