"""A raise's message as parts (extractors/parts.py), reconstructed from libcst nodes.

Each message form (string literal, f-string, implicit and `+` concatenation, `%`
formatting, `.format(...)`, `str(x)`, a local name, a conditional expression, `sep.join`
of a list, a tuple or list shown by `str()`, a same-file helper's return) is one small
function below that returns a Message, or None when the node is not of its form; whatever
no form claims becomes one unknown Hole written with the expression's exact source.
Nothing is invented: a run-time part we cannot know stays a Hole and the status says so.

Choices a reader of the output should know:
- `{x=}` in an f-string is written as what it renders, `x={x!r}` (the literal `x=`, then
  the repr; `{x=:.2f}` gives `x={x:.2f}`, whitespace around `=` kept).
- `%` conversions are written in format-spec form: `%s` -> `{x}`, `%r` -> `{x!r}`,
  `%a` -> `{x!a}`, anything else keeps its printf spec after a colon (`%.2f` -> `{x:.2f}`,
  `%d` -> `{x:d}`).
- `str(x)` -> `{x}`, `repr(x)` -> `{x!r}`.
- A formatted value whose own text is known (a string literal, a name that `lookup`
  resolves to text) is written out instead of a Hole when no conversion or spec applies.
- `ValueError("a", x)` is what Python prints for it, the tuple `('a', {x!r})`.
"""

from __future__ import annotations

import _string  # the parser behind string.Formatter, as str.format itself parses fields
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import libcst as cst

from extractors.parts import (
    EMPTY,
    Choice,
    Entry,
    Hole,
    Items,
    Message,
    Part,
    Repeat,
    Shown,
    Text,
    choice,
    displayed,
    joined,
    merge_items,
    repr_of,
    unknown_items,
)
from extractors.parts import literal as _literal
from extractors.syntax.code_line import code_on_one_line

__all__ = [
    "Choice",
    "Hole",
    "Items",
    "Message",
    "Part",
    "Repeat",
    "Shown",
    "Text",
    "Value",
    "Lookup",
    "Helpers",
    "Reader",
    "FORMS",
    "message_of",
    "message_of_args",
    "value_of",
    "hole_source",
    "merge_values",
]

# What a local name can hold that a message can be made of: text, or a list or tuple of it.
Value = Message | Items
Lookup = Callable[[str], "Value | None"]


class Helpers(Protocol):
    """The same-file helpers a validator may call for its message (extractors/helpers.py)."""

    def knows(self, call: cst.Call) -> bool:
        """Whether `call` calls one of these helpers (a cheap test)."""
        ...

    def inline(self, call: cst.Call, reader: Reader) -> Value | None:
        """The value `call` returns, read from the helper's returns, or None when `call`
        is not a call of a helper whose every return is a message."""
        ...


def message_of(expr: cst.BaseExpression, module: cst.Module, lookup: Lookup) -> Message:
    """The message that `expr` evaluates to at run time, as far as the source tells."""
    return Reader(module, lookup).message(expr)


def value_of(
    expr: cst.BaseExpression,
    module: cst.Module,
    lookup: Lookup,
    helpers: Helpers | None = None,
    renames: Mapping[str, cst.BaseExpression] | None = None,
) -> Value:
    """What `expr` evaluates to when that is a list or tuple of messages, else its message."""
    return Reader(module, lookup, helpers, renames).value(expr)


def message_of_args(
    args: Sequence[cst.Arg], module: cst.Module, lookup: Lookup, helpers: Helpers | None = None
) -> Message:
    """The message of `ValueError(*args)`.

    No argument (`raise ValueError`, `ValueError()`) is the empty literal message; one
    positional argument is its message; several are `str()` of the tuple of them, as
    Python prints the error. A starred or keyword argument leaves one unknown Hole with
    the arguments' source.
    """
    reader = Reader(module, lookup, helpers)
    if not args:
        return Message()
    if any(arg.star or arg.keyword is not None for arg in args):
        return _unknown(", ".join(reader.arg_source(arg) for arg in args))
    if len(args) == 1:
        return reader.message(args[0].value)
    shown = displayed(Items(tuple(reader.entry(arg.value) for arg in args), "()"))
    assert shown is not None  # a tuple of plain arguments has a known length
    return shown


def merge_values(values: Sequence[Value]) -> Value | None:
    """One of `values` at run time, as one value; None when they are not all text or all
    lists (a name that holds a string on one branch and a list on another is unknown)."""
    if all(isinstance(v, Message) for v in values):
        return choice(values)  # type: ignore[arg-type]
    if all(isinstance(v, Items) for v in values):
        return merge_items(values)  # type: ignore[arg-type]
    return None


