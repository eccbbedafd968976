"""The code of an offline explanation: the example fix, the check to run before building a
config, the type guard and the try/except, all built from the guards and made to parse."""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from extractors import ops
from extractors.patterns import shown_message
from extractors.syntax.names import dotted_parts
from pipeline.dataset.models import Site
from pipeline.explainers.grounding import syntax_error
from pipeline.explainers.offline.calls import call_inputs, call_line, computed_note
from pipeline.explainers.offline.checks import (
    OTHER_VALUE,
    Check,
    FunctionFacts,
    article,
    constant,
    flag_change_values,
    fragments,
    inside,
    is_loop_header,
    is_precondition,
    ordered_unique,
    py_literal,
    shell_word,
    value_names,
)
from pipeline.explainers.offline.conditions import (
    RECEIVERS,
    Condition,
    is_bool_name,
    rename_names,
    rewrite_receiver,
    source_segment,
)
from pipeline.explainers.offline.settings import (
    OTHER_SURFACES,
    command_change,
    constructor_change,
    holds_with,
    needs,
    primary_flag,
    reading_change,
    surface_change,
)


def _cli_change(check: Check, placeholder: bool) -> tuple[str, str] | None:
    """(before, after) command-line fragments that turn this check from failing to passing;
    with `placeholder`, `<other value>` may stand for a value the code does not name."""
    if check.flag is None:
        return None
    flag, switch = check.flag, check.condition.switch
    if switch is not None:
        on = flag if check.on_off else f"{flag} <value>"
        return (on, "") if switch[1] else ("", on)
    if check.wanted is None:
        if placeholder and check.offending is not None:
            return f"{flag} {shell_word(check.offending)}", f"{flag} {OTHER_VALUE}"
        return None
    offending = check.offending if check.offending is not None else OTHER_VALUE
    return f"{flag} {shell_word(offending)}", f"{flag} {shell_word(check.wanted)}"


def _same_subject(other: Check, check: Check) -> bool:
    """The check itself, or another test of what it changes (its context would undo it)."""
    if other is check:
        return True
    flag = check.flag or primary_flag(check.carrier)
    return flag is not None and other.flag == flag


def _cli_context(check: Check) -> str | None:
    """A command-line fragment that keeps an outer check true in both before and after."""
    if check.flag is None:
        return None
    switch = check.condition.switch
    if switch is not None and switch[1]:
        return check.flag if check.on_off else f"{check.flag} <value>"
    compare = check.condition.compare
    if compare is not None and compare[1] is ops.EQ and check.offending is not None:
        return f"{check.flag} {shell_word(check.offending)}"
    return None


def _python_change(check: Check) -> tuple[str, str] | None:
    """(before, after) assignments in Python for a check with no known flag."""
    cond = check.condition
    if cond.subject is None or not check.settable:
        return None
    switch, compare = cond.switch, cond.compare
    if switch is not None:
        target = _as_code(cond, switch[0])
        boolish = is_bool_name((dotted_parts(switch[0]) or [""])[-1])
        if boolish:
            return f"{target} = {switch[1]}", f"{target} = {not switch[1]}"
        # a value known not to be None can only be empty (`[]`, `""`, `0`) to be false
        empty = f"{target} = ...  # an empty value" if cond.not_none else f"{target} = None"
        if switch[1]:
            return f"{target} = ...  # a non-empty value", empty
        return empty, f"{target} = ...  # a non-empty value"
    if compare is None:
        return None
    left, op, right = compare
    target, value = _as_code(cond, left), _as_code(cond, right)
    if op is ops.EQ:
        return f"{target} = {value}", f"{target} = ...  # anything but {value}"
    if op is ops.NE:
        return f"{target} = ...  # anything but {value}", f"{target} = {value}"
    if op is ops.IS_NOT and value == "None":
        return f"{target} = ...  # a value", f"{target} = None"
    if op is ops.IS and value == "None":
        return f"{target} = None", f"{target} = ...  # a value"
    if check.wanted is None and isinstance(constant(right), int):
        wanted, offending = flag_change_values(cond, [])
        if wanted is not None and offending is not None:
            return f"{target} = {offending}", f"{target} = {wanted}"
    items = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else []
    if op in (ops.IN, ops.NOT_IN) and (
        (items and all(isinstance(e, ast.Constant) for e in items))
        or dotted_parts(right) is not None
    ):
        # `x not in ("a", "b")`: "a" passes; `x not in SUPPORTED`: any of its members does
        member = _as_code(cond, items[0]) if items else f"...  # one of {value}"
        allowed, other = f"{target} = {member}", f"{target} = ...  # not in {value}"
        return (other, allowed) if op is ops.NOT_IN else (allowed, other)
    if op.boundary is not None and dotted_parts(right) is not None:  # `a < b`: two config values
        before = f"{target} = ...  # {op.than(holds=True)} {value}"
        if op.boundary[1] == 0:  # fails at `b` itself
            return before, f"{target} = {value}"
        return before, f"{target} = ...  # {op.than(holds=False)} {value}"
    return None


