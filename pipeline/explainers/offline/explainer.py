"""The offline explainer: deterministic explanations built only from a site's static facts.

It reads the qualname, validator kind, guards, message and the structure (never the
comments) of the function, and says nothing the code does not show."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from extractors import ops
from pipeline.dataset.models import Explanation, Setting, Site
from pipeline.explainers.advice import Advice
from pipeline.explainers.base import (
    Explainer,
    ExplainRequest,
    ExplainResult,
    command_prompt_version,
)
from pipeline.explainers.flags import find_flags, flag_values
from pipeline.explainers.offline.advised import advice_fix, advice_solution, checked_advice
from pipeline.explainers.offline.calls import call_inputs, call_solution
from pipeline.explainers.offline.checks import (
    Check,
    FunctionFacts,
    article,
    check_of,
    flag_rename,
    holes,
    is_loop_header,
    is_precondition,
    is_temporary,
    is_type_test,
    longest_fragment,
    ordered_unique,
    read_function,
    shell_word,
    subject_text,
    through_computed,
    through_loops,
    value_names,
)
from pipeline.explainers.offline.conditions import (
    Condition,
    is_constant_like,
    is_isinstance,
    join_words,
    parse_guards,
    simplify,
    source_segment,
    without_not,
)
from pipeline.explainers.offline.settings import holds_with, primary_flag, reading_solution
from pipeline.explainers.offline.settings import solution as setting_solution
from pipeline.explainers.offline.snippets import (
    BUILD_KINDS,
    call_change,
    example_fix,
    try_catch,
    type_guard,
    validation_code,
)

# Bump whenever the text this module produces changes: it is part of the cache key.
# 3: the init kind, post_init methods, and the earlier checks that passed (priorChecks).
# 4: the settings a site reads: their flags, values that pass, commands, and their docs.
# 5: switches by their action (never given a value, `--no-x`), dotted keys of JSON-config
# flags, no value that keeps the failing test true, the surfaces, the message's advice.
# 6: a check that reads settings inside its test (`len(self.ids) != 1`) names them on their
# surface, with what must hold, and its example fix shows where they are changed.
# 7: a check that the function's own arguments decide (or values it computes from them)
# names the call that passes, as its caller writes it.
# 8: a request field or config.json key with no value the code names is shown on its own
# surface with what must hold (never as `cfg.x = ...`).
# 9: a value the function computes from a parameter that is a setting names that setting.
# 10: a pydantic validator's arguments get no call (pydantic calls it, not a caller).
# 11: a loop's item comes from what the loop walks: the arguments that give it decide a
# check on it (`for name in names`); a constructor's `__post_init__` is called as `Owner(...)`.
# 12: a `getattr(cfg, "x", d)` in a guard reads as `cfg.x`, the setting the join resolves it to.
# 13: a flag whose passing value the code does not name says what must hold of it.
PROMPT_VERSION = "offline-13"
# What the sites outside validators (kind `none`, the `all` scope) are explained with on top
# of it: bumped whenever the text said of them changes.
OUTSIDE_VERSION = "outside-1"

_MAX_SOLUTIONS = 5
_PATH_NOISE = {"src", "python", "lib", "__init__", "__main__"}  # path parts that make no tag


class OfflineExplainer(Explainer):
    """Explains sites without a model: same input, same output, no network.

    `command` is the target's entry point (`vllm serve MODEL`), which example fixes start
    their command lines with; it is part of the prompt version, hence of the cache key."""

    provider = "offline"
    model = "offline"
    reads_whole_function = True

    def __init__(self, command: str | None = None) -> None:
        self.command = command
        self.prompt_version = command_prompt_version(PROMPT_VERSION, command)

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        explanation = explain_site(request.site, request.siblings, self.command)
        return ExplainResult(
            explanation=explanation,
            grounding_warnings=request.grounding.check(explanation, request.site.settings),
        )

    def estimate_tokens(self, request: ExplainRequest) -> tuple[int, int]:
        return (0, 0)

    def prompt_version_for(self, site: Site) -> str:
        if site.validatorKind == "none":
            return f"{self.prompt_version}; {OUTSIDE_VERSION}"
        return self.prompt_version


def explain_site(
    site: Site, siblings: Sequence[Site] = (), command: str | None = None
) -> Explanation:
    """The offline explanation of one site; `siblings` are the other sites of its function,
    `command` the target's entry point for the command lines of its example fix."""
    function = read_function(site)
    message_flags = find_flags(site.errorMessage)
    evidence = [*message_flags, *(f for f in function.flags if f not in message_flags)]
    values = flag_values(site.errorMessage)
    conditions = simplify(
        [without_not(c) for c in parse_guards(site.guards, dict(function.aliases))]
    )
    checks = through_loops(
        [check_of(c, evidence, values, function, site.settings) for c in conditions], function
    )
    checks = through_computed(checks, function, site.settings)
    # a test one of whose `or` parts always holds is no fix; the others are
    fixable = [
        check
        for check in checks
        if not any(
            _kept_by_default(part)
            for part in _or_parts(check, evidence, values, function, site.settings)
        )
    ]
    parts = {
        id(check): _disjuncts(check, evidence, values, function, site.settings)
        or _alternatives(check, evidence, values, function, site.settings)
        for check in fixable
    }
    others = [
        s
        for s in siblings
        if (s.lineNumber, s.errorMessage) != (site.lineNumber, site.errorMessage)
    ]
    advice = checked_advice(site.errorMessage, checks, site.settings)
    internal = next((s.reason for s in site.settings if s.surface == "internal"), None)
    fragment = longest_fragment(site.messagePattern)
    flags = ordered_unique([*message_flags, *(c.flag for c in checks if c.flag is not None)])
    return Explanation(
        documentation=_documentation(site, function, checks, others),
        triggerScenarios=_trigger(site, function, checks),
        commonSituations=_situations(site, checks),
        solutions=_internal_solutions(site, internal)
        if internal
        else _solutions(site, fixable, values, function, parts, advice),
        exampleFix=_internal_fix(internal)
        if internal
        else (
            (
                advice_fix(advice, command, _failing_fragment(checks, advice))
                if _adds_to_checks(advice, checks)
                else None
            )
            or example_fix(
                fixable or checks[-1:],  # none fixable: the comment on the innermost test
                values,
                command,
                [part for check in reversed(fixable) for part in parts[id(check)]],
                function,
            )
        ),
        handlingStrategy="fail-fast" if _outside(site) else "validation",
        validationCode=validation_code(site, function, checks, fragment),
        typeGuard=type_guard(site, function, checks, fragment),
        tryCatchPattern=try_catch(site, function, fragment),
        preventionTips=_prevention(site, checks, flags, others),
        tags=_tags(site, function, flags),
    )


