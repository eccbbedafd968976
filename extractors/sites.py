"""The extract stage's entry point: one file's text -> the raise sites of its validators (with
the `all` scope, of all its functions)."""

from __future__ import annotations

import ast
import functools
import io
import json
import re
import tokenize
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from extractors.bindings import BindingsWalk
from extractors.classes import (
    FileClasses,
    Hierarchy,
    class_annotations,
    init_holders,
    rules_for_file,
    scan_file,
)
from extractors.facts import FileExtraction, Memo, RaiseSite, Rules, ValidatorKind
from extractors.functions import Function, function_table
from extractors.guards import GuardFinder
from extractors.helpers import HelperTable, ValidatorHelpers
from extractors.imports import calls_through_imports
from extractors.keys import function_key, memo_token
from extractors.limits import depth_problem, size_problem
from extractors.messages import Message, message_of_args
from extractors.segments import SegmentTable, split_segments
from extractors.settings import file_settings, links_flags
from extractors.settings_model import FileSettings
from extractors.syntax.cst_tree import raised_class, statements_in
from extractors.syntax.text import split_lines as line_split
from extractors.text_reach import read_reach
from extractors.validators import find_validators

# sourceCode shows this many lines either side of the raise
WINDOW = 18


class Skip(Exception):
    """A file that cannot be analysed; the message is the one-line reason."""


def extract_file(
    path: str,
    text: str | bytes,
    rules: Rules,
    memo: Memo | None = None,
    classes: FileClasses | None = None,
) -> FileExtraction:
    """The sites of one file, sorted by line; never raises (a file that cannot be analysed
    comes back with `skipped` set to a one-line reason).

    With a `memo`, segments of the file and validator functions whose text it has seen
    before are not parsed again; the result is the same as without one. `classes` is the
    file's `scan_file` when the caller has it already.
    """
    return analyse_file(path, text, rules, memo, classes)[0]


def analyse_file(
    path: str,
    text: str | bytes,
    rules: Rules,
    memo: Memo | None = None,
    classes: FileClasses | None = None,
    *,
    facts_rules: Rules | None = None,
) -> tuple[FileExtraction, FileSettings | None]:
    """`extract_file`, and (with `facts_rules`, the configured rules the settings facts
    are made under, not the file's) the file's settings facts when the join is sure to want
    them: the file has sites, or builds a parser whose flags name their fields (from the
    whole file's parse when finding the sites made one). None otherwise, or when they cannot
    be made: a parsed file without sites (40% of those parsed in vLLM) is asked for only if
    the join reaches it."""
    parsed: list[_Parsed] | None = [] if facts_rules is not None else None
    try:
        calls_out: list[str] = []
        sites = _extract(path, text, rules, memo, classes, parsed, calls_out)
        extraction = FileExtraction(filePath=path, sites=sites, calls_out=calls_out)
    except Skip as skip:
        return FileExtraction(filePath=path, skipped=str(skip)), None
    except RecursionError:
        return FileExtraction(filePath=path, skipped="nesting too deep"), None
    except MemoryError:
        return FileExtraction(filePath=path, skipped="out of memory"), None
    except Exception as exc:  # a bug of ours must not stop the other files
        reason = f"extractor error: {type(exc).__name__}: {exc}".splitlines()[0]
        return FileExtraction(filePath=path, skipped=reason), None
    try:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        # The join wants the facts of every file with sites, and of the parsers whose flags
        # name their fields: made here rather than asked for again (a second read and trip).
        if facts_rules is None or not (extraction.sites or links_flags(data)):
            return extraction, None
        if parsed:
            whole = parsed[0]
            facts = file_settings(whole.source, whole.tree, whole.validators, facts_rules)
            return extraction, facts
        return extraction, file_settings(decode(text), rules=facts_rules)
    except Exception:  # facts only add to sites; a file they fail on keeps its sites
        pass
    return extraction, None


@dataclass
class _Parsed:
    """A whole file's parse, kept for its settings facts: the text, the tree, the trees of
    the validators that have sites."""

    source: str
    tree: ast.Module
    validators: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]


