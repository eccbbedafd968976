"""Records -> `OUT/{owner}/{name}/{sha40}/`: one envelope per record, the index, the manifest.

A dataset is written whole into a temp folder beside the old one and swapped in by renames at
the end, so a reader finds the old dataset or the new one, never a mix, and a run stopped at
any point (even by `kill -9`) leaves the old one as it was. Files that did not change are
hard links to the old ones (same bytes, same inode). A lock keeps two runs from writing the
same dataset at once; the temp folders of killed runs are cleaned up by the next one."""

from __future__ import annotations

import errno
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.dataset.jsonl import json_text
from pipeline.dataset.layout import (
    dataset_dir,
    index_path,
    manifest_path,
    record_path,
    records_dir,
    verification_path,
)
from pipeline.dataset.manifest import Manifest
from pipeline.dataset.models import Envelope, ErrorRecord, IndexEntry
from pipeline.dataset.reader import read_regular
from pipeline.dataset.verification import Verification
from pipeline.output import DIR_MODE, TEMP_PREFIX

_OLD_PREFIX = ".vmine-old-"


class DatasetBusy(Exception):
    """Another run is writing the same dataset (one line for the user)."""


# --- the lock -------------------------------------------------------------------------------

_held: dict[Path, int] = {}  # folders this process holds locked, with how many times
_held_guard = threading.Lock()


@contextmanager
def dataset_lock(root: Path) -> Iterator[None]:
    """Hold the folder of the dataset in `root` (`OUT/owner/name/`, which outlives the swaps)
    for writing, or DatasetBusy when another process holds it. No lock file is left behind:
    the folder itself is locked, and the kernel releases it when its holder dies, however it
    dies. Re-entrant within a process (a run holds it from extraction to the write)."""
    folder = Path(root).parent.absolute()
    with _held_guard:
        if folder in _held:
            _held[folder] += 1
            acquired = None
        else:
            acquired = _acquire(folder, Path(root))
            _held[folder] = 1
    try:
        yield
    finally:
        with _held_guard:
            _held[folder] -= 1
            if not _held[folder]:
                del _held[folder]
                if acquired is not None:
                    os.close(acquired)


def _acquire(folder: Path, root: Path) -> int | None:
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # no flock (Windows): go without
        return None
    handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(handle)
        if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise DatasetBusy(
                f"{root}: another vmine run is writing a dataset in {folder}; "
                "wait for it to finish or pass another -o"
            ) from None
        return None  # a file system without flock: go without
    return handle


# --- writing ----------------------------------------------------------------------------------


def write_dataset(
    out_dir: Path,
    repo: str,
    sha: str,
    records: Iterable[ErrorRecord],
    index_entries: Iterable[IndexEntry],
    manifest: Manifest | dict,
) -> Path:
    """Write one dataset (replacing the one in the same place, if any) and return its
    directory."""
    manifest = manifest if isinstance(manifest, Manifest) else Manifest.model_validate(manifest)
    if (manifest.repo, manifest.analyzedSha) != (repo, sha):
        raise ValueError(
            f"manifest is for {manifest.repo}@{manifest.analyzedSha}, not {repo}@{sha}"
        )
    root = dataset_dir(out_dir, repo, sha)
    with dataset_lock(root):
        clean_strays(root)
        temp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{root.name}-", dir=root.parent))
        try:
            os.chmod(temp, DIR_MODE)  # mkdtemp makes it 0700
            changed = _fill(temp, root, records, index_entries, manifest)
            if changed:
                _swap_in(temp, root)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
    return root


def write_verification(
    root: Path, verifications: Iterable[Verification], manifest: Manifest
) -> Path:
    """Add `verification.jsonl` (in the index's order) and the manifest that counts it to the
    dataset in `root`, as a whole new dataset swapped in: its other files are hard links to
    the old ones (copies where links cannot be made)."""
    root = Path(root)
    with dataset_lock(root):
        clean_strays(root)
        temp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{root.name}-", dir=root.parent))
        try:
            os.chmod(temp, DIR_MODE)
            records_dir(temp).mkdir(mode=DIR_MODE)
            os.chmod(records_dir(temp), DIR_MODE)
            for old in sorted(records_dir(root).glob("*.json")):
                _place(records_dir(temp) / old.name, old, read_regular(old))
            _place(index_path(temp), index_path(root), read_regular(index_path(root)))
            lines = "".join(json_text(verification) + "\n" for verification in verifications)
            _place(verification_path(temp), verification_path(root), lines)
            _place(manifest_path(temp), manifest_path(root), manifest.to_json())
            _swap_in(temp, root)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
    return root


