"""A check that the function's own arguments decide gets the call that passes
(`pipeline/explainers/offline/calls.py`); one that no call decides keeps its comment."""

from __future__ import annotations

import textwrap

import pytest

from pipeline.dataset.models import Site, github_url
from pipeline.explainers.offline import explain_site
from pipeline.explainers.offline.calls import call_inputs
from pipeline.explainers.offline.checks import check_of, read_function
from pipeline.explainers.offline.conditions import parse_guards

SHA = "0123456789abcdef0123456789abcdef01234567"
REPO = "acme/engine"


def site(qualname: str, guards: list[str], source: str, message: str = "rejected") -> Site:
    path = "engine/kernels/layout.py"
    return Site(
        repo=REPO,
        analyzedSha=SHA,
        filePath=path,
        lineNumber=30,
        qualname=qualname,
        validatorKind="name",
        errorClass="ValueError",
        errorMessage=message,
        messagePattern=message,
        messageStatus="literal",
        guards=guards,
        sourceCode="",
        sourceCodeStart=12,
        sourceCodeEnd=48,
        githubUrl=github_url(REPO, SHA, path, 12, 48),
        functionSource=textwrap.dedent(source),
    )


# (function, the guard of its raise, the arguments a caller decides it by)
INPUTS = [
    ("def check(block, width):\n    if block < 0: raise ValueError", "block < 0", ("block",)),
    (
        "def check(rows, group):\n    if rows % group != 0: raise ValueError",
        "rows % group != 0",
        ("rows", "group"),
    ),
    (
        "def check(shape, split):\n    n = len(shape) * split\n    if n > LIMIT: raise ValueError",
        "n > LIMIT",
        ("shape", "split"),
    ),
    (  # a loop's item comes from what it walks, which the caller passes
        "def check(seen, items):\n    for item in items:\n        if item in seen: raise ValueError",
        "item in seen",
        ("seen", "items"),
    ),
    (  # ... unless no argument gives it
        "def check(self, seen):\n    for item in self.items:\n        if item in seen: raise ValueError",
        "item in seen",
        None,
    ),
    ("def check(*sizes):\n    if sizes[0] < 0: raise ValueError", "sizes[0] < 0", None),
    ("def check(self):\n    if self.depth < 0: raise ValueError", "self.depth < 0", None),
    ("def check():\n    if LIMIT < 0: raise ValueError", "LIMIT < 0", None),
    (
        "@model_validator(mode='before')\ndef check(cls, data):\n"
        "    if 'x' in data: raise ValueError",
        "'x' in data",
        None,  # pydantic calls it with what the model is built from
    ),
]


@pytest.mark.parametrize(("source", "guard", "inputs"), INPUTS)
def test_the_arguments_that_decide_a_check(source, guard, inputs):
    function = read_function(site("check", [guard], source))
    (condition,) = parse_guards([guard])
    assert call_inputs(check_of(condition, [], {}, function), function) == inputs


# (qualname, guard, source, example fix)
FIXES = [
    (
        "pad_to",
        "width is None",
        """
        def pad_to(tokens, width=None):
            if width is None:
                raise ValueError("a width is required")
        """,
        "# before\npad_to(..., width=None)\n# after\npad_to(..., width=...)  # a value",
    ),
    (
        "split_heads",
        "heads < 1",
        """
        def split_heads(heads):
            if heads < 1:
                raise ValueError("at least one head")
        """,
        "# before\nsplit_heads(heads=0)\n# after\nsplit_heads(heads=1)",
    ),
    (
        "Tiling.__init__",
        'mode not in ("row", "col")',
        """
        def __init__(self, mode):
            if mode not in ("row", "col"):
                raise ValueError("unknown mode")
        """,
        '# before\nTiling(mode=...)  # not in ("row", "col")\n# after\nTiling(mode="row")',
    ),
    (
        "Tiling.from_spec",
        "not spec",
        """
        @classmethod
        def from_spec(cls, spec):
            if not spec:
                raise ValueError("empty spec")
        """,
        "# before\nTiling.from_spec(spec=None)\n# after\n"
        "Tiling.from_spec(spec=...)  # a non-empty value",
    ),
    (
        "LoRAManager.add_adapter",
        "rank > 64",
        """
        def add_adapter(self, name, rank):
            if rank > 64:
                raise ValueError("rank too large")
        """,
        "# before\nmanager.add_adapter(..., rank=65)\n# after\nmanager.add_adapter(..., rank=64)",
    ),
    (  # the value it is compared with is the function's own: no caller has it
        "check_layers",
        "layers != expected",
        """
        def check_layers(layers, depth):
            expected = ["attention"] * depth
            if layers != expected:
                raise ValueError("layers do not match the depth")
        """,
        "# before\ncheck_layers(layers=..., depth=...)  # expected is computed from depth; "
        "layers differs from expected\n# after\n"
        "check_layers(layers=..., depth=...)  # so that layers equals expected",
    ),
    (  # a value the function computes from its arguments: those arguments
        "check_fit",
        "needed > budget",
        """
        def check_fit(tokens, budget):
            needed = len(tokens) * 2
            if needed > budget:
                raise ValueError("does not fit")
        """,
        "# before\ncheck_fit(tokens=..., budget=...)  # needed is computed from tokens; needed "
        "is greater than budget\n# after\n"
        "check_fit(tokens=..., budget=...)  # so that needed is at most budget",
    ),
    (  # a loop's item: the arguments it comes from
        "check_unique",
        "name in seen",
        """
        def check_unique(names, seen):
            for name in names:
                if name in seen:
                    raise ValueError("duplicate")
        """,
        "# before\ncheck_unique(names=..., seen=...)  # name comes from names; name is in seen\n"
        "# after\ncheck_unique(names=..., seen=...)  # so that name is not in seen",
    ),
    (  # an item of the object's own state: no call decides it, the comment stays
        "Registry.check_unique",
        "name in seen",
        """
        def check_unique(self):
            seen = set()
            for name in self.names:
                if name in seen:
                    raise ValueError("duplicate")
                seen.add(name)
        """,
        "# the error needs: name is in seen\n# fix: make sure name is not in seen",
    ),
]


@pytest.mark.parametrize(("qualname", "guard", "source", "fix"), FIXES)
def test_a_check_on_arguments_gets_the_call_that_passes(qualname, guard, source, fix):
    assert explain_site(site(qualname, [guard], source)).exampleFix == fix


def test_the_solution_says_what_the_caller_passes():
    explanation = explain_site(
        site(
            "check_fit",
            ["needed > budget"],
            """
            def check_fit(tokens, budget):
                needed = len(tokens) * 2
                if needed > budget:
                    raise ValueError("does not fit")
            """,
        )
    )
    assert explanation.solutions == [
        "Call check_fit with `tokens` and `budget` such that needed is at most budget (needed "
        "is computed from tokens in check_fit): they are arguments of check_fit, so the code "
        "that calls it decides; follow the traceback to that call."
    ]


def test_a_flag_the_message_names_and_no_solution_types_is_pointed_to():
    explanation = explain_site(
        site(
            "split_heads",
            ["heads < 1"],
            """
            def split_heads(heads):
                if heads < 1:
                    raise ValueError("at least one head; check --num-heads")
            """,
            message="at least one head; check --num-heads",
        )
    )
    assert explanation.solutions[-1] == (
        "Review the values of --num-heads, which the message names."
    )
