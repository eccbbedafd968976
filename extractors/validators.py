"""Which functions of a file are validators, and why: `pydantic`, `post_init`, `name`, `reached`."""

from __future__ import annotations

import re
from collections import deque

from extractors.facts import Rules, ValidatorKind
from extractors.functions import Function


def direct_kind(fn: Function, rules: Rules, name_pattern: re.Pattern[str]) -> ValidatorKind | None:
    """The kind a function has on its own, by the first rule that applies (pydantic first)."""
    if any(name in rules.decorators for name in fn.decorators):
        return "pydantic"
    if fn.name in rules.method_names:
        return "post_init"
    if name_pattern.search(fn.name):
        return "name"
    return None


def find_validators(functions: list[Function], rules: Rules) -> dict[str, ValidatorKind]:
    """qualname -> kind for every validator among `functions`.

    Besides the functions that count on their own, a method reached through `self.x(...)`
    or `cls.x(...)` from a validator of the same class, and a module function (or a def
    nested in the caller) reached through `x(...)`, count as `reached`, transitively.
    """
    pattern = re.compile(rules.name_pattern)
    kinds: dict[str, ValidatorKind] = {}
    for fn in functions:
        kind = direct_kind(fn, rules, pattern)
        if kind is not None:
            kinds[fn.qualname] = kind
    if not rules.follow_calls:
        return kinds

    methods: dict[tuple[str, str], Function] = {}
    module_functions: dict[str, Function] = {}
    nested: dict[tuple[str, str], Function] = {}
    by_qualname: dict[str, Function] = {}
    for fn in functions:
        by_qualname[fn.qualname] = fn
        if fn.owner_class is not None:
            methods.setdefault((fn.owner_class, fn.name), fn)
        elif fn.parent is None:
            module_functions.setdefault(fn.name, fn)
        else:
            nested.setdefault((fn.parent, fn.name), fn)

    queue = deque(by_qualname[q] for q in kinds)
    while queue:
        fn = queue.popleft()
        callees: list[Function] = []
        if fn.self_class is not None:
            callees += [
                methods[(fn.self_class, name)]
                for name in sorted(fn.self_calls)
                if (fn.self_class, name) in methods
            ]
        for name in sorted(fn.direct_calls):
            # a def nested in the caller shadows a module function of the same name
            callee = nested.get((fn.qualname, name)) or module_functions.get(name)
            if callee is not None:
                callees.append(callee)
        for callee in callees:
            if callee.qualname not in kinds:
                kinds[callee.qualname] = "reached"
                queue.append(callee)
    return kinds
