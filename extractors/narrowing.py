"""What a test lets through, for names unpacked together from the tuples a helper returns.

`ok, msg = check(x)` with `check` returning `False, f"bad {x}"` or `True, None`: under
`if not ok:` only the first return can have run, so `msg` is `bad {x}` there, not
`{?bad {x}|None}`. The tuples are the `rows` of the merged value (extractors/parts.py); a
test on one name of the group keeps the rows whose item it does not rule out, and the other
names then hold what those rows hold.

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
    """The name a test is about and whether it is truthy when the test `holds` (or not):
    `not ok` holding means `ok` is falsy; None for any other test."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, not holds
    if isinstance(test, cst.Name):
        return test.value, holds
    return None
