"""`vmine explain --release NAME==VERSION`: the release's dataset, mined once on first use
(`pypi:` source, offline explainer) into <cache>/datasets/, where later lookups find it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cache_dir import datasets_dir
from pipeline.dataset.folders import find_datasets, read_regular
from pipeline.dataset.layout import manifest_path
from pipeline.lookup.where import parse_release

if TYPE_CHECKING:
    from pipeline.console import Console


class MiningFailed(Exception):
    """The release could not be mined (one line; the CLI exits 2)."""


def cached_release(cache_dir: Path, name: str, version: str) -> Path | None:
    """The dataset of NAME==VERSION already under <cache>/datasets/, or None."""
    for root in find_datasets(datasets_dir(cache_dir)) if datasets_dir(cache_dir).is_dir() else []:
        try:
            source = json.loads(read_regular(manifest_path(root))).get("source")
            if isinstance(source, str) and parse_release(source) == (name, version):
                return root
        except (OSError, ValueError, AttributeError, RecursionError):
            continue  # not a dataset of ours: index.py says so when it is searched
    return None


def mine_release(cache_dir: Path, name: str, version: str, console: Console) -> Path:
    """Mine NAME==VERSION offline into <cache>/datasets/ and return its dataset folder."""
    from pipeline.mine.run import RunOptions, run_dataset

    out = datasets_dir(cache_dir)
    console.line(
        f"mining {name}=={version} once (offline explainer) into {out}; later lookups reuse it"
    )
    options = RunOptions(
        source=f"pypi:{name}=={version}", llm="offline", out_dir=out, cache_dir=cache_dir
    )
    outcome = run_dataset(options, console)
    if outcome.dataset_dir is None:
        raise MiningFailed(f"{name}=={version}: mining wrote no dataset (exit {outcome.exit_code})")
    return outcome.dataset_dir
