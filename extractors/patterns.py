"""A message's literal text and run-time holes -> the regex that fully matches it (messagePattern),
and back: the literal fragments of such a pattern, and the literal text of an errorMessage."""

from __future__ import annotations

import re

# Every run-time part of a message matches anything, newlines included (dot-all).
HOLE_PATTERN = "(.*?)"

# The JavaScript-style escape set: only regex syntax characters get a backslash, so the
# pattern reads like the message (`-`, `/`, spaces and newlines stay as written). Every other
# character, control characters (NUL, tab, newline, U+2028), astral and lone surrogates
# included, is a literal that matches itself in both Python `re` and `new RegExp(p, "s")`
# (tests/test_patterns.py checks this against node), so none needs a `\xNN` escape.
_SYNTAX = frozenset("\\^$.|?*+()[]{}")


def escape_literal(text: str) -> str:
    """`text` as a regex that matches exactly it, in both Python `re` and ECMAScript."""
    return "".join("\\" + char if char in _SYNTAX else char for char in text)


def matches(pattern: str, message: str) -> bool:
    """Whether `message` is one of the run-time renderings that `pattern` describes (a
    messagePattern is applied as a full match, dot-all)."""
    return re.fullmatch(pattern, message, re.DOTALL) is not None


_TOKEN = re.compile(
    r"(?P<hole>\(\.\*\?\))|\\(?P<escaped>[\\^$.|?*+()\[\]{}])"
    r"|(?P<text>[^\\^$.|?*+()\[\]{}]+)|(?P<other>.)",
    re.DOTALL,
)


def pattern_fragments(pattern: str) -> tuple[str, ...] | None:
    """The literal texts between the `(.*?)` holes of a messagePattern, unescaped (one more
    than there are holes); None when the pattern uses regex syntax beyond the escaped
    literals and holes that vmine writes."""
    fragments: list[str] = []
    current: list[str] = []
    for token in _TOKEN.finditer(pattern):
        if token["hole"]:
            fragments.append("".join(current))
            current = []
        elif token["other"] is not None:
            return None
        else:
            current.append(token["escaped"] or token["text"])
    fragments.append("".join(current))
    return tuple(fragments)


def literal_text(message: str) -> str:
    """An errorMessage with every `{expr}` placeholder (nested braces included) replaced by a
    space: the words a reader sees whatever the run-time values."""
    kept: list[str] = []
    depth = 0
    for char in message:
        if char == "{":
            depth += 1
            kept.append(" ")
        elif char == "}" and depth:
            depth -= 1
        elif not depth:
            kept.append(char)
    return "".join(kept)
