"""Where `vmine explain` looks (./output, the cache's datasets/, the folders given) and which
release it answers for (the one installed here, or `--release`, mined on first use): the case
tables of pipeline/lookup/where.py, then the command."""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.lookup.index import IndexedDataset
from pipeline.lookup.where import parse_release, releases_to_search, where_to_look
from tests.datasets import write_fixture_dataset
from tests.release_fixtures import LIMITS, make_wheel

FAST_DECODE = "--use-fast-decode requires --decode-backend flash"

# --- which folders ------------------------------------------------------------------------

FOLDER_CASES = [
    ("folders given: those only", ["mine"], True, True, ["mine"]),
    ("./output and the cache", [], True, True, ["output", "cache/datasets"]),
    ("./output alone", [], True, False, ["output"]),
    ("the cache alone", [], False, True, ["cache/datasets"]),
    ("neither: ./output, which says there is none", [], False, False, ["output"]),
]


@pytest.mark.parametrize(
    ("given", "output", "cached", "searched"),
    [c[1:] for c in FOLDER_CASES],
    ids=[c[0] for c in FOLDER_CASES],
)
def test_where_to_look(
    tmp_path: Path, monkeypatch, given: list[str], output: bool, cached: bool, searched: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    if output:
        Path("output").mkdir()
    if cached:
        Path("cache/datasets").mkdir(parents=True)
    found = where_to_look([Path(g) for g in given], Path("output"), Path("cache/datasets"))
    assert found == [Path(s) for s in searched]


# --- which releases -----------------------------------------------------------------------


def _dataset(source: str) -> IndexedDataset:
    return IndexedDataset(Path("/d") / source, "acme/serve", "0" * 40, source)


OLD, NEW, GIT = _dataset("pypi:serve==0.1.0"), _dataset("pypi:serve==0.2.0"), _dataset("git")
OTHER = _dataset("pypi:other==1.0")
RELEASE_CASES = [
    ("folders given: every dataset", {"serve": "0.1.0"}, True, [OLD, NEW, GIT, OTHER], []),
    (
        "the installed release, and other targets' datasets",
        {"serve": "0.1.0"},
        False,
        [OLD, GIT, OTHER],
        ["Searched serve==0.1.0, the release installed here."],
    ),
    (
        "installed, but no dataset of it",
        {"serve": "0.3.0"},
        False,
        [OLD, NEW, GIT, OTHER],
        [
            "serve==0.3.0 is installed here, but no dataset of it was found: searched 2 "
            "other releases; `vmine explain --release serve==0.3.0` mines it."
        ],
    ),
    ("not installed: every dataset", {}, False, [OLD, NEW, GIT, OTHER], []),
]


@pytest.mark.parametrize(
    ("installed", "given", "searched", "notes"),
    [c[1:] for c in RELEASE_CASES],
    ids=[c[0] for c in RELEASE_CASES],
)
def test_releases_to_search(
    installed: dict[str, str], given: bool, searched: list, notes: list[str]
) -> None:
    chosen = releases_to_search([OLD, NEW, GIT, OTHER], installed.get, given)
    assert (chosen.datasets, chosen.notes) == (searched, notes)


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [("vllm==0.28.0", ("vllm", "0.28.0")), ("pypi:Foo_Bar==1.0.post1", ("foo-bar", "1.0.post1"))],
)
def test_release_spec(spec: str, parsed: tuple[str, str]) -> None:
    assert parse_release(spec) == parsed


# --- the command --------------------------------------------------------------------------


def _explain(*args: str):
    result = CliRunner().invoke(main, ["explain", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_cache_datasets_are_searched_without_dataset(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./output here
    write_fixture_dataset(Path(os.environ["VMINE_CACHE_DIR"]) / "datasets")
    code, out, _ = _explain(FAST_DECODE, "--all")
    assert (code, out.split("  ")[1]) == (0, "exact")


def test_no_dataset_anywhere_names_both_places_and_release(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _explain(FAST_DECODE)
    cache = Path(os.environ["VMINE_CACHE_DIR"]) / "datasets"
    assert (code, err) == (
        2,
        f"Error: no vmine dataset under output or {cache}: write one with `vmine run "
        "SOURCE`, or pass --release NAME==VERSION to mine a published release\n",
    )


def test_the_release_installed_here_is_searched_and_named(tmp_path: Path, monkeypatch) -> None:
    # click is installed in this environment: datasets "of click" stand for a target's
    version = metadata.version("click")
    monkeypatch.chdir(tmp_path)
    write_fixture_dataset(Path("output/old"), sha="0" * 40, source="pypi:click==0.0.1")
    installed = write_fixture_dataset(Path("output/new"), source=f"pypi:click=={version}")
    code, out, _ = _explain(FAST_DECODE)
    lines = out.splitlines()
    assert (code, lines[0], lines[1]) == (
        0,
        f"Note: Searched click=={version}, the release installed here.",
        "Match: exact message.",
    )
    assert f"Record aaaa000000000002: {installed.resolve()}" in out or str(installed) in out
    code, out, err = _explain(FAST_DECODE, "--json")
    assert (code, err) == (0, f"note: Searched click=={version}, the release installed here.\n")


def test_release_is_mined_once_into_the_cache_then_reused(
    index: Path, tmp_path: Path, monkeypatch
) -> None:
    make_wheel(
        index,
        "tinyval",
        "1.0",
        {"tinyval/__init__.py": b"", "tinyval/limits.py": LIMITS.encode()},
        "Project-URL: Source, https://github.com/acme/tinyval\n",
    )
    monkeypatch.chdir(tmp_path)
    paste = "ValueError: --port must be between 1 and 65535, got 70000"
    code, out, err = _explain(paste, "--release", "tinyval==1.0")
    cache = Path(os.environ["VMINE_CACHE_DIR"])
    (root,) = (cache / "datasets").glob("*/*/*")
    assert code == 0, err
    assert f"mining tinyval==1.0 once (offline explainer) into {cache / 'datasets'}" in err
    assert out.splitlines()[:2] == [
        f"Note: Searched tinyval==1.0 (mined just now, in {root}).",
        "Match: message pattern, 86% of the message is literal text.",
    ]
    for archive in index.iterdir():
        archive.unlink()  # the second lookup needs neither pip nor the network
    code, out, err = _explain(paste, "--release", "tinyval==1.0")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "Note: Searched tinyval==1.0."  # found in the cache's datasets
    # and without --release, the cache's datasets are searched too
    code, out, _ = _explain(paste, "--all")
    assert (code, out.split("  ")[1]) == (0, "pattern")


def test_a_release_in_output_is_searched_without_mining(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_fixture_dataset(Path("output"), source="pypi:serve==0.2.0")
    code, out, err = _explain(FAST_DECODE, "--release", "serve==0.2.0")
    assert (code, err, out.splitlines()[0]) == (0, "", "Note: Searched serve==0.2.0.")


@pytest.mark.parametrize("spec", ["vllm", "vllm>=0.28", "==1.0", "-rf"])
def test_a_malformed_release_is_one_line(tmp_path: Path, monkeypatch, spec: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _explain(FAST_DECODE, "--release", spec)
    assert (code, err) == (
        2,
        f"Error: --release must read NAME==VERSION (as pip names it), got {spec!r}\n",
    )


def test_a_release_pypi_does_not_have_is_one_line(index: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _explain(FAST_DECODE, "--release", "nosuchthing==1.0")
    assert code == 2
    assert err.splitlines()[-1].startswith("Error: ") and len(err.splitlines()) <= 3, err
