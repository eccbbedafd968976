"""The syntax toolkit for libcst trees: the parse, a node's children, the nodes of one scope,
dotted names and the raised class; and the block walker, which finds every `raise` (or
`return`) of a function in source order with the path that leads to it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst
from libcst._nodes.base import CSTNode

from extractors.syntax.names import named_class
from extractors.syntax.walk import scope_nodes

CST_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)

_FIELDS: dict[type, tuple[str, ...]] = {}
_IS_NODE: dict[type, bool] = {}
# fields that hold only layout (whitespace, brackets, commas, comments), never a name
_LAYOUT = re.compile(
    r"whitespace|^(?:lpar|rpar|comma|semicolon|leading_lines|header|footer"
    r"|lines_after_decorators|newline|lbracket|rbracket|lbrace|rbrace)$"
)


def parse_module(source: str) -> cst.Module:
    """`cst.parse_module`, without the check every node makes of its own fields as it is
    built (`CSTNode.__post_init__`): the check is for trees built by hand, a tree libcst's
    parser builds passes it, and it took a fifth of each parse. The check is off, for the
    whole process, only while this parse runs: the extractor parses in one thread (two
    threads parsing at once could leave it off, which skips only the checks of trees
    built by hand, never changes a parsed tree)."""
    checked = CSTNode.__post_init__
    CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign]
    try:
        return cst.parse_module(source)
    finally:
        CSTNode.__post_init__ = checked  # type: ignore[method-assign]


def _unchecked(self: CSTNode) -> None:
    pass


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """A node's children in order, read from its fields (libcst's `children` runs a
    visitor that rebuilds the node: many times slower)."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(
            f.name for f in dataclasses.fields(node) if not _LAYOUT.search(f.name)
        )
    found: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        if is_node(value):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if is_node(v))
    return found


def is_node(value: object) -> bool:
    """`isinstance(value, cst.CSTNode)`, answered by type: the check of an ABC runs Python
    code each time, and a walk asks it of every field of every node."""
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return known


def own_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and everything under it that is not inside a nested def, class or lambda, in
    source order (parents first); `node` itself is entered whatever it is."""
    yield node
    yield from scope_nodes(children(node), children, CST_SCOPES)


def dotted(node: cst.CSTNode) -> str | None:
    """`a.b.c` -> "a.b.c"; None for anything but a dotted name."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def raised_class(node: cst.Raise) -> str | None:
    """The class a `raise` names (`ValueError`, `builtins.ValueError(...)`), by the rule of
    `names.named_class`."""
    exc = node.exc
    if isinstance(exc, cst.Call):
        exc = exc.func
    return named_class(dotted(exc)) if exc is not None else None


# --- the block walker ---------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """A step of the path to a statement: it sits in (or under) `statements[index]`."""

    statements: Sequence[cst.CSTNode]
    index: int


@dataclass(frozen=True)
class Branch:
    """A step of the path to a statement: it runs only when `test` is true (`holds`) or
    false."""

    test: cst.BaseExpression
    holds: bool


Step = Block | Branch
Found = TypeVar("Found", bound=cst.CSTNode)

# The order the blocks of a `try` are visited in. The sites of a function come in the
# order of their source; the returns of a helper have always come with the `else` and the
# `finally` before the handlers, and a message of several returns (`{?a|b}`) lists them so.
SOURCE_ORDER = ("body", "handlers", "orelse", "finalbody")
RETURNS_ORDER = ("body", "orelse", "finalbody", "handlers")


def statements_in(
    kind: type[Found],
    statements: Sequence[cst.CSTNode],
    path: Sequence[Step] = (),
    try_order: Sequence[str] = SOURCE_ORDER,
) -> Iterator[tuple[Found, list[Step]]]:
    """Every statement of `kind` (`cst.Raise`, `cst.Return`) under a block, with its path:
    the enclosing blocks and the if-tests on the way (an `elif` arm also says the earlier
    tests were false). Nested defs and classes are scopes of their own, not entered."""
    for index, statement in enumerate(statements):
        here = [*path, Block(statements, index)]
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statements_in(kind, statement.body, here, try_order)
        elif isinstance(statement, kind):
            yield statement, here
        elif isinstance(statement, cst.If):
            yield from _in_if(kind, statement, here, try_order)
        elif isinstance(statement, (cst.For, cst.While)):
            yield from statements_in(kind, statement.body.body, here, try_order)
            if statement.orelse is not None:
                yield from statements_in(kind, statement.orelse.body.body, here, try_order)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            for part in try_order:
                for block in _try_blocks(statement, part):
                    yield from statements_in(kind, block, here, try_order)
        elif isinstance(statement, cst.With):
            yield from statements_in(kind, statement.body.body, here, try_order)
        elif isinstance(statement, cst.Match):
            for case in statement.cases:
                yield from statements_in(kind, case.body.body, here, try_order)


def _in_if(
    kind: type[Found], node: cst.If, path: list[Step], try_order: Sequence[str]
) -> Iterator[tuple[Found, list[Step]]]:
    yield from statements_in(kind, node.body.body, [*path, Branch(node.test, True)], try_order)
    otherwise = [*path, Branch(node.test, False)]
    if isinstance(node.orelse, cst.If):
        yield from _in_if(kind, node.orelse, otherwise, try_order)
    elif isinstance(node.orelse, cst.Else):
        yield from statements_in(kind, node.orelse.body.body, otherwise, try_order)


def _try_blocks(node: cst.Try | cst.TryStar, part: str) -> list[Sequence[cst.CSTNode]]:
    """The blocks of one part of a `try` (`body`, `handlers`, `orelse`, `finalbody`)."""
    if part == "body":
        return [node.body.body]
    if part == "handlers":
        return [handler.body.body for handler in node.handlers]
    clause = getattr(node, part)  # an `else` or a `finally`, or None
    return [clause.body.body] if clause is not None else []
