"""The calls in a file to its own validators, with the chains they pass: where a plain
parameter of a validator gets its value (`_verify_len(self.max_model_len)` in the same
file), for the join to walk from the caller (`chains.caller_argument`).

| a validator | the calls read |
|---|---|
| `f`, a top-level function that raises | `f(...)` in the file's functions and methods |
| `C.m`, a method (of a top-level class) that raises | `self.m(...)` / `cls.m(...)` in the methods of `C` (the caller's first parameter) |
| `g.<locals>.f`, a function defined in the body of one of those, that raises | `f(...)` in `g` |

An argument is kept when it is a dotted name (`self.model_config.max_model_len`, `args.port`,
`max_len`), positional ones mapped to the callee's parameters in order (after its receiver),
keywords by name; `*args`, `**kwargs` and anything else are left out.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator

from extractors.config_classes import type_ref
from extractors.references import NAMESPACE_PARAM
from extractors.settings_model import Binding, Caller, FunctionScope, Reference
from extractors.syntax.names import dotted_parts, last_name
from extractors.syntax.text import called_at, has_word
from extractors.syntax.walk import ast_children

MAX_CALLERS = 8  # per validator: the first ones in the file's order

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.Module) -> Iterator[tuple[str, str | None, _Function]]:
    """(qualname, class name, node) of the top-level functions and the methods of
    top-level classes, each followed by the functions defined in its own body
    (`C.m.<locals>.check`, called by name in `C.m`)."""
    for node in tree.body:
        if isinstance(node, _Function):
            yield node.name, None, node
            yield from _nested(node.name, node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, _Function):
                    yield f"{node.name}.{item.name}", node.name, item
                    yield from _nested(f"{node.name}.{item.name}", item)


def _nested(qualname: str, node: _Function) -> Iterator[tuple[str, str | None, _Function]]:
    for item in node.body:
        if isinstance(item, _Function):
            yield f"{qualname}.<locals>.{item.name}", None, item


def _arguments(call: ast.Call, params: list[str], skip: int) -> dict[str, Reference]:
    """The callee's parameters the call passes a dotted name to."""
    passed: dict[str, Reference] = {}
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        position = index + skip
        parts = dotted_parts(arg)
        if position < len(params) and parts is not None:
            passed[params[position]] = Reference(root=parts[0], attrs=tuple(parts[1:]))
    for keyword in call.keywords:
        parts = dotted_parts(keyword.value)
        if keyword.arg in params and parts is not None:
            passed[keyword.arg] = Reference(root=parts[0], attrs=tuple(parts[1:]))
    return passed


def _params(node: _Function) -> tuple[list[str], bool]:
    """(positional parameters in order, whether it is a staticmethod)."""
    static = any(last_name(d) == "staticmethod" for d in node.decorator_list)
    return [a.arg for a in [*node.args.posonlyargs, *node.args.args]], static


def _callee(
    call: ast.Call, cls: str | None, caller: str = "", nested: frozenset = frozenset()
) -> str | None:
    """The qualname a call names: `f(...)` (`caller.<locals>.f` when the caller defines it),
    or `C.m` for `self.m(...)` in a method of C."""
    func = call.func
    if isinstance(func, ast.Name):
        own = f"{caller}.<locals>.{func.id}"
        return own if own in nested else func.id
    if cls is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{cls}.{func.attr}"
    return None


def _target(
    call: ast.Call,
    callee: str | None,
    caller: _Function,
    callees: dict[str, tuple[list[str], bool]],
) -> tuple[list[str], int]:
    """(the parameters of the callee among `callees` a call reaches, how many of them the call
    leaves out: 1 for a method's receiver); ([], 0) for any other call. A method is reached
    only through the caller's own receiver."""
    if callee is None or callee not in callees:
        return [], 0
    params, static = callees[callee]
    if isinstance(call.func, ast.Attribute):
        receiver = caller.args.args[0].arg if caller.args.args else None
        if call.func.value.id != receiver:  # type: ignore[attr-defined]
            return [], 0
        return params, 0 if static else 1
    return params, 0


