"""A module's command-line flags: every `add_argument(...)` call with its option strings,
`dest`, `choices`, `default`, `action`, `type`, the literal parts of `help`, and the config
field it sets.

The field comes from one of the idioms of the code bases vmine mines, else from the parser's
args class (the join looks up its field named `dest`):
- `**cache_kwargs["mamba_cache_mode"]` where `cache_kwargs = get_kwargs(CacheConfig)`, also
  `**{**cache_kwargs["x"], "default": None}` and `kw = get_kwargs(C)["x"]; ... **kw` (vLLM);
- `default=ServerArgs.disaggregation_mode` (SGLang).
"""

from __future__ import annotations

import ast
import bisect
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from extractors.config_classes import literal_list, segment
from extractors.settings_model import FieldRef, Flag
from extractors.syntax.names import dotted, last_name
from extractors.syntax.walk import ast_walk, own_statements

_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)
_SKIPPED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # scopes of their own
# callees whose result lists a choices name's values: `choices=get_args(LogLevel)`
_VALUES_OF = frozenset({"get_args", "list", "tuple", "sorted", "set"})


@dataclass
class _Scope:
    """A function (or the module) whose `add_argument` calls are read together."""

    body: list[ast.stmt]
    owner: str | None  # qualname of the class a method sits in (closures: their method's)
    receiver: str | None = None  # the method's first parameter (`cls` stands for the owner)
    kwargs: dict[str, FieldRef | str] = field(default_factory=dict)
    # `for key, value in kwargs.items():` -> value name -> (class, key name)
    loops: dict[str, tuple[str, str]] = field(default_factory=dict)


def flags_of(tree: ast.Module, lines: list[str], texts: dict[str, str]) -> list[Flag]:
    """Every flag the module's `add_argument` calls define, in source order."""
    marks = [number for number, line in enumerate(lines, 1) if "add_argument" in line]
    if not marks:
        return []

    def marked(node: ast.AST) -> bool:
        # only what spans a line naming add_argument is walked: the rest of a big module
        # (model code, kernels) is never visited
        first = bisect.bisect_left(marks, node.lineno)  # type: ignore[attr-defined]
        return first < len(marks) and marks[first] <= node.end_lineno  # type: ignore[attr-defined]

    flags: list[Flag] = []
    for scope in _scopes(tree.body, "", None, None, marked):
        calls = [
            node
            for stmt in own_statements(scope.body)
            if marked(stmt)
            for part in _own_expressions(stmt)
            for node in ast_walk(part)
            if isinstance(node, ast.Call) and _is_add_argument(node.func)
        ]
        if not calls:
            continue
        scope.kwargs = _kwargs_bindings(scope)
        scope.loops = _kwargs_loops(scope)
        args_class = scope.owner or _defaults_class(calls)
        for call in calls:
            flag = _flag(call, scope, lines, texts, args_class)
            if flag is not None:
                flags.append(flag)
    flags.sort(key=lambda f: f.line)
    return flags


def _own_expressions(stmt: ast.stmt) -> list[ast.AST]:
    """The parts of a statement that are its own, not the statements of its blocks."""
    if isinstance(stmt, _COMPOUND):
        return [
            part
            for name in ("test", "iter", "target", "subject")
            if (part := getattr(stmt, name, None))
        ] + [item for item in getattr(stmt, "items", [])]
    if isinstance(stmt, _SKIPPED):
        return []
    return [stmt]


def _is_add_argument(func: ast.expr) -> bool:
    """`parser.add_argument(...)`, `group.add_argument(...)`, or a local wrapper called
    `add_argument(...)` that passes its arguments on (SGLang's sampling parameters)."""
    if isinstance(func, ast.Attribute):
        return func.attr == "add_argument"
    return isinstance(func, ast.Name) and func.id == "add_argument"


def _scopes(
    body: list[ast.stmt],
    prefix: str,
    owner: str | None,
    receiver: str | None,
    marked: Callable[[ast.AST], bool],
) -> Iterator[_Scope]:
    yield _Scope(body, owner, receiver)
    for node in own_statements(body):
        if not marked(node):
            continue
        if isinstance(node, ast.ClassDef):
            qualname = prefix + node.name
            for member in node.body:
                if not marked(member):
                    continue
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    params = member.args.posonlyargs + member.args.args
                    first = params[0].arg if params else None
                    yield from _scopes(member.body, qualname + ".", qualname, first, marked)
                elif isinstance(member, ast.ClassDef):
                    yield from _scopes([member], qualname + ".", None, None, marked)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _scopes(
                node.body, prefix + node.name + ".<locals>.", owner, receiver, marked
            )


