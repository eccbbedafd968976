"""messagePattern: escaped literal text, `(.*?)` per hole; the same in Python `re` and ECMAScript."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors.messages import Hole, Message, Text, message_of
from extractors.parts import EMPTY, Choice, Entry, Items, Part, Repeat, Shown, Some, joined, literal
from extractors.patterns import (
    HOLE_PATTERN,
    escape_literal,
    holes_in_message,
    literal_text,
    matches,
    pattern_fragments,
    runtime_parts,
    shown_message,
)

ESCAPES = [
    # As in the reference records: parentheses escaped, `-`, `/`, spaces kept.
    (
        "--use-replayssm is incompatible with KV connectors (P/D disaggregation, KV cache offload)",
        r"--use-replayssm is incompatible with KV connectors \(P/D disaggregation, KV cache offload\)",
    ),
    ("\\ ^ $ . | ? * + ( ) [ ] { }", r"\\ \^ \$ \. \| \? \* \+ \( \) \[ \] \{ \}"),
    ("# & ~ ' \" ` - / , : ; < > = ! @ %", "# & ~ ' \" ` - / , : ; < > = ! @ %"),
    ("line one\nline two\ttab\x00nul\x1b esc", "line one\nline two\ttab\x00nul\x1b esc"),
    ("caf\u00e9 \u2014 \u4e2d \U0001f600 \u2028", "caf\u00e9 \u2014 \u4e2d \U0001f600 \u2028"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "pattern"), ESCAPES)
def test_literal_text_escapes_only_regex_syntax_characters(text, pattern):
    assert escape_literal(text) == pattern


def test_hole_matches_anything_lazily():
    assert HOLE_PATTERN == "(.*?)"
    message = Message((Text("got "), Hole("n", True), Text(" (max "), Hole("m", True), Text(")")))
    assert message.pattern() == r"got (.*?) \(max (.*?)\)"
    assert matches(message.pattern(), "got 3\n4 (max (5))")
    assert not matches(message.pattern(), "got 3 (max 5)!")


# --- properties --------------------------------------------------------------------------

ANY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),  # all of unicode that can be written down
        st.sampled_from(list("\\^$.|?*+()[]{}\n\r\t\x00-/#&~'\"`")),
    ),
    max_size=20,
)
PART = st.one_of(
    ANY_TEXT.map(Text), st.builds(Hole, st.sampled_from(["n", "cfg.mode!r", "x:>5"]), st.booleans())
)


@given(ANY_TEXT)
def test_literal_text_fully_matches_itself(text):
    assert re.fullmatch(escape_literal(text), text, re.DOTALL)


@given(st.lists(PART, max_size=8), st.data())
def test_pattern_matches_every_rendering(parts, data):
    message = Message(tuple(parts))
    rendered = "".join(
        part.value if isinstance(part, Text) else data.draw(ANY_TEXT) for part in message.parts
    )
    assert re.fullmatch(message.pattern(), rendered, re.DOTALL)


# A message written as source: literal chunks, with some characters written as escapes,
# and placeholders of the kinds validators use, as an f-string, a `%` or a `.format` template.
SOURCE_CHAR = st.one_of(
    st.characters(codec="utf-8", exclude_characters='\\"{}%\n\r\x00'),
    st.sampled_from(
        ["\\n", "\\t", "\\x00", "\\\\", '\\"', "\\x41", "\\u00e9", "{{", "}}", "\\N{EM DASH}"]
    ),
)
CHUNK = st.lists(SOURCE_CHAR, max_size=6).map("".join)
FSTRING_FIELDS = ["{v0}", "{v1!r}", "{v2:>6}", "{v0=}", "{n:.2f}", "{v1!s:^{n:d}}", "{ n = }"]
# `%` conversion -> the value it takes (`%%` takes none).
PERCENT_FIELDS = {"%s": "v0", "%r": "v1", "%8s": "v2", "%d": "n", "%.2f": "n", "%%": None}
FORMAT_FIELDS = ["{v0}", "{v1!r}", "{v2:>6}", "{n:.2f}", "{v1!s:^{n:d}}", "{0}"]
FIELDS = {"fstring": FSTRING_FIELDS, "percent": list(PERCENT_FIELDS), "format": FORMAT_FIELDS}


def _source(form: str, pieces: list[tuple[str, int | None]]) -> str:
    """The message expression of `form`: each piece is a chunk, then a field (by index)."""
    fields = FIELDS[form]
    template = "".join(
        chunk + ("" if i is None else fields[i % len(fields)]) for chunk, i in pieces
    )
    if form == "fstring":
        return f'f"{template}"'
    if form == "percent":
        used = [fields[i % len(fields)] for _, i in pieces if i is not None]
        values = "".join(f"{PERCENT_FIELDS[f]}, " for f in used if PERCENT_FIELDS[f])
        return f'"{template}" % ({values})'
    return f'"{template}".format(v0, v0=v0, v1=v1, v2=v2, n=n)'


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(list(FIELDS)),
    st.lists(st.tuples(CHUNK, st.none() | st.integers(min_value=0, max_value=20)), max_size=5),
    st.lists(ANY_TEXT, min_size=3, max_size=3),
    st.integers(min_value=0, max_value=9),
)
def test_source_message_pattern_matches_its_evaluation(form, pieces, values, number):
    source = _source(form, pieces)
    module = cst.parse_module(f"_ = {source}\n")
    message = message_of(module.body[0].body[0].value, module, lambda name: None)
    namespace = {"v0": values[0], "v1": values[1], "v2": values[2], "n": number}
    rendered = eval(source, namespace)  # trusted: built from the strategies above
    assert re.fullmatch(message.pattern(), rendered, re.DOTALL), (source, message.pattern())
    # Every field is a formatted value: nothing here is unknown text.
    assert message.status() != "partial", source
    if message.status() == "literal":
        assert shown_message(message.text()) == rendered


# --- the same in ECMAScript --------------------------------------------------------------

NODE_SCRIPT = """
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([pattern, subjects]) => {
  const re = new RegExp("^(?:" + pattern + ")$", "s");
  return subjects.map((s) => re.test(s));
});
process.stdout.write(JSON.stringify(out));
"""

TRICKY_MESSAGES = [Message((Text(text),)) for text, _ in ESCAPES] + [
    Message((Text("a\u0000b\u0001c\u007f\u0085\u2029"), Hole("x", True))),
    Message((Text("surrogate \ud800 alone "), Hole("x", False), Text("\udfff"))),
    Message((Hole("a", True), Hole("b", True), Text("}{"), Hole("c", False))),
    Message((Text("\\d\\w\\s\\b\\1\\k<n>\\p{L}\\u0041\\x41\\0"),)),
    Message((Text("(?P<n>x) (?<n>x) (?=x) (?i) [^a-z] a{1,2} $& $1 \\\\"),)),
]


def _random_text(rng: random.Random) -> str:
    """Text mixing regex syntax, control characters and any code point (surrogates too)."""
    pool = "\\^$.|?*+()[]{}\n\r\t\x00-/#&~'\"` az"
    return "".join(
        rng.choice(pool) if rng.random() < 0.7 else chr(rng.randint(0, 0x10FFFF))
        for _ in range(rng.randint(0, 12))
    )


def render(message: Message, fill) -> str:
    """One run-time rendering of `message`: `fill(kind)` picks a hole's text (kind "hole"),
    an option of a Choice ("choice", with the count) and a Repeat's count ("repeat")."""
    out = []
    for part in message.parts:
        if isinstance(part, Text):
            out.append(part.value)
        elif isinstance(part, (Hole, Shown)):
            out.append(fill("hole", 0))
        elif isinstance(part, Choice):
            out.append(render(part.options[fill("choice", len(part.options))], fill))
        elif isinstance(part, Some):  # at least one of its pieces is there
            out.append(_render_some(part, fill))
        else:
            out.extend(render(part.piece, fill) for _ in range(fill("repeat", 0)))
    return "".join(out)


