"""Questions about a file's text that run over every line of every file the extractor reads,
answered without a regex that starts with `\\b` or an alternation (the regex engine cannot
skip ahead to a literal then, and tries every position: a tenth of a worker's time went to
three such scans).

| question | answers as |
|---|---|
| `split_lines("a\\r\\nb\\rc\\n")` | `["a", "b", "c", ""]`: `\\r\\n`, `\\r` and `\\n` end a line, as Python numbers lines (not `str.splitlines`, which also breaks at `\\f`, `\\x1c`, `\\u2028`, ...) |
| `has_word("raise ValueError", "raise")` | True: `\\braise\\b` |
| `has_word("praised", "raise")`, `has_word("raise_error()", "raise")` | False |
| `called_at("f(x) + g (y) + self.f(z) + ff(0)", ["f", "g"])` | `[0, 7, 20]`: where `\\b(?:f\\|g)\\s*\\(` matches |
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_OPENS_CALL = re.compile(r"\s*\(")


def split_lines(source: str) -> list[str]:
    """The text cut at each line end, as `re.split(r"\\r\\n|\\r|\\n")` cuts it (a text that
    ends with a line end gives a last, empty, line)."""
    if "\r" not in source:
        return source.split("\n")
    return _LINE_BREAK.split(source)


def _word_char(char: str) -> bool:
    """A character `\\w` matches in a `str` pattern."""
    return char.isalnum() or char == "_"


def _boundary(text: str, index: int) -> bool:
    """Whether `\\b` matches before `text[index]`."""
    before = index > 0 and _word_char(text[index - 1])
    after = index < len(text) and _word_char(text[index])
    return before != after


def _starts(text: str, word: str) -> Iterable[int]:
    """Where `word` occurs in `text` with `\\b` before it."""
    index = text.find(word)
    while index >= 0:
        if _boundary(text, index):
            yield index
        index = text.find(word, index + 1)


def has_word(text: str, word: str) -> bool:
    """Whether `\\bword\\b` matches in `text`."""
    return any(_boundary(text, start + len(word)) for start in _starts(text, word))


def called_at(text: str, names: Iterable[str]) -> list[int]:
    """The offsets, in order, where one of `names` is called: where `\\b(?:names)\\s*\\(`
    matches (names are identifiers, so no two matches overlap)."""
    found: set[int] = set()
    for name in set(names):
        for start in _starts(text, name):
            if _OPENS_CALL.match(text, start + len(name)):
                found.add(start)
    return sorted(found)
