"""Whether a file's parse can give anything, from its text (extractors/text_reach.py): the
case table, and extraction giving the same with the decision as without it."""

from __future__ import annotations

import textwrap

import pytest

import extractors.sites as sites
from extractors.classes import rules_for_file, scan_file
from extractors.facts import Rules
from extractors.segments import split_segments
from extractors.sites import extract_file, split_lines
from extractors.text_reach import TextReach, may_give_results, read_reach


def source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# (case, file, whether its parse may give a site or a call out)
CASES = [
    (
        "a validator raises",
        """
        def check_block_size(size):
            if size % 16:
                raise ValueError(f"block size {size} is not a multiple of 16")
        """,
        True,
    ),
    (
        "a validator reaches a raising helper of the file",
        """
        def _positive(name, value):
            if value <= 0:
                raise ValueError(f"{name} must be positive")


        def check_cache(cfg):
            _positive("cache size", cfg.cache_size)
        """,
        True,
    ),
    (
        "the raise is in a function no validator reaches",
        """
        import json


        def load_weights(path):
            if not path.endswith(".safetensors"):
                raise ValueError(f"unsupported weights file {path}")
            return json.load(open(path))


        def check_dtype(dtype):
            return dtype in ("float16", "bfloat16")
        """,
        False,
    ),
    (
        "a validator calls a function the file imports",
        """
        from .env import to_bool


        def check_flags(flags):
            return to_bool(flags.eager)


        def load_weights(path):
            raise ValueError(f"unsupported weights file {path}")
        """,
        True,
    ),
    (
        "a validator's import is only an annotation",
        """
        from .types import BlockSize


        def check_blocks(size: BlockSize) -> bool:
            return size > 0


        def load_weights(path):
            raise ValueError(f"unsupported weights file {path}")
        """,
        False,
    ),
    (
        "a method reached through self",
        """
        from dataclasses import dataclass


        @dataclass
        class SchedulerConfig:
            max_seqs: int

            def __post_init__(self):
                self._check_seqs()

            def _check_seqs(self):
                if self.max_seqs < 1:
                    raise ValueError("max_seqs must be at least 1")
        """,
        True,
    ),
    (
        "a property a validator reads",
        """
        class CacheConfig:
            def __post_init__(self):
                print(self.blocks)

            @property
            def blocks(self):
                if self.size < 16:
                    raise ValueError("cache too small")
                return self.size // 16
        """,
        True,
    ),
    (
        "a validator by its decorator",
        """
        from pydantic import BaseModel, field_validator


        class Request(BaseModel):
            top_k: int

            @field_validator("top_k")
            @classmethod
            def positive(cls, value):
                if value < -1:
                    raise ValueError("top_k must be -1 or positive")
                return value
        """,
        True,
    ),
    (
        "the __init__ of a configuration class",
        """
        class LoadConfig:
            def __init__(self, fmt):
                if fmt not in ("auto", "pt"):
                    raise ValueError(f"unknown load format {fmt}")
        """,
        True,
    ),
    (
        "the __init__ of another class",
        """
        class WeightLoader:
            def __init__(self, fmt):
                if fmt not in ("auto", "pt"):
                    raise ValueError(f"unknown load format {fmt}")


        def check_format(fmt):
            return fmt
        """,
        False,
    ),
    (
        "a method reached through a member, whose class the __init__ of its owner names",
        """
        from .disk import check_free_space


        class Disk:
            def reserve(self, size):
                return check_free_space(size)


        class Pool:
            def __init__(self, disk: Disk):
                self.disk = disk

            def validate_size(self, size):
                return self.disk.reserve(size)

            def load(self, path):
                raise ValueError(f"cannot load {path}")
        """,
        True,
    ),
    (
        "a raise at module level",
        """
        import sys

        if sys.version_info < (3, 9):
            raise ValueError("Python 3.9 or later is needed")


        def validate_port(port):
            return 0 < port < 65536
        """,
        False,
    ),
    (
        "a string whose line looks like a def: the validator's raise follows it",
        '''
        def check_template(name):
            text = """
        def render():
            pass
        """
            if name not in text:
                raise ValueError(f"no template {name}")
        ''',
        True,
    ),
    (
        "a bracket left open over a line that looks like code",
        """
        def check_shape(shape):
            dims = (
        shape)
            if len(dims) != 2:
                raise ValueError("a matrix is two-dimensional")
        """,
        True,
    ),
]


def decide(text: str, rules: Rules | None = None) -> bool:
    classes = scan_file(text)
    rules = rules_for_file(rules or Rules(), classes)
    raises = sites._hints(rules).raises
    return may_give_results(text, split_segments(split_lines(text)), rules, classes, raises)


@pytest.mark.parametrize(("case", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_may_give_results(case, text, expected):
    assert decide(source(text)) is expected


class DictMemo(dict):
    def put(self, key: str, value: str) -> None:
        self[key] = value


@pytest.mark.parametrize(("case", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_extraction_is_the_same_with_the_decision_as_without(monkeypatch, case, text, expected):
    text = source(text)
    # with a memo, a file that can give only call outs has only its reached segments parsed
    decided = extract_file("pkg/mod.py", text, Rules(), DictMemo())
    monkeypatch.setattr(sites, "read_reach", lambda *args: TextReach(True))
    parsed = extract_file("pkg/mod.py", text, Rules())
    assert decided == parsed
    # the table's cases are exact: a yes is a site or a call out
    assert bool(parsed.sites or parsed.calls_out) is expected


def test_every_function_counts_with_the_all_scope():
    text = source(CASES[2][1])
    assert decide(text) is False
    assert decide(text, Rules(scope="all")) is True


def test_a_file_that_can_give_only_call_outs_has_only_its_reached_segments_parsed():
    text = source(CASES[10][1])
    classes = scan_file(text)
    rules = rules_for_file(Rules(), classes)
    segments = split_segments(split_lines(text))
    reach = read_reach(text, segments, rules, classes, sites._hints(rules).raises)
    assert reach.gives
    # Disk.reserve, Pool.__init__ (the member's type) and Pool.validate_size; not Pool.load
    kept = sorted(segments[index].text.split("(")[0].strip() for index in reach.segments)
    assert kept == ["def __init__", "def reserve", "def validate_size"]
    extraction = extract_file("pkg/mod.py", text, Rules(), DictMemo())
    assert extraction.calls_out == [".disk:check_free_space"]
