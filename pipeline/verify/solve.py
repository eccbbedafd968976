"""Values that make a site's guards and priorChecks hold: each test is read with `ast` into
constraints on the expressions it reads, and each expression gets one value that meets its
constraints, from the literal it is compared with, the setting's choices, type and default.

| a test                      | the value of its expression                       |
|-----------------------------|---------------------------------------------------|
| `x == "a"`, `x is True`     | `"a"`, `True`                                     |
| `x != "a"`                  | another of its choices, else its default, else    |
|                             | another value                                     |
| `x in ("a", "b")`           | `"a"` (`in NAME`: the first of NAME)              |
| `x not in ("a", "b")`       | a choice outside them, else a new string          |
| `x not in get_args(T)`      | a new string (the choices may be what it computes)|
| `x > 3`, `x <= 3`           | `4`, `3` (between two bounds when both are given) |
| `x > y` (both read)         | `y = 1`, `x = 2`, unless either is set otherwise  |
| `x != y` (both read)        | `x` a stand-in (it equals nothing else)           |
| `int(x) != int(y)`          | `x = 2`, `y = 1` (a stand-in converts to 1)       |
| `x == y` (both read)        | `x` set to what `y` reads, after `y` is set       |
| `x % y != 0`, `x % y == 0`  | `x = 3`, `y = 2`; `x = 4`, `y = 2` (weakly); a    |
|                             | bare `x % y` is `x % y != 0`                      |
| `x // y == LIMIT`           | `y = 1`, `x = LIMIT`                              |
| `len(x) > 1`                | a list of two stand-ins (a tuple when             |
|                             | `isinstance(x, tuple)` is wanted too; a string    |
|                             | `'xx'` when x is compared with strings)           |
| `len(x) != len(y)`          | `y` one stand-in, `x` two                         |
| `len([e for x in xs if p])` | `xs` as many items for which p holds (the list    |
|                             | alone: one item, or none)                         |
| `any(p(t) for t in (a, b))` | `p(a) or p(b)` (items written out; `all`: `and`)  |
| `t(a if c else b)`          | `c and t(a)`, or `not c and t(b)` (a local that   |
|                             | two branches set differently reads so)            |
| `x is None`, `x is not None`| `None`, its default or a value of its type        |
| `d.get("k")`, `tuple(x)`    | read as `d["k"]`, `x` (an item, a value put as is)|
| `v = a and a.get("k")`, `v` | `v` reads `a["k"]` (setting it makes `a` true)    |
| `x`, `not x`                | a true value of its type, a false one (`[]` for a |
|                             | list; `x is not None and not x`: a false stand-in)|
| `isinstance(x, T)`          | a value of T (an instance made without `__init__`)|
| `x > y`, `y >= z` (read)    | numbers that hold every such order at once        |
| `(a is None) != (b is None)`| `a` and not `b`, or not `a` and `b` (`==`: both   |
|                             | or neither)                                       |
| `a or b`                    | `a` holds (the other disjuncts are alternatives)  |
| `a and b`                   | each part's first way that contradicts nothing    |
|                             | solved before it (`x is None` after `x.n == 1`:   |
|                             | the other way)                                    |

A value is Python source: names in it are the target module's (the planner qualifies them).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from pipeline.dataset.models import Setting

# Stand-ins, as the reproducer's prelude defines them: unknown attributes answer with more
# stand-ins; `TRUE` is a stand-in that is true.
STAND = "Stand()"
TRUE = "Stand(True)"
OTHER = repr("vmine-other")
ALTERNATIVES = 6  # how many ways through `or` tests are tried per site


@dataclass(frozen=True)
class Want:
    """One constraint on an expression: `op` with `value` (source text) when it needs one."""

    # eq ne in notin lt le gt ge none notnone true false isinstance notisinstance len has
    # hasnot, weak (a value any other constraint beats), same (the value of another
    # expression, read when the reproducer runs)
    op: str
    value: str | None = None


@dataclass
class Solution:
    """Constraints by expression (its source, `ast.unparse`d), in the order first read."""

    wants: dict[str, list[Want]] = field(default_factory=dict)
    unsolved: list[str] = field(default_factory=list)  # tests read as nothing

    def add(self, expr: ast.expr, want: Want) -> None:
        self.wants.setdefault(ast.unparse(expr), []).append(want)

    def copy(self) -> Solution:
        return Solution(
            {key: list(value) for key, value in self.wants.items()}, list(self.unsolved)
        )


def solutions(
    tests: list[str], substitutions: Mapping[str, ast.expr] | None = None
) -> list[Solution]:
    """Ways to make every test hold, the first the most direct (at most ALTERNATIVES);
    `substitutions` replace a local name by the expression that defines it."""
    found = [Solution()]
    names = dict(substitutions or {})  # a walrus in one test names a value for the next
    for text in tests:
        try:
            tree = ast.parse(text, mode="eval").body
        except SyntaxError:
            for solution in found:
                solution.unsolved.append(text)
            continue
        tree = _Substitute(names).visit(tree)
        grown = []
        for solution in found:
            for way in _ways(tree, True):
                extended = solution.copy()
                if not way(extended):
                    extended.unsolved.append(text)
                grown.append(extended)
                if len(grown) >= ALTERNATIVES:
                    break
        # Ways that contradict themselves go last (they are tried only when nothing else is).
        grown.sort(key=lambda way: not _consistent(way))
        found = grown[:ALTERNATIVES]
    return found


def substituted(text: str, substitutions: Mapping[str, ast.expr]) -> str:
    """`text` as the solutions read it: each local replaced by what defines it."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text
    return ast.unparse(_Substitute(dict(substitutions)).visit(tree))