def _outside(site: Site) -> bool:
    """A site outside validators (the `all` scope): not necessarily a configuration error."""
    return site.validatorKind == "none"


def _outside_sentence(site: Site) -> str:
    """What a raise outside the validators may mean, said plainly."""
    said = (
        "This raise is not in a configuration check: a ValueError here may come from a "
        "programming error (a caller passing a value the function does not take), from the "
        "environment (a model's files, an installed package, the hardware) or from the input "
        "of a request, rather than from a wrong setting."
    )
    if site.settings:
        names = join_words(ordered_unique([s.field for s in site.settings]))
        said += f" Its tests read {names}, so a setting can still be the cause."
    return said


def _kind(site: Site, function: FunctionFacts) -> str:
    owner = function.owner
    if _outside(site):
        return f"a method of {owner}" if owner else "a function"
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
        hook = site.qualname.rsplit(".", 1)[-1]
        if owner:
            return f"the {hook} hook that runs when {article(owner)} is created"
        return f"a {hook} hook"
    if site.validatorKind == "init":
        if owner:
            return f"the constructor of the configuration class {owner}"
        return "the constructor of a configuration class"
    if site.validatorKind == "name":
        return "a check method" if owner else "a check function"
    if owner:
        return f"a helper that a validator of {owner} calls"
    return "a helper function that a validator in the same module calls"