def _render_some(some: Some, fill) -> str:
    """A rendering of a Some's pieces with one of them there: a piece is rendered until
    one holds text (each piece is an optional entry, so that one is there)."""
    pieces = some.piece.parts
    must = fill("choice", len(pieces))
    out = []
    for index, part in enumerate(pieces):
        text = render(Message((part,)), fill)
        while index == must and not text:
            text = render(Message((part,)), fill)
        out.append(text)
    return "".join(out)


def _subjects(message: Message, rng: random.Random) -> list[str]:
    """Renderings of `message` (that must match) and near misses (that must not)."""
    fillers = ["", "\n", "(.*?)", "x\r\ny", "\u2028", "\U0001f600", "$1 \\"]

    def fill(kind: str, count: int):
        if kind == "hole":
            return rng.choice(fillers)
        return rng.randrange(count) if kind == "choice" else rng.randint(0, 3)

    renderings = [render(message, fill) for _ in range(3)]
    return renderings + [r + "!" for r in renderings] + ["X" + r for r in renderings]


def _random_message(rng: random.Random, depth: int) -> Message:
    """Text, holes and (down to `depth`) pieces that may or may not appear."""
    parts = []
    for _ in range(rng.randint(0, 5)):
        roll = rng.random()
        if roll < 0.5 or depth == 0:
            parts.append(Text(_random_text(rng)) if roll < 0.35 else Hole("v", roll < 0.2))
        elif roll < 0.75:
            options = [_random_message(rng, depth - 1) for _ in range(rng.randint(1, 3))]
            parts.append(Choice((*options, Message())))
        elif roll < 0.85:
            parts.append(Repeat(_random_message(rng, depth - 1)))
        elif roll < 0.93:
            parts.extend(_filled_join(rng, depth - 1).parts)
        else:
            parts.append(Shown("'"))
    return Message(tuple(parts))


