"""What a record's exampleFix changes, read as settings to apply to a verified reproducer: the
"after" half of a before/after fix, in any of the forms records hold.

| the after half                          | the change                                   |
|-----------------------------------------|----------------------------------------------|
| `--nnodes 1` (a flag of the settings)   | the setting's expression = `1`               |
| `--enforce-eager` (a switch)            | the setting's expression = `True`            |
| `# (without --use-x)`                   | the setting's expression = its default       |
| a flag of the before line left out      | the setting's expression = its default       |
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
    # a flag of the "before" command line that the "after" one leaves out: its default
    named = {flag for line in after.splitlines() for flag in _named(line, by_flag)}
    if any("--" in line and not line.strip().startswith("#") for line in after.splitlines()):
        for flag in _named(_before_half(example_fix), by_flag):
            if flag not in named and not any(c.expr == by_flag[flag].expr for c in changes):
                changes.append(Change(by_flag[flag].expr, _default(by_flag[flag])))
    return changes or None


def command_words(example_fix: str) -> str | None:
    """The command a fix's command lines start with (`vllm serve MODEL`): the words before
    the first option of its first command line; None when it has none."""
    for line in (after_half(example_fix) or example_fix).splitlines():
        if line.strip().startswith("#") or " -" not in line:
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            return None
        first = next((at for at, word in enumerate(words) if word.startswith("-")), None)
        if first is None:
            continue
        return " ".join(words[:first]) or None
    return None


def _before_half(example_fix: str) -> str:
    """The lines between `# before` and `# after`."""
    lines = example_fix.splitlines()
    marks = [line.strip().lower() for line in lines]
    if "# before" not in marks or "# after" not in marks:
        return ""
    return "\n".join(lines[marks.index("# before") + 1 : marks.index("# after")])


def _named(text: str, by_flag: dict[str, Setting]) -> list[str]:
    """The settings' flags a command line names (placeholders and all)."""
    if text.strip().startswith("#"):
        return []
    try:
        words = shlex.split(text)
    except ValueError:
        return []
    return [word.partition("=")[0] for word in words if word.partition("=")[0] in by_flag]


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


def as_compared(changes: list[Change], tests: list[str]) -> list[Change]:
    """Each change's string value in the form the tests compare its expression with: the
    parser turns `--backend triton` into `Backend.TRITON`, and a reproducer sets the field
    itself (`self.backend != Backend.TRITON`: `Backend.TRITON`, read from the module)."""
    members: dict[str, list[tuple[str, str]]] = {}  # expression -> (enum, member)
    for text in tests:
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            for left, right in zip([node.left, *node.comparators], node.comparators, strict=False):
                for side, other in ((left, right), (right, left)):
                    if isinstance(other, ast.Attribute) and isinstance(other.value, ast.Name):
                        if other.value.id[:1].isupper():
                            pair = (other.value.id, other.attr)
                            members.setdefault(ast.unparse(side), []).append(pair)
    found = []
    for change in changes:
        value = _literal_value(change.value)
        for enum, member in members.get(change.expr, []):
            if isinstance(value, str) and value.upper().replace("-", "_") == member:
                change = Change(change.expr, f"mod.{enum}.{member}")
                break
        found.append(change)
    return found


def _literal_value(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def through_locals(changes: list[Change], local_values: dict[str, ast.expr]) -> list[Change]:
    """A change of a local's attribute made on what defines the local (`so = params.out`:
    `so.regex = None` is `params.out.regex = None`); the reproducer sets only what the
    function reads from outside."""
    found = []
    for change in changes:
        try:
            node = ast.parse(change.expr, mode="eval").body
        except SyntaxError:
            found.append(change)
            continue
        root = node
        while isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        if isinstance(root, ast.Name) and root.id in local_values and root is not node:
            text = ast.unparse(node)
            inner = ast.unparse(local_values[root.id])
            change = Change(inner + text[len(root.id) :], change.value)
        found.append(change)
    return found
