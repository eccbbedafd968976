"""What to type for a check whose subject is a setting (`Site.settings`): the flag, a value
that passes the check (from the guard, the setting's choices and its default), and the words
and code that say so: a solution, a command-line change, a constructor call.

A setting without a flag of its own may come with the flag its whole config is passed
through (vLLM's `--kv-transfer-config '{"kv_role": ...}'`, a JSON object of its fields).
"""

from __future__ import annotations

import ast
import json
import operator
import re
import shlex

from extractors import ops
from extractors.syntax.names import dotted_parts
from pipeline.dataset.models import SWITCH_ACTIONS, Setting
from pipeline.explainers.offline.conditions import Condition, is_none, join_words, rewrite_receiver

PLACEHOLDER = "<value>"  # a value the code does not name
EMPTY = '""'  # the empty string, as a default is shown
OTHER_SURFACES = ("env", "request", "model-config")  # a setting changed elsewhere than a flag
_MISSING = object()


def settings_of(
    condition: Condition, settings: list[Setting]
) -> tuple[Setting | None, Setting | None]:
    """(the setting a condition's subject is, the setting whose flag passes the config it
    sits in when it has no flag of its own)."""
    names = dotted_parts(condition.subject) if condition.subject is not None else None
    if not names:
        return None, None
    expr = ".".join(names)
    read = [s for s in settings if s.expr == expr and s.surface != "internal"]
    leaf = next((s for s in read if s.flags), read[0] if read else None)
    if leaf is None:
        return None, None
    if leaf.flags:
        return leaf, None
    return leaf, carrier_of(leaf, settings)


def carrier_of(leaf: Setting, settings: list[Setting]) -> Setting | None:
    """The flagged setting whose type is the leaf's class (`KVTransferConfig | None`)."""
    return next(
        (
            s
            for s in settings
            if s.flags and s is not leaf and leaf.cls in re.findall(r"\w+", s.type or "")
        ),
        None,
    )


def read_settings(condition: Condition, settings: list[Setting]) -> list[Setting]:
    """The settings a condition reads anywhere in it (`len(self.token_ids) != 1`,
    `start + local_size > args.data_parallel_size`), in the order it reads them: the whole
    chain only (`self.a.b`, not `self.a`), never a bare receiver, never an internal one."""
    if condition.node is None or isinstance(condition.node, ast.Tuple):
        return []  # a tuple is no test (a loop header the guards wrote without its parens)
    by_expr: dict[str, list[Setting]] = {}
    for s in settings:
        if s.surface != "internal" and s.expr not in ("self", "cls"):
            by_expr.setdefault(s.expr, []).append(s)
    found: list[tuple[tuple[int, int], str]] = []
    pending: list[ast.AST] = [condition.node]
    while pending:
        node = pending.pop()
        names = dotted_parts(node) if isinstance(node, ast.Attribute | ast.Name) else None
        if names is not None and ".".join(names) in by_expr:
            where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
            found.append((where, ".".join(names)))
            continue
        pending.extend(ast.iter_child_nodes(node))
    # each chain once, in reading order, with every setting that reaches it (a parameter
    # that different callers pass different settings)
    exprs = dict.fromkeys(expr for _, expr in sorted(found))
    return [s for expr in exprs for s in by_expr[expr]]


def primary_flag(setting: Setting | None) -> str | None:
    """The flag a user types: its first long option, else its first option."""
    if setting is None or not setting.flags:
        return None
    return next((f for f in setting.flags if f.startswith("--")), setting.flags[0])


def literal(text: str | None) -> object:
    """The value a default's source text stands for, or _MISSING when it is no literal."""
    if text is None:
        return _MISSING
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _MISSING


def typed(value: object) -> str:
    """A value as a user types it on a command line (`none`, `16`, `True`)."""
    return value if isinstance(value, str) else repr(value)


def default_text(setting: Setting) -> str | None:
    """The default as a user would type it; None when it is no plain literal."""
    value = literal(setting.default)
    if value is _MISSING or isinstance(value, list | dict | tuple | set):
        return None
    return typed(value)


