"""The table of comparison operators (extractors/ops.py): each row agrees with Python, and
each row is exercised by the guard and the offline-explainer case tables."""

from __future__ import annotations

import ast
import itertools

import libcst as cst
import pytest

from extractors import ops
from tests.test_guards import NEGATIONS
from tests.test_offline import OPERATORS, PHRASES

ROWS = {op.symbol: op for op in ops.OPS}


def _operator_classes(module: object, base: type) -> set[type]:
    """The comparison operator classes a parser module exports."""
    found = (getattr(module, name) for name in dir(module))
    return {cls for cls in found if isinstance(cls, type) and issubclass(cls, base)} - {base}


def test_every_libcst_and_ast_comparison_operator_has_its_row():
    every = set(ops.OPS)
    assert {ops.of_cst(cls()) for cls in _operator_classes(cst, cst.BaseCompOp)} == every
    assert {ops.of_ast(cls()) for cls in _operator_classes(ast, ast.cmpop)} == every
    # the libcst and the ast class of a row are the same operator
    for op in ops.OPS:
        cst_op = cst.parse_expression(f"a {op.symbol} b").comparisons[0].operator
        ast_op = ast.parse(f"a {op.symbol} b", mode="eval").body.ops[0]
        assert ops.of_cst(cst_op) is ops.of_ast(ast_op) is op


@pytest.mark.parametrize("op", ops.OPS, ids=lambda op: op.symbol)
def test_negation_is_the_row_that_says_the_opposite(op):
    negated = ROWS[op.negation]
    assert ROWS[negated.negation] is op
    assert (negated.when_true, negated.when_false) == (op.when_false, op.when_true)
    samples = [None, 0, 1, 2, (1,), (2,)]
    for left, right in itertools.product(samples, repeat=2):
        values = {"left": left, "right": right}
        try:
            holds = eval(f"left {op.symbol} right", values)  # trusted: symbols of the table
        except TypeError:  # `None < 1`, `1 in 2`: no truth to compare
            continue
        assert eval(f"left {op.negation} right", values) is (not holds)


@pytest.mark.parametrize("op", [op for op in ops.OPS if op.boundary], ids=lambda op: op.symbol)
def test_an_order_row_holds_and_fails_where_its_boundary_says(op):
    holds_at, fails_at = op.boundary
    for n in (-3, 0, 8):
        assert eval(f"{n + holds_at} {op.symbol} {n}") is True
        assert eval(f"{n + fails_at} {op.symbol} {n}") is False
    assert ROWS[op.negation].boundary == (fails_at, holds_at)
    assert op.than(holds=True) == op.when_true.removeprefix("is ")


def test_only_order_rows_have_a_boundary():
    assert [op.symbol for op in ops.OPS if op.boundary] == ["<", "<=", ">", ">="]


def _cst_row(source: str) -> ops.Op | None:
    node = cst.parse_expression(source)
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        return ops.of_cst(node.comparisons[0].operator)
    return None


def _ast_row(source: str) -> ops.Op | None:
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return ops.of_ast(node.ops[0])
    return None


@pytest.mark.parametrize(
    ("table", "row_of"),
    [
        (NEGATIONS, _cst_row),  # extractors/guards.py: negate()
        (PHRASES, _ast_row),  # the offline explainer: a guard in words
        (OPERATORS, _ast_row),  # the offline explainer: type guard, solution, example fix
    ],
    ids=["guard negations", "offline phrases", "offline operators"],
)
def test_every_row_is_exercised_by_the_case_tables(table, row_of):
    exercised = {row_of(case[0]) for case in table} - {None}
    assert [op.symbol for op in ops.OPS if op not in exercised] == []
