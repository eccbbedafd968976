"""The call a caller must make: a test that no setting reaches but that reads only the
function's own arguments (or values it computes from them) is fixed where the function is
called, with arguments that make the test false. One rule, `call_inputs`:

| the test (in `def f(x, y, *rest)`)            | the arguments a caller decides it by |
|-----------------------------------------------|--------------------------------------|
| `x < 0`, `x is None`, `not x`                 | `x`                                  |
| `x % y != 0`, `os.path.isdir(x)`              | `x`, `y` / `x`                       |
| `n > LIMIT` after `n = len(x) * y`            | `x`, `y` (n is computed from them)   |
| `x > MAX` (`MAX` a module constant)           | `x`                                  |
| `item in seen` in `for item in items:`        | `seen`, `items` (item comes from it) |
| `item in seen` in `for item in self.items:`   | none: no argument gives `item`       |
| `rest[0] < 0` (`*rest` cannot be named)       | none                                 |
| `self.x < 0`, `LIMIT < 0`                     | none: no argument (a setting's test) |
| `"x" in data` in a pydantic `model_validator` | none: pydantic calls it, not a caller |

The callee is written as a caller writes it: `Owner(...)` for a constructor (`__init__`,
`__post_init__`), `Owner.f(...)`
for a class or static method, `manager.f(...)` on an instance (of `LoRAManager`), `f(...)` for
a function."""

from __future__ import annotations

import ast
import re

from pipeline.explainers.offline.checks import Check, FunctionFacts, value_names
from pipeline.explainers.offline.conditions import join_words

_ON_CLASS = {"classmethod", "staticmethod"}
# pydantic calls these with what the model is built from: no caller writes the call
_PYDANTIC = {"field_validator", "model_validator", "validator", "root_validator"}


def call_inputs(check: Check, function: FunctionFacts) -> tuple[str, ...] | None:
    """The arguments a caller passes that decide the check (see the table); None when a call
    does not decide it."""
    if check.setting is not None or check.flag is not None or check.reads or check.settable:
        return None
    if any(name in _PYDANTIC for name, _ in function.decorators):
        return None
    names = value_names(check.condition.node) & function.variables
    if not names:
        return None
    computed = dict(function.computed)
    inputs: list[str] = []
    for name in sorted(names):
        if name in function.params:
            if name not in function.keywords:  # `*rest`, `**extra`, positional-only
                return None
            inputs.append(name)
        elif name in computed:
            inputs += computed[name]
        else:  # a loop's item, a value read from elsewhere: no call decides it
            return None
    if not set(inputs) <= set(function.keywords):
        return None
    return tuple(k for k in function.keywords if k in inputs)  # in the signature's order


def callee(function: FunctionFacts) -> str:
    """The function as its caller writes the call (see the table)."""
    if function.owner is None:
        return function.name
    if function.name in ("__init__", "__post_init__"):  # what building the object passes
        return function.owner
    if any(name in _ON_CLASS for name, _ in function.decorators):
        return f"{function.owner}.{function.name}"
    # the instance by the last word of its class (`LoRAManager` -> `manager`): splitting
    # every capital would garble `LoRA` or `3D`
    words = re.findall(r"[A-Z]?[a-z]+", function.owner)
    instance = words[-1].lower() if words else "obj"
    return f"{instance}.{function.name}"


def call_line(function: FunctionFacts, arguments: list[tuple[str, str]], note: str) -> str:
    """`f(..., x=0)  # note`: the named arguments, `...` for the others the call passes."""
    named = [name for name, _ in arguments]
    rest = ["..."] if set(function.keywords) - set(named) else []
    passed = ", ".join([*rest, *(f"{name}={value}" for name, value in arguments)])
    return f"{callee(function)}({passed})" + (f"  # {note}" if note else "")


def computed_note(check: Check, function: FunctionFacts) -> str:
    """`n is computed from x and y`, `item comes from items` (a loop's): the locals the test
    reads, with their arguments."""
    computed = dict(function.computed)
    node = check.condition.node
    # names the test binds itself (`any(t < 0 for t in x)`) need no note
    bound = {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    names = sorted((value_names(node) & set(computed)) - bound) if node is not None else []
    return "; ".join(
        f"{name} {'comes' if name in function.iterated else 'is computed'} from "
        f"{join_words(list(computed[name]))}"
        for name in names
    )


def call_solution(
    check: Check, function: FunctionFacts, inputs: tuple[str, ...], example: str | None
) -> str:
    """What the caller must pass, said plainly; `example` an argument that passes (`x=0`)."""
    said = computed_note(check, function)
    args = join_words([f"`{name}`" for name in inputs])
    whose = "an argument" if len(inputs) == 1 else "arguments"
    text = f"Call {callee(function)} with {args} such that {check.condition.phrase(negate=True)}"
    if example is not None:
        text += f" (for example `{example}`)"
    if said:
        text += f" ({said} in {function.name})"
    return (
        f"{text}: {'it is' if len(inputs) == 1 else 'they are'} {whose} of {function.name}, "
        "so the code that calls it decides; follow the traceback to that call."
    )
