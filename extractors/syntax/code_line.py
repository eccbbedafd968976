"""Expression source as one line of text, as guards and message holes show it."""

from __future__ import annotations

import io
import tokenize

_OPEN = {"(", "[", "{"}
_CLOSE = {")", "]", "}"}
_SKIP = {
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.COMMENT,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}


def code_on_one_line(code: str, *, unwrap: bool = True) -> str:
    """Source text of an expression on one line: whitespace between tokens collapsed to one
    space (none inside brackets' edges), comments dropped, a trailing comma before a closing
    bracket on a later line dropped, and (with `unwrap`) outer parentheses removed; string
    literals are left exactly as written."""
    try:
        tokens = [
            tok
            for tok in tokenize.generate_tokens(io.StringIO(code.strip()).readline)
            if tok.type not in _SKIP
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return " ".join(code.split())
    # a trailing comma that only served a multi-line layout: `f(\n a,\n)` -> `f(a)`
    tokens = [
        tok
        for i, tok in enumerate(tokens)
        if not (
            tok.string == ","
            and i + 1 < len(tokens)
            and tokens[i + 1].string in _CLOSE
            and tokens[i + 1].start[0] != tok.end[0]
        )
    ]
    while unwrap and len(tokens) >= 2 and _wraps(tokens):
        tokens = tokens[1:-1]
    parts: list[str] = []
    for i, tok in enumerate(tokens):
        if i and tokens[i - 1].end != tok.start:
            if tokens[i - 1].string not in _OPEN and tok.string not in _CLOSE | {","}:
                parts.append(" ")
        parts.append(tok.string)
    return "".join(parts)


def _wraps(tokens: list[tokenize.TokenInfo]) -> bool:
    """Whether the first token is a `(` that the last token closes."""
    if tokens[0].string != "(" or tokens[-1].string != ")":
        return False
    depth = 0
    for tok in tokens[:-1]:
        if tok.string in _OPEN:
            depth += 1
        elif tok.string in _CLOSE:
            depth -= 1
            if depth == 0:
                return False
    return True
