"""One commit's tree as the pipeline sees it: a frozen `Snapshot` of `TreeFile`s whose blobs
are read through a `BlobReader`, and `SourceError`, the one-line error of the source stage."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol


class SourceError(Exception):
    """A SOURCE or REV that cannot be used; the message is one line for the user."""


# Files larger than this are data, not code: grounding does not search them, and a release
# archive's are left out of its repository.
MAX_TEXT_FILE = 4 * 1024 * 1024


@dataclass(frozen=True)
class TreeFile:
    """One file of the analysed tree: posix path and 40-hex blob SHA."""

    path: str
    blob: str
    size: int | None = field(default=None, compare=False)


class BlobReader(Protocol):
    """Reads blobs by SHA (`pipeline.source.git.GitObjects` reads them from a git directory)."""

    def read_blobs(self, blobs: Iterable[str]) -> Iterator[tuple[str, bytes]]: ...


@dataclass(frozen=True)
class Snapshot:
    """One commit's tree: every file with its blob SHA, readable without a checkout.

    `url_ref` is what githubUrl pins (the sha, or a release tag); `path_prefix` ('' or e.g.
    'python/') maps a release's files onto the GitHub tree; `origin` says where it came from
    ('local', 'git', 'pypi:sglang==0.5.10.post1'); `unsafe_paths` are the paths of a crafted
    tree (`../evil.py`) that are left out of `files`."""

    git_dir: Path
    repo: str | None
    sha: str
    url_ref: str
    path_prefix: str
    origin: str
    files: list[TreeFile]
    reader: BlobReader = field(repr=False, compare=False)
    source: str = ""
    unsafe_paths: tuple[str, ...] = ()

    def require_repo(self) -> str:
        """The `owner/name` the output needs, or a one-line SourceError saying how to give it."""
        if self.repo is None:
            raise SourceError(
                f"cannot tell the GitHub owner/name of {self.source or self.git_dir}: "
                "pass --repo-name OWNER/NAME"
            )
        return self.repo

    def read_blobs(self, blobs: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """Contents of these blobs, in order."""
        return self.reader.read_blobs(blobs)

    def contains(self, needles: Iterable[str]) -> set[str]:
        """Which of these strings occur in any (text) file of the tree."""
        text = self._joined_text
        return {n for n in needles if n and n.encode("utf-8") in text}

    @cached_property
    def _joined_text(self) -> bytes:
        # Every text file of the tree read once and joined (NUL-separated, so no needle spans
        # two files): a substring test over it takes milliseconds, where one `git grep` per
        # batch of needles took seconds on vLLM.
        small = [f.blob for f in self.files if f.size is None or f.size <= MAX_TEXT_FILE]
        return b"\0".join(
            data for _, data in self.read_blobs(dict.fromkeys(small)) if b"\0" not in data[:8000]
        )
