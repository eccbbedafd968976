"""Small git repositories for the source and extract tests, built with plain `git`."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
}

CONFIG_V1 = """\
from dataclasses import dataclass


@dataclass
class SchedulerConfig:
    max_num_seqs: int = 128
    policy: str = "fcfs"

    def __post_init__(self) -> None:
        if self.max_num_seqs <= 0:
            raise ValueError("max_num_seqs must be positive")
"""

CONFIG_V2 = (
    CONFIG_V1
    + """\
        if self.policy not in ("fcfs", "priority"):
            raise ValueError(f"unknown --scheduling-policy {self.policy!r}")
"""
)

FEATURE_LIMITS = """\
def check_limits(low: int, high: int) -> None:
    if low > high:
        raise ValueError(f"low ({low}) must not exceed high ({high})")
"""

BROKEN = """\
def validate_mode(mode):
    if mode ==
        raise ValueError("bad mode")
"""


def git(cwd: Path, *args: str, input: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=_ENV,
        check=True,
        capture_output=True,
        input=None if input is None else input.encode(),
    )
    return done.stdout.decode().strip()


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def commit(root: Path, files: dict[str, str], message: str) -> str:
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


@dataclass(frozen=True)
class Upstream:
    """A repository with history: c1 (tag v1, annotated) <- c2 (main, tag v2); branch
    `feature` off c1 adds one file. Its origin is a GitHub URL; `bare` is a bare clone."""

    path: Path
    bare: Path
    c1: str
    c2: str
    feature: str

    @property
    def url(self) -> str:
        return self.bare.as_uri()


def make_upstream(root: Path, origin: str = "https://github.com/acme/widgets.git") -> Upstream:
    path = root / "widgets"
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    c1 = commit(path, {"README.md": "widgets\n", "widgets/config.py": CONFIG_V1}, "one")
    git(path, "tag", "-a", "v1", "-m", "v1")
    git(path, "checkout", "-q", "-b", "feature")
    feature = commit(path, {"widgets/limits.py": FEATURE_LIMITS}, "limits")
    git(path, "checkout", "-q", "main")
    c2 = commit(path, {"widgets/config.py": CONFIG_V2, "widgets/broken.py": BROKEN}, "two")
    git(path, "tag", "v2")
    git(path, "remote", "add", "origin", origin)
    bare = root / "remote" / "widgets.git"
    git(root, "clone", "-q", "--bare", str(path), str(bare))
    # Let the "server" answer blob/tree filters, as GitHub does.
    git(bare, "config", "uploadpack.allowFilter", "true")
    return Upstream(path=path, bare=bare, c1=c1, c2=c2, feature=feature)
