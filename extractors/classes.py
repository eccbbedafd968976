"""The classes a file defines, read from its text, and the class rules that span a repository:
which classes are configuration classes and which derive from a configured error class.
Also read from the text, when asked: a class's annotated attributes.

The scan is textual on purpose: it runs over every file of a tree (on transformers, 1 s
where a parse of each file takes 7 s), and a class-looking line inside a string only adds a
name nobody raises or subclasses. Base and decorator names are their last dotted segment (`pydantic.BaseModel` ->
`BaseModel`), as the validator rules match decorators.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from extractors.facts import Rules

# Patterns start with a literal so the regex engine can scan fast (a leading `^` with
# MULTILINE makes them several times slower); `_indent` then checks the line's start.
_HEADER = re.compile(r"class[ \t]+([A-Za-z_]\w*)[ \t]*([(:])")
# a `def` or `class` keyword and its name, matched where `_blocks` found one
_BLOCK = re.compile(r"(def|class)[ \t]+([A-Za-z_]\w*)")
_ASYNC = re.compile(r"async[ \t]+")
_RAISED = re.compile(r"raise[ \t(]+(?:builtins[ \t]*\.[ \t]*)?([A-Za-z_]\w*)")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*$")
_DECORATOR = re.compile(r"@[ \t]*([A-Za-z_][\w.]*)")
_ANNOTATION = re.compile(r"([A-Za-z_]\w*)[ \t]*:(?!=)[ \t]*(\S.*)")
_KEYWORDS = frozenset(
    {
        "else",
        "try",
        "finally",
        "except",
        "elif",
        "if",
        "for",
        "while",
        "with",
        "match",
        "case",
        "lambda",
        "def",
        "class",
        "return",
    }
)
_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class ClassFact:
    """One `class` statement: its name, its base and decorator names, and the names of the
    methods its body defines (by indentation: a `def` belongs to the nearest `class` or `def`
    above it that is indented less)."""

    name: str
    bases: tuple[str, ...] = ()
    decorators: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()

    def to_row(self) -> list:
        return [self.name, list(self.bases), list(self.decorators), list(self.methods)]

    @classmethod
    def from_row(cls, row: list) -> ClassFact:
        name, bases, decorators, methods = row
        return cls(name, tuple(bases), tuple(decorators), tuple(methods))


@dataclass(frozen=True)
class FileClasses:
    """What one file says about classes: the ones it defines and the names it raises."""

    classes: tuple[ClassFact, ...] = ()
    raised: frozenset[str] = field(default_factory=frozenset)

    def to_row(self) -> list:
        return [[fact.to_row() for fact in self.classes], sorted(self.raised)]

    @classmethod
    def from_row(cls, row: list) -> FileClasses:
        classes, raised = row
        return cls(tuple(ClassFact.from_row(item) for item in classes), frozenset(raised))

    @property
    def base_names(self) -> frozenset[str]:
        return frozenset(base for fact in self.classes for base in fact.bases)


def scan_file(source: str) -> FileClasses:
    """The classes of a file and the names it raises (`raise X`, `raise X(...)`)."""
    raised = frozenset(_RAISED.findall(source)) if "raise" in source else frozenset()
    return FileClasses(tuple(scan_classes(source)), raised)


def scan_classes(source: str) -> list[ClassFact]:
    """Every `class` statement of the text, in order."""
    if "class" not in source:
        return []
    facts: list[ClassFact] = []
    methods: dict[int, list[str]] = {}  # index in facts -> its methods so far
    stack: list[tuple[int, int | None]] = []  # (indent, index in facts, or None for a def)
    for written, kind, name, start in _blocks(source):
        indent = len(written.expandtabs() if "\t" in written else written)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if kind == "def":
            owner = stack[-1][1] if stack else None
            if owner is not None:
                methods[owner].append(name)
            stack.append((indent, None))
            continue
        header = _HEADER.match(source, start)
        if header is None:  # `class` not followed by `(` or `:`: no class statement
            continue
        bases: tuple[str, ...] = ()
        if header[2] == "(":
            closing = _closing(source, header.end(2))
            if closing is None:
                continue
            bases = _base_names(source[header.end(2) : closing])
        methods[len(facts)] = []
        stack.append((indent, len(facts)))
        line_start = source.rfind("\n", 0, start) + 1
        facts.append(ClassFact(header[1], bases, _decorators(source, line_start, written)))
    return [
        replace(fact, methods=tuple(dict.fromkeys(methods[index])))
        for index, fact in enumerate(facts)
    ]


def _blocks(source: str) -> Iterable[tuple[str, str, str, int]]:
    """Each `def` or `class` (`async` allowed) that starts a line: the spaces and tabs before
    it, the keyword, the name, and where the keyword is. The keywords are found with
    `str.find`: a regex scan for them took twice as long on a whole tree."""
    starts = []
    needles = ("def ", "class ", "def\t", "class\t") if "\t" in source else ("def ", "class ")
    for needle in needles:
        at = source.find(needle)
        while at >= 0:
            starts.append(at)
            at = source.find(needle, at + 1)
    starts.sort()
    for at in starts:
        line_start = source.rfind("\n", 0, at) + 1
        before = source[line_start:at]
        rest = before.lstrip(" \t")
        if rest and not _ASYNC.fullmatch(rest):
            continue  # the keyword is inside the line: a name or a string
        match = _BLOCK.match(source, at)
        if match is not None:
            yield before[: len(before) - len(rest)], match[1], match[2], at


def class_annotations(source: str, name: str) -> tuple[tuple[str, str], ...]:
    """`attribute: Annotation` statements (annotation as written, without its default) of
    the body of every class `name` of the text."""
    lines = source.split("\n")
    where = _LineOf(source)
    found: list[tuple[str, str]] = []
    for match in _HEADER.finditer(source):
        indent = _indent(source, match.start())
        if match[1] != name or indent is None:
            continue
        header_end = where(match.start())
        if match[2] == "(":
            closing = _closing(source, match.end(2))
            if closing is None:
                continue
            header_end = where(closing)
        found += _annotations(lines, header_end, len(indent))
    return tuple(found)


def _indent(source: str, offset: int) -> str | None:
    """The spaces and tabs between the line's start and `offset`, or None if anything else
    (or a word character right before) comes first."""
    line_start = source.rfind("\n", 0, offset) + 1
    written = source[line_start:offset]
    return written if not written.strip(" \t") else None


class _LineOf:
    """Offset -> 0-based line number, for offsets asked in increasing order (mostly)."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._offset = 0
        self._line = 0

    def __call__(self, offset: int) -> int:
        if offset < self._offset:
            self._offset, self._line = 0, 0
        self._line += self._source.count("\n", self._offset, offset)
        self._offset = offset
        return self._line


