"""Where `vmine explain` looks, and which release of a target it answers for: the one rule
`where_to_look` (the folders) and `releases_to_search` (the datasets among them).

Folders, when no `--dataset` is given:

| `--dataset` | ./output | <cache>/datasets | searched                                   |
|-------------|----------|------------------|--------------------------------------------|
| given       | any      | any              | the folders given, nothing else            |
| none        | yes      | yes              | ./output, then <cache>/datasets            |
| none        | yes      | no               | ./output                                   |
| none        | no       | yes              | <cache>/datasets                           |
| none        | no       | no               | ./output (which then says there is none)   |

Releases, among the datasets found (a dataset mined from `pypi:NAME==VERSION` is a
release of NAME):

| `--release`   | NAME installed here | a dataset of it | searched                              |
|---------------|---------------------|-----------------|---------------------------------------|
| NAME==V       | any                 | yes             | that release only                     |
| NAME==V       | any                 | no              | mined first (mined.py), then it only  |
| none, folders | any                 | any             | every dataset of the folders given    |
| none          | NAME==V             | yes             | NAME==V (said: installed here), and every other target's datasets |
| none          | NAME==V             | no              | every release of NAME (said, with how to mine V) |
| none          | not installed       | any             | every dataset                         |

tests/test_explain_where.py holds these tables."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.lookup.index import IndexedDataset

_SPEC = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)=="
    r"(?P<version>[A-Za-z0-9](?:[A-Za-z0-9.+!_-]*[A-Za-z0-9])?)"
)


def where_to_look(given: list[Path], output: Path, cached: Path) -> list[Path]:
    """The folders to search: those given, else ./output and the cache's datasets that exist
    (./output alone when neither does, so the error names it)."""
    if given:
        return list(given)
    found = [folder for folder in (output, cached) if folder.is_dir()]
    return found or [output]


def parse_release(spec: str) -> tuple[str, str]:
    """`NAME==VERSION` (or `pypi:NAME==VERSION`) -> (canonical name, version); ValueError
    with the one line to print when it is not one."""
    found = _SPEC.fullmatch(spec.removeprefix("pypi:"))
    if found is None:
        raise ValueError(f"--release must read NAME==VERSION (as pip names it), got {spec!r}")
    return canonical(found["name"]), found["version"]


def canonical(name: str) -> str:
    """PEP 503's normalised project name (`Foo_Bar` and `foo-bar` are one project)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def release_of(dataset: IndexedDataset) -> tuple[str, str] | None:
    """(canonical name, version) of a dataset mined from a published release, else None."""
    source = dataset.source
    if not source.startswith("pypi:"):
        return None
    try:
        return parse_release(source)
    except ValueError:
        return None


@dataclass
class Chosen:
    """The datasets to search, and the lines that say which release was used."""

    datasets: list[IndexedDataset]
    notes: list[str] = field(default_factory=list)


def releases_to_search(
    datasets: list[IndexedDataset],
    installed: Callable[[str], str | None],
    folders_given: bool,
) -> Chosen:
    """Which of the datasets found to search when no `--release` is given: for each target
    installed in this environment (`installed(name)` gives its version, or None), its
    installed release when a dataset of it was found (see the module's table)."""
    if folders_given:
        return Chosen(datasets)
    by_name: dict[str, list[IndexedDataset]] = {}
    for dataset in datasets:
        release = release_of(dataset)
        if release is not None:
            by_name.setdefault(release[0], []).append(dataset)
    chosen = list(datasets)
    notes = []
    for name, releases in sorted(by_name.items()):
        version = installed(name)
        if version is None:
            continue
        mine = [d for d in releases if release_of(d) == (name, version)]
        if mine:
            # by identity: a dataset compares equal to another holding the same records
            left_out = {id(d) for d in releases} - {id(d) for d in mine}
            chosen = [d for d in chosen if id(d) not in left_out]
            notes.append(f"Searched {name}=={version}, the release installed here.")
        else:
            notes.append(
                f"{name}=={version} is installed here, but no dataset of it was found: "
                f"searched {len(releases)} other release{'s' if len(releases) > 1 else ''}; "
                f"`vmine explain --release {name}=={version}` mines it."
            )
    return Chosen(chosen, notes)


def installed_version(name: str) -> str | None:
    """The version of distribution `name` installed in this environment, or None."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except (metadata.PackageNotFoundError, ValueError):
        return None
