"""The settings model of a tree, joined from per-file facts, and each site's settings.

A site's guards and message read attribute chains (`self.cache_config.mamba_cache_mode`);
each is resolved through the annotations of the config classes: the receiver is the
enclosing class, a parameter annotated with a class or a parsed `argparse.Namespace` counts,
a local `cfg = self.x` (assigned once) is replaced by what it holds, `X | None` and
`Optional[X]` unwrap, a property that returns a chain of `self` is followed once. Class names
are matched across the tree by import (through re-exports), falling back to a class name
that only one file defines. The last attribute must be a field a user passes; its flags are
the `add_argument` calls that set it. What cannot be resolved is left out.

The join is pure: it reads facts through `facts(path)`, and every path it needed but did not
have lands in `missing`, for the caller to load before the next round (`resolve_rounds`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from extractors.facts import RaiseSite
from extractors.references import function_scope, references
from extractors.settings_model import (
    ConfigClass,
    ConfigField,
    FileSettings,
    Flag,
    FunctionScope,
    Outline,
    Property,
    Reference,
    TypeRef,
    first_sentence,
)
from pipeline.dataset.models import Setting

_MAX_HOPS = 12  # imports followed for one name (re-exports chain)
_MAX_DEPTH = 6  # classes walked for one chain, bases included
_MAX_ROUNDS = 16  # rounds of loading what the join asked for
_NAMESPACE = frozenset({"argparse.Namespace", "Namespace"})
# names of types that are no config class (a field of one carries no config)
_PLAIN_TYPES = frozenset(
    "? str int float bool bytes complex list dict tuple set frozenset object Any "
    "typing.Any Callable Sequence Mapping Iterable".split()
)


# --- modules ---------------------------------------------------------------------------------


class ModuleIndex:
    """Dotted module names of a tree's `.py` files: by their whole path, and from their
    source root (the directories above the topmost `__init__.py` taken off, so that
    `python/sglang/srt/x.py` is `sglang.srt.x`, as imports name it)."""

    def __init__(self, paths: Iterable[str]) -> None:
        python = sorted(p for p in paths if p.endswith(".py"))
        packages = {p.rsplit("/", 1)[0] for p in python if p.endswith("/__init__.py")}
        self._modules: dict[str, str] = {}
        rooted: dict[str, str] = {}
        for path in python:
            parts = path[:-3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts:
                continue
            self._modules.setdefault(".".join(parts), path)
            directories = path.split("/")[:-1]
            root = len(directories)
            while root > 0 and "/".join(directories[:root]) in packages:
                root -= 1
            top = parts[root] if root < len(parts) else ""
            if root and top not in sys.stdlib_module_names:
                rooted.setdefault(".".join(parts[root:]), path)
        for module, path in rooted.items():
            self._modules.setdefault(module, path)

    def path_of(self, module: str) -> str | None:
        """The file of a module, or None when the tree does not hold it."""
        return self._modules.get(module) if module else None

    @staticmethod
    def package_of(path: str) -> list[str]:
        """The package parts a relative import in this file starts from."""
        parts = path[:-3].split("/")
        return parts[:-1]

    def absolute(self, module: str, level: int, path: str) -> str:
        """`from ..x import y` in `a/b/c.py` -> `a.x` (a relative module made absolute)."""
        if level == 0:
            return module
        package = self.package_of(path)
        if level > 1:
            package = package[: len(package) - (level - 1)]
        return ".".join([*package, *([module] if module else [])])


# --- symbols ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassSymbol:
    path: str
    facts: ConfigClass

    @property
    def key(self) -> tuple[str, str]:
        return self.path, self.facts.qualname


@dataclass(frozen=True)
class ValuesSymbol:
    """A Literal alias, a constant list or an Enum's members: the values a setting accepts."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class ModuleSymbol:
    path: str


Symbol = ClassSymbol | ValuesSymbol | ModuleSymbol


@dataclass(frozen=True)
class Member:
    """What an attribute of a class is: a field, a property or an `__init__` attribute."""

    owner: ClassSymbol
    field: ConfigField | None = None
    property: Property | None = None
    attribute: TypeRef | None = None


# --- the join --------------------------------------------------------------------------------


