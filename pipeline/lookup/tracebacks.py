"""Pasted text (a message, an exception line, a whole traceback, log lines) -> the messages in it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    """One error message found in pasted text, and the exception class it was raised as."""

    message: str
    errorClass: str | None = None


# Prefixes that loggers and process supervisors put before every line.
_LINE_PREFIXES = (
    re.compile(r"\([^()\n]*\bpid=\d+\) ?"),  # vLLM: (APIServer pid=2994609)
    # vLLM's logger: INFO 08-14 12:00:01 [file.py:12]
    re.compile(
        r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) +\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?"
        r" +\[[^\]\n]*\] ?"
    ),
    # SGLang and others: [2026-08-14 12:00:01 TP0]
    re.compile(r"\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[^\]\n]*\] ?"),
    re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)? (?:- )?"),
    re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)(?::[\w.]*)?: ?(?=\S)"),  # logging default
)
# A common prefix is cut only when it ends like a prefix does: `) `, `] `, `| `, `: `, `> `.
_PREFIX_END = re.compile(r"[)\]|:>] $")

_CHAIN_SEPARATORS = re.compile(
    r"^(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)\s*$",
    re.MULTILINE,
)
# Two processes' tracebacks pasted one after the other (vLLM's engine core, then its API
# server) have no separator line: each `Traceback` header starts a block of its own.
_BLOCK_START = re.compile(r"^(?=Traceback \(most recent call last\):)", re.MULTILINE)
# `ValueError: msg`, `builtins.ValueError: msg`, `pkg.mod.ConfigError: msg`, bare `ValueError`
_EXCEPTION_LINE = re.compile(
    r"^(?P<cls>(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure)"
    r"|(?:[A-Za-z_]\w*\.)+[A-Z]\w*)(?::[ ]?(?P<msg>.*))?$"
)
_TRACEBACK_HEADER = "Traceback (most recent call last):"
# pydantic's rendering of a ValueError/AssertionError raised inside a validator.
_PYDANTIC_ITEM = re.compile(
    r"^  (?P<kind>Value error|Assertion failed), (?P<msg>.*?) \[type=\w+, input_value=.*?\]\s*$",
    re.MULTILINE | re.DOTALL,
)
_PYDANTIC_CLASSES = {"Value error": "ValueError", "Assertion failed": "AssertionError"}
_PYDANTIC_FOOTER = re.compile(r"^ +For further information visit https?://\S+\s*$", re.MULTILINE)


def strip_line_prefixes(text: str) -> str:
    """Remove log-line prefixes of known shapes from every line, then a prefix common to all."""
    lines = [_strip_known(line) for line in text.replace("\r\n", "\n").split("\n")]
    filled = [line for line in lines if line.strip()]
    if len(filled) >= 2:
        common = os.path.commonprefix(filled)
        common = common[: common.rfind(" ") + 1]
        while common and not _PREFIX_END.search(common):
            common = common[: common.rstrip(" ").rfind(" ") + 1]
        if common.strip():
            lines = [line[len(common) :] if line.startswith(common) else line for line in lines]
    return "\n".join(lines)


def _strip_known(line: str) -> str:
    changed = True
    while changed:
        changed = False
        for prefix in _LINE_PREFIXES:
            found = prefix.match(line)
            if found and found.end() > 0:
                line = line[found.end() :]
                changed = True
    return line


def candidates(text: str) -> list[Candidate]:
    """Every error message the text may hold, most specific first, without duplicates.

    Unless it holds a traceback or pydantic's wrapping, the text itself (trimmed) comes
    last, so a plain message is never lost to a misreading of it as an exception line."""
    cleaned = strip_line_prefixes(text).strip("\n")
    found = [
        Candidate(item["msg"], _PYDANTIC_CLASSES[item["kind"]])
        for item in _PYDANTIC_ITEM.finditer(cleaned)
    ]
    wrapped = bool(found)
    blocks = [b for part in _CHAIN_SEPARATORS.split(cleaned) for b in _BLOCK_START.split(part)]
    for block in reversed(blocks):
        exception = _exception_of(block)
        if exception is not None and exception.message:
            found.append(exception)
    if not wrapped and _TRACEBACK_HEADER not in cleaned:
        found.append(Candidate(cleaned.strip()))
        if text.strip() != cleaned.strip():
            found.append(Candidate(text.strip()))
    unique: dict[tuple[str, str | None], Candidate] = {}
    for candidate in found:
        unique.setdefault((candidate.message, candidate.errorClass), candidate)
    return list(unique.values())


def _exception_of(block: str) -> Candidate | None:
    """The exception a traceback block ends with: its first unindented `Class: message` line,
    with every line after it (a message may span lines)."""
    lines = block.strip("\n").split("\n")
    for index, line in enumerate(lines):
        # frames and code lines are indented; log lines before the exception are skipped
        if not line or line[0].isspace() or line.startswith(_TRACEBACK_HEADER):
            continue
        head = _EXCEPTION_LINE.match(line)
        if head is None:
            continue
        rest = "\n".join([head["msg"] or "", *lines[index + 1 :]])
        rest = _PYDANTIC_FOOTER.sub("", rest).strip()
        return Candidate(rest, _short_class(head["cls"]))
    return None


def _short_class(name: str) -> str | None:
    short = name.rsplit(".", 1)[-1]
    # `Error: msg` is how CLIs print any failure: it names no class
    return None if short in ("Error", "Exception") else short
