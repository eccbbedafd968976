"""A site's reproducer, planned from its facts: a short Python program that imports the
site's module, makes the object its validator runs on, sets the values the solver found and
calls the validator. The program is what verify runs, so a `verified` site's reproducer is
exactly what raised. Pure: source text in, source text out.

How each kind of validator is called (`Function.binding` says which):

| the function                         | the call                                      |
|--------------------------------------|-----------------------------------------------|
| a method, `__post_init__`, `__init__`| `raw(C, "f")(self, ...)`, `self = blank(C)`   |
| a classmethod, a pydantic validator  | `raw(C, "f")(C, value, ...)`                  |
| on `cls`                             |                                               |
| a staticmethod, a module function    | `raw(C, "f")(...)`, `raw(mod.f)(...)`         |

`blank(C)` is an instance made without running `__init__`, with the class's field defaults
(`model_construct()` for a pydantic model, the dataclass fields' defaults otherwise); `raw`
takes the decorators off (pydantic's, classmethod, staticmethod, property, functools.wraps).
Each value is put where the guards read it: on `self` or `cls`, on a stand-in passed as an
argument, on the module's globals (`envs`, the platform object, a feature check), through
stand-ins where an attribute on the way is missing or None. A parameter with no value and no
default gets a stand-in. A loop's item is put in what the loop walks (`for x in xs`: `xs =
[x]`, a tuple when `isinstance(xs, tuple)` is wanted), its value from what else the guards
want of it (`not x`: None).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from pipeline.dataset.models import Setting
from pipeline.verify.installed import Function
from pipeline.verify.solve import STAND, TRUE, Solution, Want, ordered_numbers, value_for

PRELUDE = {
    "Stand": '''class Stand:
    """A stand-in: unknown attributes are stand-ins too; false unless made true."""
    def __init__(self, truth=False): object.__setattr__(self, "_truth", truth)
    def __getattr__(self, name):
        if name.startswith("__"): raise AttributeError(name)
        value = Stand(); object.__setattr__(self, name, value); return value
    def __call__(self, *args, **kwargs): return Stand()
    def __bool__(self): return self._truth
    def __iter__(self): return iter(())
    def __len__(self): return 0
    def __getitem__(self, key): return Stand()
    def __setitem__(self, key, value): pass
    def __contains__(self, item): return False
    def __repr__(self): return "Stand()"
    def __lt__(self, other): return False
    __gt__ = __le__ = __ge__ = __lt__
    def __add__(self, other): return Stand()
    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = __mod__ = __add__
    __rtruediv__ = __rfloordiv__ = __rmod__ = __pow__ = __rpow__ = __add__
    __or__ = __ror__ = __and__ = __rand__ = __add__
    def __neg__(self): return Stand()
    def __index__(self): return 1
    def __float__(self): return 1.0
    __hash__ = object.__hash__
''',
    "blank": '''def blank(cls):
    """An instance of cls made without __init__, with its fields' defaults."""
    import dataclasses
    if getattr(cls, "__abstractmethods__", None):
        cls = type(cls.__name__, (cls,), {})
        cls.__abstractmethods__ = frozenset()
    if hasattr(cls, "model_construct"): return cls.model_construct()
    # attributes __init__ would set: stand-ins (after the class's own __getattr__, as a
    # torch module's, finds nothing)
    own = getattr(cls, "__getattr__", None)
    def missing(self, name):
        if name.startswith("__"): raise AttributeError(name)
        if own is not None:
            try: return own(self, name)
            except AttributeError: pass
        value = Stand()
        try: object.__setattr__(self, name, value)
        except TypeError: setattr(self, name, value)
        return value
    base = cls
    try: cls = type(cls.__name__, (cls,), {"__getattr__": missing, "__module__": cls.__module__})
    except Exception: pass
    try: self = cls.__new__(cls)
    except TypeError:
        try: self = object.__new__(cls)
        except TypeError: return made(base)

    for f in getattr(cls, "__dataclass_fields__", {}).values():
        value, factory = f.default, f.default_factory
        if type(value).__name__ == "FieldInfo":  # pydantic's Field(...) in a dataclass
            factory = value.default_factory or factory
            value = value.default
        if value is dataclasses.MISSING or type(value).__name__ == "PydanticUndefinedType":
            value = None
            if callable(factory):
                try: value = factory()
                except Exception: value = None
        object.__setattr__(self, f.name, value)
    return self
