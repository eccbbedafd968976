"""A site's guards as conditions: parsed, said in words, inverted, and rewritten as code."""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from dataclasses import dataclass, field, replace

from extractors import ops
from extractors.syntax.names import dotted_parts, getattr_parts

RECEIVERS = ("self", "cls")

# Words that make a name read as an on/off switch (`use_ray`, `executor_supports_async`):
# such names are "true"/"false", other values "set"/"not set".
_BOOL_WORDS = frozenset(
    "use uses enable enabled disable disabled is has have allow allows skip support supports "
    "should can need needs force trust strict only eager async".split()
)


def squeeze_spaces(text: str) -> str:
    """Text on one line, every run of white space one space."""
    return " ".join(text.split())


def _tokens(code: str) -> list[tokenize.TokenInfo] | None:
    try:
        return list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


@functools.lru_cache(maxsize=4096)
def rewrite_receiver(code: str, replacement: str) -> str:
    """`self.x.y` -> `{replacement}x.y` (also `cls.`), outside strings, in one-line code."""
    tokens = _tokens(code)
    if tokens is None or "\n" in code.strip():
        return code
    spans = []
    for i, tok in enumerate(tokens[:-1]):
        before = tokens[i - 1].string if i else ""
        if (
            tok.type == tokenize.NAME
            and tok.string in RECEIVERS
            and tokens[i + 1].string == "."
            and before != "."
        ):
            spans.append((tok.start[1], tokens[i + 1].end[1]))
    for start, end in reversed(spans):
        code = code[:start] + replacement + code[end:]
    return code


def without_comments(code: str) -> str:
    """Code with its comments dropped, on one line; '' when it does not even tokenize
    (a guard's comment is free prose, never repeated)."""
    tokens = _tokens(code)
    if tokens is None:
        return ""
    lines = code.split("\n")
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    return squeeze_spaces("\n".join(lines))


