"""A file's function table assembled from segments of it, parsing only those a memo lacks.

A top-level segment is a run of whole lines that starts at column 0 with a decorator,
`def`, `async def` or `class` (decorators join the def or class they decorate), or with
other top-level code following a def or class. A top-level class is cut the same way one
level down, at its body's indentation: its header (with the body up to the first member
def), then each member. A segment's part of the table depends on its text alone (a member's
on its text and the class's name), so it is remembered by the hash of that text; an edit
elsewhere in the file leaves the segment's entry usable, with its lines shifted.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from extractors.facts import Memo
from extractors.functions import Calls, Function, function_table
from extractors.keys import segment_key

_DEF_START = ("@", "def ", "async def ", "class ")
_CODE_START = re.compile(r"[A-Za-z_]")
_NO_HEAD = " \t#)]}\"'\f"
# clauses that continue the statement above them, never start one
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
_CLASS_NAME = re.compile(r"class\s+(\w+)")
_INDENT = re.compile(r"[ \t]+(?=[^ \t#])")
# parse the whole file (one parse) when the memo lacks more than this share of its lines
_WHOLE_FILE_ABOVE = 0.8
# a member is parsed alone inside a class of this name, which is then renamed
_PLACEHOLDER = "_"
# the memo entry of a segment left out of the table
_LEFT_OUT = "left out"


@dataclass(frozen=True)
class Segment:
    """Lines `start`..`end` of a file (1-based, inclusive) and their text; `owner` is the
    name of the top-level class a member segment belongs to (None for other segments)."""

    start: int
    end: int
    text: str
    owner: str | None = None
    # appended when parsing the text alone: a class header may end where its first member
    # starts, and then needs a body
    tail: str = ""


def split_segments(lines: list[str]) -> list[Segment]:
    """The file's segments in order; together they hold every line once."""
    segments = []
    for start, end in _runs(lines, 0, len(lines), ""):
        segments += _split_class(lines, start, end) or [_segment(lines, start, end)]
    return segments


def _runs(lines: list[str], low: int, high: int, indent: str) -> list[tuple[int, int]]:
    """(first, past-last) line indexes of the runs of lines[low:high] at this indentation."""
    if high <= low:
        return []
    starts = [low]
    width = len(indent)
    # lines at this indentation that may start a run (a blank line's "" is in any string)
    heads = [
        index
        for index in range(low, high)
        if lines[index][width : width + 1] not in _NO_HEAD and lines[index].startswith(indent)
    ]
    kind = "code"  # of the run being read: "decorator" (until its def), "def", "code"
    for index in heads:
        body = lines[index][width:]
        if body.startswith(_DEF_START):
            if kind == "decorator":
                if not body.startswith("@"):
                    kind = "def"
                continue
            if index > low:
                starts.append(index)
            kind = "decorator" if body.startswith("@") else "def"
        elif kind == "def" and _CODE_START.match(body) and not _CLAUSE.match(body):
            starts.append(index)
            kind = "code"
    return list(zip(starts, [*starts[1:], high], strict=True))


def _split_class(lines: list[str], start: int, end: int) -> list[Segment] | None:
    """A top-level class cut into its header and members, or None if this is no class."""
    # decorators, possibly over several lines, come first
    header = next((i for i in range(start, end) if lines[i].startswith("class ")), None)
    match = _CLASS_NAME.match(lines[header]) if header is not None else None
    if match is None:
        return None
    # the body's indentation: that of the first indented line that is not a comment
    indent = next(
        (found[0] for line in lines[header + 1 : end] if (found := _INDENT.match(line))), None
    )
    if indent is None:
        return None
    runs = _runs(lines, header + 1, end, indent)
    if runs and lines[runs[0][0]][len(indent) :].startswith(_DEF_START):
        head_end = header + 1  # the first member follows the `class` line at once
    elif len(runs) > 1:
        head_end, runs = runs[1][0], runs[1:]  # the body up to the first member
    else:
        return None
    return [_segment(lines, start, head_end, tail=f"{indent}pass\n")] + [
        _segment(lines, low, high, match[1]) for low, high in runs
    ]


def _segment(
    lines: list[str], start: int, end: int, owner: str | None = None, tail: str = ""
) -> Segment:
    return Segment(start + 1, end, "\n".join(lines[start:end]) + "\n", owner, tail)