def _message_sentence(site: Site) -> str:
    parts = ordered_unique(holes(site))
    listed = join_words(parts)
    if not site.errorMessage:
        return "The error carries no message."
    if site.messageStatus == "template":
        verb = "is" if len(parts) == 1 else "are"
        return f"In the message, {listed} {verb} filled in at run time."
    if site.messageStatus == "partial":
        return (
            f"In the message, {listed} {'is' if len(parts) == 1 else 'are'} filled in at run "
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
    if len(phrases) == 1:  # one phrase, even `either a or b`, is no list
        return phrases[0]
    if len(phrases) <= 2 and not any(" or " in p or " and " in p for p in phrases):
        return " and ".join(phrases)
    return "all of these hold: " + "; ".join(phrases)


def _documentation(
    site: Site, function: FunctionFacts, checks: list[Check], others: list[Site]
) -> str:
    if checks:
        when = "when " + _all_of([c.condition.phrase() for c in checks])
    else:
        when = "whenever execution reaches the raise (no if/else test leads to it)"
    sentences = [f"Raised by {site.qualname}, {_kind(site, function)}, {when}."]
    if _outside(site):
        sentences.append(_outside_sentence(site))
    sentences.append(_prior_sentence(site))
    sentences.append(_message_sentence(site))
    sentences.append(_setting_docs(site, checks))
    if others:
        plural = "s" if len(others) > 1 else ""
        sentences.append(
            f"The same function has {len(others)} other raise{plural} of this kind, so "
            "fixing this one can reveal another."
        )
    return " ".join(s for s in sentences if s)


_MAX_DOCS = 3  # settings whose doc the documentation quotes


def _setting_docs(site: Site, checks: list[Check]) -> str:
    """The doc sentence of each setting involved, quoted: the settings of the checks first."""
    involved = [c.setting for c in checks if c.setting is not None] + list(site.settings)
    quoted: dict[tuple[str | None, str], str] = {}
    for setting in involved:
        key = (setting.cls, setting.field)
        if setting.doc and key not in quoted and len(quoted) < _MAX_DOCS:
            name = f"{setting.cls}.{setting.field}" if setting.cls else setting.field
            flag = primary_flag(setting)
            named = f"`{flag}` ({name})" if flag else name
            quoted[key] = f'The setting {named} is documented as: "{setting.doc}"'
    return " ".join(quoted.values())


def _prior_sentence(site: Site) -> str:
    """What the earlier checks of the function say: that they passed."""
    count = len(site.priorChecks)
    if count == 0:
        return ""
    if count == 1:
        return "The earlier check of this function passed by then."
    return f"The {count} earlier checks of this function passed by then."


def _trigger(site: Site, function: FunctionFacts, checks: list[Check]) -> str:
    if not checks:
        return (
            f"Any input that makes {site.qualname} reach this raise; the code puts no "
            "if/else test in front of it, so the surrounding code decides."
        )
    conditions = _all_of([c.condition.phrase() for c in checks])
    if function.owner and site.validatorKind in BUILD_KINDS:
        text = f"Building or validating {article(function.owner)} in which {conditions}."
    else:
        text = f"Running {site.qualname} while {conditions}."
    # "--x is an instance of dict" says nothing a command line can change, and "--x is set"
    # says nothing when another test of --x follows ("--x is less than 1")
    flagged = [
        c
        for c in checks
        if c.flag is not None
        and not is_type_test(c)
        and not (_is_not_none(c) and any(o.flag == c.flag for o in checks if o is not c))
    ]
    if flagged:
        rename = flag_rename(checks)
        in_flags = join_words([c.condition.phrase(rename=rename) for c in flagged])
        text += f" In command-line terms: {in_flags}."
    return text


def _is_not_none(check: Check) -> bool:
    compare = check.condition.compare
    return (
        compare is not None
        and compare[1] is ops.IS_NOT
        and check.condition.show(compare[2]) == "None"
    )


def _situations(site: Site, checks: list[Check]) -> str:
    rename = flag_rename(checks)
    phrases = [c.condition.phrase(rename=rename) for c in checks]
    if not phrases:
        return (
            f"Only the code around the raise in {site.qualname} (a loop, a try/except, an "
            "earlier call) decides when it fires; read the linked source."
        )
    if not any(c.settable or c.flag is not None for c in checks):
        # arguments and computed values: no setting of a configuration to speak of
        return f"Values reaching {site.qualname} for which {_all_of(phrases)}."
    subjects = {subject_text(c) if c.condition.subject is not None else None for c in checks}
    if len(phrases) == 1 or (len(subjects) == 1 and None not in subjects):
        return (
            f"A configuration in which {_all_of(phrases)}, for example one copied from another "
            "setup."
        )
    return (
        f"Combining settings that do not go together ({'; '.join(phrases)}), for example when "
        "reusing a command line or config file written for another setup."
    )


def _solution(check: Check) -> str | None:
    cond, flag, wanted = check.condition, check.flag, check.wanted
    if cond.node is None:
        return None
    if check.setting is not None:
        said = setting_solution(cond, check.setting, check.carrier, wanted)
        if said is not None:
            return said
    if flag is None and (said := reading_solution(cond, check.reads, check.loop)) is not None:
        return said  # no value the code names: which settings to change, and to what end
    subject = subject_text(check)
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
        if op is ops.IS_NOT and value == "None":
            if flag is not None:
                return f"Leave {flag} unset (the check fails only while {subject} is not None)."
            return f"Leave {subject} as None."
        if op is ops.IS and value == "None":
            if flag is not None:
                return f"Pass {flag} (the check fails while {subject} is None)."
            return f"Set {subject}."
        if flag is not None:
            if wanted is not None and op is not ops.IN:
                because = f", so that {cond.phrase(negate=True)}" if op is ops.NE else ""
                return f"Set {flag} {shell_word(wanted)}{because}."
            if op is ops.EQ:
                return f"Give {flag} a value other than {value}."
        if op is ops.EQ:
            return f"Make {subject} something other than {value}."
        if op is ops.NE and is_constant_like(right):
            return f"Make {subject} {value}."
        if op.boundary is not None:  # a value on the other side of the test passes
            return f"Make {subject} {op.than(holds=False)} {value}."
        return f"Make sure {cond.phrase(negate=True)}."
    return f"Make sure {cond.phrase(negate=True)}."


def _or_parts(
    check: Check,
    evidence: list[str],
    values: dict[str, list[str]],
    function: FunctionFacts,
    settings: Sequence[Setting],
) -> list[Check]:
    """The parts of an `a or b` check whose subject is a setting (type tests left out)."""
    cond, node = check.condition, check.condition.node
    if check.setting is not None or not (
        isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or)
    ):
        return []
    found = []
    for value in node.values:
        bare = (
            value.operand
            if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
            else value
        )
        if is_isinstance(bare):  # a type test says nothing a user types
            continue
        part = without_not(
            Condition(value, source_segment(cond.origin, value), cond.origin, cond.aliases)
        )
        sub = check_of(part, evidence, values, function, settings)
        if sub.setting is not None:
            found.append(sub)
    return found


