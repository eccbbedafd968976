"""Command-line flags in text: finding `--flags`, mapping them to and from snake_case names."""

from __future__ import annotations

import io
import re
import textwrap
import token
import tokenize

# A flag starts with a letter after `--` and is not glued to a word or another dash
# (so `a--b` and `---` are not flags); dots allow `--kernel_config.enable_jit_warmup`.
FLAG_NAME = r"--[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+|\.[a-z_][a-z0-9_]*)*"
FLAG = re.compile(r"(?<![\w-])" + FLAG_NAME)
# a value after a flag: a dot inside it (`torch.float16`) but not one that glues on the next
# sentence (`no_buffer.To use`, two literals concatenated without a space)
VALUE = r"[A-Za-z0-9_](?:[A-Za-z0-9_:/-]|\.(?![A-Z][a-z])(?=[A-Za-z0-9_]))*"

# `pass --mamba-cache-mode align`, `requires --mamba-backend triton`, `--dtype=half`: a value
# the message itself asks for. Only values after a directive word (or `=`) count, so that
# `--use-x requires ...` is not read as `--use-x` with the value `requires`.
_DIRECTIVE_VALUE = re.compile(
    # (not `using` / `with` alone: "when using --x a" says what fails)
    r"(?i:\b(?:pass|passing|use|set|setting|specify|try|requires?|try\s+using|consider\s+using|"
    r"run\s+with|launch\s+with|start\s+with)\s+`?)"
    rf"({FLAG_NAME})[ =]({VALUE})"
    # `requires --mamba-backend triton or flashinfer`: the alternative counts too
    # (only when it ends the clause: `--device=cpu, or drop it` offers no second value)
    r"(?:\s+or\s+([A-Za-z0-9_][A-Za-z0-9_:/-]*(?:\.[A-Za-z0-9_]+)*)(?=[.,;:)`'\"]|\s*$))?"
)
_EQUALS_VALUE = re.compile(rf"(?<![\w-])({FLAG_NAME})=({VALUE})")
# Words that follow a flag in prose and are never its value.
_NOT_VALUES = frozenset(
    "a an and are as at be but by for if in is it must not of on only or the to when "
    "which with".split()
)


def find_flags(text: str) -> list[str]:
    """The distinct `--flags` of a text, in order of first appearance."""
    seen: dict[str, None] = {}
    for match in FLAG.finditer(text):
        seen.setdefault(match.group(0), None)
    return list(seen)


def snake_name(flag: str) -> str:
    """`--mamba-backend` -> `mamba_backend` (the attribute a flag usually sets)."""
    return flag.lstrip("-").replace("-", "_")


def flag_for(name: str) -> str:
    """`mamba_backend` -> `--mamba-backend`."""
    return "--" + name.strip("_").replace("_", "-")


def flag_values(text: str) -> dict[str, list[str]]:
    """Values a text gives for its flags (`requires --mamba-backend triton` -> triton),
    per flag in order of appearance; placeholders like `{cfg.x}` are not values."""
    values: dict[str, list[str]] = {}
    matches = [*_DIRECTIVE_VALUE.finditer(text), *_EQUALS_VALUE.finditer(text)]
    for match in sorted(matches, key=lambda m: m.start(1)):
        flag = match.group(1)
        for value in match.groups()[1:]:
            value = (value or "").rstrip(".,;:")
            if not value or value.lower() in _NOT_VALUES:
                continue
            known = values.setdefault(flag, [])
            if value not in known:
                known.append(value)
    return values


# `--kv-cache-dtype fp8`, `--dtype=half`: a flag and the value written after it
_PAIR = re.compile(rf"(?<![\w-])({FLAG_NAME})(?:=| +)([A-Za-z0-9_][A-Za-z0-9_.:/|+-]*)")


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def flag_pairs(text: str, command: bool = False) -> list[tuple[str, str]]:
    """(flag, value) for each flag a text gives a value: `--dtype=half` anywhere, `--x v`
    inside a code span, or on any line of a `command` text (an example fix) that is not a
    comment. Prose after a flag (`--x requires --y`) is no value, nor a metavar (`MODEL`)."""
    pieces = (
        [line for line in text.splitlines() if not line.lstrip().startswith("#")]
        if (command)
        else _CODE_SPAN.findall(text)
    )
    pairs = []
    for piece, spaced in [*((p, True) for p in pieces), (text, False)]:
        for match in _PAIR.finditer(piece):
            if not spaced and "=" not in match.group(0):
                continue
            value = match.group(2).rstrip(".,;:")
            if value and value.lower() not in _NOT_VALUES and not value.isupper():
                pairs.append((match.group(1), value))
    return list(dict.fromkeys(pairs))


def string_literals(source: str) -> list[str]:
    """The text of the string literals of Python source, comments left out (a comment is
    free prose that nothing should repeat). Source that does not tokenize gives []."""
    strings: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline):
            if tok.type == token.STRING:
                strings.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return strings
