"""The benchmark's inputs: vLLM and SGLang wheels, turned into local git repositories of .py files.

`vllm.git` holds vLLM 0.32.0 (tag v0.32.0) and then 0.33.0 (tag v0.33.0, branch main) as two
commits, for the incremental bench; `sglang.git` holds SGLang 0.5.10.post1 (tag
v0.5.10.post1). Everything lives under bench/.cache/ and is reused when already there.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.source.git import run_git  # noqa: E402
from pipeline.source.release import commit_files, tag_commit  # noqa: E402

CACHE = ROOT / "bench" / ".cache"
WHEELS = CACHE / "wheels"
REPOS = CACHE / "repos"

VLLM_OLD = "0.32.0"
VLLM_NEW = "0.33.0"
SGLANG = "0.5.10.post1"


@dataclass(frozen=True)
class Trees:
    """Where the benchmark's repositories are and which revisions they hold."""

    vllm: Path  # bare repository: tags v0.32.0, v0.33.0
    sglang: Path  # bare repository: tag v0.5.10.post1
    vllm_old: str = f"v{VLLM_OLD}"
    vllm_new: str = f"v{VLLM_NEW}"
    sglang_rev: str = f"v{SGLANG}"


def wheel(name: str, version: str) -> Path:
    """The release's wheel in bench/.cache/wheels, downloaded with pip when missing."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    prefix = f"{name}-{version}-"
    found = sorted(WHEELS.glob(f"{prefix}*.whl"))
    if not found:
        print(f"downloading {name}=={version} ...", file=sys.stderr, flush=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--quiet",
                "-d",
                str(WHEELS),
                f"{name}=={version}",
            ],
            check=True,
        )
        found = sorted(WHEELS.glob(f"{prefix}*.whl"))
    if not found:
        raise RuntimeError(f"pip did not leave a wheel of {name}=={version} in {WHEELS}")
    return found[0]


def python_files(archive: Path) -> dict[str, bytes]:
    """Every .py file of a wheel, by its path inside the wheel."""
    with zipfile.ZipFile(archive) as zf:
        return {
            info.filename: zf.read(info)
            for info in zf.infolist()
            if info.filename.endswith(".py") and not info.is_dir()
        }


def _build(git_dir: Path, name: str, versions: list[str]) -> Path:
    parent = None
    for version in versions:
        tag = f"v{version}"
        sha = tag_commit(git_dir, f"refs/tags/{tag}")
        if sha is None:
            files = python_files(wheel(name, version))
            sha = commit_files(git_dir, files, message=f"{name} {version}", parent=parent)
            run_git(git_dir, "update-ref", f"refs/tags/{tag}", sha)
        parent = sha
    run_git(git_dir, "update-ref", "refs/heads/main", parent)
    run_git(git_dir, "symbolic-ref", "HEAD", "refs/heads/main")
    return git_dir


def ensure_trees() -> Trees:
    """Build (or reuse) the benchmark repositories."""
    REPOS.mkdir(parents=True, exist_ok=True)
    return Trees(
        vllm=_build(REPOS / "vllm.git", "vllm", [VLLM_OLD, VLLM_NEW]),
        sglang=_build(REPOS / "sglang.git", "sglang", [SGLANG]),
    )


if __name__ == "__main__":
    print(ensure_trees())
