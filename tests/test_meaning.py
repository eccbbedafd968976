"""The explanation cache key follows a site's meaning: the raise and what encloses it, not
the function's other lines or other raises (extractors/meaning.py, pipeline/keys.py)."""

from __future__ import annotations

import textwrap

import pytest

from extractors.facts import Rules
from extractors.meaning import raise_meaning
from extractors.sites import extract_file
from pipeline.dataset.models import Site
from pipeline.keys import explanation_key

SHA = "0123456789abcdef0123456789abcdef01234567"

BASE = """\
class CacheConfig:
    def __post_init__(self) -> None:
        # Sizes are in GiB.
        total = self.swap_space + self.cpu_offload
        if self.block_size % 16:
            raise ValueError("block_size must be a multiple of 16")
        for size in self.sizes:
            if size <= 0:
                raise ValueError(f"every size must be positive, got {size}")
"""


def keys(source: str, whole_function: bool = False) -> dict[str, str]:
    """The cache key of each site of `source`, by its message."""
    extraction = extract_file("engine/cache.py", textwrap.dedent(source), Rules())
    sites = [Site.place(raw, "acme/engine", SHA) for raw in extraction.sites]
    return {
        site.errorMessage: explanation_key("m", "p", site, whole_function=whole_function)
        for site in sites
    }


BLOCK = "block_size must be a multiple of 16"
SIZE = "every size must be positive, got {size}"

# (case, how the function is edited, the messages whose key must stay the same)
EDITS = [
    (
        "an unrelated line changes",
        ("total = self.swap_space + self.cpu_offload", "total = self.swap_space * 2"),
        {BLOCK, SIZE},
    ),
    ("a comment changes", ("# Sizes are in GiB.", "# Sizes are in MiB now."), {BLOCK, SIZE}),
    (
        "lines are added above",
        ("        # Sizes", "        self.check()\n        # Sizes"),
        {BLOCK, SIZE},
    ),
    ("the other raise is reworded", ("got {size}", "got {size!r}"), {BLOCK}),
    (
        "the raise is reformatted",
        (
            'raise ValueError("block_size must be a multiple of 16")',
            'raise ValueError(\n                "block_size must be a '
            'multiple of 16"\n            )',
        ),
        {BLOCK, SIZE},
    ),
    ("the raise gains a cause", ('multiple of 16")', 'multiple of 16") from None'), {SIZE}),
    ("the loop walks something else", ("in self.sizes", "in self.block_sizes"), {BLOCK}),
    # the LLM is not told of the earlier checks (priorChecks): adding one asks nothing again
    (
        "an earlier check is added",
        (
            "        for size",
            "        if not self.sizes:\n            raise TypeError('no sizes')\n        for size",
        ),
        {BLOCK, SIZE},
    ),
]


@pytest.mark.parametrize(("case", "edit", "same"), EDITS, ids=[e[0] for e in EDITS])
def test_a_key_changes_only_with_the_meaning_of_its_raise(case, edit, same):
    before = keys(BASE)
    after = keys(BASE.replace(*edit))
    assert len(after) == len(before) == 2
    assert {message for message in before if after.get(message) == before[message]} == same


@pytest.mark.parametrize(("case", "edit", "same"), EDITS, ids=[e[0] for e in EDITS])
def test_an_explainer_that_reads_the_whole_function_is_keyed_by_it(case, edit, same):
    # The offline explainer counts the function's other checks: any edit of the function
    # asks it again, so a cached explanation is always the one a cold run would write.
    before = keys(BASE, whole_function=True)
    after = keys(BASE.replace(*edit), whole_function=True)
    assert not set(before.values()) & set(after.values())


# (source, the raise's line, its meaning)
MEANINGS = [
    ("def f(x):\n    raise ValueError('x')", 1, ["raise ValueError('x')"]),
    (
        "def f(x):\n    if x:\n        pass\n    else:\n        raise ValueError('x')",
        4,
        ["raise ValueError('x')", "if x: orelse"],
    ),
    (
        "def f(x):\n    try:\n        g(x)\n    except (KeyError, IndexError) as exc:\n"
        "        raise ValueError('x') from exc",
        4,
        ["raise ValueError('x') from exc", "except (KeyError, IndexError) as exc"],
    ),
    (
        "def f(x):\n    with lock:\n        while x > 0:\n            raise ValueError('x')",
        3,
        ["raise ValueError('x')", "while x > 0: body", "with lock"],
    ),
    (
        "def f(x):\n    match x:\n        case [a, *_] if a < 0:\n            raise ValueError('x')",
        3,
        ["raise ValueError('x')", "case [a, *_] if a < 0", "match x"],
    ),
    ("def f(x):\n    pass", 1, None),  # no raise on that line
    ("def f(x):\n    print 'py2'", 1, None),  # does not parse
]


@pytest.mark.parametrize(("source", "line", "meaning"), MEANINGS)
def test_the_meaning_of_a_raise(source, line, meaning):
    assert raise_meaning(source, line) == meaning
