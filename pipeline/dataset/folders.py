"""Where datasets are and how their files are read, without the models: what `vmine explain`
needs before it shows a record (pydantic is imported only then)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pipeline.dataset.layout import MANIFEST, manifest_path


class DatasetError(Exception):
    """A dataset directory that is not a valid vmine dataset (one line for the user)."""


class NotRegularFile(OSError):
    """A dataset path that is a FIFO, a device, a socket or a folder: never read."""


def read_regular(path: Path) -> str:
    """The UTF-8 text of a dataset file that must be a regular file. It is opened without
    blocking and checked before any read, so a FIFO or a device in its place (a dataset
    someone else wrote) cannot stall the command; NotRegularFile says so."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(handle, "rb") as source:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise NotRegularFile("not a regular file")
        os.set_blocking(handle, True)
        return source.read().decode("utf-8")


def find_datasets(root: Path) -> list[Path]:
    """Every directory under `root` (itself included) that holds a `manifest.json`, sorted."""
    root = Path(root)
    return sorted(path.parent for path in root.rglob(MANIFEST) if path.is_file())


def datasets_under(path: Path) -> list[Path]:
    """What a DATASET argument names: the dataset `path` itself (it holds manifest.json), else
    every dataset under it, sorted. DatasetError when there is none; every command that reads
    datasets says so in these words."""
    path = Path(path)
    if not path.is_dir():
        raise DatasetError(f"{path}: {'not a directory' if path.exists() else 'no such directory'}")
    if manifest_path(path).is_file():
        return [path]
    found = find_datasets(path)
    if not found:
        raise DatasetError(
            f"{path}: no dataset (manifest.json) under this folder; write one with `vmine run`"
        )
    return found


def one_dataset(path: Path) -> Path:
    """The one dataset a DATASET argument names; DatasetError when it names none or several
    (the first few are listed, to pick from)."""
    found = datasets_under(path)
    if len(found) > 1:
        names = ", ".join(str(item.relative_to(path)) for item in found[:3])
        more = ", ..." if len(found) > 3 else ""
        raise DatasetError(
            f"{path}: {len(found)} datasets under this folder ({names}{more}); name one"
        )
    return found[0]