def _closing(source: str, start: int) -> int | None:
    """The offset of the `)` that closes the bracket opened just before `start`."""
    depth, index, quote = 1, start, ""
    while index < len(source):
        char = source[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            newline = source.find("\n", index)
            index = len(source) if newline < 0 else newline
            continue
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _split_top(text: str) -> list[str]:
    """`a, b[c, d], e` -> [`a`, `b[c, d]`, `e`]: commas at bracket depth 0."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _base_names(text: str) -> tuple[str, ...]:
    """Positional bases as names: `pydantic.BaseModel` -> `BaseModel`, `Generic[T]` ->
    `Generic`; keywords (`metaclass=...`), `*args` and calls are no base name."""
    text = re.sub(r"#[^\n]*", "", text)
    names = []
    for part in _split_top(text):
        if "=" in part or part.startswith("*"):
            continue
        part = part.split("[", 1)[0].strip()
        if _DOTTED.match(part):
            names.append(part.rsplit(".", 1)[-1].strip())
    return tuple(names)


def _decorators(source: str, line_start: int, indent: str) -> tuple[str, ...]:
    """The decorators right above the line that starts at `line_start`, written at `indent`,
    top first; the lines of a multi-line decorator's arguments are passed over. The lines
    are read upwards from there, not split out of the whole text."""
    found = []
    end = line_start - 1  # the line break that ends the line above
    while end >= 0:
        start = source.rfind("\n", 0, end) + 1
        text = source[start:end]
        end = start - 1
        stripped = text.strip()
        if not stripped:
            break
        if text.startswith(indent + "@"):
            match = _DECORATOR.match(stripped)
            if match:
                found.append(match[1].rsplit(".", 1)[-1])
        elif not (
            text.startswith(indent)
            and (text[len(indent) : len(indent) + 1] in " \t" or stripped[0] in _CLOSE)
        ):
            break
    return tuple(reversed(found))


def _annotations(lines: list[str], header_end: int, width: int) -> list[tuple[str, str]]:
    """`name: Annotation` statements written at the class body's own indentation."""
    body_indent = None
    found = []
    for text in lines[header_end + 1 :]:
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(text) - len(text.lstrip(" \t"))
        if indent <= width:
            break
        if body_indent is None:
            body_indent = indent
        if indent != body_indent:
            continue
        match = _ANNOTATION.match(stripped)
        if match and match[1] not in _KEYWORDS:
            annotation = _before_default(match[2]).strip()
            if annotation:
                found.append((match[1], annotation))
    return found


def _before_default(text: str) -> str:
    """An annotation without its `= default` and trailing comment."""
    depth = 0
    for index, char in enumerate(text):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        elif depth == 0 and char in "=#":
            return text[:index]
    return text


# --- the rules over classes ------------------------------------------------------------------


def has_config_name(name: str, rules: Rules) -> bool:
    """`CacheConfig`, `TrainingArguments`, `ServerArgs`, `Settings` (the name alone)."""
    return name.endswith(rules.config_suffixes)


ConfigKind = Literal["dataclass", "config", "pydantic"]


def config_kind(decorators: Iterable[str], bases: Iterable[str], rules: Rules) -> ConfigKind | None:
    """What makes a class statement a configuration class by itself, the one rule (names
    are last dotted names): a decorator of `rules.config_decorators` (`dataclass`, told
    apart, else `config`) or a base of `rules.config_bases` (`pydantic`); None when neither
    does (its name or a base of the repository still may, see `Hierarchy`)."""
    decorated = set(decorators).intersection(rules.config_decorators)
    if "dataclass" in decorated:
        return "dataclass"
    if decorated:
        return "config"
    if set(bases).intersection(rules.config_bases):
        return "pydantic"
    return None


class Hierarchy:
    """The base and decorator names of every class name over a set of `class` statements (a
    file's or a whole tree's); several statements of one name are taken together."""

    def __init__(self, facts: Iterable[ClassFact]) -> None:
        self.bases: dict[str, set[str]] = {}
        self.decorators: dict[str, set[str]] = {}
        for fact in facts:
            self.bases.setdefault(fact.name, set()).update(fact.bases)
            self.decorators.setdefault(fact.name, set()).update(fact.decorators)

    def derived_from(self, roots: Iterable[str]) -> set[str]:
        """Names of classes here that derive from one of `roots`, transitively (a root
        itself only when it also derives from another root)."""
        roots = set(roots)
        children: dict[str, list[str]] = {}
        for name, bases in self.bases.items():
            for base in bases:
                children.setdefault(base, []).append(name)
        found: set[str] = set()
        stack = list(roots)
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in found:
                    found.add(child)
                    stack.append(child)
        return found

    def config_classes(self, rules: Rules) -> set[str]:
        """Names of the configuration classes here: named like one, decorated as a dataclass,
        a pydantic model, or deriving from a class that is one (here or by its name)."""
        named = {
            name
            for name in self.bases
            if has_config_name(name, rules) or config_kind(self.decorators[name], (), rules)
        }
        roots = (
            named
            | set(rules.config_bases)
            | {
                base
                for bases in self.bases.values()
                for base in bases
                if has_config_name(base, rules)
            }
        )
        return named | self.derived_from(roots)

    def error_classes(self, rules: Rules) -> set[str]:
        """Names of the classes here that derive from a configured error class."""
        return self.derived_from(rules.error_classes)


@dataclass(frozen=True)
class ClassRules:
    """The classes of a tree that the validator rules single out, worked out once."""

    errors: frozenset[str] = frozenset()
    configs: frozenset[str] = frozenset()

    @classmethod
    def of(cls, facts: Iterable[ClassFact], rules: Rules) -> ClassRules:
        hierarchy = Hierarchy(facts)
        return cls(
            frozenset(hierarchy.error_classes(rules)), frozenset(hierarchy.config_classes(rules))
        )


def init_holders(file: FileClasses, rules: Rules) -> set[str]:
    """Names of the file's classes whose body defines one of the `init` methods."""
    methods = set(rules.init_methods)
    return {fact.name for fact in file.classes if methods.intersection(fact.methods)}


def rules_for_file(rules: Rules, file: FileClasses, tree: ClassRules | None = None) -> Rules:
    """The rules in effect for one file: the configured ones, plus the error classes it
    raises and the configuration classes it derives from that are so by `tree` (the classes
    of the whole repository) or by the file's own classes. A configuration class only
    matters to the `init` rule: one is added only when it makes a class of this file that
    defines an `init` method a configuration class (so the rules of most files, and their
    cache keys, do not depend on other files)."""
    own = ClassRules.of(file.classes, rules)
    tree = tree or own
    errors = (tree.errors | own.errors) & file.raised
    configs = (tree.configs | own.configs) & file.base_names
    add_errors = tuple(sorted(errors - set(rules.error_classes)))
    add_configs = tuple(
        sorted(
            name for name in configs - set(rules.config_bases) if not has_config_name(name, rules)
        )
    )
    if add_configs:
        holders = init_holders(file, rules)
        extended = rules.model_copy(update={"config_bases": rules.config_bases + add_configs})
        hierarchy = Hierarchy(file.classes)
        if (
            hierarchy.config_classes(extended) & holders
            == hierarchy.config_classes(rules) & holders
        ):
            add_configs = ()
    if not add_errors and not add_configs:
        return rules
    return rules.model_copy(
        update={
            "error_classes": rules.error_classes + add_errors,
            "config_bases": rules.config_bases + add_configs,
        }
    )
