"""A reproducer states the environment verify ran it in (pipeline/verify/stated.py)."""

import subprocess
import sys

import pytest

from pipeline.verify.stated import stated_variables, with_environment

CODE = "# vmine verify: acme/config.py:12 (acme 1.0)\n# its command line: --x 1\nimport os\nprint(os.environ['CUDA_VISIBLE_DEVICES'] == '')\n"


def test_the_workers_variables_and_the_users_are_stated():
    variables = stated_variables({"VLLM_TARGET_DEVICE": "cpu"})
    assert variables["CUDA_VISIBLE_DEVICES"] == ""
    assert variables["HF_HUB_OFFLINE"] == "1"
    assert variables["VLLM_TARGET_DEVICE"] == "cpu"
    assert "PYTHONUNBUFFERED" not in variables  # read before any program runs


def test_they_come_after_the_opening_comments_and_before_the_rest():
    stated = with_environment(CODE, {"CUDA_VISIBLE_DEVICES": ""})
    lines = stated.splitlines()
    assert lines[:2] == CODE.splitlines()[:2]
    assert lines[3] == "os.environ.update({'CUDA_VISIBLE_DEVICES': ''})"
    assert lines[4:] == CODE.splitlines()[2:]


@pytest.mark.parametrize("code", [None, ""])
def test_nothing_to_state_in(code):
    assert with_environment(code, {"A": "1"}) == code


def test_stated_once():
    once = with_environment(CODE, {"A": "1"})
    assert with_environment(once, {"A": "1"}) == once


def test_run_alone_the_program_sees_them():
    done = subprocess.run(
        [sys.executable, "-c", with_environment(CODE, stated_variables())],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.stdout.strip() == "True"