def _calls_on(node: _Function, wanted: list[int]) -> Iterator[ast.Call]:
    """The calls in a function that sit on one of the `wanted` lines (sorted), walking only
    the nodes whose lines hold one."""
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call):
            yield current
        for child in ast_children(current):
            first = getattr(child, "lineno", None)
            if first is not None:
                index = bisect.bisect_left(wanted, first)
                if index == len(wanted) or wanted[index] > child.end_lineno:  # type: ignore[attr-defined]
                    continue
            stack.append(child)


def callers_of(
    tree: ast.Module, lines: list[str], raising: set[str] | None = None
) -> dict[str, list[Caller]]:
    """The callers in the file (at most MAX_CALLERS each, in the file's order) of each of
    its validators (`raising`: their qualnames, when the site pass knows them; else every
    function whose text raises), and of the functions that call one, with what they pass;
    `lines`: the file's text by line. For a validator, and a function calling one, the
    entries are the same either way, so a memo that spared the site pass changes nothing.
    The text says on which lines the calls sit, and only the nodes there are walked."""
    functions = list(_functions(tree))
    if raising is None:
        raising = {
            q
            for q, _, n in functions
            if has_word("\n".join(lines[n.lineno - 1 : n.end_lineno]), "raise")
        }
    nodes = {q: (cls, n) for q, cls, n in functions}
    nested = frozenset(q for q in nodes if ".<locals>." in q)
    raising = {q for q in raising if q in nodes and not q.rsplit(".", 1)[-1].startswith("__")}
    if not raising:
        return {}
    source = "\n".join(lines)

    def holding(on: list[int]) -> list[str]:
        """The functions with one of these lines inside (beyond their `def` line)."""
        found = []
        for qualname, _, node in functions:
            index = bisect.bisect_right(on, node.lineno)
            if index < len(on) and on[index] <= node.end_lineno:  # type: ignore[operator]
                found.append(qualname)
        return found

    def short(qualnames: set[str]) -> set[str]:
        return {q.rsplit(".", 1)[-1] for q in qualnames}

    on_raising = lines_calling(source, short(raising))
    passing = {q for q in holding(on_raising) if q not in raising}
    callees = {q: _params(nodes[q][1]) for q in raising | passing}
    called_on = lines_calling(source, short(set(callees))) if passing else on_raising
    callers: dict[str, list[Caller]] = {}
    for qualname in holding(called_on):
        cls, node = nodes[qualname]
        scope: FunctionScope | None = None
        # in the file's order (the walk pops the last statements first)
        calls = sorted(_calls_on(node, called_on), key=lambda c: (c.lineno, c.col_offset))
        for call in calls:
            callee = _callee(call, cls, qualname, nested)
            params, skip = _target(call, callee, node, callees)
            if not params or callee == qualname or len(callers.get(callee, ())) >= MAX_CALLERS:
                continue
            passed = _arguments(call, params, skip)
            if passed:
                scope = scope or _scope(node)
                callers.setdefault(callee, []).append(
                    Caller(qualname=qualname, args=passed, scope=scope)
                )
    order = {q: index for index, (q, _, _) in enumerate(functions)}
    for found in callers.values():  # the walk pops the last statements first
        found.sort(key=lambda caller: order[caller.qualname])
    return callers


def _scope(node: _Function) -> FunctionScope:
    """A caller's scope as the join reads it: its parameters and what their annotations
    (or an unannotated `args`) say; not the local aliases its body binds, whose walk would
    cost as much as the rest of these facts."""
    params, static = _params(node)
    bindings: dict[str, Binding] = {}
    for param in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
        if param.annotation is not None:
            ref = type_ref(param.annotation)
            if ref.names:
                bindings[param.arg] = Binding(type=ref)
        elif param.arg == NAMESPACE_PARAM:
            bindings[param.arg] = Binding(parsed=True)
    return FunctionScope(params=params, static=static, bindings=bindings)


def lines_calling(source: str, names: set[str]) -> list[int]:
    """The lines (1-based, sorted) on which one of `names` is called: the name starts a word
    and `(` follows it (`called_at`, which scans without a regex)."""
    found: set[int] = set()
    line, counted = 1, 0
    for at in called_at(source, names):  # offsets in order: count the newlines once
        line += source.count("\n", counted, at)
        counted = at
        found.add(line)
    return sorted(found)
