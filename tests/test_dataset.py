"""Reading a dataset back is strict: every problem names the file and what is wrong."""

from __future__ import annotations

import json

import pytest

from pipeline.dataset.reader import (
    DatasetError,
    datasets_under,
    find_datasets,
    load_dataset,
    one_dataset,
)
from pipeline.keys import record_id
from tests.site_factory import REPO, SHA
from tests.test_writer import SITES, VERSION, write


@pytest.fixture
def root(tmp_path):
    return write(tmp_path, SITES)


def first_record(root):
    return root / "records" / f"{record_id(SITES[0])}.json"


def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_loads_what_the_writer_wrote(root):
    dataset = load_dataset(root)
    assert dataset.datasetVersion == VERSION
    assert (dataset.repo, dataset.sha) == (REPO, SHA)
    assert [entry.filePath for entry in dataset.entries] == ["engine/a.py", "engine/config.py"]
    assert sorted(dataset.records) == sorted(record_id(s) for s in SITES)
    assert dataset.manifest.counts.records == 2


def test_find_datasets_lists_every_manifest_directory(tmp_path):
    write(tmp_path, SITES)
    other = tmp_path / "nested"
    write(other, SITES)
    assert find_datasets(tmp_path) == [
        tmp_path / "acme" / "engine" / SHA,
        other / "acme" / "engine" / SHA,
    ]


def test_a_dataset_argument_names_itself_or_the_datasets_under_it(tmp_path):
    write(tmp_path / "a", SITES)
    write(tmp_path / "b", SITES)
    inside = tmp_path / "a" / "acme" / "engine" / SHA
    assert datasets_under(inside) == [inside]
    assert one_dataset(tmp_path / "a") == inside
    assert datasets_under(tmp_path) == [inside, tmp_path / "b" / "acme" / "engine" / SHA]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing", "{path}: no such directory"),
        ("file", "{path}: not a directory"),
        (
            "empty",
            "{path}: no dataset (manifest.json) under this folder; write one with `vmine run`",
        ),
        (
            "",
            "{path}: 4 datasets under this folder (a/acme/engine/{sha}, b/acme/engine/{sha}, "
            "c/acme/engine/{sha}, ...); name one",
        ),
    ],
)
def test_a_dataset_argument_that_names_no_single_dataset_is_one_line(tmp_path, name, message):
    for folder in "abcd":
        write(tmp_path / folder, SITES)
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("")
    path = tmp_path / name
    with pytest.raises(DatasetError) as raised:
        one_dataset(path)
    assert str(raised.value) == message.format(path=path, sha=SHA)


def test_unknown_record_field_is_an_error(root):
    edit_json(first_record(root), lambda d: d["record"].update(extra=1))
    with pytest.raises(DatasetError, match=r"\.json: record\.extra: Extra inputs"):
        load_dataset(root)


def test_missing_record_field_is_an_error_even_with_a_default(root):
    edit_json(first_record(root), lambda d: d["record"].pop("errorCode"))
    with pytest.raises(DatasetError, match=r"\.json: record\.errorCode: field required"):
        load_dataset(root)


def test_missing_nested_manifest_field_is_an_error(root):
    edit_json(root / "manifest.json", lambda d: d["counts"]["byStatus"].pop("partial"))
    with pytest.raises(DatasetError, match=r"manifest\.json: counts\.byStatus\.partial"):
        load_dataset(root)


def test_bad_index_line_names_its_number(root):
    index = root / "index.jsonl"
    lines = index.read_text().splitlines()
    lines[1] = lines[1].replace('"guards"', '"guard"')
    index.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"index\.jsonl:2: "):
        load_dataset(root)


def test_record_without_index_line_is_an_error(root):
    index = root / "index.jsonl"
    index.write_text(index.read_text().splitlines()[0] + "\n")
    with pytest.raises(DatasetError, match=r"is not indexed"):
        load_dataset(root)


def test_record_file_named_for_another_id_is_an_error(root):
    first_record(root).rename(root / "records" / "0000000000000000.json")
    with pytest.raises(DatasetError, match=r"0000000000000000\.json: holds record"):
        load_dataset(root)


def test_dataset_version_must_match_the_manifest(root):
    edit_json(first_record(root), lambda d: d.update(datasetVersion="2020-01-01T00:00:00.000Z"))
    with pytest.raises(DatasetError, match=r"differs from the manifest's"):
        load_dataset(root)


def test_missing_manifest_is_an_error(root):
    (root / "manifest.json").unlink()
    with pytest.raises(DatasetError, match=r"manifest\.json: missing"):
        load_dataset(root)


def test_missing_directory_is_an_error(tmp_path):
    with pytest.raises(DatasetError, match=r"nothing: not a directory"):
        load_dataset(tmp_path / "nothing")


def test_not_json_is_an_error(root):
    first_record(root).write_text("{")
    with pytest.raises(DatasetError, match=r"\.json: .*(Invalid JSON|EOF)"):
        load_dataset(root)


def test_a_dataset_of_an_older_vmine_without_the_llm_fields_still_loads(root):
    """explainedBy/replacedFields (index) and the fallback counts and lists (manifest) came
    later: a dataset written before them loads, with their defaults."""

    def old_manifest(data):
        for name in ("fallbackSites", "replacedFields"):
            data.pop(name, None)
        for name in ("explainedBy", "fallbacks", "replacedFields"):
            data["counts"].pop(name, None)
        for name in ("responseFormat", "repairs", "droppedKeys", "fixedValues"):
            data["llm"].pop(name, None)

    edit_json(root / "manifest.json", old_manifest)
    index = root / "index.jsonl"
    lines = [json.loads(line) for line in index.read_text().splitlines()]
    for line in lines:
        line.pop("explainedBy", None)
        line.pop("replacedFields", None)
    index.write_text("".join(json.dumps(line) + "\n" for line in lines))
    dataset = load_dataset(root)
    assert [(e.explainedBy, e.replacedFields) for e in dataset.entries] == [(None, [])] * 2
    assert (dataset.manifest.counts.fallbacks, dataset.manifest.fallbackSites) == (0, [])
