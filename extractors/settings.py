"""The settings facts of one file: its config classes and fields, its command-line flags, the
names it imports, and the Literal aliases and constant lists that say which values a setting
accepts. Source text in, facts out; `pipeline/mine/settings/` joins them across a tree.

`outline_of` is the part that costs next to nothing (a byte scan): the class names a file
defines and whether it builds a parser, kept for every file so the join knows where to look.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from extractors.arguments import flags_of
from extractors.callers import callers_of
from extractors.config_classes import module_facts
from extractors.environment import environment_of
from extractors.facts import Rules
from extractors.references import scope_of
from extractors.settings_model import FileSettings, Outline
from extractors.syntax.text import has_word, split_lines

DEFAULT_RULES = Rules()
# a file that may define or read environment variables (the parse decides)
_ENVIRON = re.compile(r"environ|getenv|env_var|get_\w*_env\b|Env(Bool|Int|Float|Str|Tuple|List)\(")

_CLASS_NAME = re.compile(rb"class[ \t]+([A-Za-z_]\w*)")
# the idioms by which a flag names the config field it sets (extractors/arguments.py)
_LINKS = re.compile(rb"default\s*=\s*[A-Z]\w*\.[a-z_]|\*\*\w+\[\s*[\"']|\*\*\{\s*\*\*")


def _reads_environ(source: str) -> bool:
    # every form holds `env` or `Env`: most files are ruled out before the slow search
    return ("env" in source or "Env" in source) and _ENVIRON.search(source) is not None


def links_flags(data: bytes) -> bool:
    """Whether a file builds a parser whose flags name the field they set (a byte scan that
    may say yes wrongly, never no)."""
    return b"add_argument" in data and _LINKS.search(data) is not None


# a parser class whose parse_args splits `--config.key` at its dots (vLLM's)
_DOTTED = re.compile(rb"\bdef parse_args\b[\s\S]*?\.split\(\s*[\"']\.[\"']\s*\)")


def reads_dotted_keys(data: bytes) -> bool:
    """Whether a file's ArgumentParser subclass reads dotted keys (`--speculative-config.method
    ngram`): it defines parse_args and splits an argument at its dots (a byte scan)."""
    return b"ArgumentParser)" in data and _DOTTED.search(data) is not None


def outline_of(data: bytes) -> Outline:
    """The outline of a file's bytes (it may say yes wrongly; the parse decides)."""
    names: dict[str, None] = {}
    for match in _CLASS_NAME.finditer(data):
        start = match.start()
        line_start = data.rfind(b"\n", 0, start) + 1
        if data[line_start:start].strip(b" \t") == b"":  # `class` opens its line
            names.setdefault(match[1].decode("ascii"), None)
    return Outline(
        classes=list(names),
        parser=b"add_argument" in data,
        links=links_flags(data),
        dotted=reads_dotted_keys(data),
    )


def file_settings(
    source: str,
    tree: ast.Module | None = None,
    validators: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None,
    rules: Rules = DEFAULT_RULES,
) -> FileSettings:
    """The settings facts of one file; `tree` is its parse when the caller has it (the
    site pass often does), `validators` the trees of its validators by qualname, whose
    scopes are then kept too; `rules` (the configured ones, not a file's) say what makes a
    configuration class. Raises SyntaxError (or ValueError) when the text is no Python."""
    if tree is None:
        tree = ast.parse(source)
    lines = split_lines(source)
    imports, aliases, constants, texts, classes = module_facts(tree, lines, rules)
    flags = flags_of(tree, lines, texts) if "add_argument" in source else []
    environ = environment_of(tree, lines) if _reads_environ(source) else []
    scopes = {name: scope_of(node) for name, node in sorted((validators or {}).items())}
    return FileSettings(
        imports=imports,
        aliases=aliases,
        constants=constants,
        classes=classes,
        flags=flags,
        environ=environ,
        scopes=scopes,
        callers=callers_of(tree, lines, set(validators) if validators else None)
        if has_word(source, "raise")
        else {},
    )
