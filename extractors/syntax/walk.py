"""The nodes and statements of one scope: nested defs, classes and lambdas are scopes of
their own, yielded but not entered; and the stdlib `ast` walks, done faster."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

Node = TypeVar("Node")

AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def scope_nodes(
    roots: Sequence[Node], children: Callable[[Node], Sequence[Node]], scopes: tuple[type, ...]
) -> Iterator[Node]:
    """`roots` and every node under them in source order (parents first), not entering a
    node of one of the `scopes` types; `children` lists a node's children in order."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, scopes):
            stack.extend(reversed(children(node)))


def ast_children(node: ast.AST) -> list[ast.AST]:
    """What `ast.iter_child_nodes` yields, in its order, as a list: its two nested
    generators cost more than the walks that used it did with the nodes (a third of a
    validator's scan)."""
    children: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            children.append(value)
        elif isinstance(value, list):
            children += [item for item in value if isinstance(item, ast.AST)]
    return children


def ast_walk(node: ast.AST) -> Iterator[ast.AST]:
    """What `ast.walk` yields, in its order (breadth first, a node before its children)."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(ast_children(node))
        yield node


def own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node under `body` that belongs to its scope (nested defs, classes and lambdas
    are yielded themselves but not entered)."""
    return scope_nodes(body, ast_children, AST_SCOPES)


def own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement under `body` in source order, not entering nested defs or classes."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, AST_SCOPES):
            continue
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if block:
                yield from own_statements(block)
        for handler in getattr(stmt, "handlers", ()):
            yield from own_statements(handler.body)
        for case in getattr(stmt, "cases", ()):
            yield from own_statements(case.body)
