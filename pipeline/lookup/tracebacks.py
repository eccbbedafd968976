"""Pasted text (a message, an exception line, a whole traceback, log lines, a client's error)
-> the error messages in it, most specific first."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from pipeline.lookup.cleaning import Line, clean_lines
from pipeline.lookup.wrappers import FORMS, PYDANTIC_FOOTER, exception_head


@dataclass(frozen=True)
class Frame:
    """A traceback frame: the file as the paste names it and the function running there."""

    path: str
    function: str

    def runs(self, file_path: str, qualname: str) -> bool:
        """Whether this frame runs the function `qualname` of the repository's `file_path`
        (`Config.__post_init__` in `serve/config.py`): the frame's file ends with that path
        and its function is the qualname's last name.

        | frame                                        | record                           | runs |
        |----------------------------------------------|----------------------------------|------|
        | `/usr/lib/py/serve/config.py`, `__post_init__` | `serve/config.py`, `Config.__post_init__` | yes |
        | `C:\\py\\serve\\config.py`, `__post_init__`    | `serve/config.py`, `Config.__post_init__` | yes |
        | `/srv/myserve/config.py`, `__post_init__`    | `serve/config.py`, `Config.__post_init__` | no |
        | `/usr/lib/py/serve/config.py`, `validate`    | `serve/config.py`, `Config.__post_init__` | no |
        | `/usr/lib/py/serve/config.py`, `inner`       | `serve/config.py`, `check.<locals>.inner` | yes |
        """
        path = self.path.replace("\\", "/")
        if not (path == file_path or path.endswith("/" + file_path)):
            return False
        return self.function == qualname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Candidate:
    """One error message found in pasted text, the exception class it was raised as, and the
    frames of the traceback that raised it (innermost last; none when the paste has none, or
    for a message found inside another error's text)."""

    message: str
    errorClass: str | None = None
    frames: tuple[Frame, ...] = field(default=(), compare=False)  # not what the message is

    @cached_property
    def functions(self) -> frozenset[str]:
        """The names of the functions its frames run."""
        return frozenset(frame.function for frame in self.frames)


_CHAIN_SEPARATORS = re.compile(
    r"(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)[ \t]*"
)
# Two processes' tracebacks pasted one after the other (vLLM's engine core, then its API
# server) have no separator line: each `Traceback` header starts a block of its own.
_TRACEBACK_HEADER = "Traceback (most recent call last):"
# Unwrapping nests (a JSON body holding pydantic's rendering holding a message) only so deep,
# and a paste yields only so many messages.
_DEPTH = 4
_MAX_CANDIDATES = 40
# The innermost frames of a traceback are kept (where it was raised); a deep recursion has
# thousands.
MAX_FRAMES = 100


def candidates(text: str) -> list[Candidate]:
    """Every error message the text may hold, most specific first, without duplicates.

    Each exception of a traceback comes with the messages wrapped inside it, the last raised
    first. Unless the text holds a traceback, the text itself (cleaned) comes last, so a
    plain message is never lost to a misreading of it as an exception line."""
    lines = clean_lines(text)
    cleaned = "\n".join(line.text for line in lines).strip("\n")
    found: list[Candidate] = []
    for block in reversed(_blocks(lines)):
        exception = _exception_of(block)
        if exception is not None and exception.message:
            _unwrap(exception, found, 0)
    if _TRACEBACK_HEADER not in cleaned:
        _unwrap(_whole(cleaned.strip()), found, 0)
        if text.strip() != cleaned.strip():
            found.append(_whole(text.strip()))
    unique: dict[tuple[str, str | None], Candidate] = {}
    for candidate in found:
        if candidate.message:
            unique.setdefault((candidate.message, candidate.errorClass), candidate)
    return list(unique.values())[:_MAX_CANDIDATES]


def _whole(text: str) -> Candidate:
    """The whole text as a candidate, with the class its first line names (so a record is
    not matched against `AssertionError: ...` as if no class were named)."""
    head = exception_head(text.split("\n", 1)[0])
    return Candidate(text, head[0] if head else None)


def _blocks(lines: list[Line]) -> list[list[Line]]:
    """The lines cut at each chaining line and before each `Traceback` header."""
    blocks: list[list[Line]] = [[]]
    for line in lines:
        if _CHAIN_SEPARATORS.fullmatch(line.text):
            blocks.append([])
            continue
        if line.text.startswith(_TRACEBACK_HEADER) and blocks[-1]:
            blocks.append([])
        blocks[-1].append(line)
    return blocks


def _unwrap(candidate: Candidate, found: list[Candidate], depth: int) -> None:
    """Add the messages wrapped in `candidate` (innermost first), then the candidate."""
    if depth < _DEPTH and len(found) < _MAX_CANDIDATES:
        for form in FORMS:
            for message, error_class in form(candidate.message):
                if message != candidate.message:
                    _unwrap(Candidate(message, error_class), found, depth + 1)
    found.append(candidate)


# `  File "/srv/serve/config.py", line 12, in __post_init__`
_FRAME = re.compile(r'\s*File "(?P<path>[^"\n]+)", line \d+, in (?P<function>[^\s<>]+|<[^>\s]+>)')


def _exception_of(block: list[Line]) -> Candidate | None:
    """The exception a traceback block ends with: its first unindented `Class: message` line,
    with the lines after it that start no other log record (a message may span lines; an
    access-log line or another logger's line after it is none of it), and the frames before
    it."""
    frames: list[Frame] = []
    for index, line in enumerate(block):
        text = line.text
        frame = _FRAME.match(text)
        if frame is not None:
            frames.append(Frame(frame["path"], frame["function"]))
            continue
        # code lines are indented; log lines before the exception are skipped
        if not text or text[0].isspace() or text.startswith(_TRACEBACK_HEADER):
            continue
        head = exception_head(text)
        if head is None:
            continue
        error_class, first = head
        rest = []
        for after in block[index + 1 :]:
            if after.record is not None and after.record != line.record:
                break
            rest.append(after.text)
        message = PYDANTIC_FOOTER.sub("", "\n".join([first, *rest]))
        return Candidate(message.strip(), error_class, tuple(frames[-MAX_FRAMES:]))
    return None
