"""The message's own advice (pipeline/explainers/advice.py), checked against the code before
it is passed on: a flag's value must be one its setting accepts and must not keep a guard
true (the value the failing test names is never advice), a switch is never given one.
What passes comes first among the solutions, and makes the example fix when it can."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.dataset.models import Setting
from pipeline.explainers.advice import Advice, message_advice
from pipeline.explainers.offline.checks import Check, shell_word
from pipeline.explainers.offline.settings import holds_with, is_switch


def checked_advice(
    message: str, checks: Sequence[Check], settings: Sequence[Setting]
) -> list[Advice]:
    """The advice of the message that the code does not contradict."""
    kept: list[Advice] = []
    for advice in message_advice(message):
        if advice.kind == "env":
            kept.append(advice)
            continue
        setting = next((s for s in settings if advice.name in s.flags), None)
        if setting is not None and is_switch(setting):
            advice = Advice("flag", advice.name, None)  # `--x` takes no value
        elif advice.value is None:
            if setting is not None:
                continue  # a flag that takes a value, with none said
        else:
            if setting is not None and setting.choices and advice.value not in setting.choices:
                continue
            tested = [
                c
                for c in checks
                if c.flag == advice.name
                or (
                    setting is not None and c.setting is not None and c.setting.expr == setting.expr
                )
            ]
            if any(holds_with(c.condition, advice.value) for c in tested):
                continue  # the value the failing test holds for
        if advice not in kept:
            kept.append(advice)
    return kept


def advice_solution(advice: Advice) -> str:
    """The advice in words, naming what to type."""
    if advice.kind == "env":
        return f"Run `export {advice.name}={shell_word(advice.value or '1')}` first, as the message says."
    typed = advice.name if advice.value is None else f"{advice.name} {shell_word(advice.value)}"
    return f"Pass `{typed}`, as the message says."


def advice_fix(advice: Sequence[Advice], command: str | None, before: str = "") -> str | None:
    """Before/after command lines that follow the advice: the variables set in front of the
    command, the flags after it; None when the advice names no flag or variable."""
    if not advice:
        return None
    env = " ".join(f"{a.name}={shell_word(a.value or '1')}" for a in advice if a.kind == "env")
    first = {a.name: a for a in reversed(advice) if a.kind == "flag"}  # `a or b`: a
    flags = " ".join(
        a.name if a.value is None else f"{a.name} {shell_word(a.value)}"
        for a in advice
        if a.kind == "flag" and first[a.name] is a
    )
    if command is None and not flags:  # no command to put them in front of: export them
        exports = "\n".join(f"export {pair}" for pair in env.split(" "))
        return f"# before\n# (the variables unset)\n# after\n{exports}"
    base = command or ""
    after = " ".join(p for p in (env, base, flags) if p)
    start = " ".join(p for p in (base, before) if p)
    return f"# before\n{start or '# (the command as run)'}\n# after\n{after}"
