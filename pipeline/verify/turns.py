"""Verify's threads take turns at their Python work and wait side by side.

The threads of `vmine verify` spend their time waiting on a worker process (or a model); the
Python work between the waits parses and rewrites code with `ast`, which CPython 3.11 before
3.11.8 cannot do in two threads at once (`SystemError: AST constructor recursion depth
mismatch`). So a thread holds its turn while it works and gives it up only while it waits.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Turns:
    """`with turns:` is a thread's turn at the Python work; `with turns.waiting():` gives it up
    for a wait (and does nothing in a thread that holds no turn, such as the survey's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holding = threading.local()

    def __enter__(self) -> Turns:
        self._lock.acquire()
        self._holding.on = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._holding.on = False
        self._lock.release()

    @contextmanager
    def waiting(self) -> Iterator[None]:
        if not getattr(self._holding, "on", False):
            yield
            return
        self.__exit__()
        try:
            yield
        finally:
            self.__enter__()
