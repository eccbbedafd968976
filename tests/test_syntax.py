"""The syntax toolkit (extractors/syntax/): each question answered once, the same for `ast`
and libcst trees where both ask it."""

from __future__ import annotations

import ast
import re
import textwrap

import libcst as cst
import pytest
from hypothesis import given
from hypothesis import strategies as st

from extractors.syntax import cst_tree, names, text
from extractors.syntax.annotations import annotated_class, members
from extractors.syntax.walk import ast_children, ast_walk, own_nodes

# (expression, its dotted name)
DOTTED = [
    ("a", "a"),
    ("self.cache_config.block_size", "self.cache_config.block_size"),
    ("f().x", None),
    ("a[0].b", None),
    ("'text'", None),
]


@pytest.mark.parametrize(("code", "name"), DOTTED)
def test_dotted_names_read_the_same_in_both_trees(code, name):
    node = ast.parse(code, mode="eval").body
    assert names.dotted(node) == name == cst_tree.dotted(cst.parse_expression(code))
    assert names.dotted_parts(node) == (name.split(".") if name else None)


# lists that hold more than nodes (None keys of `{**x}`, names of `global`), match patterns,
# f-strings, decorators, comprehensions, a lambda and a star target
AST_SHAPES = textwrap.dedent(
    """
    import os.path as p
    counter = 0

    @register(name=f"{p.sep!r:>4}")
    class Config(Base, metaclass=Meta):
        size: int = 1

        def check(self, *args, limit=None, **kwargs) -> None:
            global counter
            merged = {**kwargs, "a": 1}
            first, *rest = [x for x in args if x if not x.skip]
            match merged:
                case {"a": 1, **others} if others:
                    pass
                case [Point(x=0), *_] | None:
                    raise ValueError(lambda y=1: y + counter)
            async def inner():
                async with lock as held:
                    await held
    """
)


def test_the_fast_ast_walks_give_the_stdlib_s_nodes_in_its_order():
    tree = ast.parse(AST_SHAPES)
    assert list(ast_walk(tree)) == list(ast.walk(tree))  # the same objects
    for node in ast.walk(tree):
        assert ast_children(node) == list(ast.iter_child_nodes(node))


def test_the_unchecked_parse_gives_libcst_s_tree_and_leaves_the_check_on():
    tree = cst_tree.parse_module(AST_SHAPES)
    assert tree.deep_equals(cst.parse_module(AST_SHAPES))
    assert tree.code == AST_SHAPES
    with pytest.raises(cst.ParserSyntaxError):
        cst_tree.parse_module("def broken(:\n")
    # a node built by hand is still checked, after a parse and after a failed one
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


# (raise statement, the class it names)
RAISED = [
    ("raise ValueError", "ValueError"),
    ("raise ValueError('bad')", "ValueError"),
    ("raise builtins.ValueError('bad')", "ValueError"),
    ("raise errors.ConfigError('bad')", None),
    ("raise builtins.errors.Bad()", None),
    ("raise err", "err"),  # a name: whether it is a configured class is the caller's rule
    ("raise self.error", None),
    ("raise", None),
]


@pytest.mark.parametrize(("code", "name"), RAISED)
def test_the_raised_class_is_one_rule_for_both_trees(code, name):
    (statement,) = ast.parse(code).body
    (line,) = cst.parse_module(code).body
    assert names.raised_class(statement) == name == cst_tree.raised_class(line.body[0])


def test_own_nodes_do_not_enter_nested_scopes_in_either_tree():
    code = textwrap.dedent("""
        x = 1
        def inner():
            hidden = 2
        f = lambda: unseen
        class C:
            also_hidden = 3
        y = x
    """)
    ast_names = {n.id for n in own_nodes(ast.parse(code).body) if isinstance(n, ast.Name)}
    module = cst.parse_module(code)
    cst_names = {n.value for n in cst_tree.own_nodes(module) if isinstance(n, cst.Name)}
    assert ast_names == cst_names == {"x", "f", "y"}


TRY = """
def f(x):
    try:
        return "body"
    except ValueError:
        return "handler"
    else:
        return "else"
    finally:
        return "finally"
"""


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (cst_tree.SOURCE_ORDER, ["body", "handler", "else", "finally"]),
        (cst_tree.RETURNS_ORDER, ["body", "else", "finally", "handler"]),
    ],
)
def test_the_block_walker_visits_a_try_in_the_order_asked(order, expected):
    (function,) = cst.parse_module(TRY).body
    found = cst_tree.statements_in(cst.Return, function.body.body, try_order=order)
    assert [node.value.evaluated_value for node, _ in found] == expected