def _fill(
    temp: Path,
    old: Path,
    records: Iterable[ErrorRecord],
    index_entries: Iterable[IndexEntry],
    manifest: Manifest,
) -> bool:
    """Write the dataset into `temp`; whether it differs from the one in `old`."""
    records_dir(temp).mkdir(mode=DIR_MODE)
    os.chmod(records_dir(temp), DIR_MODE)
    changed = False
    written: set[str] = set()
    for record in records:
        envelope = Envelope(record=record, datasetVersion=manifest.datasetVersion)
        path = record_path(temp, record.id)
        changed |= _place(path, record_path(old, record.id), json_text(envelope))
        written.add(path.name)
    entries = sorted(index_entries, key=lambda entry: (entry.filePath, entry.lineNumber))
    index = "".join(json_text(entry) + "\n" for entry in entries)
    changed |= _place(index_path(temp), index_path(old), index)
    changed |= _place(manifest_path(temp), manifest_path(old), manifest.to_json())
    try:
        kept = {path.name for path in records_dir(old).iterdir()}
    except FileNotFoundError:
        kept = set()
    return changed or kept != written


def _place(path: Path, old: Path, text: str) -> bool:
    """Write `text` to `path`, as a hard link to `old` when that holds the same bytes;
    whether the file is new or changed."""
    data = text.encode("utf-8")
    try:
        if old.stat().st_size == len(data) and old.read_bytes() == data:
            os.link(old, path)
            return False
    except OSError:  # no old file, or no hard links here: write it
        pass
    with open(path, "wb") as out:
        out.write(data)
    return True


def _swap_in(temp: Path, root: Path) -> None:
    """Put the dataset in `temp` at `root`; the old one (if any) ends up in `temp`."""
    if _exchange(temp, root):
        return
    if not root.exists():
        os.rename(temp, root)
        return
    old = root.parent / f"{_OLD_PREFIX}{root.name}-{temp.name.rsplit('-', 1)[-1]}"
    os.rename(root, old)  # killed between the renames: clean_strays puts it back
    os.rename(temp, root)
    os.rename(old, temp)


def _exchange(new: Path, root: Path) -> bool:
    """Swap two directories in one step (Linux's renameat2 RENAME_EXCHANGE): a reader never
    finds `root` missing. False where that is not available or `root` does not exist."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(new), at_fdcwd, os.fsencode(root), rename_exchange)
    return done == 0


def clean_strays(root: Path) -> None:
    """Remove what killed runs left beside the dataset in `root`: temp folders (never a
    whole dataset) and an old dataset moved aside, which goes back if `root` is missing. The
    caller holds the lock."""
    parent = root.parent
    if not parent.is_dir():
        return
    for stray in sorted(parent.glob(f"{_OLD_PREFIX}{root.name}-*")):
        if not root.exists():
            os.rename(stray, root)
        else:
            shutil.rmtree(stray, ignore_errors=True)
    for stray in parent.glob(f"{TEMP_PREFIX}{root.name}-*"):
        shutil.rmtree(stray, ignore_errors=True)
    # per-file temp files of an older vmine, which wrote into the dataset itself
    for stray in [*root.glob(TEMP_PREFIX + "*"), *records_dir(root).glob(TEMP_PREFIX + "*")]:
        stray.unlink(missing_ok=True)


def is_complete(manifest: Manifest) -> bool:
    """Whether a dataset has a record for every site by the explainer it ran (none failed,
    none pending, none an offline fallback for a site the LLM gave no usable answer for)."""
    counts = manifest.counts
    return counts.pending == 0 and counts.failedSites == 0 and counts.fallbacks == 0


def has_complete_dataset(root: Path) -> bool:
    """Whether `root` holds a dataset whose manifest says it is complete."""
    try:
        manifest = Manifest.model_validate_json(read_regular(manifest_path(root)))
    except (OSError, ValueError):
        return False
    return is_complete(manifest)
