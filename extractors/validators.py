"""Which functions of a file are validators, and why: `pydantic`, `post_init`, `init`, `name`,
`reached`."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from extractors.classes import ClassFact, Hierarchy
from extractors.facts import Rules, ValidatorKind
from extractors.functions import Function
from extractors.syntax.annotations import annotated_class

# class name -> its body's `attribute: Annotation` statements
Annotations = Callable[[str], Sequence[tuple[str, str]]]
# a read of one of these is a call of the getter
_PROPERTIES = ("property", "cached_property")


def direct_kind(
    fn: Function, rules: Rules, name_pattern: re.Pattern[str], configs: frozenset[str] = frozenset()
) -> ValidatorKind | None:
    """The kind a function has on its own, by the first rule that applies (pydantic first);
    `configs` are the names of the file's configuration classes."""
    if any(name in rules.decorators for name in fn.decorators):
        return "pydantic"
    if fn.name in rules.method_names:
        return "post_init"
    if (
        fn.name in rules.init_methods
        and fn.owner_class is not None
        and _last(fn.owner_class) in configs
    ):
        return "init"
    if name_pattern.search(fn.name):
        return "name"
    return None


def _last(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


class _Classes:
    """The file's classes as the call rules see them: methods by class, in-file bases in
    method resolution order, and what a member's annotation says its class is."""

    def __init__(
        self,
        functions: Sequence[Function],
        facts: Sequence[ClassFact],
        rules: Rules,
        annotations: Annotations | None,
    ) -> None:
        self._annotations = annotations
        self.methods: dict[tuple[str, str], Function] = {}
        self.by_name: dict[str, str] = {}  # class name -> qualname (the first of that name)
        for fn in functions:
            if fn.owner_class is not None:
                self.methods.setdefault((fn.owner_class, fn.name), fn)
                self.by_name.setdefault(_last(fn.owner_class), fn.owner_class)
        self.facts: dict[str, list[ClassFact]] = {}
        for fact in facts:
            self.facts.setdefault(fact.name, []).append(fact)
            self.by_name.setdefault(fact.name, fact.name)  # a class without methods
        self._setup = set(rules.init_methods) | set(rules.method_names)
        self._order: dict[str, list[str]] = {}

    def order(self, qualname: str) -> list[str]:
        """The class, then its bases defined in this file, depth first (as the MRO of a
        single-inheritance chain; enough to find which class defines a method)."""
        if qualname not in self._order:
            self._order[qualname] = [qualname]  # a cycle of names stops here
            found = [qualname]
            for fact in self.facts.get(_last(qualname), ()):
                for base in fact.bases:
                    based = self.by_name.get(base)
                    if based is not None:
                        found += [name for name in self.order(based) if name not in found]
            self._order[qualname] = found
        return self._order[qualname]

    def lookup(self, qualname: str, name: str, skip_first: bool = False) -> Function | None:
        """The method `name` as the class (or, with `skip_first`, its bases) resolves it."""
        order = self.order(qualname)
        for owner in order[1:] if skip_first else order:
            fn = self.methods.get((owner, name))
            if fn is not None:
                return fn
        return None

    def member_class(self, qualname: str, member: str) -> str | None:
        """The qualname of the class of `self.member`, from an annotation in the class body or
        in a setup method (`__init__`, `__post_init__`), when it is a class of this file."""
        for owner in self.order(qualname):
            if self._annotations is not None:
                for attr, annotation in self._annotations(_last(owner)):
                    if attr == member:
                        return self._class_of(annotation)
            for setup in sorted(self._setup):
                fn = self.methods.get((owner, setup))
                if fn is None:
                    continue
                for attr, annotation in fn.calls.member_types:
                    if attr == member:
                        return self._class_of(annotation)
        return None

    def _class_of(self, annotation: str) -> str | None:
        name = annotated_class(annotation)
        return self.by_name.get(name) if name is not None else None


def find_validators(
    functions: list[Function],
    rules: Rules,
    classes: Sequence[ClassFact] = (),
    annotations: Annotations | None = None,
) -> dict[str, ValidatorKind]:
    """qualname -> kind for every validator among `functions`; `classes` are the file's
    `class` statements (extractors/classes.py), for `init` and for bases, and `annotations`
    gives the annotated attributes of a class of the file by its name.

    Besides the functions that count on their own, these count as `reached`, transitively:
    from a validator, a method of its class or of an in-file base through `self.x(...)`,
    `cls.x(...)`, `super().x(...)` or a read of a property `self.x`; a method through
    `Class.x(...)` of a class of the file, or through `self.member.x(...)` when an annotation
    names the member's class; a module function (or a def nested in the caller) through
    `x(...)`. A site is attributed to the class that defines the method. The top-level
    functions `rules.reached` names (validators of other files call them) are `reached` too.
    """
    pattern = re.compile(rules.name_pattern)
    configs = (
        frozenset(Hierarchy(classes).config_classes(rules)) if rules.init_methods else (frozenset())
    )
    kinds: dict[str, ValidatorKind] = {}
    reached = frozenset(rules.reached)  # called by validators of other files
    for fn in functions:
        kind = direct_kind(fn, rules, pattern, configs)
        if kind is None and fn.name in reached and fn.parent is None and fn.owner_class is None:
            kind = "reached"
        if kind is not None:
            kinds[fn.qualname] = kind
    if not rules.follow_calls:
        return kinds

    table = _Classes(functions, classes, rules, annotations)
    module_functions: dict[str, Function] = {}
    nested: dict[tuple[str, str], Function] = {}
    by_qualname: dict[str, Function] = {}
    for fn in functions:
        by_qualname[fn.qualname] = fn
        if fn.owner_class is None and fn.parent is None:
            module_functions.setdefault(fn.name, fn)
        elif fn.owner_class is None:
            nested.setdefault((fn.parent, fn.name), fn)

    queue = deque(by_qualname[q] for q in kinds)
    while queue:
        fn = queue.popleft()
        for callee in _callees(fn, table, module_functions, nested):
            if callee.qualname not in kinds:
                kinds[callee.qualname] = "reached"
                queue.append(callee)
    return kinds


def _callees(
    fn: Function,
    table: _Classes,
    module_functions: dict[str, Function],
    nested: dict[tuple[str, str], Function],
) -> Iterator[Function]:
    calls = fn.calls
    own = fn.self_class
    if own is not None:
        for name in sorted(calls.self_calls):
            found = table.lookup(own, name)
            if found is not None:
                yield found
        for name in sorted(calls.super_calls):
            found = table.lookup(own, name, skip_first=True)
            if found is not None:
                yield found
        for name in sorted(calls.self_reads):
            found = table.lookup(own, name)
            if found is not None and any(d in _PROPERTIES for d in found.decorators):
                yield found
        for member, name in sorted(calls.member_calls):
            cls = table.member_class(own, member)
            found = table.lookup(cls, name) if cls is not None else None
            if found is not None:
                yield found
    for owner, name in sorted(calls.class_calls):
        cls = table.by_name.get(owner)
        found = table.lookup(cls, name) if cls is not None else None
        if found is not None:
            yield found
    for name in sorted(calls.direct):
        # a def nested in the caller shadows a module function of the same name
        callee = nested.get((fn.qualname, name)) or module_functions.get(name)
        if callee is not None:
            yield callee
