"""A record's literal fragments against a pasted message, without a regex engine: the full match
of a messagePattern (fragments in order with `str.find`, linear, no backtracking), the in-order
containment of a message's pieces, and the whitespace-free form both are matched in (a terminal
or an issue template may wrap a message anywhere, even inside a word)."""

from __future__ import annotations

from dataclasses import dataclass

from extractors import patterns

# Pieces shorter than this (", ", ": ") occur anywhere: they cover nothing worth counting.
MIN_PIECE = 3


@dataclass(frozen=True)
class Folded:
    """A text with its whitespace removed, and where each kept character was in the text."""

    text: str
    positions: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> Folded:
        kept = [(at, char) for at, char in enumerate(text) if not char.isspace()]
        return cls("".join(char for _, char in kept), tuple(at for at, _ in kept))

    def span(self, original: str, start: int, end: int) -> str:
        """The text of the original that folded[start:end] came from (inner whitespace kept)."""
        if start >= end:
            return ""
        return original[self.positions[start] : self.positions[end - 1] + 1]


def fold(text: str) -> str:
    """`text` without any whitespace: the form every comparison here is made in."""
    return "".join(text.split())


# Where each hole lies in a (folded) text that `fragments[0] (.*?) ... fragments[-1]` fully
# matches: the linear search extractors.patterns also reads an errorMessage's holes with.
fullmatch = patterns.fragment_spans


def covered_in_order(pieces: tuple[str, ...], text: str) -> int:
    """How many characters of `text` the pieces cover when each is found after the one
    before it (leftmost; a piece that is absent is passed over, as an optional part of a
    message built from parts is)."""
    at = covered = 0
    for piece in pieces:
        if len(piece) < MIN_PIECE:
            continue
        found = text.find(piece, at)
        if found >= 0:
            covered += len(piece)
            at = found + len(piece)
    return covered


def holds_in_order(fragments: tuple[str, ...], text: str) -> bool:
    """Whether every fragment is in `text`, each after the one before it (leftmost): the
    text a record always writes, whichever of its optional pieces appear."""
    at = 0
    for fragment in fragments:
        found = text.find(fragment, at)
        if found < 0:
            return False
        at = found + len(fragment)
    return True
