"""A file's settings facts assembled from its top-level segments (extractors/segments.py),
what a def or class segment gives remembered by its text: an edit elsewhere in the file
leaves a class's facts and its calls to the file's validators usable, their lines shifted.
The facts are those `file_settings` gives (tests/test_settings_segments.py
holds the two to it); the site pass makes them so, from its parse of the whole file when
it made one.

| a segment                        | what it gives the facts                  | remembered by          |
|----------------------------------|------------------------------------------|------------------------|
| `class`, `def`, decorated either | its classes and functions' spans         | its text               |
| the same                         | its calls to the file's validators       | its text, its lines    |
|                                  |                                          | that call, the callees |
|                                  |                                          | it names               |
| other top-level code             | imports, aliases, constants, the classes | parsed each time       |
|                                  | under `if`/`try`                         | (it is short)          |

The whole file is parsed, and `file_settings` has it, when the file builds a parser or reads
the environment (those facts are not cut by segment), holds a `\\r`, has a segment that does
not parse alone (or a statement across two), or defines one qualname in two segments.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass

from extractors.callers import Span, calls_of, gathered, plan_calls, spans_of
from extractors.config_classes import (
    alias_of,
    classes_of,
    constant_of,
    imports_of,
    module_statements,
)
from extractors.facts import Memo, Rules
from extractors.keys import settings_part_key
from extractors.references import scope_of
from extractors.segments import Segment, top_level_segments
from extractors.settings import file_settings, reads_environ
from extractors.settings_model import Caller, ConfigClass, FileSettings, Import
from extractors.syntax.text import has_word, split_lines

_DEF_START = ("@", "def ", "async def ", "class ")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# parse the whole file once when the memo lacks more than this share of its lines
_WHOLE_FILE_ABOVE = 0.8


class _Whole(Exception):
    """The facts cannot be cut by segment here: the whole file's are made."""


@dataclass
class _Part:
    """One segment, and what the facts take from it."""

    segment: Segment
    remembered: bool  # a def or class segment: its parts go in the memo
    body: list[ast.stmt] | None = None  # its statements, once parsed
    shift: int = 0  # what the statements' line numbers are ahead of the segment's own
    classes: list[ConfigClass] | None = None  # lines of the file
    spans: list[Span] | None = None  # lines of the file

    @property
    def offset(self) -> int:
        return self.segment.start - 1


def segmented_settings(
    source: str,
    rules: Rules,
    memo: Memo | None,
    tree: ast.Module | None = None,
    validators: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None,
) -> FileSettings:
    """`file_settings(source, tree, validators, rules)`, the def and class segments' parts
    taken from `memo` where it has them and put there otherwise (from `tree`, the whole
    file's parse, when the caller has it). Raises as `file_settings` does."""
    if memo is None or "\r" in source or "add_argument" in source or reads_environ(source):
        return file_settings(source, tree, validators, rules)
    lines = split_lines(source)
    try:
        return _assembled(source, lines, rules, memo, tree, validators)
    except _Whole:
        return file_settings(source, tree, validators, rules)


def _assembled(
    source: str,
    lines: list[str],
    rules: Rules,
    memo: Memo,
    tree: ast.Module | None,
    validators: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef] | None,
) -> FileSettings:
    cut = lines[:-1] if lines and lines[-1] == "" else lines
    parts = [_Part(s, s.text.lstrip("\n").startswith(_DEF_START)) for s in top_level_segments(cut)]
    for part in parts:
        if part.remembered:
            _recall(part, rules, memo)
    missing = sum(p.segment.end - p.offset for p in parts if p.remembered and p.spans is None)
    if tree is not None or missing > _WHOLE_FILE_ABOVE * max(1, len(cut)):
        _from_whole(parts, tree or ast.parse(source))
    for part in parts:
        if part.spans is None:
            _make(part, rules, memo)
    imports: list[Import] = []
    aliases: dict[str, list[str]] = {}
    constants: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for part in parts:
        if part.remembered:
            continue  # a def or class gives none of these
        for stmt in module_statements(_body(part)):
            imports += imports_of(stmt)
            if (alias := alias_of(stmt, aliases)) is not None:
                aliases[alias[0]] = alias[1]
            elif (constant := constant_of(stmt)) is not None:
                name, value = constant
                if isinstance(value, str):
                    texts[name] = value
                else:
                    constants[name] = value
    return FileSettings(
        imports=imports,
        aliases=aliases,
        constants=constants,
        classes=[found for part in parts for found in part.classes or ()],
        scopes={name: scope_of(node) for name, node in sorted((validators or {}).items())},
        callers=_callers(parts, lines, rules, memo, set(validators) if validators else None)
        if has_word(source, "raise")
        else {},
    )


