"""The cheap pre-pass: a stdlib `ast` walk that tables a file's functions, calls and raises."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from extractors.syntax.names import decorator_name, raised_class
from extractors.syntax.walk import own_nodes, own_statements

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Calls:
    """What a function's own scope calls and reads, as the validator rules follow it."""

    self_calls: frozenset[str] = frozenset()  # `self.x(...)`, `cls.x(...)`
    direct: frozenset[str] = frozenset()  # `x(...)`
    class_calls: frozenset[tuple[str, str]] = frozenset()  # `Class.x(...)`
    super_calls: frozenset[str] = frozenset()  # `super().x(...)`
    self_reads: frozenset[str] = frozenset()  # `self.x` read without a call (a property?)
    member_calls: frozenset[tuple[str, str]] = frozenset()  # `self.member.x(...)`
    # `self.member: T = ...`, or `self.member = param` of a parameter annotated `T`: (member, T)
    member_types: tuple[tuple[str, str], ...] = ()

    def to_row(self) -> list:
        return [
            sorted(self.self_calls),
            sorted(self.direct),
            sorted(map(list, self.class_calls)),
            sorted(self.super_calls),
            sorted(self.self_reads),
            sorted(map(list, self.member_calls)),
            [list(pair) for pair in self.member_types],
        ]

    @classmethod
    def from_row(cls, row: list) -> Calls:
        self_calls, direct, class_calls, super_calls, reads, member_calls, types = row
        return cls(
            frozenset(self_calls),
            frozenset(direct),
            frozenset(map(tuple, class_calls)),
            frozenset(super_calls),
            frozenset(reads),
            frozenset(map(tuple, member_calls)),
            tuple((member, text) for member, text in types),
        )


@dataclass
class Function:
    """One `def` of a file, as the pre-pass sees it (no libcst yet)."""

    qualname: str  # `Class.method`, `outer.<locals>.inner`
    name: str
    owner_class: str | None  # qualname of the class the def sits directly in, if any
    parent: str | None  # qualname of the function it is nested in, if any
    self_class: str | None  # the class `self.x(...)` refers to (the method's, for closures too)
    decorators: tuple[str, ...]  # last dotted segment of each decorator's callee
    start: int  # first line, decorators included
    def_line: int
    end: int
    indent: int  # column of the `def` (its decorators start at the same column)
    raise_lines: list[int]  # raises of a configured class in this function's own scope
    # None when the table came from a memo of segments (extractors/segments.py)
    node: FunctionNode | None = field(repr=False)
    _calls: Calls | None = field(default=None, repr=False)
    # fills in `node` when the calls are needed and the table came without nodes
    _reparse: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    @property
    def calls(self) -> Calls:
        # computed only for validators: walking every expression of every function is
        # the slow part of the pre-pass
        if self._calls is None:
            if self.node is None and self._reparse is not None:
                self._reparse()
            assert self.node is not None
            self._calls = scan_calls(self.node)
        return self._calls


_SELF = ("self", "cls")


def scan_calls(node: FunctionNode) -> Calls:
    """The calls and `self` reads of a function's own scope (nested scopes not entered)."""
    self_calls: set[str] = set()
    direct: set[str] = set()
    class_calls: set[tuple[str, str]] = set()
    super_calls: set[str] = set()
    member_calls: set[tuple[str, str]] = set()
    types: dict[str, str] = {}
    params = {
        arg.arg: ast.unparse(arg.annotation)
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        if arg.annotation is not None
    }
    called: set[int] = set()  # ids of the Attribute nodes that are callees
    self_attributes: list[ast.Attribute] = []  # `self.x` read, called or not
    for child in own_nodes(node.body):
        if isinstance(child, ast.Attribute):
            if isinstance(child.ctx, ast.Load) and _is_self_member(child):
                self_attributes.append(child)
        elif isinstance(child, ast.Call):
            callee = child.func
            if isinstance(callee, ast.Name):
                direct.add(callee.id)
            elif isinstance(callee, ast.Attribute):
                called.add(id(callee))
                owner = callee.value
                if isinstance(owner, ast.Name):
                    if owner.id in _SELF:
                        self_calls.add(callee.attr)
                    else:  # a class of the file, or a module, a local, ...: resolved later
                        class_calls.add((owner.id, callee.attr))
                elif _is_super(owner):
                    super_calls.add(callee.attr)
                elif _is_self_member(owner):
                    member_calls.add((owner.attr, callee.attr))
        elif isinstance(child, ast.AnnAssign) and _is_self_member(child.target):
            types.setdefault(child.target.attr, ast.unparse(child.annotation))
        elif isinstance(child, ast.Assign) and isinstance(child.value, ast.Name):
            for target in child.targets:
                if _is_self_member(target) and child.value.id in params:
                    types.setdefault(target.attr, params[child.value.id])
    reads = {attribute.attr for attribute in self_attributes if id(attribute) not in called}
    return Calls(
        frozenset(self_calls),
        frozenset(direct),
        frozenset(class_calls),
        frozenset(super_calls),
        frozenset(reads),
        frozenset(member_calls),
        tuple(sorted(types.items())),
    )


def _is_super(node: ast.expr) -> bool:
    """`super()` or `super(Class, self)`."""
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _is_self_member(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def function_table(
    tree: ast.Module, error_classes: tuple[str, ...], offset: int = 0
) -> list[Function]:
    """All functions of a module in source order, with what the validator rules need; `offset`
    is added to every line number (for a tree parsed from a piece of a file)."""
    table: list[Function] = []
    _visit(table, frozenset(error_classes), offset, tree.body, "", None, None, None)
    table.sort(key=lambda fn: (fn.start, fn.def_line))
    return table


def _visit(
    table: list[Function],
    classes: frozenset[str],
    offset: int,
    body,
    prefix: str,
    owner_class: str | None,
    parent: str | None,
    self_class,
) -> list[int]:
    """The raise lines of `body`'s own scope; its functions (nested ones too) go into `table`.
    A module-level function, not a closure: a recursive closure is a reference cycle that
    would keep every parsed tree alive until the cyclic collector ran."""
    raises: list[int] = []
    for stmt in own_statements(body):
        if isinstance(stmt, ast.ClassDef):
            qual = prefix + stmt.name
            _visit(table, classes, offset, stmt.body, qual + ".", qual, parent, qual)
        elif isinstance(stmt, _DEFS):
            qual = prefix + stmt.name
            first = stmt.decorator_list[0] if stmt.decorator_list else stmt
            fn = Function(
                qualname=qual,
                name=stmt.name,
                owner_class=owner_class,
                parent=parent,
                self_class=self_class,
                decorators=tuple(
                    name for name in map(decorator_name, stmt.decorator_list) if name is not None
                ),
                start=first.lineno + offset,
                def_line=stmt.lineno + offset,
                end=(stmt.end_lineno or stmt.lineno) + offset,
                indent=stmt.col_offset,
                raise_lines=[],
                node=stmt,
            )
            table.append(fn)
            fn.raise_lines = _visit(
                table, classes, offset, stmt.body, qual + ".<locals>.", None, qual, self_class
            )
        elif isinstance(stmt, ast.Raise) and raised_class(stmt) in classes:
            raises.append(stmt.lineno + offset)
    return raises