@dataclass
class TreeSettings:
    """One round of the join over the facts loaded so far."""

    facts_of: Callable[[str], FileSettings | None]  # None: not loaded (yet)
    outlines: Mapping[str, Outline]  # path -> outline, for every .py file of the tree
    modules: ModuleIndex
    missing: set[str] = field(default_factory=set)
    _flags: dict[tuple[str, str, str], list[tuple[str, Flag]]] | None = None
    _families: list[tuple[str, Flag, ClassSymbol]] = field(default_factory=list)
    _ancestors: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict)
    _subclass_memo: dict[tuple[str, str], list[ClassSymbol]] = field(default_factory=dict)
    _dests: dict[str, list[tuple[str, Flag]]] | None = None
    _class_files: dict[str, list[str]] = field(default_factory=dict)  # class -> its files
    _carriers: dict[tuple[str, str], list[tuple[ClassSymbol, ConfigField]]] | None = None
    _lookups: dict[tuple[str, str], Symbol | None] = field(default_factory=dict)
    _misses: int = 0  # facts asked for and not loaded, so far

    def facts(self, path: str) -> FileSettings | None:
        found = self.facts_of(path)
        if found is None:
            self.missing.add(path)
            self._misses += 1
        return found

    # -- names ------------------------------------------------------------------------------

    def lookup(self, path: str, name: str, hops: int = 0) -> Symbol | None:
        """What a (dotted) name means in a file: a class, values, a module; None when it is
        external, unknown, or its file is not loaded yet."""
        key = (path, name)
        if key in self._lookups:
            return self._lookups[key]
        misses = self._misses
        found = self._lookup(path, name, hops)
        if self._misses == misses:  # an answer that loading more cannot change
            self._lookups[key] = found
        return found

    def _lookup(self, path: str, name: str, hops: int) -> Symbol | None:
        if hops > _MAX_HOPS:
            return None
        facts = self.facts(path)
        if facts is None:
            return None
        local = self._local(path, facts, name)
        if local is not None:
            return local
        imported = _import_for(facts, name)
        if imported is not None:
            imp, rest = imported
            return self._through_import(path, imp, rest, hops)
        head = name.split(".", 1)[0]
        if any(c.qualname.split(".", 1)[0] == head for c in facts.classes):
            return None  # a local class without that member
        return self._unique_class(name)

    def _local(self, path: str, facts: FileSettings, name: str) -> Symbol | None:
        for cls in facts.classes:
            if cls.qualname == name:
                if cls.kind == "enum" and cls.members:
                    return ValuesSymbol(tuple(cls.members))
                return ClassSymbol(path, cls)
        if name in facts.aliases:
            return ValuesSymbol(tuple(facts.aliases[name]))
        if name in facts.constants:
            return ValuesSymbol(tuple(facts.constants[name]))
        return None

    def _through_import(self, path: str, imp, rest: str, hops: int) -> Symbol | None:
        module = self.modules.absolute(imp.module, imp.level, path)
        if imp.attr is None:  # `import a.b` then `a.b.X`
            target = self.modules.path_of(module)
            return self.lookup(target, rest, hops + 1) if target and rest else None
        target = self.modules.path_of(module)
        if target is not None:
            found = self.lookup(target, imp.attr + (f".{rest}" if rest else ""), hops + 1)
            if found is not None:
                return found
        submodule = self.modules.path_of(f"{module}.{imp.attr}" if module else imp.attr)
        if submodule is not None:  # `from pkg import module`
            return self.lookup(submodule, rest, hops + 1) if rest else ModuleSymbol(submodule)
        return None

    def _unique_class(self, name: str) -> ClassSymbol | None:
        """A class only one file of the tree defines (the fallback of an unimported name)."""
        last = name.rsplit(".", 1)[-1]
        paths = self._class_files.get(last, [])
        if len(paths) != 1 or "." in name:
            return None
        facts = self.facts(paths[0])
        if facts is None:
            return None
        found = [c for c in facts.classes if c.name == last]
        return ClassSymbol(paths[0], found[0]) if len(found) == 1 else None

    # -- classes ----------------------------------------------------------------------------

    def member(self, cls: ClassSymbol, attr: str, depth: int = 0) -> Member | None:
        """The field, property or attribute `attr` of a class, its bases searched in order."""
        if depth > _MAX_DEPTH:
            return None
        for item in reversed(cls.facts.fields):
            if item.name == attr:
                return Member(cls, field=item)
        for prop in cls.facts.properties:
            if prop.name == attr:
                return Member(cls, property=prop)
        if attr in cls.facts.attributes:
            return Member(cls, attribute=cls.facts.attributes[attr])
        for base in cls.facts.bases:
            found = self.lookup(cls.path, base)
            if isinstance(found, ClassSymbol) and found.key != cls.key:
                member = self.member(found, attr, depth + 1)
                if member is not None:
                    return member
        return None

    def class_of(self, path: str, ref: TypeRef) -> ClassSymbol | None:
        """The one config class among an annotation's members (`CacheConfig | None`)."""
        found = {
            symbol.key: symbol
            for name in ref.names
            if name != "?" and isinstance(symbol := self.lookup(path, name), ClassSymbol)
        }
        return next(iter(found.values())) if len(found) == 1 else None

    def values_of(self, path: str, ref: TypeRef) -> list[str] | None:
        """Every value an annotation accepts, when it lists them all: its Literal, or the one
        alias or Enum it names."""
        if ref.literals and not ref.names:
            return list(ref.literals)
        if not ref.literals and len(ref.names) == 1:
            found = self.lookup(path, ref.names[0])
            if isinstance(found, ValuesSymbol):
                return list(found.values)
        return None

    def default_of(self, cls: ClassSymbol, item: ConfigField) -> str | None:
        """A field's default; `ModelConfig.model` (a default taken from another class's
        field, vLLM's EngineArgs) is that field's own default."""
        default = item.default
        if default and "." in default and default.replace(".", "").replace("_", "").isalnum():
            owner, attr = default.rsplit(".", 1)
            found = self.lookup(cls.path, owner)
            if isinstance(found, ClassSymbol):
                member = self.member(found, attr)
                if member is not None and member.field is not None:
                    return member.field.default
        return default

    # -- flags ------------------------------------------------------------------------------

    def _index_flags(self) -> None:
        """The flags of every parser loaded so far, by the field they set and by dest (a
        parser not loaded is asked for only by a lookup that needs every one)."""
        self._flags, self._dests, self._families = {}, {}, []
        for path in sorted(p for p, outline in self.outlines.items() if outline.parser):
            facts = self.facts_of(path)
            if facts is None:
                continue
            for flag in facts.flags:
                if flag.eachField is not None:
                    family = self.lookup(path, flag.sets.cls) if flag.sets else None
                    if isinstance(family, ClassSymbol):
                        self._families.append((path, flag, family))
                    continue
                self._dests.setdefault(flag.dest, []).append((path, flag))
                for key in self._flag_fields(path, flag):
                    self._flags.setdefault(key, []).append((path, flag))

    def _flag_fields(self, path: str, flag: Flag) -> list[tuple[str, str, str]]:
        """The fields a flag sets: the one its idiom names, and the parser's args class's
        field named `dest` (the parsed value lands there, argparse-style)."""
        return list(
            dict.fromkeys(
                (*member.owner.key, attr) for attr, member in self._flag_members(path, flag)
            )
        )

    def _flag_members(self, path: str, flag: Flag) -> Iterator[tuple[str, Member]]:
        """Each field a flag of the file at `path` sets, found: (its name, the member)."""
        for cls_name, attr in _flag_targets(flag):
            cls = self.lookup(path, cls_name)
            if isinstance(cls, ClassSymbol):
                member = self.member(cls, attr)
                if member is not None and member.field is not None:
                    yield attr, member

    def flags_for(self, cls: ClassSymbol, name: str) -> list[tuple[str, Flag]]:
        """The flags that set field `name` declared by `cls`: those linked to it, and those
        a loop adds for every field of one of its classes (vLLM's frontend arguments)."""
        if self._flags is None:
            self._index_flags()
        found = list(self._flags.get((*cls.key, name), []))  # type: ignore[union-attr]
        for path, flag, family in self._families:
            if family.key == cls.key or family.key in self.ancestors(cls):
                found.append((path, _field_flag(flag, name)))
        return found

    def ancestors(self, cls: ClassSymbol, depth: int = 0) -> set[tuple[str, str]]:
        """The keys of a class's bases, transitively (those the tree holds)."""
        if cls.key in self._ancestors:
            return self._ancestors[cls.key]
        found: set[tuple[str, str]] = set()
        if depth <= _MAX_DEPTH:
            for base in cls.facts.bases:
                symbol = self.lookup(cls.path, base)
                if isinstance(symbol, ClassSymbol) and symbol.key != cls.key:
                    found.add(symbol.key)
                    found |= self.ancestors(symbol, depth + 1)
        self._ancestors[cls.key] = found
        return found

    def _subclasses(self, family: ClassSymbol) -> list[ClassSymbol]:
        """The family's class and the loaded classes that derive from it: only a class
        naming one of them as a base is looked at (names first, then a lookup)."""
        if family.key in self._subclass_memo:
            return self._subclass_memo[family.key]
        found = {family.key: family}
        grew = True
        while grew:
            grew = False
            names = {c.facts.name for c in found.values()}
            for path in self.outlines:
                facts = self.facts_of(path)  # None: not loaded
                for cls in facts.classes if facts is not None else ():
                    symbol = ClassSymbol(path, cls)
                    if symbol.key in found or not any(
                        base.rsplit(".", 1)[-1] in names for base in cls.bases
                    ):
                        continue
                    if any(key in found for key in self.ancestors(symbol)):
                        found[symbol.key] = symbol
                        grew = True
        self._subclass_memo[family.key] = list(found.values())
        return self._subclass_memo[family.key]

    def _family_fields(self, dest: str) -> list[tuple[ClassSymbol, ConfigField, str, Flag]]:
        """The fields named `dest` of the classes a family loop flags."""
        found = []
        for path, flag, family in self._families:
            for symbol in self._subclasses(family):
                member = self.member(symbol, dest)
                if member is not None and member.field is not None:
                    found.append((member.owner, member.field, path, flag))
        return found

    def flags_by_dest(
        self, dest: str, path: str, same_file: bool = False
    ) -> list[tuple[str, Flag]]:
        """The flags a parsed Namespace's `dest` comes from: those of the site's own file,
        else (unless `same_file`) those of the parsers loaded (the sites' files and the
        parsers whose flags name their fields) if they all agree on their options, else
        those of every parser of the tree if they agree."""
        if self._dests is None:
            self._index_flags()
        found = self._dests.get(dest, [])  # type: ignore[union-attr]
        here = [item for item in found if item[0] == path]
        if here or same_file:
            return here
        if not found and not self._family_fields(dest):
            # no parser read so far defines it: every parser must be known
            for parser in (p for p, outline in self.outlines.items() if outline.parser):
                self.facts(parser)
        if found and all(f.options == found[0][1].options for _, f in found):
            return found
        return []

    def flag_choices(self, path: str, flag: Flag) -> list[str] | None:
        if flag.choices is not None:
            return list(flag.choices)
        if flag.choicesFrom is not None:
            found = self.lookup(path, flag.choicesFrom)
            if isinstance(found, ValuesSymbol):
                return list(found.values)
        return None

    # -- settings ---------------------------------------------------------------------------

    def setting(self, expr: str, cls: ClassSymbol, item: ConfigField) -> Setting:
        flags = self.flags_for(cls, item.name)
        choices = next(
            (c for path, flag in flags if (c := self.flag_choices(path, flag)) is not None),
            None,
        )
        if choices is None:
            choices = self.values_of(cls.path, item.type)
        helps = (first_sentence(flag.help) for _, flag in flags if flag.help)
        return Setting(
            expr=expr,
            cls=cls.facts.name,
            field=item.name,
            type=item.annotation,
            default=self.default_of(cls, item),
            choices=choices,
            doc=item.doc or next(helps, None),
            flags=_options(flags),
        )

    def walk(
        self,
        cls: ClassSymbol,
        attrs: list[str],
        expr: str,
        prefix: str,
        depth: int = 0,
        through_property: bool = False,
    ) -> list[Setting]:
        """The settings an attribute chain reaches from a class; `prefix` is the object's
        own chain (`self`, then `self.cache_config`, ...)."""
        if not attrs or depth > _MAX_DEPTH:
            return []
        member = self.member(cls, attrs[0])
        if member is None:
            return []
        if member.property is not None:
            if through_property:
                return []  # one level: a property's chain does not lead to another one
            found: list[Setting] = []
            for chain in member.property.returns:
                _, *inner = chain.split(".")
                found += self.walk(
                    member.owner, [*inner, *attrs[1:]], expr, prefix, depth + 1, True
                )
            return found
        item = member.field
        if len(attrs) == 1:
            if item is None or not item.init or item.name.startswith("_"):
                return []
            found = [self.setting(expr, member.owner, item)]
            carrier = self.carrier(cls)
            if not found[0].flags and carrier is not None:
                found.append(self.setting(prefix, *carrier))  # the flag the object comes by
            return found
        ref = item.type if item is not None else member.attribute
        nested = self.class_of(member.owner.path, ref) if ref is not None else None
        if nested is None:
            return []
        return self.walk(
            nested, attrs[1:], expr, f"{prefix}.{attrs[0]}", depth + 1, through_property
        )

    def carrier(self, cls: ClassSymbol | None) -> tuple[ClassSymbol, ConfigField] | None:
        """The one flagged field whose type is this class, when there is one: the flag a
        whole config is passed through (vLLM's `--speculative-config` for SpeculativeConfig,
        a JSON object of its fields)."""
        if self._carriers is None:
            if self._flags is None:
                self._index_flags()
            self._carriers = {}
            for path, qualname, name in self._flags:  # type: ignore[union-attr]
                facts = self.facts(path)
                owner = (
                    next((c for c in facts.classes if c.qualname == qualname), None)
                    if (facts is not None)
                    else None
                )
                if owner is None:
                    continue
                symbol = ClassSymbol(path, owner)
                member = self.member(symbol, name)
                if member is None or member.field is None:
                    continue
                if all(n in _PLAIN_TYPES for n in member.field.type.names):
                    continue  # an int or a str carries no config
                carried = self.class_of(path, member.field.type)
                if carried is not None:
                    self._carriers.setdefault(carried.key, []).append((symbol, member.field))
        if cls is None:
            return None
        found = sorted(self._carriers.get(cls.key, []), key=lambda c: (*c[0].key, c[1].name))
        # EngineArgs.x and VllmConfig.x both carry a config: one flag sets them both
        options = {tuple(_options(self.flags_for(owner, item.name))) for owner, item in found}
        return found[0] if len(options) == 1 else None

    def namespace_setting(
        self, expr: str, dest: str, path: str, same_file: bool = False
    ) -> list[Setting]:
        """`args.x` of a parsed Namespace: the field its flag sets, else the flag itself."""
        flags = self.flags_by_dest(dest, path, same_file)
        if not flags and not same_file:  # a field of a class whose fields a loop flags
            owners = {(o.key, f.name): (o, f) for o, f, _, _ in self._family_fields(dest)}
            if len(owners) == 1:
                return [self.setting(expr, *next(iter(owners.values())))]
        if not flags:
            return []
        for flag_path, flag in flags:
            for _, member in self._flag_members(flag_path, flag):
                return [self.setting(expr, member.owner, member.field)]
        flag_path, flag = flags[0]
        return [
            Setting(
                expr=expr,
                cls=None,
                field=dest,
                type=flag.type,
                default=flag.default,
                choices=self.flag_choices(flag_path, flag),
                doc=first_sentence(flag.help),
                flags=_options(flags),
            )
        ]

    def resolve_read(self, read: _Read) -> list[Setting]:
        path, scope = read.path, read.scope
        facts = self.facts(path)
        if facts is None:
            return []
        owner, receiver = self._receiver(path, facts, read.qualname, scope)
        found: list[Setting] = []
        for ref in read.references:
            found += self._resolve_ref(ref, ref.expr, path, owner, receiver, scope, 0)
        unique = {(s.expr, s.cls, s.field): s for s in found}
        return list(unique.values())

    def _receiver(
        self, path: str, facts: FileSettings, qualname: str, scope: FunctionScope
    ) -> tuple[ClassSymbol | None, str | None]:
        outer = qualname.split(".<locals>.", 1)[0]
        if "." not in outer:
            return None, None
        owner_name = outer.rsplit(".", 1)[0]
        owner = next((c for c in facts.classes if c.qualname == owner_name), None)
        if owner is None:
            return None, None
        if outer != qualname:  # a closure reads its method's `self`
            return ClassSymbol(path, owner), "self" if "self" not in scope.params else None
        if scope.static or not scope.params:
            return None, None
        return ClassSymbol(path, owner), scope.params[0]

    def _resolve_ref(
        self,
        ref: Reference,
        expr: str,
        path: str,
        owner: ClassSymbol | None,
        receiver: str | None,
        scope: FunctionScope,
        depth: int,
    ) -> list[Setting]:
        if depth > _MAX_DEPTH:
            return []
        if ref.root == receiver and owner is not None:
            return self.walk(owner, list(ref.attrs), expr, ref.root)
        binding = scope.bindings.get(ref.root)
        if binding is None:
            return []
        if binding.chain is not None:
            inner = Reference(root=binding.chain.root, attrs=[*binding.chain.attrs, *ref.attrs])
            return self._resolve_ref(inner, expr, path, owner, receiver, scope, depth + 1)
        if binding.parsed and len(ref.attrs) == 1:
            return self.namespace_setting(expr, ref.attrs[0], path, same_file=True)
        if binding.type is None or not ref.attrs:
            return []
        if any(name in _NAMESPACE for name in binding.type.names):
            return self.namespace_setting(expr, ref.attrs[0], path) if len(ref.attrs) == 1 else []
        cls = self.class_of(path, binding.type)
        return self.walk(cls, list(ref.attrs), expr, ref.root) if cls is not None else []