def _disjuncts(
    check: Check,
    evidence: list[str],
    values: dict[str, list[str]],
    function: FunctionFacts,
    settings: Sequence[Setting],
) -> list[Check]:
    """The parts of an `a or b` check whose subject is a setting: to pass, each must not
    hold, so each is a fix to name (`not isinstance(self.fps, int) or self.fps <= 0`)."""
    found = _or_parts(check, evidence, values, function, settings)
    # a value one part proposes must not make another part of it hold (`x < 1 or x == -1`:
    # not 0)
    return [
        sub
        for sub in found
        if sub.wanted is None
        or not any(
            other is not sub
            and other.setting.expr == sub.setting.expr  # type: ignore[union-attr]
            and holds_with(other.condition, sub.wanted)
            for other in found
        )
    ]


def _kept_by_default(check: Check) -> bool:
    """`value is not None` of a setting whose default is a value: leaving it out keeps that
    default, so the part still holds, and so does the whole `a or b` it is a part of
    (`value is not None or not allow_none`, an early return's test: no fix there)."""
    compare, setting = check.condition.compare, check.setting
    if compare is None or compare[1] is not ops.IS_NOT or setting is None:
        return False
    return check.condition.show(compare[2]) == "None" and setting.default not in (None, "None")


def _alternatives(
    check: Check,
    evidence: list[str],
    values: dict[str, list[str]],
    function: FunctionFacts,
    settings: Sequence[Setting],
) -> list[Check]:
    """The check once per setting its subject may be, when its callers pass it different
    ones (`_non_negative(self.guidance_scale)`, `_non_negative(self.guidance_rescale)`):
    each is a fix to name."""
    if check.setting is None:
        return []
    expr = check.setting.expr
    same = [s for s in settings if s.expr == expr and s.surface != "internal"]
    if len(same) < 2:
        return []
    rest = [s for s in settings if s.expr != expr]
    return [check_of(check.condition, evidence, values, function, [s, *rest]) for s in same]