def _unknown(source: str) -> Message:
    return Message((Hole(source, False),))


def _joined(messages: Sequence[Message]) -> Message:
    return Message(tuple(part for message in messages for part in message.parts))


class _Renamer(cst.CSTTransformer):
    """An inlined helper's parameters written as the caller's arguments."""

    def __init__(self, renames: Mapping[str, cst.BaseExpression]) -> None:
        self.renames = renames

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.renames.get(original.value, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)  # `x.name`: not the parameter

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # `f(name=...)` neither


class Reader:
    """One reconstruction: the module (for source text), the local-name lookup, the
    same-file helpers it may inline, and (inside an inlined helper) the parameters to
    write as the caller's arguments."""

    def __init__(
        self,
        module: cst.Module,
        lookup: Lookup,
        helpers: Helpers | None = None,
        renames: Mapping[str, cst.BaseExpression] | None = None,
    ) -> None:
        self.module = module
        self.lookup = lookup
        self.helpers = helpers
        self.renames = renames or {}

    def message(self, expr: cst.BaseExpression) -> Message:
        for form in FORMS:
            found = form(self, expr)
            if found is not None:
                return found
        return _unknown(self.source(expr))

    def value(self, expr: cst.BaseExpression) -> Value:
        """A list or tuple of messages where `expr` is one (a display, a name or a helper
        that holds one), else the message of `expr`."""
        if isinstance(expr, (cst.List, cst.Tuple)):
            items = self.items(expr)
            if items is not None:
                return items
        elif isinstance(expr, cst.Name):
            found = self.lookup(expr.value)
            if isinstance(found, Items):
                return found
        elif isinstance(expr, cst.Call) and self.helpers is not None:
            if self.helpers.knows(expr):
                found = self.helpers.inline(expr, self)
                if isinstance(found, Items) or (found is not None and found.has_text()):
                    return found
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            left, right = self.value(expr.left), self.value(expr.right)
            if isinstance(left, Items) and isinstance(right, Items):
                return left.extended(right.entries)  # list + list
        return self.message(expr)

    def items(self, expr: cst.BaseExpression) -> Items | None:
        """The entries of a list or tuple display, or of a name that holds a list."""
        if isinstance(expr, cst.Name):
            found = self.lookup(expr.value)
            return found if isinstance(found, Items) else None
        if not isinstance(expr, (cst.List, cst.Tuple)):
            return None
        entries = []
        for element in expr.elements:
            if isinstance(element, cst.StarredElement):
                entries.append(unknown_items(self.source(element.value)))
            else:
                entries.append(self.entry(element.value))
        return Items(tuple(entries), "[]" if isinstance(expr, cst.List) else "()")

    def entry(self, expr: cst.BaseExpression) -> Entry:
        """An item of a list or tuple: its str() and its repr()."""
        nested = self.items(expr)
        if nested is not None:  # a list's repr is its str
            shown_list = displayed(nested)
            if shown_list is not None:
                return Entry(shown_list, shown_list)
        value = self.message(expr)
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)) or (
            isinstance(expr, cst.Name) and expr.value in ("True", "False", "None")
        ):
            return Entry(value, _literal(self.source(expr)))  # not a str: repr is the source
        shown = repr_of(value) if value.has_text() else None
        if shown is None:
            shown = Message((Hole(self.source(expr) + "!r", True),))
        return Entry(value, shown)

    def written(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """`node` as the message writes it (an inlined helper's parameters renamed)."""
        if not self.renames:
            return node
        return node.visit(_Renamer(self.renames))  # type: ignore[return-value]

    def source(self, node: cst.CSTNode) -> str:
        if self.renames:
            node = node.visit(_Renamer(self.renames))
        return hole_source(self.module.code_for_node(node))

    def arg_source(self, arg: cst.Arg) -> str:
        keyword = f"{arg.keyword.value}=" if arg.keyword is not None else ""
        return arg.star + keyword + self.source(arg.value)

    def formatted(self, expr: cst.BaseExpression, suffix: str = "") -> Message:
        """A value formatted into the message; `suffix` is its `!conv:spec` as written."""
        if not suffix:
            # str() of a value whose text we know is that text: write it out.
            constant = self.written(expr)
            if isinstance(constant, (cst.Integer, cst.Float)):
                return _literal(str(constant.evaluated_value))
            if isinstance(constant, cst.Name) and constant.value in ("None", "True", "False"):
                return _literal(constant.value)
            inner = self.message(expr)
            if inner.has_text() or inner.literal() is not None:
                return inner
        return Message((Hole(self.source(expr) + suffix, True),))


# --- forms -------------------------------------------------------------------------------


def string_literal(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """'a', "a", '''a''', r'a\\d', u'a' -> their run-time text; bytes are not a message."""
    if not isinstance(expr, cst.SimpleString):
        return None
    value = expr.evaluated_value
    return _literal(value) if isinstance(value, str) else None


def implicit_concatenation(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """'a ' f'b {x}' -> the parts of each piece in turn."""
    if not isinstance(expr, cst.ConcatenatedString):
        return None
    pieces = (expr.left, expr.right)
    if any(isinstance(p, cst.SimpleString) and "b" in p.prefix.lower() for p in pieces):
        return None  # bytes are not a message
    return reader.message(expr.left) + reader.message(expr.right)


def fstring(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """f'got {cfg.mode!r}' -> Text 'got ', Hole 'cfg.mode!r'; `{{`/`}}` become braces."""
    if not isinstance(expr, cst.FormattedString):
        return None
    raw = "r" in expr.prefix.lower()
    parts: list[Message] = []
    for part in expr.parts:
        if isinstance(part, cst.FormattedStringText):
            text = part.value.replace("{{", "{").replace("}}", "}")
            parts.append(_literal(text if raw else decode_escapes(text)))
        else:
            parts.append(_fstring_field(reader, part))
    return _joined(parts)


def _fstring_field(reader: Reader, field: cst.FormattedStringExpression) -> Message:
    spec = None
    if field.format_spec is not None:
        spec = "".join(
            p.value if isinstance(p, cst.FormattedStringText) else reader.source(p)
            for p in field.format_spec
        )
    conversion = field.conversion
    label = Message()
    if field.equal is not None:
        # `{x = }` renders its own source text, then the repr unless a conversion or
        # spec says otherwise.
        label = _literal(
            field.whitespace_before_expression.value
            + reader.module.code_for_node(field.expression)
            + field.whitespace_after_expression.value
            + field.equal.whitespace_before.value
            + "="
            + field.equal.whitespace_after.value
        )
        if conversion is None and spec is None:
            conversion = "r"
    suffix = (f"!{conversion}" if conversion else "") + (f":{spec}" if spec is not None else "")
    return label + reader.formatted(field.expression, suffix)


def plus_concatenation(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """'a' + x + str(n) -> the parts of each operand; two unknowns added stay one Hole."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add)):
        return None
    if reader.items(expr.left) is not None or reader.items(expr.right) is not None:
        return None  # lists added: not text
    joined = reader.message(expr.left) + reader.message(expr.right)
    formatted = any(isinstance(p, Hole) and p.formatted for p in joined.parts)
    if not joined.has_text() and not formatted:
        return None  # nothing says these are strings (could be numbers): one Hole
    return joined


def str_call(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """str(x) -> Hole 'x', repr(x) -> Hole 'x!r' (formatted values)."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)):
        return None
    if expr.func.value not in ("str", "repr") or len(expr.args) != 1:
        return None
    (arg,) = expr.args
    if arg.star or arg.keyword is not None:
        return None
    return reader.formatted(arg.value, "!r" if expr.func.value == "repr" else "")


def local_name(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """A name -> what `lookup` says it holds (a list: as `str()` prints it), else an
    unknown Hole with the name."""
    if not isinstance(expr, cst.Name):
        return None
    if expr.value in ("None", "True", "False"):
        return _literal(expr.value)  # what str() gives for them
    found = reader.lookup(expr.value)
    if isinstance(found, Items):
        found = displayed(found)
    return found if found is not None else _unknown(reader.source(expr))


def conditional_expression(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """`f" since {r}" if r else ""` -> the optional piece `{? since {r}}`; `"a" if c else
    "b"` -> `{?a|b}`. With no known text on either side it stays one Hole."""
    if not isinstance(expr, cst.IfExp):
        return None
    found = choice([reader.message(expr.body), reader.message(expr.orelse)])
    return found if found.has_text() else None


def join_call(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """`" ".join(parts)` of a list or tuple whose items are known (a display, or a local
    list built with `append`), with a known separator -> the items with separators between
    them; an item appended under a condition may be absent (`{?...}`)."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)):
        return None
    if expr.func.attr.value != "join" or len(expr.args) != 1:
        return None
    (arg,) = expr.args
    if arg.star or arg.keyword is not None:
        return None
    separator = reader.message(expr.func.value).literal()
    items = reader.items(arg.value)
    if separator is None or items is None:
        return None
    if not items.entries:
        return EMPTY
    return joined(separator, items) if items.has_text() else None


def sequence_display(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """A tuple or list display as a message is what `str()` prints for it:
    `("a", f"b {x}")` -> `('a', 'b {x}')`."""
    if not isinstance(expr, (cst.Tuple, cst.List)):
        return None
    items = reader.items(expr)
    return displayed(items) if items is not None else None


def helper_call(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """`_msg(x)` of a same-file helper whose every return is a message (`def _msg(name):
    return f"bad {name}"`) -> its returns with the arguments written in, one level deep."""
    if not isinstance(expr, cst.Call) or reader.helpers is None:
        return None
    if not reader.helpers.knows(expr):
        return None
    found = reader.helpers.inline(expr, reader)
    if isinstance(found, Items):
        found = displayed(found)
    return found if found is not None and found.has_text() else None


def _known_template(reader: Reader, expr: cst.BaseExpression) -> str | None:
    """The text of a format string whose every character is known, else None."""
    template = reader.message(expr).literal()
    return template or None


_PRINTF = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?"
    r"(?:\.(?P<precision>\*|\d*))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)


def percent_format(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """'bad %s' % x, '%s and %r' % (a, b), '%(n)d' % {'n': n}; `%%` is a percent sign."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo)):
        return None
    fmt = _known_template(reader, expr.left)
    if fmt is None:
        return None  # not a known format string: could be a number modulo
    specs: list[re.Match[str]] = []
    position = 0
    while (start := fmt.find("%", position)) >= 0:
        spec = _PRINTF.match(fmt, start)
        if spec is None:
            return None  # a ValueError of its own at run time; not a message we can show
        specs.append(spec)
        position = spec.end()
    values = _PercentValues(reader, expr.right, [s for s in specs if s["type"] != "%"])
    parts: list[Message] = []
    position = 0
    for spec in specs:
        parts.append(_literal(fmt[position : spec.start()]))
        parts.append(_literal("%") if spec["type"] == "%" else values.next(spec))
        position = spec.end()
    parts.append(_literal(fmt[position:]))
    return _joined(parts)


class _PercentValues:
    """The right operand of `%`, handed out one conversion at a time."""

    def __init__(self, reader: Reader, right: cst.BaseExpression, specs: list[re.Match[str]]):
        self.reader = reader
        self.right = right
        self.index = 0
        self.items: list[cst.BaseExpression] | None = None  # None: arity not known
        self.mapping: dict[str, cst.BaseExpression] | None = None
        keyed = any(s["key"] is not None for s in specs)
        wanted = sum(1 + (s["width"] == "*") + (s["precision"] == "*") for s in specs)
        if keyed:
            if isinstance(right, cst.Dict):
                self.mapping = _dict_literal(right)
        elif isinstance(right, cst.Tuple):
            if all(isinstance(e, cst.Element) for e in right.elements):
                items = [e.value for e in right.elements]
                self.items = items if len(items) == wanted else None
        elif wanted == 1:
            self.items = [right]

    def next(self, spec: re.Match[str]) -> Message:
        suffix = _printf_suffix(spec)
        if spec["key"] is not None:
            value = self.mapping.get(spec["key"]) if self.mapping is not None else None
            written = f"{self.reader.source(self.right)}[{spec['key']!r}]"
        else:
            self.index += (spec["width"] == "*") + (spec["precision"] == "*")
            value = self.items[self.index] if self.items is not None else None
            written = f"{self.reader.source(self.right)}[{self.index}]"
            self.index += 1
        if value is None:
            return Message((Hole(written + suffix, False),))
        return self.reader.formatted(value, suffix)


def _dict_literal(node: cst.Dict) -> dict[str, cst.BaseExpression] | None:
    mapping: dict[str, cst.BaseExpression] = {}
    for element in node.elements:
        if not isinstance(element, cst.DictElement):
            return None  # `**other` makes the keys unknown
        key = element.key
        if not isinstance(key, cst.SimpleString) or not isinstance(key.evaluated_value, str):
            return None
        mapping[key.evaluated_value] = element.value
    return mapping


def _printf_suffix(spec: re.Match[str]) -> str:
    """A printf conversion written the f-string way: '' for %s, '!r', else ':<spec>'."""
    kind = spec["type"]
    plain = not (spec["flags"] or spec["width"] or spec["precision"] is not None)
    if plain and kind in "sra":
        return "" if kind == "s" else f"!{kind}"
    precision = f".{spec['precision']}" if spec["precision"] is not None else ""
    return f":{spec['flags']}{spec['width'] or ''}{precision}{kind}"


def format_call(reader: Reader, expr: cst.BaseExpression) -> Message | None:
    """'{} and {name!r}'.format(a, name=b) -> Holes 'a', 'b!r'; unknown fields as written."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)):
        return None
    if expr.func.attr.value != "format":
        return None
    template = _known_template(reader, expr.func.value)
    if template is None:
        return None
    try:
        fields = list(_string.formatter_parser(template))
    except ValueError:
        return None  # malformed template: str.format raises instead
    arguments = _FormatArguments(reader, expr.args)
    parts: list[Message] = []
    for literal, name, spec, conversion in fields:
        parts.append(_literal(literal))
        if name is not None:
            parts.append(arguments.field(name, spec, conversion))
    return _joined(parts)


class _FormatArguments:
    """The arguments of a `.format(...)` call, resolved field by field."""

    def __init__(self, reader: Reader, args: Sequence[cst.Arg]) -> None:
        self.reader = reader
        self.positional: list[cst.BaseExpression] = []
        self.keywords: dict[str, cst.BaseExpression] = {}
        self.starred = False  # after `*args`, later positions are unknown
        for arg in args:
            if arg.keyword is not None:
                self.keywords[arg.keyword.value] = arg.value
            elif arg.star == "*":
                self.starred = True
            elif arg.star == "" and not self.starred:
                self.positional.append(arg.value)
        self.auto = 0

    def field(self, name: str, spec: str | None, conversion: str | None) -> Message:
        value, rest = self._resolve(name)
        # Nested fields of the spec (`{:{width}}`) come after the field in auto numbering.
        spec_text = self._spec(spec) if spec else ""
        suffix = (f"!{conversion}" if conversion else "") + (f":{spec_text}" if spec else "")
        if value is None:
            return Message((Hole(name + suffix, False),))
        if rest:
            return Message((Hole(self.reader.source(value) + rest + suffix, True),))
        return self.reader.formatted(value, suffix)

    def _resolve(self, name: str) -> tuple[cst.BaseExpression | None, str]:
        """The argument a field names (None: unknown) and the `.attr`/`[key]` after it."""
        head = re.match(r"[^.\[]*", name).group()
        rest = name[len(head) :]
        if head == "":
            head = str(self.auto)
            self.auto += 1
        if head.isdigit():
            index = int(head)
            return (self.positional[index] if index < len(self.positional) else None), rest
        return self.keywords.get(head), rest

    def _spec(self, spec: str) -> str:
        """A format spec with its nested fields (`{w}`) written as their argument's source."""
        written = []
        for literal, name, _, _ in _string.formatter_parser(spec):
            written.append(literal)
            if name is not None:
                value, rest = self._resolve(name)
                source = name if value is None else self.reader.source(value) + rest
                written.append("{" + source + "}")
        return "".join(written)


# Every message form, tried in order: the first that claims the node gives the message.
# tests/test_messages.py holds one case table per form and fails when one has none.
FORMS: tuple[Callable[[Reader, cst.BaseExpression], Message | None], ...] = (
    string_literal,
    implicit_concatenation,
    fstring,
    local_name,
    plus_concatenation,
    percent_format,
    str_call,
    format_call,
    conditional_expression,
    join_call,
    sequence_display,
    helper_call,
)


# --- text helpers ------------------------------------------------------------------------

_ESCAPE = re.compile(
    r"\\(\n|[\\'\"abfnrtv]|[0-7]{1,3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}"
    r"|N\{[^}]+\})"
)
_SIMPLE_ESCAPES = {
    "\n": "",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}


def decode_escapes(text: str) -> str:
    """Python's escape sequences of a non-raw string body, decoded; unknown ones kept."""

    def decode(match: re.Match[str]) -> str:
        body = match.group(1)
        if body in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[body]
        if body[0] in "xuU":
            return chr(int(body[1:], 16))
        if body[0] == "N":
            try:
                return unicodedata.lookup(body[2:-1])
            except KeyError:
                return match.group()
        return chr(int(body, 8))

    return _ESCAPE.sub(decode, text) if "\\" in text else text


def hole_source(source: str) -> str:
    """Expression source as a Hole writes it: a single line exactly as written, several
    lines joined into one with their outer parentheses kept."""
    return source if "\n" not in source else code_on_one_line(source, unwrap=False)
