"""SOURCE and the releases a user names -> the release series to mine, oldest first.

| SOURCE                 | a release is                    | e.g.                                  |
|------------------------|---------------------------------|---------------------------------------|
| `pypi:NAME`            | a version                       | `0.28.0 0.29.0`                       |
| `pypi:NAME`            | a range `A..B` of versions      | `0.28.0..0.33.0`: every final release |
|                        |                                 | pip's index lists from A to B         |
| a path, URL, OWNER/NAME| a commit, tag or branch         | `v0.10.0 v0.11.0`                     |
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# What pip may take to answer `pip index versions` (it asks the index over the network).
INDEX_TIMEOUT = 120.0
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


class HistoryError(Exception):
    """A release series that cannot be made or mined; one line for the user."""


@dataclass(frozen=True)
class ReleaseSpec:
    name: str  # how reports name it: `0.28.0`, `v0.11.0`
    spec: str  # what the extractor opens: `pypi:vllm==0.28.0`, `../vllm@v0.11.0`


def release_specs(
    source: str,
    releases: Sequence[str],
    versions_of: Callable[[str], list[str]] | None = None,
) -> list[ReleaseSpec]:
    """The series, in the order given (a range expands oldest first). `versions_of` lists
    a project's published versions oldest first (default: pip's index)."""
    if not releases:
        raise HistoryError("name the releases: --releases R1 R2 ... (or A..B for pypi:NAME)")
    found: list[ReleaseSpec] = []
    if source.startswith("pypi:"):
        name = source.removeprefix("pypi:")
        if not _NAME.fullmatch(name):
            raise HistoryError(
                f"a release SOURCE for history reads pypi:NAME (the versions go in "
                f"--releases), got {source!r}"
            )
        for release in releases:
            for version in _versions(name, release, versions_of or published_versions):
                found.append(ReleaseSpec(version, f"pypi:{name}=={version}"))
    else:
        for release in releases:
            if ".." in release:
                raise HistoryError(
                    f"{release}: a range of releases needs a pypi:NAME SOURCE; "
                    "name each commit or tag of a repository"
                )
            found.append(ReleaseSpec(release, f"{source}@{release}"))
    seen: set[str] = set()
    for item in found:
        if item.name in seen:
            raise HistoryError(f"{item.name}: named twice in --releases")
        seen.add(item.name)
    return found


def _versions(name: str, release: str, versions_of: Callable[[str], list[str]]) -> list[str]:
    if ".." not in release:
        return [release]
    start, _, end = release.partition("..")
    if not start or not end:
        raise HistoryError(f"{release}: a range reads FIRST..LAST, e.g. 0.28.0..0.33.0")
    published = versions_of(name)
    for version in (start, end):
        if version not in published:
            newest = f" (the newest is {published[-1]})" if published else ""
            raise HistoryError(f"{version}: not a published version of {name}{newest}")
    first, last = published.index(start), published.index(end)
    if first > last:
        raise HistoryError(f"{release}: {start} is newer than {end}; write OLDEST..NEWEST")
    return published[first : last + 1]


def published_versions(name: str) -> list[str]:
    """The final releases of `name` on the package index pip uses, oldest first (pip lists
    them newest first, sorted by version; pre-releases only when asked for, so never)."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "index",
        "versions",
        name,
        "--disable-pip-version-check",
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=INDEX_TIMEOUT, text=True)
    except subprocess.TimeoutExpired:
        raise HistoryError(f"pip index versions {name}: timed out") from None
    return parse_index_versions(name, done.returncode, done.stdout, done.stderr)


def parse_index_versions(name: str, code: int, stdout: str, stderr: str) -> list[str]:
    for line in stdout.splitlines():
        if line.startswith("Available versions:"):
            listed = line.removeprefix("Available versions:").split(",")
            return [version.strip() for version in reversed(listed) if version.strip()]
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR:")] or lines
    reason = errors[-1] if errors else f"pip exited {code}"
    raise HistoryError(f"cannot list the versions of {name} with pip: {reason}")
