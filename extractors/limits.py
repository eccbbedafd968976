"""How large a file and how deep an expression the extractor takes on, checked with the stdlib
`ast` before libcst sees the text: libcst's native parser kills the process on an expression
nested a few thousand levels deep (an `if` of 10,000 `and` terms), and time and memory grow
with the size of a file."""

from __future__ import annotations

import ast

from extractors.syntax.walk import ast_children

# Larger files are data or generated code; a 38 MB one took minutes and gigabytes.
MAX_SOURCE_BYTES = 2 * 1024 * 1024
# libcst nests `a and b and c` one level per operator (ast keeps it flat) and its Python side
# already fails with RecursionError at about 500 levels: nothing readable is lost below this.
MAX_DEPTH = 400


def size_problem(size: int) -> str | None:
    """Why a file of `size` bytes is not analysed, or None."""
    if size <= MAX_SOURCE_BYTES:
        return None
    return f"too large to analyse: {size / 2**20:.1f} MiB (limit {MAX_SOURCE_BYTES // 2**20} MiB)"


def depth_problem(tree: ast.AST, offset: int = 0) -> str | None:
    """Why a tree is too deep for libcst, or None: its nesting counted as libcst builds it
    (each `and`/`or` operand one level below the previous one). `offset` is added to line
    numbers, for a tree parsed from a piece of a file."""
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 0)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > MAX_DEPTH:
            return f"expression nested too deep at line {line + offset} (limit {MAX_DEPTH} levels)"
        below = depth + (len(node.values) if isinstance(node, ast.BoolOp) else 1)
        stack.extend((child, below, line) for child in ast_children(node))
    return None
