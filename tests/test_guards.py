"""The conditions that hold when a raise runs (extractors/guards.py), as one-line text."""

import textwrap

import libcst as cst
import pytest

from extractors.facts import Rules
from extractors.guards import condition, negate
from extractors.sites import extract_file
from extractors.syntax.code_line import code_on_one_line

MODULE = cst.Module(body=[])


def expression(source: str) -> cst.BaseExpression:
    return cst.parse_expression(textwrap.dedent(source).strip())


NEGATIONS = [
    ("a != b", "a == b"),
    ("a == b", "a != b"),
    ("cfg.device is None", "cfg.device is not None"),
    ("cfg.device is not None", "cfg.device is None"),
    ("mode in MODES", "mode not in MODES"),
    ("mode not in MODES", "mode in MODES"),
    ("n < 0", "n >= 0"),
    ("n >= 8", "n < 8"),
    ("n > 8", "n <= 8"),
    ("n <= 0", "n > 0"),
    ("not enabled", "enabled"),
    ("not (a or b)", "a or b"),
    ("enabled", "not enabled"),
    ("self.cache.enabled", "not self.cache.enabled"),
    ("is_cuda()", "not is_cuda()"),
    ("shape[0]", "not shape[0]"),
    ("(cfg.eager)", "not cfg.eager"),
    ("(a, b)", "not (a, b)"),
    ("a is not None and b == 1", "a is None or b != 1"),
    ("a or not b", "not a and b"),
    ("x and y and z != 0", "not x or not y or z == 0"),
    ("x and not (a or b)", "not x or (a or b)"),
    ("a or not (b and c)", "not a and (b and c)"),
    ("a and (b or c)", "not (a and (b or c))"),
    ("0 <= rank < size", "not (0 <= rank < size)"),
    ("n % 2", "not (n % 2)"),
    ("(x := f()) is None", "(x := f()) is not None"),
    ("(\n    a is None\n    or b\n)", "a is not None and not b"),
    ("len(\n    shape\n) != 2", "len(shape) == 2"),
]


@pytest.mark.parametrize(("test", "negated"), NEGATIONS)
def test_negation_reads_naturally(test, negated):
    assert negate(expression(test), MODULE) == negated


ONE_LINE = [
    ("a and b", "a and b"),
    ("(\n    a\n    and b  # why\n)", "a and b"),
    ("((a))", "a"),
    ("(a) and (b)", "(a) and (b)"),
    ("f(\n    x,\n    y,\n)", "f(x, y)"),
    ('"two  spaces" in  text', '"two  spaces" in text'),
    ("a \\\n    and b", "a and b"),
    ('x in (\n    "a",\n    "b",\n)', 'x in ("a", "b")'),
]


@pytest.mark.parametrize(("source", "written"), ONE_LINE)
def test_condition_is_one_line(source, written):
    assert code_on_one_line(source) == written
    if "\\" not in source:
        assert condition(expression(source), MODULE) == written


def guards_of(source: str) -> list[list[str]]:
    """The guards of every site of `source`, in line order."""
    extraction = extract_file("pkg/config.py", textwrap.dedent(source), Rules())
    assert extraction.skipped is None
    return [site.guards for site in extraction.sites]


