"""A site's trigger as the user meets it: the target's own configuration path run on a command
line, with a tiny model folder and no weights (issue 21, part 5).

The parser is the one the fix check uses (parsers.find_builder). The configuration entry point
is found beside it, from the installed files read with `ast`:

| what                 | how it is found                                                   |
|----------------------|-------------------------------------------------------------------|
| the arguments class  | a class with a classmethod that takes the parsed namespace alone  |
|                      | (`from_cli_args(cls, args)`) and makes the class (`cls(...)`);    |
|                      | the builder's own class first                                     |
| the config method    | that class's public method needing no argument that makes the     |
|                      | most of the settings' classes, counting the methods of the class  |
|                      | it calls (`create_engine_config`)                                 |
| the model flag       | the builder's `--model`, `--model-path` or `--model-name-or-path` |

The flags and values come from a way through the site's guards (solve.py): each constrained
expression that is a flag's setting is put on the command line:

| the solved value                 | the arguments                                      |
|----------------------------------|----------------------------------------------------|
| a true value of a switch         | `--flag` (`False`: left out; BooleanOptionalAction:|
|                                  | `--no-flag`; store_false the other way round)      |
| a number, a string               | `--flag 3`, `--flag fast`                          |
| a list (`nargs`)                 | `--flag a b`                                       |
| a dict                           | `--flag '{"k": 1}'` (JSON)                         |
| above another read (`x > y`)     | `--flag 1048576`, beyond every size of the tiny    |
| that no flag sets                | model (`x <= 65536` too: `--flag 65536`)           |
| a made-up value of a setting     | the tiny model folder (`--spec-model ./tiny-model`)|
| named as the model flag's field  |                                                    |
| `None`, a stand-in, an expression| left out                                           |

Pure: texts and solutions in, an entry point, arguments and a program out.
"""

from __future__ import annotations

import ast
import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.dataset.models import Setting
from pipeline.verify.parsers import Builder, build_parser
from pipeline.verify.solve import TRUE, Solution, ordered_numbers, substituted, value_for

MODEL_FLAGS = ("--model", "--model-path", "--model-name-or-path")
MODEL_FOLDER = "./tiny-model"
SWITCHES = ("store_true", "store_false", "BooleanOptionalAction")
BEYOND = 1 << 20  # above every size of the tiny model
# A minimal Hugging Face config: an architecture, small sizes and a vocabulary; no weights, no
# tokenizer.
TINY_MODEL = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "num_hidden_layers": 2,
    "vocab_size": 256,
    "max_position_embeddings": 2048,
    "torch_dtype": "float32",
}


@dataclass(frozen=True)
class Entry:
    """The target's configuration path: `module.cls.make(namespace).build()`."""

    module: str
    cls: str
    make: str  # the classmethod that takes the parsed namespace
    build: str  # the method that builds the configuration
    model_flag: str | None  # the flag that names the model folder


def find_entry(files: dict[str, str], builder: Builder, classes: set[str]) -> Entry | None:
    """The configuration entry point beside `builder`, among `files` (module -> text): the
    class that takes the parsed namespace and its method that makes the most of `classes`
    (the settings' classes, by name)."""
    best: tuple[tuple[int, int], Entry] | None = None
    for module, text in files.items():
        if "classmethod" not in text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            make = _namespace_classmethod(node)
            if make is None:
                continue
            build, made = _config_method(node, classes)
            if build is None:
                continue
            own = module == builder.module and builder.classes == (node.name,)
            rank = (int(own), made)
            if best is None or rank > best[0]:
                flag = _model_flag(files.get(builder.module, ""), builder)
                best = (rank, Entry(module, node.name, make, build, flag))
    return best[1] if best else None