def _import_for(facts: FileSettings, name: str):
    """The import that binds a dotted name's head, and the rest of the name after it."""
    for imp in reversed(facts.imports):
        if name == imp.name:
            return imp, ""
        if name.startswith(imp.name + "."):
            return imp, name[len(imp.name) + 1 :]
    return None


def _field_flag(flag: Flag, name: str) -> Flag:
    """The flag a family loop adds for one field (`port` -> `--port`)."""
    option = "--" + (name.replace("_", "-") if flag.eachField == "dashed" else name)
    return flag.model_copy(update={"options": [option], "dest": name, "eachField": None})


def _flag_targets(flag: Flag) -> list[tuple[str, str]]:
    targets = []
    if flag.sets is not None:
        targets.append((flag.sets.cls, flag.sets.field))
    if flag.argsClass is not None:
        targets.append((flag.argsClass, flag.dest))
    return targets


def _options(flags: list[tuple[str, Flag]]) -> list[str]:
    return list(dict.fromkeys(option for _, flag in flags for option in flag.options))


@dataclass(frozen=True)
class _Read:
    """What a site reads, worked out once for every round of the join."""

    path: str
    qualname: str
    scope: FunctionScope
    references: tuple[Reference, ...]

    @classmethod
    def of(cls, path: str, site: RaiseSite, facts: FileSettings | None) -> _Read:
        """`facts`: the site file's (None: not loaded), whose scopes spare parsing the function
        again."""
        scope = facts.scopes.get(site.qualname) if facts is not None else None
        return cls(
            path,
            site.qualname,
            scope or function_scope(site.functionSource),
            tuple(references(site.guards, site.errorMessage)),
        )