def test_the_block_walker_gives_the_path_of_blocks_and_branches():
    code = "def f(a, b):\n    if a:\n        pass\n    elif b:\n        raise ValueError\n"
    (function,) = cst.parse_module(code).body
    ((_, path),) = cst_tree.statements_in(cst.Raise, function.body.body)
    assert [type(step).__name__ for step in path] == ["Block", "Branch", "Branch", "Block", "Block"]
    assert [
        (step.test.value, step.holds) for step in path if isinstance(step, cst_tree.Branch)
    ] == [
        ("a", False),
        ("b", True),
    ]


# (annotation as written, its members as source, the one class it names)
ANNOTATIONS = [
    ("CacheConfig", ["CacheConfig"], "CacheConfig"),
    ("Optional[CacheConfig]", ["CacheConfig"], "CacheConfig"),
    ("Union[CacheConfig, None]", ["CacheConfig"], "CacheConfig"),
    ("'CacheConfig | None'", ["CacheConfig"], "CacheConfig"),
    ("ClassVar[config.CacheConfig]", ["config.CacheConfig"], "CacheConfig"),
    ("Annotated[int, Field(gt=0)]", ["int"], "int"),
    ("Literal['a', 'b'] | None", ["Literal['a', 'b']"], None),
    ("list[CacheConfig]", ["list[CacheConfig]"], None),
    ("CacheConfig | ModelConfig", ["CacheConfig", "ModelConfig"], None),
    ("'not python('", [None], None),
]


@pytest.mark.parametrize(("annotation", "written", "name"), ANNOTATIONS)
def test_an_annotation_unwraps_the_same_for_facts_and_validators(annotation, written, name):
    found = members(ast.parse(annotation, mode="eval").body)
    assert [ast.unparse(m) if m is not None else None for m in found] == written
    assert annotated_class(annotation) == name


# (text, its lines as Python numbers them)
LINES = [
    ("", [""]),
    ("a\nb\n", ["a", "b", ""]),
    ("a\r\nb\rc\n", ["a", "b", "c", ""]),
    ("a\fb\u2028c", ["a\fb\u2028c"]),  # str.splitlines would cut here; Python does not
]


@pytest.mark.parametrize(("source", "lines"), LINES)
def test_lines_end_where_python_ends_them(source, lines):
    assert text.split_lines(source) == lines


# (text, whether `raise` is a word of it)
WORDS = [
    ("raise ValueError", True),
    ("x = 1\n    raise", True),
    ("(raise)", True),
    ("praised", False),
    ("raise_error()", False),
    ("éraise", False),  # a letter outside ASCII is a word character too
    ("raised; raise", True),
]


@pytest.mark.parametrize(("source", "found"), WORDS)
def test_a_word_is_found_only_between_word_boundaries(source, found):
    assert text.has_word(source, "raise") is found


# (text, names, where a call to one of them starts)
CALLS = [
    ("f(x) + g (y) + self.f(z) + ff(0)", ["f", "g"], [0, 7, 20]),
    ("check_len\n  (n)", ["check_len"], [0]),
    ("_check(a); x_check(b)", ["_check"], [0]),
    ("f_x(1) f (2)", ["f", "f_x"], [0, 7]),  # one name the start of another
    ("f = g", ["f", "g"], []),
]


@pytest.mark.parametrize(("source", "names", "offsets"), CALLS)
def test_calls_are_found_where_a_name_opens_a_bracket(source, names, offsets):
    assert text.called_at(source, names) == offsets


_WORDY = st.text(alphabet=st.sampled_from("raisef_g é(\n\r\t.x"), max_size=40)


@given(_WORDY)
def test_the_text_scans_agree_with_the_regexes_they_replace(source):
    assert text.split_lines(source) == re.split(r"\r\n|\r|\n", source)
    assert text.has_word(source, "raise") is bool(re.search(r"\braise\b", source))
    names = ["f", "f_", "raise", "é"]
    pattern = re.compile(rf"\b(?:{'|'.join(sorted(map(re.escape, names)))})\s*\(")
    assert text.called_at(source, names) == [m.start() for m in pattern.finditer(source)]
