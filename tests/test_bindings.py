"""Local message variables on the path to a raise (extractors/bindings.py)."""

import textwrap

import pytest

from extractors.facts import Rules
from extractors.sites import extract_file


def messages_of(source: str) -> list[tuple[str, str]]:
    """(errorMessage, messageStatus) of every site of `source`, in line order."""
    extraction = extract_file("pkg/config.py", textwrap.dedent(source), Rules())
    assert extraction.skipped is None
    return [(site.errorMessage, site.messageStatus) for site in extraction.sites]


# (case name, source, (errorMessage, messageStatus) of each site in line order)
CASES = [
    (
        "a variable assigned before the raise",
        """
        def validate(n):
            msg = f"size must be positive, got {n}"
            raise ValueError(msg)
        """,
        [("size must be positive, got {n}", "template")],
    ),
    (
        "extended with += on the way",
        """
        def validate(n, limit):
            msg = "size out of range"
            msg += f": {n} > {limit}"
            raise ValueError(msg)
        """,
        [("size out of range: {n} > {limit}", "template")],
    ),
    (
        "assignments in blocks that enclose the raise certainly ran",
        """
        def validate(n):
            if n < 0:
                msg = "negative"
                if n < -10:
                    msg += " (far below zero)"
                    raise ValueError(msg)
        """,
        [("negative (far below zero)", "literal")],
    ),
    (
        "a conditional += adds an unknown part written as its source",
        """
        def validate(n, hint):
            msg = "bad size"
            if hint:
                msg += f" ({hint})"
            raise ValueError(msg)
        """,
        [('bad size{f" ({hint})"}', "partial")],
    ),
    (
        "a conditional += over several lines is written on one line",
        """
        def validate(n, hints):
            msg = "bad size"
            if hints:
                msg += ", ".join(
                    hints,  # the user's
                )
            raise ValueError(msg)
        """,
        [('bad size{", ".join(hints)}', "partial")],
    ),
    (
        "reassigned in a branch: the whole value is unknown",
        """
        def validate(n):
            msg = "too small"
            if n > 8:
                msg = "too large"
            raise ValueError(msg)
        """,
        [("{msg}", "unresolved")],
    ),
    (
        "a loop that does not enclose the raise may have run",
        """
        def validate(names):
            msg = "unknown:"
            for name in names:
                msg += " " + name
            raise ValueError(msg)
        """,
        [('unknown:{" " + name}', "partial")],
    ),
    (
        "a prefix assigned earlier, then + 'tail'",
        """
        def validate(name, n):
            prefix = f"{name}: "
            if n <= 0:
                raise ValueError(prefix + "must be positive")
        """,
        [("{name}: must be positive", "template")],
    ),
    (
        "a parameter is not known text",
        """
        def validate(msg):
            raise ValueError(msg)
        """,
        [("{msg}", "unresolved")],
    ),
    (
        "+= on a variable of unknown value keeps the known tail",
        """
        def validate(cfg):
            msg = cfg.describe()
            msg += " is not supported"
            raise ValueError(msg)
        """,
        [("{msg} is not supported", "partial")],
    ),
    (
        "a non-text value stays its name",
        """
        def validate(shape):
            n = len(shape)
            raise ValueError(f"expected 2 dims, got {n}")
        """,
        [("expected 2 dims, got {n}", "template")],
    ),
    (
        "assignments after the raise do not count",
        """
        def validate(n):
            msg = "first"
            if n:
                raise ValueError(msg)
            msg = "second"
            raise ValueError(msg)
        """,
        [("first", "literal"), ("second", "literal")],
    ),
    (
        "same line, after a semicolon",
        """
        def validate(n):
            msg = "negative"; raise ValueError(msg)
        """,
        [("negative", "literal")],
    ),
    (
        "a handler runs after an unknown part of the try body",
        """
        def validate(text):
            msg = "not a number"
            try:
                msg = "out of range"
                if int(text) > 8:
                    raise ValueError(msg)
            except TypeError:
                raise ValueError(msg)
        """,
        [("out of range", "literal"), ("{msg}", "unresolved")],
    ),
    (
        "a loop's else runs after the loop body may have run",
        """
        def validate(names):
            msg = "no match among:"
            for name in names:
                msg += f" {name}"
                if name.startswith("x"):
                    break
            else:
                raise ValueError(msg)
        """,
        [('no match among:{f" {name}"}', "partial")],
    ),
    (
        "a for target rebinds the name",
        """
        def validate(messages):
            msg = "none"
            for msg in messages:
                raise ValueError(msg)
        """,
        [("{msg}", "unresolved")],
    ),
]


@pytest.mark.parametrize(
    ("source", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_local_message_variables(source, expected):
    assert messages_of(source) == expected