def _extract(
    path: str,
    text: str | bytes,
    rules: Rules,
    memo: Memo | None,
    classes: FileClasses | None,
    parsed: list[_Parsed] | None = None,
    calls_out: list[str] | None = None,
) -> list[RaiseSite]:
    """The sites of a file; the whole file's parse, when one was made, is added to `parsed`,
    and what its validators call through its imports to `calls_out`."""
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    problem = size_problem(size)
    if problem is not None:
        raise Skip(problem)
    source = decode(text)
    if classes is None:
        classes = scan_file(source)
    # the file's own error subclasses and configuration classes count as well
    rules = rules_for_file(rules, classes)
    hints = _hints(rules)
    if not hints.may_have_sites(source, classes, rules):
        return []
    lines = split_lines(source)
    segments = split_segments(lines)
    reach = read_reach(source, segments, rules, classes, hints.raises)
    if not reach.gives:
        return []  # its validators reach no raise and call nothing it imports

    def parse_whole() -> ast.Module:
        tree = parse(source)
        if parsed is not None:
            parsed.append(_Parsed(source, tree, {}))
        return tree

    if memo is None:
        table = None
        functions = function_table(parse_whole(), rules.error_classes)
    else:
        table = SegmentTable(
            lines,
            parse_whole,
            rules.error_classes,
            memo,
            memo_token(rules),
            segments,
            only=reach.segments,
        )
        functions = table.functions
    kinds = find_validators(
        functions,
        rules,
        classes.classes,
        functools.cache(functools.partial(class_annotations, source)),
    )
    if calls_out is not None and rules.follow_calls:
        calls_out += calls_through_imports(functions, kinds, source)
    if table is not None:
        table.store()  # after the validator pass: it may have filled in calls
    every_function = rules.scope == "all"
    candidates = [
        fn for fn in functions if fn.raise_lines and (every_function or fn.qualname in kinds)
    ]
    if parsed:
        parsed[0].validators.update((fn.qualname, fn.node) for fn in candidates if fn.node)
    helpers = HelperTable(functions, lambda fn: _parsed(parse_function(lines, fn, source)), lines)
    sites: list[RaiseSite] = []
    for fn in candidates:
        sites += function_sites(
            path,
            lines,
            fn,
            kinds.get(fn.qualname, "none"),
            rules,
            source,
            memo,
            helpers.for_validator(fn),
        )
    sites.sort(key=lambda site: site.lineNumber)
    return sites


# --- text ---------------------------------------------------------------------------------


def decode(text: str | bytes) -> str:
    """The file's text: bytes decoded as PEP 263 says (coding cookie, BOM, else UTF-8);
    text with a NUL is no Python source."""
    nul = "\0" if isinstance(text, str) else b"\0"
    if nul in text:
        raise Skip("NUL byte")
    if isinstance(text, str):
        return text.removeprefix("\ufeff")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(text).readline)
    except SyntaxError as exc:
        raise Skip(f"not decodable: {exc}") from None
    try:
        return text.decode(encoding)
    except UnicodeDecodeError as exc:
        line = text.count(b"\n", 0, exc.start) + 1
        name = "UTF-8" if encoding.startswith("utf-8") else encoding
        byte = text[exc.start]
        raise Skip(f"not {name}: invalid byte 0x{byte:02x} at line {line}") from None
    except LookupError as exc:
        raise Skip(f"not decodable: {exc}") from None


def split_lines(source: str) -> list[str]:
    """The file's lines as Python numbers them (`\\n`, `\\r\\n` and `\\r` end a line)."""
    lines = line_split(source)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class _Hints:
    """Cheap text tests that rule a file out before any parsing.

    Each may say yes wrongly (the parse decides), never no wrongly. Patterns start with a
    literal so the regex engine can scan fast: a leading `\\b` makes them ten times slower.
    """

    raises: re.Pattern[str]
    decorators: tuple[tuple[str, re.Pattern[str]], ...]
    name_pattern: re.Pattern[str]
    method_names: frozenset[str]
    reached: frozenset[str]

    init_methods: frozenset[str]

    def may_have_sites(self, source: str, classes: FileClasses, rules: Rules) -> bool:
        if not self.raises.search(source):
            return False
        if rules.scope == "all":  # a raise in any function is a site
            return True
        if any(name in source and word.search(source) for name, word in self.decorators):
            return True
        names = set(_DEF_NAME.findall(source))
        if any(name in self.method_names or self.name_pattern.search(name) for name in names):
            return True
        if self.reached & names:
            return True
        if not self.init_methods & names:
            return False
        holders = init_holders(classes, rules)
        return bool(holders) and bool(holders & Hierarchy(classes.classes).config_classes(rules))


_DEF_NAME = re.compile(r"def[ \t]+(\w+)")


@functools.lru_cache(maxsize=64)
def _hints(rules: Rules) -> _Hints:
    classes = "|".join(map(re.escape, rules.error_classes)) or r"(?!)"
    return _Hints(
        raises=re.compile(rf"raise[\s\\(]+(?:builtins\s*\.\s*)?(?:{classes})\b"),
        decorators=tuple((name, re.compile(re.escape(name) + r"\b")) for name in rules.decorators),
        name_pattern=re.compile(rules.name_pattern),
        method_names=frozenset(rules.method_names),
        reached=frozenset(rules.reached),
        init_methods=frozenset(rules.init_methods),
    )


# --- parsing ------------------------------------------------------------------------------

