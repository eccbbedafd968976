"""One message -> the messages wrapped inside it. Each form is one function, text in, inner
(message, exception class) pairs out, tried on every message found (so wrappings nest: a JSON
error body holding pydantic's rendering of a ValueError):

- `exception_prefix`: `ValueError: msg`, `pkg.mod.ConfigError: msg`;
- `pydantic_items`: `Value error, msg [type=value_error, input_value=..., input_type=...]`,
  indented or not, on its own line or after `1 validation error for VllmConfig`, with or
  without the `[type=...]` tail;
- `client_prefix`: what HTTP clients put first (`Bad Request: `, `Error code: 400 - `);
- `json_body`: an error body as JSON or as a Python dict (`{"detail": ...}`,
  `{'error': {'message': ...}}`, FastAPI's `{"detail": [{"msg": ...}]}`);
- `quoted_message`: a message quoted inside another error, after `error` (vLLM's
  `Worker failed with error '<msg>', please check the stack trace above`) or as an
  exception's repr (`ValueError('<msg>')`, `RayTaskError(ValueError): ... ValueError("<msg>")`).

Every form runs in linear time: no regex here can backtrack over the whole text."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable

Inner = list[tuple[str, "str | None"]]

# `ValueError: msg`, `builtins.ValueError: msg`, `pkg.mod.ConfigError: msg`, bare `ValueError`
EXCEPTION_LINE = re.compile(
    r"(?P<cls>(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure)"
    r"|(?:[A-Za-z_]\w*\.)+[A-Z]\w*)(?::[ ]?(?P<msg>.*))?"
)
# pydantic's last line, under every item
PYDANTIC_FOOTER = re.compile(r"^ *For further information visit https?://\S+\s*$", re.MULTILINE)
# An exception class is a short dotted name: longer heads are not looked at.
_CLASS_REACH = 200


def exception_head(line: str) -> tuple[str | None, str] | None:
    """(class, message) of a `Class: message` line; None when the line is not one. A CLI's
    `Error: msg` names no class."""
    found = EXCEPTION_LINE.fullmatch(line[:_CLASS_REACH]) if len(line) <= _CLASS_REACH else None
    if found is None:
        colon = line.find(": ", 0, _CLASS_REACH)
        head = EXCEPTION_LINE.fullmatch(line[:colon]) if colon > 0 else None
        if head is None or head["msg"] is not None:
            return None
        return short_class(head["cls"]), line[colon + 2 :]
    return short_class(found["cls"]), found["msg"] or ""


def short_class(name: str) -> str | None:
    short = name.rsplit(".", 1)[-1]
    return None if short in ("Error", "Exception") else short


def exception_prefix(message: str) -> Inner:
    first, _, rest = message.partition("\n")
    head = exception_head(first)
    if head is None or not head[1].strip():
        return []
    cls, text = head
    return [(PYDANTIC_FOOTER.sub("", "\n".join([text, rest])).strip(), cls)]


# pydantic's rendering of a ValueError/AssertionError raised inside a validator: at the start of
# a line, or after the `N validation error(s) for Model` header on the same line.
_ITEM_START = re.compile(
    r"(?:^[ \t]*|validation errors? for [\w.]+[ \t]+(?:[\w.]+[ \t]+)?)"
    r"(?P<kind>Value error|Assertion failed), ",
    re.MULTILINE,
)
_PYDANTIC_CLASSES = {"Value error": "ValueError", "Assertion failed": "AssertionError"}
_TAIL_START = " [type="
_TAIL = re.compile(r"\[type=[\w.]+, input_value=")
_TAIL_END = re.compile(r", input_type=[\w.]+\]\s*$")
_TAIL_TRIES = 5  # a message quoting `[type=` that often is not pydantic's


def pydantic_items(message: str) -> Inner:
    starts = list(_ITEM_START.finditer(message))
    items: Inner = []
    for number, start in enumerate(starts):
        end = starts[number + 1].start() if number + 1 < len(starts) else len(message)
        text = _without_tail(message[start.end() : end])
        footer = PYDANTIC_FOOTER.search(text)
        if footer:
            text = text[: footer.start()]
        if text.strip():
            items.append((text.strip(), _PYDANTIC_CLASSES[start["kind"]]))
    return items


def _without_tail(item: str) -> str:
    """An item's text before its ` [type=..., input_value=..., input_type=...]` tail (one
    line: pydantic writes the input's repr on it); the whole item when it has none."""
    at = 0
    for _ in range(_TAIL_TRIES):
        at = item.find(_TAIL_START, at)
        if at < 0:
            break
        line_end = item.find("\n", at)
        line = item[at + 1 : line_end if line_end >= 0 else len(item)]
        if _TAIL.match(line) and _TAIL_END.search(line):
            return item[:at]
        at += len(_TAIL_START)
    return item


