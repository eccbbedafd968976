"""A message's literal text and run-time holes -> the regex that fully matches it (messagePattern),
and back: the literal fragments of such a pattern; and how an errorMessage reads: its literal
text, the text a page shows, the part of it that stands for each hole of the pattern."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Every run-time part of a message matches anything, newlines included (dot-all).
HOLE_PATTERN = "(.*?)"
# Before a hole whose pieces are known to hold one of some literal texts (a list the code
# tested non-empty, extractors/parts.py's `Some`): the text from there on holds one of them.
# Lookaheads and non-capturing groups read the same in Python `re` and ECMAScript.
_REQUIRE_OPEN, _REQUIRE_CLOSE = "(?=.*?(?:", "))"

# The JavaScript-style escape set: only regex syntax characters get a backslash, so the
# pattern reads like the message (`-`, `/`, spaces and newlines stay as written). Every other
# character, control characters (NUL, tab, newline, U+2028), astral and lone surrogates
# included, is a literal that matches itself in both Python `re` and `new RegExp(p, "s")`
# (tests/test_patterns.py checks this against node), so none needs a `\xNN` escape.
_SYNTAX = frozenset("\\^$.|?*+()[]{}")


def escape_literal(text: str) -> str:
    """`text` as a regex that matches exactly it, in both Python `re` and ECMAScript."""
    return "".join("\\" + char if char in _SYNTAX else char for char in text)


def requirement(evidence: Sequence[str]) -> str:
    """The lookahead that asks the rest of the text to hold one of `evidence` (literal texts):
    `(?=.*?(?:a|b))`."""
    return _REQUIRE_OPEN + "|".join(map(escape_literal, evidence)) + _REQUIRE_CLOSE


def matches(pattern: str, message: str) -> bool:
    """Whether `message` is one of the run-time renderings that `pattern` describes (a
    messagePattern is applied as a full match, dot-all)."""
    return re.fullmatch(pattern, message, re.DOTALL) is not None


_TOKEN = re.compile(
    r"(?P<required>\(\?=\.\*\?\(\?:(?:\\[\\^$.|?*+()\[\]{}]|[^\\^$.|?*+()\[\]{}]|\|)*\)\))"
    r"|(?P<hole>\(\.\*\?\))|\\(?P<escaped>[\\^$.|?*+()\[\]{}])"
    r"|(?P<text>[^\\^$.|?*+()\[\]{}]+)|(?P<other>.)",
    re.DOTALL,
)


# A fragment between holes as vmine writes it is other text and escaped syntax characters:
# with those pairs taken out, no syntax character (a backslash included) is left.
_ESCAPED_PAIR = re.compile(r"\\[\\^$.|?*+()\[\]{}]")
_SYNTAX_CHAR = re.compile(r"[\\^$.|?*+()\[\]{}]")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _plain(piece: str) -> bool:
    return not _SYNTAX_CHAR.search(_ESCAPED_PAIR.sub("", piece) if "\\" in piece else piece)


def pattern_fragments(pattern: str) -> tuple[str, ...] | None:
    """The literal texts between the `(.*?)` holes of a messagePattern, unescaped (one more
    than there are holes); None when the pattern uses regex syntax beyond the escaped
    literals, holes and lookaheads before a hole (`requirement`) that vmine writes. The
    lookaheads only narrow what the holes match: they are left out."""
    # The fast path (explain reads every pattern of every dataset): split at the holes; a
    # piece that is not plain escaped text (`\\(.*?)` reads otherwise) takes the tokenizer.
    pieces = pattern.split(HOLE_PATTERN)
    if all(map(_plain, pieces)):
        return tuple(_ESCAPE.sub(r"\1", piece) if "\\" in piece else piece for piece in pieces)
    return _tokenized_fragments(pattern)


def _tokenized_fragments(pattern: str) -> tuple[str, ...] | None:
    fragments: list[str] = []
    current: list[str] = []
    required = False  # a lookahead is vmine's only right before a hole (or another one)
    for token in _TOKEN.finditer(pattern):
        if token["required"]:
            required = True
            continue
        if token["hole"]:
            fragments.append("".join(current))
            current = []
        elif token["other"] is not None or required:
            return None
        else:
            current.append(token["escaped"] or token["text"])
        required = False
    if required:
        return None
    fragments.append("".join(current))
    return tuple(fragments)


# --- errorMessage -------------------------------------------------------------------------
# Literal braces are doubled (`{{`, `}}`, as in an f-string body); every run-time part is in
# braces: `{expr}`, or a piece that may or may not appear, `{?a|b}` / `{*a}`, whose text
# is message text again (extractors/parts.py writes them).


def _message_tokens(message: str, greedy: bool = True) -> tuple[list[tuple[bool, str]], bool]:
    """(is_placeholder, text) runs of an errorMessage: literal text with braces undoubled,
    and each top-level placeholder as written; and whether every placeholder closed (one
    that does not takes the rest of the message)."""
    tokens: list[tuple[bool, str]] = []
    text: list[str] = []
    index, size, closed = 0, len(message), True
    while index < size:
        pair = message[index : index + 2]
        if pair in ("{{", "}}"):
            text.append(pair[0])
            index += 2
        elif message[index] == "{":
            end = _placeholder_end(message, index, greedy)
            closed = end is not None
            end = size if end is None else end
            if text:
                tokens.append((False, "".join(text)))
                text = []
            tokens.append((True, message[index:end]))
            index = end
        else:
            text.append(message[index])
            index += 1
    if text:
        tokens.append((False, "".join(text)))
    return tokens, closed


def _placeholder_end(message: str, start: int, greedy: bool) -> int | None:
    """Where the placeholder opening at `start` ends (past its `}`); None when it never
    does. Inside a piece (`{?`, `{*`) a doubled brace is literal text, read greedily
    unless `greedy` is off (then `}}` closes a nested piece and this one). A loop, not
    recursion: a hostile message may nest pieces without end."""
    size, index, pieces = len(message), start, 0
    while True:  # `index` is at a `{` that opens a placeholder
        if message[index + 1 : index + 2] in ("?", "*"):
            pieces += 1
            index += 2
        else:
            end = _expression_end(message, index)
            if end is None:
                return None
            if pieces == 0:
                return end
            index = end
        while True:  # the text of the innermost open piece
            if index >= size:
                return None
            pair = message[index : index + 2]
            if pair == "{{" or (pair == "}}" and greedy):
                index += 2
            elif message[index] == "{":
                break
            elif message[index] == "}":
                pieces -= 1
                index += 1
                if pieces == 0:
                    return index
            else:
                index += 1


def _expression_end(message: str, start: int) -> int | None:
    """Past the `}` that closes the expression placeholder opening at `start`."""
    depth, index, size = 0, start, len(message)
    while index < size:  # an expression's braces, counted, not those of its strings
        char = message[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
        elif char in "'\"":
            index = _string_end(message, index)
            continue
        index += 1
    return None


def _string_end(message: str, start: int) -> int:
    """Past the string literal of an expression that opens at `start` (`"{".join(x)`);
    just past the quote when it never closes (a quote in a format spec, `{x:'^9}`)."""
    quote, index = message[start], start + 1
    while index < len(message):
        if message[index] == "\\":
            index += 2
        elif message[index] == quote:
            return index + 1
        else:
            index += 1
    return start + 1


def _tokens(message: str) -> list[tuple[bool, str]]:
    tokens, closed = _message_tokens(message)
    if not closed:
        again, closed = _message_tokens(message, greedy=False)
        tokens = again if closed else tokens
    return tokens


def literal_text(message: str) -> str:
    """An errorMessage with every run-time part (`{expr}`, an optional piece) replaced by a
    space and doubled braces undoubled: the words a reader sees whatever the run-time
    values."""
    return "".join(" " if hole else text for hole, text in _tokens(message))


def shown_message(message: str) -> str:
    """An errorMessage as a page shows it: a message with no run-time part as the exact
    text it prints (`{{` is a brace there), any other as written."""
    tokens = _tokens(message)
    if any(hole for hole, _ in tokens):
        return message
    return "".join(text for _, text in tokens)


def runtime_parts(message: str) -> list[str]:
    """The run-time parts of an errorMessage as written, in order (`{n}`, `{?a|b}`); doubled
    braces are literal text, not parts."""
    return [text for hole, text in _tokens(message) if hole]


def holes_in_message(message: str, pattern: str) -> list[str] | None:
    """The part of an errorMessage that stands for each hole of its messagePattern, in
    order (`{n}` for the hole of `got (.*?)` in `got {n}`); None when they do not line up
    (a pattern not of vmine's form, or not the message's). Found without backtracking:
    each literal fragment, braces doubled as the message writes them, is searched for in
    turn."""
    fragments = pattern_fragments(pattern)
    if fragments is None:
        return None
    written = [f.replace("{", "{{").replace("}", "}}") for f in fragments]
    spans = fragment_spans(written, message)
    return None if spans is None else [message[start:end] for start, end in spans]


def fragment_spans(fragments: Sequence[str], text: str) -> list[tuple[int, int]] | None:
    """Where each hole lies in `text` when `fragments[0] (.*?) fragments[1] ... (.*?)
    fragments[-1]` matches all of it; None when it does not.

    Linear in the text: the first fragment must start it and the last end it, and the ones
    between are placed leftmost in order, which finds a match whenever one exists (and the
    spans a lazy regex would give)."""
    if len(fragments) == 1:
        return [] if text == fragments[0] else None
    first, last = fragments[0], fragments[-1]
    end = len(text) - len(last)
    if end < len(first) or not text.startswith(first) or not text.endswith(last):
        return None
    at, holes = len(first), []
    for fragment in fragments[1:-1]:
        found = text.find(fragment, at, end)
        if found < 0:
            return None
        holes.append((at, found))
        at = found + len(fragment)
    holes.append((at, end))
    return holes