def _internal_solutions(site: Site, reason: str) -> list[str]:
    """A check no setting reaches: no configuration error, so what to report."""
    return [
        f"This is not a configuration error: {reason}.",
        f"Report it to the project with the full traceback, the command or code that led to "
        f"it and the versions in use; the check is in {site.qualname} ({site.filePath}, line "
        f"{site.lineNumber}).",
    ]


def _internal_fix(reason: str) -> str:
    return (
        f"# not a configuration error: {reason}\n"
        "# report it with the traceback and the inputs that led to it"
    )


def _adds_to_checks(advice: list[Advice], checks: list[Check]) -> bool:
    """The advice names a variable, or a flag that no check's fix would type."""
    tested = {c.flag for c in checks if c.wanted is not None or c.on_off}
    return any(a.kind == "env" or a.name not in tested for a in advice)


def _failing_fragment(checks: list[Check], advice: list[Advice]) -> str:
    """The command-line fragment that fails, for a flag the advice names: `--x no_buffer`."""
    named = {a.name for a in advice if a.kind == "flag"}
    for check in reversed(checks):
        if check.flag in named and check.offending is not None:
            return f"{check.flag} {shell_word(check.offending)}"
    return ""


def _solutions(
    site: Site,
    checks: list[Check],
    values: dict[str, list[str]],
    function: FunctionFacts,
    parts: dict[int, list[Check]] | None = None,
    advice: Sequence[Advice] = (),
) -> list[str]:
    solutions: list[str] = []
    # a test no setting reaches (`not current_platform.is_cuda()`) comes after those a user
    # can change (`--enable-x` in front of it: turning it off is the fix at hand)
    unreached: list[str] = []
    for check in reversed(checks):  # innermost first: the test that singles out this error
        if is_precondition(check, checks) or is_loop_header(check, function):
            continue
        said = [s for part in (parts or {}).get(id(check), []) if (s := _solution(part))]
        call = None if said else call_change(check, function)
        if call is not None:  # arguments (or what is computed from them) decide it
            inputs = call_inputs(check, function)
            solutions.append(call_solution(check, function, inputs or (), call[2]))
            continue
        if is_temporary(check, function):
            continue  # a value the function computes itself from nothing a caller passes
        if said:
            solutions += said
        elif (solution := _solution(check)) is not None:
            (unreached if _reads_only_globals(check, function) else solutions).append(solution)
    solutions += unreached
    mapped = {c.flag for c in checks} | {a.name for a in advice}
    for flag, wanted in values.items():
        if flag not in mapped:  # a value the message asks for, for a flag no guard tests
            solutions += [f"Set {flag} {shell_word(v)}, as the message suggests." for v in wanted]
    solutions = _advice_first(solutions, advice)
    # flags the message names that no solution types: the message's own pointer to them
    unsaid = [
        f
        for f in find_flags(site.errorMessage)
        if not any(
            re.search(rf"--(no-)?{re.escape(f.removeprefix('--no-').lstrip('-'))}(?![\w-])", s)
            for s in solutions
        )
    ]
    found = bool(solutions)
    if unsaid:
        solutions.append(f"Review the values of {join_words(unsaid)}, which the message names.")
    if not found:
        solutions.append(
            f"Read the code around the raise in {site.qualname} to see which input leads to it."
        )
    if _outside(site):  # the cause may lie with the caller, not with a setting
        solutions = solutions[: _MAX_SOLUTIONS - 1]
        solutions.append(
            f"Follow the traceback to the call of {site.qualname}: check the value it was "
            "given (a model's files, a request's fields, an installed package); when none of "
            "your inputs explains it, it may be a bug of the calling code, worth reporting."
        )
    return ordered_unique(solutions)[:_MAX_SOLUTIONS]


