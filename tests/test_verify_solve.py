"""The solver's case table (pipeline/verify/solve.py): tests in, the values that make them
hold out, one expression's value per key; several dicts are the ways through an `or`."""

from __future__ import annotations

import ast

import pytest

from pipeline.dataset.models import Setting
from pipeline.verify.solve import solutions, value_for

CASES = [
    (['x == "a"'], [{"x": "'a'"}]),
    (['x != "a"'], [{"x": "'vmine-other'"}]),
    (['x in ("a", "b")'], [{"x": "'a'"}]),
    (['x not in ("a", "b")'], [{"x": "'vmine-other'"}]),
    (["x > 3"], [{"x": "4"}]),
    (["x <= 3"], [{"x": "3"}]),
    (["x > 3 and x < 10"], [{"x": "4"}]),
    (["3 < x"], [{"x": "4"}]),
    (["x > y"], [{"y": "1", "x": "2"}]),
    (["x != y"], [{"x": "Stand(True)"}]),
    (["int(x.shape[2]) != int(y)"], [{"y": "1", "x.shape[2]": "2"}]),
    (["int(x) == 3"], [{"x": "3"}]),
    (["int(a) // int(b) == 16"], [{"b": "1", "a": "16"}]),
    (["a % b == 0", "a // b == LIMIT"], [{"a": "LIMIT", "b": "1"}]),
    (["x == y"], [{"x": "y"}]),
    (["any(node < 0 for node in nodes)"], [{"nodes": "[-1]"}]),
    (["not all(n > 0 for n in ns)"], [{"ns": "[0]"}]),
    (["all(n > 0 for n in ns)"], [{"ns": "[]"}]),
    (["(mode := self.mode)", 'mode == "x"'], [{"self.mode": "'x'"}]),
    (["x[0] > 1"], [{"x[0]": "2"}]),
    (["x % y != 0"], [{"x": "3", "y": "2"}]),
    (["not (k % 8)", "n % 8"], [{"k": "8", "n": "9"}]),  # a remainder as a truth value
    (["k > 0", "not (k % 8)"], [{"k": "8"}]),  # a weak value inside the bounds
    (["x // y > 256"], [{"y": "1", "x": "257"}]),
    (["x * y % n != 0"], [{"y": "1", "x": "3", "n": "2"}]),
    (["len(x) > 1"], [{"x": "[Stand(), Stand()]"}]),
    (["len(x) != n"], [{"n": "1", "x": "[Stand(), Stand()]"}]),
    (["len(x) != len(y)"], [{"y": "[Stand()]", "x": "[Stand(), Stand()]"}]),
    (["x is None"], [{"x": "None"}]),
    (["x is not None"], [{"x": "Stand(True)"}]),
    (["x"], [{"x": "Stand(True)"}]),
    (["not x"], [{"x": "None"}]),
    (["isinstance(x, int)"], [{"x": "1"}]),
    (["isinstance(x, Mode)"], [{"x": "blank(Mode)"}]),
    (["a or b"], [{"a": "Stand(True)"}, {"b": "Stand(True)"}]),
    (["not (a and b)"], [{"a": "None"}, {"b": "None"}]),
    (['getattr(args, "grpc", False)'], [{"args.grpc": "Stand(True)"}]),
    (["x in SUPPORTED"], [{"x": "next(iter(SUPPORTED), Stand(True))"}]),
    (["x == 2", "x > 3"], [{"x": None}]),  # contradicts itself: not placed
    (['x in {"b", "a"}', 'x != "a"'], [{"x": "'b'"}]),  # a set in a fixed order
    # the way through `or` that contradicts the guard is tried last
    (["p", "not p or b in (1, 2)"], [{"p": "Stand(True)", "b": "1"}, {"p": None}]),
    # None and an attribute read of it contradict: that way goes last
    (
        ["x.n > 1", "x is None or x.y"],
        [{"x.n": "2", "x.y": "Stand(True)"}, {"x.n": "2", "x": "None"}],
    ),
    (
        ["x is not None", "not (x is not None and x.n != 1)"],
        [{"x": "Stand(True)", "x.n": "1"}, {"x": None}],
    ),
    # every part of `and`: its first way that keeps the solution consistent
    (
        ["x is not None", "(x is None or x.n == 1) and y"],
        [{"x": "Stand(True)", "x.n": "1", "y": "Stand(True)"}],
    ),
    # items written out: one test per item (a filter may drop an item: then it holds)
    (["not any(t.dev != q.dev for t in (a, b))"], [{"a.dev": "q.dev", "b.dev": "q.dev"}]),
    (["any(t > 3 for t in (a, b))"], [{"a": "4"}, {"b": "4"}]),
    (
        [
            "x is not None",
            "not any(t.n != 1 for t in (a,) + tuple(t for t in (x,) if t is not None))",
        ],
        [{"x": "Stand(True)", "a.n": "1", "x.n": "1"}],
    ),
    # a list kept by a filter: its source holds as many items that pass it
    (['len([m for m in modes if m in {"all", "none"}]) > 1'], [{"modes": "['all', 'all']"}]),
    (["a <= b", "c % a == 0"], [{"b": "1", "a": "1", "c": "4"}]),  # the guard's weak value
    # a filtered list's truth: one item that passes, or none at all
    (["not [t for t in tasks if t in KINDS]"], [{"tasks": "[]"}]),
    (["[t for t in tasks if t in ('a', 'b')]"], [{"tasks": "['a']"}]),
    # two truth values compared: both or neither, exactly one
    (
        ["(a is None) != (b is None)"],
        [{"a": "None", "b": "Stand(True)"}, {"a": "Stand(True)", "b": "None"}],
    ),
    (
        ["(a is None) == (b is None)"],
        [{"a": "None", "b": "None"}, {"a": "Stand(True)", "b": "Stand(True)"}],
    ),
]