def _namespace_classmethod(node: ast.ClassDef) -> str | None:
    for item in node.body:
        if not isinstance(item, ast.FunctionDef) or not _decorated(item, "classmethod"):
            continue
        arguments = [*item.args.posonlyargs, *item.args.args]
        required = len(arguments) - len(item.args.defaults)
        if len(arguments) != 2 or required != 2:
            continue
        namespace = arguments[1].arg
        makes = any(
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id == arguments[0].arg
            for inner in ast.walk(item)
        )
        reads = any(
            isinstance(inner, ast.Name) and inner.id == namespace
            for inner in ast.walk(item)
            if not isinstance(inner, ast.arg)
        )
        if makes and reads:
            return item.name
    return None


def _config_method(node: ast.ClassDef, classes: set[str]) -> tuple[str | None, int]:
    methods = {
        item.name: item
        for item in node.body
        if isinstance(item, ast.FunctionDef)
        and not _decorated(item, "classmethod")
        and not _decorated(item, "staticmethod")
    }
    direct = {name: _made(method, classes) for name, method in methods.items()}
    calls = {name: _self_calls(method) & set(methods) for name, method in methods.items()}

    def reached(name: str) -> set[str]:
        seen, pending, found = {name}, [name], set()
        while pending:
            current = pending.pop()
            found |= direct[current]
            for callee in calls[current] - seen:
                seen.add(callee)
                pending.append(callee)
        return found

    best, most = None, 0
    for name, method in methods.items():
        arguments = [*method.args.posonlyargs, *method.args.args][1:]
        if name.startswith("_") or len(arguments) > len(method.args.defaults):
            continue
        made = len(reached(name))
        if made > most:
            best, most = name, made
    return best, most


