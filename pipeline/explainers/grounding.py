"""Checks an explanation against the code: its Python parses and its `--flags` exist."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence

from pipeline.dataset.models import SWITCH_ACTIONS, Explanation, Setting
from pipeline.explainers.base import Grounding
from pipeline.explainers.flags import find_flags, flag_pairs, snake_name

CODE_FIELDS = ("validationCode", "typeGuard", "tryCatchPattern")


def text_fields(explanation: Explanation) -> Iterator[tuple[str, str]]:
    """(field name, text) for every text of an explanation; list items are `solutions[1]`."""
    for name, value in explanation.model_dump().items():
        if isinstance(value, str):
            yield name, value
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield f"{name}[{index}]", item


def syntax_error(code: str) -> str | None:
    """Why `code` is not valid Python, in one line, or None when it parses."""
    try:
        with warnings.catch_warnings():
            # invalid escape sequences warn at parse time; they are not our concern here
            warnings.simplefilter("ignore")
            ast.parse(code)
    except SyntaxError as error:
        return f"{error.msg} (line {error.lineno})"
    except ValueError as error:  # NUL bytes
        return str(error)
    return None


def flag_needles(flag: str) -> tuple[str, ...]:
    """The strings whose presence in the repository grounds a flag: the flag itself or its
    snake_case name; `--no-x` is also grounded by `x` (argparse's negated booleans), and a
    dotted key of a JSON-config flag (`--speculative-config.method`) by its flag."""
    if "." in flag:
        head = flag.split(".", 1)[0]
        return (flag, *flag_needles(head))
    needles = [flag, snake_name(flag)]
    if flag.startswith("--no-") and len(flag) > len("--no-"):
        positive = "--" + flag[len("--no-") :]
        needles += [positive, snake_name(positive)]
    return tuple(needles)


# `export NAME=value`, or `NAME=value` in front of a command: a variable a fix sets
_EXPORT = re.compile(r"(?:\bexport\s+|^|(?<=[`\n]))([A-Z][A-Z0-9]*_[A-Z0-9_]+)=", re.MULTILINE)


def exported(text: str) -> list[str]:
    """The environment variables a text tells to set, each once."""
    return list(dict.fromkeys(_EXPORT.findall(text)))


def choice_violations(explanation: Explanation, settings: Sequence[Setting]) -> list[str]:
    """Where the explanation pairs a flag with a value outside that setting's choices
    (`--mamba-cache-mode fast` when it accepts none, all, align); `a/b` is two values."""
    choices_of: dict[str, list[str]] = {}
    for setting in settings:
        if setting.choices:
            for flag in setting.flags:
                choices_of.setdefault(flag, setting.choices)
    if not choices_of:
        return []
    violations = []
    for field, text in text_fields(explanation):
        if field in CODE_FIELDS:  # Python, whose strings quote messages, not commands
            continue
        for flag, value in flag_pairs(text, command=field == "exampleFix"):
            choices = choices_of.get(flag)
            if choices is None:
                continue
            if any(part not in choices for part in value.replace("|", "/").split("/") if part):
                violations.append(
                    f"{field}: {flag} {value} is not one of its choices ({', '.join(choices)})"
                )
    return violations


def switch_violations(explanation: Explanation, settings: Sequence[Setting]) -> list[str]:
    """Where the explanation gives a value to a flag that takes none (`--enforce-eager true`
    for a `store_true` flag)."""
    switches = {f for s in settings if s.action in SWITCH_ACTIONS for f in s.flags}
    if not switches:
        return []
    violations = []
    for field, text in text_fields(explanation):
        if field in CODE_FIELDS:
            continue
        for flag, value in flag_pairs(text, command=field == "exampleFix"):
            if flag in switches:
                violations.append(f"{field}: {flag} takes no value, but is given {value}")
    return violations


class RepoGrounding(Grounding):
    """Grounds explanations in one repository at one commit, given a lookup that tells which
    strings occur in any of its files (`Snapshot.contains`); each string is looked up once.

    Flags are looked up as written first, all in one call; only those not found are looked
    up again by their other names (snake_case, `--no-x`), in a second call: a lookup costs
    in proportion to its needles, and most flags occur as written."""

    def __init__(self, contains: Callable[[Iterable[str]], set[str]]) -> None:
        self._contains = contains
        self._known: dict[str, bool] = {}

    def _occurring(self, needles: Iterable[str]) -> set[str]:
        needles = set(needles)
        missing = sorted(n for n in needles if n not in self._known)
        if missing:
            found = set(self._contains(missing))
            for needle in missing:
                self._known[needle] = needle in found
        return {n for n in needles if self._known[n]}

    def _grounded(self, flags: set[str]) -> set[str]:
        """Which of these flags occur in the repository under one of their names; a dotted
        key (`--speculative-config.method`) when its flag does and its key is a name there."""
        found = self._occurring(flags)
        others = {n for flag in flags - found for n in flag_needles(flag)[1:]}
        keys = {f.rsplit(".", 1)[1] for f in flags - found if "." in f}
        found_others = self._occurring(others | keys)
        return found | {
            f
            for f in flags - found
            if found_others & set(flag_needles(f)[1:])
            and ("." not in f or f.rsplit(".", 1)[1] in found_others)
        }

    def prefetch(self, items: Iterable[Explanation | str]) -> None:
        """Look up in one call every flag these explanations (or texts) mention, so that the
        `check`s that follow find their answers cached."""
        texts = [
            text
            for item in items
            for text in ([item] if isinstance(item, str) else [t for _, t in text_fields(item)])
        ]
        self._grounded({flag for text in texts for flag in find_flags(text)})

    def check(self, explanation: Explanation, settings: Sequence[Setting] = ()) -> list[str]:
        """Violations: code that does not parse, a flag or an exported environment variable
        the repository lacks, a flag paired with a value outside the choices of the site's
        `settings`, a value given to a switch."""
        violations: list[str] = []
        for name in CODE_FIELDS:
            code = getattr(explanation, name)
            if code is not None and (error := syntax_error(code)) is not None:
                violations.append(f"{name}: does not parse as Python: {error}")

        mentions = [
            (field, flag) for field, text in text_fields(explanation) for flag in find_flags(text)
        ]
        grounded = self._grounded({flag for _, flag in mentions})
        for field, flag in mentions:
            if flag not in grounded:
                violations.append(f"{field}: flag {flag} does not occur in the repository")
        variables = [
            (field, name) for field, text in text_fields(explanation) for name in exported(text)
        ]
        known = self._occurring({name for _, name in variables})
        for field, name in variables:
            if name not in known:
                violations.append(
                    f"{field}: environment variable {name} does not occur in the repository"
                )
        return (
            violations
            + choice_violations(explanation, settings)
            + switch_violations(explanation, settings)
        )
