"""What the installed file says about a site, read with `ast` (static: nothing of it runs
here): the text of its raise line, for the stale check, and the function's facts that the
planner needs, its parameters and binding, its decorators, its loops and the locals its
guards read, each with the expression that defines it last before the raise."""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Function:
    """The function a site's raise is in, as installed."""

    classes: tuple[str, ...]  # the enclosing classes, outermost first ((), a module function)
    name: str
    params: tuple[str, ...]  # positional-or-keyword and keyword-only, in order
    defaults: frozenset[str]  # the parameters that have a default
    decorators: tuple[str, ...]  # each decorator's last name: classmethod, field_validator, ...
    locals: dict[str, ast.expr] = field(default_factory=dict)  # name -> defining expression
    loops: dict[str, ast.expr] = field(default_factory=dict)  # loop variable -> iterable
    # each enclosing loop: its target's names (`for k, v in ...`: two) and its iterable
    loop_targets: tuple[tuple[tuple[str, ...], ast.expr], ...] = ()
    lines: tuple[int, int] = (0, 0)  # its first line (decorators included) and its last

    def source(self, text: str) -> str:
        """The function as written in `text`, its indentation removed."""
        first, last = self.lines
        return textwrap.dedent("\n".join(text.splitlines()[first - 1 : last]))

    @property
    def binding(self) -> str:
        """How the function is called: `instance` (its first parameter is the object),
        `class` (a classmethod, or a pydantic validator whose first parameter is `cls`),
        `static` (a staticmethod or module function)."""
        if not self.classes or "staticmethod" in self.decorators:
            return "static"
        if "classmethod" in self.decorators or (self.params and self.params[0] == "cls"):
            return "class"
        return "instance"

    @property
    def arguments(self) -> tuple[str, ...]:
        """The parameters a caller passes (the bound first one left out)."""
        return self.params[1:] if self.binding != "static" else self.params


def raise_line(text: str, line: int) -> str | None:
    """The stripped text of `line` (1-based) of a file, None past its end."""
    lines = text.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else None


def function_at(text: str, qualname: str, line: int) -> Function | None:
    """The function named `qualname` that holds `line`; None when the file does not parse or
    holds no such function (a nested function, `f.<locals>.g`, is not callable alone)."""
    if "<" in qualname:
        return None
    tree = _module(text)
    if tree is None:
        return None
    *owners, name = qualname.split(".")
    scope: list[ast.stmt] = tree.body
    for owner in owners:
        found = [node for node in scope if isinstance(node, ast.ClassDef) and node.name == owner]
        if not found:
            return None
        scope = found[-1].body
    for node in scope:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name != name:
            continue
        if not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        found = _function(node, tuple(owners), line)
        helpers = _message_helpers(text)
        for name, value in list(found.locals.items()):
            if (
                isinstance(value, ast.Subscript)
                and isinstance(value.value, ast.Call)
                and _last_name(value.value.func) in helpers
            ):
                del found.locals[name]  # `ok, message = check(x)`: the real check runs
        return found
    return None


