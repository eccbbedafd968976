"""The conditions that hold when a raise runs, as one-line source text, and their negation."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import libcst as cst

from extractors import ops
from extractors.syntax.code_line import code_on_one_line
from extractors.syntax.cst_tree import Block, Branch, Step

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
    return code_on_one_line(module.code_for_node(test))


def negate(test: cst.BaseExpression, module: cst.Module) -> str:
    """The readable negation of a condition: `a != b` -> `a == b`, `not x` -> `x`,
    `a and b` -> `not a or not b` when each side negates simply, else `not (a and b)`."""
    return code_on_one_line(_negate(test, module)[0])


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


# --- what the code before a raise says ---------------------------------------------------
#
# A statement before the raise in an enclosing block may leave the function (or the loop
# iteration) on some of its paths: `if A: return`, `if A: ... elif B: continue`, `if A: if
# B: raise X`. Each such path is a conjunction of if-tests; when the raise runs, none of
# them held. Paths that end in `return`, `continue` or `break` give guards; paths that end
# in `raise` are the earlier checks of the function, which give priorChecks.

# Terminal statements, by what their path says about a later raise.
_EXITS = (cst.Return, cst.Continue, cst.Break)
# a path with more tests than this reads as noise, not as a condition
MAX_PATH_TESTS = 3
# A site keeps at most this many guards and prior checks, the nearest to its raise: beyond
# it they explain nothing more and would make a hostile elif chain's (or a long run of
# checks') output grow with the square of its length.
MAX_GUARDS = 64
MAX_PRIOR_CHECKS = 32

Test = tuple[cst.BaseExpression, bool]  # an if-test and whether it held on the path


class Conditions(NamedTuple):
    """What holds when a raise runs: `guards` (enclosing tests, loop headers, negated early
    exits) and `prior_checks` (negated tests of the earlier raising checks)."""

    guards: list[str]
    prior_checks: list[str]


def _ends(statements: Sequence[cst.CSTNode]) -> set[str] | None:
    """How a block always ends: the kinds (`exit`, `check`) of its final statements on every
    path, or None when some path falls through."""
    if not statements:
        return None
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    if isinstance(last, _EXITS):
        return {"exit"}
    if isinstance(last, cst.Raise):
        return {"check"}
    if isinstance(last, cst.If) and last.orelse is not None:
        body = _ends(last.body.body)
        otherwise = _ends(
            [last.orelse] if isinstance(last.orelse, cst.If) else last.orelse.body.body
        )
        if body is not None and otherwise is not None:
            return body | otherwise
    return None


def _leaving_paths(statement: cst.CSTNode) -> Iterator[tuple[str, list[Test]]]:
    """(kind, tests) of each path through `statement` that leaves before the code after it.
    Loops, `try` and `match` are not entered: what they say cannot be put as one test."""
    if isinstance(statement, cst.If):
        yield from _leaving_paths_of_if(statement, [])
    elif isinstance(statement, cst.With):
        for inner in statement.body.body:
            yield from _leaving_paths(inner)


def _leaving_paths_of_if(node: cst.If, before: list[Test]) -> Iterator[tuple[str, list[Test]]]:
    here = [*before, (node.test, True)]
    ends = _ends(node.body.body)
    if ends is not None:
        yield ("check" if ends == {"check"} else "exit"), here
        # an arm that always leaves is known not to have run: later arms need not say so
        otherwise = before
    else:
        for inner in node.body.body:
            for kind, tests in _leaving_paths(inner):
                yield kind, here + tests
        otherwise = [*before, (node.test, False)]
    if isinstance(node.orelse, cst.If):
        yield from _leaving_paths_of_if(node.orelse, otherwise)
    elif isinstance(node.orelse, cst.Else):
        ends = _ends(node.orelse.body.body)
        if ends is not None and otherwise:
            yield ("check" if ends == {"check"} else "exit"), otherwise
        elif ends is None:
            for inner in node.orelse.body.body:
                for kind, tests in _leaving_paths(inner):
                    yield kind, otherwise + tests


def _not_all(tests: list[Test], module: cst.Module) -> str:
    """The readable negation of a conjunction of tests."""
    if len(tests) == 1:
        test, held = tests[0]
        return negate(test, module) if held else condition(test, module)
    operands = [test if held else _not(test) for test, held in tests]
    joined = operands[0]
    for operand in operands[1:]:
        joined = cst.BooleanOperation(
            left=_grouped(joined), operator=cst.And(), right=_grouped(operand)
        )
    return negate(joined, module)


def _not(test: cst.BaseExpression) -> cst.BaseExpression:
    return cst.UnaryOperation(operator=cst.Not(), expression=_grouped(test, loose_only=False))


def _grouped(node: cst.BaseExpression, loose_only: bool = True) -> cst.BaseExpression:
    """The node in parentheses when it binds more loosely than `and` (with `loose_only`) or
    is not an atom; nodes already in parentheses stay as they are."""
    if getattr(node, "lpar", None) or isinstance(node, _ATOMS):
        return node
    if loose_only and isinstance(node, (cst.Comparison, cst.UnaryOperation)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _loop_header(
    statement: cst.CSTNode, inner: Sequence[cst.CSTNode] | None, module: cst.Module
) -> str | None:
    """`x in xs` for a `for` loop whose body holds the raise (not its `else`)."""
    if not isinstance(statement, cst.For) or inner is not statement.body.body:
        return None
    target = code_on_one_line(module.code_for_node(statement.target))
    if isinstance(statement.target, cst.Tuple) and not statement.target.lpar:
        target = f"({target})"
    return f"{target} in {condition(statement.iter, module)}"


@dataclass
class _Said:
    """What the statements of one block say, worked out as far as `before` reaches."""

    statements: Sequence[cst.CSTNode]
    exits: list[str]  # negated early exits, in source order
    checks: list[str]  # negated checks, in source order
    before: list[tuple[int, int]]  # before[i]: how many of each come before statements[i]


class GuardFinder:
    """The conditions of every raise of one function: each statement is read for its exits
    and checks once and each condition written once, so a validator with thousands of raises
    costs time in proportion to its length, not to its square."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._said: dict[int, _Said] = {}
        self._written: dict[tuple[int, bool], str] = {}  # nodes live as long as the module
        self._headers: dict[tuple[int, int], str] = {}  # by (statement, inner block) ids

    def conditions(self, path: Sequence[Step]) -> Conditions:
        """guards: the headers of the enclosing `for` loops (`x in xs`), then the negated
        early exits before the raise in source order (`return`, and `continue`/`break` of an
        enclosing loop, also nested in an earlier `if`), then the enclosing if/elif/else
        tests, outermost first; the nearest MAX_GUARDS of them.
        prior_checks: the negated tests of the earlier `if ...: raise` checks (nested ones
        too) of the enclosing blocks, in source order; the nearest MAX_PRIOR_CHECKS.
        Each list holds a text once; a prior check that is also a guard is left out."""
        blocks = [step for step in path if isinstance(step, Block)]
        headers = [
            header
            for number, step in enumerate(blocks)
            if (
                header := self._header(
                    step, blocks[number + 1] if number + 1 < len(blocks) else None
                )
            )
            is not None
        ]
        tests = [self._test(step) for step in path if isinstance(step, Branch)]
        exits = self._nearest(blocks, 0, MAX_GUARDS)
        guards = list(dict.fromkeys(headers + exits + tests))[-MAX_GUARDS:]
        held = set(guards)
        # a few more than kept, so that dropping repeats and guards still leaves enough
        checks = self._nearest(blocks, 1, 2 * MAX_PRIOR_CHECKS)
        prior = [check for check in dict.fromkeys(checks) if check not in held]
        return Conditions(guards, prior[-MAX_PRIOR_CHECKS:])

    def _nearest(self, blocks: list[Block], which: int, room: int) -> list[str]:
        """The last `room` exits (which=0) or checks (which=1) before the raise."""
        found: list[str] = []
        for step in reversed(blocks):
            if len(found) >= room:
                break
            said = self._scan(step)
            texts = said.checks if which else said.exits
            count = said.before[step.index][which]
            found[:0] = texts[max(0, count - (room - len(found))) : count]
        return found

    def _scan(self, step: Block) -> _Said:
        said = self._said.get(id(step.statements))
        if said is None or said.statements is not step.statements:
            said = self._said[id(step.statements)] = _Said(step.statements, [], [], [(0, 0)])
        while len(said.before) <= step.index:
            statement = said.statements[len(said.before) - 1]
            for kind, tests in _leaving_paths(statement):
                if len(tests) <= MAX_PATH_TESTS:
                    text = _not_all(tests, self.module)
                    (said.checks if kind == "check" else said.exits).append(text)
            said.before.append((len(said.exits), len(said.checks)))
        return said

    def _header(self, step: Block, inner: Block | None) -> str | None:
        statement = step.statements[step.index]
        body = inner.statements if inner is not None else None
        # the header depends on which block of the statement holds the raise (a `for`
        # loop's body, not its `else`); blocks live as long as the module, like the nodes
        key = (id(statement), id(body))
        if key not in self._headers:
            self._headers[key] = _loop_header(statement, body, self.module) or ""
        return self._headers[key] or None

    def _test(self, step: Branch) -> str:
        key = (id(step.test), step.holds)
        text = self._written.get(key)
        if text is None:
            written = condition if step.holds else negate
            text = self._written[key] = written(step.test, self.module)
        return text