def test_orders_between_expressions_hold_at_once():
    from pipeline.verify.solve import ordered_numbers

    (way,) = solutions(["s > t", "s <= d", "d < 8"])
    assert ordered_numbers(way) == {"s": "2", "t": "1"}  # d is 7: s between t and d
    (way,) = solutions(["s > t", "s <= d"])
    assert ordered_numbers(way) == {"s": "2", "t": "1", "d": "2"}
    # the other side is arithmetic over a number another test gives: that number
    (way,) = solutions(["q.dim == 128", "k.cols >= q.dim // 16"])
    assert ordered_numbers(way) == {"k.cols": "8"}


@pytest.mark.parametrize(("tests", "expected"), CASES)
def test_solutions(tests, expected):
    found = [
        {expr: value_for(wants, None) for expr, wants in way.wants.items()}
        for way in solutions(tests)
    ]
    assert found == expected


def test_a_setting_gives_its_choices_and_type():
    setting = Setting(expr="self.mode", cls="C", field="mode", type="str", default='"fast"',
                      choices=["fast", "safe", "slow"], doc=None, flags=[])  # fmt: skip
    (way,) = solutions(['self.mode != "fast"', 'self.mode != "safe"'])
    assert value_for(way.wants["self.mode"], setting) == "'slow'"
    (way,) = solutions(["self.mode is not None"])
    assert value_for(way.wants["self.mode"], setting) == '"fast"'  # its default
    (way,) = solutions(['self.strategy != "steps"'])
    strategy = setting.model_copy(update={"choices": None, "default": '"no"'})
    assert value_for(way.wants["self.strategy"], strategy) == "'no'"  # its default, not made up
    (way,) = solutions(['self.strategy != "no"'])
    assert value_for(way.wants["self.strategy"], strategy) == "'vmine-other'"
    (way,) = solutions(["not self.flag"])
    flag = setting.model_copy(update={"type": "bool", "choices": None, "default": None})
    assert value_for(way.wants["self.flag"], flag) == "False"


