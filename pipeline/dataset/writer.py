"""Records -> `OUT/{owner}/{name}/{sha40}/`: one envelope per record, the index, the manifest;
every file replaced atomically, so a reader never sees a partial file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from pipeline.dataset.layout import dataset_dir, index_path, manifest_path, record_path, records_dir
from pipeline.dataset.manifest import Manifest
from pipeline.dataset.models import Envelope, ErrorRecord, IndexEntry

_TEMP_PREFIX = ".vmine-tmp-"


def write_atomic(path: Path, text: str) -> bool:
    """Replace `path` with `text` via a temp file in the same directory and `os.replace`, so
    a reader never sees half a file; returns False (and writes nothing) when the file already
    holds exactly these bytes. Missing parent directories are created."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return True


def write_dataset(
    out_dir: Path,
    repo: str,
    sha: str,
    records: Iterable[ErrorRecord],
    index_entries: Iterable[IndexEntry],
    manifest: Manifest | dict,
) -> Path:
    """Write (or bring up to date) one dataset and return its directory. Records of sites
    that are gone since the last write into the same directory are removed."""
    manifest = manifest if isinstance(manifest, Manifest) else Manifest.model_validate(manifest)
    if (manifest.repo, manifest.analyzedSha) != (repo, sha):
        raise ValueError(
            f"manifest is for {manifest.repo}@{manifest.analyzedSha}, not {repo}@{sha}"
        )
    root = dataset_dir(out_dir, repo, sha)
    folder = records_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    # Leftovers of a run killed mid-write are never valid files; drop them.
    for stale in list(root.glob(_TEMP_PREFIX + "*")) + list(folder.glob(_TEMP_PREFIX + "*")):
        stale.unlink(missing_ok=True)

    written: set[str] = set()
    for record in records:
        envelope = Envelope(record=record, datasetVersion=manifest.datasetVersion)
        path = record_path(root, record.id)
        write_atomic(path, envelope.model_dump_json())
        written.add(path.name)

    entries = sorted(index_entries, key=lambda entry: (entry.filePath, entry.lineNumber))
    write_atomic(index_path(root), "".join(entry.model_dump_json() + "\n" for entry in entries))
    write_atomic(manifest_path(root), manifest.to_json())

    for path in folder.glob("*.json"):
        if path.name not in written:
            path.unlink()
    return root
