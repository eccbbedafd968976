"""The calls in a file to its own validators, with the chains they pass: where a plain
parameter of a validator gets its value (`_verify_len(self.max_model_len)` in the same
file), for the join to walk from the caller (`chains.caller_argument`).

| a validator | the calls read |
|---|---|
| `f`, a top-level function that raises | `f(...)` in the file's functions and methods |
| `C.m`, a method (of a top-level class) that raises | `self.m(...)` / `cls.m(...)` in the methods of `C` (the caller's first parameter) |

An argument is kept when it is a dotted name (`self.model_config.max_model_len`, `args.port`,
`max_len`), positional ones mapped to the callee's parameters in order (after its receiver),
keywords by name; `*args`, `**kwargs` and anything else are left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from extractors.references import scope_of
from extractors.settings_model import Caller, FunctionScope, Reference
from extractors.syntax.names import dotted_parts, last_name

MAX_CALLERS = 8  # per validator: the first ones in the file's order

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(tree: ast.Module) -> Iterator[tuple[str, str | None, _Function]]:
    """(qualname, class name, node) of the top-level functions and the methods of
    top-level classes."""
    for node in tree.body:
        if isinstance(node, _Function):
            yield node.name, None, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, _Function):
                    yield f"{node.name}.{item.name}", node.name, item


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


def _callee(call: ast.Call, cls: str | None) -> str | None:
    """The qualname a call names: `f(...)`, or `C.m` for `self.m(...)` in a method of C."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if cls is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{cls}.{func.attr}"
    return None


def _target(
    call: ast.Call, cls: str | None, caller: _Function, callees: dict[str, tuple[list[str], bool]]
) -> tuple[list[str], int]:
    """(the parameters of the callee among `callees` a call reaches, how many of them the call
    leaves out: 1 for a method's receiver); ([], 0) for any other call. A method is reached
    only through the caller's own receiver."""
    callee = _callee(call, cls)
    if callee is None or callee not in callees:
        return [], 0
    params, static = callees[callee]
    if isinstance(call.func, ast.Attribute):
        receiver = caller.args.args[0].arg if caller.args.args else None
        if call.func.value.id != receiver:  # type: ignore[attr-defined]
            return [], 0
        return params, 0 if static else 1
    return params, 0


def callers_of(tree: ast.Module) -> dict[str, list[Caller]]:
    """The callers in the file (at most MAX_CALLERS each, in the file's order) of each of its
    functions that raises, with what they pass. Every such function, not only the site pass's
    validators: the facts are the same whether or not a memo spared that pass."""
    functions = list(_functions(tree))
    calls: dict[str, list[ast.Call]] = {}
    raising: dict[str, tuple[list[str], bool]] = {}
    for qualname, _, node in functions:
        found = calls.setdefault(qualname, [])
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                found.append(inner)
            elif isinstance(inner, ast.Raise) and qualname not in raising:
                raising[qualname] = _params(node)
    if not raising:
        return {}
    # one level more: the functions that hand a parameter of theirs on to one that raises
    passing = {
        qualname: _params(node)
        for qualname, cls, node in functions
        if qualname not in raising
        and any(
            ref.root in _params(node)[0]
            for call in calls[qualname]
            for ref in _arguments(call, *_target(call, cls, node, raising)).values()
        )
    }
    callees = {**raising, **passing}
    callers: dict[str, list[Caller]] = {}
    for qualname, cls, node in functions:
        scope: FunctionScope | None = None
        for call in calls[qualname]:
            params, skip = _target(call, cls, node, callees)
            callee = _callee(call, cls)
            if not params or callee == qualname or len(callers.get(callee, ())) >= MAX_CALLERS:
                continue
            passed = _arguments(call, params, skip)
            if passed:
                scope = scope or scope_of(node)
                callers.setdefault(callee, []).append(
                    Caller(qualname=qualname, args=passed, scope=scope)
                )
    return callers
