"""A target module that imports a module not installed in its environment (an optional
dependency): verify's worker makes that module a stand-in and imports it again, and the
reproducer of a site verified so starts with the same stand-ins, so that it raises its
message when run alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pipeline.verify.run import VerifyOptions, verify_dataset
from tests.verify_fixture import mined_fixture

VIDEO = textwrap.dedent(
    """
    import vmine_absent_codec as codec
    from vmine_absent_codec.transforms import Resize


    class Clip(codec.Stream):
        @codec.register("clip")
        def check_frames(self, frames: int, size: Resize | None = None) -> None:
            if frames > 600:
                raise ValueError(f"a clip holds at most 600 frames, got {frames}")
    """
).lstrip()


@pytest.fixture(scope="module")
def verified(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("absent")
    dataset, installed = mined_fixture(tmp_path, {"acme/__init__.py": "", "acme/video.py": VIDEO})
    options = VerifyOptions(python=sys.executable, jobs=1, environ={"PYTHONPATH": str(installed)})
    return installed, verify_dataset(dataset, options)


def test_a_module_not_installed_is_a_stand_in(verified):
    _, outcome = verified
    (item,) = outcome.verifications
    assert item.outcome == "verified"
    assert item.message == "a clip holds at most 600 frames, got 601"
    assert "absent(['vmine_absent_codec'])" in item.reproducer


def test_the_reproducer_brings_its_stand_ins_when_run_alone(verified):
    installed, outcome = verified
    (item,) = outcome.verifications
    done = subprocess.run(
        [sys.executable, "-c", item.reproducer],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
    )
    assert done.stderr.rstrip().splitlines()[-1] == f"ValueError: {item.message}"