def test_false_but_not_none_and_outside_a_computed_collection():
    # `value is not None and not value` on a list: empty, not None; an unknown type: a stand-in
    nodes = Setting(expr="value", cls="C", field="nodes", type="list[int] | None", default=None,
                    choices=None, doc=None, flags=[])  # fmt: skip
    (way,) = solutions(["value is not None", "not value"])
    assert value_for(way.wants["value"], nodes) == "[]"
    assert value_for(way.wants["value"], None) == "Stand()"
    (way,) = solutions(["not value"])
    assert value_for(way.wants["value"], nodes) == "None"  # None is false too
    # `role not in get_args(Role)`: the setting's choices are that collection
    role = nodes.model_copy(update={"type": "Role | None", "choices": ["producer", "consumer"]})
    (way,) = solutions(["self.role is not None and self.role not in get_args(Role)"])
    assert value_for(way.wants["self.role"], role) == "'vmine-other'"
    (way,) = solutions(['self.role not in ("producer",)'])
    assert value_for(way.wants["self.role"], role) == "'consumer'"  # a literal: another choice


def test_a_guarded_read_an_item_and_a_conversion_are_read_through():
    # `size = params.extra and params.extra.get("size")`: setting the item makes extra true
    local_values = {"size": ast.parse('p.extra and p.extra.get("size")', mode="eval").body}
    (way,) = solutions(["size is not None", "size > 0"], local_values)
    assert {expr: value_for(wants, None) for expr, wants in way.wants.items()} == {
        "p.extra['size']": "1"
    }
    (way,) = solutions(['cfg.get("mode", "fast") == "safe"', "tuple(x.shape) == (1, 2)"])
    assert {expr: value_for(wants, None) for expr, wants in way.wants.items()} == {
        "cfg['mode']": "'safe'",
        "x.shape": "(1, 2)",
    }
    # not a guarded read: both parts stay tests
    local_values = {"both": ast.parse("a and b.c", mode="eval").body}
    ways = solutions(["not both"], local_values)
    assert [set(way.wants) for way in ways] == [{"a"}, {"b.c"}]


def test_a_sequence_that_must_be_a_tuple_is_one():
    (way,) = solutions(["isinstance(ids, tuple)", "len(ids) > 1"])
    assert value_for(way.wants["ids"], None) == "(Stand(), Stand())"
    (way,) = solutions(["len(ids) > 1"])
    assert value_for(way.wants["ids"], None) == "[Stand(), Stand()]"
    # compared with strings: a string of that length
    (way,) = solutions(['op not in {"all", "none"} and len(op) < 2'])
    assert value_for(way.wants["op"], None) == "'x'"


def test_a_local_is_read_through_its_definition():
    (way,) = solutions(["head > 256"], {"head": ast.parse("h // n", mode="eval").body})
    assert {expr: value_for(wants, None) for expr, wants in way.wants.items()} == {
        "n": "1",
        "h": "257",
    }


def test_a_local_set_in_two_branches_is_read_on_either_way():
    # `if paged: h = k.shape[1] else: h = k.shape[0]`, then `n % h != 0`
    local_values = {"h": ast.parse("k.shape[1] if paged else k.shape[0]", mode="eval").body}
    ways = [
        {expr: value_for(wants, None) for expr, wants in way.wants.items()}
        for way in solutions(["n % h != 0"], local_values)
    ]
    assert ways == [
        {"paged": "Stand(True)", "n": "3", "k.shape[1]": "2"},
        {"paged": "None", "n": "3", "k.shape[0]": "2"},
    ]
    (way, *_) = solutions(["not paged", "n % h != 0"], local_values)
    assert "k.shape[0]" in way.wants  # the way the guard leaves open comes first


def test_a_local_defined_from_other_locals_reads_what_they_read():
    local_values = {
        name: ast.parse(source, mode="eval").body
        for name, source in [
            ("heads", "int(q.shape[1])"),
            ("per_kv", "heads // kv"),
            ("n", "n + 1"),
        ]
    }
    (way, *_) = solutions(["per_kv == 16", "n > 2"], local_values)
    assert {expr: value_for(wants, None) for expr, wants in way.wants.items()} == {
        "kv": "1", "q.shape[1]": "16", "n": "2",  # a local defined from itself: read once
    }  # fmt: skip