''',
    "made": '''def made(cls):
    """An instance of a class that only its constructor makes (a msgspec Struct): made with
    its defaults, the fields it requires stand-ins (else None)."""
    try: return cls()
    except Exception: pass
    fields = getattr(cls, "__struct_fields__", ())
    required = fields[: len(fields) - len(getattr(cls, "__struct_defaults__", ()))]
    for names in (required, fields):  # what its __post_init__ lets through
        try: return cls(**{name: Stand(True) for name in names})
        except Exception: pass
    return cls(**dict.fromkeys(required))
''',
    "raw": '''def raw(owner, name=None):
    """The function itself, its decorators taken off."""
    f = owner if name is None else owner.__dict__.get(name, getattr(owner, name, None))
    for _ in range(8):
        f = getattr(f, "wrapped", f)
        f = getattr(f, "__func__", f)
        f = getattr(f, "fget", f)
        f = getattr(f, "__wrapped__", f)
    return f
''',
    "put": '''def put(owner, path, value):
    """Set owner.a.b: `f()` in the path is a call that returns the rest, `[k]` an item."""
    name, _, rest = path.partition(".")
    if not rest:
        return _put(owner, name, value)
    try: inner = _returned(owner, name) if name.endswith("()") else _get(owner, name)
    except Exception: inner = None
    item = rest.startswith("[")
    if inner is None or isinstance(inner, (bool, int, float, str)) or (item and not isinstance(inner, (dict, list))):
        inner = ([] if isinstance(_key(rest.split(".")[0]), int) else {}) if item else Stand(True)
        _put(owner, name, inner)
    elif not item and not hasattr(inner, "__dict__"):  # a compiled pattern, a dict: in a cover
        inner = _Over(inner)
        _put(owner, name, inner)
    put(inner, rest, value)

class _Over:
    """An object that cannot take attributes, covered: what is put answers, the rest is its."""
    def __init__(self, inner): object.__setattr__(self, "_inner", inner)
    def __getattr__(self, name): return getattr(self._inner, name)
    def __getitem__(self, key): return self._inner[key]
    def __contains__(self, item): return item in self._inner
    def __iter__(self): return iter(self._inner)
    def __len__(self): return len(self._inner)
    def __eq__(self, other): return self._inner == other
    def __hash__(self): return hash(self._inner)
    def __bool__(self): return bool(self._inner)
    def __str__(self): return str(self._inner)
    def __repr__(self): return repr(self._inner)

def _key(segment):
    return __import__("ast").literal_eval(segment[1:-1])

def _get(owner, name):
    if name.startswith("["):
        return owner[_key(name)]
    return getattr(owner, name, None)

def _returned(owner, name):
    """What a function put earlier returns (None for the target's own, and for a stand-in,
    whose every attribute would be one)."""
    try: found = vars(owner).get(name[:-2])
    except TypeError: return None
    return getattr(found, "__dict__", {}).get("_vmine_result")

def _put(owner, name, value):
    if name.endswith("()"):  # a function that returns the value, whatever it is given
        returns = (lambda result: lambda *a, **k: result)(value)
        returns._vmine_result = value
        name, value = name[:-2], returns
    if name.startswith("["):
        key = _key(name)
        if isinstance(owner, list):
            owner.extend(Stand(True) for _ in range(max(key + 1, -key) - len(owner)))
        owner[key] = value
        return
    try:
        object.__setattr__(owner, name, value)
    except TypeError:
        setattr(owner, name, value)  # a module or a class
    except AttributeError:
        setattr(type(owner), name, property(lambda _self: value))
