"""The memo below file level: top-level segments, and memo-backed extraction giving exactly
what extraction without a memo gives (extractors/segments.py, extractors/sites.py)."""

from __future__ import annotations

import json
import random
import textwrap

import pytest

from extractors.facts import Rules
from extractors.segments import split_segments
from extractors.sites import extract_file, split_lines


class DictMemo:
    """A memo in a dict that records which keys were asked for, found and stored."""

    def __init__(self) -> None:
        self.entries: dict[str, str] = {}
        self.hits: list[str] = []
        self.misses: list[str] = []
        self.puts: list[str] = []

    def get(self, key: str) -> str | None:
        value = self.entries.get(key)
        (self.hits if value is not None else self.misses).append(key)
        return value

    def put(self, key: str, value: str) -> None:
        self.puts.append(key)
        self.entries[key] = value

    def forget_calls(self) -> None:
        self.hits, self.misses, self.puts = [], [], []


def source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def cut(text: str) -> list[tuple[int, int, str | None]]:
    return [(s.start, s.end, s.owner) for s in split_segments(split_lines(source(text)))]


# (case, source, (first line, last line, owner class) of each segment)
SPLITS = [
    (
        "module code first, then each def; decorators join their def",
        """
        '''Limits of the scheduler.

        Checked when the config is built.
        '''
        import os

        LIMIT = 8


        @functools.cache
        @register(
            "limits",
        )
        def check_limit(n):
            if n > LIMIT:
                raise ValueError("too many")


        async def validate_remote(url):
            pass
        """,
        [(1, 9, None), (10, 18, None), (19, 20, None)],
    ),
    (
        "a black-style signature closes at column 0 inside its def",
        """
        def validate_pair(
            low: int,
            high: int,
        ) -> None:
            pass
        """,
        [(1, 5, None)],
    ),
    (
        "code after a def forms its own segment; `else:` continues the statement above",
        """
        def check_a(x):
            pass
        if os.environ.get("STRICT"):
            LEVEL = 2
        else:
            LEVEL = 1
        __all__ = ["check_a"]
        """,
        [(1, 2, None), (3, 7, None)],
    ),
    (
        "a class: header with fields, then each member, decorators with their member",
        """
        @dataclass
        class CacheConfig:
            '''Sizes of the KV cache.'''

            block_size: int = 16

            def __post_init__(self):
                self._verify()

            # shared by the checks below
            @staticmethod
            def _verify_size(n):
                if n <= 0:
                    raise ValueError("size must be positive")

            swap_space: float = 4.0
        """,
        [(1, 6, None), (7, 10, "CacheConfig"), (11, 15, "CacheConfig"), (16, 16, "CacheConfig")],
    ),
    (
        "a class whose first member follows its `class` line at once; a nested class is a member",
        """
        class Placement(
            Base,
        ):
            def check(self):
                pass
        class Ring:
            def verify(self):
                pass

            class Slot:
                def validate(self):
                    pass
        """,
        [(1, 3, None), (4, 5, "Placement"), (6, 6, None), (7, 9, "Ring"), (10, 12, "Ring")],
    ),
    (
        "defs under `if TYPE_CHECKING:` stay in the code segment around them",
        """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            def check_type(x):
                pass
        else:
            def check_type(x):
                pass
        def validate(x):
            check_type(x)
        """,
        [(1, 8, None), (9, 10, None)],
    ),
    (
        "a string at column 0 cuts where no statement starts (the parse notices)",
        """
        def usage():
            return '''
        class Example:
            pass
        '''
        """,
        [(1, 2, None), (3, 5, None)],
    ),
]


@pytest.mark.parametrize("name, text, expected", SPLITS, ids=[case[0] for case in SPLITS])
def test_segments_cut_at_top_level_statements(name, text, expected):
    assert cut(text) == expected


def test_segments_hold_every_line_once():
    text = source(SPLITS[3][1])
    segments = split_segments(split_lines(text))
    assert "".join(segment.text for segment in segments) == text


def test_an_empty_file_has_no_segments():
    assert split_segments([]) == []


CONFIG = source(
    '''
    """Scheduler settings."""
    from dataclasses import dataclass

    MAX_SEQS = 1024


    @dataclass
    class SchedulerConfig:
        max_num_seqs: int = 128
        policy: str = "fcfs"

        def __post_init__(self):
            if self.max_num_seqs <= 0:
                raise ValueError("max_num_seqs must be positive")
            self._verify_policy()

        def _verify_policy(self):
            if self.policy not in ("fcfs", "priority"):
                raise ValueError(f"unknown policy {self.policy!r}")

        def describe(self):
            return f"{self.policy}/{self.max_num_seqs}"


    def validate_limit(n):
        msg = "limit too high"
        if n > MAX_SEQS:
            raise ValueError(msg)
    '''
)


def _kinds(keys: list[str]) -> list[str]:
    return [key.split(":")[0] for key in keys]


def test_an_edit_reuses_the_unchanged_segments_and_functions():
    memo = DictMemo()
    plain = extract_file("pkg/sched.py", CONFIG, Rules())
    assert extract_file("pkg/sched.py", CONFIG, Rules(), memo) == plain
    # first sight: every segment and validator is missed, parsed and stored
    assert memo.hits == []
    assert _kinds(memo.puts) == ["segment"] * 6 + ["function"] * 3

    edited = CONFIG.replace("limit too high", "limit above MAX_SEQS").replace(
        '"""Scheduler settings."""', '"""Scheduler settings."""\n'
    )
    memo.forget_calls()
    result = extract_file("pkg/sched.py", edited, Rules(), memo)
    assert result == extract_file("pkg/sched.py", edited, Rules())
    assert [site.lineNumber for site in result.sites] == [15, 20, 29]
    # the head and validate_limit changed; the class's four segments and its two
    # validators are reused, with their lines shifted by one
    assert _kinds(memo.hits) == ["segment"] * 4 + ["function"] * 2
    assert _kinds(memo.misses) == ["segment", "segment", "function"]
    assert _kinds(memo.puts) == ["segment", "segment", "function"]