class SegmentTable:
    """The function table of one file, from the memo where it can, parsing the rest.

    `functions` is what `function_table` of the whole file gives (nodes may be missing:
    they are parsed again only if a function's calls are asked for). `store()` remembers
    the segments this file parsed, once the validator pass has filled in the calls it needed.
    """

    def __init__(
        self,
        lines: list[str],
        parse_file: Callable[[], ast.Module],
        error_classes: tuple[str, ...],
        memo: Memo,
        token: str,
        segments: list[Segment] | None = None,
        only: frozenset[int] | None = None,
    ) -> None:
        self._memo = memo
        self._error_classes = error_classes
        # the file's `split_segments`, when the caller has them
        self.segments = split_segments(lines) if segments is None else segments
        self._keys = [_key(token, segment) for segment in self.segments]
        # with `only`, the other segments' functions cannot matter: they are left out,
        # unless a segment does not parse alone and the whole file is parsed
        entries = [
            memo.get(key) if only is None or index in only else _LEFT_OUT
            for index, key in enumerate(self._keys)
        ]
        missing = [index for index, entry in enumerate(entries) if entry is None]
        self._parts: list[list[Function]] = [[] for _ in self.segments]
        self._dirty: set[int] = set()
        missing_lines = sum(self.segments[i].end - self.segments[i].start + 1 for i in missing)
        parsed = None
        if missing_lines <= _WHOLE_FILE_ABOVE * len(lines):
            parsed = self._parse_segments(missing)
        if parsed is None:
            self._from_whole_file(parse_file(), missing)
        else:
            for index, entry in enumerate(entries):
                if entry is not None and entry is not _LEFT_OUT:
                    self._parts[index] = self._from_entry(index, entry)
            for index, part in parsed.items():
                self._parts[index] = part
            self._dirty.update(parsed)
        self.functions = [fn for part in self._parts for fn in part]

    def store(self) -> None:
        """Remember every segment parsed here, with the calls known by now."""
        for index in sorted(self._dirty):
            segment = self.segments[index]
            entry = [_dump(fn, segment) for fn in self._parts[index]]
            self._memo.put(self._keys[index], json.dumps(entry, separators=(",", ":")))
        self._dirty.clear()

    # -- the three ways to a segment's part ------------------------------------------------

    def _parse_segments(self, indexes: list[int]) -> dict[int, list[Function]] | None:
        """Each segment parsed on its own, or None if one does not parse alone."""
        parts = {}
        for index in indexes:
            try:
                parts[index] = self._parse(index)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
        return parts

    def _parse(self, index: int) -> list[Function]:
        segment = self.segments[index]
        # the table's lines are the file's; the nodes' lines (never read) are the text's
        if segment.owner is None:
            text, offset = segment.text + segment.tail, segment.start - 1
        else:
            text, offset = f"class {_PLACEHOLDER}:\n" + segment.text, segment.start - 2
        table = function_table(ast.parse(text), self._error_classes, offset)
        if segment.owner is not None:
            for fn in table:
                _rename(fn, _PLACEHOLDER, segment.owner)
        return table

    def _from_whole_file(self, tree: ast.Module, missing: list[int]) -> None:
        table = function_table(tree, self._error_classes)
        # A segment is remembered only if statements of the file start where it does: then
        # its part of the table is what parsing its text alone gives.
        if not self._cut_at_statements(tree):
            self._parts = [table] + [[] for _ in self.segments[1:]]
            return
        position = 0
        for index, segment in enumerate(self.segments):
            while position < len(table) and table[position].start <= segment.end:
                self._parts[index].append(table[position])
                position += 1
        self._dirty.update(missing)

    def _cut_at_statements(self, tree: ast.Module) -> bool:
        top = {_first_line(node): node for node in tree.body}
        members: tuple[str, set[int]] | None = None  # of the class being read
        for segment in self.segments:
            if segment.owner is None:
                node = top.get(segment.start)
                if node is None and segment.start != 1:
                    return False
                members = None
                if isinstance(node, ast.ClassDef):
                    members = (node.name, {_first_line(member) for member in node.body})
            elif members is None or members[0] != segment.owner or segment.start not in members[1]:
                return False
        return True

    def _from_entry(self, index: int, entry: str) -> list[Function]:
        segment = self.segments[index]
        part = [_load(row, segment) for row in json.loads(entry)]
        for fn in part:
            fn._reparse = lambda index=index: self._reparse(index)
        return part

    def _reparse(self, index: int) -> None:
        """Give the remembered part of a segment its nodes (its calls were not remembered)."""
        for fn, parsed in zip(self._parts[index], self._parse(index), strict=True):
            fn.node = parsed.node
        self._dirty.add(index)


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None)
    return decorators[0].lineno if decorators else node.lineno


def _key(token: str, segment: Segment) -> str:
    return segment_key(token, segment.owner is not None, segment.text)


def _renamed(name: str | None, old: str, new: str) -> str | None:
    if name is None:
        return None
    if name == old:
        return new
    return new + name[len(old) :] if name.startswith(old + ".") else name


def _rename(fn: Function, old: str, new: str) -> None:
    fn.qualname = _renamed(fn.qualname, old, new)
    fn.owner_class = _renamed(fn.owner_class, old, new)
    fn.parent = _renamed(fn.parent, old, new)
    fn.self_class = _renamed(fn.self_class, old, new)


def _dump(fn: Function, segment: Segment) -> list:
    """A function as its segment's entry holds it: lines relative to the segment, and
    names relative to the class for a member."""
    offset = segment.start - 1
    names = [fn.qualname, fn.owner_class, fn.parent, fn.self_class]
    if segment.owner is not None:
        names = [_renamed(name, segment.owner, _PLACEHOLDER) for name in names]
    calls = fn._calls
    return [
        *names,
        fn.name,
        list(fn.decorators),
        fn.start - offset,
        fn.def_line - offset,
        fn.end - offset,
        fn.indent,
        [line - offset for line in fn.raise_lines],
        None if calls is None else calls.to_row(),
    ]


def _load(row: list, segment: Segment) -> Function:
    (
        qualname,
        owner_class,
        parent,
        self_class,
        name,
        decorators,
        start,
        def_line,
        end,
        indent,
        raise_lines,
        calls,
    ) = row
    offset = segment.start - 1
    fn = Function(
        qualname=qualname,
        name=name,
        owner_class=owner_class,
        parent=parent,
        self_class=self_class,
        decorators=tuple(decorators),
        start=start + offset,
        def_line=def_line + offset,
        end=end + offset,
        indent=indent,
        raise_lines=[line + offset for line in raise_lines],
        node=None,
        _calls=None if calls is None else Calls.from_row(calls),
    )
    if segment.owner is not None:
        _rename(fn, _PLACEHOLDER, segment.owner)
    return fn
