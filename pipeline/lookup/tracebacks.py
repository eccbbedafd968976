"""Pasted text (a message, an exception line, a whole traceback, log lines, a client's error)
-> the error messages in it, most specific first."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.lookup.cleaning import clean
from pipeline.lookup.wrappers import FORMS, PYDANTIC_FOOTER, exception_head


@dataclass(frozen=True)
class Candidate:
    """One error message found in pasted text, and the exception class it was raised as."""

    message: str
    errorClass: str | None = None


_CHAIN_SEPARATORS = re.compile(
    r"^(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)[ \t]*$",
    re.MULTILINE,
)
# Two processes' tracebacks pasted one after the other (vLLM's engine core, then its API
# server) have no separator line: each `Traceback` header starts a block of its own.
_BLOCK_START = re.compile(r"^(?=Traceback \(most recent call last\):)", re.MULTILINE)
_TRACEBACK_HEADER = "Traceback (most recent call last):"
# Unwrapping nests (a JSON body holding pydantic's rendering holding a message) only so deep,
# and a paste yields only so many messages.
_DEPTH = 4
_MAX_CANDIDATES = 40


def candidates(text: str) -> list[Candidate]:
    """Every error message the text may hold, most specific first, without duplicates.

    Each exception of a traceback comes with the messages wrapped inside it, the last raised
    first. Unless the text holds a traceback, the text itself (cleaned) comes last, so a
    plain message is never lost to a misreading of it as an exception line."""
    cleaned = clean(text).strip("\n")
    found: list[Candidate] = []
    blocks = [b for part in _CHAIN_SEPARATORS.split(cleaned) for b in _BLOCK_START.split(part)]
    for block in reversed(blocks):
        exception = _exception_of(block)
        if exception is not None and exception.message:
            _unwrap(exception, found, 0)
    if _TRACEBACK_HEADER not in cleaned:
        _unwrap(Candidate(cleaned.strip()), found, 0)
        if text.strip() != cleaned.strip():
            found.append(Candidate(text.strip()))
    unique: dict[tuple[str, str | None], Candidate] = {}
    for candidate in found:
        if candidate.message:
            unique.setdefault((candidate.message, candidate.errorClass), candidate)
    return list(unique.values())[:_MAX_CANDIDATES]


def _unwrap(candidate: Candidate, found: list[Candidate], depth: int) -> None:
    """Add the messages wrapped in `candidate` (innermost first), then the candidate."""
    if depth < _DEPTH and len(found) < _MAX_CANDIDATES:
        for form in FORMS:
            for message, error_class in form(candidate.message):
                if message != candidate.message:
                    _unwrap(Candidate(message, error_class), found, depth + 1)
    found.append(candidate)


def _exception_of(block: str) -> Candidate | None:
    """The exception a traceback block ends with: its first unindented `Class: message` line,
    with every line after it (a message may span lines)."""
    lines = block.strip("\n").split("\n")
    for index, line in enumerate(lines):
        # frames and code lines are indented; log lines before the exception are skipped
        if not line or line[0].isspace() or line.startswith(_TRACEBACK_HEADER):
            continue
        head = exception_head(line)
        if head is None:
            continue
        error_class, first = head
        message = PYDANTIC_FOOTER.sub("", "\n".join([first, *lines[index + 1 :]]))
        return Candidate(message.strip(), error_class)
    return None
