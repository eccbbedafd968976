"""The environment variables a module defines, with their type, default and doc: what
`envs.VLLM_X` or `envs.SGLANG_X.get()` of another file reads.

| form in the module | variable |
|---|---|
| `if TYPE_CHECKING:` then `VLLM_PORT: int \\| None = None` | VLLM_PORT, type `int \\| None`, default None |
| `environment_variables = {"VLLM_X": lambda: os.getenv("VLLM_X", "0"), ...}`, comments above a key | VLLM_X, default `"0"`, the comments as its doc |
| `class Envs:` then `SGLANG_X = EnvBool(False)` (a comment above as doc) | SGLANG_X, type bool, default False |
| `os.getenv("X", d)`, `os.environ.get("X", d)`, `os.environ["X"]`, `get_bool_env_var("X", d)` at module level (not inside a function) | X, default d |

A variable's name is upper case with an underscore (`VLLM_PORT`, not `PATH`).
"""

from __future__ import annotations

import ast
import re

from extractors.config_classes import segment
from extractors.settings_model import EnvVar, first_sentence
from extractors.syntax.names import dotted, last_name
from extractors.syntax.walk import ast_walk

ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")
# `EnvBool(False)` of SGLang's Envs class: the type its helper's name says
_ENV_FIELD = re.compile(r"^Env(Bool|Int|Float|Str|Tuple|List)$")
_FIELD_TYPES = {"Bool": "bool", "Int": "int", "Float": "float", "Str": "str", "Tuple": "tuple"}
_FIELD_TYPES["List"] = "list"
# functions that read one variable: `os.getenv`, `os.environ.get`, and a repository's own
# helpers of that shape (`get_bool_env_var("X", "false")`, `get_int_env_var`, `env_bool`)
_READER = re.compile(
    r"^(?:os\.getenv|os\.environ\.get|(?:\w+\.)*(?:getenv|get(?:_\w+)?_env(?:_var)?|env_(?:bool|int|"
    r"float|str)|\w+_env_var))$"
)
_TYPED_READER = re.compile(r"(bool|int|float|str)")


def environment_of(tree: ast.Module, lines: list[str]) -> list[EnvVar]:
    """The variables a module defines, each once (the first form found gives its facts,
    later ones fill in what it lacks)."""
    found: dict[str, EnvVar] = {}

    def add(var: EnvVar) -> None:
        known = found.get(var.name)
        if known is None:
            found[var.name] = var
            return
        found[var.name] = known.model_copy(
            update={k: v for k, v in var.model_dump().items() if getattr(known, k) is None}
        )

    for stmt in tree.body:
        if _is_type_checking(stmt):
            for inner in stmt.body:  # type: ignore[attr-defined]
                if isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                    name = inner.target.id
                    if ENV_NAME.match(name):
                        default = segment(lines, inner.value) if inner.value is not None else None
                        add(
                            EnvVar(
                                name=name, type=segment(lines, inner.annotation), default=default
                            )
                        )
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(stmt.value, ast.Dict):
            for var in _table(stmt.value, lines):
                add(var)
        elif isinstance(stmt, ast.ClassDef):
            for var in _env_class(stmt, lines):
                add(var)
    for stmt in _module_level(tree.body):  # a function's own reads define nothing
        for var in reads_of(stmt, lines):
            add(var)
    return sorted(found.values(), key=lambda v: v.name)


def _module_level(body: list[ast.stmt]):
    """The module's statements, those of its top-level `if`/`try` blocks too, not the bodies
    of its functions and classes."""
    for stmt in body:
        if isinstance(stmt, ast.If | ast.Try):
            yield from _module_level([*stmt.body, *stmt.orelse, *getattr(stmt, "finalbody", [])])
        elif not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield stmt


def _is_type_checking(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and last_name(stmt.test) == "TYPE_CHECKING"


def _comment_above(lines: list[str], line: int) -> str | None:
    """The comment lines right above line `line` (1-based), joined; a `# ===` rule ends it."""
    taken: list[str] = []
    index = line - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        text = lines[index].strip().lstrip("#").strip()
        if set(text) <= set("=-~ ") or not text:
            break
        taken.append(text)
        index -= 1
    return first_sentence(" ".join(reversed(taken))) if taken else None


def _table(node: ast.Dict, lines: list[str]) -> list[EnvVar]:
    """vLLM's `environment_variables` table: string keys that name variables."""
    found = []
    for key, value in zip(node.keys, node.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        if not ENV_NAME.match(key.value):
            continue
        read = next((v for v in _reads_in(value, lines) if v.name == key.value), None)
        found.append(
            EnvVar(
                name=key.value,
                default=read.default if read is not None else None,
                doc=_comment_above(lines, key.lineno),
            )
        )
    return found


def _env_class(node: ast.ClassDef, lines: list[str]) -> list[EnvVar]:
    """SGLang's `class Envs:` of `SGLANG_X = EnvBool(False)` fields."""
    found = []
    for stmt in node.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, ast.Name) and ENV_NAME.match(target.id)):
            continue
        if not isinstance(value, ast.Call):
            continue
        kind = _ENV_FIELD.match(last_name(value.func) or "")
        if kind is None:
            continue
        default = segment(lines, value.args[0]) if value.args else None
        found.append(
            EnvVar(
                name=target.id,
                type=_FIELD_TYPES[kind[1]],
                default=default,
                doc=_comment_above(lines, stmt.lineno),
            )
        )
    return found


def reads_of(tree: ast.AST, lines: list[str]) -> list[EnvVar]:
    """The variables a piece of code reads directly (`os.getenv("X", d)`, ...)."""
    return list(_reads_in(tree, lines))


def _reads_in(node: ast.AST, lines: list[str]):
    for sub in ast_walk(node):
        if isinstance(sub, ast.Subscript) and dotted(sub.value) == "os.environ":
            key = sub.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if ENV_NAME.match(key.value):
                    yield EnvVar(name=key.value)
            continue
        if not isinstance(sub, ast.Call) or not sub.args:
            continue
        name = dotted(sub.func)
        if name is None or not _READER.match(name):
            continue
        first = sub.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        if not ENV_NAME.match(first.value):
            continue
        default = sub.args[1] if len(sub.args) > 1 else None
        default = default or next((k.value for k in sub.keywords if k.arg == "default"), None)
        typed = _TYPED_READER.search(name.rsplit(".", 1)[-1])
        yield EnvVar(
            name=first.value,
            type=typed[1] if typed and "." not in name else None,
            default=segment(lines, default) if default is not None else None,
        )