def _consistent(solution: Solution) -> bool:
    """No expression's constraints contradict, and none is None (or false) while an attribute
    or item of it is read (`x is None` and `x.dtype == t`)."""
    if any(_contradicts({w.op: w.value for w in wants}) for wants in solution.wants.values()):
        return False
    empty = {
        expr
        for expr, wants in solution.wants.items()
        if any(want.op == "none" or (want.op == "eq" and want.value == "None") for want in wants)
    }
    return not any(
        expr.startswith((f"{inner}.", f"{inner}[")) for expr in solution.wants for inner in empty
    )


class _Substitute(ast.NodeTransformer):
    def __init__(self, substitutions: dict[str, ast.expr]) -> None:
        self.substitutions = substitutions
        self.expanding: set[str] = set()

    def visit_Name(self, node: ast.Name) -> ast.expr:
        found = self.substitutions.get(node.id)
        if found is None or node.id in self.expanding:
            return node
        # a local defined from other locals (`n = a // b`, `a = int(x.shape[1])`) reads them
        self.expanding.add(node.id)
        try:
            value = self.visit(copy.deepcopy(found))
        finally:
            self.expanding.discard(node.id)
        return _guarded_read(value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.expr:
        # `(x := self.a)` tests self.a, and x reads it from then on
        value = self.visit(node.value)
        self.substitutions[node.target.id] = value
        return value

    def visit_Call(self, node: ast.Call) -> ast.expr:
        # getattr(x, "a", default) reads x.a
        node = self.generic_visit(node)
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.isidentifier()
        ):
            return ast.Attribute(node.args[0], node.args[1].value, ast.Load())
        # d.get("k") and d.get("k", default) read d["k"] (an item the planner can put)
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and 1 <= len(node.args) <= 2
            and not node.keywords
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str | int)
            and not isinstance(node.args[0].value, bool)
        ):
            return ast.Subscript(node.func.value, node.args[0], ast.Load())
        # tuple(x.shape) and list(x) read x (given as that tuple or list)
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in ("tuple", "list")
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.Attribute | ast.Subscript | ast.Name)
        ):
            return node.args[0]
        return node


def _guarded_read(value: ast.expr) -> ast.expr:
    """A local defined as a guarded read (`a and a.get("k")`, `a and a.b`) reads its last
    part: setting that part makes the parts before it true."""
    if not (isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And)):
        return value
    *before, last = value.values
    read = ast.unparse(last)
    if all(read.startswith((ast.unparse(part) + ".", ast.unparse(part) + "[")) for part in before):
        return last
    return value


_NEGATED = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.LtE: ast.Gt,
    ast.Gt: ast.LtE,
    ast.GtE: ast.Lt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_FLIPPED = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
_ORDER = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


