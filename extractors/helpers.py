"""Same-file helpers a message comes from, inlined one level deep at the call.

`raise ValueError(_msg(x))` with `def _msg(name): return f"bad {name}"` in the same file
(or nested in the validator, as datasets' `_dtype_error_msg`) reads as `bad {x}`; `unsupported = self._unsupported()` with a method of the validator's
class that builds a list with `append` and returns it gives that list. A helper counts when
every `return` of it gives a message (or a list of them) and it never falls off its end;
its parameters are written as the caller's arguments (`{name}` -> `{x}`), its own calls are
not followed (one level). Several returns are a choice between them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from extractors.bindings import BindingsWalk, ends_in_exit
from extractors.functions import Function
from extractors.messages import Items, Reader, Value, merge_values, value_of
from extractors.syntax.cst_tree import RETURNS_ORDER, own_nodes, statements_in

# a function's parsed source: the def and the module that holds it (for source text)
Parse = Callable[[Function], tuple[cst.FunctionDef, cst.Module]]

_CALLED = re.compile(r"(?:\b(self|cls)\s*\.\s*)?\b([A-Za-z_]\w*)\s*\(")
# arguments that read the same without parentheses wherever they are written in
_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.SimpleString,
    cst.FormattedString,
    cst.Integer,
    cst.Float,
    cst.List,
    cst.Tuple,
    cst.Dict,
)


@dataclass(frozen=True)
class _Helper:
    function: Function
    method: bool  # called through `self.`/`cls.`: its first parameter is not an argument


class HelperTable:
    """The functions of one file that may be a validator's message helpers."""

    def __init__(
        self, functions: Sequence[Function], parse: Parse, lines: Sequence[str] = ()
    ) -> None:
        self.parse = parse
        self.lines = lines
        self.module_functions = {
            fn.name: fn for fn in functions if fn.parent is None and fn.owner_class is None
        }
        self.methods: dict[tuple[str, str], Function] = {}
        self.nested: dict[tuple[str, str], Function] = {}  # (the def it is in, name) -> def
        for fn in functions:
            if fn.owner_class is not None:
                self.methods.setdefault((fn.owner_class, fn.name), fn)
            elif fn.parent is not None:
                self.nested.setdefault((fn.parent, fn.name), fn)
        self._parsed: dict[str, tuple[cst.FunctionDef, cst.Module] | None] = {}
        self._shape: dict[str, bool] = {}
        self._reassigned: dict[str, frozenset[str]] = {}

    def for_validator(self, fn: Function) -> ValidatorHelpers:
        return ValidatorHelpers(self, fn.self_class, fn.qualname)

    def returns_messages(self, fn: Function, function: cst.FunctionDef) -> bool:
        """Whether a helper may be inlined: it never falls off its end, yields nothing, and
        every `return` gives an expression that can be text."""
        if fn.qualname not in self._shape:
            text = "\n".join(self.lines[fn.start - 1 : fn.end]) if self.lines else ""
            generator = ("yield" in text or "await" in text) and _is_generator(function)
            self._shape[fn.qualname] = (
                not generator
                and ends_in_exit(function.body.body)
                and all(_may_be_text(node.value) for node, _ in _returns(function))
            )
        return self._shape[fn.qualname]

    def reassigned(self, fn: Function, function: cst.FunctionDef) -> frozenset[str]:
        """The names a helper assigns in its body (a parameter among them is no longer the
        caller's argument where the message reads it)."""
        if fn.qualname not in self._reassigned:
            names = set()
            for node in own_nodes(function.body):
                targets: list[cst.CSTNode] = []
                if isinstance(node, cst.Assign):
                    targets = [t.target for t in node.targets]
                elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
                    targets = [node.target]
                elif isinstance(node, cst.AsName):
                    targets = [node.name]
                for target in targets:
                    names.update(n.value for n in own_nodes(target) if isinstance(n, cst.Name))
            self._reassigned[fn.qualname] = frozenset(names)
        return self._reassigned[fn.qualname]

    def parsed(self, fn: Function) -> tuple[cst.FunctionDef, cst.Module] | None:
        if fn.qualname not in self._parsed:
            try:
                self._parsed[fn.qualname] = self.parse(fn)
            except Exception:  # a helper that does not parse alone is just not inlined
                self._parsed[fn.qualname] = None
        return self._parsed[fn.qualname]