def is_constant_like(node: ast.AST) -> bool:
    """A literal, or a dotted name ending in an UPPER_CASE member (`Backend.TRITON`)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    names = dotted_parts(node)
    return bool(names) and len(names) > 1 and names[-1].isupper()  # type: ignore[index]


def is_bool_name(name: str) -> bool:
    return any(word in _BOOL_WORDS for word in name.lower().split("_"))


def rename_names(code: str, aliases: dict[str, str]) -> str:
    """Rename free names (`v` -> `targets`) in one-line code, leaving attributes alone."""
    if not aliases:
        return code
    tokens = _tokens(code)
    if tokens is None or "\n" in code.strip():
        return code
    spans = []
    for i, tok in enumerate(tokens):
        before = tokens[i - 1].string if i else ""
        if tok.type == tokenize.NAME and tok.string in aliases and before != ".":
            spans.append((tok.start[1], tok.end[1], aliases[tok.string]))
    for start, end, name in reversed(spans):
        code = code[:start] + name + code[end:]
    return code


@dataclass(frozen=True)
class Condition:
    """One conjunct of a site's guards (a guard `a and b` gives two).

    `node` is None when the guard is not valid Python on its own; its `source` is then the
    guard without comments (possibly empty) and only "holds"/"does not hold" apply."""

    node: ast.expr | None
    source: str  # one line, as written, receiver kept
    origin: str = field(default="", repr=False)  # the text `node`'s offsets point into
    # names a reader knows better by another (a field validator's `v` is the field)
    aliases: tuple[tuple[str, str], ...] = ()
    # a truth test of a value also known not to be None: its falsy case reads "empty"
    not_none: bool = False

    def show(self, node: ast.AST, rename: dict[str, str] | None = None) -> str:
        """Reader's text of a sub-expression: `self.` dropped, renamed if asked."""
        segment = source_segment(self.origin, node)
        text = rename_names(rewrite_receiver(segment, ""), dict(self.aliases))
        return (rename or {}).get(text, text)

    @property
    def text(self) -> str:
        return rename_names(rewrite_receiver(self.source, ""), dict(self.aliases))

    @property
    def code(self) -> str:
        """The condition as a test of a config object named `cfg`."""
        return rewrite_receiver(self.source, "cfg.")

    @property
    def compare(self) -> tuple[ast.expr, ops.Op, ast.expr] | None:
        """(left, operator's row, right) of a single comparison."""
        node = self.node
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return node.left, ops.of_ast(node.ops[0]), node.comparators[0]
        return None

    @property
    def bounds(self) -> tuple[ast.expr, float, bool, float, bool] | None:
        """(subject, low, low included, high, high included) of a failing range test,
        `not 0.0 < self.top_p <= 1.0` (the check fails outside the bounds), with number
        constants as bounds."""
        node = self.node
        if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            return None
        test = node.operand
        if not isinstance(test, ast.Compare) or len(test.ops) != 2:
            return None
        if not all(isinstance(op, ast.Lt | ast.LtE) for op in test.ops):
            return None
        low, middle, high = test.left, *test.comparators
        numbers = [_number(low), _number(high)]
        if None in numbers or dotted_parts(middle) is None:
            return None
        return (
            middle,
            numbers[0],  # type: ignore[return-value]
            isinstance(test.ops[0], ast.LtE),
            numbers[1],  # type: ignore[return-value]
            isinstance(test.ops[1], ast.LtE),
        )

    @property
    def switch(self) -> tuple[ast.expr, bool] | None:
        """(dotted name, truth it has here) for `x` / `not x` tests."""
        node, truth = self.node, True
        while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            node, truth = node.operand, not truth
        if node is not None and dotted_parts(node) is not None:
            return node, truth
        return None

    @property
    def subject(self) -> ast.expr | None:
        """The dotted name a condition is about (`x`, `not x`, `x == 1`, `isinstance(x, T)`)."""
        if (switch := self.switch) is not None:
            return switch[0]
        if (compare := self.compare) is not None and dotted_parts(compare[0]) is not None:
            return compare[0]
        if (bounds := self.bounds) is not None:
            return bounds[0]
        node = self.node
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            node = node.operand
        if is_isinstance(node) and dotted_parts(node.args[0]) is not None:  # type: ignore[union-attr]
            return node.args[0]  # type: ignore[union-attr]
        return None

    def phrase(self, negate: bool = False, rename: dict[str, str] | None = None) -> str:
        """The condition in words (`cache_config.use_x is true`), or its negation."""
        if self.node is None:
            if not self.source:
                return (
                    "a condition that is not valid Python on its own does not hold"
                    if negate
                    else "a condition that is not valid Python on its own holds"
                )
            return f"{self.source} does not hold" if negate else f"{self.source} holds"
        return _phrase(self, self.node, negate, rename or {})


def _number(node: ast.expr) -> float | None:
    """An int or float constant (a negative one too), not a bool."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return None if isinstance(node.value, bool) else node.value
    return None


@functools.lru_cache(maxsize=256)
def _lines(origin: str) -> tuple[bytes, ...]:
    return tuple(line.encode() for line in origin.split("\n"))


def source_segment(origin: str, node: ast.AST) -> str:
    """A node's one-line source as written in `origin`, else `ast.unparse` of it."""
    line, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if not origin or line is None or line != end:
        return ast.unparse(node)
    text = _lines(origin)[line - 1]  # offsets are in UTF-8 bytes
    return text[node.col_offset : node.end_col_offset].decode()  # type: ignore[attr-defined]


