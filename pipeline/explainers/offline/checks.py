"""What a site's code says, ready to explain: the facts of its function (never its comments)
and its guards as checks, each with the command-line flag that sets it when one is known."""

from __future__ import annotations

import ast
import functools
import json
import re
import shlex
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace

from extractors import ops
from extractors.patterns import holes_in_message, pattern_fragments
from extractors.syntax.names import dotted_parts
from pipeline.dataset.models import Setting, Site
from pipeline.explainers.flags import find_flags, flag_for, string_literals
from pipeline.explainers.offline.conditions import (
    RECEIVERS,
    Condition,
    is_bool_name,
    is_isinstance,
)
from pipeline.explainers.offline.settings import (
    carrier_of,
    holds_with,
    is_bool,
    passing_values,
    primary_flag,
    proposable,
    read_settings,
    settings_of,
)

OTHER_VALUE = "<other value>"  # a value the code does not name
_SHELL_SAFE = re.compile(r"[A-Za-z0-9_.:/+=-]+")
_MAX_FRAGMENT = 60  # characters of message a try/except matches on
_AFTER_HOLE = " \t\n:;,.)]}>`'\""  # what may close the text around a run-time value
_BEFORE_HOLE = " \t\n([{<`'\""  # what may open it


@dataclass(frozen=True)
class FunctionFacts:
    """What the validator's own code tells (never its comments)."""

    owner: str | None  # class name
    name: str
    decorators: tuple[tuple[str, tuple[str, ...]], ...]  # (name, string arguments)
    variables: frozenset[str]  # parameters and locals
    params: frozenset[str]  # parameters only
    flags: tuple[str, ...]  # `--flags` in its string literals
    aliases: tuple[tuple[str, str], ...] = ()  # a field validator's value parameter -> field
    # its `for` headers as the guards write them (`x in xs`, by ast.dump): no fix changes one
    loops: frozenset[str] = frozenset()
    keywords: tuple[str, ...] = ()  # the parameters a caller can pass by name, in order
    # each local it assigns (or a loop walks), with the parameters its value is computed
    # from (through other locals too), for a test of a value the function computes itself
    computed: tuple[tuple[str, tuple[str, ...]], ...] = ()
    iterated: frozenset[str] = frozenset()  # the locals a loop or comprehension binds


@dataclass(frozen=True)
class Check:
    """One condition with the command-line flag that sets its subject, when known."""

    condition: Condition
    flag: str | None
    wanted: str | None  # a flag value under which the condition no longer holds
    offending: str | None  # a flag value under which it holds
    # its subject is a field of the config being validated (`self.x`, a field validator's
    # value), not a local value or another object handed in
    settable: bool = False
    on_off: bool = False  # its flag is a switch (a boolean name, or `--no-x` exists)
    setting: Setting | None = None  # what its subject is, when the site's settings say
    carrier: Setting | None = None  # the flag the setting's whole config is passed by
    # every setting the condition reads (its subject or inside it: `len(self.ids) != 1`),
    # each with the flag its config is passed by when it has none of its own
    reads: tuple[tuple[Setting, Setting | None], ...] = ()
    # the loop whose item it tests, when its settings come through that loop (`bound in
    # buckets`, as the guards write the `for` header)
    loop: str | None = None


def read_function(site: Site) -> FunctionFacts:
    return _read_source(site.qualname, site.functionSource)


