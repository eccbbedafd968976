"""JSON text of the dataset files, safe for every reader of JSON Lines: U+2028, U+2029 and
U+0085 are escaped (valid JSON either way, but `str.splitlines()` and JavaScript line readers
break lines on them), and lines are split on `\\n` only."""

from __future__ import annotations

from pydantic import BaseModel

_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"}


def escape_line_breaks(text: str) -> str:
    """JSON text with the Unicode line breaks escaped; other text keeps its bytes. Outside
    strings JSON has no such characters, so this only touches string contents."""
    if not any(char in text for char in _LINE_BREAKS):
        return text
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text


def json_text(model: BaseModel, *, indent: int | None = None) -> str:
    """A model as compact (or indented) JSON with the Unicode line breaks escaped."""
    return escape_line_breaks(model.model_dump_json(indent=indent))


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text: split on `\\n` only (a final newline ends the last
    line; `\\r\\n` endings are accepted)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]
