"""A message as parts, and how parts become errorMessage, messagePattern, status and fragments.

A message is a sequence of parts: literal `Text`, a run-time `Hole`, and the pieces a
message built at run time from known parts is made of: a `Choice` (exactly one of some
known pieces; an empty option makes the piece optional) and a `Repeat` (a piece any
number of times, as a loop appends it). `Shown` is text written as it usually renders
that may differ at run time (the quotes of a repr whose contents are not all known).
`Some` holds pieces of which at least one appears (a list the code tested non-empty).

How each part is written in errorMessage (run-time parts are always inside braces, so
`literal_text` drops them):

| part | errorMessage | messagePattern |
|---|---|---|
| Text `a {b}` | `a {{b}}` (braces doubled, as in an f-string) | `a \\{b\\}` |
| Hole `n` | `{n}` (`{ {...}}` when the source starts with a brace) | `(.*?)` |
| Choice of `a`, `` | `{?a}` (may be absent) | `(.*?)` |
| Choice of `a`, `b` | `{?a|b}` (one of them; `{?a|b|}`: or neither) | `(.*?)` |
| Repeat `, {x}` | `{*, {x}}` (any number of times) | `(.*?)` |
| Shown `'` | `'` | `(.*?)` |
| Some of `{?a}{? b {x}}` | `{?a}{? b {x}}` (as its pieces) | `(?=.*?(?:a| b ))(.*?)` |

A run of adjacent run-time parts that holds a Choice, Repeat, Shown or Some is one `(.*?)`
in the pattern (several lazy holes side by side only invite backtracking); plain Holes side
by side keep one hole each, as they always had. In a message with no literal text outside
its pieces, a Some puts a lookahead before that hole: the text from there on holds the
evidence of one of its pieces (a literal text every rendering of the piece holds), so a
message made only of optional pieces still rules out unrelated text.

`Items` is a list or tuple whose entries are messages, each there once, maybe, or any
number of times; `joined` is `sep.join(items)` and `displayed` is `str(items)`, both as a
Message. `choice` merges the values a name may hold after branches, factoring out what
all of them start and end with.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from extractors.patterns import HOLE_PATTERN, escape_literal, requirement


@dataclass(frozen=True)
class Text:
    """Literal text of the message, as a reader sees it at run time (escapes decoded).

    `separator` marks the separator of a joined list: written and matched like any text,
    but not a fragment of its own (", " says nothing about which message this is).
    """

    value: str
    separator: bool = False


@dataclass(frozen=True)
class Hole:
    """A run-time part of the message, written `{expr}` with the expression's source.

    `formatted` is True for a value formatted into known text (f-string field, `%`,
    `.format`, `str(x)`), False for text we cannot know (an unresolved name, a call).
    """

    expr: str
    formatted: bool


@dataclass(frozen=True)
class Shown:
    """Text written as it usually renders that may differ at run time (a repr's quote)."""

    value: str


@dataclass(frozen=True)
class Choice:
    """Exactly one of `options` appears at run time; an empty option: the piece may be absent."""

    options: tuple[Message, ...]


@dataclass(frozen=True)
class Repeat:
    """`piece` appears any number of times, none included (appended in a loop)."""

    piece: Message


@dataclass(frozen=True)
class Some:
    """The pieces of `piece` (Choices and Repeats), at least one of which appears: the entries
    of a list that a test let through only when non-empty (`if errors: raise
    ValueError(" ".join(errors))`). `evidence`: literal texts, one of which every rendering
    with a piece holds (`some_of` finds them)."""

    piece: Message
    evidence: tuple[str, ...]


Part = Text | Hole | Shown | Choice | Repeat | Some
_PIECES = (Choice, Repeat, Shown, Some)


@dataclass(frozen=True)
class Message:
    """The parts of a message; adjacent Texts are merged and empty Texts dropped."""

    parts: tuple[Part, ...] = ()

    def __post_init__(self) -> None:
        merged: list[Part] = []
        for part in self.parts:
            if isinstance(part, Text):
                if not part.value:
                    continue
                last = merged[-1] if merged else None
                if isinstance(last, Text) and last.separator == part.separator:
                    merged[-1] = Text(last.value + part.value, part.separator)
                    continue
            merged.append(part)
        object.__setattr__(self, "parts", tuple(merged))

    def text(self) -> str:
        """errorMessage: literal text with braces doubled, each run-time part in braces."""
        return "".join(_written(part) for part in self.parts)

    def pattern(self) -> str:
        """messagePattern: escaped literal text, `(.*?)` per run-time part, no anchors; for a
        message with no literal text outside its pieces, a Some's lookahead before its hole
        (a pattern with literal text already rules unrelated text out, and stays as it is)."""
        if any(isinstance(part, Text) for part in self.parts):
            return self._pattern(requirements=False)
        return self._pattern(requirements=True)

    def _pattern(self, requirements: bool) -> str:
        out: list[str] = []
        run: list[Part] = []
        for part in (*self.parts, None):
            if part is None or isinstance(part, Text):
                if any(isinstance(p, _PIECES) for p in run):
                    if requirements:
                        out.extend(requirement(p.evidence) for p in run if isinstance(p, Some))
                    out.append(HOLE_PATTERN)
                else:
                    out.extend(HOLE_PATTERN for _ in run)
                run = []
                if part is not None:
                    out.append(escape_literal(part.value))
            else:
                run.append(part)
        return "".join(out)

    def status(self) -> str:
        """literal | template | partial | unresolved (see docs/architecture.md)."""
        if all(isinstance(p, Text) for p in self.parts):
            return "literal"
        if not self.has_text():
            return "unresolved"
        if self._has_pieces() or any(isinstance(p, Hole) and not p.formatted for p in self.walk()):
            return "partial"
        return "template"

    def _has_pieces(self) -> bool:
        """Whether some literal text may or may not appear (in a Choice or Repeat)."""
        return any(
            isinstance(p, (Choice, Repeat)) and Message((p,)).has_text() for p in self.walk()
        )

    def fragments(self) -> list[str]:
        """messageFragments: for a message with pieces that may or may not appear (a Choice
        or Repeat), every literal text of it in source order, optional ones included, except
        separators and texts without a letter or digit; [] for any other message."""
        if not self._has_pieces():
            return []
        return [
            p.value
            for p in self.walk()
            if isinstance(p, Text) and not p.separator and any(c.isalnum() for c in p.value)
        ]

    def literal(self) -> str | None:
        """The exact run-time text when the message has no run-time part, else None."""
        if all(isinstance(p, Text) for p in self.parts):
            return "".join(p.value for p in self.parts)  # type: ignore[union-attr]
        return None

    def has_text(self) -> bool:
        """Whether any literal text is known (in an optional piece too)."""
        return any(isinstance(p, Text) for p in self.walk())

    def walk(self) -> Iterator[Part]:
        """Every part in source order, the parts of Choices and Repeats after them."""
        for part in self.parts:
            yield part
            if isinstance(part, Choice):
                for option in part.options:
                    yield from option.walk()
            elif isinstance(part, (Repeat, Some)):
                yield from part.piece.walk()

    def __add__(self, other: Message) -> Message:
        return Message(self.parts + other.parts)


EMPTY = Message()


def literal(text: str) -> Message:
    return Message((Text(text),))


def _doubled(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _written(part: Part) -> str:
    if isinstance(part, Text):
        return _doubled(part.value)
    if isinstance(part, Shown):
        return _doubled(part.value)
    if isinstance(part, Hole):
        # `{{` would read as a literal brace: a source that starts with one gets a space
        return "{" + (" " if part.expr.startswith("{") else "") + part.expr + "}"
    if isinstance(part, Repeat):
        return "{*" + part.piece.text() + "}"
    if isinstance(part, Some):
        return part.piece.text()
    shown = [option.text() for option in part.options if option.parts]
    absent = len(shown) < len(part.options)
    return "{?" + "|".join(shown) + ("|" if absent and len(shown) > 1 else "") + "}"


# --- merging branches ---------------------------------------------------------------------


def choice(options: Sequence[Message]) -> Message:
    """One of `options` at run time, as one Message: what every option starts and ends with
    is kept as it is, and only the middle becomes a Choice (`bad size` or `bad size (x)` is
    `bad size{? (x)}`). Equal options count once; a Choice within an option is flattened."""
    distinct = _distinct(options)
    if len(distinct) == 1:
        return distinct[0]
    head, rests = _common_end(distinct, from_start=True)
    tail, middles = _common_end(rests, from_start=False)
    flat: list[Message] = []
    for middle in middles:
        if len(middle.parts) == 1 and isinstance(middle.parts[0], Choice):
            flat.extend(middle.parts[0].options)
        else:
            flat.append(middle)
    flat = _distinct(flat)
    # the empty option last, so `{?a|b|}` reads as "a, b or nothing"
    flat.sort(key=lambda m: not m.parts)
    middle_part: tuple[Part, ...] = (Choice(tuple(flat)),) if len(flat) > 1 else flat[0].parts
    return Message(head + middle_part + tail)


def _distinct(values: Sequence) -> list:
    """`values` without repeats, in order. Compared, not hashed: the values of branches that
    changed nothing are the same objects, which compare at once, while hashing a message
    walks all of it every time."""
    found: list = []
    for value in values:
        if not any(value is seen or value == seen for seen in found):
            found.append(value)
    return found


def _common_end(options: list[Message], from_start: bool) -> tuple[tuple[Part, ...], list[Message]]:
    """The parts every option starts (or ends) with, and what is left of each option. Texts
    that differ are cut to their common start (end) at a word boundary."""
    seqs = [list(m.parts) if from_start else list(reversed(m.parts)) for m in options]
    common: list[Part] = []
    while all(seqs):
        heads = [seq[0] for seq in seqs]
        if all(h == heads[0] for h in heads):
            common.append(heads[0])
            for seq in seqs:
                seq.pop(0)
            continue
        if all(isinstance(h, Text) and h.separator == heads[0].separator for h in heads):
            values = [h.value for h in heads]  # type: ignore[union-attr]
            shared = _shared_text(values, from_start)
            if shared:
                separator = heads[0].separator  # type: ignore[union-attr]
                common.append(Text(shared, separator))
                for seq, value in zip(seqs, values, strict=True):
                    rest = value[len(shared) :] if from_start else value[: len(value) - len(shared)]
                    seq[0] = Text(rest, separator)
        break
    if not from_start:
        common.reverse()
        seqs = [list(reversed(seq)) for seq in seqs]
    return tuple(common), [Message(tuple(seq)) for seq in seqs]


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _shared_text(values: list[str], from_start: bool) -> str:
    """The longest start (end) all values share, not ending inside a word."""
    if from_start:
        shared = os.path.commonprefix(values)
        if (
            shared
            and _word(shared[-1])
            and any(len(v) > len(shared) and _word(v[len(shared)]) for v in values)
        ):
            cut = max((i for i, c in enumerate(shared) if not _word(c)), default=-1)
            shared = shared[: cut + 1]
        return shared
    flipped = _shared_text([v[::-1] for v in values], True)
    return flipped[::-1]


# --- lists and tuples ---------------------------------------------------------------------

Times = Literal["one", "maybe", "many"]


@dataclass(frozen=True)
class Entry:
    """An entry of a list or tuple: the item as `str()` gives it (`value`) and as `repr()`
    does (`shown`), there once, maybe, or any number of times. An `unknown` entry stands
    for any number of items we cannot see (`errors.extend(more)`): its value is the Hole
    `*more`, and it takes the separators around it into its own hole."""

    value: Message
    shown: Message
    times: Times = "one"
    unknown: bool = False


@dataclass(frozen=True)
class Items:
    """A list or tuple of messages, as a local name holds it."""

    entries: tuple[Entry, ...] = ()
    brackets: str = "[]"
    # A tuple merged from same-shape tuples (a helper's `return False, f"..."` and
    # `return True, None`): the entries of each, which go together (extractors/narrowing.py
    # keeps the rows a test lets through); not part of what the value is.
    rows: tuple[tuple[Entry, ...], ...] = field(default=(), compare=False)
    # A test let the code through only with an entry in it (`if errors:`,
    # extractors/narrowing.py): at least one of the entries is there.
    filled: bool = False

    def has_text(self) -> bool:
        return any(entry.value.has_text() for entry in self.entries)

    def extended(self, entries: Sequence[Entry]) -> Items:
        return Items(self.entries + tuple(entries), self.brackets, filled=self.filled)


def unknown_items(source: str) -> Entry:
    """Any number of items of `source` (`*source`), none of them known."""
    value = Message((Hole(f"*{source}", False),))
    shown = Message((Hole(f"*{source}", True),))  # their reprs: formatted values
    return Entry(value, shown, "many", unknown=True)


def joined(separator: str, items: Items, shown: bool = False) -> Message:
    """`separator.join(items)` (with `shown`: the items' reprs, as `str()` of the list shows
    them, where the `, ` between them is part of the text). The separator goes with the
    entry it precedes; before the first entry that is surely there, it goes after the
    optional entries instead, so every piece reads as it would appear."""
    parts: list[Part] = []
    first_sure = next(
        (i for i, e in enumerate(items.entries) if e.times == "one" and not e.unknown), None
    )
    sep = Message((Text(separator, separator=not shown),))
    for index, entry in enumerate(items.entries):
        value = entry.shown if shown else entry.value
        if entry.unknown:
            parts.extend(value.parts)
            continue
        if first_sure is not None and index < first_sure:
            piece = value + sep
        elif index == 0 or index == first_sure:
            piece = value
        else:
            piece = sep + value
        if entry.times == "one":
            parts.extend(piece.parts)
        elif entry.times == "maybe":
            parts.extend(choice([piece, EMPTY]).parts)
        else:
            parts.append(Repeat(piece))
    if items.filled and first_sure is None:
        return some_of(items, Message(tuple(parts)))
    return Message(tuple(parts))


def some_of(items: Items, pieces: Message) -> Message:
    """The joined `pieces` of a list known to hold an entry, none of them surely: a Some
    when every entry has evidence (a literal text each of its renderings holds), else the
    pieces as they are (an entry without one, or one we cannot see, may be the one there).

    | entries (each maybe there)             | evidence                     |
    |----------------------------------------|------------------------------|
    | `"no DoRA."`, `f"rank {r} too big."`   | `no DoRA.`, ` too big.`      |
    | `f"{a} or {b}"`, `"no bias"`           | ` or `, `no bias`            |
    | `"no bias"`, `f"{detail}"`             | none: `{detail}` has no text |
    | `"no bias"`, `*more` (unknown items)   | none                         |
    | `"a"` or `"b"` (one entry, two branches) | `a`, `b`                   |
    """
    evidence: list[str] = []
    for entry in items.entries:
        found = None if entry.unknown else _evidence(entry.value)
        if found is None:
            return pieces
        evidence.extend(text for text in found if text not in evidence)
    return Message((Some(pieces, tuple(evidence)),)) if evidence else pieces


def _evidence(message: Message) -> tuple[str, ...] | None:
    """Literal texts one of which every rendering of `message` holds: its longest text with a
    letter or digit, else one of each option of a Choice it is; None when there is none."""
    texts = [p.value for p in message.parts if isinstance(p, Text) and _wordy(p.value)]
    if texts:
        return (max(texts, key=len),)
    if len(message.parts) == 1 and isinstance(message.parts[0], Choice):
        found: list[str] = []
        for option in message.parts[0].options:
            inner = _evidence(option)
            if inner is None:
                return None
            found.extend(inner)
        return tuple(found)
    return None


def _wordy(text: str) -> bool:
    return any(char.isalnum() for char in text)


def displayed(items: Items) -> Message | None:
    """`str(items)`: the reprs of the entries in brackets, as Python prints a list or tuple;
    None for a tuple whose length is not known (a 1-tuple needs its trailing comma)."""
    opening, closing = items.brackets
    single = ""
    if opening == "(":
        if any(e.times != "one" or e.unknown for e in items.entries):
            return None
        single = "," if len(items.entries) == 1 else ""
    return literal(opening) + joined(", ", items, shown=True) + literal(single + closing)


def merge_items(options: Sequence[Items]) -> Items:
    """The list after branches that each left one of `options`: the entries all of them
    share at the start and end stay; the others are maybe there (one Choice entry when each
    branch added at most one)."""
    distinct = _distinct(options)
    if len({o.filled for o in distinct}) > 1:  # known to hold an entry in some branches only
        distinct = _distinct([replace(o, filled=False) for o in distinct])
    if len(distinct) == 1:
        return distinct[0]
    if _same_shape_tuples(distinct):
        # `return False, f"..."` / `return True, None`: a choice at each position
        columns = zip(*(o.entries for o in distinct), strict=True)
        return Items(
            tuple(
                Entry(choice([e.value for e in column]), choice([e.shown for e in column]))
                for column in columns
            ),
            "()",
            tuple(row for o in distinct for row in (o.rows or (o.entries,))),
        )
    seqs = [list(o.entries) for o in distinct]
    head: list[Entry] = []
    while all(seqs) and all(s[0] == seqs[0][0] for s in seqs):
        head.append(seqs[0][0])
        for s in seqs:
            s.pop(0)
    tail: list[Entry] = []
    while all(seqs) and all(s[-1] == seqs[0][-1] for s in seqs):
        tail.insert(0, seqs[0][-1])
        for s in seqs:
            s.pop()
    middle: list[Entry] = []
    if all(len(s) <= 1 for s in seqs) and all(not s or s[0].times == "one" for s in seqs):
        present = [s[0] for s in seqs if s]
        if any(e.unknown for e in present):
            middle = [Entry(e.value, e.shown, "many", True) for e in present if e.unknown]
        else:
            times: Times = "one" if len(present) == len(seqs) else "maybe"
            middle = [
                Entry(choice([e.value for e in present]), choice([e.shown for e in present]), times)
            ]
    else:
        for s in seqs:
            for e in s:
                middle.append(
                    e if e.times == "many" else Entry(e.value, e.shown, "maybe", e.unknown)
                )
    return Items(tuple(head + middle + tail), distinct[0].brackets)


def _same_shape_tuples(options: Sequence[Items]) -> bool:
    size = len(options[0].entries)
    return all(
        o.brackets == "()"
        and len(o.entries) == size
        and all(e.times == "one" and not e.unknown for e in o.entries)
        for o in options
    )


def repeated(before: Items, after: Items) -> Items | None:
    """The list after a loop whose body turned `before` into `after`: the entries the body
    added, any number of times; None when the body did more than add entries."""
    if after.entries[: len(before.entries)] != before.entries:
        return None
    added = after.entries[len(before.entries) :]
    return before.extended([Entry(e.value, e.shown, "many", e.unknown) for e in added])


def extension(before: Message, after: Message) -> Message | None:
    """What `after` adds at the end of `before` (`msg += ...`), or None when `after` does
    not start with `before`."""
    head, rests = _common_end([before, after], from_start=True)
    del head
    return rests[1] if not rests[0].parts else None


# --- repr ---------------------------------------------------------------------------------


def repr_of(message: Message) -> Message | None:
    """`repr()` of a str made of `message`, or None when it cannot be told.

    Python quotes with `'` unless the string holds `'` and no `"`. With run-time parts,
    a literal `"` settles the quote (`'`); with no quote in the literal text the quote
    depends on the run-time parts, so it is Shown; a literal `'` alone leaves both the quote
    and its escape open: None. A run-time part stays a hole (its characters are escaped
    at run time, which a hole matches too).
    """
    if len(message.parts) == 1 and isinstance(message.parts[0], Choice):
        options = [repr_of(option) for option in message.parts[0].options]
        return None if any(o is None for o in options) else choice(options)  # type: ignore
    if any(isinstance(p, _PIECES) for p in message.parts):
        return None
    text = message.literal()
    if text is not None:
        return literal(repr(text))
    texts = "".join(p.value for p in message.parts if isinstance(p, Text))
    if '"' in texts:
        quote: Part = Text("'")
    elif "'" in texts:
        return None
    else:
        quote = Shown("'")
    inner = [Text(_repr_body(p.value)) if isinstance(p, Text) else p for p in message.parts]
    return Message((quote, *inner, quote))


def _repr_body(text: str) -> str:
    """`text` escaped as repr() escapes it inside `'` quotes."""
    out = []
    for char in text:
        if char in "\\'":
            out.append("\\" + char)
        elif char == '"':
            out.append(char)
        else:
            out.append(repr(char)[1:-1])
    return "".join(out)
