"""Dotted names in `ast` trees, and which class a `raise` names."""

from __future__ import annotations

import ast


def dotted_parts(node: ast.AST) -> list[str] | None:
    """`self.a.b` -> ['self', 'a', 'b']; None for anything but a dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def read_attribute(node: ast.AST) -> list[str] | None:
    """The chain an attribute read names, with `getattr` read as the attribute it fetches
    (a default changes only what a missing attribute gives):

    | read | chain |
    |---|---|
    | `cfg.x` | `['cfg', 'x']` |
    | `getattr(hf_config, "pooling", None)` | `['hf_config', 'pooling']` |
    | `getattr(self.model_config, "x")` | `['self', 'model_config', 'x']` |
    | `getattr(self, name)`, `getattr(x, "not a name")` | None |
    | `getattr(f(), "x")` | None |
    """
    if isinstance(node, ast.Call):
        return getattr_parts(node)
    return dotted_parts(node)


def getattr_parts(node: ast.Call) -> list[str] | None:
    """`getattr(a.b, "c"[, default])` -> ['a', 'b', 'c'] (see `read_attribute`)."""
    func, args = node.func, node.args
    if not (isinstance(func, ast.Name) and func.id == "getattr") or node.keywords:
        return None
    if len(args) not in (2, 3) or not isinstance(args[1], ast.Constant):
        return None
    name = args[1].value
    if not isinstance(name, str) or not name.isidentifier():
        return None
    base = read_attribute(args[0])
    return [*base, name] if base is not None else None


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` -> "a.b.c"; None for anything but a dotted name."""
    parts = dotted_parts(node)
    return ".".join(parts) if parts is not None else None


def last_name(node: ast.AST) -> str | None:
    """The last part of a dotted name or of a call's callee (`pydantic.Field(...)` -> Field)."""
    if isinstance(node, ast.Call):
        node = node.func
    name = dotted(node)
    return name.rsplit(".", 1)[-1] if name else None


def decorator_name(node: ast.expr) -> str | None:
    """The attribute a decorator ends in, whatever it is called on: `field_validator`,
    `pydantic.field_validator(...)`, `registry[0].hook` -> its last name."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def named_class(name: str | None) -> str | None:
    """The class a raised dotted name certainly names: `ValueError` and
    `builtins.ValueError` name `ValueError`; anything else (`errors.Bad`, a variable's
    attribute) is left to no one."""
    if name is None:
        return None
    head, _, rest = name.partition(".")
    if not rest:
        return head
    return rest if head == "builtins" and "." not in rest else None


def raised_class(node: ast.Raise) -> str | None:
    """The class a `raise` names: `ValueError`, `builtins.ValueError(...)` -> `ValueError`.
    Only forms that certainly name a class count; `raise err` of a variable does not."""
    exc = node.exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    return named_class(dotted(exc)) if exc is not None else None
