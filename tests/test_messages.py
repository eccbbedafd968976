"""Message reconstruction: one case table per message form (source in, text/status/pattern out).

Every case that Python can evaluate is also rendered with concrete values, and its pattern
must fully match what the code would really say at run time.
"""

from __future__ import annotations

import ast
import re
import textwrap
from types import SimpleNamespace

import libcst as cst
import pytest

from extractors.facts import Rules
from extractors.functions import function_table
from extractors.helpers import HelperTable
from extractors.messages import (
    FORMS,
    Hole,
    Message,
    Reader,
    Text,
    conditional_expression,
    format_call,
    fstring,
    helper_call,
    hole_source,
    implicit_concatenation,
    join_call,
    local_name,
    message_of,
    message_of_args,
    percent_format,
    plus_concatenation,
    sequence_display,
    str_call,
    string_literal,
)
from extractors.patterns import shown_message
from extractors.sites import extract_file

# Local names the (stand-in) binding lookup knows; any other name is unknown to it.
KNOWN = {"prefix": "Invalid value: ", "hint": "see --help"}


def lookup(name: str) -> Message | None:
    return Message((Text(KNOWN[name]),)) if name in KNOWN else None


def describe(*values: object) -> str:
    return "described " + repr(values)


# Run-time values for the names the cases use: full of regex metacharacters and newlines.
NAMESPACE = {
    **KNOWN,
    "x": "a.b*\n(c)",
    "a": "[x]",
    "b": "$1^",
    "n": 3,
    "ratio": 0.5,
    "width": 8,
    "c": True,
    "cfg": SimpleNamespace(mode="fast|slow"),
    "items": ["p?", "q+"],
    "args": ("u{", "v}"),
    "data": {"name": "n\\d"},
    "kwargs": {"b": "\u03b2"},
    "d": {"k": "[v]"},
    "reason": "too large",
    "errors": ("e1", "e2"),
    "describe": describe,
}

# Sources that raise at run time (malformed templates): no rendering to compare against.
NOT_EVALUABLE = {'"50%!" % x', '"{".format(x)', "str(*errors)"}


def reconstruct(source: str) -> Message:
    module = cst.parse_module(f"_ = {source}\n")
    return message_of(module.body[0].body[0].value, module, lookup)


def reconstruct_raise(source: str) -> Message:
    module = cst.parse_module(source + "\n")
    call = module.body[0].body[0].exc
    return message_of_args(call.args, module, lookup)


def check(message: Message, text: str, status: str, pattern: str) -> None:
    assert (message.text(), message.status(), message.pattern()) == (text, status, pattern)


def check_run_time(source: str, pattern: str) -> None:
    rendered = eval(source, dict(NAMESPACE))  # trusted: the sources are the tables below
    assert re.fullmatch(pattern, str(rendered), re.DOTALL), (pattern, rendered)


# --- string literals ---------------------------------------------------------------------

STRING_LITERALS = [
    ('"must be positive"', "must be positive", "literal", "must be positive"),
    ("'single quotes'", "single quotes", "literal", "single quotes"),
    ('"""triple "quoted" text"""', 'triple "quoted" text', "literal", 'triple "quoted" text'),
    (r'r"raw \d+ stays"', r"raw \d+ stays", "literal", r"raw \\d\+ stays"),
    (r'"tab\there"', "tab\there", "literal", "tab\there"),
    (r'"e \u00e9 \N{EM DASH} \x41"', "e \u00e9 \u2014 A", "literal", "e \u00e9 \u2014 A"),
    ('u"legacy prefix"', "legacy prefix", "literal", "legacy prefix"),
    (
        '"(P/D split) - 50% [ok]"',
        "(P/D split) - 50% [ok]",
        "literal",
        r"\(P/D split\) - 50% \[ok\]",
    ),
    ('b"bytes are not text"', '{b"bytes are not text"}', "unresolved", "(.*?)"),
    ('""', "", "literal", ""),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), STRING_LITERALS)
