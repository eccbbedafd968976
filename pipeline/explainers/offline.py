"""The offline explainer: deterministic explanations built only from a site's static facts.

It reads the qualname, validator kind, guards, message and the structure (never the
comments) of the function, and says nothing the code does not show."""

from __future__ import annotations

import ast
import functools
import json
import re
import shlex
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.explainers.base import ExplainRequest, ExplainResult
from pipeline.explainers.conditions import (
    RECEIVERS,
    Condition,
    chain,
    is_bool_name,
    is_constant_like,
    join_words,
    parse_guards,
    rename_names,
    rewrite_receiver,
    simplify,
    source_segment,
)
from pipeline.flags import find_flags, flag_for, flag_values, string_literals
from pipeline.grounding import syntax_error
from pipeline.models import Explanation, Site

# Bump whenever the text this module produces changes: it is part of the cache key.
PROMPT_VERSION = "offline-1"

_HOLE = "(.*?)"
_SHELL_SAFE = re.compile(r"[A-Za-z0-9_.:/+=-]+")
_MAX_FRAGMENT = 60
_OTHER = "<other value>"  # a value the code does not name
_NEGATED_OP: dict[type[ast.cmpop], str] = {
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Lt: ">=",
    ast.LtE: ">",
    ast.Gt: "<=",
    ast.GtE: "<",
    ast.In: "not in",
    ast.NotIn: "in",
    ast.Is: "is not",
    ast.IsNot: "is",
}
# what a value must be to pass a check that fails on `x > n`, `x >= n`, ...
_ORDER_FIX: dict[type[ast.cmpop], str] = {
    ast.Gt: "at most",
    ast.GtE: "less than",
    ast.Lt: "at least",
    ast.LtE: "greater than",
}
_MAX_SOLUTIONS = 5
_PATH_NOISE = {"src", "python", "lib", "__init__", "__main__"}


class OfflineExplainer:
    """Explains sites without a model: same input, same output, no network."""

    provider = "offline"
    model = "offline"
    prompt_version = PROMPT_VERSION

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        explanation = explain_site(request.site, request.siblings)
        return ExplainResult(
            explanation=explanation,
            grounding_warnings=request.grounding.check(explanation),
        )

    def estimate_tokens(self, request: ExplainRequest) -> tuple[int, int]:
        return (0, 0)


@dataclass(frozen=True)
class _Function:
    """What the validator's own code tells (never its comments)."""

    owner: str | None  # class name
    name: str
    decorators: tuple[tuple[str, tuple[str, ...]], ...]  # (name, string arguments)
    variables: frozenset[str]  # parameters and locals
    params: frozenset[str]
    flags: tuple[str, ...]  # `--flags` in its string literals
    aliases: tuple[tuple[str, str], ...] = ()  # a field validator's value parameter -> field


@dataclass(frozen=True)
class _Check:
    """One condition with the command-line flag that sets its subject, when known."""

    condition: Condition
    flag: str | None
    wanted: str | None  # a flag value under which the condition no longer holds
    offending: str | None  # a flag value under which it holds
    # its subject is a field of the config being validated (`self.x`, a field validator's
    # value), not a local value or another object handed in
    settable: bool = False
    on_off: bool = False  # its flag is a switch (a boolean name, or `--no-x` exists)


def explain_site(site: Site, siblings: Sequence[Site] = ()) -> Explanation:
    """The offline explanation of one site; `siblings` are the other sites of its function."""
    function = _read_function(site)
    message_flags = find_flags(site.errorMessage)
    evidence = [*message_flags, *(f for f in function.flags if f not in message_flags)]
    values = flag_values(site.errorMessage)
    conditions = simplify(parse_guards(site.guards, dict(function.aliases)))
    checks = [_check(c, evidence, values, function) for c in conditions]
    others = [
        s
        for s in siblings
        if (s.lineNumber, s.errorMessage) != (site.lineNumber, site.errorMessage)
    ]
    fragment = _longest_fragment(site.messagePattern)
    flags = _ordered_unique([*message_flags, *(c.flag for c in checks if c.flag is not None)])
    return Explanation(
        documentation=_documentation(site, function, checks, others),
        triggerScenarios=_trigger(site, function, checks),
        commonSituations=_situations(site, checks),
        solutions=_solutions(site, checks, values),
        exampleFix=_example_fix(checks, values),
        handlingStrategy="validation",
        validationCode=_validation_code(site, function, checks, fragment),
        typeGuard=_type_guard(site, function, checks, fragment),
        tryCatchPattern=_try_catch(site, function, fragment),
        preventionTips=_prevention(site, checks, flags, others),
        tags=_tags(site, function, flags),
    )