_NESTING = ("too many nested", "too many statically nested", "too complex", "stack overflow")
_PYTHON2 = (
    (re.compile(r"^\s*print\s+[^\s(=.,)]"), "print statement"),
    (re.compile(r"^\s*exec\s+[\"'\w]"), "exec statement"),
    (re.compile(r"^\s*except\s+[\w.]+\s*,\s*\w+\s*:"), "except clause with a comma"),
    (re.compile(r"^\s*raise\s+[\w.]+\s*,"), "raise with a comma"),
    (re.compile(r"\b0\d+[lL]?\b|\b\d+[lL]\b"), "old-style number literal"),
    (re.compile(r"<>|`"), "`<>` or backquote"),
    (re.compile(r"\bur[\"']", re.IGNORECASE), "ur'' string"),
)


def parse(source: str) -> ast.Module:
    """The stdlib tree of the file, or Skip with a one-line reason."""
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        message = exc.msg or "invalid syntax"
        if any(marker in message for marker in _NESTING):
            raise Skip("nesting too deep") from None
        line = exc.lineno or 0
        what = _python2_construct(message, source, line)
        if what is not None:
            raise Skip(f"Python 2 code at line {line}: {what}") from None
        raise Skip(f"syntax error at line {line}: {message}") from None
    except (RecursionError, MemoryError):
        raise Skip("nesting too deep") from None
    except ValueError as exc:
        raise Skip(str(exc)) from None


def _python2_construct(message: str, source: str, line: int) -> str | None:
    if message.startswith("Missing parentheses in call to 'print'"):
        return "print statement"
    if message.startswith("Missing parentheses in call to 'exec'"):
        return "exec statement"
    lines = split_lines(source)
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    for construct, what in _PYTHON2:
        if construct.search(text):
            return what
    return None


# --- one function -------------------------------------------------------------------------


class _Snippet:
    """A validator's own source parsed with libcst, and how its lines map onto the file."""

    def __init__(
        self, function: cst.FunctionDef, module: cst.Module, offset: int, standalone: bool = True
    ) -> None:
        self.function = function
        self.module = module
        self.offset = offset  # file line = snippet line + offset
        self.standalone = standalone  # parsed from the function's own lines
        self._positions: Mapping[cst.CSTNode, CodeRange] | None = None

    def line_of(self, node: cst.CSTNode) -> int:
        """The file line a node starts on (position metadata costs a full codegen, so it is
        resolved only when asked)."""
        if self._positions is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
        return self._positions[node].start.line + self.offset


def parse_function(lines: list[str], fn: Function, source: str) -> _Snippet:
    """libcst tree of just this function (a few lines, not the whole file), or Skip when it
    nests deeper than libcst can take."""
    body = "\n".join(lines[fn.start - 1 : fn.end]) + "\n"
    if fn.indent:
        # a block under `if True:` may start at any indentation, so lines stay as written
        snippet, offset = "if True:\n" + body, fn.start - 2
    else:
        snippet, offset = body, fn.start - 1
    function = None
    if _check_depth(fn, snippet, offset):
        try:
            module = cst.parse_module(snippet)
            function = _first_def(module)
        except cst.ParserSyntaxError:
            pass
    if function is None:
        # the snippet did not stand on its own: parse the whole file (slow, rare)
        problem = depth_problem(parse(source))
        if problem is not None:
            raise Skip(problem)
        wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        function = _def_at(wrapper, fn.def_line)
        if function is None:
            raise Skip(f"libcst found no function at line {fn.def_line}")
        return _Snippet(function, wrapper.module, 0, standalone=False)
    return _Snippet(function, module, offset)


def _check_depth(fn: Function, snippet: str, offset: int) -> bool:
    """Skip when the function nests too deep for libcst; False when the snippet does not
    parse on its own (the whole file is then checked and parsed instead)."""
    if fn.node is not None:
        tree, offset = fn.node, fn.def_line - fn.node.lineno
    else:
        try:
            tree = ast.parse(snippet)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    problem = depth_problem(tree, offset)
    if problem is not None:
        raise Skip(problem)
    return True


def _parsed(snippet: _Snippet) -> tuple[cst.FunctionDef, cst.Module]:
    return snippet.function, snippet.module


def _first_def(module: cst.Module) -> cst.FunctionDef | None:
    node: cst.CSTNode | None = module.body[0] if module.body else None
    if isinstance(node, cst.If):
        node = node.body.body[0] if node.body.body else None
    return node if isinstance(node, cst.FunctionDef) else None


def _def_at(wrapper: MetadataWrapper, def_line: int) -> cst.FunctionDef | None:
    positions = wrapper.resolve(PositionProvider)
    for node in positions:
        # ast's line of a def is the line of its name, not of its first decorator
        if isinstance(node, cst.FunctionDef) and positions[node.name].start.line == def_line:
            return node
    return None