def _ways(node: ast.expr, holds: bool) -> Iterator:
    """The ways `node` can evaluate to `holds`, each a function that adds its constraints to a
    Solution and says whether it could read the test."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield from _ways(node.operand, not holds)
        return
    choice = _first_choice(node)
    if choice is not None:  # `t(a if c else b)`: c and t(a), or not c and t(b)
        for taken, branch in ((True, choice.body), (False, choice.orelse)):
            rest = _Replace(choice, branch).visit(copy.deepcopy(node))
            chosen = next(iter(_ways(choice.test, taken)))
            for way in _ways(rest, holds):
                yield _all([chosen, way])
        return
    if isinstance(node, ast.BoolOp):
        every = isinstance(node.op, ast.And) == holds
        if every:  # a and b holds; not (a or b)
            yield _each(node.values, holds)
        else:  # a or b holds (any one); not (a and b)
            for value in node.values:
                yield from _ways(value, holds)
        return
    if isinstance(node, ast.Compare) and _between_tests(node):
        # `(a is None) == (b is None)`: both or neither; `!=`: exactly one
        left, right = node.left, node.comparators[0]
        same = isinstance(node.ops[0], ast.Eq) == holds
        for first in (True, False):
            parts = [left if first else _negated(left), right if first == same else _negated(right)]
            yield from _ways(ast.BoolOp(ast.And(), parts), True)
        return
    if isinstance(node, ast.Compare):
        yield _compare(node, holds)
        return
    if isinstance(node, ast.Call) and _called(node) in ("isinstance",) and len(node.args) == 2:
        kind = "isinstance" if holds else "notisinstance"
        yield _one(node.args[0], Want(kind, ast.unparse(node.args[1])))
        return
    if isinstance(node, ast.Call) and _called(node) in ("any", "all") and _one_generator(node):
        generator = node.args[0]
        expanded = _over_items(generator, _called(node) == "all")
        if expanded is not None:  # `any(p(t) for t in (a, b))`: p(a) or p(b)
            yield from _ways(expanded, holds)
            return
        each = _called(node) == "all"
        if holds == each:  # all(p) holds, not any(p): every item; an empty iterable does
            yield _one(generator.generators[0].iter, Want("len", "0"))
            return
        yield _some_item(generator, holds)
        return
    if isinstance(node, ast.Call) and _called(node) == "bool" and len(node.args) == 1:
        yield from _ways(node.args[0], holds)
        return
    if isinstance(node, ast.Constant):
        yield lambda solution: bool(node.value) == holds
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        # `if x % 8:` is `x % 8 != 0`
        yield from _ways(ast.Compare(node, [ast.NotEq()], [ast.Constant(0)]), holds)
        return
    if isinstance(node, ast.ListComp) and len(node.generators) == 1:
        # `[t for t in ts if p(t)]` is true: ts holds one item that passes p; false: none
        yield _kept_items(node, 1) if holds else _one(node.generators[0].iter, Want("len", "0"))
        return
    yield _one(node, Want("true" if holds else "false"))


def _between_tests(node: ast.Compare) -> bool:
    """`(a is None) == (b is None)`: `==` or `!=` between two truth values."""
    return (
        len(node.ops) == 1
        and isinstance(node.ops[0], ast.Eq | ast.NotEq)
        and all(_is_test(side) for side in (node.left, node.comparators[0]))
    )


def _is_test(node: ast.expr) -> bool:
    if isinstance(node, ast.Compare | ast.BoolOp):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    return isinstance(node, ast.Call) and _called(node) in ("isinstance", "any", "all", "bool")


def _negated(node: ast.expr) -> ast.expr:
    return ast.UnaryOp(ast.Not(), node)


def _first_choice(node: ast.expr) -> ast.IfExp | None:
    """The first `a if c else b` in a test (a local defined in two branches reads as one),
    outside the generators and lambdas that bind names of their own."""
    pending: list[ast.AST] = [node]
    while pending:
        inner = pending.pop(0)
        if isinstance(inner, ast.IfExp):
            return inner
        if not isinstance(inner, ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.Lambda):
            pending.extend(ast.iter_child_nodes(inner))
    return None


class _Replace(ast.NodeTransformer):
    """Every node equal to one (the same local read twice: one way for both) replaced."""

    def __init__(self, old: ast.expr, new: ast.expr) -> None:
        self.old, self.new = ast.dump(old), new

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.expr) and ast.dump(node) == self.old:
            return copy.deepcopy(self.new)
        return super().visit(node)


def _items(node: ast.expr) -> list[tuple[ast.expr, list[ast.expr]]] | None:
    """The items of a sequence written out in the code, each with the tests that keep it
    (`(a, b) + tuple(t for t in (c,) if t is not None)`); None when they are not written."""
    if isinstance(node, ast.Tuple | ast.List):
        if any(isinstance(element, ast.Starred) for element in node.elts):
            return None
        return [(element, []) for element in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _items(node.left), _items(node.right)
        return None if left is None or right is None else left + right
    if (
        isinstance(node, ast.Call)
        and _called(node) in ("tuple", "list")
        and len(node.args) == 1
        and isinstance(node.args[0], ast.GeneratorExp)
    ):
        (loop, *more) = node.args[0].generators
        inner = _items(loop.iter)
        if more or inner is None or not isinstance(loop.target, ast.Name):
            return None
        name = loop.target.id
        found = []
        for item, kept in inner:
            tests = [_Named(name, item).visit(copy.deepcopy(test)) for test in loop.ifs]
            found.append((_Named(name, item).visit(copy.deepcopy(node.args[0].elt)), kept + tests))
        return found
    return None


class _Named(ast.NodeTransformer):
    """A name replaced by an expression."""

    def __init__(self, name: str, value: ast.expr) -> None:
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return copy.deepcopy(self.value) if node.id == self.name else node


def _over_items(generator: ast.GeneratorExp, each: bool) -> ast.expr | None:
    """`any(p(t) for t in ITEMS)` as `p(a) or p(b)` (`all`: `and`) when the items are written
    out; an item a filter may drop counts only when the filter keeps it."""
    if not _items_ok(generator):
        return None
    loop = generator.generators[0]
    items = _items(loop.iter)
    if not items:
        return None
    name = loop.target.id  # type: ignore[attr-defined]
    parts: list[ast.expr] = []
    for item, kept in items:
        test = _Named(name, item).visit(copy.deepcopy(generator.elt))
        if kept and each:  # every kept item holds: dropped, or it holds
            test = ast.BoolOp(ast.Or(), [ast.UnaryOp(ast.Not(), _joined(kept)), test])
        elif kept:  # some kept item holds
            test = ast.BoolOp(ast.And(), [*kept, test])
        parts.append(test)
    return parts[0] if len(parts) == 1 else ast.BoolOp(ast.And() if each else ast.Or(), parts)


def _items_ok(generator: ast.GeneratorExp) -> bool:
    (loop, *more) = generator.generators
    return not more and not loop.ifs and isinstance(loop.target, ast.Name)


def _joined(tests: list[ast.expr]) -> ast.expr:
    return tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), list(tests))


def _one_generator(node: ast.Call) -> bool:
    if len(node.args) != 1 or not isinstance(node.args[0], ast.GeneratorExp):
        return False
    (generator, *more) = node.args[0].generators
    return not more and not generator.ifs and isinstance(generator.target, ast.Name)


def _some_item(generator: ast.GeneratorExp, holds: bool):
    """any(p(x) for x in xs) holds (or all(...) does not): xs holds one x for which p(x) is
    `holds`, when p reads x itself (not its attributes)."""
    loop = generator.generators[0]
    name = loop.target.id  # type: ignore[attr-defined]

    def apply(solution: Solution) -> bool:
        inner = Solution()
        ways = list(_ways(generator.elt, holds))
        if not ways or not ways[0](inner) or set(inner.wants) != {name}:
            return False
        value = value_for(inner.wants[name], None)
        if value is None:
            return False
        solution.add(loop.iter, Want("eq", f"[{value}]"))
        return True

    return apply


def _kept_items(comprehension: ast.ListComp, size: int):
    """`[e for x in xs if p(x)]` has `size` items: xs holds `size` items x for which p(x),
    when p reads x itself (no filter: any item)."""
    (loop, *more) = comprehension.generators
    if more or not isinstance(loop.target, ast.Name):
        return lambda solution: False
    name = loop.target.id

    def apply(solution: Solution) -> bool:
        inner = Solution()
        for test in loop.ifs:
            if not next(iter(_ways(test, True)))(inner):
                return False
        if set(inner.wants) - {name}:
            return False
        value = value_for(inner.wants[name], None) if inner.wants else TRUE
        if value is None:
            return False
        solution.add(loop.iter, Want("eq", "[" + ", ".join([value] * size) + "]"))
        return True

    return apply


def _each(values: list[ast.expr], holds: bool):
    """Every one of `values` evaluates to `holds`: for each, its first way that keeps the
    solution consistent (`not (x is not None and x.a != 1)` after `x is not None`: x.a == 1)."""

    def apply(solution: Solution) -> bool:
        read = True
        for value in values:
            ways = list(_ways(value, holds))
            for position, way in enumerate(ways):
                trial = solution.copy()
                done = way(trial)
                if position == len(ways) - 1 or _consistent(trial):
                    solution.wants, solution.unsolved = trial.wants, trial.unsolved
                    read = read and done
                    break
        return read

    return apply


def _all(ways: list) -> object:
    def apply(solution: Solution) -> bool:
        results = [way(solution) for way in ways]
        return all(results)

    return apply


def _one(expr: ast.expr, want: Want):
    def apply(solution: Solution) -> bool:
        solution.add(expr, want)
        return True

    return apply


def _called(node: ast.Call) -> str | None:
    return node.func.id if isinstance(node.func, ast.Name) else None


def _compare(node: ast.Compare, holds: bool):
    """`a < b < c` is `a < b and b < c`; each pair is one constraint."""
    pairs = []
    left = node.left
    for op, right in zip(node.ops, node.comparators, strict=True):
        pairs.append((left, op, right))
        left = right
    if not holds and len(pairs) > 1:
        pairs = pairs[:1]  # not (a < b < c): a >= b is enough
    ways = [
        _pair(left, type(op) if holds else _NEGATED[type(op)], right) for left, op, right in pairs
    ]
    return _all(ways)


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _is_value(node: ast.expr) -> bool:
    """A node that stands for a value, not an expression to set: a literal, a dotted name in
    CAPITALS or an Enum member (`Mode.X`), `float("inf")`."""
    if _is_literal(node):
        return True
    if isinstance(node, ast.Call) and _called(node) == "float" and all(map(_is_literal, node.args)):
        return True
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id[:1].isupper()
    if isinstance(node, ast.Name):
        return node.id.isupper() and len(node.id) > 1
    return False


def _pair(left: ast.expr, op: type, right: ast.expr):
    text = ast.unparse
    # `int(x) != int(y)`: x and y are numbers (stand-ins all convert to one number)
    numeric = _converted(left) or _converted(right)
    left, right = _unconverted(left), _unconverted(right)
    if _is_value(left) and not _is_value(right) and op in _FLIPPED | {ast.Eq: 0, ast.NotEq: 0}:
        left, right, op = right, left, _FLIPPED.get(op, op)
    if op in (ast.Is, ast.IsNot) and isinstance(right, ast.Constant):
        if right.value is None:
            return _one(left, Want("none" if op is ast.Is else "notnone"))
        return _one(left, Want("eq" if op is ast.Is else "ne", repr(right.value)))
    if op in (ast.In, ast.NotIn):
        if _is_value(left) and not _is_value(right):  # "x" in self.items
            return _one(right, Want("has" if op is ast.In else "hasnot", text(left)))
        return _one(left, Want("in" if op is ast.In else "notin", text(right)))
    if (
        isinstance(left, ast.BinOp)
        and isinstance(left.op, ast.Mod)
        and isinstance(right, ast.Constant)
        and right.value == 0
        and op in (ast.Eq, ast.NotEq)
    ):
        divisor = _literal(ast.unparse(left.right)) if _is_literal(left.right) else None
        if isinstance(divisor, int) and not isinstance(divisor, bool) and divisor > 1:
            # `x % 8`: x = 8 divides (weakly), x = 9 does not
            if op is ast.Eq:
                return _one(left.left, Want("weak", str(divisor)))
            return _equal(left.left, divisor + 1)
        if op is ast.Eq:  # many values divide: weak ones, that another constraint beats
            return _all([_one(left.left, Want("weak", "4")), _one(left.right, Want("weak", "2"))])
        return _all([_equal(left.left, 3), _equal(left.right, 2)])
    if isinstance(left, ast.BinOp) and op is ast.Eq and _is_value(right) and not _is_literal(right):
        return _arithmetic(left, text(right))  # `a // b == LIMIT`: b = 1, a = LIMIT
    if isinstance(left, ast.BinOp) and _is_literal(right) and op in _BOUND_OPS:
        number = ast.literal_eval(right)
        if isinstance(number, int | float) and not isinstance(number, bool):
            return _arithmetic(left, _bound(op, number))
    if isinstance(left, ast.Call) and _called(left) == "len" and len(left.args) == 1:
        if _is_literal(right) and isinstance(ast.literal_eval(right), int):
            size = _bound(op, ast.literal_eval(right))
            if isinstance(left.args[0], ast.ListComp):  # `len([x for x in xs if p(x)]) > 1`
                return _kept_items(left.args[0], max(size, 0))
            return _one(left.args[0], Want("len", str(max(size, 0))))
        # len(x) against another expression: that one is 1 (weakly; `len(y)`: y holds one
        # item), x as long as needed
        size = _bound(op, 1)
        other = (
            _one(right.args[0], Want("len", "1"))
            if isinstance(right, ast.Call) and _called(right) == "len" and len(right.args) == 1
            else _one(right, Want("weak", "1"))
        )
        return _all([other, _one(left.args[0], Want("len", str(size)))])
    name = {ast.Eq: "eq", ast.NotEq: "ne", **_ORDER}.get(op)
    if name is None:
        return lambda solution: False
    if _is_value(right):
        return _one(left, Want(name, text(right)))
    # Two expressions read: weak values, which any other constraint on them beats. A stand-in
    # differs from everything; an order between two numbers: the right one 1.
    if name == "ne" and numeric:
        return _all([_one(right, Want("weak", "1")), _one(left, Want("weak", "2"))])
    if name == "ne":
        return _one(left, Want("weak", TRUE))
    if name == "eq":
        return _one(left, Want("same", text(right)))
    ordered = {"eq": "1", "lt": "0", "le": "1", "gt": "2", "ge": "1"}[name]
    return _all(
        [
            _one(right, Want("weak", "1")),
            _one(left, Want("weak", ordered)),
            _one(left, Want("order", f"{name}:{text(right)}")),  # ordered_numbers
        ]
    )


_ARITHMETIC = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def _evaluated(expr: str, known: dict[str, int | float]) -> int | float | None:
    """The number arithmetic over numbers and `known` expressions gives; None otherwise."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return None

    def number(inner: ast.expr) -> int | float | None:
        text = ast.unparse(inner)
        if text in known:
            return known[text]
        if isinstance(inner, ast.Constant) and isinstance(inner.value, int | float):
            return None if isinstance(inner.value, bool) else inner.value
        if isinstance(inner, ast.BinOp) and type(inner.op) in _ARITHMETIC:
            left, right = number(inner.left), number(inner.right)
            if left is None or right is None:
                return None
            try:
                return _ARITHMETIC[type(inner.op)](left, right)
            except ArithmeticError:
                return None
        return None

    return number(node) if isinstance(node, ast.BinOp) else None


