"""A pasted text -> the records that raise its message, ranked: patterns that fully match first,
else the most similar messages, as approximate."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from extractors.patterns import literal_text, pattern_fragments, placeholders
from pipeline.dataset.models import IndexEntry
from pipeline.lookup.index import IndexedDataset, IndexedPattern
from pipeline.lookup.tracebacks import Candidate, candidates

_WORD = re.compile(r"\w+")
APPROXIMATE_LIMIT = 5
# Below this similarity a record is not worth showing, even as an approximation.
APPROXIMATE_FLOOR = 0.25


@dataclass(frozen=True)
class Match:
    """A record that may explain the message, and how well."""

    pattern: IndexedPattern
    candidate: Candidate
    score: float  # pattern matches: share of the message that is literal text; else similarity
    kind: str  # 'exact' | 'pattern' | 'approximate'

    @property
    def entry(self) -> IndexEntry:
        return self.pattern.entry

    @property
    def dataset(self) -> IndexedDataset:
        return self.pattern.dataset

    @property
    def class_agrees(self) -> bool:
        return self.candidate.errorClass in (None, self.entry.errorClass)

    def values(self) -> list[tuple[str, str]]:
        """Each run-time part of the record's message (`{tp}`) with the text it has in the
        pasted message (`2`), for a pattern match; [] when they cannot be paired."""
        if self.kind != "pattern":
            return []
        raw = self.pattern.raw
        fragments = pattern_fragments(raw["messagePattern"])
        found = re.fullmatch(raw["messagePattern"], self.candidate.message, re.DOTALL)
        if fragments is None or found is None:
            return []
        holes = placeholders(raw["errorMessage"], raw["messagePattern"])
        if holes is None or len(holes) != len(found.groups()):
            return []
        return list(zip(holes, found.groups(), strict=True))

    def sort_key(self) -> tuple:
        return (
            self.kind != "exact",
            -round(self.score, 6),
            not self.class_agrees,
            self.dataset.repo,
            self.entry.filePath,
            self.entry.lineNumber,
            str(self.dataset.root),
        )


@dataclass
class Lookup:
    """What `explain` found for one pasted text."""

    candidates: list[Candidate]
    matches: list[Match]

    @property
    def approximate(self) -> bool:
        return not self.matches or self.matches[0].kind == "approximate"


def lookup(text: str, datasets: list[IndexedDataset]) -> Lookup:
    """Rank the records of `datasets` against every message found in `text`: records whose
    pattern fully matches first (exact literal matches, then by the share of the message
    their literal text covers); when none does, the most similar messages, as approximate."""
    found = candidates(text)
    best: dict[tuple[Path, str], Match] = {}
    for candidate in found:
        message = candidate.message
        for pattern in (p for dataset in datasets for p in dataset.patterns):
            if pattern.literal_chars == 0 or not pattern.fullmatch(message):
                continue  # a pattern without literal text matches anything
            exact = not pattern.has_holes
            score = 1.0 if exact else min(1.0, pattern.literal_chars / max(len(message), 1))
            _keep(best, Match(pattern, candidate, score, "exact" if exact else "pattern"))
    if not best:
        for match in _closest(found, datasets):
            _keep(best, match)
    return Lookup(found, sorted(best.values(), key=Match.sort_key))


def _keep(best: dict[tuple[Path, str], Match], match: Match) -> None:
    key = (match.dataset.root, match.entry.id)
    if key not in best or match.sort_key() < best[key].sort_key():
        best[key] = match


def _closest(found: list[Candidate], datasets: list[IndexedDataset]) -> list[Match]:
    """The records whose message is most similar to a candidate: a cheap word-overlap score
    picks a shortlist, difflib's ratio on the characters refines it."""
    shortlist: list[tuple[float, IndexedPattern, Candidate]] = []
    for candidate in found[:3]:
        words = set(_WORD.findall(candidate.message.lower()))
        if not words:
            continue
        for dataset in datasets:
            for pattern in dataset.patterns:
                theirs = pattern.words
                if theirs:
                    overlap = len(words & theirs) / len(words | theirs)
                    shortlist.append((overlap, pattern, candidate))
    shortlist.sort(key=lambda item: -item[0])
    matches = []
    for overlap, pattern, candidate in shortlist[:40]:
        ratio = difflib.SequenceMatcher(
            None, candidate.message.lower(), literal_text(pattern.raw["errorMessage"]).lower()
        ).ratio()
        score = (overlap + ratio) / 2
        if score >= APPROXIMATE_FLOOR:
            matches.append(Match(pattern, candidate, score, "approximate"))
    matches.sort(key=Match.sort_key)
    return matches[:APPROXIMATE_LIMIT]