def test_the_same_file_again_parses_nothing():
    memo = DictMemo()
    extract_file("pkg/sched.py", CONFIG, Rules(), memo)
    memo.forget_calls()
    again = extract_file("other/place.py", CONFIG, Rules(), memo)
    assert again == extract_file("other/place.py", CONFIG, Rules())
    assert memo.misses == [] and memo.puts == []


def test_calls_missing_from_an_entry_are_parsed_and_stored():
    helper = source(
        """
        def normalize(cfg):
            positive_size(cfg.size)


        def positive_size(n):
            if n <= 0:
                raise ValueError("must be positive")
        """
    )
    memo = DictMemo()
    # here nothing calls normalize: it is no validator and its calls are never read (the
    # whole file is parsed all the same: its validator raises)
    alone = helper + "\n\ndef validate(cfg):\n    if not cfg:\n        raise ValueError('empty')\n"
    first = extract_file("a.py", alone, Rules(), memo)
    assert [site.qualname for site in first.sites] == ["validate"]
    normalize_key = memo.puts[0]
    assert json.loads(memo.entries[normalize_key])[0][-1] is None

    caller = helper + "\n\ndef validate(cfg):\n    normalize(cfg)\n"
    memo.forget_calls()
    result = extract_file("b.py", caller, Rules(), memo)
    assert result == extract_file("b.py", caller, Rules())
    assert [(site.qualname, site.validatorKind) for site in result.sites] == [
        ("positive_size", "reached")
    ]
    # normalize's segment came from the memo; its calls were needed, so it was parsed
    # again and stored with them
    assert normalize_key in memo.hits and normalize_key in memo.puts
    assert json.loads(memo.entries[normalize_key])[0][-1] == [
        [],
        ["positive_size"],
        [],
        [],
        [],
        [],
        [],
    ]


def test_a_segment_that_does_not_parse_alone_falls_back_to_the_whole_file():
    text = source(
        '''
        TEMPLATE = """
        def check_template(x):
            raise ValueError("not a real function")
        """


        def check_value(x):
            if x < 0:
                raise ValueError("negative")
        '''
    )
    memo = DictMemo()
    result = extract_file("t.py", text, Rules(), memo)
    assert result == extract_file("t.py", text, Rules())
    assert [site.qualname for site in result.sites] == ["check_value"]
    # the cut is not at statements: no segment of this file is remembered
    assert _kinds(memo.puts) == ["function"]
    memo.forget_calls()
    assert extract_file("t.py", text, Rules(), memo) == result


def test_a_syntax_error_is_reported_as_without_a_memo():
    text = CONFIG.replace("def describe(self):", "def describe(self)")
    memo = DictMemo()
    extract_file("pkg/sched.py", CONFIG, Rules(), memo)
    with_memo = extract_file("pkg/sched.py", text, Rules(), memo)
    assert with_memo == extract_file("pkg/sched.py", text, Rules())
    assert with_memo.skipped == "syntax error at line 21: expected ':'"


# --- random edits: memo-backed extraction equals extraction without a memo -------------

FILES = [
    CONFIG,
    source(
        '''
        import builtins


        class ParallelConfig:
            """How the model is split."""

            tp: int = 1
            pp: int = 1

            @model_validator(mode="after")
            def _check_sizes(self):
                if self.tp * self.pp > 64:
                    raise ValueError(f"tp*pp={self.tp * self.pp} exceeds 64")
                for size in (self.tp, self.pp):
                    if size < 1:
                        raise builtins.ValueError("sizes start at 1")
                return self

            class Placement:
                def verify(self, n):
                    if n % 2:
                        raise ValueError("odd placement")


        def check_world(world, cfg):
            def check_rank(rank):
                if rank >= world:
                    raise ValueError(f"rank {rank} out of range")
            for rank in range(cfg.tp):
                check_rank(rank)
        '''
    ),
    source(
        """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            def validate_typed(x):
                if not x:
                    raise ValueError("empty")
        else:
            def validate_typed(x):
                if x is None:
                    raise ValueError("missing")


        @field_validator("name")
        @classmethod
        def _name_ok(cls, value):
            if not value.isidentifier():
                raise ValueError(
                    "name must be an identifier, "
                    f"got {value!r}"
                )
            return value
        """
    ),
]


def _edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    where = rng.randrange(len(lines))
    choice = rng.randrange(3)
    if choice == 0:  # a blank line
        lines.insert(where, "")
    elif choice == 1:  # a function's message changes
        raises = [i for i, line in enumerate(lines) if 'ValueError("' in line]
        if raises:
            index = rng.choice(raises)
            lines[index] = lines[index].replace('ValueError("', 'ValueError("edited: ')
    else:  # a statement appears in a function
        defs = [i for i, line in enumerate(lines) if line.lstrip().startswith("def ")]
        index = rng.choice(defs)
        indent = len(lines[index]) - len(lines[index].lstrip()) + 4
        lines.insert(index + 1, " " * indent + "_seen = True")
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(8))
def test_random_edits_give_what_extraction_without_a_memo_gives(seed):
    rng = random.Random(seed)
    memo = DictMemo()
    for number, original in enumerate(FILES):
        text = original
        for _ in range(6):
            path = f"pkg/file{number}.py"
            assert extract_file(path, text, Rules(), memo) == extract_file(path, text, Rules())
            text = _edit(text, rng)
