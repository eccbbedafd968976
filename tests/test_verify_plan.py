"""How a reproducer calls each kind of function (pipeline/verify/plan.py): its last lines, from
a function read with installed.function_at and the solved guards."""

from __future__ import annotations

import ast
import textwrap

import pytest

from pipeline.verify.installed import function_at, passing_test
from pipeline.verify.plan import plan
from pipeline.verify.solve import solutions

SOURCE = textwrap.dedent(
    """
    class Config:
        def check(self):
            if self.cache.mode == "all" and not self.eager:
                raise ValueError("x")

        @classmethod
        def check_size(cls, value, info):
            if value > 8:
                raise ValueError("x")

        @staticmethod
        def check_static(n):
            if n < 0:
                raise ValueError("x")


    def check_args(args, strict=False):
        for name, value in args.items():
            if name not in KNOWN:
                raise ValueError("x")
        if not has_gpu():
            raise ValueError("x")
    """
)

CASES = [
    (
        "Config.check", 4, ['self.cache.mode == "all" and not self.eager'],
        ["self = blank(mod.Config)", "put(self, 'cache.mode', 'all')", "put(self, 'eager', None)",
         "raw(mod.Config, 'check')(self)"],
    ),
    (
        "Config.check_size", 9, ["value > 8"],
        ["cls = mod.Config", "raw(mod.Config, 'check_size')(cls, value=9, info=Stand())"],
    ),
    ("Config.check_static", 14, ["n < 0"], ["raw(mod.Config, 'check_static')(n=-1)"]),
    (
        "check_args", 20, ["(name, value) in args.items()", "name not in KNOWN"],
        ["raw(mod.check_args)(args={'vmine-other': Stand(True)})"],
    ),
    ("check_args", 22, ["not has_gpu()"], ["put(mod, 'has_gpu()', None)", "raw(mod.check_args)(args=Stand())"]),
]  # fmt: skip


@pytest.mark.parametrize(("qualname", "line", "tests", "last_lines"), CASES)
def test_the_reproducer_calls_the_function_by_its_binding(qualname, line, tests, last_lines):
    function = function_at(SOURCE, qualname, line)
    (way, *_) = solutions(tests, function.locals)
    code = plan("pkg.config", function, way, [], "header").code
    lines = code.rstrip("\n").split("\n")
    assert lines[0] == "# header"
    assert "import pkg.config as mod" in lines
    body = lines[lines.index("import pkg.config as mod") + 1 :]
    assert body == last_lines


def test_an_earlier_exit_is_kept_from_firing_by_its_tests():
    assert passing_test(SOURCE, 10) == "not ((value > 8))"
    assert passing_test(SOURCE, 9) is None  # an if, not a raise


def test_a_nested_function_is_not_callable():
    assert (
        function_at("def f():\n    def g():\n        raise ValueError\n", "f.<locals>.g", 3) is None
    )


