"""The flags of a tree's parsers, indexed by the field they set and by their dest.

A flag sets a field by its idiom (`**get_kwargs(C)["x"]`, `default=C.x`), or as argparse
does through the parser's args class's field named `dest`; a loop that adds one flag per
field of a class (vLLM's frontend arguments) is a family, which flags the fields of that
class and of its subclasses. A whole config passed as one JSON flag is that flag's carrier.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from extractors.settings_model import ConfigField, Flag, Outline
from pipeline.mine.settings.loaded import Loaded
from pipeline.mine.settings.names import ClassSymbol, TreeNames, ValuesSymbol

# names of types that are no config class (a field of one carries no config)
_PLAIN_TYPES = frozenset(
    "? str int float bool bytes complex list dict tuple set frozenset object Any "
    "typing.Any Callable Sequence Mapping Iterable".split()
)

Located = tuple[str, Flag]  # a flag and the file of its parser


class FlagIndex:
    """The flags of every parser loaded so far (a parser not loaded is asked for only by a
    lookup that needs every one), and the carriers, both built at once: what they miss
    concerns every site."""

    def __init__(self, names: TreeNames, loaded: Loaded, outlines: Mapping[str, Outline]) -> None:
        self.names = names
        self.loaded = loaded
        self.outlines = outlines
        self._by_field: dict[tuple[str, str, str], list[Located]] = {}
        self._by_dest: dict[str, list[Located]] = {}
        self._families: list[tuple[str, Flag, ClassSymbol]] = []
        # flags no idiom links, by dest: lmdeploy's parsers name no class at all
        self._unlinked: dict[str, list[Located]] = {}
        self._parsers = sorted(p for p, outline in outlines.items() if outline.parser)
        for path in self._parsers:
            facts = loaded.peek(path)
            if facts is None:
                continue
            for flag in facts.flags:
                if flag.eachField is not None:
                    family = names.lookup(path, flag.sets.cls) if flag.sets else None
                    if isinstance(family, ClassSymbol):
                        self._families.append((path, flag, family))
                    continue
                self._by_dest.setdefault(flag.dest, []).append((path, flag))
                linked = self._flag_fields(path, flag)
                for key in linked:
                    self._by_field.setdefault(key, []).append((path, flag))
                if not linked and "_" in flag.dest:
                    self._unlinked.setdefault(flag.dest, []).append((path, flag))
        # the unlinked flags by what their dest says after its first word (`_by_name`)
        self._unlinked_after: dict[str, list[Located]] = {}
        for dest, items in self._unlinked.items():
            self._unlinked_after.setdefault(dest.split("_", 1)[1], []).extend(items)
        self._carriers = self._index_carriers()
        # the tree's parser reads `--config.key value` for its JSON-config flags
        self.dotted = any(outline.dotted for outline in outlines.values())

    def _flag_fields(self, path: str, flag: Flag) -> list[tuple[str, str, str]]:
        """The fields a flag sets: the one its idiom names, and the parser's args class's
        field named `dest` (the parsed value lands there, argparse-style)."""
        return list(
            dict.fromkeys((*owner.key, item.name) for owner, item in self.fields(path, flag))
        )

    def fields(self, path: str, flag: Flag) -> Iterator[tuple[ClassSymbol, ConfigField]]:
        """Each field a flag of the file at `path` sets, found: (the class declaring it, the
        field)."""
        for cls_name, attr in _flag_targets(flag):
            cls = self.names.lookup(path, cls_name)
            if isinstance(cls, ClassSymbol):
                member = self.names.member(cls, attr)
                if member is not None and member.field is not None:
                    yield member.owner, member.field

    def flags_for(self, cls: ClassSymbol, name: str) -> list[Located]:
        """The flags that set field `name` declared by `cls`: those linked to it, and those
        a loop adds for every field of one of its classes (vLLM's frontend arguments)."""
        found = list(self._by_field.get((*cls.key, name), []))
        for path, flag, family in self._families:
            if family.key == cls.key or family.key in self.names.ancestors(cls):
                found.append((path, _field_flag(flag, name)))
        return found or self._by_name(name)

    def _by_name(self, name: str) -> list[Located]:
        """The one unlinked flag a field's name leads to: its dest is the name (two words at
        least: `quant_policy`), or the name after one word (`--speculative-dflash-block-size`
        sets `dflash_block_size`). None when several disagree."""
        found = list(self._unlinked.get(name, []))
        if not found and "_" in name:
            found = list(self._unlinked_after.get(name, []))
        if found and all(f.options == found[0][1].options for _, f in found):
            return found
        return []

    def family_fields(self, dest: str) -> list[tuple[ClassSymbol, ConfigField, str, Flag]]:
        """The fields named `dest` of the classes a family loop flags."""
        found = []
        for path, flag, family in self._families:
            for symbol in self.names.subclasses(family):
                member = self.names.member(symbol, dest)
                if member is not None and member.field is not None:
                    found.append((member.owner, member.field, path, flag))
        return found

    def by_dest(self, dest: str) -> list[Located]:
        """The flags of the parsers loaded so far whose dest is `dest` (nothing more loaded)."""
        return list(self._by_dest.get(dest, []))

    def flags_by_dest(self, dest: str, path: str, same_file: bool = False) -> list[Located]:
        """The flags a parsed Namespace's `dest` comes from: those of the site's own file,
        else (unless `same_file`) those of the parsers loaded (the sites' files and the
        parsers whose flags name their fields) if they all agree on their options, else
        those of every parser of the tree if they agree."""
        found = self._by_dest.get(dest, [])
        here = [item for item in found if item[0] == path]
        if here or same_file:
            return here
        if not found and not self.family_fields(dest):
            # no parser read so far defines it: every parser must be known
            for parser in self._parsers:
                self.loaded.get(parser)
        if found and all(f.options == found[0][1].options for _, f in found):
            return found
        return []

    def choices(self, path: str, flag: Flag) -> list[str] | None:
        """The values a flag accepts, when it lists them (literally, or by a name)."""
        if flag.choices is not None:
            return list(flag.choices)
        if flag.choicesFrom is not None:
            found = self.names.lookup(path, flag.choicesFrom)
            if isinstance(found, ValuesSymbol):
                return list(found.values)
        return None

    def carrier(self, cls: ClassSymbol) -> tuple[ClassSymbol, ConfigField] | None:
        """The one flagged field whose type is this class, when there is one: the flag a
        whole config is passed through (vLLM's `--speculative-config` for SpeculativeConfig,
        a JSON object of its fields)."""
        found = sorted(self._carriers.get(cls.key, []), key=lambda c: (*c[0].key, c[1].name))
        # EngineArgs.x and VllmConfig.x both carry a config: one flag sets them both
        options = {tuple(options_of(self.flags_for(owner, item.name))) for owner, item in found}
        return found[0] if len(options) == 1 else None

    def _index_carriers(self) -> dict[tuple[str, str], list[tuple[ClassSymbol, ConfigField]]]:
        carriers: dict[tuple[str, str], list[tuple[ClassSymbol, ConfigField]]] = {}
        for path, qualname, name in self._by_field:
            facts = self.loaded.get(path)
            owner = (
                next((c for c in facts.classes if c.qualname == qualname), None)
                if facts is not None
                else None
            )
            if owner is None:
                continue
            symbol = ClassSymbol(path, owner)
            member = self.names.member(symbol, name)
            if member is None or member.field is None:
                continue
            if all(n in _PLAIN_TYPES for n in member.field.type.names):
                continue  # an int or a str carries no config
            carried = self.names.class_of(path, member.field.type)
            if carried is not None:
                carriers.setdefault(carried.key, []).append((symbol, member.field))
        return carriers


def action_of(flags: list[Located], field_types: Sequence[str]) -> str | None:
    """The argparse action of a setting's flags, its last dotted name (`store_true`,
    `BooleanOptionalAction`); a bool field whose flag takes its keywords from a splat and
    writes no action of its own is a BooleanOptionalAction (vLLM's get_kwargs makes it so:
    `--x` and `--no-x`)."""
    for _, flag in flags:
        if flag.action:
            return flag.action.rsplit(".", 1)[-1].strip("\"'")
    if flags and list(field_types) == ["bool"] and all(f.splat for _, f in flags):
        return "BooleanOptionalAction"
    return None


def options_of(flags: list[Located]) -> list[str]:
    """The option strings of these flags, each once, in order."""
    return list(dict.fromkeys(option for _, flag in flags for option in flag.options))


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
