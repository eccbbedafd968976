"""What a record's exampleFix changes, read as settings to apply to a verified reproducer: the
"after" half of a before/after fix, in any of the forms records hold.

| the after half                          | the change                                   |
|-----------------------------------------|----------------------------------------------|
| `--nnodes 1` (a flag of the settings)   | the setting's expression = `1`               |
| `--enforce-eager` (a switch)            | the setting's expression = `True`            |
| `# (without --use-x)`                   | the setting's expression = its default       |
| `cfg.rope_parameters = None`            | `cfg.rope_parameters = None`                 |
| `LLM(..., block_size=16)`               | the setting whose field is block_size = `16` |

A value that is a placeholder (`<value>`, `...`) or cannot be read leaves the fix untested.
Pure: text in, changes out.
"""

from __future__ import annotations

import ast
import json
import shlex
from dataclasses import dataclass

from pipeline.dataset.models import Setting

_PLACEHOLDERS = ("<", "...", "MODEL")


@dataclass(frozen=True)
class Change:
    expr: str  # as the guards read it: self.cache_config.block_size, args.nnodes
    value: str  # Python source


def after_half(example_fix: str) -> str | None:
    """The lines after `# after` (None when the fix is not a before/after pair)."""
    lines = example_fix.splitlines()
    for number, line in enumerate(lines):
        if line.strip().lower() == "# after":
            return "\n".join(lines[number + 1 :])
    return None


def fix_changes(example_fix: str, settings: list[Setting]) -> list[Change] | None:
    """The settings the fix changes; None when it changes none that can be applied."""
    after = after_half(example_fix)
    if after is None:
        return None
    by_flag = {flag: setting for setting in settings for flag in setting.flags}
    changes: list[Change] = []
    for line in after.splitlines():
        text = line.strip()
        if not text:
            continue
        if text.startswith("# (without ") and text.endswith(")"):
            for flag in text[len("# (without ") : -1].replace(",", " ").split():
                setting = by_flag.get(flag)
                if setting is None:
                    return None
                changes.append(Change(setting.expr, _default(setting)))
            continue
        if text.startswith("#"):
            continue
        found = _flags(text, by_flag) if "--" in text else _python(text, settings)
        if found is None:
            return None
        changes += found
    return changes or None


def _default(setting: Setting) -> str:
    if setting.default is None:
        return "None"
    return setting.default


def _flags(text: str, by_flag: dict[str, Setting]) -> list[Change] | None:
    found = flag_values(text, set(by_flag))
    if found is None:
        return None
    return [Change(by_flag[flag].expr, value) for flag, value in found]


def flag_values(text: str, flags: set[str]) -> list[tuple[str, str]] | None:
    """The value (Python source) a command line gives each of `flags` it names (`True` for a
    switch); None when a value cannot be read (a placeholder)."""
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    found = []
    for position, word in enumerate(words):
        if not word.startswith("--"):
            continue
        flag, equals, given = word.partition("=")
        if flag not in flags:
            continue  # the command's own words (`vllm serve MODEL`) and other flags
        if not equals:
            following = words[position + 1] if position + 1 < len(words) else None
            given = following if following is not None and not following.startswith("--") else ""
        if given == "":
            found.append((flag, "True"))
            continue
        value = _value(given)
        if value is None:
            return None
        found.append((flag, value))
    return found


def _value(text: str) -> str | None:
    """A command-line value as Python source: a number, true/false, a JSON object, a word."""
    if any(text.startswith(mark) for mark in _PLACEHOLDERS):
        return None
    lowered = text.lower()
    if lowered in ("true", "false"):
        return "True" if lowered == "true" else "False"
    for reader in (int, float):
        try:
            return repr(reader(text))
        except ValueError:
            pass
    if text.startswith(("{", "[")):
        try:
            return repr(json.loads(text))
        except ValueError:
            return None
    return repr(text)


def _python(text: str, settings: list[Setting]) -> list[Change] | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    changes = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            value = _literal_source(statement.value)
            if value is None:
                return None
            changes.append(Change(ast.unparse(statement.targets[0]), value))
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            by_field = {setting.field: setting for setting in settings}
            for keyword in statement.value.keywords:
                setting = by_field.get(keyword.arg or "")
                value = _literal_source(keyword.value)
                if setting is not None and value is not None:
                    changes.append(Change(setting.expr, value))
        else:
            return None
    return changes


def _literal_source(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return None
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return ast.unparse(node)