def _made(function: ast.FunctionDef, classes: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else None
            if isinstance(node.func, ast.Attribute):
                name = node.func.attr
            if name in classes:
                found.add(name)
    return found


def _self_calls(function: ast.FunctionDef) -> set[str]:
    return {
        node.func.attr
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    }


def _decorated(function: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(d, ast.Name) and d.id == name for d in function.decorator_list)


def _model_flag(text: str, builder: Builder) -> str | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    added: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == builder.name:
            for call in ast.walk(node):
                if (
                    isinstance(call, ast.Call)
                    and getattr(call.func, "attr", None) == "add_argument"
                ):
                    added |= {
                        argument.value
                        for argument in call.args
                        if isinstance(argument, ast.Constant) and isinstance(argument.value, str)
                    }
    return next((flag for flag in MODEL_FLAGS if flag in added), None)


@dataclass(frozen=True)
class CommandLine:
    """The target's parser and the configuration path it feeds."""

    builder: Builder
    entry: Entry


def arguments(
    solution: Solution,
    settings: list[Setting],
    definitions: Mapping[str, ast.expr] | None = None,
    model_field: str | None = None,
) -> dict[str, list[str]]:
    """The command-line arguments that set the flags' settings of one way through the guards,
    by the setting's expression; empty when the way constrains no flag a command line sets.
    A setting read through a local (`dcp = parallel.dcp_size`) is found by what defines it
    (`definitions`); a made-up value of a setting named as the model flag's field
    (`model_field`: a draft `model`) is the tiny model folder."""
    by_expr = {setting.expr: setting for setting in settings if setting.flags}
    for setting in list(by_expr.values()):
        by_expr.setdefault(substituted(setting.expr, definitions or {}), setting)
    numbers = ordered_numbers(solution)
    words: dict[str, list[str]] = {}
    for expr, wants in solution.wants.items():
        setting = by_expr.get(expr)
        if setting is None or setting.surface != "flag":
            continue
        firm = [want for want in wants if want.op not in ("weak", "order")]
        above = [
            want
            for want in wants
            if want.op == "order"
            and want.value
            and want.value.split(":", 1)[0] in ("gt", "ge")
            and want.value.split(":", 1)[1] not in by_expr
        ]
        ceiling = _ceiling(wants)
        if above and not any(want.op in ("eq", "in") for want in wants):
            # above a size the command line does not set: as high as its bounds let it be
            value: object = BEYOND if ceiling is None else ceiling
        else:
            if expr in numbers and not firm:
                wants = [*firm, type(wants[0])("weak", numbers[expr])]
            source = value_for(wants, setting)
            if setting.field == model_field and not any(want.op == "eq" for want in wants):
                source = repr(MODEL_FOLDER) if source not in (None, "None") else source
            if setting.action in SWITCHES and source is not None:
                source = repr(source == TRUE or bool(_literal(source)))  # a switch: on or off
            try:
                value = ast.literal_eval(source) if source is not None else None
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue  # a stand-in or an expression: no command line writes it
        words[setting.expr] = _words(setting, value)
    return words


def changed(words: dict[str, list[str]], changes, settings: list[Setting]) -> dict | None:
    """`words` with a fix's changes (fixes.Change: an expression and a value) applied; None
    when a change is of no flag's setting or of a value no command line writes."""
    by_expr = {setting.expr: setting for setting in settings if setting.flags}
    words = dict(words)
    for change in changes:
        setting = by_expr.get(change.expr)
        if setting is None or setting.surface != "flag":
            return None
        try:
            value = ast.literal_eval(change.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        words[change.expr] = _words(setting, value)
    return words


def _ceiling(wants) -> int | None:
    """The highest whole number `le`/`lt` bounds allow, None without one."""
    bounds = [
        _literal(want.value) - (want.op == "lt")
        for want in wants
        if want.op in ("le", "lt") and isinstance(_literal(want.value), int)
    ]
    return min(bounds) if bounds else None


def _literal(source: str) -> object:
    try:
        return ast.literal_eval(source)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _words(setting: Setting, value: object) -> list[str]:
    flag = setting.flags[0]
    if value is None:
        return []
    if isinstance(value, bool):
        if setting.action == "store_false":
            return [] if value else [flag]
        if value:
            return [flag]
        if setting.action == "BooleanOptionalAction" and flag.startswith("--"):
            return ["--no-" + flag[2:]]
        return []
    if isinstance(value, list | tuple):
        return [flag, *(str(item) for item in value)] if value else []
    if isinstance(value, dict):
        return [flag, json.dumps(value)]
    return [flag, str(value)]


def command_arguments(entry: Entry, words: dict[str, list[str]]) -> list[str]:
    """The command line of `words`, the tiny model folder named first when the parser has a
    model flag."""
    found = [word for each in words.values() for word in each]
    if entry.model_flag is None or entry.model_flag in found:
        return found
    return [entry.model_flag, MODEL_FOLDER, *found]


def model_field(entry: Entry) -> str | None:
    """The field the model flag sets (`--model-path`: model_path)."""
    return entry.model_flag.lstrip("-").replace("-", "_") if entry.model_flag else None


def command_text(argv: list[str]) -> str:
    return shlex.join(argv)


_PROGRAM = """# {header}
# The target's own configuration path, given this command line: {command}
import argparse, inspect, json, os
import {builder_module} as parsers
import {entry_module} as entry
os.makedirs({folder!r}, exist_ok=True)
with open(os.path.join({folder!r}, "config.json"), "w") as tiny:
    json.dump({tiny!r}, tiny)
{parser}namespace = parser.parse_args({argv!r})
try:
    entry.{cls}.{make}(namespace).{build}()
except Exception as error:
    # a validation library's error that wraps the validator's own: that one, where it raised
    try:
        causes = [(item.get("ctx") or {{}}).get("error") for item in error.errors()]
    except Exception:
        causes = []
    causes = [cause for cause in causes if isinstance(cause, BaseException)]
    if len(causes) == 1 and causes[0].__traceback__ is not None:
        raise causes[0].with_traceback(causes[0].__traceback__) from None
    raise
"""


def program(line: CommandLine, arguments: list[str], header: str) -> str:
    """A reproducer that writes the tiny model folder, parses `arguments` with the target's
    parser and builds the configuration from it."""
    builder, entry = line.builder, line.entry
    return _PROGRAM.format(
        header=header,
        command=command_text(arguments),
        builder_module=builder.module,
        entry_module=entry.module,
        folder=MODEL_FOLDER,
        tiny=TINY_MODEL,
        parser=build_parser(builder, "parsers"),
        argv=arguments,
        cls=entry.cls,
        make=entry.make,
        build=entry.build,
    )