_CLIENT_PREFIXES = (
    re.compile(r"Error code: \d{3} - "),  # the openai client's APIStatusError
    re.compile(
        r"(?:HTTP(?:/[\d.]+)? )?(?:\d{3} )?(?:Bad Request|Unprocessable Entity|Unprocessable "
        r"Content|Internal Server Error|Not Found|Conflict|Forbidden|Service Unavailable)"
        r"(?: \(\d{3}\))?(?:: ?| - )"
    ),
    re.compile(r"(?:HTTP|Status|status code|Error) \d{3}(?:: ?| - )"),
)


def client_prefix(message: str) -> Inner:
    for prefix in _CLIENT_PREFIXES:
        found = prefix.match(message)
        if found and message[found.end() :].strip():
            return [(message[found.end() :].strip(), None)]
    return []


# An error body larger than this is no error body; parsing it would only cost time.
MAX_BODY = 100_000
_MESSAGE_KEYS = ("message", "detail", "msg", "error", "error_message", "errorMessage")


def json_body(message: str) -> Inner:
    text = message.strip()
    if not (text.startswith("{") and text.endswith("}")) or len(text) > MAX_BODY:
        return []
    body = _parsed(text)
    return [(found, None) for found in _messages_in(body, depth=0)] if body is not None else []


def _parsed(text: str) -> object | None:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:  # the openai client prints the body as a Python dict
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _messages_in(body: object, depth: int) -> list[str]:
    """The error messages of a parsed body: the string under a message-like key, looked for
    in nested objects (`{"error": {"message": ...}}`) and lists of them (FastAPI's detail)."""
    if depth > 4:
        return []
    if isinstance(body, str):
        return [body] if body.strip() else []
    if isinstance(body, list):
        return [m for item in body[:20] for m in _messages_in(item, depth + 1)]
    if isinstance(body, dict):
        for key in _MESSAGE_KEYS:
            if key in body:
                found = _messages_in(body[key], depth + 1)
                if found:
                    return found
    return []


# Where a quoted message starts: an exception's repr, `Cls('`, or a quote after `error`.
_QUOTE_OPENER = re.compile(
    r"\b(?P<cls>[A-Za-z_]\w*(?:Error|Exception))\((?P<repr>['\"])"
    r"|\b[Ee]rror(?: was| is)?:? (?P<q>['\"])"
)
# Only so many openers are looked at (each costs one search back from the end).
_QUOTES = 4
# A quoted value shorter than this is a value (`'fp8'`), not a message.
_MIN_QUOTED = 8


def quoted_message(message: str) -> Inner:
    inner: Inner = []
    for number, opener in enumerate(_QUOTE_OPENER.finditer(message)):
        if number == _QUOTES:
            break
        quote = opener["repr"] or opener["q"]
        start = opener.end()
        # the message runs to its last closing quote: it may quote values itself
        end = message.rfind(quote + ")" if opener["repr"] else quote, start)
        if end - start < _MIN_QUOTED:
            continue
        text = _unquoted(quote + message[start:end] + quote) if opener["repr"] else None
        inner.append(((text or message[start:end]).strip(), opener["cls"]))
    return inner


def _unquoted(literal: str) -> str | None:
    """A repr's text with its escapes undone (`\\n`, `\\'`); None when it is no literal."""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


FORMS: tuple[Callable[[str], Inner], ...] = (
    pydantic_items,
    exception_prefix,
    client_prefix,
    json_body,
    quoted_message,
)