def test_a_string_keeps_its_own_methods():
    source = textwrap.dedent(
        """
        class Config:
            @classmethod
            def check_mode(cls, value):
                if isinstance(value, str):
                    name = value.upper()
                    if name not in MODES:
                        raise ValueError("x")
        """
    )
    function = function_at(source, "Config.check_mode", 7)
    (way, *_) = solutions(["isinstance(value, str)", "name not in MODES"], function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert code.rstrip().endswith("raw(mod.Config, 'check_mode')(cls, value='x')")


def test_an_argument_another_value_reads_is_made_first():
    source = "def check(q, k):\n    if k.dtype != q.dtype:\n        raise ValueError('x')\n"
    function = function_at(source, "check", 3)
    (way, *_) = solutions(["q.dtype == k.dtype", "k.dtype == 'bf16'"], function.locals)
    body = plan("pkg", function, way, [], "header").code.rstrip().split("\n")[-5:]
    assert body == [
        "k = Stand(True)",
        "q = Stand(True)",
        "put(k, 'dtype', 'bf16')",
        "put(q, 'dtype', k.dtype)",
        "raw(mod.check)(q=q, k=k)",
    ]


def test_a_fix_naming_the_object_otherwise_changes_it_where_the_reproducer_set_it():
    from pipeline.verify.plan import with_changes

    code = (
        "import pkg as mod\nself = blank(mod.C)\nput(self, 'limit', 0)\nraw(mod.C, 'check')(self)\n"
    )
    changed = with_changes(code, [("cfg.limit", "1")])
    assert changed.rstrip().split("\n")[-3:] == [
        "put(self, 'limit', 0)",
        "put(self, 'limit', 1)",
        "raw(mod.C, 'check')(self)",
    ]


def test_expressions_equal_to_each_other_read_one_of_them():
    source = "def check(q, k, v):\n    if q.device != k.device:\n        raise ValueError('x')\n"
    function = function_at(source, "check", 3)
    tests = ["q.device == k.device and q.device == v.device"]
    (way, *_) = solutions(tests, function.locals)
    body = plan("pkg", function, way, [], "header").code.rstrip().split("\n")[-6:]
    assert body == [
        "k = Stand(True)",
        "q = Stand(True)",
        "v = Stand(True)",
        "put(q, 'device', v.device)",
        "put(k, 'device', v.device)",
        "raw(mod.check)(q=q, k=k, v=v)",
    ]


def _raised_by(source: str, code: str) -> str | None:
    """What the reproducer `code` raises, run here against `source` as the module `pkg`."""
    import sys
    import types

    module = types.ModuleType("pkg")
    exec(compile(source, "pkg.py", "exec"), module.__dict__)
    sys.modules["pkg"] = module
    try:
        exec(compile(code, "<reproducer>", "exec"), {"__name__": "__test__"})
    except ValueError as error:
        return str(error)
    finally:
        del sys.modules["pkg"]
    return None


SHAPES = textwrap.dedent(
    """
    def check(q, k, v, blk):
        if q.shape[-1] != k.shape[-1]:
            raise ValueError("head dims differ")
        if k.shape != v.shape:
            raise ValueError("k and v differ")
        if k.shape[1] != v.shape[-2] or q.shape[-1] != 128:
            raise ValueError("bad tail")
        page = int(k.shape[2])
        if page != int(blk):
            raise ValueError("page size")
    """
)
SHAPE_CASES = [
    # items by index of one list of unknown length: its first and last items differ
    (5, ["q.shape[-1] != k.shape[-1]"], "head dims differ"),
    (
        9,
        ["q.shape[-1] == k.shape[-1]", "k.shape == v.shape",
         "k.shape[1] != v.shape[-2] or q.shape[-1] != 128"],
        "bad tail",
    ),
    # k.shape == v.shape: one list, made before its items are put
    (
        11,
        ["q.shape[-1] == k.shape[-1]", "k.shape == v.shape", "q.shape[-1] == 128",
         "k.shape[1] == v.shape[-2]", "page != int(blk)"],
        "page size",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("line", "tests", "message"), SHAPE_CASES)
def test_items_read_by_index_are_laid_out_in_one_list(line, tests, message):
    function = function_at(SHAPES, "check", line)
    (way, *_) = solutions(tests, function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert _raised_by(SHAPES, code) == message


CALLS = textwrap.dedent(
    """
    def _check_lengths(lengths, *, name, device):
        if lengths.device != device:
            raise ValueError(f"{name} must be on the device of q")
        if not lengths.is_contiguous():
            raise ValueError(f"{name} must be contiguous")


    class Inputs:
        def _check_schedule(self, schedule):
            meta = schedule.metadata
            if meta is None:
                raise ValueError("no metadata")


    def check(q, lengths, self):
        _check_lengths(lengths, name="lengths", device=q.device)
        self._check_schedule(q.schedule)
        if q.ndim != 3:
            raise ValueError("q must be rank-3")
    """
)


@pytest.mark.parametrize(
    ("line", "call_line", "test"),
    [
        (4, 17, "not lengths.device != q.device and (not not lengths.is_contiguous())"),
        (13, 18, "not q.schedule.metadata is None"),  # a method through self, a local
        (4, 19, None),  # no call of that function on the line
    ],
)
def test_an_exit_of_a_called_function_is_passed_in_the_callers_terms(line, call_line, test):
    from pipeline.verify.installed import passing_test_through_call

    assert passing_test_through_call(CALLS, line, call_line) == test


def test_what_a_put_sets_is_made_before_what_is_put_in_it():
    source = "def check(s):\n    if s.meta.ndim != 2:\n        raise ValueError('x')\n"
    function = function_at(source, "check", 3)
    (way, *_) = solutions(["s.meta.ndim == 3", "s.meta is not None"], function.locals)
    body = plan("pkg", function, way, [], "header").code.rstrip().split("\n")[-3:]
    assert body == ["put(s, 'meta', Stand(True))", "put(s, 'meta.ndim', 3)", "raw(mod.check)(s=s)"]


def test_a_number_argument_another_value_reads_is_made_first():
    source = "def check(q, n):\n    if q.total != q.rows * n:\n        raise ValueError('x')\n"
    function = function_at(source, "check", 3)
    (way, *_) = solutions(["q.total == q.rows * n", "n == 2"], function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert "n = 2" in code.split("\n")
    assert code.rstrip().endswith("raw(mod.check)(q=q, n=n)")


@pytest.mark.parametrize("expression", ["4 % s", "4 // s", "s | s", "-s", "2 ** s", "1 / s"])
def test_a_stand_in_takes_part_in_arithmetic(expression):
    from pipeline.verify.plan import PRELUDE

    namespace: dict = {}
    exec(PRELUDE["Stand"], namespace)
    assert type(eval(expression, {**namespace, "s": namespace["Stand"]()})).__name__ == "Stand"


def test_a_loop_item_known_only_to_be_in_its_iterable_is_a_stand_in():
    source = textwrap.dedent(
        """
        def check(xs):
            for entry in xs:
                if not isinstance(entry, tuple):
                    raise ValueError("each entry must be a tuple")
        """
    )
    function = function_at(source, "check", 5)
    (way, *_) = solutions(["entry in xs", "not isinstance(entry, tuple)"], function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert code.rstrip().endswith("raw(mod.check)(xs=[Stand(True)])")
    assert _raised_by(source, code) == "each entry must be a tuple"


def test_a_loop_over_what_must_be_a_tuple_is_given_a_tuple():
    source = textwrap.dedent(
        """
        def check(ids):
            if isinstance(ids, tuple):
                for one in ids:
                    if one < 0:
                        raise ValueError(f"negative id {one}")
        """
    )
    function = function_at(source, "check", 6)
    tests = ["isinstance(ids, tuple)", "one in ids", "one < 0"]
    (way, *_) = solutions(tests, function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert code.rstrip().endswith("raw(mod.check)(ids=(-1,))")
    assert _raised_by(source, code) == "negative id -1"


def test_a_loop_item_takes_what_else_it_must_be():
    source = textwrap.dedent(
        """
        def check(parts):
            for part in parts:
                if not part:
                    raise ValueError("empty part")
        """
    )
    function = function_at(source, "check", 5)
    (way, *_) = solutions(["part in parts", "not part"], function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert code.rstrip().endswith("raw(mod.check)(parts=[None])")
    assert _raised_by(source, code) == "empty part"


BRANCHES = textwrap.dedent(
    """
    import re

    NAME = re.compile(r"[a-z_]+")


    def check_heads(q, k, pages, extra):
        if pages is None:
            heads = k.shape[-2]
        else:
            heads = k.shape[1]
        if extra:
            raise ValueError("no extras")
        rows, cols = (q.shape[0], q.shape[1])
        if cols % heads != 0:
            raise ValueError("heads do not divide the columns")


    def check_same(current, target):
        if current == target:
            raise ValueError("a layer cannot share with itself")


    def check_name(name):
        if not NAME.fullmatch(name):
            raise ValueError("bad name")
    """
)


def test_the_locals_a_raise_sees_are_read_through_the_branches_before_it():
    function = function_at(BRANCHES, "check_heads", 16)
    assert {name: ast.unparse(value) for name, value in function.locals.items()} == {
        "heads": "k.shape[-2] if pages is None else k.shape[1]",
        "rows": "q.shape[0]",
        "cols": "q.shape[1]",
    }


@pytest.mark.parametrize("guard", ["pages is None", "pages is not None"])
def test_a_local_set_in_two_branches_raises_on_the_way_the_guards_take(guard):
    function = function_at(BRANCHES, "check_heads", 16)
    (way, *_) = solutions([guard, "cols % heads != 0", "not extra"], function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert _raised_by(BRANCHES, code) == "heads do not divide the columns"


def test_an_argument_equal_to_another_is_that_very_object():
    function = function_at(BRANCHES, "check_same", 21)
    (way, *_) = solutions(["current == target"], function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert code.rstrip().split("\n")[-2:] == [
        "target = Stand()",
        "raw(mod.check_same)(current=target, target=target)",
    ]
    assert _raised_by(BRANCHES, code) == "a layer cannot share with itself"


def test_what_an_object_that_takes_no_attributes_answers_is_put_in_a_cover():
    # a compiled pattern's fullmatch cannot be set on it: the module's NAME is covered
    function = function_at(BRANCHES, "check_name", 26)
    (way, *_) = solutions(["not NAME.fullmatch(name)"], function.locals)
    code = plan("pkg", function, way, [], "header").code
    assert "put(mod, 'NAME.fullmatch()', None)" in code
    assert _raised_by(BRANCHES, code) == "bad name"


def test_a_blank_instance_answers_after_the_class_own_getattr():
    from pipeline.verify.plan import PRELUDE

    source = textwrap.dedent(
        """
        class Module:
            def __getattr__(self, name):
                if name == "weight":
                    return 3
                raise AttributeError(name)
        """
    )
    namespace: dict = {}
    exec(PRELUDE["Stand"] + PRELUDE["blank"] + source, namespace)
    made = namespace["blank"](namespace["Module"])
    assert made.weight == 3
    assert type(made.output_sizes).__name__ == "Stand"


NONES = textwrap.dedent(
    """
    class Spec:
        def __post_init__(self):
            if self.method == "draft":
                self.draft = Draft(
                    tokenizer=self.target.tokenizer,
                )
            if len(self.names) != 2:
                raise ValueError(
                    "two names"
                )
    """
)


@pytest.mark.parametrize(
    ("line", "message", "roots", "test"),
    [
        (6, "'NoneType' object has no attribute 'tokenizer'", {"self"}, "self.target is not None"),
        (4, "'NoneType' object has no attribute 'tokenizer'", {"self"}, "self.target is not None"),
        (8, "object of type 'NoneType' has no len()", {"self"}, "self.names is not None"),
        (6, "'NoneType' object has no attribute 'tokenizer'", set(), None),  # not ours to set
        (6, "'NoneType' object has no attribute 'other'", {"self"}, None),
    ],
)
def test_a_none_read_on_the_way_is_kept_from_being_none(line, message, roots, test):
    from pipeline.verify.installed import not_none_test

    assert not_none_test(NONES, line, message, roots) == test


def test_a_raise_that_spans_lines_is_found_from_any_of_its_lines():
    assert passing_test(NONES, 9) == "not ((len(self.names) != 2))"
    assert passing_test(NONES, 10) == "not ((len(self.names) != 2))"


UNPACKED = textwrap.dedent(
    """
    def mapping(tp, hidden):
        return hidden // tp, tp, 64, None


    def check_mapping(tp, hidden):
        shard, cluster, threads, _ = mapping(tp, hidden)
        if shard % 8:
            raise ValueError("shard not a multiple of 8")
        if cluster > 16 or threads < cluster:
            raise ValueError("cluster too wide")
    """
)


def test_a_local_unpacked_from_a_call_is_what_the_patched_function_returns():
    function = function_at(UNPACKED, "check_mapping", 11)
    assert ast.unparse(function.locals["cluster"]) == "mapping(tp, hidden)[1]"
    (way, *_) = solutions(["cluster > 16 or threads < cluster", "not shard % 8"], function.locals)
    code = plan("pkg", function, way, [], "header").code
    # one list of every item unpacked, whatever is put in it afterwards
    assert "put(mod, 'mapping()', [Stand(True) for _ in range(4)])" in code
    assert _raised_by(UNPACKED, code) == "cluster too wide"


def test_a_helper_that_returns_the_message_is_not_patched():
    source = textwrap.dedent(
        """
        def _supported(bits):
            if bits not in (4, 8):
                return False, f"{bits} bits are not supported"
            return True, None


        def verify_supported(bits):
            ok, message = _supported(bits)
            if not ok:
                raise ValueError(message)
        """
    )
    function = function_at(source, "verify_supported", 11)
    assert "ok" not in function.locals  # the real helper runs and writes the message
