"""What a site reads and what its names stand for: the attribute chains of its guards and
message placeholders (`self.cache_config.mamba_cache_mode`), and the bindings of its function
(the receiver, parameters annotated with a class, a local `cfg = self.x`, a field
validator's value). The join (`pipeline/mine/settings/`) resolves them to settings.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from collections import Counter

from extractors.config_classes import type_ref
from extractors.patterns import runtime_parts
from extractors.settings_model import Binding, FunctionScope, Reference
from extractors.syntax.names import dotted, getattr_parts, last_name, read_attribute
from extractors.syntax.walk import ast_walk

_FIELD_VALIDATORS = frozenset({"field_validator", "validator"})
# an unannotated parameter of this name holds what a parser of the same file parsed
NAMESPACE_PARAM = "args"


def _chains(node: ast.AST) -> list[Reference]:
    """The maximal attribute chains rooted at a name in an expression, and bare names, in
    order; a method call keeps its object (`self.x.startswith(...)` reads `self.x`)."""
    inner: set[int] = set()  # nodes that are part of a longer chain
    callees: set[int] = set()
    found: list[tuple[int, int, Reference]] = []
    # one walk: it yields a node before its children, so a chain's outer node and a call
    # are noted before the inner node or the callee is reached
    for sub in ast_walk(node):
        if isinstance(sub, ast.Attribute):
            inner.add(id(sub.value))
        elif isinstance(sub, ast.Call):
            callees.add(id(sub.func))
            fetched = getattr_parts(sub)  # `getattr(cfg, "x", d)` reads `cfg.x`
            if fetched is not None and id(sub) not in inner:
                inner.add(id(sub.args[0]))
                root, *attrs = fetched
                found.append((sub.lineno, sub.col_offset, Reference(root=root, attrs=attrs)))
        if id(sub) in inner or not isinstance(sub, ast.Attribute | ast.Name):
            continue
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            continue
        chain = sub.value if id(sub) in callees and isinstance(sub, ast.Attribute) else sub
        if id(sub) in callees and isinstance(sub, ast.Name):
            continue  # a function's name: `len(...)`
        name = dotted(chain)
        if name is None:
            continue
        root, *attrs = name.split(".")
        found.append((sub.lineno, sub.col_offset, Reference(root=root, attrs=attrs)))
    found.sort(key=lambda item: (item[0], item[1]))
    return list(dict.fromkeys(ref for _, _, ref in found))


def _parse(expr: str) -> ast.expr | None:
    try:
        return ast.parse(f"(\n{expr}\n)", mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def part_expressions(message: str) -> list[str]:
    """The expressions of an errorMessage's run-time parts, in order, conversion and format
    spec taken off (`{cfg.mode!r:>10}` -> `cfg.mode`); the pieces a message may hold
    (`{? (equivalent to {x})}`, `{* {name}}`) are searched for theirs. Parts that are no
    expression are left out, and so is a part that never closes. The brace grammar is
    `extractors.patterns.runtime_parts`'."""
    found: list[str] = []
    for part in runtime_parts(message):
        if not part.endswith("}"):
            continue  # unbalanced: the rest is text
        body = part[1:-1]
        if body[:1] in ("?", "*"):
            found += part_expressions(body[1:])
        elif (expr := _expression_part(body)) is not None:
            found.append(expr)
    return found


def _expression_part(text: str) -> str | None:
    """The longest head of `text` that parses, cut at a `!` or `:` (the conversion/spec)."""
    cuts = [len(text)] + sorted((i for i, char in enumerate(text) if char in "!:"), reverse=True)
    for cut in cuts:
        head = text[:cut].strip()
        if head and _parse(head) is not None:
            return head
    return None


@functools.lru_cache(maxsize=4096)
def _references_of(text: str) -> tuple[Reference, ...]:
    node = _parse(text)
    return tuple(_chains(node)) if node is not None else ()


def references(guards: list[str], message: str) -> list[Reference]:
    """The chains and names a site reads in its guards and its message, first seen first."""
    found: list[Reference] = []
    for text in [*guards, *part_expressions(message)]:
        found += _references_of(text)
    return list(dict.fromkeys(found))


# the sites of one function share it, and a history's releases the functions they did not
# change (vLLM has about 800 functions with sites)
@functools.lru_cache(maxsize=4096)
def function_scope(source: str) -> FunctionScope:
    """The bindings of a function's names, from its source (decorators included)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError, RecursionError):
        return FunctionScope()
    func = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None
    )
    return FunctionScope() if func is None else scope_of(func)


def scope_of(func: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionScope:
    """The bindings of a function's names, from its tree."""
    positional = [*func.args.posonlyargs, *func.args.args]
    static = any(last_name(d) == "staticmethod" for d in func.decorator_list)
    bindings: dict[str, Binding] = {}
    for param in [*positional, *func.args.kwonlyargs]:
        if param.annotation is not None:
            ref = type_ref(param.annotation)
            if ref.names:
                bindings[param.arg] = Binding(type=ref)
        elif param.arg == NAMESPACE_PARAM:
            bindings[param.arg] = Binding(parsed=True)
    value_field = _validated_field(func)
    if value_field is not None and len(positional) >= 2 and not static:
        receiver, value = positional[0].arg, positional[1].arg
        bindings[value] = Binding(chain=Reference(root=receiver, attrs=[value_field]))
    stores: Counter[str] = Counter()
    chains: dict[str, str] = {}
    for node in ast_walk(func):  # one walk: big validators make this the costly part
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] += 1
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Attribute | ast.Call)
            and (parts := read_attribute(node.value)) is not None
        ):
            chains[node.targets[0].id] = ".".join(parts)  # `x = getattr(cfg, "x", d)` too
    params = {p.arg for p in [*positional, *func.args.kwonlyargs]}
    for target, name in chains.items():
        if stores[target] == 1 and target not in params:
            root, *attrs = name.split(".")
            bindings[target] = Binding(chain=Reference(root=root, attrs=attrs))
    return FunctionScope(params=[p.arg for p in positional], static=static, bindings=bindings)


def _validated_field(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The one field a `@field_validator("x")` (or pydantic v1 `@validator`) checks."""
    for decorator in func.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        name = last_name(decorator)
        fields = [
            a.value
            for a in decorator.args
            if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        if name in _FIELD_VALIDATORS and len(fields) == 1 and len(decorator.args) == 1:
            return fields[0]
    return None