def call_change(check: Check, function: FunctionFacts) -> tuple[str, str, str | None] | None:
    """(before, after) calls of the function for a check its arguments decide (calls.py),
    and the passing argument when the code names it (`x=0`); None for any other check."""
    inputs = call_inputs(check, function)
    if inputs is None:
        return None
    cond = check.condition
    if len(inputs) == 1 and cond.subject is not None and dotted_parts(cond.subject) == [*inputs]:
        change = _bounds_change(cond) or _python_change(replace(check, settable=True))
        sides = [_argument(side, inputs[0], function) for side in change or ()]
        if sides and None not in sides:
            (before, before_note), (after, after_note) = sides  # type: ignore[misc]
            lines = [call_line(function, [(inputs[0], before)], before_note)]
            lines.append(call_line(function, [(inputs[0], after)], after_note))
            example = f"{inputs[0]}={after}" if after != "..." else None
            return lines[0], lines[1], example
    arguments = [(name, "...") for name in inputs]
    failing = "; ".join(filter(None, [computed_note(check, function), cond.phrase()]))
    return (
        call_line(function, arguments, failing),
        call_line(function, arguments, f"so that {cond.phrase(negate=True)}"),
        None,
    )


def _bounds_change(cond: Condition) -> tuple[str, str] | None:
    """`x = 0`, `x = 1` for `not 0 < x < 65536`: a value below the bounds, one inside."""
    if cond.bounds is None or cond.subject is None:
        return None
    _, low, low_in, _, _ = cond.bounds
    target, below, within = (
        cond.show(cond.subject),
        str(low - 1 if low_in else low),
        inside(cond.bounds),
    )
    if within is None or holds_with(cond, below) is not True or holds_with(cond, within):
        return None
    return f"{target} = {below}", f"{target} = {within}"


def _argument(assignment: str, name: str, function: FunctionFacts) -> tuple[str, str] | None:
    """(value, note) of `name = value  # note`; None when the value reads the function's own
    variables (`x = expected`: no caller has `expected`)."""
    code, _, note = assignment.removeprefix(f"{name} = ").partition("  # ")
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return None
    if value_names(tree) & function.variables:
        return None
    return code, note


def _as_code(cond: Condition, node: ast.expr, aliased: bool = True) -> str:
    """A sub-expression as code on `cfg`; `aliased` also writes `v` as its field's name."""
    code = rewrite_receiver(source_segment(cond.origin, node), "cfg.")
    return rename_names(code, dict(cond.aliases)) if aliased else code


def _command_line(command: str | None, fragment: str) -> str:
    return " ".join(part for part in (command, fragment) if part)