_HOLDS = {
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
}


def ordered_numbers(solution: Solution) -> dict[str, str]:
    """Numbers for the expressions that order tests between two expressions read (`a > b`,
    `b >= c`), when nothing else gives them a number: every order holds at once where it
    can (a number another constraint gives stays; the others move, upward first)."""
    relations = [
        (expr, *want.value.split(":", 1))
        for expr, wants in solution.wants.items()
        for want in wants
        if want.op == "order" and want.value
    ]
    if not relations:
        return {}
    known: dict[str, int | float] = {}  # what other constraints make a number
    for expr, wants in solution.wants.items():
        firm = [w for w in wants if w.op not in ("weak", "order")]
        number = _literal(value_for(firm, None)) if firm else None
        if isinstance(number, int | float) and not isinstance(number, bool):
            known[expr] = number
    sides = {side for left, _, right in relations for side in (left, right)}
    fixed = {expr: number for expr, number in known.items() if expr in sides}
    for side in sides - set(fixed):
        number = _evaluated(side, known)  # `d // 16` with d fixed at 128: 8
        if number is not None:
            fixed[side] = number
    value: dict[str, int | float] = {}
    for left, _, right in relations:
        value.setdefault(left, fixed.get(left, 1))
        value.setdefault(right, fixed.get(right, 1))
    for _ in range(2 * len(relations) + 2):
        moved = False
        for left, name, right in relations:
            a, b = value[left], value[right]
            if _HOLDS[name](a, b):
                continue
            step = 0 if name in ("ge", "le") else 1
            if name in ("gt", "ge"):
                if left not in fixed:
                    value[left] = b + step
                elif right not in fixed:
                    value[right] = a - step
            elif right not in fixed:
                value[right] = a + step
            elif left not in fixed:
                value[left] = b - step
            moved = moved or value[left] != a or value[right] != b
        if not moved:
            break
    return {expr: repr(number) for expr, number in value.items() if expr not in fixed}