''',
}
# What each helper needs of the others.
_NEEDS = {"put": ("Stand",), "blank": ("Stand", "made"), "made": ("Stand",), "raw": (), "Stand": ()}
_SKIPPED_ROOTS = set(dir(builtins)) | set(PRELUDE)


@dataclass(frozen=True)
class Plan:
    """A reproducer and what it sets (`unplaced`: constrained expressions it could not set)."""

    code: str
    sets: tuple[str, ...]
    unplaced: tuple[str, ...]


def plan(
    module: str,
    function: Function,
    solution: Solution,
    settings: list[Setting],
    header: str,
) -> Plan:
    """The reproducer of a site whose raise is in `function` of `module`."""
    settings_by_expr = {_normal(setting.expr): setting for setting in settings}
    bound = function.params[0] if function.binding != "static" and function.params else None
    owner = "mod." + ".".join(function.classes) if function.classes else None
    arguments = set(function.arguments)
    lines: list[str] = []
    used: set[str] = {"raw"}
    values: dict[str, str] = {}  # argument -> value
    argument_objects: set[str] = set()
    puts: list[tuple[str, str, str]] = []  # owner code, path, value
    sets: list[str] = []
    unplaced: list[str] = []
    followers = _equal_groups(solution)
    reads = [(expr, []) for expr in followers if expr not in solution.wants]
    leaders = set(followers.values())
    numbers = ordered_numbers(solution)
    for expr, wants in [*solution.wants.items(), *reads]:
        if expr in leaders:  # the others read it: what it equals is no value of its own
            wants = [want for want in wants if want.op != "same"]
            if not wants:
                continue
        if expr in function.loops:
            # a loop item: the loop puts it in its iterable (below), so its value comes from
            # what else it must be (`for part in parts: if not part`: a false one)
            others = [want for want in wants if want.op != "in"]
            wants = others or wants
        firm = [want for want in wants if want.op not in ("weak", "order")]
        if expr in numbers and not firm:
            wants = [Want("weak", numbers[expr])]  # every order between them holds
        value = followers.get(expr) or value_for(wants, settings_by_expr.get(expr))
        if value == TRUE and expr.endswith(")"):
            value = "True"  # what a feature check such as `has_ray()` returns
        if value is None:
            unplaced.append(expr)
            continue
        steps = _steps(expr)
        if steps is None:
            unplaced.append(expr)
            continue
        root, path = steps
        value = _qualified(value, arguments | {bound} | set(function.loops), used)
        if root == bound and path:
            puts.append((root, path, value))
        elif root in arguments or root in function.loops:
            if path:
                argument_objects.add(root)
                puts.append((root, path, value))
            else:
                values[root] = value
        elif root == bound or not root or root in _SKIPPED_ROOTS:
            unplaced.append(expr)
            continue
        else:  # a module global
            puts.append(("mod", f"{root}.{path}" if path else root, value))
        if root == bound and function.name == "__init__" and path in arguments:
            values.setdefault(path, value)  # __init__ sets self.x from its parameter x
        sets.append(expr)
    # A loop's iterable holds the item the guards describe.
    for names, iterable in function.loop_targets:
        if not any(name in values or name in argument_objects for name in names):
            continue
        items = [name if name in argument_objects else values.get(name, TRUE) for name in names]
        # `entry in xs` says only that the item is one of xs: it is no value of its own
        own = _names_in(ast.unparse(iterable))
        items = [TRUE if _names_in(item) & own else item for item in items]
        holder = _holder(iterable, items)
        if holder is None:
            continue
        kinds = {want.op: want.value for want in solution.wants.get(holder[0], [])}
        if holder[1].startswith("[") and kinds.get("isinstance") == "tuple":
            holder = (holder[0], f"({holder[1][1:-1]},)")  # a tuple it must be
        # A local iterable: what defines it is set instead (`d = parse(x)`: parse returns it).
        defined = function.locals.get(holder[0])
        steps = _steps(ast.unparse(defined) if defined is not None else holder[0])
        if steps is None:
            continue
        root, path = steps
        if root == bound and path:
            puts.append((root, path, holder[1]))
        elif root in arguments and not path:
            values[root] = holder[1]
        elif root in arguments:
            argument_objects.add(root)
            puts.append((root, path, holder[1]))
        elif root and root not in _SKIPPED_ROOTS and root not in function.locals:
            puts.append(("mod", f"{root}.{path}" if path else root, holder[1]))
    lines.append(f"import {module} as mod")
    if bound is not None:
        if function.binding == "instance":
            lines.append(f"{bound} = blank({owner})")
            used.add("blank")
        else:
            lines.append(f"{bound} = {owner}")
    # An argument another value reads (`k.dtype = q.dtype`) is made before it is read.
    for _, _, value in puts:
        argument_objects.update(_names_in(value) & arguments)
    for name in sorted(argument_objects):
        own = values.pop(name, None)  # `isinstance(value, Mode)` and `value.x == 1`
        if own is not None and _builtin_literal(own):
            # A str or a number keeps its own methods: what is asked of them is left to it.
            values[name] = own
            argument_objects.discard(name)
            puts = [put for put in puts if put[0] != name]
            if any(name in _names_in(value) for _, _, value in puts):
                lines.append(f"{name} = {own}")  # another value reads it (`n * seqlen`)
                values[name] = name
            continue
        if (
            name in function.loops
            and own
            and _names_in(own) & _names_in(ast.unparse(function.loops[name]))
        ):
            # `entry in entries`: the item is made here (the iterable holds it) from what
            # else is asked of it
            rest = [want for want in solution.wants.get(name, []) if want.op != "in"]
            own = value_for(rest, None) if rest else None
        indexes = [_index(path.split(".")[0]) for target, path, _ in puts if target == name]
        if own is None and indexes and all(isinstance(index, int) for index in indexes):
            # `entry[0] <= 0`: a list, long enough for every index put
            length = max(index + 1 if index >= 0 else -index for index in indexes)
            own = f"[Stand(True) for _ in range({length})]"
        lines.append(f"{name} = {own or TRUE}")
        used.add("Stand")
    # An argument that another argument's value reads (`a == b`: a=b) is made first.
    made_lines = {line.split(" = ", 1)[0] for line in lines}
    passed = [value for name, value in values.items() if name not in function.loops]
    read = set().union(*map(_names_in, passed)) & arguments
    for name in sorted(read - argument_objects - made_lines):
        own = values.get(name)
        lines.append(f"{name} = {own if own is not None and own != name else STAND}")
        values[name] = name
        used.add("Stand")
    # A value read from another expression (`k.dtype = q.dtype`) is set after the others.
    made = {target for target, _, _ in puts} - {"mod"}
    puts.sort(key=lambda put: any(f"{name}." in put[2] for name in made))
    tested = [
        *solution.wants,
        *(want.value or "" for wants in solution.wants.values() for want in wants),
        # `a, b, _ = f(x)`: what a patched f returns holds every item unpacked
        *(
            ast.unparse(value)
            for value in function.locals.values()
            if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Call)
        ),
    ]
    puts = _laid_out(puts, followers, tested, bound, arguments | set(function.loops))
    for target, path, value in puts:
        if target in function.loops and target not in argument_objects:
            continue
        lines.append(f"put({target}, {path!r}, {value})")
        used.add("put")
    call_arguments = []
    for name in function.arguments:
        if name in argument_objects:
            call_arguments.append(f"{name}={name}")
        elif name in values and name not in function.loops:
            call_arguments.append(f"{name}={values[name]}")
        elif name not in function.defaults:
            call_arguments.append(f"{name}={STAND}")
            used.add("Stand")
    if bound is not None:
        call_arguments.insert(0, bound)
    target = f"raw({owner}, {function.name!r})" if owner else f"raw(mod.{function.name})"
    lines.append(f"{target}({', '.join(call_arguments)})")
    if any("Stand(" in line for line in lines):
        used.add("Stand")
    prelude = [PRELUDE[name] for name in _with_needs(used)]
    code = "\n".join([f"# {header}", *prelude, *lines]) + "\n"
    return Plan(code, tuple(sets), tuple(unplaced))


def _laid_out(
    puts: list[tuple[str, str, str]],
    followers: dict[str, str],
    reads: list[str],
    bound: str | None,
    local: set[str],
) -> list[tuple[str, str, str]]:
    """The puts with each list that items are put in by index made first, long enough that
    its first and last items differ (`shape[1]` and `shape[-1]` of a shape of unknown
    length), and an object equal to another (`k.shape == v.shape`) made that very object
    before items are put in it: they are one list, so both read the same items."""

    def placed(expr: str) -> tuple[str, str] | None:
        """Where `expr` is, as puts name it (target, path)."""
        steps = _steps(expr)
        if steps is None or not steps[0] or steps[0] in _SKIPPED_ROOTS:
            return None
        root, path = steps
        if root == bound or root in local:
            return (root, path)
        return ("mod", f"{root}.{path}" if path else root)

    def holding(holder: tuple[str, str]) -> tuple[str, str]:
        for _ in range(8):
            holder = alias.get(holder, holder)
        return holder

    alias = {}
    for expr, leader in followers.items():
        if placed(expr) and placed(leader):
            alias[placed(expr)] = placed(leader)
    keys: dict[tuple[str, str], set[int]] = {}
    # every item read by index, in the tests and in the values put
    for text in [*reads, *(value for _, _, value in puts)]:
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Subscript) or not _simple_key(node.slice):
                continue
            index = ast.literal_eval(node.slice)
            holder = placed(ast.unparse(node.value))
            if holder is not None and holder[1] and isinstance(index, int):
                keys.setdefault(holding(holder), set()).add(index)
    for target, path, _ in puts:
        segments = path.split(".")
        for position, segment in enumerate(segments):
            if position and segment.startswith("[") and isinstance(_index(segment), int):
                holder = holding((target, ".".join(segments[:position])))
                keys.setdefault(holder, set()).add(_index(segment))
    if not keys:
        return _parents_first(puts)
    lists = []
    for (target, path), indexes in sorted(keys.items()):
        length = max([index + 1 for index in indexes if index >= 0], default=0)
        length += max([-index for index in indexes if index < 0], default=0)
        lists.append((target, path, f"[Stand(True) for _ in range({length})]"))
    # `k.shape = v.shape` before the items of k.shape are put
    inner = {(target, path) for target, path, _ in puts}
    shared = [
        put
        for put in puts
        if (put[0], put[1]) in alias
        and any(other[0] == put[0] and other[1].startswith(put[1] + ".") for other in inner)
    ]
    return _parents_first([*lists, *shared, *(put for put in puts if put not in shared)])


def _parents_first(puts: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Each put before those into what it sets (`x.a = Stand(True)` before `x.a.b = 1`): a
    later one would replace what the earlier ones put in it."""
    ordered: list[tuple[str, str, str]] = []
    for put in puts:
        target, path, _ = put
        inside = [
            position
            for position, (other, other_path, _) in enumerate(ordered)
            if other == target and other_path.startswith(path + ".")
        ]
        ordered.insert(inside[0] if inside else len(ordered), put)
    return ordered


def _index(segment: str) -> object:
    try:
        return ast.literal_eval(segment[1:-1])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _holder(iterable: ast.expr, items: list[str]) -> tuple[str, str] | None:
    """What to set so that a loop over `iterable` yields `items` once: (expression, value).
    `for k, v in d.items()`: d = {k: v}; `for i, x in enumerate(xs)`: xs = [x]; `for x in
    xs`: xs = [x]."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute):
        if iterable.func.attr == "items" and len(items) == 2 and not iterable.args:
            return ast.unparse(iterable.func.value), f"{{{items[0]}: {items[1]}}}"
        if iterable.func.attr in ("keys", "values") and len(items) == 1:
            pair = f"{{{items[0]}: Stand(True)}}" if iterable.func.attr == "keys" else None
            value = pair or f"{{'x': {items[0]}}}"
            return ast.unparse(iterable.func.value), value
        return None
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
        if iterable.func.id == "enumerate" and len(items) == 2 and iterable.args:
            return ast.unparse(iterable.args[0]), f"[{items[1]}]"
        if iterable.func.id in ("sorted", "list", "tuple", "reversed") and iterable.args:
            inner = items[0] if len(items) == 1 else f"({', '.join(items)})"
            return ast.unparse(iterable.args[0]), f"[{inner}]"
        return None
    inner = items[0] if len(items) == 1 else f"({', '.join(items)})"
    return ast.unparse(iterable), f"[{inner}]"


def _equal_groups(solution: Solution) -> dict[str, str]:
    """`a == b and a == c`: every expression of a group of equal ones reads one of them, the
    one with a value of its own when there is one (expression -> the one it reads)."""
    parent: dict[str, str] = {}

    def root(expr: str) -> str:
        while parent.get(expr, expr) != expr:
            expr = parent[expr]
        return expr

    for expr, wants in solution.wants.items():
        for want in wants:
            if want.op == "same" and want.value:
                parent[root(expr)] = root(_normal(want.value))
    groups: dict[str, list[str]] = {}
    for expr in list(parent) + [value for value in parent.values()]:
        members = groups.setdefault(root(expr), [])
        if expr not in members:
            members.append(expr)
    followers: dict[str, str] = {}
    for members in groups.values():
        own = [
            expr
            for expr in members
            if any(want.op != "same" for want in solution.wants.get(expr, ()))
        ]
        leader = own[0] if own else members[-1]
        followers.update({expr: leader for expr in members if expr != leader})
    return followers


def _names_in(value: str) -> set[str]:
    try:
        tree = ast.parse(value, mode="eval")
    except SyntaxError:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _builtin_literal(value: str) -> bool:
    try:
        found = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return found is not None and not isinstance(found, bool)


def _with_needs(used: set[str]) -> list[str]:
    wanted = set(used)
    for name in used:
        wanted.update(_NEEDS[name])
    return [name for name in PRELUDE if name in wanted]


def _normal(expr: str) -> str:
    try:
        return ast.unparse(ast.parse(expr, mode="eval").body)
    except SyntaxError:
        return expr


def _steps(expr: str) -> tuple[str, str] | None:
    """`self.a.f().b[0]` -> ("self", "a.f().b.[0]"); None for what cannot be set."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None
    names: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            node = node.func
            if isinstance(node, ast.Name):
                rest = ".".join(reversed(names))
                return ("", "") if node.id in _SKIPPED_ROOTS else (node.id + "()", rest)
            names.append(node.attr + "()")
            node = node.value
        elif isinstance(node, ast.Subscript) and _simple_key(node.slice):
            names.append(f"[{ast.unparse(node.slice)}]")
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id, ".".join(reversed(names))
        else:
            return None


def _simple_key(node: ast.expr) -> bool:
    """A subscript put can set: an int, or a string without dots."""
    try:
        key = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return (isinstance(key, int) and not isinstance(key, bool)) or (
        isinstance(key, str) and "." not in key
    )


def _qualified(value: str, local_names: set[str], used: set[str]) -> str:
    """A value's free names read from the module (`Mode.X` -> `mod.Mode.X`)."""
    try:
        tree = ast.parse(value, mode="eval")
    except SyntaxError:
        return value

    class Qualify(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in PRELUDE:
                used.add(node.id)
                return node
            if node.id in _SKIPPED_ROOTS or node.id in local_names:
                return node
            return ast.Attribute(ast.Name("mod", ast.Load()), node.id, ast.Load())

    return ast.unparse(Qualify().visit(tree))


def with_changes(code: str, changes: list[tuple[str, str]]) -> str | None:
    """A reproducer with `changes` (expression, value source) applied just before its call:
    on the objects it made (`self`, a stand-in argument, the module), or as the call's own
    keyword argument; None when an expression is none of these."""
    lines = code.rstrip("\n").split("\n")
    try:
        call = ast.parse(lines[-1], mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call):
        return None
    made = {line.split(" = ", 1)[0] for line in lines if " = " in line and not line[:1].isspace()}
    keywords = {keyword.arg: keyword for keyword in call.keywords if keyword.arg}
    # where the reproducer set each path: a fix that names the object otherwise (`cfg.x`
    # for the validator's `self.x`) changes it there
    set_on = {}
    for line in lines:
        if line.startswith("put(") and not line.startswith("put(mod,"):
            owner, _, rest = line[4:].partition(", ")
            set_on.setdefault(rest.split(", ", 1)[0].strip("'\""), owner)
    added = []
    for expr, value in changes:
        steps = _steps(expr)
        if steps is None:
            return None
        root, path = steps
        if root not in made and root not in keywords and path in set_on:
            root = set_on[path]
        if not path and root in keywords:
            keywords[root].value = ast.parse(value, mode="eval").body
        elif path in keywords and call.args and ast.unparse(call.args[0]) == root:
            # `__init__` sets self.x from its parameter x: the fix is the argument
            keywords[path].value = ast.parse(value, mode="eval").body
        elif root in made and root != "mod" and path:
            added.append(f"put({root}, {path!r}, {value})")
        elif root in keywords and path:  # a value passed by name: a stand-in instead
            added += [f"{root} = {TRUE}", f"put({root}, {path!r}, {value})"]
            keywords[root].value = ast.Name(root, ast.Load())
        elif root not in made and root not in keywords and root and root not in _SKIPPED_ROOTS:
            added.append(f"put(mod, {(f'{root}.{path}' if path else root)!r}, {value})")
        else:
            return None
    prelude = [] if "def put(" in code else [PRELUDE["put"]]
    if "class Stand" not in code:
        prelude.insert(0, PRELUDE["Stand"])
    return "\n".join([*prelude, *lines[:-1], *added, ast.unparse(call)]) + "\n"
