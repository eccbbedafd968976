"""The target's own argument parser, found from the flags of its settings, and the program that
parses an exampleFix's "after" command line with it.

The parser builder is the function of the installed package that adds the most of the
dataset's flags by name (`parser.add_argument("--nnodes", ...)`): a function that takes the
parser (`add_cli_args(parser)`) is given one of the class its parameter is annotated with
(vLLM's FlexibleArgumentParser), else argparse's; a function with no parameter is called for
the parser it returns. Found statically, by reading the installed files with `ast`; nothing
of it runs here. Pure: texts in, a builder and a program out.
"""

from __future__ import annotations

import ast
import json
import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Builder:
    module: str
    classes: tuple[str, ...]  # the enclosing classes of a method (a staticmethod)
    name: str
    takes_parser: bool  # add_cli_args(parser) rather than make_parser()
    flags: int  # how many of the dataset's flags it adds


def find_builder(files: dict[str, str], flags: set[str]) -> Builder | None:
    """The function of `files` (module name -> text) that adds the most of `flags`."""
    best: Builder | None = None
    for module, text in files.items():
        if "add_argument" not in text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        for classes, function in _functions(tree):
            added = _added(function) & flags
            if not added or (best is not None and len(added) <= best.flags):
                continue
            arguments = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
            if classes and arguments[:1] in (["self"], ["cls"]):
                continue  # only a staticmethod or a module function is called alone
            best = Builder(module, classes, function.name, bool(arguments), len(added))
    return best


def _functions(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield (), node
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef):
                    yield (node.name,), inner


def _added(function: ast.FunctionDef) -> set[str]:
    found = set()
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            for argument in node.args:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    found.add(argument.value)
    return found


def command_line(after: str) -> list[str] | None:
    """The arguments of an "after" command line, from its first option on (the command's own
    words, `vllm serve MODEL`, are not the parser's); None when it holds none."""
    for line in after.splitlines():
        if line.strip().startswith("#") or "--" not in line:
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            return None
        for position, word in enumerate(words):
            if word.startswith("-"):
                return words[position:]
    return None


# Builds the target's parser as the target does, into `parser`.
_BUILD = """builder = {alias}.{path}
builder = getattr(builder, "__func__", builder)
parser = None
if {takes_parser}:
    first = next(iter(inspect.signature(builder).parameters.values()))
    kind = first.annotation
    if isinstance(kind, str):
        kind = eval(kind, vars(inspect.getmodule(builder)))
    made = kind if isinstance(kind, type) and issubclass(kind, argparse.ArgumentParser) else argparse.ArgumentParser
    parser = made()
    returned = builder(parser)
else:
    returned = builder()
parser = returned if isinstance(returned, argparse.ArgumentParser) else parser
"""


def build_parser(builder: Builder, alias: str) -> str:
    """Lines that build the target's parser into `parser` (argparse and inspect imported,
    the builder's module imported as `alias`)."""
    path = ".".join([*builder.classes, builder.name])
    return _BUILD.format(alias=alias, path=path, takes_parser=builder.takes_parser)


_PROGRAM = """import argparse, inspect, json
import {module} as mod
{build}def refuse(message):
    raise SystemExit(json.dumps({{"rejected": str(message)}}))
parser.error = refuse
# a flag this parser does not have is another parser's (it would be read as an abbreviation)
foreign = [flag for flag in {flags!r} if flag not in parser._option_string_actions]
if foreign:
    raise SystemExit(json.dumps({{"parsed": {{}}, "foreign": foreign}}))
namespace, unknown = parser.parse_known_args({argv!r})
found = {{}}
for flag in {flags!r}:
    action = parser._option_string_actions.get(flag)
    if action is not None:
        found[flag] = repr(getattr(namespace, action.dest, None))
raise SystemExit(json.dumps({{"parsed": found, "unknown": unknown}}))
"""


def parse_program(builder: Builder, argv: list[str], flags: list[str]) -> str:
    """A program that builds the target's parser, parses `argv`, and exits with what the
    parser made of each of `flags` (SystemExit's message, JSON); with nothing parsed when one
    of `flags` is not the parser's own (`foreign`)."""
    return _PROGRAM.format(
        module=builder.module, build=build_parser(builder, "mod"), argv=argv, flags=flags
    )


def parse_result(message: str | None) -> dict | None:
    try:
        value = json.loads(message or "")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
