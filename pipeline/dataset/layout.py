"""Where a dataset's files live: `OUT/{owner}/{name}/{sha40}/` with `records/{id}.json`,
`index.jsonl`, `manifest.json` and, once verified, `verification.jsonl`. The writer, the reader and `explain` all go through here."""

from __future__ import annotations

from pathlib import Path

MANIFEST = "manifest.json"
INDEX = "index.jsonl"
RECORDS = "records"
# Written beside index.jsonl by `vmine verify`: one JSON object per record, with its `id`.
VERIFICATION = "verification.jsonl"


def dataset_dir(out_dir: Path, repo: str, sha: str) -> Path:
    owner, name = repo.split("/", 1)
    return Path(out_dir) / owner / name / sha


def manifest_path(root: Path) -> Path:
    return Path(root) / MANIFEST


def index_path(root: Path) -> Path:
    return Path(root) / INDEX


def verification_path(root: Path) -> Path:
    return Path(root) / VERIFICATION


def records_dir(root: Path) -> Path:
    return Path(root) / RECORDS


def record_path(root: Path, record_id: str) -> Path:
    return records_dir(root) / f"{record_id}.json"