# (case name, source, the guards of each site in line order)
CASES = [
    (
        "an enclosing if",
        """
        def validate(cfg):
            if cfg.size < 0:
                raise ValueError("negative size")
        """,
        [["cfg.size < 0"]],
    ),
    (
        "a raise outside any if has no guard",
        """
        def validate(cfg):
            raise ValueError("always")
        """,
        [[]],
    ),
    (
        "early return, then the enclosing if",
        """
        def validate(cfg):
            if cfg is None:
                return
            if cfg.size < 0:
                raise ValueError("negative size")
        """,
        [["cfg is not None", "cfg.size < 0"]],
    ),
    (
        "early returns in source order across enclosing blocks",
        """
        def validate(cfg):
            if not cfg.enabled:
                log("off")
                return None
            if cfg.mode == "auto":
                if cfg.size is None or cfg.size == 0:
                    return cfg
                raise ValueError("auto mode needs no size")
        """,
        [["cfg.enabled", "cfg.size is not None and cfg.size != 0", 'cfg.mode == "auto"']],
    ),
    (
        "an early return after the raise is no guard; one nested in an earlier if, or in the "
        "first arm of an if with an else, is",
        """
        def validate(cfg):
            if cfg.a:
                if cfg.b:
                    return
            if cfg.c:
                return
            else:
                pass
            if cfg.d:
                raise ValueError("d")
            if cfg.e:
                return
        """,
        [["not cfg.a or not cfg.b", "not cfg.c", "cfg.d"]],
    ),
    (
        "an if whose arms all return is an early exit",
        """
        def validate(cfg):
            if cfg.lazy:
                if cfg.x:
                    return 1
                else:
                    return 2
            raise ValueError("eager")
        """,
        [["not cfg.lazy"]],
    ),
    (
        "an if whose elif chain returns in every arm is an early exit; a one-line return too",
        """
        def validate(cfg):
            if cfg is None: return
            if cfg.lazy:
                if cfg.x:
                    return 1
                elif cfg.y:
                    return 2
                else:
                    return 3
            raise ValueError("eager")
        """,
        [["cfg is not None", "not cfg.lazy"]],
    ),
    (
        "the arms of a nested if that return are early exits each, under the enclosing test",
        """
        def validate(cfg):
            if cfg.lazy:
                if cfg.x:
                    return 1
                elif cfg.y:
                    log("y")
                else:
                    return 3
            raise ValueError("eager")
        """,
        [["not cfg.lazy or not cfg.x", "not cfg.lazy or cfg.y"]],
    ),
    (
        "if / elif / else: earlier arms negated",
        """
        def validate(kind, n):
            if kind == "a":
                pass
            elif n > 8:
                raise ValueError("too many")
            elif kind not in KINDS:
                raise ValueError("unknown kind")
            else:
                raise ValueError("other")
        """,
        [
            ['kind != "a"', "n > 8"],
            ['kind != "a"', "n <= 8", "kind not in KINDS"],
            ['kind != "a"', "n <= 8", "kind in KINDS"],
        ],
    ),
    (
        "nested ifs, outermost first",
        """
        def validate(cfg):
            if cfg.speculative:
                if not cfg.eager:
                    if cfg.draft is None:
                        raise ValueError("needs a draft model")
        """,
        [["cfg.speculative", "not cfg.eager", "cfg.draft is None"]],
    ),
    (
        "a multi-line condition becomes one line without its outer parentheses",
        """
        def validate(cfg):
            if (
                cfg.transfer is not None
                and cfg.transfer.is_instance  # P/D
            ):
                raise ValueError("incompatible")
        """,
        [["cfg.transfer is not None and cfg.transfer.is_instance"]],
    ),
    (
        "for loops give their header; while, try and with tests are not guards, but the ifs "
        "inside them are",
        """
        def validate(items):
            while pending():
                for item in items:
                    try:
                        with lock:
                            if item < 0:
                                raise ValueError("negative")
                    except KeyError:
                        if strict:
                            raise ValueError("missing")
        """,
        [["item in items", "item < 0"], ["item in items", "strict"]],
    ),
    (
        "a raise in a for loop's else has no loop header, even after one in its body",
        """
        def validate(xs):
            for x in xs:
                if x: raise ValueError("a")
            else:
                raise ValueError("in else")
        """,
        [["x in xs", "x"], []],
    ),
    (
        "one-line if",
        """
        def validate(n):
            if n < 0: raise ValueError("negative")
        """,
        [["n < 0"]],
    ),
]


