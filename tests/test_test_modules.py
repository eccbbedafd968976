"""Test code is not mined: the path rule's cases, and a repository whose test helper raises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.mine.test_modules import is_test_module
from tests.git_fixtures import commit, make_upstream


@pytest.mark.parametrize(
    ("path", "test_code"),
    [
        ("tests/test_config.py", True),
        ("tests/helpers.py", True),
        ("python/sglang/test/lora_utils.py", True),
        ("sglang/multimodal_gen/test/server/testcase_configs.py", True),
        ("src/diffusers/utils/testing_utils.py", True),
        ("accelerate/test_utils/testing.py", True),
        ("torch/testing/_comparison.py", True),
        ("pkg/test_models.py", True),
        ("pkg/models_test.py", True),
        ("pkg/conftest.py", True),
        ("vllm/config/model.py", False),
        ("pkg/attestation.py", False),
        ("pkg/contest.py", False),
        ("pkg/latest/model.py", False),
        ("pkg/testcase.py", False),
    ],
)
def test_test_code_is_told_by_its_path(path: str, test_code: bool) -> None:
    assert is_test_module(path) is test_code


TESTING_UTILS = """\
import os


def _get_expected_safetensors_files(model, max_shard_size):
    if max_shard_size <= 0:
        raise ValueError(f"max_shard_size must be positive, got {max_shard_size}")
    return [f"model-{i:05d}.safetensors" for i in range(2)]


def check_saved_files(model, folder, max_shard_size="5GB"):
    expected = _get_expected_safetensors_files(model, max_shard_size)
    return sorted(os.listdir(folder)) == expected
"""

OUTPUTS = """\
def check_output_type(output_type):
    if output_type not in ("pil", "np", "pt"):
        raise ValueError(f"output_type must be pil, np or pt, got {output_type!r}")
"""


def test_a_testing_helper_gives_no_site(tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path / "src")
    commit(
        upstream.path,
        {
            "src/diffusers/utils/testing_utils.py": TESTING_UTILS,
            "src/diffusers/utils/outputs.py": OUTPUTS,
        },
        "utils",
    )
    result = CliRunner().invoke(
        main, ["extract", str(upstream.path), "--cache-dir", str(tmp_path / "cache")]
    )
    sites = [json.loads(line) for line in result.stdout.splitlines()]
    assert {(s["filePath"], s["qualname"]) for s in sites} == {
        ("src/diffusers/utils/outputs.py", "check_output_type"),
        ("widgets/config.py", "SchedulerConfig.__post_init__"),
    }
