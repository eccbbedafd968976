"""Where a release's files live on GitHub: owner/name from the distribution's metadata
(`Project-URL`, `Home-page`), and the folder of the GitHub tree that holds the package (the
sdist's layout, `src/`, and the path of a `.../tree/REF/PATH` project URL, `libs/core/`)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.parser import HeaderParser

from pipeline.dataset.formats import REPO_NAME_RE

# Project-URL labels (normalised as PEP 753 says) that name the code, best first; the
# Home-page field and a `homepage` label come last.
_CODE_LABELS = ("source", "sourcecode", "code", "repository", "github")
_HOME_LABELS = ("homepage",)
_GITHUB = re.compile(
    r"^https?://(?:www\.)?github\.com/(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/"
    r"(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?(?:/tree/[^/]+/(?P<path>[^?#]*?))?/?(?:[?#].*)?$"
)
_SAFE_PATH = re.compile(r"^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*$")


@dataclass(frozen=True)
class Upstream:
    """The GitHub repository of a release (None when its metadata names none) and the
    folder of that tree its files sit in ('' or e.g. 'src/', 'libs/core/')."""

    repo: str | None
    path_prefix: str = ""


def metadata_of(files: Mapping[str, bytes]) -> str | None:
    """The core metadata of a wheel (`NAME-VERSION.dist-info/METADATA`) or an sdist
    (`PKG-INFO` at its top), as text."""
    for path in sorted(files):
        parts = path.split("/")
        if (len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA") or (
            path == "PKG-INFO"
        ):
            return files[path].decode("utf-8", "replace")
    return None


def _label(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def github_of(metadata: str) -> tuple[str, str] | None:
    """(owner/name, folder) of the GitHub repository the metadata names: a `Project-URL`
    labelled Source, Source Code, Code, Repository or GitHub, else one labelled Homepage,
    else `Home-page`. The folder is the path of a `/tree/REF/PATH` URL ('' or 'libs/core/')."""
    headers = HeaderParser().parsestr(metadata, headersonly=True)
    labelled: dict[str, list[str]] = {}
    for entry in headers.get_all("Project-URL") or []:
        label, _, url = str(entry).partition(",")
        labelled.setdefault(_label(label), []).append(url.strip())
    ranked = [url for label in _CODE_LABELS for url in labelled.get(label, [])]
    ranked += [url for label in _HOME_LABELS for url in labelled.get(label, [])]
    ranked += [str(url).strip() for url in headers.get_all("Home-page") or []]
    for url in ranked:
        match = _GITHUB.match(url)
        # the metadata is untrusted: `acme/..` would put a dataset outside its folder
        if match is None or not REPO_NAME_RE.fullmatch(f"{match['owner']}/{match['name']}"):
            continue
        path = (match["path"] or "").strip("/")
        folder = f"{path}/" if path and _SAFE_PATH.match(path) and ".." not in path else ""
        return f"{match['owner']}/{match['name']}", folder
    return None


def sdist_prefix(wheel_paths: Iterable[str], sdist_paths: Iterable[str]) -> str:
    """The folder of the sdist that holds the wheel's package ('' when the layouts agree,
    'src/' for a src layout): the prefix that puts most of the wheel's .py files onto files
    of the sdist, when it puts at least half of them there."""
    sdist = set(sdist_paths)
    by_name: dict[str, list[str]] = {}
    for path in sdist:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    wanted = [
        path
        for path in wheel_paths
        if path.endswith(".py") and not path.split("/", 1)[0].endswith((".dist-info", ".data"))
    ]
    votes: Counter[str] = Counter()
    for path in wanted:
        prefixes = {
            candidate[: -len(path)]
            for candidate in by_name.get(path.rsplit("/", 1)[-1], ())
            if candidate == path or candidate.endswith("/" + path)
        }
        votes.update(prefixes)
    if not votes:
        return ""
    # most files placed, then the shortest prefix
    prefix, count = min(votes.items(), key=lambda item: (-item[1], len(item[0])))
    return prefix if count * 2 >= len(wanted) else ""


def upstream_of(files: Mapping[str, bytes], sdist_paths: Iterable[str] | None) -> Upstream:
    """Where the release whose files (a wheel's or an sdist's) are `files` lives on GitHub;
    `sdist_paths` are the sdist's files when `files` are a wheel's."""
    metadata = metadata_of(files)
    found = github_of(metadata) if metadata is not None else None
    repo, folder = found if found is not None else (None, "")
    layout = sdist_prefix(files, sdist_paths) if sdist_paths is not None else ""
    return Upstream(repo, folder + layout)
