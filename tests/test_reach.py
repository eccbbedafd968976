"""Validators followed into other files of the repository through imports: the import table's
cases, and small repositories in the style of accelerate and DeepSpeed."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from extractors.facts import Rules
from extractors.imports import _import_starts, imported, raising_functions
from extractors.sites import extract_file
from pipeline.cli import main
from tests.git_fixtures import commit, make_upstream


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("from .environment import str_to_bool", {"str_to_bool": (".environment", "str_to_bool")}),
        ("from pkg.folding import build_spec as build", {"build": ("pkg.folding", "build_spec")}),
        ("from .. import folding", {"folding": ("..", "folding")}),
        ("import pkg.folding as folding", {"folding": ("pkg.folding", None)}),
        ("import os", {}),
        ("from pkg import *", {}),
        (
            "    from .imports import (\n        is_torch_version,\n        is_npu_available,\n    )",
            {
                "is_torch_version": (".imports", "is_torch_version"),
                "is_npu_available": (".imports", "is_npu_available"),
            },
        ),
        ("from .a import \\\n    b", {"b": (".a", "b")}),
    ],
)
def test_the_imports_of_a_file_are_read_from_its_text(statement, expected):
    assert imported(f"x = 1\n{statement}\n") == expected


# The line of an import statement, as the `^` regex over the whole text found it.
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+[.\w]+[ \t]+import\b|import[ \t]+\w)", re.MULTILINE)


_IMPORT_PIECES = ["import ", "from ", "a", ".", " ", "\t", "\n", "\r", "#", "importx"]


@given(st.lists(st.sampled_from(_IMPORT_PIECES), max_size=30).map("".join))
def test_import_lines_are_those_a_line_anchored_regex_finds(source):
    assert _import_starts(source) == [match.start() for match in _IMPORT_LINE.finditer(source)]


CALLER = """
import os
from dataclasses import dataclass

from .environment import str_to_bool
from . import folding
import pkg.limits as limits


def _local(value):
    return value


@dataclass
class Plugin:
    def __post_init__(self):
        if self.world_size < 1:
            raise ValueError("world_size must be positive")
        self.fullgraph = str_to_bool(os.environ.get("USE_FULLGRAPH", "False"))
        folding.build_spec(world_size=self.world_size)
        limits.check_world(self.world_size)
        _local(self.world_size)
        len(self.name)
"""


def test_a_validator_s_calls_through_imports_are_recorded():
    extraction = extract_file("pkg/dataclasses.py", CALLER, Rules())
    assert extraction.calls_out == [
        ".environment:str_to_bool",
        ".folding:build_spec",
        "pkg.limits:check_world",
    ]


def test_no_call_out_without_a_validator():
    source = "from .environment import str_to_bool\n\ndef parse(v):\n    return str_to_bool(v)\n"
    assert extract_file("pkg/cli.py", source, Rules()).calls_out == []


def test_a_function_that_may_raise_is_told_by_its_block():
    source = textwrap.dedent(
        """
        def str_to_bool(value, to_bool: bool = False) -> int | bool:
            value = value.lower()
            if value in ("y", "yes", "1"):
                return 1
            raise ValueError(f"invalid truth value {value}")


        def get_int_from_env(
            env_keys, default
        ) -> int:
            return default
        # a comment at column 0
        raise_count = 0
        """
    )
    names = ["str_to_bool", "get_int_from_env", "missing"]
    assert raising_functions(source, names, ("ValueError",)) == {"str_to_bool"}
    assert raising_functions(source, names, ("TypeError",)) == set()


ENVIRONMENT = '''\
def str_to_bool(value, to_bool: bool = False) -> int | bool:
    """Converts a string representation of truth to `True` (1) or `False` (0)."""
    value = value.lower()
    if value in ("y", "yes", "t", "true", "on", "1"):
        return 1 if not to_bool else True
    elif value in ("n", "no", "f", "false", "off", "0"):
        return 0 if not to_bool else False
    else:
        raise ValueError(f"invalid truth value {value}")


def parse_flag_from_env(key, default=False):
    return str_to_bool(os.environ.get(key, str(default))) == 1
'''

UTILS_INIT = """\
from .environment import parse_flag_from_env, str_to_bool
"""

DATACLASSES = """\
import os
from dataclasses import dataclass

from .environment import str_to_bool


@dataclass
class MegatronLMPlugin:
    use_distributed_optimizer: bool = False
    num_micro_batches: int = 1

    def __post_init__(self):
        if self.num_micro_batches < 1:
            raise ValueError("num_micro_batches must be at least 1")
        prefix = "MEGATRON_LM_"
        self.use_distributed_optimizer = (
            str_to_bool(os.environ.get(prefix + "USE_DISTRIBUTED_OPTIMIZER", "False")) == 1
        )
"""

LAUNCH = """\
import os

from ..utils import str_to_bool


