"""The one table of comparison operators: how each is written, what its negation is, how it
reads in words, and where an order test flips, for guards and the offline explainer alike.

The table is the specification: a guard `n < 8` negates to `n >= 8` (NEGATION), reads
"n is less than 8" when it holds and "n is at least 8" when it does not (WHEN TRUE /
WHEN FALSE), and with an integer on the right holds at 8 - 1 and fails at 8 + 0
(BOUNDARY). libcst and ast operator classes map onto the rows (`of_cst`, `of_ast`), so
every consumer keys by the same row. tests/test_ops.py checks that each row is exercised
by the guard and offline-explainer case tables.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True, eq=False)  # a row is itself: compared and hashed by identity
class Op:
    """One comparison operator."""

    symbol: str  # as Python writes it
    negation: str  # the symbol of the operator that tests the opposite
    when_true: str  # `x <when_true> y` says in words that the test holds
    when_false: str  # ... and that it does not
    # order tests only: (holds at, fails at) as offsets from the integer n on the right
    # (`x > n` holds at n + 1 and fails at n + 0)
    boundary: tuple[int, int] | None

    def than(self, holds: bool) -> str:
        """An order test's words after "is" (`less than`, `at least`), when it holds or not."""
        return (self.when_true if holds else self.when_false).removeprefix("is ")


# fmt: off
#           symbol    negation  when true          when false         boundary
EQ     = Op("==",     "!=",     "is",              "is not",          None)
NE     = Op("!=",     "==",     "is not",          "is",              None)
LT     = Op("<",      ">=",     "is less than",    "is at least",     (-1, 0))
LE     = Op("<=",     ">",      "is at most",      "is greater than", (0, 1))
GT     = Op(">",      "<=",     "is greater than", "is at most",      (1, 0))
GE     = Op(">=",     "<",      "is at least",     "is less than",    (0, -1))
IN     = Op("in",     "not in", "is in",           "is not in",       None)
NOT_IN = Op("not in", "in",     "is not in",       "is in",           None)
IS     = Op("is",     "is not", "is",              "is not",          None)
IS_NOT = Op("is not", "is",     "is not",          "is",              None)
# fmt: on

OPS: tuple[Op, ...] = (EQ, NE, LT, LE, GT, GE, IN, NOT_IN, IS, IS_NOT)

# the libcst and the ast class of each row
_CLASSES: tuple[tuple[Op, type[cst.BaseCompOp], type[ast.cmpop]], ...] = (
    (EQ, cst.Equal, ast.Eq),
    (NE, cst.NotEqual, ast.NotEq),
    (LT, cst.LessThan, ast.Lt),
    (LE, cst.LessThanEqual, ast.LtE),
    (GT, cst.GreaterThan, ast.Gt),
    (GE, cst.GreaterThanEqual, ast.GtE),
    (IN, cst.In, ast.In),
    (NOT_IN, cst.NotIn, ast.NotIn),
    (IS, cst.Is, ast.Is),
    (IS_NOT, cst.IsNot, ast.IsNot),
)
_BY_CST = {cst_class: op for op, cst_class, _ in _CLASSES}
_BY_AST = {ast_class: op for op, _, ast_class in _CLASSES}


def of_cst(operator: cst.BaseCompOp) -> Op:
    """The row of a libcst comparison operator node."""
    return _BY_CST[type(operator)]


def of_ast(operator: ast.cmpop) -> Op:
    """The row of an ast comparison operator node."""
    return _BY_AST[type(operator)]


# an order or equality test with its sides swapped (`0 > x` is `x < 0`)
_MIRRORED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.Gt: ast.Lt,
    ast.LtE: ast.GtE,
    ast.GtE: ast.LtE,
    ast.Eq: ast.Eq,
    ast.NotEq: ast.NotEq,
}


def mirrored_ast(operator: ast.cmpop) -> ast.cmpop | None:
    """The operator that tests the same with its sides swapped; None for `in`, `is`."""
    mirror = _MIRRORED.get(type(operator))
    return mirror() if mirror is not None else None


def negated_ast(operator: ast.cmpop) -> ast.cmpop:
    """The ast operator node that tests the opposite (`==` -> `!=`, `in` -> `not in`)."""
    negation = of_ast(operator).negation
    return next(cls() for op, _, cls in _CLASSES if op.symbol == negation)
