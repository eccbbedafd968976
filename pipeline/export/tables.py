"""The rows of an exported dataset: one table of records and one of index entries, each row
the JSON of its file plus the release it comes from, so several releases make one dataset.

| table     | a row                                     | added columns                        |
|-----------|-------------------------------------------|--------------------------------------|
| `records` | a record as `records/{id}.json` holds it  | `release`, `datasetVersion`          |
| `index`   | an `index.jsonl` line (settings nested)   | `release`, `verification` (or null)  |

`verification` is the line of `verification.jsonl` (beside `index.jsonl`, written by `vmine
verify`) for the record, without its `id`; null when the dataset has none for it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.dataset.jsonl import jsonl_lines
from pipeline.dataset.layout import verification_path
from pipeline.dataset.reader import Dataset, read_regular

_RELEASE = re.compile(r"^pypi:(?P<name>[^=]+)==(?P<version>.+)$")


class ExportError(Exception):
    """Datasets that cannot be exported as asked; one line for the user."""


@dataclass(frozen=True)
class Release:
    """One dataset of the export, and how its rows name it."""

    name: str
    dataset: Dataset
    verification: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> outcome

    @property
    def repo(self) -> str:
        return self.dataset.repo


def release_name(dataset: Dataset) -> str:
    """`0.28.0` for a dataset mined from `pypi:vllm==0.28.0`, else the commit's first 12 hex."""
    found = _RELEASE.match(dataset.manifest.source)
    return found["version"] if found else dataset.sha[:12]


def read_verification(root: Path, ids: set[str]) -> dict[str, dict[str, Any]]:
    """`verification.jsonl` of the dataset in `root` by record id ({} when there is none);
    ExportError on a line that is not an object with a known `id`."""
    path = verification_path(root)
    try:
        text = read_regular(path)  # a FIFO planted in a dataset cannot block the export
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise ExportError(f"{path}: cannot read: {error}") from None
    found: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(jsonl_lines(text), start=1):
        where = f"{path}:{number}"
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            raise ExportError(f"{where}: not JSON") from None
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            raise ExportError(f"{where}: not an object with an id")
        record_id = value.pop("id")
        if record_id not in ids:
            raise ExportError(f"{where}: {record_id} is not a record of this dataset")
        if record_id in found:
            raise ExportError(f"{where}: {record_id} appears twice")
        found[record_id] = value
    return found


def releases_of(datasets: Sequence[Dataset]) -> list[Release]:
    """Each dataset as a release of the export, in the order given; ExportError when two
    name the same release of one repository."""
    releases = [
        Release(
            release_name(dataset),
            dataset,
            read_verification(dataset.root, set(dataset.records)),
        )
        for dataset in datasets
    ]
    seen: dict[tuple[str, str], Path] = {}
    for release in releases:
        key = (release.repo, release.name)
        if key in seen:
            raise ExportError(
                f"{release.dataset.root}: release {release.name} of {release.repo} is also "
                f"{seen[key]}; export each release once"
            )
        seen[key] = release.dataset.root
    return releases


def record_rows(releases: Sequence[Release]) -> list[dict[str, Any]]:
    rows = []
    for release in releases:
        version = release.dataset.datasetVersion
        for entry in release.dataset.entries:  # index order: by file, then line
            record = release.dataset.records[entry.id]
            row = record.model_dump(mode="json", by_alias=True)
            rows.append({**row, "datasetVersion": version, "release": release.name})
    return rows


def index_rows(releases: Sequence[Release]) -> list[dict[str, Any]]:
    rows = []
    for release in releases:
        for entry in release.dataset.entries:
            row = entry.model_dump(mode="json", by_alias=True)
            verification = release.verification.get(entry.id)
            rows.append({**row, "release": release.name, "verification": verification})
    return rows
