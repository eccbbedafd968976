"""The cyclic garbage collector paused around work that makes many objects and no cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector off while a file is parsed (or, in the parent, while the stage
    is imported and a snapshot extracted), then one collection of what it left. Parse
    trees, facts, sites and the objects of an import are big in number, short-lived or
    lasting, and free of cycles: the collector walked them again at every allocation
    threshold, for nothing (a third of a worker's time; 0.4 s of the parent's on vLLM; a
    sixth of an import's)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.collect(0)