@functools.lru_cache(maxsize=64)  # the sites of one function share it; parse it once
def _read_source(qualname: str, source: str) -> FunctionFacts:
    parts = qualname.split(".")
    owner = parts[-2] if len(parts) >= 2 and parts[-2] != "<locals>" else None
    decorators: list[tuple[str, tuple[str, ...]]] = []
    variables: set[str] = set()
    params: set[str] = set()
    aliases: dict[str, str] = {}
    loops: set[str] = set()
    keywords: list[str] = []
    computed: dict[str, tuple[str, ...]] = {}
    iterated: set[str] = set()
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        tree = None
    # string constants from the tree, or from tokens when it does not parse: never comments
    if tree is not None:
        strings = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
    else:
        strings = string_literals(source)
    flags = tuple(ordered_unique(f for text in strings for f in find_flags(text)))
    defs = [
        n
        for n in (tree.body if tree else [])
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    if defs:
        func = defs[0]
        for decorator in func.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            names = dotted_parts(target)
            if names is None:
                continue
            args = decorator.args if isinstance(decorator, ast.Call) else []
            strings = tuple(
                a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            )
            decorators.append((names[-1], strings))
        every = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
        every += [a for a in (func.args.vararg, func.args.kwarg) if a is not None]
        params = {a.arg for a in every}
        keywords = [a.arg for a in [*func.args.args, *func.args.kwonlyargs]]
        aliases = _value_alias(decorators, [a.arg for a in func.args.args])
        stored = {
            n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        variables = params | stored
        loops = {
            _without_ctx(ast.Compare(left=n.target, ops=[ast.In()], comparators=[n.iter]))
            for n in ast.walk(func)
            if isinstance(n, ast.For | ast.AsyncFor | ast.comprehension)
        }
        computed = _computed_from(func, params - set(RECEIVERS))
        iterated = {
            name.id
            for n in ast.walk(func)
            if isinstance(n, ast.For | ast.AsyncFor | ast.comprehension)
            for name in ast.walk(n.target)
            if isinstance(name, ast.Name)
        }
    return FunctionFacts(
        owner=owner,
        name=parts[-1],
        decorators=tuple(decorators),
        variables=frozenset(variables - set(RECEIVERS)),
        params=frozenset(params - set(RECEIVERS)),
        flags=flags,
        aliases=tuple(aliases.items()),
        loops=frozenset(loops),
        keywords=tuple(k for k in keywords if k not in RECEIVERS),
        computed=tuple(sorted(computed.items())),
        iterated=frozenset(iterated),
    )


def _computed_from(func: ast.FunctionDef | ast.AsyncFunctionDef, params: set[str]) -> dict:
    """Each local an assignment or a loop gives a value, with the parameters that value reads,
    directly or through other locals (`threads = cluster_n * 32` -> `cluster_n`; `for part in
    content` -> `content`)."""
    reads: dict[str, set[str]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            targets, value = [node.target], node.iter  # an item of what it walks
        else:
            continue
        names = value_names(value)
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and name.id not in params:
                    reads.setdefault(name.id, set()).update(names)
    found = {local: read & params for local, read in reads.items()}
    for _ in range(len(found)):  # through other locals, until nothing grows
        grew = False
        for local, read in reads.items():
            more = set().union(*(found.get(n, set()) for n in read if n != local))
            if not more <= found[local]:
                found[local] |= more
                grew = True
        if not grew:
            break
    return {local: tuple(sorted(read)) for local, read in found.items() if read}


def _value_alias(
    decorators: list[tuple[str, tuple[str, ...]]], params: list[str]
) -> dict[str, str]:
    """A single-field validator's value parameter reads as the field (`v` -> `targets`)."""
    params = params[1:] if params[:1] in (["cls"], ["self"]) else params
    for name, fields in decorators:
        if name in ("field_validator", "validator") and len(fields) == 1 and params:
            if params[0] != fields[0]:
                return {params[0]: fields[0]}
    return {}


def check_of(
    condition: Condition,
    evidence: list[str],
    values: dict[str, list[str]],
    function: FunctionFacts,
    settings: Sequence[Setting] = (),
) -> Check:
    setting, carrier = settings_of(condition, list(settings))
    flag = primary_flag(setting) or _flag_of(
        condition, evidence, function.owner, dict(function.aliases)
    )
    suggested = values.get(flag, []) if flag else []
    wanted, offending = (
        flag_change_values(condition, suggested) if flag or setting else (None, None)
    )
    if setting is not None:
        wanted, offending = passing_values(condition, setting, wanted, offending)
    if wanted is not None and holds_with(condition, wanted):
        wanted = None  # the value in the failing test is never the fix
    subject = condition.subject
    config_names = {*RECEIVERS, *dict(function.aliases)}
    if subject is not None:
        settable = (dotted_parts(subject) or [""])[0] in config_names
    else:  # `len(self.items) == 0`, `v & (v - 1)`: settable when it reads only the config
        names = value_names(condition.node)
        settable = bool(names) and names <= config_names
    names = dotted_parts(subject) if subject is not None else None
    on_off = bool(names) and is_bool_name(names[-1])  # type: ignore[index]
    if flag is not None and f"--no-{flag[2:]}" in evidence:
        on_off = True
    if setting is not None:
        settable, on_off = True, on_off or is_bool(setting)
    reads = tuple(
        (s, None if s.flags else carrier_of(s, list(settings)))
        for s in read_settings(condition, list(settings))
    )
    return Check(
        condition,
        flag,
        wanted,
        offending,
        settable=settable,
        on_off=on_off,
        setting=setting,
        carrier=carrier,
        reads=reads,
    )


def value_names(node: ast.AST | None) -> set[str]:
    """The names whose values an expression reads (not the functions it calls)."""
    if node is None:
        return set()
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called}


def _flag_of(
    condition: Condition, evidence: list[str], owner: str | None, aliases: dict[str, str]
) -> str | None:
    """The flag whose snake_case name is the condition's subject (`mamba_config.backend` ->
    `--mamba-backend`; `self.backend` of a MambaConfig -> `--mamba-backend` too), if that
    flag occurs in the message or the function's strings."""
    subject = condition.subject
    names = dotted_parts(subject) if subject is not None else None
    if not names:
        return None
    names = [aliases.get(names[0], names[0]), *names[1:]]
    on_self = names[0] in RECEIVERS
    if on_self:
        names = names[1:]
    if not names:
        return None
    candidates = [names[-1]]
    if on_self and len(names) == 1 and owner:
        stem = re.sub(r"_?config$", "", snake_name(owner))
        candidates += [f"{stem}_{names[-1]}"] if stem else []
    if len(names) >= 2:
        stem = re.sub(r"_?config$", "", names[-2])
        candidates += [f"{stem}_{names[-1]}"] if stem else []
        candidates.append(f"{names[-2]}_{names[-1]}")
    for name in candidates:
        if flag_for(name) in evidence:
            return flag_for(name)
    return None


def snake_name(name: str) -> str:
    """`KVTransferConfig` -> `kv_transfer_config`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def constant(node: ast.expr) -> object:
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool | type(None)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):  # `-1`
        inner = constant(node.operand)
        return -inner if isinstance(inner, int | float) else None
    return None


def _constants(node: ast.expr) -> list[object] | None:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = [constant(e) for e in node.elts]
        if items and all(i is not None for i in items):
            return items
    return None


def flag_change_values(condition: Condition, suggested: list[str]) -> tuple[str | None, str | None]:
    """(a value that makes the condition false, a value that makes it true), as the flag
    would be written; from the condition's constants and the values the message names."""
    switch = condition.switch
    if switch is not None:
        return None, None
    if condition.bounds is not None:
        return inside(condition.bounds), None
    compare = condition.compare
    if compare is None:
        return None, None
    _, op, right = compare
    const = constant(right)
    member = (dotted_parts(right) or [""])[-1].lower()

    def matches(value: str) -> bool:
        return value == str(const) or (bool(member) and value.lower() == member)

    if op is ops.NE:
        wanted = str(const) if const is not None else next(filter(matches, suggested), None)
        return wanted, None
    if op is ops.EQ:
        wanted = next((s for s in suggested if not matches(s)), None)
        return wanted, (str(const) if const is not None else None)
    if isinstance(const, int | float) and op.boundary is not None:  # past the boundary
        holds_at, fails_at = op.boundary
        return str(const + fails_at), str(const + holds_at)
    items = _constants(right)
    if items is not None:
        texts = [str(i) for i in items]
        if op is ops.NOT_IN:
            typable = [t for t in texts if proposable(t)]
            return next((s for s in suggested if s in typable), next(iter(typable), None)), None
        if op is ops.IN:
            return next((s for s in suggested if s not in texts), None), texts[0]
    return None, None


def inside(bounds: tuple[ast.expr, float, bool, float, bool]) -> str | None:
    """A value inside a range test's bounds (`0 < port < 65536` -> 1, `0.0 < p <= 1.0` ->
    1.0): the high bound when it is included, else the low one when it is, else the next
    integer above the low bound when both bounds are integers, else their middle."""
    _, low, low_in, high, high_in = bounds
    if high_in:
        value: float = high
    elif low_in:
        value = low
    elif isinstance(low, int) and isinstance(high, int):
        value = low + 1
    else:
        value = (low + high) / 2
    passes = (low <= value if low_in else low < value) and (
        value <= high if high_in else value < high
    )
    return str(value) if passes else None


def ordered_unique(items) -> list:
    return list(dict.fromkeys(items))


def fragments(pattern: str) -> tuple[str, ...]:
    """The literal pieces of a message between the holes of its pattern; none for a pattern
    that vmine did not write."""
    return pattern_fragments(pattern) or ()


def holes(site: Site) -> list[str]:
    """The `{expr}` parts of the message, in order."""
    found = holes_in_message(site.errorMessage, site.messagePattern)
    return [h for h in found if h] if found else []


def longest_fragment(pattern: str) -> str | None:
    """The longest literal piece of the message (cut at a word if long), to match on."""
    parts = fragments(pattern)
    pieces = []
    # punctuation beside a run-time value goes (`'{x}'` would leave a stray quote); the
    # message's own first and last characters stay (`'role' must be` keeps its quotes)
    for i, part in enumerate(parts):
        if i > 0:
            part = part.lstrip(_AFTER_HOLE)
        if i < len(parts) - 1:
            part = part.rstrip(_BEFORE_HOLE)
        pieces.append(part.strip())
    pieces = sorted(pieces, key=len, reverse=True)
    piece = pieces[0] if pieces else ""
    if not piece:
        return None
    if len(piece) > _MAX_FRAGMENT:
        cut = piece[:_MAX_FRAGMENT]
        piece = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return piece.splitlines()[0] if "\n" in piece else piece


def py_literal(text: str) -> str:
    """A double-quoted Python string literal (JSON's escapes are Python's)."""
    return json.dumps(text, ensure_ascii=False)


def shell_word(value: str) -> str:
    if _SHELL_SAFE.fullmatch(value) or value == OTHER_VALUE:
        return value
    return shlex.quote(value)


def subject_text(check: Check) -> str:
    subject = check.condition.subject
    return check.condition.show(subject) if subject is not None else check.condition.text


def flag_rename(checks: list[Check]) -> dict[str, str]:
    rename: dict[str, str] = {}
    for check in checks:
        if check.flag is not None:
            rename[subject_text(check)] = check.flag
            compare = check.condition.compare
            if compare is not None and check.wanted is not None and compare[1] is ops.NE:
                rename[check.condition.show(compare[2])] = shell_word(check.wanted)
            elif compare is not None and isinstance(constant(compare[2]), str | int):
                rename[check.condition.show(compare[2])] = shell_word(str(constant(compare[2])))
    return rename


def is_type_test(check: Check) -> bool:
    """`isinstance(x, T)` as it is, not negated."""
    return is_isinstance(check.condition.node)


def _without_ctx(node: ast.AST) -> str:
    """ast.dump with Load/Store contexts alike (a guard loads what a `for` stores)."""
    return re.sub(r"ctx=\w+\(\)", "", ast.dump(node))


def is_loop_header(check: Check, function: FunctionFacts) -> bool:
    """`(idx, part) in enumerate(content)`: the function's own `for` header, no fix."""
    node = check.condition.node
    return isinstance(node, ast.Compare) and _without_ctx(node) in function.loops


def through_loops(checks: list[Check], function: FunctionFacts) -> list[Check]:
    """A test of a loop's item reads the settings the loop walks (`kind not in KINDS` under
    `for kind in self.per_kind_limits`), through nested loops too; the check gets them with
    its loop, when it reads no setting of its own."""
    walked: dict[str, tuple[tuple[tuple[Setting, Setting | None], ...], str]] = {}
    found = []
    for check in checks:
        node = check.condition.node
        if is_loop_header(check, function) and isinstance(node, ast.Compare):
            target, iterable = node.left, node.comparators[0]
            chain = _walked_chain(iterable)
            reads = tuple(r for r in check.reads if r[0].expr == chain)
            if not reads and chain in walked:
                reads = walked[chain][0]
            if reads:
                header = check.condition.text
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        walked[name.id] = (reads, header)
        elif not (check.reads or check.setting or check.flag):
            via = [walked[n] for n in sorted(value_names(node)) if n in walked]
            if via:
                check = replace(check, reads=via[0][0], loop=via[0][1])
        found.append(check)
    return found


def through_computed(
    checks: list[Check], function: FunctionFacts, settings: Sequence[Setting]
) -> list[Check]:
    """A test of a value the function computes from a parameter that is a setting
    (`needed > available` after `needed = estimate(max_model_len)`, where the site's settings
    say `max_model_len` is `--max-model-len`) reads that setting: the check gets it, when it
    reads no setting of its own."""
    computed = dict(function.computed)
    # every setting a parameter may be (its callers pass different ones: alternatives)
    usable = [s for s in settings if s.surface != "internal" and "." not in s.expr]
    found = []
    for check in checks:
        if not (check.reads or check.setting or check.flag or check.loop):
            # a loop's item (an index of `range(n)`) is no value of the setting
            names = (value_names(check.condition.node) & set(computed)) - function.iterated
            params = dict.fromkeys(p for name in sorted(names) for p in computed[name])
            reads = tuple(
                (s, None if s.flags else carrier_of(s, list(settings)))
                for p in params
                for s in usable
                if s.expr == p
            )
            if reads:
                check = replace(check, reads=reads)
        found.append(check)
    return found


# what walks a collection's own items (not `range(n)`, whose items are indices)
_ITEM_VIEWS = frozenset({"items", "values", "keys"})
_ITEM_WRAPPERS = frozenset({"enumerate", "sorted", "reversed", "list", "tuple", "set"})


def _walked_chain(node: ast.expr) -> str | None:
    """The chain a `for` walks the items of: `self.limits` of `self.limits.items()`,
    `enumerate(cfg.layers)`; None for anything else."""
    while isinstance(node, ast.Call) and len(node.args) <= 1:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _ITEM_VIEWS and not node.args:
            node = func.value
        elif isinstance(func, ast.Name) and func.id in _ITEM_WRAPPERS and node.args:
            node = node.args[0]
        else:
            return None
    names = dotted_parts(node)
    return ".".join(names) if names else None


def is_temporary(check: Check, function: FunctionFacts) -> bool:
    """A test of the function's own temporaries only (locals it computes, no parameter, no
    setting): nothing a user passes, so no fix to name."""
    if check.settable or check.flag is not None or check.setting is not None or check.reads:
        return False
    names = value_names(check.condition.node)
    locals_ = function.variables - function.params
    return bool(names) and names <= locals_


def is_precondition(check: Check, checks: list[Check]) -> bool:
    """`x is not None` in front of a test of `x.attr`, or `isinstance(x, T)` in front of any
    later test: only there to make that test safe (changing x's type is no fix)."""
    if is_type_test(check) and check is not checks[-1]:
        return True
    compare = check.condition.compare
    if compare is None or compare[1] is not ops.IS_NOT:
        return False
    if check.condition.show(compare[2]) != "None":
        return False
    prefix = subject_text(check) + "."
    return any(prefix in other.condition.text for other in checks if other is not check)


def article(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