def _converted(node: ast.expr) -> bool:
    """`int(x)`, `float(x)`: a number read from one expression."""
    return (
        isinstance(node, ast.Call)
        and _called(node) in ("int", "float")
        and len(node.args) == 1
        and not node.keywords
        and not _is_literal(node.args[0])
    )


def _unconverted(node: ast.expr) -> ast.expr:
    return node.args[0] if _converted(node) else node  # type: ignore[attr-defined]


_BOUND_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _equal(node: ast.expr, value: int | float | str):
    """`node` takes the number `value` (or the value source text names); through arithmetic
    when it is some (`a * b`)."""
    node = _unconverted(node)
    if isinstance(node, ast.BinOp):
        return _arithmetic(node, value)
    return _one(node, Want("eq", value if isinstance(value, str) else repr(value)))


def _arithmetic(node: ast.BinOp, target: int | float | str):
    """`a // b > 256`: the operands' values that make `a // b` equal `target` (the other
    operand 1, or the literal it is)."""
    left, right = node.left, node.right
    literal = ast.literal_eval(right) if _is_literal(right) else None
    if isinstance(literal, bool) or not isinstance(literal, int | float | type(None)):
        return lambda solution: False
    kind = type(node.op)
    if literal is None:
        other = 0 if kind in (ast.Add, ast.Sub) else 1
        if kind is ast.Mod and isinstance(target, str):
            return lambda solution: False
        if kind is ast.Mod:  # a % b == target: b above it
            return _all([_equal(right, target + 1), _equal(left, target)])
        return _all([_equal(right, other), _equal(left, target)])
    if isinstance(target, str):
        return lambda solution: False
    if kind is ast.Add:
        value = target - literal
    elif kind is ast.Sub:
        value = target + literal
    elif kind in (ast.FloorDiv, ast.Div) and literal:
        value = target * literal
    elif kind is ast.Mult and literal:
        value = -(-target // literal)
    else:
        return lambda solution: False
    return _equal(left, value)


def _bound(op: type, limit: int) -> int:
    return {ast.Eq: limit, ast.NotEq: limit + 1, ast.Lt: limit - 1, ast.LtE: limit}.get(
        op, limit + 1
    )


def value_for(wants: list[Want], setting: Setting | None) -> str | None:
    """One value (source) meeting every constraint on an expression, or None when none does
    (a constraint the table cannot meet)."""
    kinds = {want.op: want.value for want in wants}
    if _contradicts(kinds):
        return None
    choices = [choice for choice in (setting.choices or [])] if setting else []
    type_text = (setting.type or "") if setting else ""
    if "eq" in kinds:
        value, (low, high) = _literal(kinds["eq"]), _numbers(wants)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if (low is not None and value < low) or (high is not None and value > high):
                return None  # this way contradicts itself: another is tried
        if "ne" in kinds and kinds["ne"] == kinds["eq"]:
            return None
        return kinds["eq"]
    if "in" in kinds:
        container = kinds["in"]
        literal = [want.value for want in wants if want.op == "in" and _literal(want.value)]
        container = literal[-1] if literal else container  # a literal one is the surest
        try:
            found = ast.literal_eval(container)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return f"next(iter({container}), {TRUE})"  # an empty one: a stand-in
        # a set's order changes with the process's hash seed: the same value every run
        members = sorted(found, key=repr) if isinstance(found, set | frozenset) else list(found)
        excluded = _excluded(wants)
        kept = [member for member in members if repr(member) not in excluded]
        return repr(kept[0]) if kept else None
    if "len" in kinds:
        size = int(kinds["len"] or 0)
        if _compared_with_text(wants):  # `op not in {"all", "none"} and len(op) < 2`: a string
            return repr("x" * size)
        return _sequence([STAND] * size, kinds.get("isinstance"))
    if "has" in kinds:
        return _sequence([kinds["has"] or STAND], kinds.get("isinstance"))
    low, high = _numbers(wants)
    if low is not None or high is not None:
        if low is not None and high is not None and low > high:
            return None
        for want in wants:  # a weak value inside the bounds (`x > 0`, `x % 8 == 0`: 8)
            weak = _literal(want.value) if want.op == "weak" else None
            if isinstance(weak, int | float) and not isinstance(weak, bool):
                if (low is None or weak >= low) and (high is None or weak <= high):
                    if repr(weak) != kinds.get("ne"):
                        return repr(weak)
        value = low if low is not None else high
        if "ne" in kinds and repr(value) == kinds["ne"]:
            value = value + 1
        return repr(value)
    excluded = _excluded(wants)
    if "notin" in kinds and _literal(kinds["notin"]) is None:
        # outside a collection the code computes (`get_args(Role)`): the setting's choices
        # and default are likely its members, so a made-up value
        return OTHER
    if "ne" in kinds or "notin" in kinds:
        for choice in choices:
            if repr(choice) not in excluded:
                return repr(choice)
        literal = _literal(kinds.get("ne"))
        if isinstance(literal, bool):
            return repr(not literal)
        if isinstance(literal, int | float):
            return repr(literal + 1)
        default = _literal(setting.default) if setting and setting.default else None
        if isinstance(default, str) and repr(default) not in excluded:
            return repr(default)  # a value the code takes (an enum's member), not a made-up one
        return OTHER
    if "isinstance" in kinds:
        return _instance_of(kinds["isinstance"] or "object")
    if "same" in kinds:
        return kinds["same"]
    if "weak" in kinds:  # the first test's: a guard's comes before a prior check's
        return next(want.value for want in wants if want.op == "weak")
    if "notisinstance" in kinds:
        return TRUE
    if "none" in kinds or "false" in kinds:
        if "none" in kinds:
            return "None"
        falsy = _falsy(type_text)
        if falsy == "None" and "notnone" in kinds:
            # false but not None (`value is not None and not value`): an empty container of
            # its type, else a stand-in (false)
            return _empty(type_text) or STAND
        return falsy
    if "notnone" in kinds or "true" in kinds:
        default = setting.default if setting else None
        if "true" not in kinds and default not in (None, "None"):
            return default
        if choices:
            return repr(choices[0])
        return _truthy(type_text)
    return None


def _contradicts(kinds: dict[str, str | None]) -> bool:
    """Constraints no value meets at once (`x` and `not x`, `x is None` and `x > 1`)."""
    if "true" in kinds and ("false" in kinds or "none" in kinds):
        return True
    if "none" in kinds and "notnone" in kinds:
        return True
    if "none" in kinds and ({"eq", "in", "gt", "ge", "lt", "le", "len"} & set(kinds)):
        return kinds.get("eq") != "None"
    if "eq" in kinds:
        value = _literal(kinds["eq"])
        if "false" in kinds and value and kinds["eq"] not in ("None",):
            return bool(value) if value is not None else False
        if "true" in kinds and value is not None and not value:
            return True
        members = _literal(kinds.get("in"))
        if isinstance(members, tuple | list | set | frozenset) and value not in members:
            return True
    return False


def _literal(text: str | None) -> object:
    if text is None:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _excluded(wants: list[Want]) -> set[str]:
    """The values (as repr) that `!=` and `not in` constraints rule out."""
    excluded = set()
    for want in wants:
        if want.op == "ne" and want.value:
            value = _literal(want.value)
            excluded.add(repr(value) if value is not None else want.value)
        elif want.op == "notin" and want.value:
            try:
                excluded.update(repr(member) for member in ast.literal_eval(want.value))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                pass
    return excluded


def _numbers(wants: list[Want]) -> tuple[int | float | None, int | float | None]:
    """The least and greatest numbers the order constraints admit (None: unbounded)."""
    low = high = None
    for want in wants:
        number = _literal(want.value)
        if want.op not in _ORDER.values():
            continue
        if not isinstance(number, int | float) or isinstance(number, bool):
            continue
        step = 1 if isinstance(number, int) else 0.5
        if want.op in ("gt", "ge"):
            bound = number + step if want.op == "gt" else number
            low = bound if low is None else max(low, bound)
        else:
            bound = number - step if want.op == "lt" else number
            high = bound if high is None else min(high, bound)
    return low, high


def _compared_with_text(wants: list[Want]) -> bool:
    """Whether a value is compared with strings (`!=`, `in`, `not in` literal strings)."""
    for want in wants:
        if want.op in ("eq", "ne", "in", "notin"):
            value = _literal(want.value)
            members = value if isinstance(value, tuple | list | set | frozenset) else [value]
            if members and all(isinstance(member, str) for member in members):
                return True
    return False


def _sequence(items: list[str], types: str | None) -> str:
    """A list of `items`, or a tuple when the value must be one (`isinstance(x, tuple)`)."""
    if types is not None and _instance_of(types) == "()":
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return "[" + ", ".join(items) + "]"


def _instance_of(types: str) -> str:
    try:
        tree = ast.parse(types, mode="eval").body
    except SyntaxError:
        return TRUE
    first = tree.elts[0] if isinstance(tree, ast.Tuple) and tree.elts else tree
    name = ast.unparse(first)
    builtin = {"int": "1", "float": "1.0", "str": "'x'", "bool": "True", "list": "[]",
               "dict": "{}", "tuple": "()", "set": "set()", "bytes": "b'x'"}  # fmt: skip
    return builtin.get(name, f"blank({name})")


def _truthy(type_text: str) -> str:
    for name, value in (("bool", "True"), ("int", "1"), ("float", "1.0"), ("str", "'x'")):
        if type_text.split("|")[0].strip() == name:
            return value
    if type_text.startswith(("list", "tuple", "set")):
        return f"[{STAND}]"
    if type_text.startswith("dict"):
        return "{'x': Stand()}"
    return TRUE


def _empty(type_text: str) -> str | None:
    head = type_text.split("|")[0].strip()
    for container, empty in (("list", "[]"), ("tuple", "()"), ("set", "set()"), ("dict", "{}")):
        if head == container or head.startswith(container + "["):
            return empty
    return None


def _falsy(type_text: str) -> str:
    head = type_text.split("|")[0].strip()
    return {"bool": "False", "int": "0", "float": "0.0", "str": "''"}.get(head, "None")
