"""A site's verification outcome: what running its reproducer did, read against the record.

| the run                                              | outcome            |
|------------------------------------------------------|--------------------|
| the installed raise line differs from the record's   | `stale`            |
| the module does not import                           | `not-importable`   |
| no function of that name holds the raise             | `not-callable`     |
| raised the record's class at its raise line, the     | `verified`         |
| message fully matched by `messagePattern`            |                    |
| the same, but the pattern does not match the message | `mismatch`         |
| raised the record's class at another line            | `raised-elsewhere` |
| raised anything else, ran out of time, crashed       | `other-exception`  |
| returned                                             | `no-raise`         |

"""

from __future__ import annotations

import re

from pipeline.dataset.models import IndexEntry
from pipeline.dataset.verification import Verification


def judged(
    entry: IndexEntry, answer: dict, installed_path: str, release: str, code: str, attempts: int
) -> Verification:
    """The outcome of one run of `code` (the probe's `answer`) for `entry`'s site."""
    kind = answer.get("outcome")
    common = {"id": entry.id, "release": release, "attempts": attempts}
    if kind == "not-importable":
        return Verification(
            outcome="not-importable",
            missing=answer.get("missing"),
            message=_cut(answer.get("message")),
            **common,
        )
    if kind == "no-raise":
        return Verification(outcome="no-raise", **common)
    if kind != "raised":
        return Verification(outcome="other-exception", message=_cut(kind), **common)
    message, where, line = answer.get("message", ""), answer.get("file"), answer.get("line")
    bases = answer.get("bases") or []
    raised = {
        "raisedClass": answer.get("class"),
        "message": _cut(message),
        "lineNumber": line if isinstance(line, int) and line > 0 else None,
    }
    ours = entry.errorClass.rsplit(".", 1)[-1] in bases
    if where == installed_path and line == entry.lineNumber and ours:
        if re.fullmatch(entry.messagePattern, message, re.DOTALL):
            return Verification(outcome="verified", reproducer=code, **raised, **common)
        return Verification(outcome="mismatch", **raised, **common)
    if where == "<reproducer>" and answer.get("class") in ("AttributeError", "KeyError"):
        frames = answer.get("frames") or []
        if len(frames) == 1 and line == _call_line(code):
            return Verification(outcome="not-callable", **raised, **common)
    if ours and where and where != "<reproducer>":
        return Verification(outcome="raised-elsewhere", filePath=where, **raised, **common)
    return Verification(outcome="other-exception", filePath=where, **raised, **common)


def _call_line(code: str) -> int:
    """The reproducer's last line, the validator's call."""
    return len(code.rstrip("\n").splitlines())


def _cut(text: str | None, limit: int = 500) -> str | None:
    if text is None:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"
