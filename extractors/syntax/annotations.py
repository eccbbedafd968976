"""An annotation's members: what a value of that type may be, with `None` and the wrappers
taken off (`Optional[X]`, `Union[X, Y]`, `X | Y`, `Annotated[X, ...]`, `ClassVar[X]`,
`Final[X]`, ..., and string annotations, parsed)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator

from extractors.syntax.names import dotted

# wrappers whose first argument is the type itself
WRAPPERS = frozenset(
    {"Optional", "Annotated", "ClassVar", "Final", "InitVar", "Required", "NotRequired", "ReadOnly"}
)
_MAX_DEPTH = 8  # past this nesting a member is not read


def members(node: ast.AST, depth: int = 0) -> Iterator[ast.AST | None]:
    """The members of an annotation in order: names, generics (`list[str]`), `Literal[...]`,
    or anything else as written; None for a member that cannot be read (a string that does
    not parse, nesting past 8 levels)."""
    if depth > _MAX_DEPTH:
        yield None
    elif isinstance(node, ast.Constant) and node.value is None:
        return
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:  # a string annotation: `"VllmConfig"`, `"Literal['a']"`
            parsed = ast.parse(node.value.strip(), mode="eval").body
        except SyntaxError:
            yield None
        else:
            yield from members(parsed, depth + 1)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        yield from members(node.left, depth + 1)
        yield from members(node.right, depth + 1)
    elif isinstance(node, ast.Subscript) and (head := subscript_head(node)) in (
        "Union",
        *WRAPPERS,
    ):
        items = subscript_items(node)
        for item in items if head == "Union" else [items[0]]:
            yield from members(item, depth + 1)
    else:
        yield node


def subscript_head(node: ast.Subscript) -> str | None:
    """The last name of a generic's head: `typing.Literal[...]` -> `Literal`."""
    head = dotted(node.value)
    return head.rsplit(".", 1)[-1] if head else None


def subscript_items(node: ast.Subscript) -> list[ast.expr]:
    """A subscript's arguments: `X[a, b]` -> [a, b], `X[a]` -> [a]."""
    return node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]


@functools.lru_cache(maxsize=1024)
def annotated_class(annotation: str) -> str | None:
    """The one class an annotation names, by its last name: `ModelConfig`,
    `Optional[ModelConfig]`, `"ModelConfig | None"`, `config.ModelConfig` -> `ModelConfig`;
    a container, a union of two classes or a text that does not parse -> None."""
    try:
        node = ast.parse(annotation.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = list(members(node))
    name = dotted(found[0]) if len(found) == 1 and found[0] is not None else None
    return name.rsplit(".", 1)[-1] if name else None
