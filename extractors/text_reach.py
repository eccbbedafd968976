"""Whether parsing a file can give anything, read from its text: a raise site, or a call out
through its imports (`calls_out`). A file that passed the text hints (`sites._Hints`) may
still give neither: its validators raise nothing and call nothing it imports, while the
raises are in other functions (40% of the files vLLM's hints let through). Its whole-file
parse, function table and validator pass are then spared, and its extraction is empty, as
the parse would have made it.

The file is cut into its segments (extractors/segments.py: top-level defs and classes, and a
class's members), a segment joined to the one before while that one leaves a string or a
bracket open (a line inside a string may look like a def). A unit is *reached* when a def in
it counts on its own (the name rule, `method_names`, `reached`, `init_methods` of a file
with a configuration class, a validator decorator in its text), or when a reached unit's text
holds the name of a def in it: a superset of what `validators.find_validators` follows (every
call it follows names the callee). The parse can matter only if a reached unit holds a raise
of a configured class, or a word of a reached unit is a name the file imports.

| the file (scope `validators`) | may give |
|---|---|
| `def check_x(v): raise ValueError(v)` | yes: a validator raises |
| `def check_x(v): _fail(v)` and `def _fail(v): raise ValueError(v)` | yes: it reaches the raise |
| `def check_x(v): return v` and `def load(p): raise ValueError(p)` | no |
| `from .env import to_bool`, `def check_x(v): to_bool(v)`, a raise in `load` | yes: a call out |
| `def check_x(v):` + a string whose line `def load():` is at column 0, then a raise | yes |
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from extractors.classes import FileClasses, Hierarchy, init_holders
from extractors.facts import Rules
from extractors.imports import imported
from extractors.segments import Segment

_DEF = re.compile(r"def\s+(\w+)")
_WORD = re.compile(r"\w+")
_CLASS = re.compile(r"class\s+(\w+)")
# a comment or a string that ends (triple-quoted ones first): what a bracket or a quote in
# it says does not count
_COMMENT_OR_STRING = re.compile(
    "|".join(
        (
            r"#[^\n]*",
            r'"""(?:[^"\\]|\\.|"(?!""))*"""',
            r"'''(?:[^'\\]|\\.|'(?!''))*'''",
            r'"(?:[^"\\\n]|\\.)*"',
            r"'(?:[^'\\\n]|\\.)*'",
        )
    ),
    re.DOTALL,
)
# a name called or called on: `name(`, `name.` (across spaces, line ends and comments)
_CALLED = re.compile(r"(\w+)(?:\s|\\\n|#[^\n]*\n)*[(.]")


@dataclass(frozen=True)
class TextReach:
    """What a file's text says its parse can give: `gives` False when neither a site nor a
    call out; when only call outs (no reached def holds a raise), `segments` are the indexes
    of those whose functions can matter (the reached ones, and the setup methods member
    types are read from); None: every segment."""

    gives: bool
    segments: frozenset[int] | None = None


def read_reach(
    source: str,
    segments: Sequence[Segment],
    rules: Rules,
    classes: FileClasses,
    raises: re.Pattern[str],
) -> TextReach:
    """What the file's parse may give under `rules`; `segments` are the file's
    (`split_segments`), `raises` finds a raise of a configured class. May say yes wrongly,
    never no wrongly."""
    if rules.scope == "all":  # a raise in any function is a site
        return TextReach(True)
    texts = [segment.text for segment in segments]
    # Joining segments only makes more reached: a raise reached on the segments as cut
    # stands, and the strings and brackets are read only when there is none (most files
    # have one).
    found = _Reached(source, texts, rules, classes, raises)
    if found.raises:
        return TextReach(True)
    units, members = _units(texts)
    if len(units) < len(texts):
        found = _Reached(source, units, rules, classes, raises)
        if found.raises:
            return TextReach(True)
    if not found.calls:
        return TextReach(False)
    if _repeated_class_name(source):
        return TextReach(True)  # which one a name means depends on the order of all defs
    wanted = found.reached | found.setup()
    return TextReach(True, frozenset(index for unit in wanted for index in members[unit]))


def may_give_results(
    source: str,
    segments: Sequence[Segment],
    rules: Rules,
    classes: FileClasses,
    raises: re.Pattern[str],
) -> bool:
    """Whether the file's parse may give a site or a call out (`read_reach`)."""
    return read_reach(source, segments, rules, classes, raises).gives


class _Reached:
    """The units the validators' text reaches, whether one holds a raise, and whether
    they call a name the file imports."""

    def __init__(
        self,
        source: str,
        units: list[str],
        rules: Rules,
        classes: FileClasses,
        raises: re.Pattern[str],
    ) -> None:
        self._units = units
        self._rules = rules
        self.names = [set(_DEF.findall(unit)) for unit in units]
        seeds = _Seeds(rules, classes)
        todo = [index for index, unit in enumerate(units) if seeds.counts(unit, self.names[index])]
        self.reached = set(todo)
        self.raises = False
        words: set[str] = set()
        while todo:
            index = todo.pop()
            if raises.search(units[index]):
                self.raises = True
                return
            found = set(_WORD.findall(units[index])) - words
            words |= found
            for other, defined in enumerate(self.names):
                if other not in self.reached and not defined.isdisjoint(found):
                    self.reached.add(other)
                    todo.append(other)
        self.calls = False
        if rules.follow_calls and self.reached:
            called = {name for index in self.reached for name in _CALLED.findall(units[index])}
            self.calls = not called.isdisjoint(imported(source, called).keys())

    def setup(self) -> set[int]:
        """The units that define a setup method (the member types of `self.member.x(...)`
        are read from them)."""
        setup = set(self._rules.init_methods) | set(self._rules.method_names)
        return {index for index, defined in enumerate(self.names) if not defined.isdisjoint(setup)}


def _repeated_class_name(source: str) -> bool:
    names = _CLASS.findall(source)
    return len(set(names)) < len(names)


class _Seeds:
    """Whether a def of a unit may be a validator on its own (validators.direct_kind)."""

    def __init__(self, rules: Rules, classes: FileClasses) -> None:
        self._rules = rules
        self._classes = classes
        self._pattern = re.compile(rules.name_pattern)
        self._config_init: bool | None = None  # the file has a configuration class's init

    def counts(self, unit: str, defined: set[str]) -> bool:
        rules = self._rules
        if any(
            name in rules.method_names or name in rules.reached or self._pattern.search(name)
            for name in defined
        ):
            return True
        if "@" in unit and any(name in unit for name in rules.decorators):
            return True
        return any(name in rules.init_methods for name in defined) and self._has_config_init()

    def _has_config_init(self) -> bool:
        if self._config_init is None:
            holders = init_holders(self._classes, self._rules)
            configs = Hierarchy(self._classes.classes).config_classes(self._rules)
            self._config_init = bool(holders) and bool(holders & configs)
        return self._config_init


def _units(texts: list[str]) -> tuple[list[str], list[list[int]]]:
    """The segments' texts, each joined to the one before while that one may leave a
    string or a bracket open (a line inside a string may look like a def), and the indexes
    of the segments each unit holds."""
    units: list[str] = []
    members: list[list[int]] = []
    closed = True
    for index, text in enumerate(texts):
        if closed or not units:
            units.append(text)
            members.append([index])
        else:
            units[-1] += text
            members[-1].append(index)
        closed = _closed(units[-1])
    return units, members


def _closed(text: str) -> bool:
    """Whether the text leaves no string or bracket open at its end (read as Python's
    tokenizer would: brackets in strings and comments do not count)."""
    code = _COMMENT_OR_STRING.sub("", text)
    if '"' in code or "'" in code:
        return False  # a string that does not end in the text
    return (
        code.count("(") == code.count(")")
        and code.count("[") == code.count("]")
        and code.count("{") == code.count("}")
        and not code.rstrip().endswith("\\")
    )