def fetched_as_read(code: str) -> str:
    """`getattr(hf_config, "pooling", None) is None` -> `hf_config.pooling is None`: a
    `getattr` with a name (`extractors.syntax.names.read_attribute`) is the attribute it
    fetches, as the settings join reads it; other code, and a call over several lines, is
    left as written."""
    if "getattr" not in code:
        return code
    origin = f"(\n{code}\n)"
    try:
        tree = ast.parse(origin, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return code
    spans: list[tuple[int, int, int, str]] = []  # (line, start, end, text), outermost only
    stack: list[ast.AST] = [tree.body]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and node.lineno == node.end_lineno:
            parts = getattr_parts(node)
            if parts is not None:
                base = source_segment(origin, node.args[0])
                read = f"{fetched_as_read(base)}.{parts[-1]}"
                spans.append((node.lineno, node.col_offset, node.end_col_offset, read))  # type: ignore[arg-type]
                continue
        stack.extend(ast.iter_child_nodes(node))
    if not spans:
        return code
    lines = [line.encode() for line in origin.split("\n")]
    for line, start, end, read in sorted(spans, reverse=True):
        text = lines[line - 1]
        lines[line - 1] = text[:start] + read.encode() + text[end:]
    return b"\n".join(lines[1:-1]).decode()


def parse_guards(guards: list[str], aliases: dict[str, str] | None = None) -> list[Condition]:
    """Guards -> conditions, top-level `and`s split, outermost first; a `getattr` with a
    name reads as its attribute (`fetched_as_read`)."""
    renames = tuple(sorted((aliases or {}).items()))
    conditions: list[Condition] = []
    for guard in map(fetched_as_read, guards):
        origin = f"(\n{guard}\n)"
        try:
            tree = ast.parse(origin, mode="eval")
        except SyntaxError:
            conditions.append(Condition(None, without_comments(guard)))
            continue
        for node in _conjuncts(tree.body):
            source = source_segment(origin, node)
            conditions.append(Condition(node, source, origin, renames))
    return conditions


def without_not(condition: Condition) -> Condition:
    """`not x == "null"` as the `x != "null"` it means, and `0 > x` as `x < 0`: one
    comparison under a `not` is flipped, a constant on its left moved to the right, so that
    its words and the value that passes read as any comparison's."""
    node = condition.node
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.Compare) and len(inner.ops) == 1:
            flipped = ast.Compare(
                left=inner.left, ops=[ops.negated_ast(inner.ops[0])], comparators=inner.comparators
            )
            node = ast.copy_location(flipped, node)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        mirror = ops.mirrored_ast(node.ops[0])
        right = node.comparators[0]
        if mirror is not None and is_constant_like(node.left) and dotted_parts(right):
            swapped = ast.Compare(left=right, ops=[mirror], comparators=[node.left])
            node = ast.copy_location(swapped, node)
    return condition if node is condition.node else replace(condition, node=node)


def _conjuncts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [part for value in node.values for part in _conjuncts(value)]
    return [node]


def is_isinstance(node: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        and not node.keywords
    )


# `len(x) <op> n` -> whether it says that x is empty (True) or not empty (False)
_EMPTY_TESTS: dict[tuple[ops.Op, int], bool] = {
    (ops.EQ, 0): True,
    (ops.LE, 0): True,
    (ops.LT, 1): True,
    (ops.NE, 0): False,
    (ops.GT, 0): False,
    (ops.GE, 1): False,
}


def _emptiness(node: ast.Compare) -> tuple[ast.expr, bool] | None:
    """(x, is it empty) for a test of `len(x)` against 0 or 1 (`len(x) == 0` reads as "x is
    empty", not as "len(x) is 0")."""
    left, right = node.left, node.comparators[0]
    if not (
        isinstance(left, ast.Call)
        and isinstance(left.func, ast.Name)
        and left.func.id == "len"
        and len(left.args) == 1
        and not left.keywords
        and isinstance(right, ast.Constant)
        and type(right.value) is int
    ):
        return None
    says = _EMPTY_TESTS.get((ops.of_ast(node.ops[0]), right.value))
    return None if says is None else (left.args[0], says)