def _class_arg(node: ast.expr, scope: _Scope) -> str | None:
    """The class a `get_kwargs(C)` call is about: a class name as written, `cls` in a
    classmethod meaning its own class."""
    name = dotted(node)
    if name is None:
        return None
    if name == scope.receiver and scope.owner is not None:
        return scope.owner
    return name if name.rsplit(".", 1)[-1][:1].isupper() else None


def _kwargs_call(node: ast.expr, scope: _Scope) -> str | None:
    """`get_kwargs(CacheConfig)` -> "CacheConfig": a call on one class and nothing else."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _class_arg(node.args[0], scope)
    return None


def _field_key(node: ast.expr) -> str | None:
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    return None


def _kwargs_bindings(scope: _Scope) -> dict[str, FieldRef | str]:
    """Names bound to a class's argparse kwargs: `kw = get_kwargs(C)` -> "C" (every field),
    `kw = get_kwargs(C)["x"]` or `kw = all_kw["x"]` -> FieldRef(C, x). A name bound twice to
    different classes or fields is left out; other assignments (`kw = customise(kw)`) keep
    what it holds."""
    found: dict[str, FieldRef | str] = {}
    clashing: set[str] = set()
    for node in own_statements(scope.body):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        value: FieldRef | str | None = _kwargs_call(node.value, scope)
        key = _field_key(node.value)
        if value is None and key is not None:
            inner = node.value.value  # type: ignore[attr-defined]
            cls = _kwargs_call(inner, scope)
            if cls is None and isinstance(inner, ast.Name):
                held = found.get(inner.id)
                cls = held if isinstance(held, str) else None
            value = FieldRef(cls=cls, field=key) if cls is not None else None
        if value is None:
            continue
        if target.id in found and found[target.id] != value:
            clashing.add(target.id)
        found.setdefault(target.id, value)
    return {name: value for name, value in found.items() if name not in clashing}


def _kwargs_loops(scope: _Scope) -> dict[str, tuple[str, str]]:
    """`for key, value in frontend_kwargs.items():` over a class's argparse kwargs (vLLM's
    frontend arguments): value name -> (class, key name)."""
    loops: dict[str, tuple[str, str]] = {}
    for node in own_statements(scope.body):
        if not isinstance(node, ast.For | ast.AsyncFor):
            continue
        target, source = node.target, node.iter
        if not (
            isinstance(target, ast.Tuple)
            and len(target.elts) == 2
            and all(isinstance(e, ast.Name) for e in target.elts)
        ):
            continue
        if not (
            isinstance(source, ast.Call)
            and isinstance(source.func, ast.Attribute)
            and source.func.attr == "items"
            and isinstance(source.func.value, ast.Name)
        ):
            continue
        cls = scope.kwargs.get(source.func.value.id)
        if isinstance(cls, str):
            key, value = target.elts
            loops[value.id] = (cls, key.id)  # type: ignore[union-attr]
    return loops


def _each_field(call: ast.Call, scope: _Scope) -> tuple[str, str] | None:
    """(class, "as-is" or "dashed") for `add_argument(f"--{key}", **value)` (or
    `f"--{key.replace('_', '-')}"`) inside a loop over a class's kwargs."""
    splats = [
        kw.value.id for kw in call.keywords if kw.arg is None and isinstance(kw.value, ast.Name)
    ]
    loop = next((scope.loops[name] for name in splats if name in scope.loops), None)
    if loop is None:
        return None
    cls, key = loop
    for arg in call.args:
        if not (isinstance(arg, ast.JoinedStr) and len(arg.values) == 2):
            continue
        head, tail = arg.values
        if not (
            isinstance(head, ast.Constant)
            and head.value == "--"
            and isinstance(tail, ast.FormattedValue)
        ):
            continue
        value = tail.value
        if isinstance(value, ast.Name) and value.id == key:
            return cls, "as-is"
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "replace"
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == key
            and [getattr(a, "value", None) for a in value.args] == ["_", "-"]
        ):
            return cls, "dashed"
    return None