def _filled_join(rng: random.Random, depth: int) -> Message:
    """`sep.join(errors)` under `if errors:`, each entry maybe there (a Some when each has
    literal text)."""
    entries = []
    for _ in range(rng.randint(1, 3)):
        value = Message((Text(_random_text(rng) + "a"), *_random_message(rng, depth).parts))
        entries.append(Entry(value, value, rng.choice(["maybe", "many"])))
    return joined(rng.choice(["; ", " ", ""]), Items(tuple(entries), filled=True))


def test_patterns_match_the_same_strings_in_python_and_ecmascript():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the ECMAScript check needs it")
    rng = random.Random(20260101)
    messages = list(TRICKY_MESSAGES)
    for _ in range(300):
        messages.append(_random_message(rng, depth=2))
    cases = [(m.pattern(), _subjects(m, rng)) for m in messages]
    assert sum("(?=" in pattern for pattern, _ in cases) >= 5  # lookaheads are tried
    result = subprocess.run(
        [node, "-e", NODE_SCRIPT],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=60,
    )
    in_ecmascript = json.loads(result.stdout)
    in_python = [
        [re.fullmatch(pattern, s, re.DOTALL) is not None for s in subjects]
        for pattern, subjects in cases
    ]
    assert in_ecmascript == in_python
    # The renderings (first three subjects) match in both; the test is not vacuous.
    assert all(all(row[:3]) for row in in_python)


# --- messages built from parts: every rendering matches --------------------------------------

PIECE_TEXT = st.text(alphabet=st.sampled_from(list("ab .,:;|?*()[]\\\n'\"")), max_size=6)


def _pieces(children):
    messages = st.lists(children, max_size=4).map(lambda parts: Message(tuple(parts)))
    return st.one_of(
        st.lists(messages, min_size=1, max_size=3).map(lambda options: Choice(tuple(options))),
        st.lists(messages, min_size=1, max_size=2).map(
            lambda options: Choice((*options, Message()))
        ),
        messages.map(Repeat),
    )


PIECE_PART = st.recursive(
    st.one_of(
        PIECE_TEXT.map(Text), st.builds(Hole, st.just("v"), st.booleans()), st.just(Shown("'"))
    ),
    _pieces,
    max_leaves=8,
)


