r"""Pasted text -> the text a traceback reader can parse: line endings made `\n`, terminal colour
codes removed, Markdown quoting and code fences dropped, and the prefixes that loggers, launchers
and process supervisors put before every line stripped, several on one line too (a container's
name, a process tag, a timestamp, a logger's level, name and `[file.py:N]`).

Each cleaned line keeps the log record it belongs to (`Line.record`: the level and source its
logger prefix named): a message's lines are the error line and those after it that start no
other record (tracebacks.py), so an access-log line logged after the error is no part of it.

| line                                                                   | text         | record                   |
|------------------------------------------------------------------------|--------------|--------------------------|
| `ValueError: x`                                                        | as is        | None                     |
| `ERROR 08-14 12:00:01 [core.py:7] ValueError: x`                       | `ValueError: x` | `ERROR [core.py:7]`   |
| `INFO:     127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 400 Bad Request` | the request | `INFO`            |
| `api-1  \| (APIServer pid=1) ERROR 08-14 12:00:01 [serving.py:1262] ValueError: x` | `ValueError: x` | `ERROR [serving.py:1262]` |
| `2026-08-14 12:00:01,123 - vllm.engine - ERROR - ValueError: x`        | `ValueError: x` | `ERROR vllm.engine`   |
| `[2026-08-14 12:00:01 TP0] Scheduler hit an exception: ...`             | what follows | `log TP0`                |

tests/test_explain_pastes.py holds this table and one for each prefix."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

# Terminal escape sequences: CSI (colours, cursor moves), OSC (title, hyperlinks, clipboard),
# the other two-byte ESC sequences, and the 8-bit CSI.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]"
)
# A colour code whose ESC was lost on the way (`[31mERROR[0m`).
_BARE_COLOUR = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")

_LEVEL = r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)"
# Prefixes that loggers, launchers and supervisors put before every line. A named group
# `level` (and `source`), or a logger's `stamp`, says which log record the line starts.
_LINE_PREFIXES = (
    re.compile(r"[\w.-]+[-_]\d+ +\| "),  # docker compose: `api-1  | `, `vllm_1 | `
    re.compile(r"\([^()\n]*\bpid=\d+[^()\n]*\) ?"),  # vLLM and Ray: (APIServer pid=2994609)
    re.compile(r"\[(?:rank|default)\d+\]: ?"),  # torch.distributed and torchrun: [rank0]:
    re.compile(r"\[\d+,\d+\]<std(?:out|err)>: ?"),  # mpirun: [1,0]<stderr>:
    # vLLM's logger: INFO 08-14 12:00:01 [file.py:12]
    re.compile(
        _LEVEL + r" +\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?"
        r" +(?P<source>\[[^\]\n]*\]) ?"
    ),
    # SGLang and others: [2026-08-14 12:00:01 TP0]
    re.compile(r"\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?P<stamp>[^\]\n]*)\] ?"),
    # ISO timestamps (kubectl --timestamps, GitHub Actions logs, logging's asctime)
    re.compile(
        r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})? "
        r"(?:- )?"
    ),
    re.compile(r"[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \S+ [\w.@-]+(?:\[\d+\])?: "),  # syslog
    # logging's `%(name)s - %(levelname)s - `
    re.compile(r"(?P<source>[A-Za-z_][\w.]*) - " + _LEVEL + " - "),
    # a level and a source file alone: `ERROR [serving.py:1262] `, and the file alone
    re.compile(_LEVEL + r" +(?P<source>\[[\w./-]+\.py:\d+\]) ?"),
    re.compile(r"(?P<source>\[[\w./-]+\.py:\d+\]) ?"),
    # uvicorn: `INFO:     127.0.0.1:5000 - "POST ..."`
    re.compile(_LEVEL + r":  +"),
    # logging's default: ERROR:root:
    re.compile(_LEVEL + r"(?P<source>:[\w.]*)?: ?(?=\S)"),
)
# A common prefix is cut only when it ends like a prefix does: `) `, `] `, `| `, `: `, `> `.
_PREFIX_END = re.compile(r"[)\]|:>] $")
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+-]*\s*$")
_QUOTE = re.compile(r"^ {0,3}> ?")


@dataclass(frozen=True)
class Line:
    """A cleaned line, and the log record its prefixes started (None: no logger's prefix)."""

    text: str
    record: str | None = None


def clean(text: str) -> str:
    """The pasted text with every wrapping of its lines removed (see the module's doc)."""
    return "\n".join(line.text for line in clean_lines(text))


def clean_lines(text: str) -> list[Line]:
    """The pasted text's lines with their wrappings removed, each with its log record."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _BARE_COLOUR.sub("", _ESCAPES.sub("", text))
    lines = [line for line in text.split("\n") if not _FENCE.match(line)]
    filled = [line for line in lines if line.strip()]
    if filled and all(_QUOTE.match(line) for line in filled):  # a Markdown quote
        lines = [_QUOTE.sub("", line, count=1) for line in lines]
    return _without_prefixes(lines)


def strip_line_prefixes(text: str) -> str:
    """Remove log-line prefixes of known shapes from every line, then a prefix common to all."""
    return "\n".join(line.text for line in _without_prefixes(text.split("\n")))


def _without_prefixes(raw: list[str]) -> list[Line]:
    lines = [_strip_known(line) for line in raw]
    filled = [line.text for line in lines if line.text.strip()]
    if len(filled) >= 2:
        common = os.path.commonprefix(filled)
        common = common[: common.rfind(" ") + 1]
        while common and not _PREFIX_END.search(common):
            common = common[: common.rstrip(" ").rfind(" ") + 1]
        if common.strip():
            lines = [
                Line(line.text[len(common) :], line.record)
                if line.text.startswith(common)
                else line
                for line in lines
            ]
    return [
        Line(line.text, "access") if _ACCESS_LOG.search(line.text, 0, _PREFIX_REACH) else line
        for line in lines
    ]


# An HTTP server's access-log line: `127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 400`.
_ACCESS_LOG = re.compile(r'"(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \S+ HTTP/[\d.]+" \d{3}\b')
# Prefixes are short and few: looking further cannot find one, and bounds the work per line.
_PREFIX_REACH = 200
_PREFIXES_PER_LINE = 8


def _strip_known(line: str) -> Line:
    record = None
    for _ in range(_PREFIXES_PER_LINE):
        for prefix in _LINE_PREFIXES:
            found = prefix.match(line, 0, _PREFIX_REACH)
            if found and found.end() > 0:
                line = line[found.end() :]
                groups = found.groupdict()
                if groups.get("level"):
                    source = groups.get("source")
                    record = groups["level"] + (f" {source.lstrip(':')}" if source else "")
                elif "stamp" in groups:  # SGLang's: the same process tag, the same record
                    record = "log" + groups["stamp"]
                break
        else:
            return Line(line, record)
    return Line(line, record)
