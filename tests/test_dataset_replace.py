"""A dataset is replaced only by a complete new one (pipeline/dataset/writer.py): written beside
the old one and swapped in, so a reader never sees a mix, not even after SIGINT, SIGTERM or
`kill -9` in the middle of the write; two runs on one output do not interleave; an incomplete
run keeps a complete dataset."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.dataset.writer as writer
from pipeline.cli import main
from pipeline.dataset.reader import load_dataset
from pipeline.dataset.writer import DatasetBusy, dataset_lock, write_dataset
from pipeline.keys import record_id
from tests.conftest import make_git_repo
from tests.site_factory import REPO, SHA, make_entry, make_record, make_site
from tests.test_writer import ANALYZED, manifest

ROOT = Path(__file__).resolve().parent.parent
OLD, NEW = "2026-01-01T00:00:00.000Z", "2026-02-02T00:00:00.000Z"


def sites(count: int, word: str = "limit"):
    return [
        make_site(f"{word}_{number} must be positive", line=number + 20, qualname=f"check_{number}")
        for number in range(count)
    ]


def write(out: Path, some, version: str) -> Path:
    records = [make_record(s, record_id(s), f"slug-{i}", ANALYZED) for i, s in enumerate(some)]
    entries = [make_entry(s, record_id(s), f"slug-{i}") for i, s in enumerate(some)]
    return write_dataset(out, REPO, SHA, records, entries, manifest(len(records), version))


def leftovers(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob(".vmine-*"))


def test_the_old_dataset_moves_aside_only_when_the_new_one_is_whole(tmp_path):
    root = write(tmp_path, sites(3), OLD)
    assert load_dataset(root).datasetVersion == OLD
    write(tmp_path, sites(2, "size"), NEW)
    dataset = load_dataset(root)
    assert (dataset.datasetVersion, len(dataset.records)) == (NEW, 2)
    assert leftovers(tmp_path) == []


def test_without_an_atomic_exchange_two_renames_do_it(tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "_exchange", lambda new, root: False)
    root = write(tmp_path, sites(3), OLD)
    write(tmp_path, sites(2, "size"), NEW)
    assert (load_dataset(root).datasetVersion, len(load_dataset(root).records)) == (NEW, 2)
    assert leftovers(tmp_path) == []


def test_what_killed_runs_left_is_cleaned_up_and_a_dataset_moved_aside_comes_back(tmp_path):
    root = write(tmp_path, sites(2), OLD)
    half = root.parent / f".vmine-tmp-{SHA}-abc"
    (half / "records").mkdir(parents=True)
    (half / "records" / "x.json").write_text("{half")
    # killed between the two renames: the old dataset is aside and nothing is in its place
    root.rename(root.parent / f".vmine-old-{SHA}-def")
    writer.clean_strays(root)
    assert load_dataset(root).datasetVersion == OLD
    assert leftovers(tmp_path) == []


def test_new_files_get_the_usual_mode(tmp_path):
    root = write(tmp_path, sites(1), OLD)
    umask = os.umask(0o022)
    os.umask(umask)
    modes = {oct(p.stat().st_mode & 0o777) for p in [root, *root.rglob("*")] if p.is_file()}
    assert modes == {oct(0o666 & ~umask)}
    assert oct(root.stat().st_mode & 0o777) == oct(0o777 & ~umask)


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tests.test_dataset_replace import NEW, sites, write

    print("writing", flush=True)
    write(Path(sys.argv[1]), sites(600, "size"), NEW)
    print("written", flush=True)
""")


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_rewrite_stopped_by_a_signal_leaves_the_old_or_the_new_dataset(tmp_path, signum):
    root = write(tmp_path, sites(300), OLD)
    seen = set()
    for delay in (0.02, 0.3):
        process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout.readline() == "writing\n"
        time.sleep(delay)
        process.send_signal(signum)
        process.communicate(timeout=30)
        dataset = load_dataset(root)  # whole: one datasetVersion, every record indexed
        seen.add(dataset.datasetVersion)
        assert len(dataset.records) == (300 if dataset.datasetVersion == OLD else 600)
        writer.clean_strays(root)  # what the next run does first
        assert leftovers(tmp_path) == [], delay
        if dataset.datasetVersion == NEW:
            write(tmp_path, sites(300), OLD)
    assert OLD in seen  # at least one signal came in the middle of a write