def _filled(values: list[Message]) -> Part:
    """The pieces of `" ".join(errors)` under `if errors:`, each entry maybe there."""
    items = Items(tuple(Entry(v, v, "maybe") for v in values), filled=True)
    (part,) = joined(" ", items).parts
    return part


# a list tested non-empty: entries with literal text (a Some) and, at times, one without
FILLED_PART = st.lists(
    st.lists(PIECE_PART, max_size=3).map(lambda parts: Message((Text("e"), *parts))),
    min_size=1,
    max_size=3,
).map(_filled)
BUILT_PART = st.one_of(
    ANY_TEXT.map(Text), st.builds(Hole, st.just("n"), st.booleans()), PIECE_PART, FILLED_PART
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(BUILT_PART, max_size=6), st.data())
def test_pattern_of_a_built_message_matches_every_rendering(parts, data):
    message = Message(tuple(parts))

    def fill(kind: str, count: int):
        if kind == "hole":
            return data.draw(ANY_TEXT)
        if kind == "choice":
            return data.draw(st.integers(min_value=0, max_value=count - 1))
        return data.draw(st.integers(min_value=0, max_value=3))

    for _ in range(3):
        assert re.fullmatch(message.pattern(), render(message, fill), re.DOTALL)
    # vmine's own form: escaped literal fragments, holes and lookaheads before a hole
    assert pattern_fragments(message.pattern()) is not None


@given(st.lists(BUILT_PART, max_size=6))
def test_error_message_lines_up_with_its_pattern(parts):
    message = Message(tuple(parts))
    text, pattern = message.text(), message.pattern()
    found = holes_in_message(text, pattern)
    assert found is not None
    fragments = pattern_fragments(pattern)
    doubled = [f.replace("{", "{{").replace("}", "}}") for f in fragments]
    assert "".join(f + h for f, h in zip(doubled, [*found, ""], strict=True)) == text
    # every run-time part is inside braces: the literal text is the message's own
    # (a Some is written as its pieces, each a run-time part)
    top = "".join(
        p.value
        if isinstance(p, (Text, Shown))
        else " " * len(p.piece.parts)
        if isinstance(p, Some)
        else " "
        for p in message.parts
    )
    if not any(isinstance(p, Text) and p.value.startswith("}") for p in message.parts):
        assert literal_text(text) == top
    if message.status() == "literal":
        assert shown_message(text) == message.literal()


# errorMessage -> (literal text, as a page shows it)
ERROR_MESSAGES = [
    ("got {x} and {{y}}", "got   and {y}", "got {x} and {{y}}"),
    ('expected JSON like {{"a": 1}}', 'expected JSON like {"a": 1}', 'expected JSON like {"a": 1}'),
    ("bad value{? since {reason}}.", "bad value .", "bad value{? since {reason}}."),
    ("{?a|b}; done", " ; done", "{?a|b}; done"),
    ("Unknown names:{*\n- {name!r}}", "Unknown names: ", "Unknown names:{*\n- {name!r}}"),
    ('a {"{".join(x)} b', "a   b", 'a {"{".join(x)} b'),  # braces in a hole's strings
    ("{ {1: x}[1]}", " ", "{ {1: x}[1]}"),
    ("never closed {x", "never closed  ", "never closed {x"),
    ("", "", ""),
]


@pytest.mark.parametrize(("message", "literal", "shown"), ERROR_MESSAGES)
def test_error_message_reads_as_literal_text_and_as_shown(message, literal, shown):
    assert (literal_text(message), shown_message(message)) == (literal, shown)


PLACEHOLDERS = [
    ("got {n} of {{x}}", r"got (.*?) of \{x\}", ["{n}"]),
    ("{a}{b}!", "(.*?)(.*?)!", ["", "{a}{b}"]),  # side by side: lazily, as a regex would
    ("base{? A}{?, B}", "base(.*?)", ["{? A}{?, B}"]),
    ("('a', 'b {n}')", r"\('a', (.*?)b (.*?)\)", ["'", "{n}'"]),
    ("got {n}", "other (.*?)", None),
    ("got {n}", "got [0-9]+", None),  # not vmine's form
]


