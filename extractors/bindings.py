"""The value of local message variables (`msg = f"..."; msg += ...`) on the path to a raise."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from extractors.guards import Block, Step
from extractors.messages import Hole, Lookup, Message, message_of, one_line

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_NOTHING = Message()


class Bindings:
    """What each local name holds, as a Message, at one point of a function.

    Only names that hold some known text are bound; anything else is left to the message
    reader, which writes it as a Hole with the name.
    """

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.values: dict[str, Message] = {}

    def lookup(self, name: str) -> Message | None:
        return self.values.get(name)

    def copy(self) -> Bindings:
        twin = Bindings(self.module)
        twin.values = dict(self.values)  # Messages are immutable
        return twin

    def _bind(self, name: str, value: Message) -> None:
        if value.has_text():
            self.values[name] = value
        else:
            self.values.pop(name, None)

    def _value(self, node: cst.BaseExpression) -> Message:
        if not self._may_hold_text(node):
            return _NOTHING  # reading every `x = self.y(...)` as a message is the slow part
        return message_of(node, self.module, self.lookup)

    def _may_hold_text(self, node: cst.BaseExpression) -> bool:
        """A cheap test: could this value be (or contain) literal text we can read?"""
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return True
        if isinstance(node, cst.Name):
            return node.value in self.values
        if isinstance(node, cst.BinaryOperation):
            return self._may_hold_text(node.left) or self._may_hold_text(node.right)
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "format":
                return self._may_hold_text(func.value)
            if isinstance(func, cst.Name) and func.value in ("str", "repr"):
                return True
        return False

    def run(self, statement: cst.CSTNode) -> None:
        """Apply a statement that certainly runs before the raise."""
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.run(small)
        elif isinstance(statement, cst.Assign):
            value = self._value(statement.value)
            for target in statement.targets:
                if isinstance(target.target, cst.Name):
                    self._bind(target.target.value, value)
                else:
                    self._forget_names_in(target.target)
        elif isinstance(statement, cst.AnnAssign) and statement.value is not None:
            if isinstance(statement.target, cst.Name):
                self._bind(statement.target.value, self._value(statement.value))
        elif isinstance(statement, cst.AugAssign) and isinstance(statement.target, cst.Name):
            name = statement.target.value
            if isinstance(statement.operator, cst.AddAssign):
                current = self.values.get(name) or Message((Hole(name, False),))
                self._bind(name, current + self._value(statement.value))
            else:
                self.values.pop(name, None)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            self.values.pop(statement.name.value, None)
        elif isinstance(statement, cst.BaseCompoundStatement):
            self.maybe_run(statement)

    def maybe_run(self, statement: cst.CSTNode) -> None:
        """Apply a statement that may or may not have run (a branch or loop not enclosing the
        raise): an assignment there makes the value unknown, a `+=` adds an unknown part."""
        if not self.values:
            return  # nothing bound that this statement could change
        for node in _own_nodes(statement):
            if isinstance(node, (cst.Assign, cst.AnnAssign)):
                targets = (
                    [t.target for t in node.targets]
                    if isinstance(node, cst.Assign)
                    else [node.target]
                )
                for target in targets:
                    self._forget_names_in(target)
            elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                name = node.target.value
                if name not in self.values:
                    continue
                if isinstance(node.operator, cst.AddAssign):
                    piece = Hole(one_line(self.module.code_for_node(node.value)), False)
                    self.values[name] = self.values[name] + Message((piece,))
                else:
                    self.values.pop(name, None)
            elif isinstance(node, (cst.For, cst.CompFor)):
                self._forget_names_in(node.target)
            elif isinstance(node, cst.AsName):
                self._forget_names_in(node.name)
            elif isinstance(node, cst.NamedExpr):
                self._forget_names_in(node.target)

    def enter(self, statement: cst.CSTNode, inner: Sequence[cst.CSTNode] | None) -> None:
        """Step into a compound statement that encloses the raise, whose block `inner` holds
        it: its header rebinds targets, and parts before that block may have run."""
        if isinstance(statement, (cst.For, cst.While)):
            if isinstance(statement, cst.For):
                self._forget_names_in(statement.target)
            if statement.orelse is not None and inner is statement.orelse.body.body:
                self.maybe_run(statement.body)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None:
                    self._forget_names_in(item.asname.name)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            # a handler, `else` or `finally` runs after some of the try body did
            if inner is not statement.body.body:
                self.maybe_run(statement.body)
            for handler in statement.handlers:
                if inner is handler.body.body:
                    if handler.name is not None:
                        self._forget_names_in(handler.name.name)
            if statement.finalbody is not None and inner is statement.finalbody.body.body:
                for part in (*statement.handlers, statement.orelse):
                    if part is not None:
                        self.maybe_run(part)

    def _forget_names_in(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.values.pop(target.value, None)
            return
        for child in target.children:
            self._forget_names_in(child)


def _own_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and everything under it that is not inside a nested def, class or lambda."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is node or not isinstance(current, _SCOPES):
            stack.extend(reversed(current.children))


def lookup_at(path: Sequence[Step], module: cst.Module) -> Lookup:
    """The local-name lookup for a raise reached along `path` (outermost step first): the
    statements before it on every enclosing block are applied in source order."""
    return BindingsWalk(module).lookup_at(path)


class _BlockState:
    """Where the walk stands in one block: the bindings after `statements[:done]`."""

    def __init__(self, statements: Sequence[cst.CSTNode], entry: Bindings) -> None:
        self.statements = statements
        self.entry = entry
        self.current = entry.copy()
        self.done = 0


class BindingsWalk:
    """`lookup_at` for every raise of one function in source order: each block remembers how
    far it has been applied, so every statement runs once, not once per raise after it (a
    validator with thousands of raises stays linear)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._blocks: dict[int, _BlockState] = {}

    def lookup_at(self, path: Sequence[Step]) -> Lookup:
        blocks = [step for step in path if isinstance(step, Block)]
        here = Bindings(self.module)
        for number, step in enumerate(blocks):
            state = self._blocks.get(id(step.statements))
            if state is None or state.statements is not step.statements:
                state = self._blocks[id(step.statements)] = _BlockState(step.statements, here)
            if state.done > step.index:  # an earlier point than last time: start again
                state.current, state.done = state.entry.copy(), 0
            for statement in step.statements[state.done : step.index]:
                state.current.run(statement)
            state.done = step.index
            here = state.current.copy()
            inner = blocks[number + 1].statements if number + 1 < len(blocks) else None
            here.enter(step.statements[step.index], inner)
        return here.lookup
