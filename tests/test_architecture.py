"""The shape of the code: data flows one way. No import cycles among the modules of
pipeline/, extractors/ and prompts/ (imports inside functions count: they only put a
cycle off until run time), and extractors/ never imports pipeline/."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pipeline", "extractors", "prompts")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
}


def imported(name: str) -> str | None:
    """The project module an import names (a package means its __init__), else None."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    """Every project module `module` imports, anywhere in its file (`if TYPE_CHECKING:`
    included: a cycle of type names is a cycle of the design too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{module}: relative import"
            # `from pipeline.source import git` names the module pipeline.source.git
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {target for name in names if (target := imported(name)) is not None}
    return found - {module}


GRAPH = {module: imports_of(module) for module in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_function_level_imports():
    # cli.py imports its commands inside the command functions
    assert {"pipeline.diff.command", "pipeline.lookup.command"} <= GRAPH["pipeline.cli"]


def test_cycles_are_found_when_there_are_some():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert cycles(GRAPH) == []


def test_extractors_never_import_pipeline():
    reaching = {
        module: sorted(target for target in GRAPH[module] if target.startswith("pipeline"))
        for module in GRAPH
        if module.startswith("extractors")
    }
    assert {module: targets for module, targets in reaching.items() if targets} == {}


def imports_libcst(module: str) -> bool:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return any(
        (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "libcst" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "libcst")
        for node in ast.walk(tree)
    )


def test_the_syntax_toolkit_keeps_libcst_to_one_module():
    # libcst takes 0.6 s to import: the modules that run over every file of a tree (and the
    # commands that only read datasets) stay on `ast`
    toolkit = [module for module in MODULES if module.startswith("extractors.syntax")]
    assert [module for module in toolkit if imports_libcst(module)] == [
        "extractors.syntax.cst_tree"
    ]
    assert not any(
        target == "extractors.syntax.cst_tree" for module in toolkit for target in GRAPH[module]
    )


def test_every_hash_is_made_in_a_keys_module():
    # docs/architecture.md: every key vmine hashes sits in pipeline/keys.py, or, for the
    # extractor's memo (extractors/ never imports pipeline/), in extractors/keys.py
    hashing = sorted(
        module
        for module, path in MODULES.items()
        if any(
            isinstance(node, ast.Import | ast.ImportFrom)
            and "hashlib" in [alias.name for alias in node.names] + [getattr(node, "module", "")]
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    assert hashing == ["extractors.keys", "pipeline.keys"]