def example_fix(
    checks: list[Check],
    values: dict[str, list[str]],
    command: str | None = None,
    alternatives: list[Check] | None = None,
    function: FunctionFacts | None = None,
) -> str:
    """Before/after: command lines (started with the target's `command`) when a flag is
    known, else constructor calls or assignments, else calls of the `function` whose
    arguments decide a check; a comment when nothing can be changed. `alternatives` are the
    setting parts of `a or b` checks, tried after the checks."""
    candidates = [c for c in reversed(checks) if not is_precondition(c, checks)]
    for check in [*candidates, *(alternatives or [])]:  # innermost first
        if check.setting is None:
            continue
        if check.setting.surface in OTHER_SURFACES:
            what, value = needs(check.condition, check.setting, check.wanted)
            fix = surface_change(check.setting, what, value, check.offending, command)
            # no value the code names: the setting on its own surface, what must hold beside
            # it (never `cfg.x = ...`, which is not where a user changes it)
            fix = fix or reading_change(check.condition, ((check.setting, None),), command)
            if fix is not None:
                return fix
            continue
        change = command_change(
            check.condition, check.setting, check.carrier, check.wanted, check.offending
        )
        if change is None:
            continue
        context = [
            f for other in checks if not _same_subject(other, check) and (f := _cli_context(other))
        ]
        before, after = (
            _command_line(command, " ".join(filter(None, [*context, side]))) for side in change
        )
        flag = check.flag or primary_flag(check.carrier)
        return (
            f"# before\n{before or f'# (without {flag})'}\n"
            f"# after\n{after or f'# (without {flag})'}"
        )
    for placeholder in (False, True):
        for check in reversed(checks):  # innermost first: the test that singles out this error
            change = _cli_change(check, placeholder)
            if change is None:
                continue
            context = [
                f
                for other in checks
                if not _same_subject(other, check) and (f := _cli_context(other))
            ]
            sides = [
                _command_line(command, " ".join(filter(None, [*context, side]))) for side in change
            ]
            before, after = (side or f"# (without {check.flag})" for side in sides)
            return f"# before\n{before}\n# after\n{after}"
    for flag, suggested in values.items():  # what the message itself tells to pass
        before = _command_line(command, f"{flag} {OTHER_VALUE}")
        after = _command_line(command, f"{flag} {shell_word(suggested[0])}")
        return f"# before\n{before}\n# after\n{after}"
    for check in reversed(checks):
        if is_precondition(check, checks):
            continue
        change = None
        if check.setting is not None and check.setting.cls is not None:
            change = constructor_change(
                check.condition, check.setting, check.wanted, check.offending
            )
        change = change or _python_change(check)
        if change is not None:
            return f"# before\n{change[0]}\n# after\n{change[1]}"
    for check in reversed(checks):  # settings read inside a test: where to change them
        if not is_precondition(check, checks) and check.flag is None:
            fix = reading_change(check.condition, check.reads, command, check.loop)
            if fix is not None:
                return fix
    for check in reversed(checks):  # arguments a caller passes: the call that passes
        if function is None or is_precondition(check, checks):
            continue
        if is_loop_header(check, function):
            continue
        call = call_change(check, function)
        if call is not None:
            return f"# before\n{call[0]}\n# after\n{call[1]}"
    if checks:
        last = checks[-1].condition
        return f"# the error needs: {last.phrase()}\n# fix: make sure {last.phrase(negate=True)}"
    return "# no condition guards this raise; see the linked source for what reaches it"


def _condition_code(checks: list[Check]) -> tuple[str, list[str]]:
    """The guards joined with `and` as Python on `cfg`, and the guards left out because they
    are not valid Python on their own."""
    parts, skipped = [], []
    for check in checks:
        cond = check.condition
        if cond.node is None:
            skipped.append(cond.source)
            continue
        code = cond.code
        if syntax_error(f"({code})") is not None:
            code = ast.unparse(cond.node)
        if isinstance(cond.node, ast.BoolOp | ast.IfExp | ast.Lambda | ast.NamedExpr):
            code = f"({code})"
        parts.append(code)
    unreadable = "a condition that is not valid Python on its own"
    return " and ".join(parts), [s or unreadable for s in skipped]


def _indent_condition(condition: str, width: int) -> str:
    """A condition on one line, or split at its top-level `and`s when it is too long."""
    if len(condition) <= width:
        return condition
    parts = condition.split(" and ")
    # only split where every piece still parses (an `and` inside a string must not split)
    if all(syntax_error(f"({p})") is None for p in parts):
        body = "\n    and ".join(parts)
        return f"(\n    {body}\n)"
    return condition


def _message_literal(site: Site) -> str:
    if site.messageStatus == "literal" and site.errorMessage:
        return py_literal(shown_message(site.errorMessage))
    pieces = fragments(site.messagePattern)
    if any(p.strip() for p in pieces):
        return py_literal("...".join(pieces))
    return py_literal(f"{site.qualname} would reject this configuration")


def _free_variables(function: FunctionFacts, condition: str) -> list[str]:
    try:
        tree = ast.parse(condition, mode="eval")
    except SyntaxError:
        return []
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    params = ["cfg"] if "cfg" in names and "cfg" not in function.variables else []
    return ordered_unique(params + sorted(n for n in names if n in function.variables))


def _guard_name(site: Site, function: FunctionFacts, checks: list[Check]) -> str:
    base = ""
    for check in reversed(checks):  # the innermost check that names a flag or a setting
        if is_precondition(check, checks):
            continue
        if check.flag:
            base = check.flag.lstrip("-")
        elif check.condition.subject is not None:
            names = dotted_parts(check.condition.subject) or []
            names = [dict(function.aliases).get(names[0], names[0]), *names[1:]] if names else []
            base = "_".join(n for n in names[-2:] if n not in RECEIVERS)
        if base:
            break
    if not base:
        base = re.sub(r"^_*(validate|verify|check)_?", "", function.name)
    base = re.sub(r"\W+", "_", base).strip("_").lower() or "config"
    if base[0].isdigit():
        base = "_" + base
    return f"{base}_ok"


