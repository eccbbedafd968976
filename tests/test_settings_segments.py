"""A file's settings facts assembled by segment (extractors/settings_segments.py) are the
whole file's (`file_settings`), whatever the memo holds, and an edit elsewhere in the file
leaves a class's parts and its calls to be read from the memo."""

from __future__ import annotations

import ast

import pytest

from extractors.callers import _functions
from extractors.facts import Rules
from extractors.settings import file_settings
from extractors.settings_segments import segmented_settings

RULES = Rules()

CONFIG = '''\
"""Scheduler settings."""

from dataclasses import dataclass, field
from typing import Literal

Policy = Literal["fcfs", "priority"]
DEFAULT_MAX_SEQS = 256
KNOWN_BACKENDS = ["ray", "mp"]


def _verify_positive(name: str, value: int) -> None:
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


@dataclass
class SchedulerConfig:
    """How requests are batched."""

    max_num_seqs: int = DEFAULT_MAX_SEQS
    """The most sequences in one batch."""
    policy: Policy = "fcfs"
    chunk_sizes: list[int] = field(default_factory=list)  # per stage

    def __post_init__(self) -> None:
        _verify_positive("max_num_seqs", self.max_num_seqs)
        self._verify_policy(self.policy)

    def _verify_policy(self, policy: str) -> None:
        if policy not in ("fcfs", "priority"):
            raise ValueError(f"unknown policy {policy}")


@dataclass
class CacheConfig:
    block_size: int = 16
    swap_space: float = 4.0

    def verify(self) -> None:
        _verify_positive("block_size", self.block_size)
'''

# the same module a release later: a constant added above, CacheConfig changed, the rest moved
EDITED = CONFIG.replace(
    "KNOWN_BACKENDS = [",
    'LEGACY = "v0"\nKNOWN_BACKENDS = [',
).replace(
    "    swap_space: float = 4.0\n",
    "    swap_space: float = 8.0\n    prefix_caching: bool = True\n",
)


class CountingMemo(dict):
    def __init__(self) -> None:
        super().__init__()
        self.hits = 0

    def get(self, key: str, default: str | None = None) -> str | None:
        found = super().get(key, default)
        self.hits += found is not None
        return found

    def put(self, key: str, value: str) -> None:
        self[key] = value


def validators_of(tree: ast.Module) -> dict:
    """The functions whose text raises, as the site pass would hand them over."""
    return {q: n for q, _, n in _functions(tree) if "raise" in ast.unparse(n)}


def test_an_edit_elsewhere_keeps_the_unchanged_classes_from_the_memo() -> None:
    memo = CountingMemo()
    assert segmented_settings(CONFIG, RULES, memo) == file_settings(CONFIG)
    assert memo.hits == 0 and memo
    edited = segmented_settings(EDITED, RULES, memo)
    assert edited == file_settings(EDITED)
    # the function, SchedulerConfig and its calls are read back; CacheConfig is made again
    assert memo.hits == 3
    fields = {c.name: [(f.name, f.line) for f in c.fields] for c in edited.classes}
    assert fields["SchedulerConfig"][0] == ("max_num_seqs", 21)  # one line down (20 before)
    assert ("prefix_caching", 39) in fields["CacheConfig"]


def test_the_whole_files_parse_and_its_validators_give_the_same_facts() -> None:
    memo = CountingMemo()
    for source in (CONFIG, EDITED):
        tree = ast.parse(source)
        validators = validators_of(tree)
        assert segmented_settings(source, RULES, memo, tree, validators) == file_settings(
            source, tree, validators
        )
    assert memo.hits == 3


# Files whose facts are not cut by segment, or whose segments do not stand alone: the whole
# file's facts, as before.
WHOLE = [
    # builds a parser: the flags read the module's constants
    CONFIG + '\n\ndef make_parser(parser):\n    parser.add_argument("--max-num-seqs", type=int)\n',
    # reads the environment at module level
    CONFIG + '\nimport os\nPORT = os.getenv("SCHEDULER_PORT", "8000")\n',
    # a continuation line at column 0 inside a function: its segment does not parse alone
    CONFIG + "\n\ndef total(a, b):\n    return sum(\n[a, b])\n",
    # one qualname defined twice, in two segments: the last definition's parameters count
    CONFIG + "\n\ndef _verify_positive(value):\n    raise ValueError(value)\n",
    # code after a def in its segment (a line opening with a bracket does not cut it)
    CONFIG + '\n\ndef noop():\n    pass\n(MODES, LIMIT) = (["a", "b"], 3)\nNAMES = ["x"]\n',
    # Windows line ends
    CONFIG.replace("\n", "\r\n"),
]


@pytest.mark.parametrize("source", WHOLE)
def test_files_not_cut_by_segment_keep_the_whole_files_facts(source: str) -> None:
    memo = CountingMemo()
    assert segmented_settings(source, RULES, memo) == file_settings(source)
    assert segmented_settings(source, RULES, memo) == file_settings(source)


def test_no_python_raises_as_the_whole_file_does() -> None:
    broken = CONFIG + "\n\nclass Broken(:\n    pass\n"
    with pytest.raises(SyntaxError):
        file_settings(broken)
    with pytest.raises(SyntaxError):
        segmented_settings(broken, RULES, CountingMemo())


def test_without_a_memo_the_whole_file_is_read() -> None:
    assert segmented_settings(CONFIG, RULES, None) == file_settings(CONFIG)
