"""What a name means in a file of the tree, and what a class has.

A (dotted) name is looked up in its file: a class, a Literal alias, a constant list or an
Enum defined there, else through the file's imports (re-exports followed, `from pkg import
module` included), else a class that only one file of the tree defines. A class's members
are its fields, properties and `__init__` attributes, its bases searched in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from extractors.settings_model import (
    ConfigClass,
    ConfigField,
    Derived,
    FileSettings,
    Import,
    Outline,
    Property,
    TypeRef,
)
from pipeline.mine.settings.loaded import Loaded
from pipeline.mine.settings.modules import ModuleIndex

MAX_HOPS = 12  # imports followed for one name (re-exports chain)
MAX_DEPTH = 6  # classes walked for one chain, bases included


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
    derived: Derived | None = None  # `self.model_config = vllm_config.model_config`


class TreeNames:
    """Names and classes over the facts of one round. `lookups` holds the answers that
    loading more cannot change, shared by every round; `class_files` is each class name's
    files (from the outlines)."""

    def __init__(
        self,
        loaded: Loaded,
        outlines: Mapping[str, Outline],
        modules: ModuleIndex,
        lookups: dict[tuple[str, str], Symbol | None],
        class_files: Mapping[str, list[str]],
    ) -> None:
        self.loaded = loaded
        self.outlines = outlines
        self.modules = modules
        self._lookups = lookups
        self._class_files = class_files
        self._ancestors: dict[tuple[str, str], set[tuple[str, str]]] = {}
        self._subclasses: dict[tuple[str, str], list[ClassSymbol]] = {}
        # (path, id of the class's facts) -> (those facts, its own members by name)
        self._own: dict[tuple[str, int], tuple[ConfigClass, dict[str, Member]]] = {}

    # -- names ------------------------------------------------------------------------------

    def lookup(self, path: str, name: str, hops: int = 0) -> Symbol | None:
        """What a (dotted) name means in a file: a class, values, a module; None when it is
        external, unknown, or its file is not loaded yet."""
        key = (path, name)
        if key in self._lookups:
            return self._lookups[key]
        misses = self.loaded.misses
        found = self._lookup(path, name, hops)
        if self.loaded.misses == misses:  # an answer that loading more cannot change
            self._lookups[key] = found
        return found

    def _lookup(self, path: str, name: str, hops: int) -> Symbol | None:
        if hops > MAX_HOPS:
            return None
        facts = self.loaded.get(path)
        if facts is None:
            return None
        local = _local(path, facts, name)
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

    def _through_import(self, path: str, imp: Import, rest: str, hops: int) -> Symbol | None:
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
        facts = self.loaded.get(paths[0])
        if facts is None:
            return None
        found = [c for c in facts.classes if c.name == last]
        return ClassSymbol(paths[0], found[0]) if len(found) == 1 else None

    # -- classes ----------------------------------------------------------------------------

    def member(self, cls: ClassSymbol, attr: str, depth: int = 0) -> Member | None:
        """The field, property or attribute `attr` of a class, its bases searched in order."""
        if depth > MAX_DEPTH:
            return None
        own = self._own_members(cls).get(attr)
        if own is not None:
            return own
        for base in cls.facts.bases:
            found = self.lookup(cls.path, base)
            if isinstance(found, ClassSymbol) and found.key != cls.key:
                member = self.member(found, attr, depth + 1)
                if member is not None:
                    return member
        return None

    def _own_members(self, cls: ClassSymbol) -> dict[str, Member]:
        """A class's own members by name, as `member` looks for them: its last field of a
        name, else its first property, else its `__init__` attribute (tabled once: a config
        class has a hundred fields and is asked for thousands of times)."""
        key = (cls.path, id(cls.facts))
        known = self._own.get(key)
        if known is not None and known[0] is cls.facts:
            return known[1]
        facts = cls.facts
        members = {name: Member(cls, derived=d) for name, d in facts.derived.items()}
        members.update((name, Member(cls, attribute=ref)) for name, ref in facts.attributes.items())
        members.update(
            (prop.name, Member(cls, property=prop)) for prop in reversed(facts.properties)
        )
        members.update((item.name, Member(cls, field=item)) for item in facts.fields)
        self._own[key] = (facts, members)
        return members

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

    def ancestors(self, cls: ClassSymbol, depth: int = 0) -> set[tuple[str, str]]:
        """The keys of a class's bases, transitively (those the tree holds)."""
        if cls.key in self._ancestors:
            return self._ancestors[cls.key]
        found: set[tuple[str, str]] = set()
        if depth <= MAX_DEPTH:
            for base in cls.facts.bases:
                symbol = self.lookup(cls.path, base)
                if isinstance(symbol, ClassSymbol) and symbol.key != cls.key:
                    found.add(symbol.key)
                    found |= self.ancestors(symbol, depth + 1)
        self._ancestors[cls.key] = found
        return found

    def subclasses(self, family: ClassSymbol) -> list[ClassSymbol]:
        """The family's class and the loaded classes that derive from it: only a class
        naming one of them as a base is looked at (names first, then a lookup)."""
        if family.key in self._subclasses:
            return self._subclasses[family.key]
        found = {family.key: family}
        grew = True
        while grew:
            grew = False
            names = {c.facts.name for c in found.values()}
            for path in self.outlines:
                facts = self.loaded.peek(path)
                for cls in facts.classes if facts is not None else ():
                    symbol = ClassSymbol(path, cls)
                    if symbol.key in found or not any(
                        base.rsplit(".", 1)[-1] in names for base in cls.bases
                    ):
                        continue
                    if any(key in found for key in self.ancestors(symbol)):
                        found[symbol.key] = symbol
                        grew = True
        self._subclasses[family.key] = list(found.values())
        return self._subclasses[family.key]


def _local(path: str, facts: FileSettings, name: str) -> Symbol | None:
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


def _import_for(facts: FileSettings, name: str) -> tuple[Import, str] | None:
    """The import that binds a dotted name's head, and the rest of the name after it."""
    for imp in reversed(facts.imports):
        if name == imp.name:
            return imp, ""
        if name.startswith(imp.name + "."):
            return imp, name[len(imp.name) + 1 :]
    return None
