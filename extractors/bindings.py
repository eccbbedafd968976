"""The value of local message variables on the path to a raise: `msg = f"..."; msg += ...`,
lists of messages built with `append`, and what the branches and loops before the raise may
have left in them.

A statement on the path runs for sure. Of an `if` before the raise, one arm ran: the
values after it are a `choice` of what each arm left (an arm that ends in `return` or
`raise` never reaches the raise, and no `else` is an arm that changes nothing), so
`if hint: msg += f" ({hint})"` leaves `msg` as `... {? ({hint})}`. A loop ran its body any
number of times: what the body appends is a `Repeat`, what it assigns without reading the
old value is a choice, anything else is unknown. A list passed to a call that may change
it (`self._check(errors)`) gets an unknown run of items at its end.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace

import libcst as cst

from extractors.messages import (
    Choice,
    Helpers,
    Hole,
    Items,
    Lookup,
    Message,
    Reader,
    Repeat,
    Value,
    merge_values,
)
from extractors.narrowing import Together, tested
from extractors.parts import choice, extension, repeated, unknown_items
from extractors.syntax.cst_tree import Block, Step, children, own_nodes

# Past these sizes a bound value is no longer followed (its name reads as a Hole): a
# message is not made of more, and merging ever larger values would make a validator with
# thousands of branches slow.
MAX_ENTRIES = 64
MAX_PARTS = 256
# nodes that (re)bind a name: a compound statement without any changes no binding
_BINDING = (
    cst.Assign,
    cst.AnnAssign,
    cst.AugAssign,
    cst.NamedExpr,
    cst.For,
    cst.CompFor,
    cst.AsName,
    cst.FunctionDef,
    cst.ClassDef,
    cst.Del,
    cst.MatchCase,
)
# Calls that never change a list they are handed (anything else might append to it).
_PURE_FUNCTIONS = frozenset(
    "all any bool dict enumerate frozenset hash id isinstance iter len list max min print "
    "repr reversed set sorted str sum tuple type zip".split()
)
_PURE_METHODS = frozenset(
    "count index copy join format debug info warning warn error exception critical".split()
)


class Bindings:
    """What each local name holds, as a Message or Items, at one point of a function.

    Only names that hold some known text (or a list) are bound; anything else is left to
    the message reader, which writes it as a Hole with the name. `outer` answers for names
    the function never assigns (an inlined helper's parameters).
    """

    def __init__(
        self,
        module: cst.Module,
        helpers: Helpers | None = None,
        outer: Lookup | None = None,
        renames: Mapping[str, cst.BaseExpression] | None = None,
        shapes: Facts | None = None,
    ) -> None:
        self.module = module
        self.helpers = helpers
        self.outer = outer
        self.renames = renames
        self.values: dict[str, Value] = {}
        # names the function assigns (kept only when an `outer` lookup needs to know)
        self.assigned: set[str] = set()
        # names bound or forgotten since this copy was made (what a merge looks at)
        self.changed: set[str] = set()
        # what each statement holds, worked out once per function (see `Facts`)
        self.shapes: Facts = {} if shapes is None else shapes
        # names unpacked together from a helper's tuples (extractors/narrowing.py)
        self.together: dict[str, Together] = {}

    def lookup(self, name: str) -> Value | None:
        if name in self.values:
            return self.values[name]
        if self.outer is not None and name not in self.assigned:
            return self.outer(name)
        return None

    def copy(self) -> Bindings:
        twin = Bindings(self.module, self.helpers, self.outer, self.renames, self.shapes)
        twin.values = dict(self.values)  # Messages and Items are immutable
        if self.together:
            twin.together = dict(self.together)
        if self.outer is not None:
            twin.assigned = set(self.assigned)
        return twin

    def _adopt(self, other: Bindings) -> None:
        self.changed |= other.changed | (set(self.values) ^ set(other.values))
        self.values, self.assigned = other.values, other.assigned
        self.together = other.together

    def _reader(self) -> Reader:
        return Reader(self.module, self.lookup, self.helpers, self.renames)

    def _bind(self, name: str, value: Value | None) -> None:
        self._note(name)
        # a list is worth following when it holds text or is empty (about to be filled);
        # past a size, neither is (the message says no more, and the work would grow)
        if isinstance(value, Items):
            keep = len(value.entries) <= MAX_ENTRIES and (not value.entries or value.has_text())
        else:
            keep = value is not None and value.has_text() and _size(value) <= MAX_PARTS
        if keep:
            self.values[name] = value  # type: ignore[assignment]
        else:
            self.values.pop(name, None)

    def _value(self, node: cst.BaseExpression) -> Value | None:
        if isinstance(node, cst.Call) and _is_name(node.func, "list") and not node.args:
            return Items()
        if not self._may_hold_text(node):
            return None  # reading every `x = self.y(...)` as a message is the slow part
        return self._reader().value(node)

    def _may_hold_text(self, node: cst.BaseExpression) -> bool:
        """A cheap test: could this value be (or contain) literal text we can read?"""
        if isinstance(
            node,
            (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Tuple),
        ):
            return True
        if isinstance(node, cst.Name):
            return self.lookup(node.value) is not None
        if isinstance(node, cst.BinaryOperation):
            return self._may_hold_text(node.left) or self._may_hold_text(node.right)
        if isinstance(node, cst.IfExp):
            return self._may_hold_text(node.body) or self._may_hold_text(node.orelse)
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("format", "join"):
                return self._may_hold_text(func.value)
            if isinstance(func, cst.Name) and func.value in ("str", "repr"):
                return True
            return self.helpers is not None and self.helpers.knows(node)
        return False

    # --- statements that run for sure ----------------------------------------------------

    def _inert(self, statement: cst.CSTNode) -> bool:
        """Whether a compound statement can change nothing we follow: it assigns no name
        and (when we follow a list) calls nothing."""
        _, assigns, calls = _shape(statement, self.shapes)
        if assigns or (isinstance(statement, cst.If) and self._narrows(statement.test)):
            return False  # (an `if` may tell which of a helper's tuples ran, or fill a list)
        return not (calls and any(isinstance(v, Items) for v in self.values.values()))

    def _narrows(self, test: cst.BaseExpression) -> bool:
        """Whether a test may tell something of the names we follow (narrowing.py)."""
        if self.together:
            return True
        about = tested(test, True)
        return about is not None and isinstance(self.values.get(about[0]), Items)

    def run(self, statement: cst.CSTNode) -> None:
        """Apply a statement that certainly runs before the raise."""
        if isinstance(statement, cst.BaseCompoundStatement) and self._inert(statement):
            return
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.run(small)
        elif isinstance(statement, cst.Assign):
            self._touch(statement.value)
            value = self._value(statement.value)
            for target in statement.targets:
                if isinstance(target.target, cst.Name):
                    self._bind(target.target.value, value)
                elif not self._unpack(target.target, value):
                    self._touch_target(target.target)
                    self._forget_names_in(target.target)
        elif isinstance(statement, cst.AnnAssign):
            if statement.value is not None and isinstance(statement.target, cst.Name):
                self._touch(statement.value)
                self._bind(statement.target.value, self._value(statement.value))
        elif isinstance(statement, cst.AugAssign):
            self._touch(statement.value)
            if isinstance(statement.target, cst.Name):
                self._extend(statement.target.value, statement.operator, statement.value)
            else:
                self._touch_target(statement.target)
        elif isinstance(statement, cst.Expr):
            if not self._list_method(statement.value):
                self._touch(statement.value)
        elif isinstance(statement, cst.Del):
            self._touch_target(statement.target)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            self._forget(statement.name.value)
        elif isinstance(statement, cst.If):
            self._if(statement)
        elif isinstance(statement, (cst.For, cst.While)):
            self._loop(statement)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            self._adopt(self._after_try(statement))
            if statement.finalbody is not None:
                self.run_block(statement.finalbody.body.body)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                self._touch(item.item)
                if item.asname is not None:
                    self._forget_names_in(item.asname.name)
            self.run_block(statement.body.body)
        elif isinstance(statement, cst.Match):
            self._match(statement)
        elif isinstance(statement, cst.BaseSmallStatement):
            self._touch(statement)

    def run_block(self, statements: Sequence[cst.CSTNode]) -> None:
        for statement in statements:
            self.run(statement)

    def _unpack(self, target: cst.BaseAssignTargetExpression, value: Value | None) -> bool:
        """`ok, msg = check(...)` of a tuple we know item by item: each name its item."""
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, Items):
            return False
        names = [e.value for e in target.elements]
        if len(names) != len(value.entries) or not all(isinstance(n, cst.Name) for n in names):
            return False
        if any(e.times != "one" or e.unknown for e in value.entries):
            return False
        for name, entry in zip(names, value.entries, strict=True):
            self._bind(name.value, entry.value)  # type: ignore[attr-defined]
        if value.rows:
            group = Together(tuple(n.value for n in names), value.rows)  # type: ignore[attr-defined]
            self.together.update(dict.fromkeys(group.names, group))
        return True

    def _narrow(self, test: cst.BaseExpression, holds: bool) -> None:
        """What the code under a test (that `holds`, or not) knows of names unpacked
        together (`msg` under `if not ok:`) and of a list (not empty under `if errors:`);
        extractors/narrowing.py."""
        about = tested(test, holds)
        if about is None:
            return
        name, truthy = about
        if truthy and name in self.values:
            found = self.values[name]
            if isinstance(found, Items) and found.entries and not found.filled:
                self._bind(name, replace(found, filled=True))
        group = self.together.get(name) if self.together else None
        kept = group.kept(name, truthy) if group is not None else None
        if kept is None:
            return
        for index, name in enumerate(kept.names):
            self._bind(name, choice([row[index].value for row in kept.rows]))
        self.together.update(dict.fromkeys(kept.names, kept))

    def _narrowed(self, untrue: Sequence[cst.BaseExpression], true=None) -> Bindings:
        """A copy for the code that runs when the `untrue` tests failed (and `true` holds)."""
        twin = self.copy()
        for test in untrue:
            twin._narrow(test, False)
        if true is not None:
            twin._narrow(true, True)
        return twin

    def _extend(self, name: str, operator: cst.BaseAugOp, value: cst.BaseExpression) -> None:
        """`name += value` (other operators make the value unknown)."""
        current = self.lookup(name)
        if not isinstance(operator, cst.AddAssign):
            self._forget(name)
        elif isinstance(current, Items):
            self._bind(name, current.extended(self._entries(value)))
        else:
            piece = self._value(value)
            if not isinstance(piece, Message):
                piece = Message((Hole(self._reader().source(value), False),))
            start = current if isinstance(current, Message) else Message((Hole(name, False),))
            self._bind(name, start + piece)

    def _entries(self, node: cst.BaseExpression):
        items = self._reader().items(node)
        return items.entries if items is not None else (unknown_items(self._source(node)),)

    def _list_method(self, call: cst.BaseExpression) -> bool:
        """`errors.append(x)` / `.extend(xs)` on a local list; False for anything else."""
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return False
        owner, method = call.func.value, call.func.attr.value
        if not isinstance(owner, cst.Name) or method not in ("append", "extend"):
            return False
        current = self.lookup(owner.value)
        if not isinstance(current, Items) or len(call.args) != 1 or call.args[0].keyword:
            return False
        if call.args[0].star:
            return False
        self._touch(call.args[0].value)
        value = call.args[0].value
        entries = (self._reader().entry(value),) if method == "append" else self._entries(value)
        self._bind(owner.value, current.extended(entries))
        return True

    # --- lists handed to code that may change them ----------------------------------------

    def _touch(self, node: cst.CSTNode) -> None:
        """Lists of ours that `node` hands to a call that may change them get an unknown
        run of items at their end."""
        if not any(isinstance(value, Items) for value in self.values.values()):
            return
        for name in _handed_to_calls(node, self.shapes):
            if isinstance(self.values.get(name), Items):
                self._may_have_grown(name)

    def _touch_target(self, target: cst.CSTNode) -> None:
        """`errors[0] = ...`, `del errors[-1]`: the list changed in a way we do not follow."""
        self._touch(target)
        for inner in own_nodes(target):
            if (
                isinstance(inner, (cst.Subscript, cst.Attribute))
                and isinstance(inner.value, cst.Name)
                and isinstance(self.lookup(inner.value.value), Items)
            ):
                self._may_have_grown(inner.value.value)

    def _may_have_grown(self, name: str) -> None:
        current = self.values.get(name)
        if isinstance(current, Items):
            run = unknown_items(name)
            if not current.entries or current.entries[-1] != run:
                self._note(name)
                self.values[name] = current.extended([run])  # kept: text may follow

    # --- statements that may or may not have run ------------------------------------------

    def _if(self, node: cst.If) -> None:
        """One arm of an `if`/`elif`/`else` chain ran (none, without an `else`)."""
        arms: list[Bindings] = []
        current: cst.If | None = node
        earlier: list[cst.BaseExpression] = []  # the tests that failed before this arm
        while current is not None:
            self._touch(current.test)
            arms += self._arm(current.body.body, self._narrowed(earlier, current.test))
            earlier.append(current.test)
            orelse = current.orelse
            current = None
            if isinstance(orelse, cst.If):
                current = orelse
            elif isinstance(orelse, cst.Else):
                arms += self._arm(orelse.body.body, self._narrowed(earlier))
            else:
                arms.append(self._narrowed(earlier))
        self._merge(arms)

    def _arm(
        self, statements: Sequence[cst.CSTNode], start: Bindings | None = None
    ) -> list[Bindings]:
        """The bindings after a block that may run (from `start`, else from here), or none
        when it never falls through."""
        arm = start if start is not None else self.copy()
        arm.run_block(statements)
        return [] if ends_in_exit(statements) else [arm]

    def _merge(self, arms: list[Bindings]) -> None:
        """Take on the bindings of whichever of `arms` ran."""
        if not arms:
            return  # no arm falls through: whatever follows is not reached this way
        names = set().union(*(arm.changed for arm in arms))
        merged = self.copy()
        for name in names:
            found = [arm.lookup(name) for arm in arms]
            if any(value is None for value in found):
                merged._forget(name)
            else:
                merged._bind(name, merge_values(found))  # type: ignore[arg-type]
        self._adopt(merged)

    def _loop(self, node: cst.For | cst.While) -> None:
        """A loop before the raise: its body ran any number of times, then its `else`
        (unless a `break` left the loop)."""
        self._prior_iterations(node)
        if node.orelse is not None:
            self._merge([*self._arm(node.orelse.body.body), self.copy()])

    def _prior_iterations(self, node: cst.For | cst.While) -> None:
        """The bindings after any number of runs of a loop's body."""
        if isinstance(node, cst.For):
            self._touch(node.iter)
            self._forget_names_in(node.target)
        else:
            self._touch(node.test)
        once = self.copy()
        once.run_block(node.body.body)
        for name in once.changed:
            before, after = self.lookup(name), once.lookup(name)
            if after == before:
                continue
            looped = None
            if isinstance(before, Message) and isinstance(after, Message):
                piece = extension(before, after)
                if piece is not None:
                    looped = before + _repeat(piece)
                elif not _reads(node.body, name):
                    looped = merge_values([before, after])
            elif isinstance(before, Items) and isinstance(after, Items):
                looped = repeated(before, after)
                if looped is None and not _reads(node.body, name):
                    looped = merge_values([before, after])
            if looped is None:
                self._forget(name)
            else:
                self._bind(name, looped)
        self.assigned |= once.assigned

    def _after_try(self, node: cst.Try | cst.TryStar) -> Bindings:
        """The bindings after a `try` (before its `finally`): the body and `else` ran, or
        some of the body did and then a handler."""
        done = self.copy()
        done.run_block(node.body.body)
        partial = self.copy()
        partial._merge([self.copy(), done])
        arms = [] if ends_in_exit(node.body.body) else [done]
        if arms and node.orelse is not None:
            arms = done._arm(node.orelse.body.body)
        for handler in node.handlers:
            arm = partial.copy()
            if handler.name is not None:
                arm._forget_names_in(handler.name.name)
            arms += arm._arm(handler.body.body)
        after = self.copy()
        after._merge(arms)
        return after

    def _match(self, node: cst.Match) -> None:
        self._touch(node.subject)
        arms: list[Bindings] = []
        for case in node.cases:
            arm = self.copy()
            arm._forget_names_in(case.pattern)
            arm.run_block(case.body.body)
            if not ends_in_exit(case.body.body):
                arms.append(arm)
        arms.append(self.copy())  # no case may match
        self._merge(arms)

    # --- the statement that encloses the raise ---------------------------------------------

    def enter(self, statement: cst.CSTNode, inner: Sequence[cst.CSTNode] | None) -> None:
        """Step into a compound statement that encloses the raise, whose block `inner` holds
        it: its header rebinds targets, and parts before that block may have run."""
        if isinstance(statement, cst.If):
            current: cst.BaseSuite | cst.If | cst.Else | None = statement
            earlier: list[cst.BaseExpression] = []
            while isinstance(current, cst.If):
                self._touch(current.test)
                if inner is current.body.body:
                    self._adopt(self._narrowed(earlier, current.test))
                earlier.append(current.test)
                current = current.orelse
            if isinstance(current, cst.Else) and inner is current.body.body:
                self._adopt(self._narrowed(earlier))
        elif isinstance(statement, (cst.For, cst.While)):
            # earlier iterations ran before this one (or all of them, before the `else`)
            self._prior_iterations(statement)
            if isinstance(statement, cst.For) and inner is statement.body.body:
                self._forget_names_in(statement.target)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                self._touch(item.item)
                if item.asname is not None:
                    self._forget_names_in(item.asname.name)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            if statement.orelse is not None and inner is statement.orelse.body.body:
                self.run_block(statement.body.body)
            elif statement.finalbody is not None and inner is statement.finalbody.body.body:
                self._adopt(self._after_try(statement))
            elif inner is not statement.body.body:
                done = self.copy()
                done.run_block(statement.body.body)
                self._merge([self.copy(), done])  # some of the body ran
                for handler in statement.handlers:
                    if inner is handler.body.body and handler.name is not None:
                        self._forget_names_in(handler.name.name)
        elif isinstance(statement, cst.Match):
            self._touch(statement.subject)
            for case in statement.cases:
                if inner is case.body.body:
                    self._forget_names_in(case.pattern)

    # --- helpers ----------------------------------------------------------------------------

    def _source(self, node: cst.CSTNode) -> str:
        return self._reader().source(node)

    def _forget(self, name: str) -> None:
        self._note(name)
        self.values.pop(name, None)

    def _note(self, name: str) -> None:
        self.changed.add(name)
        group = self.together.get(name) if self.together else None
        if group is not None:  # rebound: the names no longer hold one row's items
            for other in group.names:
                self.together.pop(other, None)
        if self.outer is not None:
            self.assigned.add(name)

    def _forget_names_in(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self._forget(target.value)
            return
        for child in target.children:
            self._forget_names_in(child)


def _size(message: Message) -> int:
    count = 0
    for _ in message.walk():
        count += 1
        if count > MAX_PARTS:
            break
    return count


def _repeat(piece: Message) -> Message:
    """`piece` any number of times; an optional piece is already covered by none."""
    if len(piece.parts) == 1 and isinstance(piece.parts[0], Choice):
        present = [o for o in piece.parts[0].options if o.parts]
        if len(present) < len(piece.parts[0].options):
            inner = present[0] if len(present) == 1 else Message((Choice(tuple(present)),))
            return Message((Repeat(inner),))
    return Message((Repeat(piece),))


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def ends_in_exit(statements: Sequence[cst.CSTNode]) -> bool:
    """Whether a block never falls through: it ends in `return` or `raise` (or in an `if`
    whose every arm, `else` included, does)."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    if isinstance(last, cst.If):
        arms: list[Sequence[cst.CSTNode]] = []
        current: cst.If | cst.Else | None = last
        while isinstance(current, cst.If):
            arms.append(current.body.body)
            current = current.orelse
        if current is None:
            return False
        arms.append(current.body.body)
        return all(ends_in_exit(arm) for arm in arms)
    return False


def _reads(node: cst.CSTNode, name: str) -> bool:
    """Whether `node` reads `name` anywhere but as the plain target of an assignment."""
    written: set[int] = set()
    found = False
    for inner in own_nodes(node):
        if isinstance(inner, cst.Assign):
            written.update(id(t.target) for t in inner.targets)
        elif isinstance(inner, cst.AnnAssign):
            written.add(id(inner.target))
        elif isinstance(inner, cst.Name) and inner.value == name and id(inner) not in written:
            found = True
    return found


# What is worked out about a function's nodes, shared by the lookups of its raises, by
# (question, id of the node) -> (the node, so its id stays its own, and the answer).
Facts = dict[tuple[str, int], tuple]


def _handed_to_calls(node: cst.CSTNode, facts: Facts) -> tuple[str, ...]:
    """The names `node` hands to a call that may change what they hold (`x.add(...)`,
    `check(x)`), in order; calls known not to change their arguments are left out."""
    key = ("handed", id(node))
    known = facts.get(key)
    if known is None:
        names: list[str] = []
        for inner in own_nodes(node):
            if not isinstance(inner, cst.Call):
                continue
            func = inner.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
                if func.attr.value not in _PURE_METHODS:
                    names.append(func.value.value)
            pure = (isinstance(func, cst.Name) and func.value in _PURE_FUNCTIONS) or (
                isinstance(func, cst.Attribute) and func.attr.value in _PURE_METHODS
            )
            if not pure:
                names += [a.value.value for a in inner.args if isinstance(a.value, cst.Name)]
        known = facts[key] = (node, tuple(dict.fromkeys(names)))
    return known[1]


def _shape(node: cst.CSTNode, shapes: Facts) -> tuple[cst.CSTNode, bool, bool]:
    """(node, whether it (re)binds a name, whether it calls anything), remembered for every
    compound statement on the way so that each is looked at once."""
    known = shapes.get(("shape", id(node)))
    if known is not None:
        return known
    assigns, calls, scope, compound = _kind(type(node))
    if not scope:  # scopes of their own
        for child in children(node):
            _, child_assigns, child_calls = _shape(child, shapes)
            assigns, calls = assigns or child_assigns, calls or child_calls
    shape = (node, assigns, calls)
    if compound:
        shapes[("shape", id(node))] = shape  # the node is kept, so its id stays its own
    return shape


@functools.cache
def _kind(node_type: type) -> tuple[bool, bool, bool, bool]:
    """What `_shape` asks of a node, by its type (whether it binds a name, is a call, is a
    scope of its own, is a compound statement): isinstance of libcst's ABCs runs Python
    code, and `_shape` visits every node of a function."""
    return (
        issubclass(node_type, _BINDING),
        issubclass(node_type, cst.Call),
        issubclass(node_type, (cst.FunctionDef, cst.ClassDef)),
        issubclass(node_type, cst.BaseCompoundStatement),
    )


class _BlockState:
    """Where the walk stands in one block: the bindings after `statements[:done]`, and those
    just inside `statements[done]` for the inner block last stepped into."""

    def __init__(self, statements: Sequence[cst.CSTNode], entry: Bindings) -> None:
        self.statements = statements
        self.entry = entry
        self.current = entry.copy()
        self.done = 0
        self.entered: tuple[int, int, Bindings] | None = None  # (index, id(inner), bindings)


class BindingsWalk:
    """The local-name lookups for every raise (or return) of one function, asked for in
    source order: each block remembers how far it has been applied, so every statement runs
    once, not once per raise after it (a validator with thousands of raises stays linear);
    stepping into the statement that holds a raise (a loop's earlier iterations) is done
    once for all the raises inside it."""

    def __init__(
        self,
        module: cst.Module,
        helpers: Helpers | None = None,
        outer: Lookup | None = None,
        renames: Mapping[str, cst.BaseExpression] | None = None,
    ) -> None:
        self.module = module
        self.helpers = helpers
        self.outer = outer
        self.renames = renames
        self.facts: Facts = {}  # what each statement holds, shared by all the lookups
        self._blocks: dict[int, _BlockState] = {}

    def lookup_at(self, path: Sequence[Step]) -> Lookup:
        """The local-name lookup for a raise (or return) reached along `path` (outermost
        step first): the statements before it on every enclosing block are applied in
        source order."""
        blocks = [step for step in path if isinstance(step, Block)]
        here = Bindings(self.module, self.helpers, self.outer, self.renames, self.facts)
        for number, step in enumerate(blocks):
            state = self._blocks.get(id(step.statements))
            if state is None or state.statements is not step.statements:
                state = self._blocks[id(step.statements)] = _BlockState(step.statements, here)
            if state.done > step.index:  # an earlier point than last time: start again
                state.current, state.done, state.entered = state.entry.copy(), 0, None
            for statement in step.statements[state.done : step.index]:
                state.current.run(statement)
            state.done = step.index
            inner = blocks[number + 1].statements if number + 1 < len(blocks) else None
            if state.entered is None or state.entered[:2] != (step.index, id(inner)):
                entered = state.current.copy()
                entered.enter(step.statements[step.index], inner)
                state.entered = (step.index, id(inner), entered)
            here = state.entered[2].copy()
        return here.lookup


__all__ = ["Bindings", "BindingsWalk", "ends_in_exit"]