def _splat_target(node: ast.expr, scope: _Scope) -> tuple[FieldRef | None, dict[str, ast.expr]]:
    """The field a `**kwargs` argument is about, and the keys a dict literal spells out
    (`**{**cache_kwargs["x"], "default": None}` overrides the default)."""
    if isinstance(node, ast.Dict):
        target: FieldRef | None = None
        explicit: dict[str, ast.expr] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                inner, inner_explicit = _splat_target(value, scope)
                target = target or inner
                explicit.update(inner_explicit)
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                explicit[key.value] = value
        return target, explicit
    key = _field_key(node)
    if key is not None:
        inner = node.value  # type: ignore[attr-defined]
        cls = _kwargs_call(inner, scope)
        if cls is None and isinstance(inner, ast.Name):
            held = scope.kwargs.get(inner.id)
            cls = held if isinstance(held, str) else None
        return (FieldRef(cls=cls, field=key) if cls else None), {}
    if isinstance(node, ast.Name):
        held = scope.kwargs.get(node.id)
        return (held if isinstance(held, FieldRef) else None), {}
    return None, {}


def _class_default(node: ast.expr | None) -> FieldRef | None:
    """`default=ServerArgs.tokenizer_path` -> FieldRef(ServerArgs, tokenizer_path)."""
    name = dotted(node) if node is not None else None
    if name is None or "." not in name:
        return None
    owner, attr = name.rsplit(".", 1)
    if not owner.rsplit(".", 1)[-1][:1].isupper() or attr[:1] == "_":
        return None
    return FieldRef(cls=owner, field=attr)


def _defaults_class(calls: list[ast.Call]) -> str | None:
    """The class most `default=C.x` of a parser function name (its args class)."""
    counts: Counter[str] = Counter()
    for call in calls:
        for kw in call.keywords:
            if kw.arg == "default" and (ref := _class_default(kw.value)) is not None:
                counts[ref.cls] += 1
    if not counts:
        return None
    (best, count), *rest = counts.most_common(2) + [("", 0)]
    return best if count > rest[0][1] else None


def derived_dest(options: list[str]) -> str:
    """argparse's dest: the first long option (`--max-model-len` -> max_model_len), else the
    first short one, else the positional name."""
    for option in options:
        if option.startswith("--"):
            return option[2:].replace("-", "_")
    first = options[0]
    return first.lstrip("-").replace("-", "_")


def help_text(node: ast.expr | None, texts: dict[str, str]) -> str | None:
    """The literal parts of a help argument: strings, f-strings (fields written `{expr}`),
    `+` and implicit concatenation, a module constant; None when it has no literal part."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts) or None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = help_text(node.left, texts), help_text(node.right, texts)
        return (left or "") + (right or "") or None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return help_text(node.left, texts)
    if isinstance(node, ast.Name):
        return texts.get(node.id)
    return None


def _choices(node: ast.expr | None) -> tuple[list[str] | None, str | None]:
    """(literal choices, or the name whose values they are)."""
    if node is None:
        return None, None
    values = literal_list(node)
    if values is not None:
        return values, None
    if isinstance(node, ast.Call) and len(node.args) == 1 and last_name(node) in _VALUES_OF:
        node = node.args[0]
    return None, dotted(node)


def _flag(
    call: ast.Call, scope: _Scope, lines: list[str], texts: dict[str, str], args_class: str | None
) -> Flag | None:
    options: list[str] = []
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            options.append(arg.value)
    if not options:
        family = _each_field(call, scope)
        if family is None:
            return None
        return Flag(
            options=[],
            dest="",
            sets=FieldRef(cls=family[0], field="*"),
            argsClass=args_class,
            eachField=family[1],
            splat=True,
            line=call.lineno,
        )
    given: dict[str, ast.expr] = {}
    sets: FieldRef | None = None
    for kw in call.keywords:
        if kw.arg is None:
            target, explicit = _splat_target(kw.value, scope)
            sets = sets or target
            given.update(explicit)
        else:
            given[kw.arg] = kw.value
    sets = sets or _class_default(given.get("default"))
    dest_node = given.get("dest")
    if isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str):
        dest = dest_node.value
    else:
        dest = derived_dest(options)
    action = given.get("action")
    choices, choices_from = _choices(given.get("choices"))

    def text(name: str) -> str | None:
        node = given.get(name)
        return segment(lines, node) if node is not None else None

    return Flag(
        options=options,
        dest=dest,
        action=(
            action.value
            if isinstance(action, ast.Constant) and isinstance(action.value, str)
            else text("action")
        ),
        nargs=text("nargs"),
        splat=any(kw.arg is None for kw in call.keywords),
        type=text("type"),
        default=text("default"),
        choices=choices,
        choicesFrom=choices_from,
        help=help_text(given.get("help"), texts),
        sets=sets,
        argsClass=args_class,
        line=call.lineno,
    )