# kinds whose raise fires while an object of the owner class is built
BUILD_KINDS = ("pydantic", "post_init", "init")


def _owner_call(site: Site, function: FunctionFacts) -> str:
    if function.owner and site.validatorKind in BUILD_KINDS:
        return f"config = {function.owner}(...)"
    if site.validatorKind == "none":  # outside validators: no configuration is built
        return f"...  # the code that calls {site.qualname}"
    what = article(function.owner) if function.owner else f"what {site.qualname} checks"
    return f"...  # the code that builds or validates {what}"


def validation_code(
    site: Site, function: FunctionFacts, checks: list[Check], fragment: str | None
) -> str:
    condition, skipped = _condition_code(checks)
    if condition and syntax_error(f"({condition})") is None:
        lines = []
        if "cfg." in condition and function.owner:
            lines.append(f"# cfg: the {function.owner} to check")
        lines += _variable_notes(site, function, condition)
        lines += [f"# also required, not checked here: {s}" for s in skipped]
        lines.append(f"if {_indent_condition(condition, 80)}:")
        lines.append(f"    raise SystemExit({_message_literal(site)})")
        code = "\n".join(lines)
        if syntax_error(code) is None:
            return code
    return try_catch(site, function, fragment) or (
        f"{_owner_call(site, function)}\n# no condition of this raise can be checked beforehand"
    )


def _positive(checks: list[Check]) -> str | None:
    """`x` for a lone check `not x`, `a != b` for `a == b`: a type guard reads better
    without a double negation."""
    if len(checks) != 1:
        return None
    cond = checks[0].condition
    node, compare = cond.node, cond.compare
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        code = _as_code(cond, node.operand, aliased=False)
        names = dotted_parts(node.operand)
        if names is not None and not is_bool_name(names[-1]):
            code = f"bool({code})"  # `-> bool` must not hand back the value itself
    elif isinstance(node, ast.Name | ast.Attribute | ast.Call):
        code = f"not {_as_code(cond, node, aliased=False)}"
    elif compare is not None:
        left, op, right = compare
        code = f"{_as_code(cond, left, False)} {op.negation} {_as_code(cond, right, False)}"
    else:
        return None
    return code if syntax_error(f"({code})") is None else None


def _variable_notes(site: Site, function: FunctionFacts, condition: str) -> list[str]:
    """A comment line for each name of the validator the check uses besides `cfg`."""
    aliases = dict(function.aliases)
    notes = []
    for name in _free_variables(function, condition):
        if name == "cfg":
            continue
        if name in aliases:
            notes.append(f"# {name}: the {aliases[name]} value being validated")
        elif name in function.params:
            notes.append(f"# {name}: the argument of {site.qualname}")
        else:
            notes.append(f"# {name}: as computed in {site.qualname}")
    return notes


def type_guard(
    site: Site, function: FunctionFacts, checks: list[Check], fragment: str | None
) -> str:
    condition, _ = _condition_code(checks)
    name = _guard_name(site, function, checks)
    if condition and syntax_error(f"({condition})") is None:
        params = ", ".join(_free_variables(function, condition))
        positive = _positive(checks)
        if positive is not None:
            body = _indent_condition(positive, 72)
        else:
            inner = _indent_condition(condition, 68)
            body = f"not {inner}" if inner.startswith("(\n") else f"not ({inner})"
        test = body.replace("\n", "\n    ")
        code = f"def {name}({params}) -> bool:\n    return {test}"
        if syntax_error(code) is None:
            return code
    test = f"{py_literal(fragment)} not in str(e)" if fragment else "False"
    return (
        f"def {name}(build) -> bool:\n"
        "    try:\n"
        "        build()\n"
        f"    except {_error_class(site)} as e:\n"
        f"        return {test}\n"
        "    return True"
    )


def try_catch(site: Site, function: FunctionFacts, fragment: str | None) -> str | None:
    if fragment is None:
        return None
    rejected = "rejected" if site.validatorKind == "none" else "configuration rejected"
    return (
        "try:\n"
        f"    {_owner_call(site, function)}\n"
        f"except {_error_class(site)} as e:\n"
        f"    if {py_literal(fragment)} in str(e):\n"
        f'        raise SystemExit(f"{rejected}: {{e}}") from e\n'
        "    raise"
    )


def _error_class(site: Site) -> str:
    """The class to catch, as the code names it (`ValueError`, a configured subclass)."""
    name = site.errorClass
    return name if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name) else "Exception"
