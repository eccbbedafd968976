"""What a test lets through: for names unpacked together from the tuples a helper returns,
and for a list of messages.

`ok, msg = check(x)` with `check` returning `False, f"bad {x}"` or `True, None`: under
`if not ok:` only the first return can have run, so `msg` is `bad {x}` there, not
`{?bad {x}|None}`. The tuples are the `rows` of the merged value (extractors/parts.py); a
test on one name of the group keeps the rows whose item it does not rule out, and the other
names then hold what those rows hold.

A list that a test says is not empty (`if errors: raise ValueError(" ".join(errors))`)
holds at least one of its entries there (`Items.filled`): a message joined from entries
that each may be absent still holds one of them.

| the raise (or the code after `if t: return`) runs when | the rows kept for `ok` |
|---|---|
| `not ok` holds | `ok` is falsy (`False`, `None`, `0`, `''`, `()`, `[]`) or not known |
| `ok` holds | `ok` is truthy (`True`, a non-empty string, a non-zero number) or not known |
| any other test | all of them |
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from extractors.parts import Entry

_FALSY = frozenset({"False", "None", "0", "0.0", "''", '""', "()", "[]"})


@dataclass(frozen=True)
class Together:
    """Names bound by one unpacking, and the tuples (rows) the value may have been."""

    names: tuple[str, ...]
    rows: tuple[tuple[Entry, ...], ...]

    def kept(self, name: str, truth: bool) -> Together | None:
        """The rows left when `name` is known to be truthy (`truth`) or falsy; None when the
        test rules none out (or all: a row of code that cannot run is no better known)."""
        index = self.names.index(name)
        rows = tuple(row for row in self.rows if truthiness(row[index]) in (truth, None))
        if not rows or len(rows) == len(self.rows):
            return None
        return Together(self.names, rows)


def truthiness(entry: Entry) -> bool | None:
    """Whether an item is truthy, as its repr says; None when the repr is not all known."""
    written = entry.shown.literal()
    if written is None:
        return None
    if written in _FALSY:
        return False
    if written == "True":
        return True
    try:
        value = ast.literal_eval(written)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return bool(value) if isinstance(value, (str, int, float)) else None


def tested(test: cst.BaseExpression, holds: bool) -> tuple[str, bool] | None:
    """The name a test is about and whether it is truthy when the test `holds` (or not);
    None for any other test. A list's length stands for the list.

    | test               | holds | gives          |
    |--------------------|-------|----------------|
    | `ok`               | yes   | `ok`, truthy   |
    | `not ok`           | yes   | `ok`, falsy    |
    | `not ok`           | no    | `ok`, truthy   |
    | `len(errors)`      | yes   | `errors`, truthy |
    | `len(errors) > 0`, `len(errors) != 0`, `len(errors) >= 1` | yes | `errors`, truthy |
    | `len(errors) == 0` | no    | `errors`, truthy |
    | `ok == 1`, `f(ok)` | any   | None           |
    """
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, not holds
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        (target,) = test.comparisons
        empty = _EMPTY_WHEN_FALSE.get((type(target.operator), _integer(target.comparator)))
        if empty is None or _length_of(test.left) is None:
            return None
        test, holds = test.left, holds if empty else not holds
    name = _length_of(test)
    if name is not None:
        return name, holds
    if isinstance(test, cst.Name):
        return test.value, holds
    return None


# `len(x) OP N` -> whether the comparison holds exactly when `x` is not empty (True), or
# exactly when it is empty (False).
_EMPTY_WHEN_FALSE = {
    (cst.GreaterThan, "0"): True,
    (cst.NotEqual, "0"): True,
    (cst.GreaterThanEqual, "1"): True,
    (cst.Equal, "0"): False,
    (cst.LessThan, "1"): False,
}


def _integer(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Integer) else None


def _length_of(node: cst.BaseExpression) -> str | None:
    """`x` for `len(x)`, else None."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "len"
        and len(node.args) == 1
        and isinstance(node.args[0].value, cst.Name)
        and not node.args[0].star
    ):
        return node.args[0].value.value
    return None
