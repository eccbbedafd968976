"""The same input gives the same bytes in separate processes, whatever the hash seed: the
extract output, a dataset written by `run`, and every key vmine hashes. (One process
calling a cached function twice proves nothing: the second call returns the first's
answer.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import make_git_repo

REPO = "acme/engine"
VERSION = "2026-01-01T00:00:00.000Z"

# Sets, dicts and several classes and files: anything that iterates a set of strings into
# the output would come out in another order under another hash seed.
FILES = {
    "engine/config/cache.py": """\
from dataclasses import dataclass

from pydantic import BaseModel, field_validator, model_validator

KINDS = {"fp8", "int8", "auto", "bf16"}


@dataclass
class CacheConfig:
    kind: str = "auto"
    blocks: int = 16
    tags: frozenset = frozenset()

    def __post_init__(self) -> None:
        if self.kind not in {"fp8", "int8", "auto", "bf16"}:
            raise ValueError(f"unknown --cache-kind {self.kind!r}; pick one of {sorted(KINDS)}")
        self._check_blocks()

    def _check_blocks(self) -> None:
        if self.blocks <= 0 or self.blocks % 2:
            raise ValueError("--cache-blocks must be a positive even number, got %d" % self.blocks)


class LoaderSettings(BaseModel):
    format: str = "auto"
    workers: int = 1

    @field_validator("format")
    @classmethod
    def check_format(cls, v):
        if v not in ("auto", "safetensors", "pt"):
            raise ValueError("--load-format must be one of {}".format(", ".join(["auto", "pt"])))
        return v

    @model_validator(mode="after")
    def check_workers(self):
        if self.format == "pt" and self.workers > 1:
            raise ValueError(
                "--load-format pt reads with one worker; "
                f"got --loader-workers {self.workers}"
            )
        return self
""",
    "engine/parallel.py": """\
def validate_world(tp: int, pp: int, world: int) -> None:
    if tp * pp != world:
        raise ValueError(f"tp ({tp}) x pp ({pp}) must equal the world size {world}")
    if world > 8 and not {"nccl", "gloo"} & set(backends()):
        raise ValueError("a world of more than 8 ranks needs nccl or gloo")


def backends():
    return {"nccl": 1, "gloo": 2}
""",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return make_git_repo(tmp_path_factory.mktemp("repo"), FILES)


def vmine(seed: str, *args: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed, "CI": "true"}
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    command = [str(Path(sys.executable).with_name("vmine")), *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_extract_in_two_processes_with_other_hash_seeds_prints_the_same_bytes(repo, tmp_path):
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"sites-{seed}.jsonl"
        vmine(
            seed,
            "extract",
            str(repo),
            "--repo-name",
            REPO,
            "--no-cache",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-o",
            str(out),
        )
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert len(outputs[0].splitlines()) == 6


def _files(root: Path) -> dict[str, bytes]:
    """Every file of a dataset; a record's analyzedAt (when its explanation was first made:
    two stores differ in it) left out."""
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if path.parent.name == "records":
                envelope = json.loads(data)
                del envelope["record"]["analyzedAt"]
                data = json.dumps(envelope).encode()
            files[str(path.relative_to(root))] = data
    return files


def test_run_in_two_processes_with_other_hash_seeds_writes_the_same_dataset(repo, tmp_path):
    datasets = []
    for seed in ("1", "2"):
        out = tmp_path / f"out-{seed}"
        vmine(
            seed,
            "run",
            str(repo),
            "--repo-name",
            REPO,
            "--llm",
            "offline",
            "--cache",
            str(tmp_path / f"store-{seed}.sqlite"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--dataset-version",
            VERSION,
            "-o",
            str(out),
        )
        datasets.append(_files(out))
    assert datasets[0] == datasets[1]
    assert len([name for name in datasets[0] if "/records/" in name]) == 6


# Every key vmine hashes, printed by a fresh interpreter.
KEYS = """
from extractors.facts import Rules
from extractors.keys import memo_token
from pipeline.dataset.models import Site
from pipeline.keys import analysis_token, explanation_key, identities
site = Site(repo="acme/engine", analyzedSha="0" * 40, filePath="engine/a.py", lineNumber=3,
            qualname="check", validatorKind="name", errorClass="ValueError",
            errorMessage="bad {x}", messagePattern="bad (.*?)", messageStatus="template",
            guards=["x not in {'a', 'b'}"], sourceCode="", sourceCodeStart=1,
            sourceCodeEnd=3, githubUrl="https://github.com/acme/engine/blob/x/engine/a.py#L1-L3",
            functionSource="def check(x): ...")
other = site.model_copy(update={"errorMessage": "bad {x} again"})
rules = Rules(error_classes=("ValueError", "TypeError"))
print(memo_token(Rules()), memo_token(rules), analysis_token(rules))
print(explanation_key("offline", "offline-2", site))
for rid, slug in identities([site, other]):
    print(rid, slug)
"""


def test_hash_keys_are_the_same_in_two_processes_with_other_hash_seeds():
    printed = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", KEYS],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        printed.append(done.stdout)
    assert printed[0] == printed[1]
    assert len(printed[0].splitlines()) == 4  # the tokens, an explanation key, two ids