def _reads_only_globals(check: Check, function: FunctionFacts) -> bool:
    """A test of module state alone (`not current_platform.is_cuda()`): no setting, no
    variable of the function."""
    if check.settable or check.flag or check.setting or check.reads:
        return False
    return not (value_names(check.condition.node) & function.variables)


def _advice_first(solutions: list[str], advice: Sequence[Advice]) -> list[str]:
    """The message's own advice first: the solution that already says it (with its notes),
    else the advice in words."""
    first: list[str] = []
    for item in advice:
        typed = item.name if item.value is None else f"{item.name} {shell_word(item.value)}"
        if item.kind == "env":  # the variable's own solution says it with its default
            typed = f"export {item.name}={shell_word(item.value or '1')}"
        said_it = re.compile(rf"(?<![\w-]){re.escape(typed)}(?![\w-])")
        said = next((s for s in solutions if said_it.search(s)), None)
        if said is not None:
            first.append(said)
        else:
            first.append(advice_solution(item))
    return ordered_unique([*first, *solutions])


def _prevention(site: Site, checks: list[Check], flags: list[str], others: list[Site]) -> list[str]:
    tips: list[str] = []
    wanted = [c for c in checks if not is_precondition(c, checks)]
    # only a setting can be checked before the configuration is built, not a value the
    # validator computes
    if wanted and (wanted[-1].settable or wanted[-1].flag is not None):
        last, outer = wanted[-1], wanted[:-1]
        before = f"calling {site.qualname}" if _outside(site) else "building the configuration"
        tip = f"Before {before}, check that {last.condition.phrase(negate=True)}"
        if outer:
            tip += " whenever " + _all_of([c.condition.phrase() for c in outer])
        tips.append(tip + ".")
    # `--x` and `--no-x` are one setting
    flags = [f for f in flags if not (f.startswith("--no-") and "--" + f[5:] in flags)]
    if len(flags) >= 2:
        tips.append(
            f"Keep {join_words(flags)} in one launch script or config file so they change together."
        )
    if others and not _outside(site):  # a function outside validators checks no configuration
        tips.append(
            f"{site.qualname} has {len(others)} other check{'s' if len(others) > 1 else ''}; "
            "validate the whole configuration once before a long run rather than fixing one "
            "error at a time."
        )
    return tips


def _tags(site: Site, function: FunctionFacts, flags: list[str]) -> list[str]:
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
    return ordered_unique(tags)