def is_bool(setting: Setting) -> bool:
    """A setting that is on or off: a bool field, or one set by a switch flag."""
    if setting.action in SWITCH_ACTIONS:
        return True
    return (setting.type or "").replace(" ", "") in ("bool", "bool|None", "Optional[bool]")


def is_switch(setting: Setting) -> bool:
    """Its flag takes no value (`store_true`, `--x`/`--no-x`, ...): it is never given one."""
    return setting.action in SWITCH_ACTIONS


def negative_flag(setting: Setting) -> str | None:
    """`--no-x` of a BooleanOptionalAction flag `--x` (argparse adds it)."""
    flag = primary_flag(setting)
    if setting.action != "BooleanOptionalAction" or flag is None or not flag.startswith("--"):
        return None
    return "--no-" + flag[2:]


def switch_fragments(setting: Setting, on: bool) -> tuple[str, str] | None:
    """(what a command line holds while the setting is `not on`, what it holds once it is
    `on`) for a switch flag; None for a flag that takes a value."""
    flag = primary_flag(setting)
    if flag is None or not is_switch(setting):
        return None
    negative = negative_flag(setting)
    if setting.action == "store_false":  # passing it turns the setting off
        return ("", flag) if not on else (flag, "")
    if on:
        return (negative or ""), flag
    return flag, (negative or "")


def notes(setting: Setting, first: str = "") -> str:
    """` (accepted: a, b; default a)`, the parts the setting knows, after `first`."""
    parts = [first] if first else []
    if setting.choices:
        parts.append("accepted: " + ", ".join(setting.choices))
    default = default_text(setting)
    if default is not None:
        parts.append(f"default {default or EMPTY}")  # an empty string is shown as one
    return f" ({'; '.join(parts)})" if parts else ""


def proposable(value: str | None) -> bool:
    """A value a fix may propose: one a user can see and type, not the empty string (`''`
    of `x not in ["", "eager"]` passes the check, but reads as no value at all)."""
    return value is not None and value.strip() not in ("", "''", '""')


def passing_values(
    condition: Condition, setting: Setting, wanted: str | None, offending: str | None
) -> tuple[str | None, str | None]:
    """(a value that passes the check, one that fails it), completing what the guard's
    constants and the message gave with the setting's default and choices."""
    compare = condition.compare
    if compare is None:
        return wanted, offending
    _, op, right = compare
    choices = setting.choices or []
    default = default_text(setting)
    items = _constants(right)
    if op is ops.IS and is_none(right) and wanted is None:
        return (choices[0] if choices else None), offending
    if wanted is not None:
        return wanted, offending
    if op is ops.EQ and offending is not None:
        blocked = {offending}
        number = literal(offending)
        if not choices and isinstance(number, int | float) and not isinstance(number, bool):
            return typed(number + 1), offending  # `x == 0`: any other number passes
    elif op is ops.IN and items is not None:
        blocked = set(items)
    elif op is ops.NOT_IN and items is not None:
        passing = [i for i in items if (not choices or i in choices) and proposable(i)]
        return (passing[0] if passing else None), offending
    elif op is ops.NOT_IN and choices and _values_of_own_type(right, setting):
        # `x not in get_args(Mode)` with x a Mode: every accepted value passes
        blocked = set()
    else:
        return wanted, offending
    # another accepted value first (the user chose this one for a reason: the default may
    # turn the feature off), then the default
    if choices:
        candidates = [c for c in choices if c != default] + [c for c in choices if c == default]
    else:
        candidates = [default] if default not in (None, "None") else []
    passing = (c for c in candidates if c not in blocked and c != offending and proposable(c))
    return next(passing, None), offending


