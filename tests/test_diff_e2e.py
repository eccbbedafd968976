"""`vmine diff` end to end on a small git repository whose history adds a validator, rewords
a message and moves a function to another file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from tests.conftest import make_git_repo

CONFIG_V0 = """\
from dataclasses import dataclass


@dataclass
class CacheConfig:
    block_size: int

    def __post_init__(self):
        if self.block_size <= 0:
            raise ValueError("block_size must be positive")


def check_dtype(dtype):
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype {dtype!r} is not supported")
"""

SCHEDULER = """\


class SchedulerConfig:
    def validate_budget(self):
        if self.max_num_batched_tokens < self.max_model_len:
            raise ValueError(
                f"max_num_batched_tokens ({self.max_num_batched_tokens}) must be at least "
                f"max_model_len ({self.max_model_len})"
            )
"""

DTYPES = '''\
"""Data types the engine accepts."""


def check_dtype(dtype):
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype {dtype!r} is not supported")
'''


def _commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).write_text(text)
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "HOME": str(repo),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=env, check=True)
    return _head(repo)


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[str]]:
    """Four commits: base, + a validator, a reworded message, a function moved away."""
    repo = make_git_repo(
        tmp_path_factory.mktemp("history") / "engine", {"engine/config.py": CONFIG_V0}
    )
    shas = [_head(repo)]
    with_scheduler = CONFIG_V0 + SCHEDULER
    shas.append(_commit(repo, {"engine/config.py": with_scheduler}, "add a validator"))
    reworded = with_scheduler.replace(
        "block_size must be positive", "block_size must be a positive integer"
    )
    shas.append(_commit(repo, {"engine/config.py": reworded}, "reword a message"))
    moved = reworded.replace(
        'def check_dtype(dtype):\n    if dtype not in ("float16", "bfloat16"):\n'
        '        raise ValueError(f"dtype {dtype!r} is not supported")\n',
        "",
    )
    assert moved != reworded
    shas.append(
        _commit(
            repo,
            {"engine/config.py": moved, "engine/dtypes.py": DTYPES},
            "move check_dtype to its own module",
        )
    )
    return repo, shas


def _diff(*args: str, cache: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["diff", *args, "--cache-dir", str(cache)])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, result.stdout


def test_added_validator(history, tmp_path):
    repo, shas = history
    code, out = _diff(f"{repo}@{shas[0]}", f"{repo}@{shas[1]}", "--exit-code", cache=tmp_path)
    assert code == 1
    assert out == (
        f"local/engine@{shas[0][:12]} -> local/engine@{shas[1][:12]}\n"
        "+ added    engine/config.py:21  SchedulerConfig.validate_budget: "
        '"max_num_batched_tokens ({self.max_num_batched_tokens}) must be at least '
        'max_model_len ({self.max_model_len})"\n'
        "1 added, 0 removed, 0 reworded, 0 moved, 0 changed, 2 unchanged\n"
    )


def test_trees_without_github_origin_link_nowhere(history, tmp_path):
    repo, shas = history
    _, out = _diff(f"{repo}@{shas[0]}", f"{repo}@{shas[1]}", "--format", "markdown", cache=tmp_path)
    assert "| added | `engine/config.py:21` | `SchedulerConfig.validate_budget` |" in out
    assert "github.com" not in out


def test_a_bare_repository_folder_is_named_without_git(tmp_path):
    from pipeline.diff.sides import stand_in_repo

    assert stand_in_repo(str(tmp_path / "engine.git")) == "local/engine"


def test_reworded_message(history, tmp_path):
    repo, shas = history
    _, out = _diff(f"{repo}@{shas[1]}", f"{repo}@{shas[2]}", cache=tmp_path)
    assert out.splitlines()[1:] == [
        "~ reworded engine/config.py:10  CacheConfig.__post_init__: "
        '"block_size must be positive" -> "block_size must be a positive integer"',
        "0 added, 0 removed, 1 reworded, 0 moved, 0 changed, 2 unchanged",
    ]


def test_function_moved_to_another_file(history, tmp_path):
    repo, shas = history
    _, out = _diff(f"{repo}@{shas[2]}", f"{repo}@{shas[3]}", "--format", "json", cache=tmp_path)
    report = json.loads(out)
    # SchedulerConfig's raise moves up the file by the three lines check_dtype took.
    assert report["counts"] == {
        "added": 0,
        "removed": 0,
        "reworded": 0,
        "moved": 2,
        "changed": 0,
        "unchanged": 1,
    }
    shifted, moved = report["changes"]
    assert (
        shifted["qualname"],
        shifted["fields"],
        shifted["old"]["lineNumber"],
        shifted["new"]["lineNumber"],
    ) == ("SchedulerConfig.validate_budget", ["lineNumber"], 21, 18)
    assert shifted["old"]["id"] == shifted["new"]["id"]
    assert (moved["kind"], moved["qualname"], moved["fields"]) == (
        "moved",
        "check_dtype",
        ["filePath", "lineNumber"],
    )
    assert (moved["old"]["filePath"], moved["old"]["lineNumber"]) == ("engine/config.py", 15)
    assert (moved["new"]["filePath"], moved["new"]["lineNumber"]) == ("engine/dtypes.py", 6)
    assert moved["new"]["errorMessage"] == "dtype {dtype!r} is not supported"


def test_datasets_from_offline_runs_diff_like_the_trees(history, tmp_path):
    repo, shas = history
    out = tmp_path / "out"
    for sha in (shas[0], shas[3]):
        result = CliRunner().invoke(
            main,
            [
                "run",
                str(repo),
                "--rev",
                sha,
                "--repo-name",
                "acme/engine",
                "--llm",
                "offline",
                "-o",
                str(out),
                "--cache-dir",
                str(tmp_path / "cache"),
                "--ci",
                "--dataset-version",
                "2026-01-01T00:00:00.000Z",
            ],
        )
        assert result.exit_code == 0, result.output
    old, new = (out / "acme" / "engine" / sha for sha in (shas[0], shas[3]))
    _, text = _diff(str(old), str(new), cache=tmp_path / "cache")
    assert text == (
        f"acme/engine@{shas[0][:12]} -> acme/engine@{shas[3][:12]}\n"
        "+ added    engine/config.py:18  SchedulerConfig.validate_budget: "
        '"max_num_batched_tokens ({self.max_num_batched_tokens}) must be at least '
        'max_model_len ({self.max_model_len})"\n'
        "~ reworded engine/config.py:10  CacheConfig.__post_init__: "
        '"block_size must be positive" -> "block_size must be a positive integer"\n'
        '> moved    engine/dtypes.py:6  check_dtype: "dtype {dtype!r} is not supported" '
        "(was engine/config.py:15)\n"
        "1 added, 0 removed, 1 reworded, 1 moved, 0 changed, 0 unchanged\n"
    )
    # A dataset on one side and a tree on the other: the tree takes the dataset's repo.
    _, mixed = _diff(str(old), f"{repo}@{shas[3]}", cache=tmp_path / "cache")
    assert mixed.splitlines()[1:] == text.splitlines()[1:]


def _wheel(index: Path, version: str, config_source: str) -> None:
    """A hand-built wheel of the release `engine==version` in a local package index."""
    import zipfile

    index.mkdir(exist_ok=True)
    info = f"engine-{version}.dist-info"
    with zipfile.ZipFile(index / f"engine-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr("engine/config.py", config_source)
        wheel.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: engine\nVersion: {version}\n"
        )
        wheel.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{info}/RECORD", "")


def test_two_releases_from_a_package_index(tmp_path, monkeypatch):
    index = tmp_path / "index"
    _wheel(index, "1.0", CONFIG_V0)
    _wheel(
        index,
        "1.1",
        CONFIG_V0.replace("block_size must be positive", "block_size must be a positive integer"),
    )
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    code, out = _diff(
        "pypi:engine==1.0",
        "pypi:engine==1.1",
        "--exit-code",
        "--format",
        "json",
        cache=tmp_path / "cache",
    )
    report = json.loads(out)
    assert code == 1
    assert (report["old"]["repo"], report["new"]["repo"]) == ("pypi/engine", "pypi/engine")
    assert report["counts"] == {
        "added": 0,
        "removed": 0,
        "reworded": 1,
        "moved": 0,
        "changed": 0,
        "unchanged": 1,
    }
    [reworded] = report["changes"]
    assert (reworded["old"]["errorMessage"], reworded["new"]["errorMessage"]) == (
        "block_size must be positive",
        "block_size must be a positive integer",
    )
    assert reworded["new"]["filePath"] == "engine/config.py"