def test_string_literal_is_its_run_time_text(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


# --- implicit concatenation --------------------------------------------------------------

IMPLICIT_CONCATENATION = [
    ('"max_tokens " "must be set"', "max_tokens must be set", "literal", "max_tokens must be set"),
    (
        '"--enable-foo is incompatible with bar " "(P/D, KV offload)"',
        "--enable-foo is incompatible with bar (P/D, KV offload)",
        "literal",
        r"--enable-foo is incompatible with bar \(P/D, KV offload\)",
    ),
    (
        '"max_tokens must be " f"at least {n}, got {x!r}"',
        "max_tokens must be at least {n}, got {x!r}",
        "template",
        "max_tokens must be at least (.*?), got (.*?)",
    ),
    (
        '(\n    "first line, "\n    "second {x}"\n)',
        "first line, second {{x}}",
        "literal",
        r"first line, second \{x\}",
    ),
    (r'"raw " r"\n" " cooked\n"', "raw \\n cooked\n", "literal", "raw \\\\n cooked\n"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), IMPLICIT_CONCATENATION)
def test_implicit_concatenation_joins_its_pieces(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


# --- f-strings ---------------------------------------------------------------------------

FSTRINGS = [
    ('f"got {cfg.mode!r}"', "got {cfg.mode!r}", "template", "got (.*?)"),
    (
        'f"{ratio:.2f} is out of range"',
        "{ratio:.2f} is out of range",
        "template",
        "(.*?) is out of range",
    ),
    ('f"padded {x:>{width}}|"', "padded {x:>{width}}|", "template", r"padded (.*?)\|"),
    ('f"{{braces}} around {n}"', "{{braces}} around {n}", "template", r"\{braces\} around (.*?)"),
    ('f"{n=}"', "n={n!r}", "template", "n=(.*?)"),
    ('f"{ ratio = :.1f}!"', " ratio = {ratio:.1f}!", "template", " ratio = (.*?)!"),
    ('f"{x=!s} end"', "x={x!s} end", "template", "x=(.*?) end"),
    (r'rf"raw \d {n}"', r"raw \d {n}", "template", r"raw \\d (.*?)"),
    (r'f"tab\t{n}\N{EM DASH}"', "tab\t{n}\u2014", "template", "tab\t(.*?)\u2014"),
    ('f"{prefix}{n}"', "Invalid value: {n}", "template", "Invalid value: (.*?)"),
    ("f\"{'literal'} and {n}\"", "literal and {n}", "template", "literal and (.*?)"),
    ('F"upper {n}"', "upper {n}", "template", "upper (.*?)"),
    # Escapes are decoded after the braces are read: `\x7b` is a brace, never a field.
    (r'f"\x7b\x7b {n}"', "{{{{ {n}", "template", r"\{\{ (.*?)"),
    ('f"{describe(x)} is bad"', "{describe(x)} is bad", "template", "(.*?) is bad"),
    (
        'f"""items: {\', \'.join(\n    items\n)}"""',
        "items: {', '.join(items)}",
        "template",
        "items: (.*?)",
    ),
    ('f"{n}"', "{n}", "unresolved", "(.*?)"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), FSTRINGS)
def test_fstring_keeps_placeholders_as_written(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


# --- `+` concatenation -------------------------------------------------------------------

PLUS_CONCATENATION = [
    ('"expected " + str(n) + " items"', "expected {n} items", "template", "expected (.*?) items"),
    ('"mode " + repr(cfg.mode)', "mode {cfg.mode!r}", "template", "mode (.*?)"),
    (
        'prefix + "must be set"',
        "Invalid value: must be set",
        "literal",
        "Invalid value: must be set",
    ),
    ('"unknown mode: " + cfg.mode', "unknown mode: {cfg.mode}", "partial", "unknown mode: (.*?)"),
    ('"bad: " + ", ".join(items)', 'bad: {", ".join(items)}', "partial", "bad: (.*?)"),
    ('f"got {n} " + "items"', "got {n} items", "template", "got (.*?) items"),
    ('"a" + (b + "c")', "a{b}c", "partial", "a(.*?)c"),
    ("a + b", "{a + b}", "unresolved", "(.*?)"),
    ("reason + str(n)", "{reason}{n}", "unresolved", "(.*?)(.*?)"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), PLUS_CONCATENATION)
def test_plus_concatenation_joins_operands(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


# --- `%` formatting ----------------------------------------------------------------------

PERCENT_FORMATTING = [
    ('"bad %s" % x', "bad {x}", "template", "bad (.*?)"),
    ('"%s and %r" % (a, b)', "{a} and {b!r}", "template", "(.*?) and (.*?)"),
    ('"%d%% of %.2f" % (n, ratio)', "{n:d}% of {ratio:.2f}", "template", "(.*?)% of (.*?)"),
    ('"%(name)s is %(v)r" % {"name": x, "v": n}', "{x} is {n!r}", "template", "(.*?) is (.*?)"),
    ('"key %(name)s" % data', "key {data['name']}", "partial", "key (.*?)"),
    ('"%s then %s" % args', "{args[0]} then {args[1]}", "partial", "(.*?) then (.*?)"),
    ('"%s and %s" % ("fixed", x)', "fixed and {x}", "template", "fixed and (.*?)"),
    ('"%s" % prefix', "Invalid value: ", "literal", "Invalid value: "),
    (
        '"%-5s|%05d|%*d" % (a, n, width, n)',
        "{a:-5s}|{n:05d}|{n:*d}",
        "template",
        r"(.*?)\|(.*?)\|(.*?)",
    ),
    ("n % 2", "{n % 2}", "unresolved", "(.*?)"),
    ('"50%!" % x', '{"50%!" % x}', "unresolved", "(.*?)"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), PERCENT_FORMATTING)
def test_percent_formatting_fills_conversions(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


# --- `.format(...)` ----------------------------------------------------------------------

FORMAT_CALLS = [
    (
        '"expected {} got {}".format(n, x)',
        "expected {n} got {x}",
        "template",
        "expected (.*?) got (.*?)",
    ),
    ('"{0} vs {0!r}".format(x)', "{x} vs {x!r}", "template", "(.*?) vs (.*?)"),
    (
        '"{name}: {value:.3f}".format(name=x, value=ratio)',
        "{x}: {ratio:.3f}",
        "template",
        "(.*?): (.*?)",
    ),
    (
        '"{cfg.mode} [{d[k]}]".format(cfg=cfg, d=d)',
        "{cfg.mode} [{d[k]}]",
        "template",
        r"(.*?) \[(.*?)\]",
    ),
    ('"{:>{}}|".format(x, width)', "{x:>{width}}|", "template", r"(.*?)\|"),
    ('"{a} and {b}".format(a=x, **kwargs)', "{x} and {b}", "partial", "(.*?) and (.*?)"),
    ('"{} and {}".format(*args)', "{} and {}", "partial", "(.*?) and (.*?)"),
    ('"{{literal}} {}".format(n)', "{{literal}} {n}", "template", r"\{literal\} (.*?)"),
    ('"{}".format(prefix)', "Invalid value: ", "literal", "Invalid value: "),
    ('"{".format(x)', '{"{".format(x)}', "unresolved", "(.*?)"),
    ("reason.format(x)", "{reason.format(x)}", "unresolved", "(.*?)"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), FORMAT_CALLS)
def test_format_call_fills_fields(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


# --- str() and repr() --------------------------------------------------------------------

STR_CALLS = [
    ("str(n)", "{n}", "unresolved", "(.*?)"),
    ("repr(x)", "{x!r}", "unresolved", "(.*?)"),
    ('"expected " + str(n)', "expected {n}", "template", "expected (.*?)"),
    ("str(prefix)", "Invalid value: ", "literal", "Invalid value: "),
    ("repr(prefix)", "{prefix!r}", "unresolved", "(.*?)"),
    ("str()", "{str()}", "unresolved", "(.*?)"),
    ("str(*errors)", "{str(*errors)}", "unresolved", "(.*?)"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), STR_CALLS)
def test_str_and_repr_of_one_value_are_formatted_values(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


# --- names and everything else -----------------------------------------------------------

LOCAL_NAMES = [
    ("prefix", "Invalid value: ", "literal", "Invalid value: "),
    ("reason", "{reason}", "unresolved", "(.*?)"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), LOCAL_NAMES)
def test_local_name_is_what_the_lookup_says_it_holds(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


OTHER_EXPRESSIONS = [
    ("cfg.mode", "{cfg.mode}", "unresolved", "(.*?)"),
    ("describe(x)", "{describe(x)}", "unresolved", "(.*?)"),
    ('d["k"]', '{d["k"]}', "unresolved", "(.*?)"),
    ("describe(\n    x,  # the value\n    n,\n)", "{describe(x, n)}", "unresolved", "(.*?)"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), OTHER_EXPRESSIONS)
def test_other_expression_is_one_hole_with_its_source(source, text, status, pattern):
    check(reconstruct(source), text, status, pattern)


ALL_EXPRESSION_CASES = (
    STRING_LITERALS
    + IMPLICIT_CONCATENATION
    + FSTRINGS
    + PLUS_CONCATENATION
    + PERCENT_FORMATTING
    + FORMAT_CALLS
    + STR_CALLS
    + LOCAL_NAMES
    + OTHER_EXPRESSIONS
)


@pytest.mark.parametrize(
    "source,pattern",
    [(c[0], c[3]) for c in ALL_EXPRESSION_CASES if c[0] not in NOT_EVALUABLE],
)
def test_pattern_matches_the_run_time_message(source, pattern):
    check_run_time(source, pattern)


# --- the arguments of ValueError(...) ----------------------------------------------------

RAISE_ARGUMENTS = [
    ("raise ValueError()", "", "literal", ""),
    ('raise ValueError("one argument")', "one argument", "literal", "one argument"),
    ('raise ValueError(f"got {n}") from exc', "got {n}", "template", "got (.*?)"),
    ('raise ValueError("bad value:", *errors)', '{"bad value:", *errors}', "unresolved", "(.*?)"),
    ("raise ValueError(*errors)", "{*errors}", "unresolved", "(.*?)"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern"), RAISE_ARGUMENTS)
def test_raise_arguments_give_the_message(source, text, status, pattern):
    check(reconstruct_raise(source), text, status, pattern)


@pytest.mark.parametrize("source,pattern", [(c[0], c[3]) for c in RAISE_ARGUMENTS])
def test_raise_arguments_pattern_matches_str_of_the_error(source, pattern):
    call = source.removeprefix("raise ").removesuffix(" from exc")
    check_run_time(f"str({call})", pattern)


def test_bare_raise_has_the_empty_literal_message():
    check(message_of_args([], cst.parse_module(""), lookup), "", "literal", "")


# --- messages built from parts -----------------------------------------------------------
# Each case: source, errorMessage, messageStatus, messagePattern, messageFragments. The
# sources are evaluated under every namespace of VARIANTS (so each branch is taken) and the
# pattern must fully match what Python prints.

VARIANTS = [
    NAMESPACE,
    {**NAMESPACE, "c": False, "n": 1, "reason": "", "args": ()},
    {**NAMESPACE, "c": False, "n": 0, "x": 'it\'s "quoted"', "args": ("only",)},
]


def check_parts(message: Message, text: str, status: str, pattern: str, fragments) -> None:
    assert (message.text(), message.status(), message.pattern(), message.fragments()) == (
        text,
        status,
        pattern,
        fragments,
    )


def check_every_variant(source: str, pattern: str) -> None:
    for namespace in VARIANTS:
        rendered = str(eval(source, dict(namespace)))  # trusted: the tables below
        assert re.fullmatch(pattern, rendered, re.DOTALL), (source, pattern, rendered)


CONDITIONAL_EXPRESSIONS = [
    (
        "f\"bad value{f' since {reason}' if reason else ''}.\"",
        "bad value{? since {reason}}.",
        "partial",
        r"bad value(.*?)\.",
        ["bad value", " since "],
    ),
    ('"a" if c else "b"', "{?a|b}", "partial", "(.*?)", ["a", "b"]),
    (
        '"too large" if c else "too small"',
        "too {?large|small}",
        "partial",
        "too (.*?)",
        ["too ", "large", "small"],
    ),
    (
        "f\"{n} item{'s' if n != 1 else ''}\"",
        "{n} item{?s}",
        "partial",
        "(.*?) item(.*?)",
        [" item", "s"],
    ),
    (
        '"mode " + ("fast" if c else cfg.mode)',
        "mode {?fast|{cfg.mode}}",
        "partial",
        "mode (.*?)",
        ["mode ", "fast"],
    ),
    ('"a" if c else ("b" if n else "")', "{?a|b|}", "partial", "(.*?)", ["a", "b"]),
    (
        "f\"{'on' if c else 'off'}: {x}\"",
        "{?on|off}: {x}",
        "partial",
        "(.*?): (.*?)",
        ["on", "off"],
    ),
    ("x if c else reason", "{x if c else reason}", "unresolved", "(.*?)", []),
]


@pytest.mark.parametrize(
    ("source", "text", "status", "pattern", "fragments"), CONDITIONAL_EXPRESSIONS
)
def test_conditional_expression_is_a_choice_of_its_sides(source, text, status, pattern, fragments):
    check_parts(reconstruct(source), text, status, pattern, fragments)


JOIN_CALLS = [
    ('", ".join(["a", f"b {n}"])', "a, b {n}", "template", "a, b (.*?)", []),
    ('" ".join(("first", "second"))', "first second", "literal", "first second", []),
    (
        '"; ".join(["fast" if c else "slow", "done"])',
        "{?fast|slow}; done",
        "partial",
        "(.*?); done",
        ["fast", "slow", "done"],
    ),
    # an unknown run of items takes the separators around it into its hole
    ('", ".join([*args, "x"])', "{*args}x", "partial", "(.*?)x", []),
    ('"\\n".join([])', "", "literal", "", []),
    ('", ".join(items)', '{", ".join(items)}', "unresolved", "(.*?)", []),
    ('reason.join(["a", "b"])', '{reason.join(["a", "b"])}', "unresolved", "(.*?)", []),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern", "fragments"), JOIN_CALLS)
def test_join_call_of_known_items_joins_them(source, text, status, pattern, fragments):
    check_parts(reconstruct(source), text, status, pattern, fragments)


SEQUENCE_DISPLAYS = [
    ('("fixed", x)', "('fixed', {x!r})", "template", r"\('fixed', (.*?)\)", []),
    ('["p?", f"q {n}"]', "['p?', 'q {n}']", "template", r"\['p\?', (.*?)q (.*?)\]", []),
    (
        "f\"one of {['fast', 'slow']}\"",
        "one of ['fast', 'slow']",
        "literal",
        r"one of \['fast', 'slow'\]",
        [],
    ),
    ('f"shape {(a, n)}"', "shape ({a!r}, {n!r})", "template", r"shape \((.*?), (.*?)\)", []),
    ('str(("a",))', "('a',)", "literal", r"\('a',\)", []),
    ("()", "()", "literal", r"\(\)", []),
    ('("a" if c else "b", n)', "('{?a|b}', {n!r})", "partial", r"\('(.*?)', (.*?)\)", ["a", "b"]),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern", "fragments"), SEQUENCE_DISPLAYS)
def test_sequence_display_is_what_str_prints(source, text, status, pattern, fragments):
    check_parts(reconstruct(source), text, status, pattern, fragments)


# ValueError(a, b) prints str((a, b)): the reprs of the arguments in parentheses.
SEVERAL_ARGUMENTS = [
    (
        'raise ValueError("bad value:", x)',
        "('bad value:', {x!r})",
        "template",
        r"\('bad value:', (.*?)\)",
        [],
    ),
    # the quote of a repr depends on the run-time parts: shown as `'`, matched by a hole
    ('raise ValueError("a", f"b {n}")', "('a', 'b {n}')", "template", r"\('a', (.*?)b (.*?)\)", []),
    ('raise ValueError(("a", "b"))', "('a', 'b')", "literal", r"\('a', 'b'\)", []),
    ('raise ValueError("it\'s", 3)', '("it\'s", 3)', "literal", '\\("it\'s", 3\\)', []),
    # a literal `"` settles the quote; a literal `'` alone leaves quote and escape open
    (
        "raise ValueError(f'\"{n}\" is bad', None)",
        "('\"{n}\" is bad', None)",
        "template",
        "\\('\"(.*?)\" is bad', None\\)",
        [],
    ),
    (
        'raise ValueError("a", f"can\'t {n}")',
        "('a', {f\"can't {n}\"!r})",
        "template",
        r"\('a', (.*?)\)",
        [],
    ),
    (
        'raise ValueError("tab\\there", n)',
        "('tab\\there', {n!r})",
        "template",
        r"\('tab\\there', (.*?)\)",
        [],
    ),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern", "fragments"), SEVERAL_ARGUMENTS)
def test_several_arguments_are_the_tuple_python_prints(source, text, status, pattern, fragments):
    check_parts(reconstruct_raise(source), text, status, pattern, fragments)


@pytest.mark.parametrize(
    "source,pattern",
    [(c[0], c[3]) for c in CONDITIONAL_EXPRESSIONS + JOIN_CALLS + SEQUENCE_DISPLAYS]
    + [(f"str({c[0].removeprefix('raise ')})", c[3]) for c in SEVERAL_ARGUMENTS],
)
def test_pattern_of_a_built_message_matches_every_branch(source, pattern):
    check_every_variant(source, pattern)


# A same-file helper that returns the message is read at its call, one level deep.
HELPER_CALLS = [
    (
        "a helper's f-string with the caller's argument written in",
        """
        def _bad(name, limit=8):
            return f"{name!r} must be at most {limit}"

        def validate(cfg):
            raise ValueError(_bad(cfg.mode))
        """,
        ("{cfg.mode!r} must be at most 8", "template", "(.*?) must be at most 8", []),
    ),
    (
        "a helper with several returns is a choice between them",
        """
        def _hint(n):
            if n < 0:
                return f"{n} is negative"
            return f"{n} is too large"

        def validate(size):
            msg = _hint(size + 1)
            raise ValueError(msg)
        """,
        (
            "{(size + 1)} is {?negative|too large}",
            "partial",
            "(.*?) is (.*?)",
            [" is ", "negative", "too large"],
        ),
    ),
    (
        "a method of the class that builds a list is inlined through self",
        """
        class Config:
            def _unsupported(self):
                found = []
                if self.pp > 1:
                    found.append("pipeline parallelism")
                if self.spec:
                    found.append(f"speculative method {self.spec!r}")
                return found

            def __post_init__(self):
                unsupported = self._unsupported()
                if unsupported:
                    raise ValueError(f"not supported: {', '.join(unsupported)}")
        """,
        (
            "not supported: {?pipeline parallelism}{?, speculative method {self.spec!r}}",
            "partial",
            "not supported: (.*?)",
            ["not supported: ", "pipeline parallelism", "speculative method "],
        ),
    ),
    (
        "(ok, message) returned by a helper, unpacked: under `if not ok` the failing return's",
        """
        def _check_group_size(group_size, supported=(32, 64)):
            if group_size not in supported:
                return False, f"group_size = {group_size} is not one of {supported}"
            return True, None

        def verify_group_size(group_size):
            ok, err_msg = _check_group_size(group_size)
            if not ok:
                raise ValueError(err_msg)
        """,
        (
            "group_size = {group_size} is not one of (32, 64)",
            "template",
            r"group_size = (.*?) is not one of \(32, 64\)",
            [],
        ),
    ),
    (
        "a parameter the helper assigns again is the helper's own value",
        """
        def _describe(capability=None):
            if capability is None:
                capability = current_capability()
            return f"compute capability {capability} is too old"

        def verify_capability():
            raise ValueError(_describe())
        """,
        (
            "compute capability {capability} is too old",
            "template",
            "compute capability (.*?) is too old",
            [],
        ),
    ),
    (
        "a helper that may return None is not a message",
        """
        def _problem(n):
            if n > 8:
                return f"{n} is too large"

        def validate(n):
            raise ValueError(_problem(n))
        """,
        ("{_problem(n)}", "unresolved", "(.*?)", []),
    ),
    (
        "helpers of helpers are not followed",
        """
        def _inner(n):
            return f"{n} is bad"

        def _outer(n):
            return _inner(n) + "!"

        def validate(n):
            raise ValueError(_outer(n))
        """,
        ("{_inner(n)}!", "partial", "(.*?)!", []),
    ),
    (
        "a def nested in the validator that returns the message",
        """
        def validate_arrow_dtype(datasets_dtype):
            def _dtype_error_msg(dtype, pa_dtype, url=None):
                msg = f"{dtype} is not a valid representation of the pyarrow {pa_dtype} type."
                if url:
                    msg += f" See: {url}."
                return msg

            if not datasets_dtype.startswith("timestamp["):
                raise ValueError(_dtype_error_msg(datasets_dtype, "timestamp", url=DOCS_URL))
        """,
        (
            "{datasets_dtype} is not a valid representation of the pyarrow timestamp type.{? See: "
            "{DOCS_URL}.}",
            "partial",
            r"(.*?) is not a valid representation of the pyarrow timestamp type\.(.*?)",
            [" is not a valid representation of the pyarrow timestamp type.", " See: "],
        ),
    ),
    (
        "a def nested in the validator shadows a module function of its name",
        """
        def _msg(n):
            return f"module helper {n}"

        def validate(n):
            def _msg(value):
                return f"nested helper {value}"

            raise ValueError(_msg(n))
        """,
        ("nested helper {n}", "template", "nested helper (.*?)", []),
    ),
]


@pytest.mark.parametrize(
    ("source", "expected"), [c[1:] for c in HELPER_CALLS], ids=[c[0] for c in HELPER_CALLS]
)
def test_helper_call_is_inlined_one_level(source, expected):
    extraction = extract_file("pkg/config.py", textwrap.dedent(source), Rules())
    (site,) = extraction.sites
    assert (
        site.errorMessage,
        site.messageStatus,
        site.messagePattern,
        site.messageFragments,
    ) == expected


# A helper's `(ok, message)` tuples go together: a test on `ok` keeps the returns it lets
# through (extractors/narrowing.py), so the success return's `None` never reads as a message.
_MARLIN_HELPER = """
def _check_kernel_supported(quant_type, group_size, has_zp):
    if quant_type not in SUPPORTED_TYPES:
        return (
            False,
            f"Marlin does not support weight_bits = {quant_type}. "
            f"Only types = {SUPPORTED_TYPES} are supported.",
        )
    if group_size is None or group_size not in SUPPORTED_GROUP_SIZES:
        return (
            False,
            f"Marlin does not support group_size = {group_size}. "
            f"Only group_sizes = {SUPPORTED_GROUP_SIZES} are supported.",
        )
    return True, None
"""
NARROWED = [
    (
        "`if not cond:` keeps both failing returns",
        """
        def verify_kernel_supported(quant_type, group_size, has_zp=False):
            cond, err_msg = _check_kernel_supported(quant_type, group_size, has_zp)
            if not cond:
                assert err_msg is not None
                raise ValueError(err_msg)
        """,
        "Marlin does not support {?weight_bits = {quant_type}. Only types = {SUPPORTED_TYPES}"
        "|group_size = {group_size}. Only group_sizes = {SUPPORTED_GROUP_SIZES}} are supported.",
        r"Marlin does not support (.*?) are supported\.",
    ),
    (
        "an early `return` when supported",
        """
        def verify_kernel_supported(quant_type, group_size):
            supported, reason = _check_kernel_supported(quant_type, group_size, False)
            if supported:
                return
            raise ValueError(reason)
        """,
        "Marlin does not support {?weight_bits = {quant_type}. Only types = {SUPPORTED_TYPES}"
        "|group_size = {group_size}. Only group_sizes = {SUPPORTED_GROUP_SIZES}} are supported.",
        r"Marlin does not support (.*?) are supported\.",
    ),
    (
        "the `else` arm of `if ok:`",
        """
        def verify_kernel_supported(quant_type, group_size):
            ok, reason = _check_kernel_supported(quant_type, group_size, False)
            if ok:
                logger.info("using the Marlin kernel")
            else:
                raise ValueError(reason)
        """,
        "Marlin does not support {?weight_bits = {quant_type}. Only types = {SUPPORTED_TYPES}"
        "|group_size = {group_size}. Only group_sizes = {SUPPORTED_GROUP_SIZES}} are supported.",
        r"Marlin does not support (.*?) are supported\.",
    ),
    (
        "a test on another name keeps every return",
        """
        def verify_kernel_supported(quant_type, group_size, strict):
            ok, reason = _check_kernel_supported(quant_type, group_size, False)
            if strict:
                raise ValueError(reason)
        """,
        "{?Marlin does not support weight_bits = {quant_type}. Only types = {SUPPORTED_TYPES}"
        " are supported.|Marlin does not support group_size = {group_size}. Only group_sizes ="
        " {SUPPORTED_GROUP_SIZES} are supported.|None}",
        "(.*?)",
    ),
    (
        "the flag rebound after the unpacking no longer says which return ran",
        """
        def verify_kernel_supported(quant_type, group_size, forced):
            ok, reason = _check_kernel_supported(quant_type, group_size, False)
            ok = ok or forced
            if not ok:
                raise ValueError(reason)
        """,
        "{?Marlin does not support weight_bits = {quant_type}. Only types = {SUPPORTED_TYPES}"
        " are supported.|Marlin does not support group_size = {group_size}. Only group_sizes ="
        " {SUPPORTED_GROUP_SIZES} are supported.|None}",
        "(.*?)",
    ),
]


@pytest.mark.parametrize(
    ("source", "message", "pattern"), [c[1:] for c in NARROWED], ids=[c[0] for c in NARROWED]
)
def test_a_test_on_the_flag_keeps_the_returns_it_lets_through(source, message, pattern):
    text = _MARLIN_HELPER + textwrap.dedent(source)
    (site,) = extract_file("vllm/quantization/marlin_utils.py", text, Rules()).sites
    assert (site.errorMessage, site.messagePattern) == (message, pattern)


# extractors/narrowing.py's `tested`: (test, whether it holds, the name and its truthiness)
TESTED = [
    ("ok", True, ("ok", True)),
    ("not ok", True, ("ok", False)),
    ("not ok", False, ("ok", True)),
    ("len(errors)", True, ("errors", True)),
    ("len(errors) > 0", True, ("errors", True)),
    ("len(errors) != 0", True, ("errors", True)),
    ("len(errors) >= 1", True, ("errors", True)),
    ("len(errors) == 0", False, ("errors", True)),
    ("not len(errors) < 1", True, ("errors", True)),
    ("len(errors) > 1", True, None),
    ("ok == 1", True, None),
    ("f(ok)", True, None),
]


@pytest.mark.parametrize(("test", "holds", "expected"), TESTED)
def test_a_test_tells_what_it_lets_through(test, holds, expected):
    from extractors.narrowing import tested

    assert tested(cst.parse_expression(test), holds) == expected


# A list a test let through only when it holds an entry (extractors/narrowing.py): a message
# joined from entries that each may be absent holds one of them, and its pattern says so with
# a lookahead (extractors/parts.py's Some) when it has no other literal text.
_PROBLEMS = """
    problems = []
    if self.tp < 1:
        problems.append(f"tensor_parallel_size must be positive, got {self.tp}")
    if self.spec and self.pp > 1:
        problems.append("speculative decoding does not support pipeline parallelism")
"""
_EITHER = (
    "(?=.*?(?:tensor_parallel_size must be positive, got "
    "|speculative decoding does not support pipeline parallelism))(.*?)"
)
FILLED = [
    ("`if problems:`", "    if problems:\n        raise ValueError('; '.join(problems))", _EITHER),
    (
        "`if len(problems) > 0:`",
        "    if len(problems) > 0:\n        raise ValueError('; '.join(problems))",
        _EITHER,
    ),
    (
        "an early return when the list is empty",
        "    if not problems:\n        return\n    raise ValueError('; '.join(problems))",
        _EITHER,
    ),
    (
        "`if len(problems) == 0:` with the raise in the else arm",
        "    if len(problems) == 0:\n        return\n    else:\n"
        "        raise ValueError('; '.join(problems))",
        _EITHER,
    ),
    (
        "an entry appended after the test keeps the list filled",
        "    if problems:\n        problems.append('see the docs')\n"
        "        raise ValueError(' '.join(problems))",
        # a sure entry is literal text: no lookahead needed
        "(.*?)see the docs",
    ),
    (
        "a test on another name says nothing of the list",
        "    if self.strict:\n        raise ValueError('; '.join(problems))",
        "(.*?)",
    ),
    (
        "items we cannot see may be the one there",
        "    problems.extend(self.more)\n    if problems:\n"
        "        raise ValueError('; '.join(problems))",
        "(.*?)",
    ),
    (
        "an entry with no literal text may be the one there",
        "    problems.append(self.detail)\n    if problems:\n"
        "        raise ValueError('; '.join(problems))",
        "(.*?)",
    ),
    (
        "literal text outside the pieces: the pattern stays as it was",
        "    if problems:\n        raise ValueError('invalid: ' + '; '.join(problems))",
        "invalid: (.*?)",
    ),
]


@pytest.mark.parametrize(("tail", "pattern"), [c[1:] for c in FILLED], ids=[c[0] for c in FILLED])
def test_a_list_tested_non_empty_holds_one_of_its_entries(tail, pattern):
    body = textwrap.indent(_PROBLEMS.strip("\n") + "\n" + tail, "    ")
    source = f"class Config:\n    def __post_init__(self):\n{body}\n"
    (site,) = extract_file("pkg/config.py", source, Rules()).sites
    assert site.messagePattern == pattern
    if pattern == _EITHER:  # every rendering matches; unrelated text does not
        for text in (
            "tensor_parallel_size must be positive, got 0",
            "speculative decoding does not support pipeline parallelism",
            "tensor_parallel_size must be positive, got 0; speculative decoding does not "
            "support pipeline parallelism",
        ):
            assert re.fullmatch(pattern, text, re.DOTALL)
        assert not re.fullmatch(pattern, "CUDA out of memory", re.DOTALL)
        assert not re.fullmatch(pattern, "", re.DOTALL)


# Literal braces are doubled in errorMessage, as in an f-string, so `{x}` always reads as a
# run-time part; the status of a plain string stays literal and a page shows its text.
LITERAL_BRACES = [
    ('"got {x}"', "got {{x}}", "literal", r"got \{x\}", "got {x}"),
    (
        "'expected JSON like {\"a\": 1}'",
        'expected JSON like {{"a": 1}}',
        "literal",
        r'expected JSON like \{"a": 1\}',
        'expected JSON like {"a": 1}',
    ),
    (
        'f"in {{4, 8}}, got {n}"',
        "in {{4, 8}}, got {n}",
        "template",
        r"in \{4, 8\}, got (.*?)",
        "in {{4, 8}}, got {n}",
    ),
    ('f"axes {{{x}}}"', "axes {{{x}}}", "template", r"axes \{(.*?)\}", "axes {{{x}}}"),
    ('f"{ {1: x}[1] }"', "{ {1: x}[1]}", "unresolved", "(.*?)", "{ {1: x}[1]}"),
]


@pytest.mark.parametrize(("source", "text", "status", "pattern", "shown"), LITERAL_BRACES)
def test_literal_braces_are_doubled_and_shown_as_text(source, text, status, pattern, shown):
    message = reconstruct(source)
    assert (message.text(), message.status(), message.pattern()) == (text, status, pattern)
    assert shown_message(message.text()) == shown
    check_run_time(source, pattern)


# --- every form has its table ---------------------------------------------------------------

# The case table of each message form of extractors/messages.py.
FORM_TABLES = {
    string_literal: STRING_LITERALS,
    implicit_concatenation: IMPLICIT_CONCATENATION,
    fstring: FSTRINGS,
    local_name: LOCAL_NAMES,
    plus_concatenation: PLUS_CONCATENATION,
    percent_format: PERCENT_FORMATTING,
    str_call: STR_CALLS,
    format_call: FORMAT_CALLS,
    conditional_expression: CONDITIONAL_EXPRESSIONS,
    join_call: JOIN_CALLS,
    sequence_display: SEQUENCE_DISPLAYS,
    helper_call: HELPER_CALLS,
}


def claimed_by(source: str):
    """The form that claims the expression `source` (None: it is one unknown Hole)."""
    module = cst.parse_module(f"_ = {source}\n")
    expr = module.body[0].body[0].value
    reader = Reader(module, lookup)
    return next((form for form in FORMS if form(reader, expr) is not None), None)


def claimed_in_file(source: str):
    """The form that claims the message of a file's one raise, the file's helpers at hand."""
    code = textwrap.dedent(source)
    module = cst.parse_module(code)
    defs, raises = {}, []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            defs[node.name.value] = node

        def visit_Raise(self, node: cst.Raise) -> None:
            raises.append(node)

    module.visit(Finder())
    functions = function_table(ast.parse(code), ("ValueError",))
    table = HelperTable(functions, lambda fn: (defs[fn.name], module), code.splitlines())
    (validator,) = [fn for fn in functions if fn.raise_lines]
    reader = Reader(module, lookup, table.for_validator(validator))
    expr = raises[0].exc.args[0].value
    return next((form for form in FORMS if form(reader, expr) is not None), None)


def claimed(case: tuple, form) -> bool:
    if form is helper_call:  # whole files: (name, source, facts)
        return claimed_in_file(case[1]) is form
    return claimed_by(case[0]) is form


def test_every_message_form_has_a_case_table():
    assert [form.__name__ for form in FORMS if form not in FORM_TABLES] == []
    assert [form.__name__ for form in FORM_TABLES if form not in FORMS] == []


@pytest.mark.parametrize("form", FORMS, ids=lambda form: form.__name__)
def test_each_form_claims_cases_of_its_own_table(form):
    claims = [case[0] for case in FORM_TABLES[form] if claimed(case, form)]
    assert claims, f"no case of its table is claimed by {form.__name__}"


def test_no_form_claims_the_other_expressions():
    assert [case[0] for case in OTHER_EXPRESSIONS if claimed_by(case[0]) is not None] == []


# --- the Message itself ------------------------------------------------------------------

STATUSES = [
    ((), "literal"),
    ((Text("fixed"),), "literal"),
    ((Text("got "), Hole("n", True)), "template"),
    ((Text("got "), Hole("n", True), Hole("reason", False)), "partial"),
    ((Hole("n", True),), "unresolved"),
    ((Hole("n", True), Hole("reason", False)), "unresolved"),
]


@pytest.mark.parametrize(("parts", "status"), STATUSES)
def test_status_follows_known_text_and_hole_kinds(parts, status):
    assert Message(parts).status() == status


def test_message_merges_adjacent_text_and_drops_empty_text():
    message = Message((Text("a"), Text(""), Text("b"), Hole("n", True), Text("")))
    assert message.parts == (Text("ab"), Hole("n", True))


def test_adding_messages_joins_their_parts():
    joined = Message((Text("got "), Hole("n", True))) + Message((Text(" items"),))
    assert (joined.text(), joined.pattern()) == ("got {n} items", "got (.*?) items")


@pytest.mark.parametrize(
    "source,expected",
    [
        ("cfg.mode", "cfg.mode"),
        ("describe(\n    x,\n    n,\n)", "describe(x, n)"),
        ("[\n    a,  # first\n    b,\n]", "[a, b]"),
        ("a\n    and b", "a and b"),
        ("(\n    a or b\n)", "(a or b)"),
        ("describe(a  +  b,\n    n)", "describe(a + b, n)"),
        ("describe(\n    x,\n    '''one\n  two''',\n)", "describe(x, '''one\n  two''')"),
    ],
)
def test_one_line_collapses_multi_line_source(source, expected):
    assert hole_source(source) == expected