def function_source(lines: list[str], fn: Function) -> str:
    """The function as written, decorators included, its indentation removed."""
    prefix = lines[fn.def_line - 1][: fn.indent]
    written = []
    for line in lines[fn.start - 1 : fn.end]:
        if line.startswith(prefix):
            written.append(line[len(prefix) :])
        else:  # a blank or under-indented continuation line: drop what indentation it has
            head = line[: fn.indent]
            written.append(line[len(head) - len(head.lstrip()) :])
    return "\n".join(written)


class _Facts(NamedTuple):
    """What a raise yields that depends on its function's text alone (the memo holds these,
    as JSON lists): its line relative to the function's first line, and its message facts."""

    line: int
    errorClass: str
    errorMessage: str
    messagePattern: str
    messageStatus: str
    guards: list[str]
    priorChecks: list[str]
    occurrence: int
    messageFragments: list[str]


def function_sites(
    path: str,
    lines: list[str],
    fn: Function,
    kind: ValidatorKind,
    rules: Rules,
    source: str,
    memo: Memo | None = None,
    helpers: ValidatorHelpers | None = None,
) -> list[RaiseSite]:
    """The sites of one validator function, placed in the file (line, window, source);
    `helpers` are the same-file functions its messages may come from."""
    if memo is None:
        facts = _function_facts(fn, rules, parse_function(lines, fn, source), helpers)
    else:
        facts = _remembered_facts(lines, fn, kind, rules, source, memo, helpers)
    text_of_function = function_source(lines, fn)
    sites = []
    for fact in facts:
        line = fn.start + fact.line
        start, end = max(1, line - WINDOW), min(len(lines), line + WINDOW)
        sites.append(
            RaiseSite(
                filePath=path,
                lineNumber=line,
                qualname=fn.qualname,
                validatorKind=kind,
                errorClass=fact.errorClass,
                errorMessage=fact.errorMessage,
                messagePattern=fact.messagePattern,
                messageStatus=fact.messageStatus,
                messageFragments=fact.messageFragments,
                guards=fact.guards,
                priorChecks=fact.priorChecks,
                sourceCode="\n".join(lines[start - 1 : end]),
                sourceCodeStart=start,
                sourceCodeEnd=end,
                functionSource=text_of_function,
                occurrence=fact.occurrence,
            )
        )
    return sites


def _remembered_facts(
    lines: list[str],
    fn: Function,
    kind: ValidatorKind,
    rules: Rules,
    source: str,
    memo: Memo,
    helpers: ValidatorHelpers | None = None,
) -> list[_Facts]:
    """`_function_facts`, not parsed again when this function's text was analysed before.

    What is remembered depends on the function's text alone (and on the text of the
    same-file helpers it calls): lines relative to its first line, and neither the file's
    path nor the lines around the function.
    """
    written = "\n".join(lines[fn.start - 1 : fn.end])
    called = helpers.texts(lines, written) if helpers is not None else []
    key = function_key(rules, fn.qualname, kind, written, called)
    entry = memo.get(key)
    if entry is not None:
        return [_Facts(*row) for row in json.loads(entry)]
    snippet = parse_function(lines, fn, source)
    facts = _function_facts(fn, rules, snippet, helpers)
    if snippet.standalone:  # a whole-file parse may render code differently
        memo.put(key, json.dumps(facts))
    return facts


def _function_facts(
    fn: Function, rules: Rules, snippet: _Snippet, helpers: ValidatorHelpers | None = None
) -> list[_Facts]:
    """The facts of every raise of a configured class in the function, in source order."""
    module = snippet.module
    found = [
        (node, steps, error_class)
        for node, steps in statements_in(cst.Raise, snippet.function.body.body)
        if (error_class := raised_class(node)) in rules.error_classes
    ]
    # the pre-pass saw the same raises in the same order, with their lines
    known_lines = sorted(fn.raise_lines) if len(fn.raise_lines) == len(found) else None
    facts: list[_Facts] = []
    seen: Counter[str] = Counter()
    # one of each per function: the raises share the work on the statements before them
    walk, guards = BindingsWalk(module, helpers), GuardFinder(module)
    for number, (node, steps, error_class) in enumerate(found):
        line = known_lines[number] if known_lines else snippet.line_of(node)
        if isinstance(node.exc, cst.Call):
            message = message_of_args(node.exc.args, module, walk.lookup_at(steps), helpers)
        else:
            message = Message()
        text = message.text()
        conditions = guards.conditions(steps)
        facts.append(
            _Facts(
                line - fn.start,
                error_class,
                text,
                message.pattern(),
                message.status(),
                conditions.guards,
                conditions.prior_checks,
                seen[text],
                message.fragments(),
            )
        )
        seen[text] += 1
    return facts