class LaunchArgs:
    def _check_mixed_precision(self):
        if self.mixed_precision not in ("no", "fp16", "bf16"):
            raise ValueError(f"Unknown mixed_precision mode: {self.mixed_precision}")
        if str_to_bool(os.environ.get("ACCELERATE_USE_FP16", "0")):
            self.mixed_precision = "fp16"
"""

AUTO_EP_CONFIG = """\
from deepspeed.module_inject.auto_ep_folding import build_folding_spec


def validate_autoep_config(config, world_size, pp_size, tp_size):
    if not isinstance(config.async_split_plan, bool):
        raise ValueError("expert_parallel.async_split_plan must be a boolean")
    build_folding_spec(world_size=world_size, pp_size=pp_size, tp_size=tp_size)
"""

AUTO_EP_FOLDING = """\
from deepspeed.module_inject.sizes import divides


def _divisors(value):
    return [candidate for candidate in range(1, value + 1) if value % candidate == 0]


def build_folding_spec(*, world_size, pp_size, tp_size):
    if world_size % pp_size != 0:
        raise ValueError(f"pp_size={pp_size} must divide world_size={world_size}. "
                         f"Valid pp_size values: {_divisors(world_size)}")
    divides(tp_size, world_size // pp_size)
    return world_size // pp_size // tp_size


def unrelated(x):
    raise ValueError("not reached from any validator")
"""

SIZES = """\
def divides(part, whole):
    if whole % part != 0:
        raise ValueError(f"{part} must divide {whole}")
"""


def _extract(tmp_path: Path, files: dict[str, str], *args: str):
    upstream = make_upstream(tmp_path / "src")
    commit(upstream.path, files, "files")
    result = CliRunner().invoke(
        main, ["extract", str(upstream.path), "--cache-dir", str(tmp_path / "cache"), *args]
    )
    result.source = str(upstream.path)
    assert result.exit_code == 1, result.output  # the fixture's broken.py is skipped
    return result, {
        (site["filePath"], site["lineNumber"], site["qualname"], site["validatorKind"])
        for site in map(json.loads, result.stdout.splitlines())
        if not site["filePath"].startswith("widgets/")
    }


ACCELERATE = {
    "src/accelerate/utils/environment.py": ENVIRONMENT,
    "src/accelerate/utils/__init__.py": UTILS_INIT,
    "src/accelerate/utils/dataclasses.py": DATACLASSES,
    "src/accelerate/commands/launch.py": LAUNCH,
    "src/accelerate/__init__.py": "",
    "src/accelerate/commands/__init__.py": "",
}


def test_a_helper_of_another_file_is_reached_through_its_import(tmp_path):
    files = {**ACCELERATE, "src/accelerate/commands/launch.py": "x = 1\n"}
    _, sites = _extract(tmp_path, files)
    assert sites == {
        ("src/accelerate/utils/dataclasses.py", 14, "MegatronLMPlugin.__post_init__", "post_init"),
        ("src/accelerate/utils/environment.py", 9, "str_to_bool", "reached"),
    }


def test_a_re_export_is_followed_to_the_file_that_defines_the_function(tmp_path):
    files = {**ACCELERATE, "src/accelerate/utils/dataclasses.py": "x = 1\n"}
    _, sites = _extract(tmp_path, files)
    assert sites == {
        ("src/accelerate/commands/launch.py", 9, "LaunchArgs._check_mixed_precision", "name"),
        ("src/accelerate/utils/environment.py", 9, "str_to_bool", "reached"),
    }


DEEPSPEED = {
    "deepspeed/__init__.py": "",
    "deepspeed/module_inject/__init__.py": "",
    "deepspeed/module_inject/auto_ep_config.py": AUTO_EP_CONFIG,
    "deepspeed/module_inject/auto_ep_folding.py": AUTO_EP_FOLDING,
    "deepspeed/module_inject/sizes.py": SIZES,
}


def test_what_a_reached_helper_calls_in_a_third_file_is_reached_too(tmp_path):
    _, sites = _extract(tmp_path, DEEPSPEED)
    assert sites == {
        ("deepspeed/module_inject/auto_ep_config.py", 6, "validate_autoep_config", "name"),
        ("deepspeed/module_inject/auto_ep_folding.py", 10, "build_folding_spec", "reached"),
        ("deepspeed/module_inject/sizes.py", 3, "divides", "reached"),
    }


def test_calls_across_files_are_not_followed_with_no_follow_calls(tmp_path):
    _, sites = _extract(tmp_path, DEEPSPEED, "--no-follow-calls")
    assert sites == {
        ("deepspeed/module_inject/auto_ep_config.py", 6, "validate_autoep_config", "name")
    }


def test_a_second_run_reuses_every_analysis_and_prints_the_same_bytes(tmp_path):
    first, _ = _extract(tmp_path, DEEPSPEED)
    again = CliRunner().invoke(
        main,
        ["extract", first.source, "--cache-dir", str(tmp_path / "cache")],
    )
    assert again.stdout == first.stdout
    assert "parsed=0 reused=" in again.stderr
