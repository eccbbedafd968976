"""The settings facts one round of the join reads, and what it asked for without having it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from extractors.settings_model import FileSettings


class Loaded:
    """The facts of the files loaded so far, read through `facts_of` (None: not loaded).
    Every path asked for and not loaded is noted in `asked`: the round's request."""

    def __init__(self, facts_of: Callable[[str], FileSettings | None]) -> None:
        self._facts_of = facts_of
        self.asked: set[str] = set()
        self.misses = 0  # facts asked for and not loaded, so far (each time counts)
        self._noting: set[str] | None = None

    def get(self, path: str) -> FileSettings | None:
        """A file's facts; None when it is not loaded, which is noted."""
        found = self._facts_of(path)
        if found is None:
            self.asked.add(path)
            self.misses += 1
            if self._noting is not None:
                self._noting.add(path)
        return found

    def peek(self, path: str) -> FileSettings | None:
        """A file's facts if loaded, without asking for them (an index of what is loaded)."""
        return self._facts_of(path)

    @contextmanager
    def noting(self) -> Iterator[set[str]]:
        """The paths asked for and not loaded inside the block."""
        noted: set[str] = set()
        self._noting = noted
        try:
            yield noted
        finally:
            self._noting = None
