"""A validator's calls into other modules of the repository, as the file's imports name them,
and whether a module's function raises a configured class: what the pipeline needs to follow validators
across files (pipeline/mine/reach.py).

| in the validator's file | the call | recorded as |
|---|---|---|
| `from .environment import str_to_bool` | `str_to_bool(v)` | `.environment:str_to_bool` |
| `from pkg.folding import build_spec as build` | `build(n)` | `pkg.folding:build_spec` |
| `from pkg import folding` | `folding.build_spec(n)` | `pkg.folding:build_spec` |
| `import pkg.folding as folding` | `folding.build_spec(n)` | `pkg.folding:build_spec` |
| a def of the file of that name, or no import | `build(n)` | nothing |

Imports are read from the text (every `import` statement, indented ones too), not from a
parse of the whole file: a file whose validators the memo knows is never parsed whole.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from collections.abc import Collection, Iterable, Mapping, Sequence

from extractors.functions import Function

_BUILTINS = frozenset(dir(builtins))
# a line that starts at column 0 (not a comment, nor the `)` that closes a def's signature)
_TOP_LEVEL = re.compile(r"^[^\s#)\]}]", re.MULTILINE)
# an import statement, matched at the start of a line that holds `import`
_IMPORT = re.compile(r"[ \t]*(?:from[ \t]+[.\w]+[ \t]+import\b|import[ \t]+\w)")


def _import_starts(source: str) -> list[int]:
    """Where each line that starts an import statement starts. The lines are found with
    `str.find` of `import`: a `^` regex over the whole text took as long as the rest."""
    starts = []
    at = source.find("import")
    while at >= 0:
        line_start = source.rfind("\n", 0, at) + 1
        if _IMPORT.match(source, line_start):
            starts.append(line_start)
        line_end = source.find("\n", at)
        at = source.find("import", line_end) if line_end >= 0 else -1
    return starts


def imported(
    source: str, wanted: Collection[str] | None = None
) -> dict[str, tuple[str, str | None]]:
    """Local name -> (module, attribute) of each import of the text: `from m import a as b`
    gives b -> (m, a), `import m.n as k` gives k -> (m.n, None); a relative module keeps its
    leading dots (`from .env import x`: x -> (.env, x)). The first import of a name counts.
    With `wanted`, only statements that mention one of those names are read."""
    found: dict[str, tuple[str, str | None]] = {}
    if "import" not in source:
        return found
    for start in _import_starts(source):
        statement = _statement(source, start)
        if wanted is not None and not any(name in statement for name in wanted):
            continue  # parsing every import statement of a file is the slow part
        try:
            tree = ast.parse(textwrap.dedent(statement))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name != "*":
                        found.setdefault(alias.asname or alias.name, (module, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is not None:
                        found.setdefault(alias.asname, (alias.name, None))
    return found


def _statement(source: str, start: int) -> str:
    """The import statement that starts at `start`: one line, or up to its closing `)`, or
    on across backslash line ends."""
    end = source.find("\n", start)
    end = len(source) if end < 0 else end
    line = source[start:end]
    if "(" in line and ")" not in line:
        closing = source.find(")", end)
        return source[start : closing + 1] if closing >= 0 else line
    while line.rstrip().endswith("\\") and end < len(source):
        following = source.find("\n", end + 1)
        following = len(source) if following < 0 else following
        line += "\n" + source[end + 1 : following]
        end = following
    return line


def calls_through_imports(
    functions: Iterable[Function], validators: Iterable[str], source: str
) -> list[str]:
    """`module:name` of every function the validators (qualnames) call through an import of
    the file, sorted; a name the file defines at its top level is its own, not an import."""
    table = {fn.qualname: fn for fn in functions}
    own = {fn.name for fn in table.values() if fn.parent is None and fn.owner_class is None}
    direct: set[str] = set()
    through: set[tuple[str, str]] = set()
    for qualname in validators:
        calls = table[qualname].calls
        direct.update(name for name in calls.direct if name not in own)
        through.update(pair for pair in calls.class_calls if pair[0] not in own)
    direct -= _BUILTINS
    if not direct and not through:
        return []
    names = imported(source, direct | {owner for owner, _ in through})
    return sorted(set(_targets(names, sorted(direct), sorted(through))))


def _targets(
    names: Mapping[str, tuple[str, str | None]],
    direct: Iterable[str],
    through: Iterable[tuple[str, str]],
) -> Iterable[str]:
    for name in direct:
        module, attribute = names.get(name, ("", None))
        if attribute is not None:
            yield f"{module}:{attribute}"
    for owner, attribute in through:
        if owner not in names:
            continue
        module, member = names[owner]
        if member is None:  # `import pkg.folding as folding`
            yield f"{module}:{attribute}"
        else:  # `from pkg import folding`: folding may be a module of pkg
            yield f"{module}{'' if module.endswith('.') else '.'}{member}:{attribute}"


def raising_functions(source: str, names: Iterable[str], classes: Sequence[str]) -> set[str]:
    """Which of `names` the text defines as top-level functions whose block raises one of
    `classes` (read from the text: the block runs to the next line that starts at column 0)."""
    found = set()
    raised = re.compile(
        rf"\braise[\s(]+(?:builtins\s*\.\s*)?(?:{'|'.join(map(re.escape, classes)) or '(?!)'})\b"
    )
    for name in names:
        match = re.search(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}\b", source, re.MULTILINE)
        if match is None:
            continue
        line_end = source.find("\n", match.end())
        if line_end < 0:
            continue  # a one-line def at the end of the text
        end = _TOP_LEVEL.search(source, line_end + 1)
        if raised.search(source, match.end(), end.start() if end is not None else len(source)):
            found.add(name)
    return found
