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
from extractors.patterns import HOLE_PATTERN, escape_literal, matches

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
        assert message.text() == rendered


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


def _subjects(message: Message, rng: random.Random) -> list[str]:
    """Renderings of `message` (that must match) and near misses (that must not)."""
    fillers = ["", "\n", "(.*?)", "x\r\ny", "\u2028", "\U0001f600", "$1 \\"]
    renderings = [
        "".join(p.value if isinstance(p, Text) else rng.choice(fillers) for p in message.parts)
        for _ in range(3)
    ]
    return renderings + [r + "!" for r in renderings] + ["X" + r for r in renderings]


def test_patterns_match_the_same_strings_in_python_and_ecmascript():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the ECMAScript check needs it")
    rng = random.Random(20260101)
    messages = list(TRICKY_MESSAGES)
    for _ in range(300):
        parts = [
            Text(_random_text(rng)) if rng.random() < 0.6 else Hole("v", rng.random() < 0.5)
            for _ in range(rng.randint(0, 5))
        ]
        messages.append(Message(tuple(parts)))
    cases = [(m.pattern(), _subjects(m, rng)) for m in messages]
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