def resolve_rounds(
    sites: list[tuple[str, RaiseSite]],
    outlines: Mapping[str, Outline],
    modules: ModuleIndex,
    facts_of: Callable[[str], FileSettings | None],
    load: Callable[[set[str]], None],
) -> list[list[Setting]]:
    """Each site's settings (sites given with their file's tree path), loading the facts the
    join asks for between rounds until it asks for nothing new. A round resolves again only
    the sites that asked for something (all of them when the flags did)."""
    reads = [_Read.of(path, site, facts_of(path)) for path, site in sites]
    requested: set[str] = set()
    results: list[list[Setting]] = [[] for _ in sites]
    pending = list(range(len(reads)))
    # what one round found without missing a file holds in the next ones too
    lookups: dict[tuple[str, str], Symbol | None] = {}
    class_files: dict[str, list[str]] = {}
    for path, outline in outlines.items():
        for name in outline.classes:
            class_files.setdefault(name, []).append(path)
    for _ in range(_MAX_ROUNDS):
        tree = TreeSettings(facts_of, outlines, modules, _lookups=lookups, _class_files=class_files)
        tree._index_flags()
        tree.carrier(None)  # build the index now: what it misses concerns every site
        shared, asked, again = set(tree.missing), set(tree.missing), []
        for index in pending:
            tree.missing = set()
            results[index] = tree.resolve_read(reads[index])
            if tree.missing:
                again.append(index)
                asked |= tree.missing
        wanted = {p for p in asked if p in outlines} - requested
        if not wanted:
            break
        requested |= wanted
        load(wanted)
        # a parser loaded changes the flags every site may have
        new_flags = any(outlines[p].parser for p in wanted)
        pending = list(range(len(reads))) if shared & wanted or new_flags else again
    return results