# ---- facts -------------------------------------------------------------------------------


def _read_function(site: Site) -> _Function:
    return _read_source(site.qualname, site.functionSource)


@functools.lru_cache(maxsize=64)  # the sites of one function share it; parse it once
def _read_source(qualname: str, source: str) -> _Function:
    parts = qualname.split(".")
    owner = parts[-2] if len(parts) >= 2 and parts[-2] != "<locals>" else None
    decorators: list[tuple[str, tuple[str, ...]]] = []
    variables: set[str] = set()
    params: set[str] = set()
    aliases: dict[str, str] = {}
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        tree = None
    # string constants from the tree, or from tokens when it does not parse: never comments
    if tree is not None:
        strings = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
    else:
        strings = string_literals(source)
    flags = tuple(_ordered_unique(f for text in strings for f in find_flags(text)))
    defs = [
        n
        for n in (tree.body if tree else [])
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    if defs:
        func = defs[0]
        for decorator in func.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            names = chain(target)
            if names is None:
                continue
            args = decorator.args if isinstance(decorator, ast.Call) else []
            strings = tuple(
                a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            )
            decorators.append((names[-1], strings))
        every = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
        every += [a for a in (func.args.vararg, func.args.kwarg) if a is not None]
        params = {a.arg for a in every}
        aliases = _value_alias(decorators, [a.arg for a in func.args.args])
        stored = {
            n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        variables = params | stored
    return _Function(
        owner=owner,
        name=parts[-1],
        decorators=tuple(decorators),
        variables=frozenset(variables - set(RECEIVERS)),
        params=frozenset(params - set(RECEIVERS)),
        flags=flags,
        aliases=tuple(aliases.items()),
    )


def _value_alias(
    decorators: list[tuple[str, tuple[str, ...]]], params: list[str]
) -> dict[str, str]:
    """A single-field validator's value parameter reads as the field (`v` -> `targets`)."""
    params = params[1:] if params[:1] in (["cls"], ["self"]) else params
    for name, fields in decorators:
        if name in ("field_validator", "validator") and len(fields) == 1 and params:
            if params[0] != fields[0]:
                return {params[0]: fields[0]}
    return {}


def _check(
    condition: Condition, evidence: list[str], values: dict[str, list[str]], function: _Function
) -> _Check:
    flag = _flag_of(condition, evidence, function.owner, dict(function.aliases))
    suggested = values.get(flag, []) if flag else []
    wanted, offending = _flag_values(condition, suggested) if flag else (None, None)
    subject = condition.subject
    root = (chain(subject) or [""])[0] if subject is not None else ""
    settable = root in RECEIVERS or root in dict(function.aliases)
    names = chain(subject) if subject is not None else None
    on_off = bool(names) and is_bool_name(names[-1])  # type: ignore[index]
    if flag is not None and f"--no-{flag[2:]}" in evidence:
        on_off = True
    return _Check(condition, flag, wanted, offending, settable=settable, on_off=on_off)


def _flag_of(
    condition: Condition, evidence: list[str], owner: str | None, aliases: dict[str, str]
) -> str | None:
    """The flag whose snake_case name is the condition's subject (`mamba_config.backend` ->
    `--mamba-backend`; `self.backend` of a MambaConfig -> `--mamba-backend` too), if that
    flag occurs in the message or the function's strings."""
    subject = condition.subject
    names = chain(subject) if subject is not None else None
    if not names:
        return None
    names = [aliases.get(names[0], names[0]), *names[1:]]
    on_self = names[0] in RECEIVERS
    if on_self:
        names = names[1:]
    if not names:
        return None
    candidates = [names[-1]]
    if on_self and len(names) == 1 and owner:
        stem = re.sub(r"_?config$", "", _snake(owner))
        candidates += [f"{stem}_{names[-1]}"] if stem else []
    if len(names) >= 2:
        stem = re.sub(r"_?config$", "", names[-2])
        candidates += [f"{stem}_{names[-1]}"] if stem else []
        candidates.append(f"{names[-2]}_{names[-1]}")
    for name in candidates:
        if flag_for(name) in evidence:
            return flag_for(name)
    return None


def _snake(name: str) -> str:
    """`KVTransferConfig` -> `kv_transfer_config`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _constant(node: ast.expr) -> object:
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool | type(None)):
        return node.value
    return None


def _constants(node: ast.expr) -> list[object] | None:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = [_constant(e) for e in node.elts]
        if items and all(i is not None for i in items):
            return items
    return None


def _flag_values(condition: Condition, suggested: list[str]) -> tuple[str | None, str | None]:
    """(a value that makes the condition false, a value that makes it true), as the flag
    would be written; from the condition's constants and the values the message names."""
    switch = condition.switch
    if switch is not None:
        return None, None
    compare = condition.compare
    if compare is None:
        return None, None
    _, op, right = compare
    const = _constant(right)
    member = (chain(right) or [""])[-1].lower()

    def matches(value: str) -> bool:
        return value == str(const) or (bool(member) and value.lower() == member)

    if op is ast.NotEq:
        wanted = str(const) if const is not None else next(filter(matches, suggested), None)
        return wanted, None
    if op is ast.Eq:
        wanted = next((s for s in suggested if not matches(s)), None)
        return wanted, (str(const) if const is not None else None)
    if isinstance(const, int):
        bounds = {
            ast.Gt: (const, const + 1),
            ast.GtE: (const - 1, const),
            ast.Lt: (const, const - 1),
            ast.LtE: (const + 1, const),
        }
        if op in bounds:
            wanted_int, offending_int = bounds[op]
            return str(wanted_int), str(offending_int)
    items = _constants(right)
    if items is not None:
        texts = [str(i) for i in items]
        if op is ast.NotIn:
            return next((s for s in suggested if s in texts), texts[0]), None
        if op is ast.In:
            return next((s for s in suggested if s not in texts), None), texts[0]
    return None, None


def _ordered_unique(items) -> list:
    return list(dict.fromkeys(items))


def _fragments(pattern: str) -> list[str]:
    """The literal pieces of a message, from its pattern (holes are `(.*?)`)."""
    return [re.sub(r"\\(.)", r"\1", piece, flags=re.DOTALL) for piece in pattern.split(_HOLE)]


def _holes(site: Site) -> list[str]:
    """The `{expr}` parts of the message, in order."""
    pieces = _fragments(site.messagePattern)
    regex = "(.*?)".join(re.escape(p) for p in pieces)
    match = re.fullmatch(regex, site.errorMessage, flags=re.DOTALL)
    return [h for h in match.groups() if h] if match else []


def _longest_fragment(pattern: str) -> str | None:
    """The longest literal piece of the message (cut at a word if long), to match on."""
    pieces = [p.lstrip(" \t\n:;,.)]}>`'\"").rstrip(" \t\n([{<`'\"") for p in _fragments(pattern)]
    pieces = sorted(pieces, key=len, reverse=True)
    piece = pieces[0] if pieces else ""
    if not piece:
        return None
    if len(piece) > _MAX_FRAGMENT:
        cut = piece[:_MAX_FRAGMENT]
        piece = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return piece.splitlines()[0] if "\n" in piece else piece


def _py(text: str) -> str:
    """A double-quoted Python string literal (JSON's escapes are Python's)."""
    return json.dumps(text, ensure_ascii=False)


def _shell(value: str) -> str:
    if _SHELL_SAFE.fullmatch(value) or value == _OTHER:
        return value
    return shlex.quote(value)


def _subject_text(check: _Check) -> str:
    subject = check.condition.subject
    return check.condition.show(subject) if subject is not None else check.condition.text


def _flag_rename(checks: list[_Check]) -> dict[str, str]:
    rename: dict[str, str] = {}
    for check in checks:
        if check.flag is not None:
            rename[_subject_text(check)] = check.flag
            compare = check.condition.compare
            if compare is not None and check.wanted is not None and compare[1] is ast.NotEq:
                rename[check.condition.show(compare[2])] = _shell(check.wanted)
            elif compare is not None and isinstance(_constant(compare[2]), str | int):
                rename[check.condition.show(compare[2])] = _shell(str(_constant(compare[2])))
    return rename


# ---- prose -------------------------------------------------------------------------------


def _kind(site: Site, function: _Function) -> str:
    owner = function.owner
    if site.validatorKind == "pydantic":
        for name, fields in function.decorators:
            of = f" of {join_words(list(fields))}" if fields else ""
            if name == "field_validator":
                return f"the pydantic field validator{of}"
            if name == "model_validator":
                return "a pydantic model validator"
            if name == "root_validator":
                return "a pydantic root validator"
            if name == "validator":
                return f"a pydantic validator{of}"
        return "a pydantic validator"
    if site.validatorKind == "post_init":
        if owner:
            return f"the __post_init__ hook that runs when {_a(owner)} is created"
        return "a __post_init__ hook"
    if site.validatorKind == "name":
        return "a check method" if owner else "a check function"
    if owner:
        return f"a helper that a validator of {owner} calls"
    return "a helper function that a validator in the same module calls"


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _message_sentence(site: Site) -> str:
    holes = _ordered_unique(_holes(site))
    listed = join_words(holes)
    if not site.errorMessage:
        return "The error carries no message."
    if site.messageStatus == "template":
        verb = "is" if len(holes) == 1 else "are"
        return f"In the message, {listed} {verb} filled in at run time."
    if site.messageStatus == "partial":
        return (
            f"In the message, {listed} {'is' if len(holes) == 1 else 'are'} filled in at run "
            "time; the code does not show all of that text, so the real message can differ "
            "there."
        )
    if site.messageStatus == "unresolved":
        return (
            f"The message comes from an expression evaluated at run time ({site.errorMessage}), "
            "so its exact text is not known from the code."
        )
    return ""


def _all_of(phrases: list[str]) -> str:
    """`a and b`, or `all of these hold: a; b; c` when a list of simple phrases would blur."""
    if len(phrases) <= 2 and not any(" or " in p or " and " in p for p in phrases):
        return " and ".join(phrases)
    return "all of these hold: " + "; ".join(phrases)


def _documentation(
    site: Site, function: _Function, checks: list[_Check], others: list[Site]
) -> str:
    if checks:
        when = "when " + _all_of([c.condition.phrase() for c in checks])
    else:
        when = "whenever execution reaches the raise (no if/else test leads to it)"
    sentences = [f"Raised by {site.qualname}, {_kind(site, function)}, {when}."]
    sentences.append(_message_sentence(site))
    if others:
        plural = "s" if len(others) > 1 else ""
        sentences.append(
            f"The same function has {len(others)} other raise{plural} of this kind, so "
            "fixing this one can reveal another."
        )
    return " ".join(s for s in sentences if s)


def _trigger(site: Site, function: _Function, checks: list[_Check]) -> str:
    if not checks:
        return (
            f"Any input that makes {site.qualname} reach this raise; the code puts no "
            "if/else test in front of it, so the surrounding code decides."
        )
    conditions = _all_of([c.condition.phrase() for c in checks])
    if function.owner and site.validatorKind in ("pydantic", "post_init"):
        text = f"Building or validating {_a(function.owner)} in which {conditions}."
    else:
        text = f"Running {site.qualname} while {conditions}."
    flagged = [c for c in checks if c.flag is not None]
    if flagged:
        rename = _flag_rename(checks)
        in_flags = join_words([c.condition.phrase(rename=rename) for c in flagged])
        text += f" In command-line terms: {in_flags}."
    return text


def _situations(site: Site, checks: list[_Check]) -> str:
    rename = _flag_rename(checks)
    phrases = [c.condition.phrase(rename=rename) for c in checks]
    if not phrases:
        return (
            f"Only the code around the raise in {site.qualname} (a loop, a try/except, an "
            "earlier call) decides when it fires; read the linked source."
        )
    subjects = {_subject_text(c) if c.condition.subject is not None else None for c in checks}
    if len(phrases) == 1 or (len(subjects) == 1 and None not in subjects):
        return (
            f"A configuration in which {_all_of(phrases)}, for example one copied from another "
            "setup."
        )
    return (
        f"Combining settings that do not go together ({'; '.join(phrases)}), for example when "
        "reusing a command line or config file written for another setup."
    )


def _solution(check: _Check) -> str | None:
    cond, flag, wanted = check.condition, check.flag, check.wanted
    if cond.node is None:
        return None
    subject = _subject_text(check)
    switch, compare = cond.switch, cond.compare
    if not check.settable and flag is None:
        return f"Make sure {cond.phrase(negate=True)}."
    if switch is not None:
        boolish = check.on_off
        holds = cond.phrase()
        if flag is not None:
            if switch[1]:
                return f"Leave out {flag} (the check fails only while {holds})."
            given = flag if boolish else f"{flag} with a value"
            return f"Pass {given} (the check fails while {holds})."
        if switch[1]:
            return f"Set {subject} to false." if boolish else f"Leave {subject} unset."
        return f"Set {subject} to true." if boolish else f"Set {subject}."
    if compare is not None and cond.subject is not None:
        _, op, right = compare
        value = cond.show(right)
        if op is ast.IsNot and value == "None":
            if flag is not None:
                return f"Leave {flag} unset (the check fails only while {subject} is not None)."
            return f"Leave {subject} as None."
        if op is ast.Is and value == "None":
            if flag is not None:
                return f"Pass {flag} (the check fails while {subject} is None)."
            return f"Set {subject}."
        if flag is not None:
            if wanted is not None and op is not ast.In:
                because = f", so that {cond.phrase(negate=True)}" if op is ast.NotEq else ""
                return f"Set {flag} {_shell(wanted)}{because}."
            if op is ast.Eq:
                return f"Give {flag} a value other than {value}."
        if op is ast.Eq:
            return f"Make {subject} something other than {value}."
        if op is ast.NotEq and is_constant_like(right):
            return f"Make {subject} {value}."
        if op in _ORDER_FIX:
            return f"Make {subject} {_ORDER_FIX[op]} {value}."
        return f"Make sure {cond.phrase(negate=True)}."
    return f"Make sure {cond.phrase(negate=True)}."


def _is_precondition(check: _Check, checks: list[_Check]) -> bool:
    """`x is not None` in front of a test of `x.attr`: only there to make that test safe."""
    compare = check.condition.compare
    if compare is None or compare[1] is not ast.IsNot:
        return False
    if check.condition.show(compare[2]) != "None":
        return False
    prefix = _subject_text(check) + "."
    return any(prefix in other.condition.text for other in checks if other is not check)


def _solutions(site: Site, checks: list[_Check], values: dict[str, list[str]]) -> list[str]:
    solutions: list[str] = []
    for check in reversed(checks):  # innermost first: the test that singles out this error
        if _is_precondition(check, checks):
            continue
        if (solution := _solution(check)) is not None:
            solutions.append(solution)
    mapped = {c.flag for c in checks}
    for flag, wanted in values.items():
        if flag not in mapped:  # a value the message asks for, for a flag no guard tests
            solutions += [f"Set {flag} {_shell(v)}, as the message suggests." for v in wanted]
    if not solutions:
        flags = find_flags(site.errorMessage)
        if flags:
            solutions.append(f"Review the values of {join_words(flags)}, which the message names.")
        solutions.append(
            f"Read the code around the raise in {site.qualname} to see which input leads to it."
        )
    return _ordered_unique(solutions)[:_MAX_SOLUTIONS]


def _prevention(
    site: Site, checks: list[_Check], flags: list[str], others: list[Site]
) -> list[str]:
    tips: list[str] = []
    wanted = [c for c in checks if not _is_precondition(c, checks)]
    # only a setting can be checked before the configuration is built, not a value the
    # validator computes
    if wanted and (wanted[-1].settable or wanted[-1].flag is not None):
        last, outer = wanted[-1], wanted[:-1]
        tip = f"Before building the configuration, check that {last.condition.phrase(negate=True)}"
        if outer:
            tip += " whenever " + _all_of([c.condition.phrase() for c in outer])
        tips.append(tip + ".")
    # `--x` and `--no-x` are one setting
    flags = [f for f in flags if not (f.startswith("--no-") and "--" + f[5:] in flags)]
    if len(flags) >= 2:
        tips.append(
            f"Keep {join_words(flags)} in one launch script or config file so they change together."
        )
    if others:
        tips.append(
            f"{site.qualname} has {len(others)} other check{'s' if len(others) > 1 else ''}; "
            "validate the whole configuration once before a long run rather than fixing one "
            "error at a time."
        )
    return tips


def _tags(site: Site, function: _Function, flags: list[str]) -> list[str]:
    words: list[str] = []
    for part in site.filePath.split("/"):
        stem = part.rsplit(".", 1)[0] if part.endswith(".py") else part
        if stem and stem not in _PATH_NOISE:
            words.append(stem)
    path_words = [w.lower() for w in words]
    if function.owner:
        class_words = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|\d+", function.owner)
        # `multi` and `modal` say nothing that the path's `multimodal` does not
        words += [w for w in class_words if not any(w.lower() in p for p in path_words)]
    words += [f.lstrip("-") for f in flags]
    tags = []
    for word in words:
        tag = re.sub(r"[^a-z0-9]+", "-", word.lower()).strip("-")
        if tag:
            tags.append(tag)
    return _ordered_unique(tags)


# ---- examples and code -------------------------------------------------------------------


def _cli_change(check: _Check, placeholder: bool) -> tuple[str, str] | None:
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
            return f"{flag} {_shell(check.offending)}", f"{flag} {_OTHER}"
        return None
    offending = check.offending if check.offending is not None else _OTHER
    return f"{flag} {_shell(offending)}", f"{flag} {_shell(check.wanted)}"


def _cli_context(check: _Check) -> str | None:
    """A command-line fragment that keeps an outer check true in both before and after."""
    if check.flag is None:
        return None
    switch = check.condition.switch
    if switch is not None and switch[1]:
        return check.flag if check.on_off else f"{check.flag} <value>"
    compare = check.condition.compare
    if compare is not None and compare[1] is ast.Eq and check.offending is not None:
        return f"{check.flag} {_shell(check.offending)}"
    return None


def _python_change(check: _Check) -> tuple[str, str] | None:
    """(before, after) assignments in Python for a check with no known flag."""
    cond = check.condition
    if cond.subject is None or not check.settable:
        return None
    switch, compare = cond.switch, cond.compare
    if switch is not None:
        target = _as_code(cond, switch[0])
        boolish = is_bool_name((chain(switch[0]) or [""])[-1])
        if boolish:
            return f"{target} = {switch[1]}", f"{target} = {not switch[1]}"
        if switch[1]:
            return f"{target} = ...  # a non-empty value", f"{target} = None"
        return f"{target} = None", f"{target} = ...  # a non-empty value"
    if compare is None:
        return None
    left, op, right = compare
    target, value = _as_code(cond, left), _as_code(cond, right)
    if op is ast.Eq:
        return f"{target} = {value}", f"{target} = ...  # anything but {value}"
    if op is ast.NotEq:
        return f"{target} = ...  # anything but {value}", f"{target} = {value}"
    if op is ast.IsNot and value == "None":
        return f"{target} = ...  # a value", f"{target} = None"
    if op is ast.Is and value == "None":
        return f"{target} = None", f"{target} = ...  # a value"
    if check.wanted is None and isinstance(_constant(right), int):
        wanted, offending = _flag_values(cond, [])
        if wanted is not None and offending is not None:
            return f"{target} = {offending}", f"{target} = {wanted}"
    return None


def _as_code(cond: Condition, node: ast.expr, aliased: bool = True) -> str:
    """A sub-expression as code on `cfg`; `aliased` also writes `v` as its field's name."""
    code = rewrite_receiver(source_segment(cond.origin, node), "cfg.")
    return rename_names(code, dict(cond.aliases)) if aliased else code


def _example_fix(checks: list[_Check], values: dict[str, list[str]]) -> str:
    for placeholder in (False, True):
        for check in reversed(checks):  # innermost first: the test that singles out this error
            change = _cli_change(check, placeholder)
            if change is None:
                continue
            context = [f for other in checks if other is not check and (f := _cli_context(other))]
            sides = [" ".join(filter(None, [*context, side])) for side in change]
            before, after = (side or f"# (without {check.flag})" for side in sides)
            return f"# before\n{before}\n# after\n{after}"
    for flag, suggested in values.items():  # what the message itself tells to pass
        return f"# before\n{flag} {_OTHER}\n# after\n{flag} {_shell(suggested[0])}"
    for check in reversed(checks):
        if _is_precondition(check, checks):
            continue
        change = _python_change(check)
        if change is not None:
            return f"# before\n{change[0]}\n# after\n{change[1]}"
    if checks:
        last = checks[-1].condition
        return f"# the error needs: {last.phrase()}\n# fix: make sure {last.phrase(negate=True)}"
    return "# no condition guards this raise; see the linked source for what reaches it"


def _condition_code(checks: list[_Check]) -> tuple[str, list[str]]:
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
        return _py(site.errorMessage)
    pieces = _fragments(site.messagePattern)
    if any(p.strip() for p in pieces):
        return _py("...".join(pieces))
    return _py(f"{site.qualname} would reject this configuration")


def _free_variables(function: _Function, condition: str) -> list[str]:
    try:
        tree = ast.parse(condition, mode="eval")
    except SyntaxError:
        return []
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    params = ["cfg"] if "cfg" in names and "cfg" not in function.variables else []
    return _ordered_unique(params + sorted(n for n in names if n in function.variables))


def _guard_name(site: Site, function: _Function, checks: list[_Check]) -> str:
    base = ""
    for check in reversed(checks):  # the innermost check that names a flag or a setting
        if _is_precondition(check, checks):
            continue
        if check.flag:
            base = check.flag.lstrip("-")
        elif check.condition.subject is not None:
            names = chain(check.condition.subject) or []
            base = "_".join(n for n in names[-2:] if n not in RECEIVERS)
        if base:
            break
    if not base:
        base = re.sub(r"^_*(validate|verify|check)_?", "", function.name)
    base = re.sub(r"\W+", "_", base).strip("_").lower() or "config"
    if base[0].isdigit():
        base = "_" + base
    return f"{base}_ok"


def _owner_call(site: Site, function: _Function) -> str:
    if function.owner and site.validatorKind in ("pydantic", "post_init"):
        return f"config = {function.owner}(...)"
    what = _a(function.owner) if function.owner else f"what {site.qualname} checks"
    return f"...  # the code that builds or validates {what}"


def _validation_code(
    site: Site, function: _Function, checks: list[_Check], fragment: str | None
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
    return _try_catch(site, function, fragment) or (
        f"{_owner_call(site, function)}\n# no condition of this raise can be checked beforehand"
    )


def _positive(checks: list[_Check]) -> str | None:
    """`x` for a lone check `not x`, `a != b` for `a == b`: a type guard reads better
    without a double negation."""
    if len(checks) != 1:
        return None
    cond = checks[0].condition
    node, compare = cond.node, cond.compare
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        code = _as_code(cond, node.operand, aliased=False)
    elif isinstance(node, ast.Name | ast.Attribute | ast.Call):
        code = f"not {_as_code(cond, node, aliased=False)}"
    elif compare is not None:
        left, op, right = compare
        code = f"{_as_code(cond, left, False)} {_NEGATED_OP[op]} {_as_code(cond, right, False)}"
    else:
        return None
    return code if syntax_error(f"({code})") is None else None


def _variable_notes(site: Site, function: _Function, condition: str) -> list[str]:
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


def _type_guard(site: Site, function: _Function, checks: list[_Check], fragment: str | None) -> str:
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
    test = f"{_py(fragment)} not in str(e)" if fragment else "False"
    return (
        f"def {name}(build) -> bool:\n"
        "    try:\n"
        "        build()\n"
        "    except ValueError as e:\n"
        f"        return {test}\n"
        "    return True"
    )


def _try_catch(site: Site, function: _Function, fragment: str | None) -> str | None:
    if fragment is None:
        return None
    return (
        "try:\n"
        f"    {_owner_call(site, function)}\n"
        "except ValueError as e:\n"
        f"    if {_py(fragment)} in str(e):\n"
        '        raise SystemExit(f"configuration rejected: {e}") from e\n'
        "    raise"
    )