@pytest.mark.parametrize(("message", "pattern", "expected"), PLACEHOLDERS)
def test_holes_in_message_pair_the_message_with_the_pattern_holes(message, pattern, expected):
    assert holes_in_message(message, pattern) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("got {n} and {{x}}", ["{n}"]),
        ("a {d[{1: 2}[1]]} b{? since {r}}.", ["{d[{1: 2}[1]]}", "{? since {r}}"]),
        ("{?a|b}{*, {c}}", ["{?a|b}", "{*, {c}}"]),
    ],
)
def test_placeholders_are_the_run_time_parts_as_written(message, expected):
    assert runtime_parts(message) == expected


def test_deeply_nested_pieces_read_in_linear_time_without_recursion():
    message = "{?" * 100_000 + "x" + "}" * 100_000 + " tail"
    assert literal_text(message) == "  tail"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\\()[].*?{}|^$+ \n", max_size=16))
def test_the_fast_split_reads_patterns_as_the_tokenizer_does(pattern: str) -> None:
    from extractors.patterns import _tokenized_fragments

    assert pattern_fragments(pattern) == _tokenized_fragments(pattern)


# A lookahead before a hole (a list tested non-empty, extractors/parts.py's Some) is vmine's
# form: explain reads the fragments around it; anywhere else, or holding regex syntax, it is
# not. (pattern, fragments)
LOOKAHEADS = [
    (r"(?=.*?(?:no DoRA\.|rank ))(.*?)", ("", "")),
    (r"bad: (?=.*?(?:a\|b|c))(.*?)!", ("bad: ", "!")),
    (r"(?=.*?(?:a))(?=.*?(?:b))(.*?)", ("", "")),
    (r"(?=.*?(?:a))x(.*?)", None),  # not right before a hole
    (r"x(?=.*?(?:a))", None),
    (r"(?=.*?(?:a.b))(.*?)", None),  # an unescaped `.` is regex syntax
    (r"(?=.*?(?:a(b)))(.*?)", None),
    (r"(?=.*(?:a))(.*?)", None),  # not lazy: not vmine's
]


@pytest.mark.parametrize(("pattern", "fragments"), LOOKAHEADS)
def test_lookaheads_before_a_hole_are_left_out_of_the_fragments(pattern, fragments):
    assert pattern_fragments(pattern) == fragments


# `some_of`: the evidence of each entry of a list tested non-empty (extractors/parts.py)
def _entry(*parts, times="maybe", unknown=False) -> Entry:
    value = Message(tuple(parts))
    return Entry(value, value, times, unknown)


SOME_OF = [
    (
        "each entry's longest text",
        [_entry(Text("no DoRA.")), _entry(Text("rank "), Hole("r", True), Text(" too big."))],
        ("no DoRA.", " too big."),
    ),
    (
        "a text without a letter is no evidence",
        [_entry(Hole("a", True), Text(" or "), Hole("b", True), Text(".")), _entry(Text("x"))],
        (" or ", "x"),
    ),
    (
        "an entry without text may be the one there",
        [_entry(Text("no bias")), _entry(Hole("d", False))],
        None,
    ),
    (
        "items we cannot see may be the ones there",
        [_entry(Text("no bias")), _entry(Hole("*more", False), times="many", unknown=True)],
        None,
    ),
    (
        "an entry that is one of two texts",
        [_entry(Choice((literal("a"), literal("b"))))],
        ("a", "b"),
    ),
    ("an entry that may be empty", [_entry(Choice((literal("a"), EMPTY)))], None),
]


@pytest.mark.parametrize(
    ("entries", "evidence"), [c[1:] for c in SOME_OF], ids=[c[0] for c in SOME_OF]
)
def test_a_list_tested_non_empty_has_the_evidence_of_its_entries(entries, evidence):
    (part, *rest) = joined("; ", Items(tuple(entries), filled=True)).parts
    if evidence is None:
        assert not isinstance(part, Some) and not any(isinstance(p, Some) for p in rest)
    else:
        assert (isinstance(part, Some), part.evidence, rest) == (True, evidence, [])
        assert joined("; ", Items(tuple(entries))).text() == part.piece.text()
