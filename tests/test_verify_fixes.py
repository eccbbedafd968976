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
    # the after line leaves out a flag of the before line: it is back at its default
    ("# before\n--enforce-eager --speculative-config <value>\n# after\n--enforce-eager",
     [Change("args.enforce_eager", "True"), Change("self.spec", "None")]),
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


BENCH_PARSER = """
import argparse

def add_cli_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--num-prompts", type=int, default=1)
    parser.add_argument("--no-warmup", action="store_true")
"""


@pytest.mark.parametrize(
    ("argv", "flags", "result"),
    [
        (["--num-prompts", "3"], ["--num-prompts"], {"parsed": {"--num-prompts": "3"}, "unknown": []}),
        # `--n` is no flag of this parser: argparse would read it as an abbreviation
        (["--n", "1"], ["--n"], {"parsed": {}, "foreign": ["--n"]}),
    ],
)  # fmt: skip
def test_a_flag_the_parser_does_not_have_is_not_parsed(argv, flags, result):
    import sys
    import types

    from pipeline.verify.parsers import Builder, parse_program, parse_result

    module = types.ModuleType("bench_cli")
    exec(compile(BENCH_PARSER, "bench_cli.py", "exec"), module.__dict__)
    sys.modules["bench_cli"] = module
    program = parse_program(Builder("bench_cli", (), "add_cli_args", True, 2), argv, flags)
    try:
        with pytest.raises(SystemExit) as exit_:
            exec(compile(program, "<parse>", "exec"), {"__name__": "__test__"})
    finally:
        del sys.modules["bench_cli"]
    assert parse_result(str(exit_.value)) == result


@pytest.mark.parametrize(
    ("value", "tests", "compared"),
    [
        ("'triton'", ["self.backend != Backend.TRITON"], "mod.Backend.TRITON"),
        ("'flash-infer'", ["Backend.FLASH_INFER == self.backend"], "mod.Backend.FLASH_INFER"),
        ("'triton'", ["self.backend != 'cuda'"], "'triton'"),  # a string compared with strings
        ("'triton'", ["self.mode != Backend.TRITON"], "'triton'"),  # another expression
    ],
)
def test_a_fix_value_takes_the_form_the_guards_compare_it_with(value, tests, compared):
    from pipeline.verify.fixes import as_compared

    (change,) = as_compared([Change("self.backend", value)], tests)
    assert change.value == compared


@pytest.mark.parametrize(
    ("expr", "changed"),
    [
        ("so.regex", "params.structured.regex"),
        ("so", "so"),  # the local itself: nothing outside to set
        ("other.regex", "other.regex"),
    ],
)
def test_a_fix_of_a_locals_attribute_changes_what_defines_it(expr, changed):
    import ast

    from pipeline.verify.fixes import through_locals

    local_values = {"so": ast.parse("params.structured", mode="eval").body}
    (change,) = through_locals([Change(expr, "None")], local_values)
    assert change.expr == changed