@pytest.mark.parametrize(
    ("source", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_guards(source, expected):
    assert guards_of(source) == expected


def prior_checks_of(source: str) -> list[list[str]]:
    """The priorChecks of every site of `source`, in line order."""
    extraction = extract_file("pkg/config.py", textwrap.dedent(source), Rules())
    assert extraction.skipped is None
    return [site.priorChecks for site in extraction.sites]


# (case name, source, the priorChecks of each site in line order)
PRIOR_CHECKS = [
    (
        "the earlier raising checks of the function, negated, in source order",
        """
        def _rope_scaling_validation(self):
            if not isinstance(self.rope_scaling, dict) or len(self.rope_scaling) != 2:
                raise ValueError("rope_scaling must be a dict with two fields")
            kind = self.rope_scaling.get("type")
            if kind not in ("linear", "dynamic"):
                raise ValueError(f"unknown rope_scaling type {kind}")
            factor = self.rope_scaling.get("factor")
            if factor is None or factor <= 1.0:
                raise ValueError(f"rope_scaling factor must be > 1, got {factor}")
        """,
        [
            [],
            ["isinstance(self.rope_scaling, dict) and len(self.rope_scaling) == 2"],
            [
                "isinstance(self.rope_scaling, dict) and len(self.rope_scaling) == 2",
                'kind in ("linear", "dynamic")',
            ],
        ],
    ),
    (
        "checks nested in an earlier if, in an enclosing block, and of any error class; "
        "not the checks after the raise or in a loop",
        """
        def __post_init__(self):
            if self.use_dora:
                if self.r <= 0:
                    raise ValueError("r must be positive with DoRA")
            for name in self.target_modules:
                if not name:
                    raise ValueError("empty module name")
            if not isinstance(self.alpha, int):
                raise TypeError("alpha must be an int")
            if self.init_weights:
                if self.init_weights not in ("gaussian", "pissa"):
                    raise ValueError(f"unknown init {self.init_weights}")
            if self.alpha == 0:
                raise ValueError("after")
        """,
        [
            [],
            ["not self.use_dora or self.r > 0"],
            ["not self.use_dora or self.r > 0", "isinstance(self.alpha, int)"],
            [
                "not self.use_dora or self.r > 0",
                "isinstance(self.alpha, int)",
                'not self.init_weights or self.init_weights in ("gaussian", "pissa")',
            ],
        ],
    ),
    (
        "an arm that raises after an arm that returns is a check of its own test; a check "
        "that is also a guard is listed as a guard only",
        """
        def validate(self):
            if self.mode == "off":
                return
            elif self.mode not in MODES:
                raise ValueError(f"unknown mode {self.mode}")
            if self.bits is None:
                raise ValueError("bits must be set")
            if self.bits is not None:
                if self.bits > 8:
                    raise ValueError("at most 8 bits")
        """,
        [
            [],
            ["self.mode in MODES"],
            ["self.mode in MODES"],
        ],
    ),
    (
        "a check of four nested tests reads as noise and is left out",
        """
        def check_shapes(self):
            if self.a:
                if self.b:
                    if self.c:
                        if self.d:
                            raise ValueError("deep")
            raise ValueError("after")
        """,
        [[], []],
    ),
]


@pytest.mark.parametrize(
    ("source", "expected"),
    [case[1:] for case in PRIOR_CHECKS],
    ids=[case[0] for case in PRIOR_CHECKS],
)
def test_prior_checks(source, expected):
    assert prior_checks_of(source) == expected


def test_prior_checks_keep_the_nearest_ones_after_many_checks():
    lines = ["def validate_limits(self):"]
    for n in range(40):
        lines += [f"    if self.limit_{n} < 0:", f'        raise ValueError("limit_{n} < 0")']
    (*_, last) = prior_checks_of("\n".join(lines) + "\n")
    assert last == [f"self.limit_{n} >= 0" for n in range(7, 39)]
