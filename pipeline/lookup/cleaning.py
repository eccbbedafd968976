"""Pasted text -> the text a traceback reader can parse: line endings made `\\n`, terminal colour
codes removed, Markdown quoting and code fences dropped, and the prefixes that loggers, launchers
and process supervisors put before every line stripped."""

from __future__ import annotations

import os
import re

# Terminal escape sequences: CSI (colours, cursor moves), OSC (title, hyperlinks, clipboard),
# the other two-byte ESC sequences, and the 8-bit CSI.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]"
)
# A colour code whose ESC was lost on the way (`[31mERROR[0m`).
_BARE_COLOUR = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")

# Prefixes that loggers and launchers put before every line.
_LINE_PREFIXES = (
    re.compile(r"\([^()\n]*\bpid=\d+[^()\n]*\) ?"),  # vLLM and Ray: (APIServer pid=2994609)
    re.compile(r"\[(?:rank|default)\d+\]: ?"),  # torch.distributed and torchrun: [rank0]:
    re.compile(r"\[\d+,\d+\]<std(?:out|err)>: ?"),  # mpirun: [1,0]<stderr>:
    # vLLM's logger: INFO 08-14 12:00:01 [file.py:12]
    re.compile(
        r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) +\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?"
        r" +\[[^\]\n]*\] ?"
    ),
    # SGLang and others: [2026-08-14 12:00:01 TP0]
    re.compile(r"\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[^\]\n]*\] ?"),
    # ISO timestamps (kubectl --timestamps, GitHub Actions logs, logging's asctime)
    re.compile(
        r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})? "
        r"(?:- )?"
    ),
    re.compile(r"[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \S+ [\w.@-]+(?:\[\d+\])?: "),  # syslog
    re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)(?::[\w.]*)?: ?(?=\S)"),  # logging default
)
# A common prefix is cut only when it ends like a prefix does: `) `, `] `, `| `, `: `, `> `.
_PREFIX_END = re.compile(r"[)\]|:>] $")
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+-]*\s*$")
_QUOTE = re.compile(r"^ {0,3}> ?")


def clean(text: str) -> str:
    """The pasted text with every wrapping of its lines removed (see the module's doc)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _BARE_COLOUR.sub("", _ESCAPES.sub("", text))
    lines = [line for line in text.split("\n") if not _FENCE.match(line)]
    filled = [line for line in lines if line.strip()]
    if filled and all(_QUOTE.match(line) for line in filled):  # a Markdown quote
        lines = [_QUOTE.sub("", line, count=1) for line in lines]
    return strip_line_prefixes("\n".join(lines))


def strip_line_prefixes(text: str) -> str:
    """Remove log-line prefixes of known shapes from every line, then a prefix common to all."""
    lines = [_strip_known(line) for line in text.split("\n")]
    filled = [line for line in lines if line.strip()]
    if len(filled) >= 2:
        common = os.path.commonprefix(filled)
        common = common[: common.rfind(" ") + 1]
        while common and not _PREFIX_END.search(common):
            common = common[: common.rstrip(" ").rfind(" ") + 1]
        if common.strip():
            lines = [line[len(common) :] if line.startswith(common) else line for line in lines]
    return "\n".join(lines)


# Prefixes are short and few: looking further cannot find one, and bounds the work per line.
_PREFIX_REACH = 200
_PREFIXES_PER_LINE = 8


def _strip_known(line: str) -> str:
    for _ in range(_PREFIXES_PER_LINE):
        for prefix in _LINE_PREFIXES:
            found = prefix.match(line, 0, _PREFIX_REACH)
            if found and found.end() > 0:
                line = line[found.end() :]
                break
        else:
            return line
    return line
