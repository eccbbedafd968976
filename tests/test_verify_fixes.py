"""What an exampleFix changes (pipeline/verify/fixes.py), by the forms records hold."""

from __future__ import annotations

import pytest

from pipeline.dataset.models import Setting
from pipeline.verify.fixes import Change, fix_changes


def _setting(expr: str, flag: str, default: str | None = None) -> Setting:
    return Setting(expr=expr, cls="C", field=expr.rsplit(".", 1)[-1], type=None,
                   default=default, choices=None, doc=None, flags=[flag])  # fmt: skip


SETTINGS = [
    _setting("self.nnodes", "--nnodes", "1"),
    _setting("args.enforce_eager", "--enforce-eager", "False"),
    _setting("self.spec", "--speculative-config"),
]

CASES = [
    ("# before\n--nnodes 2\n# after\n--nnodes 1", [Change("self.nnodes", "1")]),
    ("# before\nvllm serve M\n# after\nvllm serve M --enforce-eager",
     [Change("args.enforce_eager", "True")]),
    ("# before\n--enforce-eager\n# after\n# (without --enforce-eager)",
     [Change("args.enforce_eager", "False")]),
    ("# before\n-\n# after\n--speculative-config '{\"n\": 2}'",
     [Change("self.spec", "{'n': 2}")]),
    ("# before\ncfg.rope = ...\n# after\ncfg.rope = None", [Change("cfg.rope", "None")]),
    ("# before\nC(nnodes=2)\n# after\nC(nnodes=1)", [Change("self.nnodes", "1")]),
    ("# before\n--nnodes 2\n# after\n--nnodes <value>", None),  # a placeholder
    ("# the error needs: x > 1\n# fix: make sure x is at most 1", None),  # a sentence
]  # fmt: skip


@pytest.mark.parametrize(("fix", "expected"), CASES)
def test_fix_changes(fix, expected):
    assert fix_changes(fix, SETTINGS) == expected


@pytest.mark.parametrize(
    ("parsed", "meant", "same"),
    [
        ("1", "1", True),
        ("True", "False", False),  # `--enforce-eager False`: the switch is on
        ("'auto'", "'auto'", True),
        ("PoolerConfig(task='embed', dimensions=None)", "{'task': 'embed'}", True),
        ("PoolerConfig(task=None, dimensions=None)", "{'task': 'embed'}", False),
        ("KVTransferConfig(kv_role=None)", "{}", True),
    ],
)
def test_a_parsed_value_is_the_one_the_fix_means(parsed, meant, same):
    from pipeline.verify.run import _same_value

    assert _same_value(parsed, meant) is same