def holds_with(condition: Condition, value: str) -> bool | None:
    """Whether the condition still holds once its subject is `value` (as a user types it):
    True means the value cannot be the fix. None when the code does not tell (a test of
    something else, a right side that is no constant)."""
    python = literal(value)
    python = value if python is _MISSING else python
    switch = condition.switch
    if switch is not None:
        return bool(python) == switch[1]
    bounds = condition.bounds
    if bounds is not None:  # `not lo < x <= hi` holds outside the bounds
        if not isinstance(python, int | float) or isinstance(python, bool):
            return None
        _, low, low_in, high, high_in = bounds
        above = low <= python if low_in else low < python
        below = python <= high if high_in else python < high
        return not (above and below)
    compare = condition.compare
    if compare is None:
        return None
    _, op, right = compare
    items = _literal_node(right)
    if items is _MISSING:
        member = dotted_parts(right)  # `Mode.NO_BUFFER`: the member's name stands for it
        if member is None or len(member) < 2 or not member[-2][:1].isupper():
            return None
        items = member[-1]

    def same(a: object, b: object) -> bool:
        return a == b or (isinstance(a, str) and isinstance(b, str) and a.lower() == b.lower())

    if op is ops.EQ or op is ops.IS:
        return same(python, items)
    if op is ops.NE or op is ops.IS_NOT:
        return not same(python, items)
    if op in (ops.IN, ops.NOT_IN) and isinstance(items, list | tuple | set | frozenset):
        inside = any(same(python, item) for item in items)
        return inside if op is ops.IN else not inside
    numbers = (int, float)
    if op.boundary is not None and isinstance(python, numbers) and isinstance(items, numbers):
        if isinstance(python, bool) or isinstance(items, bool):
            return None
        return _ORDER[op.symbol](python, items)
    return None


