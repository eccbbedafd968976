"""The dataset layout on disk, atomic replacement, and reruns that rewrite the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.dataset.manifest import Counts, LLMUsage, Manifest, Tool
from pipeline.dataset.models import Envelope
from pipeline.dataset.writer import write_dataset
from pipeline.keys import record_id
from tests.site_factory import REPO, SHA, make_entry, make_record, make_site

VERSION = "2026-01-02T03:04:05.678Z"
ANALYZED = "2025-12-31T23:59:59.000Z"


def manifest(records: int, version: str = VERSION) -> Manifest:
    return Manifest(
        repo=REPO,
        analyzedSha=SHA,
        datasetVersion=version,
        source="local",
        counts=Counts(records=records),
        llm=LLMUsage(provider="offline", model="offline", promptVersion="offline-1"),
        tool=Tool(version="0.1.0", extractorVersion="1"),
    )


def write(out: Path, sites, version: str = VERSION) -> Path:
    records = [make_record(s, record_id(s), f"slug-{i}", ANALYZED) for i, s in enumerate(sites)]
    entries = [make_entry(s, record_id(s), f"slug-{i}") for i, s in enumerate(sites)]
    return write_dataset(out, REPO, SHA, records, entries, manifest(len(records), version))


SITES = [
    make_site("max_batch must be positive", line=30),
    make_site("unknown mode", file_path="engine/a.py", line=7, qualname="check_mode"),
]


def test_layout_is_owner_name_sha(tmp_path):
    root = write(tmp_path, SITES)
    assert root == tmp_path / "acme" / "engine" / SHA
    ids = sorted(record_id(s) for s in SITES)
    assert sorted(p.name for p in (root / "records").iterdir()) == [f"{i}.json" for i in ids]
    assert sorted(p.name for p in root.iterdir()) == ["index.jsonl", "manifest.json", "records"]


def test_record_file_is_the_envelope_json_exactly(tmp_path):
    root = write(tmp_path, SITES)
    site = SITES[0]
    text = (root / "records" / f"{record_id(site)}.json").read_text()
    envelope = Envelope(
        record=make_record(site, record_id(site), "slug-0", ANALYZED), datasetVersion=VERSION
    )
    assert text == envelope.model_dump_json()


def test_index_is_sorted_by_file_then_line(tmp_path):
    root = write(tmp_path, SITES)
    lines = (root / "index.jsonl").read_text().splitlines()
    assert [json.loads(line)["filePath"] for line in lines] == ["engine/a.py", "engine/config.py"]


def test_manifest_carries_the_dataset_version(tmp_path):
    root = write(tmp_path, SITES)
    data = json.loads((root / "manifest.json").read_text())
    assert (data["repo"], data["analyzedSha"], data["datasetVersion"]) == (REPO, SHA, VERSION)
    assert data["counts"]["records"] == 2


def test_no_temporary_files_are_left(tmp_path):
    root = write(tmp_path, SITES)
    leftovers = [p for p in root.rglob("*") if p.name.startswith(".")]
    assert leftovers == []


def test_a_crashed_run_s_temporary_files_are_removed(tmp_path):
    root = write(tmp_path, SITES)
    (root / "records" / ".vmine-tmp-abc").write_text("{half")
    write(tmp_path, SITES)
    assert not (root / "records" / ".vmine-tmp-abc").exists()


def test_records_of_vanished_sites_are_removed(tmp_path):
    root = write(tmp_path, SITES)
    write(tmp_path, SITES[:1])
    assert [p.name for p in (root / "records").iterdir()] == [f"{record_id(SITES[0])}.json"]


def test_rerun_rewrites_identical_bytes_apart_from_dataset_version(tmp_path):
    root = write(tmp_path, SITES, version=VERSION)
    before = {p.name: p.read_text() for p in (root / "records").iterdir()}
    write(tmp_path, SITES, version="2026-02-02T00:00:00.000Z")
    after = {p.name: p.read_text() for p in (root / "records").iterdir()}
    assert {
        name: text.replace("2026-02-02T00:00:00.000Z", VERSION) for name, text in after.items()
    } == before
    assert all('"datasetVersion":"2026-02-02T00:00:00.000Z"' in text for text in after.values())


def test_pinned_dataset_version_leaves_files_untouched(tmp_path):
    root = write(tmp_path, SITES)
    path = root / "records" / f"{record_id(SITES[0])}.json"
    inode = path.stat().st_ino
    write(tmp_path, SITES)
    assert path.stat().st_ino == inode
