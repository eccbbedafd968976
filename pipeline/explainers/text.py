"""Text from a server made valid Unicode before vmine keeps it: a JSON answer may escape a lone
surrogate (`"\\ud800"`), which no UTF-8 file or SQLite row can hold, or a NUL, which pages
and terminals must not get. Each becomes U+FFFD, the replacement character."""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_INVALID = re.compile("[\x00\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with every lone surrogate and NUL replaced by U+FFFD."""
    return _INVALID.sub(REPLACEMENT, text)
