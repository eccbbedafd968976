"""A message's literal text and run-time holes -> the regex that fully matches it (messagePattern)."""

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