def _callers(
    parts: list[_Part], lines: list[str], rules: Rules, memo: Memo, raising: set[str] | None
) -> dict[str, list[Caller]]:
    spans = [span for part in parts for span in part.spans or ()]
    plan = plan_calls(spans, lines, raising)
    if plan is None:
        return {}
    part_of: dict[str, int] = {}
    for number, part in enumerate(parts):
        for span in part.spans or ():
            if part_of.setdefault(span.qualname, number) != number:
                raise _Whole  # the last definition would be read across segments
    found: list[tuple[str, Caller]] = []
    for number, part in enumerate(parts):
        holders = [q for q in plan.holders if part_of[q] == number]
        if holders:
            found += _calls(part, holders, plan.called_on, plan.callees, rules, memo)
    return gathered(found, spans)


def _calls(
    part: _Part,
    holders: list[str],
    called_on: list[int],
    callees: dict[str, tuple[list[str], bool]],
    rules: Rules,
    memo: Memo,
) -> list[tuple[str, Caller]]:
    """The calls a segment's `holders` make to `callees` on the `called_on` lines."""
    segment = part.segment
    own = [line - part.offset for line in called_on if segment.start <= line <= segment.end]
    named = {q: v for q, v in callees.items() if has_word(segment.text, q.rsplit(".", 1)[-1])}
    context = json.dumps([holders, own, sorted(named.items())])
    key = settings_part_key(rules, "calls", segment.text, context)
    entry = memo.get(key)
    if entry is not None:
        return [(callee, Caller.model_validate(caller)) for callee, caller in json.loads(entry)]
    body = _body(part)
    on = [line + part.shift for line in own]
    found = calls_of(ast.Module(body=body, type_ignores=[]), holders, on, named)
    memo.put(key, json.dumps([[callee, caller.model_dump()] for callee, caller in found]))
    return found


# --- the parts of one segment --------------------------------------------------------------


def _recall(part: _Part, rules: Rules, memo: Memo) -> None:
    entry = memo.get(settings_part_key(rules, "facts", part.segment.text))
    if entry is not None:
        classes, spans = json.loads(entry)
        part.classes = [ConfigClass.model_validate(_moved(c, part.offset)) for c in classes]
        part.spans = [_span(row, part.offset) for row in spans]


def _make(part: _Part, rules: Rules, memo: Memo | None) -> None:
    """A segment's classes and spans, from its statements (parsed alone if need be)."""
    body = _body(part)
    if not all(isinstance(stmt, _DEFINITIONS) for stmt in body):
        part.remembered = False  # other code after a def (`(a, b) = ...`): read as code
    lines = part.segment.text.split("\n")
    if part.shift:  # statements of the whole file's parse: their lines index the file's
        lines = [""] * part.shift + lines
    tree = ast.Module(body=body, type_ignores=[])
    classes = [c.model_dump() for c in classes_of(body, lines, "", rules)]
    relative = [_moved(c, -part.shift) for c in classes]
    spans = [
        [s.qualname, s.cls, s.start - part.shift, s.end - part.shift, list(s.params), s.static]
        for s in spans_of(tree)
    ]
    if part.remembered and memo is not None:
        memo.put(
            settings_part_key(rules, "facts", part.segment.text), json.dumps([relative, spans])
        )
    part.classes = [ConfigClass.model_validate(_moved(c, part.offset)) for c in relative]
    part.spans = [_span(row, part.offset) for row in spans]


def _body(part: _Part) -> list[ast.stmt]:
    if part.body is None:
        try:
            part.body = ast.parse(part.segment.text).body
        except (SyntaxError, ValueError, RecursionError):
            raise _Whole from None
        part.shift = 0
    return part.body


def _from_whole(parts: list[_Part], tree: ast.Module) -> None:
    """Every segment's statements from the whole file's parse (a file that is no Python
    raised making it, as `file_settings` does)."""
    statements = iter(tree.body)
    pending = next(statements, None)
    for part in parts:
        part.body, part.shift = [], part.offset
        while pending is not None and pending.lineno <= part.segment.end:
            if (pending.end_lineno or pending.lineno) > part.segment.end:
                raise _Whole  # a statement across two segments
            part.body.append(pending)
            pending = next(statements, None)
    if pending is not None:
        raise _Whole


def _span(row: list, offset: int) -> Span:
    qualname, cls, start, end, params, static = row
    return Span(qualname, cls, start + offset, end + offset, tuple(params), static)


def _moved(dumped: dict, by: int) -> dict:
    """A dumped ConfigClass with its lines (and its fields') moved `by` lines."""
    return {
        **dumped,
        "line": dumped["line"] + by,
        "fields": [{**f, "line": f["line"] + by} for f in dumped["fields"]],
    }