def test_a_read_that_straddles_a_swap_is_made_again(tmp_path, monkeypatch):
    import pipeline.dataset.reader as reader

    root = write(tmp_path, sites(3), OLD)
    read, swaps = reader._read, []

    def read_during_a_swap(path):
        if path.parent.name == "records" and not swaps:
            swaps.append(write(tmp_path, sites(2, "size"), NEW))  # another run swaps it in
        return read(path)

    monkeypatch.setattr(reader, "_read", read_during_a_swap)
    dataset = load_dataset(root)
    assert swaps  # the swap came after the manifest and the index were read
    assert (dataset.datasetVersion, len(dataset.records)) == (NEW, 2)


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pipeline.dataset.writer import dataset_lock

    with dataset_lock(Path(sys.argv[1])):
        print("locked", flush=True)
        time.sleep(60)
""")


@pytest.mark.slow
def test_a_second_run_on_the_same_output_says_so_in_one_line(tmp_path):
    repo = make_git_repo(
        tmp_path / "engine",
        {
            "engine/config.py": "def check(n):\n    if n < 0:\n        raise ValueError('negative')\n",
        },
    )
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    root = tmp_path / "out" / "acme" / "engine" / sha
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(DatasetBusy):
            with dataset_lock(root):
                pass
        result = CliRunner().invoke(
            main,
            [
                "run",
                str(repo),
                "--repo-name",
                "acme/engine",
                "-o",
                str(tmp_path / "out"),
                "--cache-dir",
                str(tmp_path / "cache"),
                "--llm",
                "offline",
                "--ci",
            ],
        )
        assert result.exit_code == 2, result.output
        assert result.output.splitlines()[-1] == (
            f"Error: {root}: another vmine run is writing a dataset in {root.parent}; wait for "
            "it to finish or pass another -o"
        )
    finally:
        holder.kill()
        holder.wait()
    # the kernel dropped the lock with its holder
    with dataset_lock(root):
        pass


def test_the_lock_is_re_entrant_within_a_process(tmp_path):
    root = tmp_path / "acme" / "engine" / SHA
    with dataset_lock(root), dataset_lock(root):
        write(tmp_path, sites(1), OLD)
    assert list(root.parent.iterdir()) == [root]  # no lock file left


def test_a_failed_rerun_keeps_the_complete_dataset(tmp_path, fake_llm):
    repo = make_git_repo(
        tmp_path / "engine",
        {
            "engine/config.py": (
                "def check(n, m, k):\n"
                "    if n < 0:\n        raise ValueError('n is negative')\n"
                "    if m < 0:\n        raise ValueError('m is negative')\n"
                "    if k < 0:\n        raise ValueError('k is negative')\n"
            ),
        },
    )

    def vmine_run(*extra):
        return CliRunner().invoke(
            main,
            [
                "run",
                str(repo),
                "--repo-name",
                "acme/engine",
                "-o",
                str(tmp_path / "out"),
                "--cache-dir",
                str(tmp_path / "cache"),
                "--dataset-version",
                OLD,
                "--ci",
                *extra,
            ],
        )

    done = vmine_run("--llm", "offline")
    assert done.exit_code == 0, done.output
    [root] = (tmp_path / "out" / "acme" / "engine").iterdir()
    before = {p.name: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    # another model, at a wrong URL: every request fails, the explainer is given up on (the
    # same as a server answering 401)
    failed = vmine_run(
        "--llm",
        "openai",
        "--model",
        "other",
        "--base-url",
        fake_llm.base_url + "/nowhere",
        "--dataset-version",
        NEW,
    )
    assert failed.exit_code == 2, failed.output
    # every site got the offline fallback, which does not replace a complete dataset
    assert f"records: 3 not written: kept the complete dataset in {root} " in failed.output
    assert "3 sites not explained: the complete dataset stays" in failed.output
    assert {p.name: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