class ValidatorHelpers:
    """The helpers one validator can call: defs nested in it and module functions by name (a
    nested def shadows a module function of its name), and the methods of its class through
    `self.name(...)` / `cls.name(...)`."""

    def __init__(self, table: HelperTable, self_class: str | None, qualname: str = "") -> None:
        self.table = table
        self.self_class = self_class
        self.qualname = qualname

    def _helper(self, key: tuple[str | None, str]) -> _Helper | None:
        owner, name = key
        if owner is None:
            fn = self.table.nested.get((self.qualname, name)) or self.table.module_functions.get(
                name
            )
            return _Helper(fn, False) if fn is not None else None
        if self.self_class is None:
            return None
        fn = self.table.methods.get((self.self_class, name))
        if fn is None:
            return None
        return _Helper(fn, "staticmethod" not in fn.decorators)

    def texts(self, lines: Sequence[str], written: str) -> list[str]:
        """The text of every helper `written` (a validator's source) may call, for the keys
        of what is remembered about the validator: a changed helper changes its messages."""
        found = set()
        for owner, name in _CALLED.findall(written):
            helper = self._helper((owner or None, name))
            if helper is not None:
                text = "\n".join(lines[helper.function.start - 1 : helper.function.end])
                if "return" in text:
                    found.add(f"{helper.function.qualname}\0{text}")
        return sorted(found)

    def knows(self, call: cst.Call) -> bool:
        key = _callee(call)
        return key is not None and self._helper(key) is not None

    def inline(self, call: cst.Call, reader: Reader) -> Value | None:
        key = _callee(call)
        helper = self._helper(key) if key is not None else None
        parsed = self.table.parsed(helper.function) if helper is not None else None
        if helper is None or parsed is None:
            return None
        function, module = parsed
        if not self.table.returns_messages(helper.function, function):
            return None
        bound = _bind_arguments(function.params, call.args, helper.method)
        if bound is None:
            return None
        for name in self.table.reassigned(helper.function, function):
            bound.pop(name, None)  # the helper's own value by then, not the argument
        renames = {
            name: _grouped(reader.written(argument) if argument is not None else default)
            for name, (argument, default) in bound.items()
        }
        known: dict[str, Value | None] = {}

        def parameter(name: str) -> Value | None:
            """What a parameter holds: the caller's argument (or the default), read when
            the helper's message asks for it."""
            if name not in known and name in bound:
                argument, default = bound[name]
                if argument is not None:
                    value = reader.value(argument)
                else:
                    value = value_of(default, module, lambda _: None)
                text = isinstance(value, Items) or value.has_text()
                known[name] = value if text or value.literal() is not None else None
            return known.get(name)

        results = []
        walk = BindingsWalk(module, None, parameter, renames)  # the returns in source order
        for node, path in _returns(function):
            if node.value is None:
                return None  # `return` alone: None is no message
            lookup = walk.lookup_at(path)
            result = value_of(node.value, module, lookup, None, renames)
            if not (isinstance(result, Items) or result.has_text()):
                return None
            results.append(result)
        return merge_values(results) if results else None


def _may_be_text(node: cst.BaseExpression | None) -> bool:
    """A cheap test: can a returned expression be a message (or a list of them)?"""
    if isinstance(
        node,
        (
            cst.SimpleString,
            cst.ConcatenatedString,
            cst.FormattedString,
            cst.Name,
            cst.List,
            cst.Tuple,
        ),
    ):
        return not (isinstance(node, cst.Name) and node.value in ("None", "True", "False"))
    if isinstance(node, cst.BinaryOperation):
        return _may_be_text(node.left) or _may_be_text(node.right)
    if isinstance(node, cst.IfExp):
        return _may_be_text(node.body) or _may_be_text(node.orelse)
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in ("format", "join")
        return isinstance(func, cst.Name) and func.value in ("str", "repr")
    return False


def _grouped(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node` as it can stand in for a name anywhere: parenthesized unless atomic."""
    if isinstance(node, _ATOMS) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _callee(call: cst.Call) -> tuple[str | None, str] | None:
    func = call.func
    if isinstance(func, cst.Name):
        return None, func.value
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value in ("self", "cls")
    ):
        return func.value.value, func.attr.value
    return None


def _bind_arguments(
    params: cst.Parameters, args: Sequence[cst.Arg], method: bool
) -> dict[str, tuple[cst.BaseExpression | None, cst.BaseExpression | None]] | None:
    """Each parameter's argument (or default), as Python binds them; None when the call
    cannot be bound without running it (`*args`, `**kwargs`, a missing argument)."""
    if any(arg.star for arg in args) or params.star_kwarg is not None:
        return None
    if isinstance(params.star_arg, cst.Param):
        return None
    positional = [*params.posonly_params, *params.params]
    if method:
        if not positional:
            return None
        positional = positional[1:]
    by_name = {p.name.value: p for p in (*positional, *params.kwonly_params)}
    bound: dict[str, cst.BaseExpression] = {}
    given = [arg for arg in args if arg.keyword is None]
    if len(given) > len(positional):
        return None
    for param, arg in zip(positional, given, strict=False):
        bound[param.name.value] = arg.value
    for arg in args:
        if arg.keyword is not None:
            name = arg.keyword.value
            if name not in by_name or name in bound:
                return None
            bound[name] = arg.value
    result = {}
    for name, param in by_name.items():
        if name in bound:
            result[name] = (bound[name], None)
        elif param.default is not None:
            result[name] = (None, param.default)
        else:
            return None
    return result


def _is_generator(function: cst.FunctionDef) -> bool:
    """Whether the function's own scope (not a nested def, class or lambda) yields or
    awaits."""
    return any(isinstance(node, (cst.Yield, cst.Await)) for node in own_nodes(function.body))


def _returns(function: cst.FunctionDef):
    """Every `return` of a helper with its path, in the order its message lists them."""
    return statements_in(cst.Return, function.body.body, try_order=RETURNS_ORDER)
