"""A source opened while the extract stage is imported: opening waits on git or on the
network, importing is work (pydantic's models and libcst: 0.5 s of CPU), so side by side
the analysis starts sooner. Nothing heavy is imported here (`pipeline.source` loads no
models either): the `extract` command opens its source through this module, then uses
the stage."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

from pipeline.console import Console
from pipeline.mine.collector import paused_gc
from pipeline.source import Snapshot, open_source

# the extract stage, and the extractor (libcst), which the worker pool forks with
STAGE_MODULES = ("pipeline.mine.extract", "extractors.sites")


def open_importing(
    source: str,
    rev: str | None,
    *,
    cache_dir: Path,
    repo_name: str | None = None,
    tag: str | None = None,
    path_prefix: str | None = None,
    console: Console | None = None,
    modules: Sequence[str] = STAGE_MODULES,
) -> Snapshot:
    """`open_source`, with `modules` imported meanwhile by another thread, the cyclic
    collector paused."""
    with paused_gc():
        warm = threading.Thread(target=_import, args=(modules,), daemon=True)
        warm.start()
        try:
            return open_source(
                source,
                rev,
                repo_name=repo_name,
                cache_dir=cache_dir,
                console=console,
                tag=tag,
                path_prefix=path_prefix,
            )
        finally:
            warm.join()


def _import(modules: Sequence[str]) -> None:
    try:
        for name in modules:
            import_module(name)
    except ImportError:
        pass  # raised again where the module is used, and reported there
