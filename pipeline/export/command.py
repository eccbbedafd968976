"""What `vmine export --format hf` does: read the datasets, build the tables, and write the
Parquet files and the dataset card into DIR, each file replaced atomically. Other files in
DIR (a clone of the Hub repository: its .git, .gitattributes) are left alone; a README.md
that vmine did not write is never replaced."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pipeline.console import Console
from pipeline.dataset.reader import Dataset, DatasetError, datasets_under, load_dataset
from pipeline.export.card import MARKER, dataset_card
from pipeline.export.parquet import index_schema, parquet_bytes, record_schema, require_pyarrow
from pipeline.export.tables import ExportError, index_rows, record_rows, releases_of
from pipeline.output import write_atomic

# Where each table goes, as the Hub names shards: a later export replaces the same files.
FILES = {
    "records": "data/records-00000-of-00001.parquet",
    "index": "data/index-00000-of-00001.parquet",
}
CARD = "README.md"
_PYPI = re.compile(r"^pypi:[^=]+==(?P<version>.+)$")


def _order(dataset: Dataset) -> tuple:
    """Releases of one repository oldest first: by version for `pypi:` datasets."""
    found = _PYPI.match(dataset.manifest.source)
    numbers = tuple(int(n) for n in re.findall(r"\d+", found["version"])) if found else ()
    return (dataset.repo, numbers)


def read_datasets(paths: Sequence[Path]) -> list[Dataset]:
    """Every dataset the DATASET arguments name (a dataset, or a folder of them), each once,
    ordered by repository and release."""
    if not paths:
        raise ExportError("name at least one DATASET (a dataset folder, or a folder of them)")
    roots: dict[Path, None] = {}
    for path in paths:
        try:
            for root in datasets_under(path):
                roots.setdefault(root.resolve(), None)
        except DatasetError as error:
            raise ExportError(str(error)) from None
    datasets = []
    for root in roots:
        try:
            datasets.append(load_dataset(root))
        except DatasetError as error:
            raise ExportError(str(error)) from None
    return sorted(datasets, key=_order)  # stable: the order given within a repository


def _check_card(out_dir: Path) -> None:
    card = out_dir / CARD
    try:
        text = card.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise ExportError(f"{card}: a folder, not a dataset card") from None
    if MARKER not in text:
        raise ExportError(
            f"{card}: not written by vmine export; move it away or pass another -o DIR"
        )


def export_hf(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    license_id: str = "unknown",
    name: str | None = None,
    console: Console | None = None,
) -> list[Path]:
    """Write the Hugging Face dataset of `paths` into `out_dir`; the files written."""
    require_pyarrow()
    datasets = read_datasets(paths)
    releases = releases_of(datasets)
    _check_card(out_dir)
    records, index = record_rows(releases), index_rows(releases)
    tables = {
        "records": parquet_bytes(records, record_schema()),
        "index": parquet_bytes(index, index_schema(index)),
    }
    written = []
    for table, relative in FILES.items():
        path = out_dir / relative
        write_atomic(path, tables[table])
        written.append(path)
    card = out_dir / CARD
    write_atomic(card, dataset_card(releases, FILES, license_id, name).encode("utf-8"))
    written.append(card)
    if console is not None:
        console.line(
            f"exported {len(records)} records of {len(releases)} "
            f"release{'s' if len(releases) != 1 else ''} to {out_dir}"
        )
    return written