def _phrase(cond: Condition, node: ast.expr, negate: bool, rename: dict[str, str]) -> str:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _phrase(cond, node.operand, not negate, rename)
    if isinstance(node, ast.BoolOp):
        parts = []
        for value in node.values:
            part = _phrase(cond, value, negate, rename)
            parts.append(f"({part})" if isinstance(value, ast.BoolOp) else part)
        # De Morgan: a negated `and` reads as `or`, a negated `or` as `and`
        if isinstance(node.op, ast.And) != negate:
            return " and ".join(parts)
        return "either " + " or ".join(parts)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        if (empty := _emptiness(node)) is not None:
            sized, is_empty = empty
            return f"{cond.show(sized, rename)} is {'' if is_empty != negate else 'not '}empty"
        left, right = cond.show(node.left, rename), cond.show(node.comparators[0], rename)
        op = ops.of_ast(node.ops[0])
        words = op.when_false if negate else op.when_true
        if op in (ops.EQ, ops.NE) and not is_constant_like(node.comparators[0]):
            # `a == b` of two values: "a is b" would read as identity
            words = ("equals", "differs from")[(op is ops.NE) != negate]
        if left.startswith("--") and right == "None" and words in ("is", "is not"):
            return f"{left} is {'not set' if words == 'is' else 'set'}"
        return f"{left} {words} {right}"
    if is_isinstance(node):
        value, kind = (cond.show(arg, rename) for arg in node.args)  # type: ignore[attr-defined]
        return f"{value} is {'not ' if negate else ''}an instance of {kind}"
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1:
            return f"{cond.show(node.args[0], rename)} is {'' if negate else 'not '}empty"
        return f"{cond.show(node, rename)} returns {'false' if negate else 'true'}"
    names = dotted_parts(node)
    if names is not None:
        text = cond.show(node, rename)
        if text.startswith("--") and is_bool_name(names[-1]):
            return f"{text} is {'off' if negate else 'on'}"
        if text.startswith("--"):
            return f"{text} is {'not given' if negate else 'given'}"
        if is_bool_name(names[-1]):
            return f"{text} is {'false' if negate else 'true'}"
        if cond.not_none:  # `x is not None and not x`: "x is not set" would contradict
            return f"{text} is {'empty' if negate else 'not empty'}"
        return f"{text} is {'not set' if negate else 'set'}"
    return f"{cond.show(node, rename)} is {'false' if negate else 'true'}"


def join_words(parts: list[str]) -> str:
    """['a', 'b', 'c'] -> 'a, b and c'."""
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def simplify(conditions: list[Condition]) -> list[Condition]:
    """Drop repeated conditions and the `x != a` / `x not in (a, b)` tests that an
    `x == c` among them already implies (an if/elif chain leaves many of those)."""
    unique: list[Condition] = []
    for condition in conditions:
        if all(condition.code != kept.code for kept in unique):
            unique.append(condition)
    pinned: dict[str, object] = {}  # subject -> the constant an `==` test pins it to
    not_none: set[str] = set()  # subjects an `is not None` test covers
    for condition in unique:
        compare = condition.compare
        if compare and compare[1] is ops.EQ and isinstance(compare[2], ast.Constant):
            pinned.setdefault(ast.dump(compare[0]), compare[2].value)
        if compare and compare[1] is ops.IS_NOT and is_none(compare[2]):
            not_none.add(ast.dump(compare[0]))
    kept = [c for c in unique if not _implied(c, pinned)]
    return [
        replace(c, not_none=True)
        if c.switch is not None and ast.dump(c.switch[0]) in not_none
        else c
        for c in kept
    ]


def is_none(node: ast.expr) -> bool:
    """Whether `node` is the literal `None`."""
    return isinstance(node, ast.Constant) and node.value is None


def _implied(condition: Condition, pinned: dict[str, object]) -> bool:
    compare = condition.compare
    if compare is None or ast.dump(compare[0]) not in pinned:
        return False
    value, op, right = pinned[ast.dump(compare[0])], compare[1], compare[2]
    if op is ops.NE and isinstance(right, ast.Constant):
        return right.value != value
    if op is ops.NOT_IN and isinstance(right, ast.Tuple | ast.List | ast.Set):
        items = right.elts
        return all(isinstance(e, ast.Constant) for e in items) and all(
            e.value != value
            for e in items  # type: ignore[attr-defined]
        )
    return False