@functools.lru_cache(maxsize=16)
def _module(text: str) -> ast.Module | None:
    """A file's tree, parsed once for its sites (nothing changes it)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


@functools.lru_cache(maxsize=16)
def _message_helpers(text: str) -> frozenset[str]:
    """The file's functions that return text in a tuple (`return False, f"bad {x}"`): the
    message a raise shows comes from them, so they are never patched."""
    tree = _module(text)
    found: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if (
                isinstance(inner, ast.Return)
                and isinstance(inner.value, ast.Tuple)
                and any(
                    isinstance(item, ast.JoinedStr)
                    or (isinstance(item, ast.Constant) and isinstance(item.value, str))
                    for item in inner.value.elts
                )
            ):
                found.add(node.name)
                break
    return frozenset(found)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, classes, line: int) -> Function:
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    with_default = positional[len(positional) - len(arguments.defaults) :]
    defaults = {argument.arg for argument in with_default}
    defaults |= {
        argument.arg
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is not None
    }
    params = tuple(argument.arg for argument in [*positional, *arguments.kwonlyargs])
    local_values = {
        name: value
        for name, value in _defined(node.body, line, {}).items()
        if name not in params and value is not None
    }
    loops: dict[str, ast.expr] = {}
    loop_targets: list[tuple[tuple[str, ...], ast.expr]] = []
    for inner in _before(node, line):
        if isinstance(inner, ast.For) and inner.lineno <= line <= (inner.end_lineno or 0):
            target = inner.target
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            if all(isinstance(element, ast.Name) for element in elements):
                names = tuple(element.id for element in elements)  # type: ignore[attr-defined]
                loop_targets.append((names, inner.iter))
                loops.update(dict.fromkeys(names, inner.iter))
    for name in loops:
        local_values.pop(name, None)
    return Function(
        classes=classes,
        name=node.name,
        params=params,
        defaults=frozenset(defaults),
        decorators=tuple(_last_name(decorator) for decorator in node.decorator_list),
        locals=local_values,
        loops=loops,
        loop_targets=tuple(loop_targets),
        lines=(
            min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)]),
            node.end_lineno or node.lineno,
        ),
    )


_EXITS = (ast.Raise, ast.Return, ast.Continue, ast.Break)


def _defined(
    body: list[ast.stmt], line: int, known: dict[str, ast.expr | None]
) -> dict[str, ast.expr | None]:
    """What each local holds at `line`, from the statements of `body` before it: the last
    assignment on the way; a local that two branches of an earlier `if` set differently
    holds `a if test else b` (a branch that exits adds nothing); None for what cannot be
    told (`x += 1`, a loop's assignment)."""
    known = dict(known)
    for statement in body:
        if statement.lineno >= line:
            break
        inside = statement.lineno <= line <= (statement.end_lineno or statement.lineno)
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            known.update(_assigned(statement))
        elif isinstance(statement, ast.If) and inside:
            branch = statement.body if line < _start(statement.orelse, line) else statement.orelse
            return _defined(branch, line, known)
        elif isinstance(statement, ast.If):
            taken = _defined(statement.body, line, known)
            other = _defined(statement.orelse, line, known)
            exits = [_exits(statement.body), _exits(statement.orelse)]
            if exits[0] and not exits[1]:
                known = other
            elif exits[1] and not exits[0]:
                known = taken
            else:
                for name in {*taken, *other}:
                    first, second = taken.get(name), other.get(name)
                    if first is None or second is None:  # set on one way only
                        known[name] = second if first is None else first
                    elif ast.dump(first) != ast.dump(second):
                        known[name] = ast.IfExp(statement.test, first, second)
                    else:
                        known[name] = first
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        else:  # a loop, a with, a try: their assignments, in order (as before)
            for inner in _before(statement, line):
                if isinstance(inner, ast.Assign | ast.AnnAssign):
                    known.update(_assigned(inner))
    return known


def _assigned(statement: ast.Assign | ast.AnnAssign) -> dict[str, ast.expr]:
    """The names one assignment sets, with their values: `x = v`, `x: T = v`, `a, b = (u, v)`
    item by item, and `a, b = f(x)` as `f(x)[0]`, `f(x)[1]`."""
    if isinstance(statement, ast.AnnAssign):
        target, value = statement.target, statement.value
    elif len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
    else:
        return {}
    if value is None:
        return {}
    if isinstance(target, ast.Name):
        return {target.id: value}
    if not isinstance(target, ast.Tuple | ast.List):
        return {}
    if isinstance(value, ast.Tuple | ast.List) and len(target.elts) == len(value.elts):
        return {
            name.id: item
            for name, item in zip(target.elts, value.elts, strict=True)
            if isinstance(name, ast.Name)
        }
    if isinstance(value, ast.Call) and not any(isinstance(n, ast.Starred) for n in target.elts):
        # `a, b = f(x)`: each is an item of what f returns (a patched f returns them)
        return {
            name.id: ast.Subscript(value, ast.Constant(position), ast.Load())
            for position, name in enumerate(target.elts)
            if isinstance(name, ast.Name)
        }
    return {}


def _start(body: list[ast.stmt], line: int) -> int:
    """Where a block starts (past `line` when it is empty)."""
    return body[0].lineno if body else line + 1


def _exits(body: list[ast.stmt]) -> bool:
    """Whether a block ends in a raise, return, continue or break."""
    return bool(body) and isinstance(body[-1], _EXITS)


def _before(node: ast.AST, line: int) -> list[ast.stmt]:
    """The function's own statements that start before `line`, in source order (not those
    of nested functions or classes)."""
    found: list[ast.stmt] = []
    pending = list(ast.iter_child_nodes(node))
    while pending:
        inner = pending.pop(0)
        if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(inner, ast.stmt) and inner.lineno < line:
            found.append(inner)
        pending[:0] = list(ast.iter_child_nodes(inner))
    return sorted(found, key=lambda statement: (statement.lineno, statement.col_offset))


def _last_name(decorator: ast.expr) -> str:
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return decorator.id if isinstance(decorator, ast.Name) else ""


@functools.lru_cache(maxsize=64)
def _parents(text: str) -> tuple[dict[int, list[ast.stmt]], dict[int, ast.AST]]:
    """The statements that start on each line, and each node's parent (by id)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}, {}
    starts: dict[int, list[ast.stmt]] = {}
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.stmt):
            starts.setdefault(node.lineno, []).append(node)
    return starts, parents


_NONE_ATTRIBUTE = re.compile(r"'NoneType' object has no attribute '(\w+)'")
_NONE_LENGTH = "object of type 'NoneType' has no len()"


def not_none_test(text: str, line: int, message: str, roots: set[str]) -> str | None:
    """The test that keeps a None from failing on `line` (`'NoneType' object has no attribute
    'x'` where `a.b.x` is read: `a.b is not None`; `len()` of None: its argument), when what
    was None is read from one of `roots` (the names the caller can set); else None."""
    found = _NONE_ATTRIBUTE.fullmatch(message)
    if found is None and message != _NONE_LENGTH:
        return None
    starts, _ = _parents(text)
    statements = [
        statement
        for statements in starts.values()
        for statement in statements
        if statement.lineno <= line <= (statement.end_lineno or statement.lineno)
    ]
    if not statements:
        return None
    innermost = max(statements, key=lambda statement: statement.lineno)
    for node in ast.walk(innermost):
        if found is not None and isinstance(node, ast.Attribute) and node.attr == found[1]:
            held = node.value
        elif (
            found is None
            and isinstance(node, ast.Call)
            and _last_name(node.func) == "len"
            and len(node.args) == 1
        ):
            held = node.args[0]
        else:
            continue
        root = held
        while isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        if isinstance(root, ast.Name) and root.id in roots:
            return f"{ast.unparse(held)} is not None"
    return None


def passing_test(text: str, line: int) -> str | None:
    """The test that keeps the exit at `line` of an installed file from being taken: for a
    `raise`, its enclosing `if` tests negated; for an `assert`, its test. None when the line
    holds neither, or a raise under no `if`."""
    starts, parents = _parents(text)
    # the line a traceback gives may be inside a raise that spans lines
    held = [
        statement
        for statements in starts.values()
        for statement in statements
        if isinstance(statement, ast.Raise | ast.Assert)
        and statement.lineno <= line <= (statement.end_lineno or statement.lineno)
    ]
    for statement in starts.get(line, []) or held:
        if isinstance(statement, ast.Assert):
            return ast.unparse(statement.test)
        if not isinstance(statement, ast.Raise):
            continue
        tests: list[str] = []
        node: ast.AST = statement
        while id(node) in parents:
            parent = parents[id(node)]
            if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                break
            if isinstance(parent, ast.If):
                test = ast.unparse(parent.test)
                tests.append(f"({test})" if node in parent.body else f"not ({test})")
            node = parent
        if tests:
            return "not (" + " and ".join(reversed(tests)) + ")"
    return None


def passing_test_through_call(text: str, line: int, call_line: int) -> str | None:
    """The passing tests (passing_test) of the exit at `line` and the other exits of the
    function it is in, that the call on `call_line` reached, in the caller's terms: the callee's locals replaced by what defines
    them, its parameters by the call's arguments (`_check(x, device=q.device)` with `if
    t.device != device: raise` -> `not ((x.device != q.device))`). None when no call of that
    function is on `call_line`."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    callees = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not callees:
        return None
    callee = max(callees, key=lambda node: node.lineno)  # the innermost
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and node.lineno <= call_line <= (node.end_lineno or node.lineno)
        and _last_name(node.func) == callee.name
    ]
    if not calls:
        return None
    call = calls[0]
    # every exit of the callee, the one taken first in front: the call must pass them all
    exits = [line] + [
        inner.lineno
        for inner in _before(callee, (callee.end_lineno or line) + 1)
        if isinstance(inner, ast.Raise | ast.Assert) and inner.lineno != line
    ]
    tests = [test for test in (passing_test(text, at) for at in exits) if test is not None]
    if not tests:
        return None
    test = " and ".join(f"({test})" for test in tests)
    facts = _function(callee, (), line)
    params = list(facts.params)
    names: dict[str, ast.expr] = {}
    if isinstance(call.func, ast.Attribute) and params and params[0] in ("self", "cls"):
        names[params.pop(0)] = call.func.value  # self._check(...): self is the caller's
    if any(isinstance(argument, ast.Starred) for argument in call.args):
        return None
    names.update(zip(params, call.args, strict=False))
    names.update({keyword.arg: keyword.value for keyword in call.keywords if keyword.arg})
    # the callee's locals first, then its parameters in what they were replaced by
    replaced = _Names(names).visit(_Names(dict(facts.locals)).visit(ast.parse(test, mode="eval")))
    return ast.unparse(replaced)


class _Names(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.names.get(node.id, node)
