"""Reads a written dataset back, strictly: any unknown, missing or inconsistent field is an error
that names the file and the problem."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from pipeline.dataset.folders import (  # noqa: F401 (re-exported: what readers import)
    DatasetError,
    NotRegularFile,
    datasets_under,
    find_datasets,
    one_dataset,
    read_regular,
)
from pipeline.dataset.jsonl import jsonl_lines
from pipeline.dataset.layout import index_path, manifest_path, records_dir
from pipeline.dataset.manifest import Manifest
from pipeline.dataset.models import (
    Envelope,
    ErrorRecord,
    IndexEntry,
)
from pipeline.dataset.verification import load_verification  # noqa: F401 (re-exported)

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Dataset:
    """A dataset as written: its manifest, index entries and records (by id)."""

    root: Path
    manifest: Manifest
    entries: list[IndexEntry]
    records: dict[str, ErrorRecord]

    @property
    def repo(self) -> str:
        return self.manifest.repo

    @property
    def sha(self) -> str:
        return self.manifest.analyzedSha

    @property
    def datasetVersion(self) -> str:
        return self.manifest.datasetVersion


def validation_problem(error: ValidationError) -> str:
    """A ValidationError of a dataset file as one line: the first field and what is wrong
    with it (never the file's contents, which pydantic's own text quotes)."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    message = " ".join(first["msg"].split())
    return f"{where}: {message}{more}"


def _missing(model: type[BaseModel], data: object, where: str) -> str | None:
    """The first field the model has but `data` lacks (defaults do not excuse it: a dataset
    on disk always spells out every field, except the fields added since datasets were first
    written, a model's `added_fields`), searching nested models and lists of them; a field
    is looked for under its alias (a setting's `class`)."""
    if not isinstance(data, dict):
        return None
    added = getattr(model, "added_fields", frozenset())
    for name, info in model.model_fields.items():
        if info.exclude:
            continue
        key = info.alias or name
        if key not in data:
            if name in added:
                continue
            return f"{where}{key}: field required"
        inner = info.annotation
        args = get_args(inner)
        if get_origin(inner) is list and args and isinstance(args[0], type):
            inner_model, values = args[0], data[key]
        else:
            inner_model, values = inner, [data[key]]
        if isinstance(inner_model, type) and issubclass(inner_model, BaseModel):
            for position, value in enumerate(values if isinstance(values, list) else []):
                label = f"{where}{key}." if inner_model is inner else f"{where}{key}.{position}."
                problem = _missing(inner_model, value, label)
                if problem:
                    return problem
    return None


def _parse(model: type[M], text: str, where: str) -> M:
    try:
        parsed = model.model_validate_json(text, strict=True)  # no "12" for 12
    except ValidationError as exc:
        raise DatasetError(f"{where}: {validation_problem(exc)}") from None
    problem = _missing(model, json.loads(text), "")
    if problem:
        raise DatasetError(f"{where}: {problem}")
    return parsed


def _read(path: Path) -> str:
    try:
        return read_regular(path)
    except FileNotFoundError:
        raise DatasetError(f"{path}: missing") from None
    except NotRegularFile as exc:
        raise DatasetError(f"{path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None


# A writer swaps a whole new dataset in (pipeline/dataset/writer.py): a read that straddles a
# swap is made again, this many times at most.
_READS = 3


def load_dataset(path: Path) -> Dataset:
    """The dataset in `path` (the directory holding `manifest.json`). A dataset swapped in
    while it was being read is read again, so the result is never a mix of two."""
    root = Path(path)
    for attempt in range(_READS):
        try:
            before = root.stat().st_ino
        except OSError:  # not there, or between the two renames of a swap
            if attempt + 1 < _READS and root.parent.is_dir():
                time.sleep(0.01)
                continue
            raise DatasetError(f"{root}: not a directory") from None
        try:
            dataset = _load(root)
        except DatasetError:
            if attempt + 1 < _READS and _swapped(root, before):
                continue
            raise
        if not _swapped(root, before):
            return dataset
    return dataset


def _swapped(root: Path, inode: int) -> bool:
    try:
        return root.stat().st_ino != inode
    except OSError:
        return True


def _load(root: Path) -> Dataset:
    if not root.is_dir():
        raise DatasetError(f"{root}: not a directory")
    manifest_file = manifest_path(root)
    manifest = _parse(Manifest, _read(manifest_file), str(manifest_file))

    index_file = index_path(root)
    entries: list[IndexEntry] = []
    for number, line in enumerate(jsonl_lines(_read(index_file)), start=1):
        entries.append(_parse(IndexEntry, line, f"{index_file}:{number}"))

    records: dict[str, ErrorRecord] = {}
    for record_path in sorted(records_dir(root).glob("*.json")):
        envelope = _parse(Envelope, _read(record_path), str(record_path))
        record = envelope.record
        if record_path.stem != record.id:
            raise DatasetError(f"{record_path}: holds record {record.id}")
        if (record.repo, record.analyzedSha) != (manifest.repo, manifest.analyzedSha):
            raise DatasetError(
                f"{record_path}: record is for {record.repo}@{record.analyzedSha}, "
                f"manifest for {manifest.repo}@{manifest.analyzedSha}"
            )
        if envelope.datasetVersion != manifest.datasetVersion:
            raise DatasetError(
                f"{record_path}: datasetVersion {envelope.datasetVersion} differs from "
                f"the manifest's {manifest.datasetVersion}"
            )
        records[record.id] = record

    indexed = [entry.id for entry in entries]
    if len(set(indexed)) != len(indexed):
        raise DatasetError(f"{index_file}: an id appears more than once")
    if set(indexed) != set(records):
        missing = sorted(set(indexed) - set(records))
        extra = sorted(set(records) - set(indexed))
        what = f"no record file for {missing[0]}" if missing else f"{extra[0]} is not indexed"
        raise DatasetError(f"{index_file}: {what}")
    if manifest.counts.records != len(records):
        raise DatasetError(
            f"{manifest_file}: counts.records is {manifest.counts.records}, "
            f"found {len(records)} records"
        )
    return Dataset(root=root, manifest=manifest, entries=entries, records=records)
