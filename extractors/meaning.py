"""What a raise means, apart from the function around it: the raise statement and the
statements that enclose it (`if` tests and their branch, loops, `with`, `try`/`except`,
`match` cases), as normalised source text, so that formatting, comments, the function's
other lines and its other raises do not count. The explanation cache key is built on it.

Pure: source text in, facts out. A raise is found by the line it is on in the function's
source; `raise_line` finds that line from the site's source window.
"""

from __future__ import annotations

import ast
import warnings
from functools import lru_cache

# Statements that stop the walk outwards: the raise's own scope ends there.
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Module)


def raise_line(function_lines: list[str], window: list[str], offset: int) -> int:
    """Where the raise is among the function's lines (0-based): the place whose neighbours
    best match the site's source window, `window[offset]` being the raise line (the
    function's own first line number is not a site fact). 0 when nothing matches."""
    if not 0 <= offset < len(window):
        return 0
    best, best_score = 0, -1
    target = window[offset].strip()
    for index, line in enumerate(function_lines):
        if line.strip() != target:
            continue
        score = sum(
            1
            for delta in range(-offset, len(window) - offset)
            if 0 <= index + delta < len(function_lines)
            and function_lines[index + delta].strip() == window[offset + delta].strip()
        )
        if score > best_score:
            best, best_score = index, score
    return best


def raise_meaning(function_source: str, line: int) -> list[str] | None:
    """The raise statement on `line` (0-based) of `function_source`, then what encloses it,
    innermost first, e.g. `["raise ValueError('n must be positive')",
    "if self.n <= 0: body", "for n in self.sizes: body"]`; None when the source does not
    parse here or holds no raise on that line."""
    parsed = _parsed(function_source)
    if parsed is None:
        return None
    tree, parents = parsed
    found = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Raise) and node.lineno == line + 1
        ),
        None,
    )
    if found is None:
        return None
    meaning = [ast.unparse(found)]
    child: ast.AST = found
    parent = parents.get(found)
    while parent is not None and not isinstance(parent, _SCOPES):
        part = _enclosing(parent, child)
        if part is not None:
            meaning.append(part)
        child, parent = parent, parents.get(parent)
    return meaning


def _enclosing(node: ast.AST, child: ast.AST) -> str | None:
    """How `node` encloses `child`, in one line of normalised source."""
    branch = _branch(node, child)
    if isinstance(node, ast.If | ast.While):
        return f"{'if' if isinstance(node, ast.If) else 'while'} {ast.unparse(node.test)}: {branch}"
    if isinstance(node, ast.For | ast.AsyncFor):
        return f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}: {branch}"
    if isinstance(node, ast.With | ast.AsyncWith):
        return "with " + ", ".join(ast.unparse(item) for item in node.items)
    if isinstance(node, ast.ExceptHandler):
        caught = "" if node.type is None else " " + ast.unparse(node.type)
        return f"except{caught}" + (f" as {node.name}" if node.name else "")
    if isinstance(node, ast.Try | ast.TryStar):
        return None if branch == "handlers" else f"try: {branch}"
    if isinstance(node, ast.match_case):
        guard = "" if node.guard is None else f" if {ast.unparse(node.guard)}"
        return f"case {ast.unparse(node.pattern)}{guard}"
    if isinstance(node, ast.Match):
        return f"match {ast.unparse(node.subject)}"
    return None


def _branch(node: ast.AST, child: ast.AST) -> str:
    for name in ("body", "orelse", "handlers", "finalbody", "cases"):
        if child in getattr(node, name, ()):
            return name
    return "body"


@lru_cache(maxsize=64)
def _parsed(function_source: str) -> tuple[ast.Module, dict[ast.AST, ast.AST]] | None:
    """The function's tree and each node's parent (sites of one function come together)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes warn; not our concern here
            tree = ast.parse(function_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    return tree, parents