_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _literal_node(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _MISSING


def _values_of_own_type(node: ast.expr, setting: Setting) -> bool:
    """`get_args(Mode)` where the setting's type names Mode (its choices come from it)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "get_args"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in re.findall(r"\w+", setting.type or "")
    )


def _constants(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(values) == len(node.elts) and all(v is not None for v in values):
            return [typed(v) for v in values]
    return None


def _boundary_words(condition: Condition) -> str:
    """`or any value at least 2`, for an order test."""
    compare = condition.compare
    if compare is None or compare[1].boundary is None:
        return ""
    _, op, right = compare
    return f"or any value {op.than(holds=False)} {condition.show(right)}"


# --- what the check asks for -------------------------------------------------------------------


def needs(condition: Condition, setting: Setting, wanted: str | None) -> tuple[str, str | None]:
    """What the check needs of the setting: ("value", v), ("unset", None), ("on", None),
    ("off", None), ("set", None) (any value), or ("other", None) (a value the code does not
    name)."""
    switch = condition.switch
    if switch is not None:  # `if x:` fails while x is true, `if not x:` while it is false
        if is_bool(setting):
            return ("off", None) if switch[1] else ("on", None)
        return ("unset", None) if switch[1] else ("set", wanted)
    compare = condition.compare
    if compare is not None and is_none(compare[2]):
        if compare[1] is ops.IS_NOT:
            return "unset", None
        if compare[1] is ops.IS:
            return ("on", None) if is_switch(setting) else ("set", wanted)
    if wanted is not None:
        if is_switch(setting):  # `x == True`: a switch is turned on or off, never given a value
            on = literal(wanted)
            return ("on", None) if on is True else ("off", None) if on is False else ("other", None)
        return "value", wanted
    return "other", None


def solution(
    condition: Condition, setting: Setting, carrier: Setting | None, wanted: str | None
) -> str | None:
    """The fix in words, naming what to type: `Pass `--mamba-cache-mode align` (accepted:
    none, all, align; default none).`"""
    what, value = needs(condition, setting, wanted)
    about = notes(setting)
    bounded = notes(setting, _boundary_words(condition)) if what == "value" else about
    flag = primary_flag(setting)
    if flag is not None:
        default = literal(setting.default)
        switched = switch_fragments(setting, what == "on") if what in ("on", "off") else None
        if switched is not None:
            before, after = switched
            if after:
                return f"Pass `{after}`{about}."
            return f"Leave out `{before}`{about}."
        if what == "value":
            return f"Pass `{flag} {shell(value)}`{bounded}."
        if what == "unset":
            return f"Remove `{flag}`{about}."
        if what == "off":
            verb = "Turn off" if default is True else "Leave out"
            return f"{verb} `{flag}`{about}."
        if what == "on":
            return f"Pass `{flag}`{about}."
        if what == "set":
            return f"Pass `{flag} {shell(value) if value else PLACEHOLDER}`{about}."
        # no value the code names: what must hold of it (`lookup/filled.py` fills in a
        # value a pasted message reports, after the same words)
        return (
            f"Give `{flag}` a value that passes the check: {condition.phrase(negate=True)}{about}."
        )
    elsewhere = surface_solution(setting, what, value, bounded)
    if elsewhere is not None or setting.surface in OTHER_SURFACES:
        return elsewhere
    carried = primary_flag(carrier)
    if carried is not None:
        if what == "unset":
            return f"Leave {setting.field} out of `{carried}`{about}."
        if what in ("value", "on", "off", "set"):
            return f"Pass `{carried} {shell(json_object(setting, what, value))}`{bounded}."
        return None
    if setting.cls is not None:
        if what in ("value", "on", "off"):
            call = constructor(setting, what, value)
            return f"Set `{call}`{bounded}." if call else None
        if what == "unset":
            # both `x is not None` and `if x:` pass with None
            call = f"{setting.cls}({setting.field}=None)"
            return f"Leave {setting.field} of {setting.cls} unset: `{call}`{about}."
    return None


# --- a check that reads settings inside an expression -------------------------------------


def handle(setting: Setting, carrier: Setting | None) -> str | None:
    """Where a user changes a setting, as a solution names it: `--x`, `"x"` in the request
    body or the model's config.json, `X` in the environment, `Config(x=...)`; with the name
    the check reads it by when that differs (`--data-parallel-size-local` (local_size))."""
    shown = rewrite_receiver(setting.expr, "")
    by = f" ({shown})" if shown.rsplit(".", 1)[-1] != setting.field else ""
    flag = primary_flag(setting)
    if flag is not None:
        return f"`{flag}`{by}"
    if setting.surface == "env":
        return f"the environment variable `{setting.field}`"
    if setting.surface == "request":
        return f'`"{setting.field}"` in the request body{by}'
    if setting.surface == "model-config":
        via = f" (or `{setting.via}`)" if setting.via else ""
        key, where = config_key(setting)
        return f'`"{key}"` in {where}{via}'
    carried = primary_flag(carrier)
    if carried is not None:
        return f"`{setting.field}` in `{carried}`{by}"
    if setting.cls is not None:
        return f"`{setting.cls}({setting.field}=...)`{by}"
    return None


def reading_solution(
    condition: Condition,
    reads: tuple[tuple[Setting, Setting | None], ...],
    loop: str | None = None,
) -> str | None:
    """A check whose test is no value a fix can name (`len(self.ids) != 1`, `a % b`) but
    reads settings: which settings to change, and what must hold once they are changed
    (for every item of the `loop` it tests an item of)."""
    if len(reads) == 1 and (what := env_switch(condition, reads[0][0])) is not None:
        return surface_solution(reads[0][0], what, None, notes(reads[0][0]))
    handles = ordered_handles(reads)
    if not handles:
        return None
    about = notes(reads[0][0]) if len(reads) == 1 else ""
    each = f" for every {loop}" if loop else ""
    changed = _shared(handles, "and") or join_words(handles)
    return f"Change {changed} so that {condition.phrase(negate=True)}{each}{about}."


def env_switch(condition: Condition, setting: Setting) -> str | None:
    """ "on" or "off" for a test of an environment variable read through `.get()` (SGLang's
    `not envs.SGLANG_X.get()`): what the variable must be for the check to pass."""
    node, truth = condition.node, True
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node, truth = node.operand, not truth
    if setting.surface != "env" or not isinstance(node, ast.Call) or node.args or node.keywords:
        return None
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr != "get":
        return None
    names = dotted_parts(func.value)
    if names is None or ".".join(names) != setting.expr:
        return None
    return "off" if truth else "on"  # the check fails while the test holds


def ordered_handles(reads: tuple[tuple[Setting, Setting | None], ...]) -> list[str]:
    """Each chain's handles, in the order the check reads them, each said once; a chain
    that several settings reach (a parameter its callers pass different flags) as
    alternatives: `--a` or `--b`."""
    by_expr: dict[str, list[str]] = {}
    said: set[str] = set()
    for setting, carrier in reads:
        found = handle(setting, carrier)
        if found is not None and found not in said:
            said.add(found)
            by_expr.setdefault(setting.expr, []).append(found)
    return [_either(h) for h in by_expr.values()]


def _either(handles: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`; what follows their code spans said once when it is the
    same (`"a" or "b" in the request body`)."""
    return _shared(handles, "or") or _words(handles, "or")


def _shared(handles: list[str], word: str) -> str | None:
    """Handles that are each one code span followed by the same words, joined with `word`
    and those words said once (`"a" and "b" in the model's config.json`); else None."""
    spans = [h.split("`", 2) for h in handles]
    if len(handles) < 2 or not all(len(p) == 3 and not p[0] for p in spans):
        return None
    rests = {p[2] for p in spans}
    if len(rests) != 1:
        return None
    return _words([f"`{p[1]}`" for p in spans], word) + rests.pop()


def _words(parts: list[str], word: str) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" {word} " + parts[-1]


def reading_change(
    condition: Condition,
    reads: tuple[tuple[Setting, Setting | None], ...],
    command: str | None,
    loop: str | None = None,
) -> str | None:
    """Before/after of the first setting a check reads that a fix can show without a value
    the code names: its flag (never a switch) or variable with a placeholder on the command
    line, its constructor argument, else the request fields or config.json keys it reads;
    what must hold said beside it."""
    if len(reads) == 1 and (what := env_switch(condition, reads[0][0])) is not None:
        return surface_change(reads[0][0], what, None, None, command)
    each = f" for every {loop}" if loop else ""
    fails = condition.phrase() + (f" for some {loop}" if loop else "")
    passes = condition.phrase(negate=True) + each
    base = command or ""
    for setting, _ in reads:
        flag = primary_flag(setting)
        if flag is not None and not is_switch(setting):
            line = f"{base} {flag} {PLACEHOLDER}".strip()
            return f"# before: {fails}\n{line}\n# after: {passes}\n{line}"
        if flag is None and setting.surface == "env":
            line = f"{setting.field}={PLACEHOLDER} {base}".strip()
            return f"# before: {fails}\n{line}\n# after: {passes}\n{line}"
        if flag is None and setting.surface == "code" and setting.cls is not None:
            call = f"{setting.cls}({setting.field}=...)"
            return f"# before\n{call}  # {fails}\n# after\n{call}  # {passes}"
        if setting.surface == "model-config" and "." in setting.field:
            key, where = config_key(setting)  # a key inside an object: shown as that object
            body = f'{{"{key}": {PLACEHOLDER}}}'
            where = where.replace("`", "")
            return f"# before: in {where}, {fails}\n{body}\n# after: {passes}\n{body}"
    fields = list(dict.fromkeys(s.field for s, _ in reads if s.surface == "request"))
    if fields:  # the request body, each field with a value the code does not name
        body = "{" + ", ".join(f'"{field}": {PLACEHOLDER}' for field in fields) + "}"
        return f"# before: the request body, {fails}\n{body}\n# after: {passes}\n{body}"
    keys = list(dict.fromkeys(s.field for s, _ in reads if s.surface == "model-config"))
    if keys:  # top-level keys of config.json, each where the model's files set it
        body = "{" + ", ".join(f'"{key}": {PLACEHOLDER}' for key in keys) + "}"
        via = next((s.via for s, _ in reads if s.surface == "model-config" and s.via), None)
        where = "the model's config.json" + (f" (or {via})" if via else "")
        return f"# before: in {where}, {fails}\n{body}\n# after: {passes}\n{body}"
    return None


# --- the surfaces other than a flag ---------------------------------------------------------


def env_value(setting: Setting, what: str, value: str | None) -> str | None:
    """What to export for a variable: `1`/`0` for a switch, else the value."""
    if what in ("on", "off"):
        return "1" if what == "on" else "0"
    if what in ("value", "set") and value is not None and value != PLACEHOLDER:
        python = literal(value)
        if python is True or python is False:
            return "1" if python else "0"
        return str(python) if python is not _MISSING else value
    return None


def _json_value(what: str, value: str | None) -> str | None:
    python = _python(what, value)
    return None if python is _MISSING else json.dumps(python)


def surface_solution(setting: Setting, what: str, value: str | None, about: str) -> str | None:
    """The fix in words for an environment variable, a request field, a config.json key."""
    if setting.surface == "env":
        if what == "unset":
            return f"Unset the environment variable: `unset {setting.field}`{about}."
        exported = env_value(setting, what, value)
        if exported is None:
            return None  # no value the code names: what must hold is said instead
        return f"Run `export {setting.field}={shell(exported)}` before starting{about}."
    if setting.surface == "request":
        shown = _json_value(what, value)
        if what == "unset":
            return f'Leave `"{setting.field}"` out of the request body{about}.'
        if shown is None:
            if what == "set":
                return f'Send a `"{setting.field}"` in the request body{about}.'
            return None
        python = (
            f"{setting.cls}({setting.field}={_python_text(what, value)})" if setting.cls else None
        )
        offline = f", `{python}` in Python" if python else ""
        return f'Send `"{setting.field}": {shown}` in the request body{offline}{about}.'
    if setting.surface == "model-config":
        shown = _json_value(what, value)
        key, where = config_key(setting)
        body = json.dumps({key: json.loads(shown)}) if shown else None
        override = f", or pass `{setting.via} {shell(body)}`" if setting.via and body else ""
        if shown is None:
            return None
        return f'Set `"{key}": {shown}` in {where}{override}{about}.'
    return None


def config_key(setting: Setting) -> tuple[str, str]:
    """(the key, where it is) of a model-config setting: `"bits"` in `"quantization_config"`
    of the model's config.json for `quantization_config.bits`."""
    parent, _, key = setting.field.rpartition(".")
    if parent:
        return key, f'`"{parent}"` of the model\'s config.json'
    return key, "the model's config.json"


def _python_text(what: str, value: str | None) -> str:
    python = _python(what, value)
    return json.dumps(python) if isinstance(python, str) else repr(python)


def surface_change(
    setting: Setting, what: str, value: str | None, offending: str | None, command: str | None
) -> str | None:
    """Before/after for an environment variable (set in front of the command), a request
    body, a config.json key (its override flag on the command line)."""
    base = command or ""
    if setting.surface == "env":
        failing = {"on": "0", "off": "1"}.get(what) or offending
        before = f"{setting.field}={shell(failing)} {base}" if failing else base
        if what == "unset":
            after = base
        else:
            exported = env_value(setting, what, value)
            if exported is None:
                return None
            after = f"{setting.field}={shell(exported)} {base}"
        return _before_after(before.strip(), after.strip(), f"# (without {setting.field})")
    if setting.surface == "request":
        if what == "unset":  # as the solution says: the field left out of the body
            before = f'{{"{setting.field}": {PLACEHOLDER}}}'
            return f'# before: the request body\n{before}\n# after: without "{setting.field}"\n{{}}'
        shown = _json_value(what, value)
        if shown is None:
            return None
        failing = literal(offending)
        before = json.dumps({setting.field: offending if failing is _MISSING else failing})
        after = f'{{"{setting.field}": {shown}}}'
        return f"# before: the request body\n{before}\n# after\n{after}"
    if setting.surface == "model-config" and setting.via:
        shown = _json_value(what, value)
        if shown is None:
            return None
        override = shell(json.dumps({setting.field: json.loads(shown)}))
        after = f"{base} {setting.via} {override}".strip()
        return _before_after(base, after, "# (the command as run)")
    if setting.surface == "model-config" and "." in setting.field:
        shown = _json_value(what, value)  # a key inside an object: shown as that object
        if shown is None:
            return None
        key, where = config_key(setting)
        failing = literal(offending)
        if offending is None:
            before = f'{{"{key}": {PLACEHOLDER}}}'
        else:
            before = json.dumps({key: offending if failing is _MISSING else failing})
        return f'# before: {where.replace("`", "")}\n{before}\n# after\n{{"{key}": {shown}}}'
    return None


def _before_after(before: str, after: str, empty: str) -> str:
    return f"# before\n{before or empty}\n# after\n{after or empty}"


def shell(value: str) -> str:
    return value if value == PLACEHOLDER else shlex.quote(value)


def _python(what: str, value: str | None) -> object:
    """The Python value a check needs: True/False for a switch, a literal's value, else
    the word itself (`none` is the string "none")."""
    if what in ("on", "off"):
        return what == "on"
    if value is None or value == PLACEHOLDER:
        return _MISSING
    parsed = literal(value)
    return value if parsed is _MISSING else parsed


def json_object(setting: Setting, what: str, value: str | None) -> str:
    """`{"kv_role": "kv_both"}`: the field as its carrier flag's JSON takes it."""
    python = _python(what, value)
    return json.dumps({setting.field: PLACEHOLDER if python is _MISSING else python})


def constructor(setting: Setting, what: str, value: str | None) -> str | None:
    """`CacheConfig(block_size=16)`: the setting passed to its class."""
    python = _python(what, value)
    if python is _MISSING or setting.cls is None:
        return None
    shown = json.dumps(python) if isinstance(python, str) else repr(python)
    return f"{setting.cls}({setting.field}={shown})"


def command_change(
    condition: Condition,
    setting: Setting,
    carrier: Setting | None,
    wanted: str | None,
    offending: str | None,
) -> tuple[str, str] | None:
    """(before, after) command-line fragments: the failing setting and the passing one."""
    what, value = needs(condition, setting, wanted)
    flag = primary_flag(setting)
    if flag is not None:
        switched = switch_fragments(setting, what == "on") if what in ("on", "off") else None
        if switched is not None:
            return switched
        if what == "on":
            return "", flag
        if what == "off":
            return flag, ""
        if what == "unset":
            return f"{flag} {shell(offending) if offending else PLACEHOLDER}", ""
        if what == "set":
            return "", f"{flag} {shell(value) if value else PLACEHOLDER}"
        if what == "value":
            before = shell(offending) if offending is not None else PLACEHOLDER
            return f"{flag} {before}", f"{flag} {shell(value)}"  # type: ignore[arg-type]
        return None
    carried = primary_flag(carrier)
    if carried is None or what == "other":
        return None
    if what == "unset":  # the config without the field passes
        failing = json_object(setting, "value", offending or PLACEHOLDER)
        return f"{carried} {shell(failing)}", f"{carried} {shell('{}')}"
    if what == "set":  # the config without the field fails
        return f"{carried} {shell('{}')}", f"{carried} {shell(json_object(setting, what, value))}"
    failing_what = {"on": "off", "off": "on"}.get(what, "value")
    failing = json_object(setting, failing_what, offending)
    passing = json_object(setting, what, value)
    return f"{carried} {shell(failing)}", f"{carried} {shell(passing)}"


def constructor_change(
    condition: Condition, setting: Setting, wanted: str | None, offending: str | None
) -> tuple[str, str] | None:
    """(before, after) constructor calls of the setting's class."""
    what, value = needs(condition, setting, wanted)
    if what not in ("value", "on", "off") or setting.cls is None or "." in setting.field:
        return None  # (`quantization_config.bits` is a key inside config.json, no argument)
    after = constructor(setting, what, value)
    failing_what = {"on": "off", "off": "on"}.get(what, "value")
    before = (
        constructor(setting, failing_what, offending)
        if (offending is not None or failing_what != "value")
        else None
    )
    if after is None:
        return None
    return before or f"{setting.cls}({setting.field}=...)", after
