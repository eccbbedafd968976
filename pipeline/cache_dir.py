"""Where vmine keeps what it may reuse between runs: git mirrors, releases, store.sqlite, and
the datasets `vmine explain --release` mines (`datasets/`), under one directory."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """`$VMINE_CACHE_DIR`, else the user cache directory of this OS (`~/.cache/vmine`)."""
    env = os.environ.get("VMINE_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("vmine"))


def resolve_cache_dir(cache_dir: Path | None) -> Path:
    """The `--cache-dir` given, else the default one."""
    return Path(cache_dir) if cache_dir is not None else default_cache_dir()


def datasets_dir(cache_dir: Path) -> Path:
    """Where the datasets of releases mined for `explain` are kept (OWNER/NAME/SHA/ under it)."""
    return Path(cache_dir) / "datasets"
