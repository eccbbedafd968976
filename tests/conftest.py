"""Shared pytest fixtures."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.llm_server import FakeLLM

# Property tests check what holds, not how fast: on a loaded machine the per-example
# deadline only makes them flaky (speed is measured under bench/).
settings.register_profile("vmine", deadline=None)
settings.load_profile("vmine")


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A local OpenAI-compatible server (tests/llm_server.py); script faults with `.fail`."""
    with FakeLLM() as server:
        yield server


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A find-links folder that pip (and vmine's sdist lookup) use instead of any configured
    index: no pip.conf, no index URL."""
    folder = tmp_path / "index"
    folder.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    return folder


def make_git_repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository at `root` with `files` (posix path -> text) in one commit."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(root),
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test its own default cache directory: nothing reads or writes the user's (which
    `vmine explain` searches for datasets when no --dataset is given)."""
    monkeypatch.setenv("VMINE_CACHE_DIR", str(tmp_path_factory.mktemp("vmine-cache")))
