"""The conditions that hold when a raise runs, as one-line source text, and their negation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from extractors import ops
from extractors.one_line import one_line


@dataclass(frozen=True)
class Block:
    """A step of the path to a raise: it sits in (or under) `statements[index]`."""

    statements: Sequence[cst.CSTNode]
    index: int


@dataclass(frozen=True)
class Branch:
    """A step of the path to a raise: it runs only when `test` is true (`holds`) or false."""

    test: cst.BaseExpression
    holds: bool


Step = Block | Branch

# expressions that read fine after a bare `not`
_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.Integer,
    cst.Float,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
)
# atoms whose own parentheses add nothing after `not` (a tuple's do)
_NAMED = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)
# binding strength of what negate() returns, weakest first
_OR, _AND, _NOT, _TIGHT = 0, 1, 2, 3


def condition(test: cst.BaseExpression, module: cst.Module) -> str:
    """A condition as it reads in the source, on one line."""
    return one_line(module.code_for_node(test))


def negate(test: cst.BaseExpression, module: cst.Module) -> str:
    """The readable negation of a condition: `a != b` -> `a == b`, `not x` -> `x`,
    `a and b` -> `not a or not b` when each side negates simply, else `not (a and b)`."""
    return one_line(_negate(test, module)[0])


def _bare(node: cst.BaseExpression, module: cst.Module) -> str:
    """Source of a node without its own outer parentheses."""
    if getattr(node, "lpar", None):
        node = node.with_changes(lpar=[], rpar=[])
    return module.code_for_node(node)


def _negate(node: cst.BaseExpression, module: cst.Module) -> tuple[str, int]:
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        target = node.comparisons[0]
        flipped = ops.of_cst(target.operator).negation
        left = module.code_for_node(node.left)
        right = module.code_for_node(target.comparator)
        return f"{left} {flipped} {right}", _TIGHT
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _bare(node.expression, module), _strength(node.expression)
    if isinstance(node, cst.BooleanOperation):
        operands = _operands(node.with_changes(lpar=[], rpar=[]), type(node.operator))
        if all(_negates_simply(operand) for operand in operands):
            if isinstance(node.operator, cst.And):
                joiner, strength = " or ", _OR
            else:
                joiner, strength = " and ", _AND
            pieces = []
            for operand in operands:
                text, inner = _negate(operand, module)
                pieces.append(f"({text})" if inner <= strength and inner < _NOT else text)
            return joiner.join(pieces), strength
    if isinstance(node, _NAMED):
        return f"not {_bare(node, module)}", _NOT
    if isinstance(node, _ATOMS):
        return f"not {module.code_for_node(node)}", _NOT
    return f"not ({_bare(node, module)})", _NOT


def _strength(node: cst.BaseExpression) -> int:
    if isinstance(node, cst.BooleanOperation):
        return _OR if isinstance(node.operator, cst.Or) else _AND
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _NOT
    return _TIGHT


def _operands(node: cst.BaseExpression, operator: type) -> list[cst.BaseExpression]:
    """`a and b and c` -> [a, b, c]; parenthesised groups stay whole."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, operator):
        if not node.lpar:
            return _operands(node.left, operator) + _operands(node.right, operator)
    return [node]


def _negates_simply(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Comparison):
        return len(node.comparisons) == 1
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return True
    return isinstance(node, _ATOMS)


def always_returns(statements: Sequence[cst.CSTNode]) -> bool:
    """Whether a block always ends in `return` (directly, or in every arm of a final if)."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], cst.Return)
    if isinstance(last, cst.Return):
        return True
    if isinstance(last, cst.If) and last.orelse is not None:
        otherwise = [last.orelse] if isinstance(last.orelse, cst.If) else last.orelse.body.body
        return always_returns(last.body.body) and always_returns(otherwise)
    return False


def early_exit(statement: cst.CSTNode) -> cst.BaseExpression | None:
    """The test of an `if X:` (no elif/else) whose body always returns, else None."""
    if (
        isinstance(statement, cst.If)
        and statement.orelse is None
        and always_returns(statement.body.body)
    ):
        return statement.test
    return None


# A site keeps at most this many guards, the nearest to its raise: beyond it they explain
# nothing more and would make a hostile elif chain's output grow with the square of its length.
MAX_GUARDS = 64


def guards_of(path: Sequence[Step], module: cst.Module) -> list[str]:
    """The guards of a raise reached along `path` (outermost step first): the negated early
    exits before it in source order, then the enclosing if/elif/else tests, outermost first."""
    return GuardFinder(module).guards(path)


@dataclass
class _Exits:
    """The early exits of one block, found as far as `before` reaches."""

    statements: Sequence[cst.CSTNode]
    found: list[str]  # negated, in source order
    before: list[int]  # before[i]: how many of `found` come before statements[i]


class GuardFinder:
    """`guards_of` for every raise of one function: each statement is tested for an early exit
    once and each condition written once, so a validator with thousands of raises costs time
    in proportion to its length, not to its square."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._exits: dict[int, _Exits] = {}
        self._written: dict[tuple[int, bool], str] = {}  # nodes live as long as the module

    def guards(self, path: Sequence[Step]) -> list[str]:
        tests = [self._test(step) for step in path if isinstance(step, Branch)]
        room = max(0, MAX_GUARDS - len(tests))
        exits: list[str] = []
        for step in reversed([step for step in path if isinstance(step, Block)]):
            if len(exits) >= room:
                break
            block = self._scan(step)
            count = block.before[step.index]
            exits[:0] = block.found[max(0, count - (room - len(exits))) : count]
        return (exits + tests)[-MAX_GUARDS:]

    def _scan(self, step: Block) -> _Exits:
        block = self._exits.get(id(step.statements))
        if block is None or block.statements is not step.statements:
            block = self._exits[id(step.statements)] = _Exits(step.statements, [], [0])
        while len(block.before) <= step.index:
            test = early_exit(block.statements[len(block.before) - 1])
            if test is not None:
                block.found.append(negate(test, self.module))
            block.before.append(len(block.found))
        return block

    def _test(self, step: Branch) -> str:
        key = (id(step.test), step.holds)
        text = self._written.get(key)
        if text is None:
            written = condition if step.holds else negate
            text = self._written[key] = written(step.test, self.module)
        return text
