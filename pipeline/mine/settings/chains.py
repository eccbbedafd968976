"""A site's reads walked to the settings they reach.

A site reads attribute chains (`self.cache_config.mamba_cache_mode`, `args.port`); the root
of each says where the walk starts, and each kind of root has its resolver, tried in the
order of `RESOLVERS` (the first that claims a chain answers for it):

| resolver | root | walked from |
|---|---|---|
| `model_config` | `hf_config`/`hf_text_config` in the chain, a PretrainedConfig's `self` | a config.json key (surfaces.py) |
| `environment` | a module imported as `envs` (`envs.VLLM_X`) | its environment variables (surfaces.py) |
| `request_field` | the receiver of SamplingParams or a pydantic `...Request` | a request body field (surfaces.py) |
| `receiver_chain` | the method's receiver (`self`, a closure's `self`) | the enclosing class |
| `local_alias` | a local assigned a chain once (`cfg = self.x`) | what it holds, resolved again |
| `parsed_args` | an unannotated `args` | the flags of the site's own file, by dest |
| `namespace_param` | a parameter annotated `argparse.Namespace` | the tree's flags, by dest |
| `annotated_param` | a parameter annotated with a class | that class |
| `caller_argument` | a parameter the same file's callers pass a chain to | that chain, from the caller (extractors/callers.py) |
| `plain_parameter` | a plain parameter (`max_model_len`) | the flag whose dest is its name |
| `constructor_argument` | a plain parameter of a public class's `__init__` | that constructor's argument (surfaces.py) |

A walk from a class follows annotations field by field (`X | None` unwrapped, `__init__`
attributes, bases), one property that returns a chain of `self`, and an attribute `__init__`
sets from a chain (`self.model_config = vllm_config.model_config`, from `VllmConfig`; or of
`self`), walked on from where the chain starts; the last attribute
must be a field a user passes. A new surface is a new `Resolver` in the table, not a new
branch of the walk. A site whose chains reach nothing may be internal: `internal_reason`
decides it from its guards (tensors handed in, private state) and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from extractors.facts import RaiseSite
from extractors.references import function_scope, references
from extractors.settings_model import (
    ConfigField,
    FileSettings,
    FunctionScope,
    Reference,
    TypeRef,
    first_sentence,
)
from pipeline.dataset.models import Setting
from pipeline.mine.settings.flags import FlagIndex, Located, action_of, options_of
from pipeline.mine.settings.loaded import Loaded
from pipeline.mine.settings.names import MAX_DEPTH, ClassSymbol, TreeNames
from pipeline.mine.settings.surfaces import (
    DATA_TYPES,
    constructor_argument,
    environ_reads,
    environment,
    internal_reason,
    is_request,
    model_config,
    quantization_key,
    request_field,
)

_NAMESPACE = frozenset({"argparse.Namespace", "Namespace"})


@dataclass(frozen=True)
class SiteReads:
    """What a site reads, worked out once for every round of the join."""

    path: str
    qualname: str
    scope: FunctionScope
    references: tuple[Reference, ...]
    guards: tuple[str, ...] = ()
    environ: tuple[Setting, ...] = ()  # the variables its guards read themselves

    @classmethod
    def of(cls, path: str, site: RaiseSite, facts: FileSettings | None) -> SiteReads:
        """`facts`: the site file's (None: not loaded), whose scopes spare parsing the function
        again."""
        scope = facts.scopes.get(site.qualname) if facts is not None else None
        return cls(
            path,
            site.qualname,
            scope or function_scope(site.functionSource),
            tuple(references(site.guards, site.errorMessage)),
            tuple(site.guards),
            tuple(environ_reads(tuple(site.guards))),
        )


@dataclass(frozen=True)
class Where:
    """Where a site's chains are read: its file, the class of its function's receiver and
    the receiver's name (None for a plain function), the function's bindings and qualname."""

    path: str
    owner: ClassSymbol | None
    receiver: str | None
    scope: FunctionScope
    qualname: str = ""


class Resolver(Protocol):
    """One kind of root a chain may start from."""

    def __call__(
        self, walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
    ) -> list[Setting] | None:
        """The settings `ref` reaches (named `expr`, the chain as the site reads it) when its
        root is of this kind; None when it is not, and the next resolver is asked."""
        ...


class ChainWalk:
    """Chains to settings over the names and flags of one round."""

    def __init__(
        self,
        names: TreeNames,
        flags: FlagIndex,
        loaded: Loaded,
        resolvers: tuple[Resolver, ...],
    ) -> None:
        self.names = names
        self.flags = flags
        self.loaded = loaded
        self.resolvers = resolvers

    def settings_of(self, read: SiteReads) -> list[Setting]:
        """The settings a site reads, each (expr, class, field) once."""
        facts = self.loaded.get(read.path)
        if facts is None:
            return []
        owner, receiver = _receiver(read.path, facts, read.qualname, read.scope)
        where = Where(read.path, owner, receiver, read.scope, read.qualname)
        found: list[Setting] = list(read.environ)
        for ref in read.references:
            found += self.resolve(ref, ref.expr, where, 0)
        unique = {(s.expr, s.cls, s.field): s for s in found}
        if not unique:
            reason = internal_reason(read.qualname, read.guards, read.references, where)
            if reason is not None:
                return [internal_setting(read, reason)]
        return list(unique.values())

    def resolve(self, ref: Reference, expr: str, where: Where, depth: int) -> list[Setting]:
        """The settings of the first resolver that claims `ref`; none when none does."""
        if depth > MAX_DEPTH:
            return []
        for resolver in self.resolvers:
            found = resolver(self, ref, expr, where, depth)
            if found is not None:
                return found
        return []

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
        if not attrs or depth > MAX_DEPTH:
            return []
        member = self.names.member(cls, attrs[0])
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
        if member.derived is not None:
            start = member.owner
            if member.derived.cls is not None:  # the class the parameter is annotated with
                start = self.names.class_of(member.owner.path, TypeRef(names=[member.derived.cls]))
            if start is None:
                return []
            return self.walk(
                start,
                [*member.derived.attrs, *attrs[1:]],
                expr,
                prefix,
                depth + 1,
                through_property,
            )
        item = member.field
        if len(attrs) == 1:
            if item is None and member.attribute is not None and not attrs[0].startswith("_"):
                return [self.attribute_setting(expr, member.owner, attrs[0], member.attribute)]
            if item is None or not item.init or item.name.startswith("_"):
                return []
            found = [self.setting(expr, member.owner, item)]
            carrier = self.flags.carrier(cls)
            if not found[0].flags and carrier is not None:
                carried = self.setting(prefix, *carrier)  # the flag the object comes by
                if self.flags.dotted and carried.flags:
                    # `--speculative-config.method ngram`: the parser reads dotted keys
                    dotted = [f"{f}.{item.name}" for f in carried.flags if f.startswith("--")]
                    found[0] = found[0].model_copy(
                        update={"flags": dotted, "surface": "flag", "action": None}
                    )
                found.append(carried)
            return found
        ref = item.type if item is not None else member.attribute
        nested = self.names.class_of(member.owner.path, ref) if ref is not None else None
        if nested is None:
            return []
        return self.walk(
            nested, attrs[1:], expr, f"{prefix}.{attrs[0]}", depth + 1, through_property
        )

    def setting(self, expr: str, cls: ClassSymbol, item: ConfigField) -> Setting:
        """A field as a setting: its flags, the values it accepts (the flags' choices, else
        its annotation's), its default and doc (else its flag's help)."""
        flags = self.flags.flags_for(cls, item.name)
        choices = next(
            (c for path, flag in flags if (c := self.flags.choices(path, flag)) is not None),
            None,
        )
        if choices is None:
            choices = self.names.values_of(cls.path, item.type)
        helps = (first_sentence(flag.help) for _, flag in flags if flag.help)
        return Setting(
            expr=expr,
            cls=cls.facts.name,
            field=item.name,
            type=item.annotation,
            default=self.names.default_of(cls, item),
            choices=choices,
            doc=item.doc or next(helps, None),
            flags=options_of(flags),
            surface="flag" if flags else "request" if is_request(self, cls) else "code",
            action=action_of(flags, item.type.names),
            nargs=next((flag.nargs for _, flag in flags if flag.nargs), None),
        )

    def attribute_setting(self, expr: str, cls: ClassSymbol, name: str, ref: TypeRef) -> Setting:
        """An attribute `__init__` sets from its parameter of the same name: a constructor
        argument, with the flags whose dest is that name when the parsers agree on them
        (SGLang's ModelConfig(quantization=server_args.quantization) and `--quantization`)."""
        read = quantization_key(self, expr, cls, name, " | ".join(ref.names) or None)
        if read is not None:
            return read  # a key of the checkpoint's quantization config
        flags = self.flags.by_dest(name)
        if flags and any(f.options != flags[0][1].options for _, f in flags):
            flags = []
        return Setting(
            expr=expr,
            cls=cls.facts.name,
            field=name,
            type=" | ".join(ref.names) or None,
            default=None,
            choices=list(ref.literals) or None,
            doc=next((first_sentence(f.help) for _, f in flags if f.help), None),
            flags=options_of(flags),
            surface="flag" if flags else "request" if is_request(self, cls) else "code",
            action=action_of(flags, ref.names),
            nargs=next((f.nargs for _, f in flags if f.nargs), None),
        )

    def namespace_setting(
        self, expr: str, dest: str, path: str, same_file: bool = False
    ) -> list[Setting]:
        """`args.x` of a parsed Namespace: the field its flag sets, else the flag itself."""
        flags = self.flags.flags_by_dest(dest, path, same_file)
        if not flags and not same_file:  # a field of a class whose fields a loop flags
            owners = {(o.key, f.name): (o, f) for o, f, _, _ in self.flags.family_fields(dest)}
            if len(owners) == 1:
                return [self.setting(expr, *next(iter(owners.values())))]
        if not flags:
            return []
        return self.flag_setting(expr, dest, flags)

    def flag_setting(self, expr: str, dest: str, flags: list[Located]) -> list[Setting]:
        """What `flags` (all setting `dest`) set: the field of the first one a class holds,
        else the flag itself."""
        for flag_path, flag in flags:
            for owner, item in self.flags.fields(flag_path, flag):
                return [self.setting(expr, owner, item)]
        flag_path, flag = flags[0]
        return [
            Setting(
                expr=expr,
                cls=None,
                field=dest,
                type=flag.type,
                default=flag.default,
                choices=self.flags.choices(flag_path, flag),
                doc=first_sentence(flag.help),
                flags=options_of(flags),
                surface="flag",
                action=action_of(flags, ()),
                nargs=flag.nargs,
            )
        ]


def _receiver(
    path: str, facts: FileSettings, qualname: str, scope: FunctionScope
) -> tuple[ClassSymbol | None, str | None]:
    """The class a method's receiver is an instance of, and the receiver's name."""
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


# --- the resolvers ----------------------------------------------------------------------------


def receiver_chain(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`self.a.b`: walked from the enclosing class."""
    if ref.root != where.receiver or where.owner is None:
        return None
    return walk.walk(where.owner, list(ref.attrs), expr, ref.root)


def local_alias(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`cfg.a` after `cfg = self.x` (assigned once): `self.x.a`, resolved again."""
    binding = where.scope.bindings.get(ref.root)
    if binding is None or binding.chain is None:
        return None
    inner = Reference(root=binding.chain.root, attrs=[*binding.chain.attrs, *ref.attrs])
    return walk.resolve(inner, expr, where, depth + 1)


def parsed_args(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`args.x` of an unannotated `args`: a flag of the site's own file, by dest."""
    binding = where.scope.bindings.get(ref.root)
    if binding is None or not binding.parsed or len(ref.attrs) != 1:
        return None
    return walk.namespace_setting(expr, ref.attrs[0], where.path, same_file=True)


def namespace_param(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`args.x` of `args: argparse.Namespace`: the tree's flag whose dest is `x`."""
    binding = where.scope.bindings.get(ref.root)
    if binding is None or binding.type is None or not ref.attrs:
        return None
    if not any(name in _NAMESPACE for name in binding.type.names):
        return None
    return walk.namespace_setting(expr, ref.attrs[0], where.path) if len(ref.attrs) == 1 else []


def annotated_param(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`cfg.a` of `cfg: CacheConfig` (or a field validator's value): walked from the class."""
    binding = where.scope.bindings.get(ref.root)
    if binding is None or binding.type is None or not ref.attrs:
        return None
    cls = walk.names.class_of(where.path, binding.type)
    return walk.walk(cls, list(ref.attrs), expr, ref.root) if cls is not None else []


def internal_setting(read: SiteReads, reason: str) -> Setting:
    """A site no setting reaches: what it checks, and why that is no setting."""
    subject = read.references[0].expr if read.references else read.guards[-1]
    return Setting(
        expr=subject,
        cls=None,
        field=subject,
        type=None,
        default=None,
        choices=None,
        doc=None,
        flags=[],
        surface="internal",
        reason=reason,
    )


def caller_argument(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`max_len` (or `cfg.x`), a parameter of the function that its callers in the same
    file pass a chain to (`_verify(self.max_model_len)`): that chain, resolved where the
    caller reads it; a caller's own parameter is followed on to its callers in turn (up to
    MAX_DEPTH). None when no caller passes one that reaches a setting."""
    if ref.root not in where.scope.params or ref.root == where.receiver:
        return None
    facts = walk.loaded.get(where.path)
    callers = facts.callers.get(where.qualname, []) if facts is not None else []
    found: list[Setting] = []
    for caller in callers:
        passed = caller.args.get(ref.root)
        if passed is None or facts is None:
            continue
        owner, receiver = _receiver(where.path, facts, caller.qualname, caller.scope)
        at = Where(where.path, owner, receiver, caller.scope, caller.qualname)
        inner = Reference(root=passed.root, attrs=(*passed.attrs, *ref.attrs))
        found += walk.resolve(inner, expr, at, depth + 1)
    # a tensor the caller holds in a field (`BlockSparseTensors(cnt: torch.Tensor)`) is data
    # it hands on, not a setting
    found = [s for s in found if not (s.type and DATA_TYPES.search(s.type))]
    return found or None


def plain_parameter(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`max_model_len`, a plain parameter of the function: the flag whose dest is its name,
    when the parsers read so far agree on one (the callers pass the setting down under its
    own name); nothing else is claimed."""
    if ref.attrs or ref.root not in where.scope.params or ref.root == where.receiver:
        return None
    binding = where.scope.bindings.get(ref.root)
    if (binding is not None and binding.chain is not None) or "_" not in ref.root:
        return None  # an alias of a chain (another resolver's), or a one-word name
    flags = walk.flags.by_dest(ref.root)
    if not flags or any(f.options != flags[0][1].options for _, f in flags):
        return None
    return walk.flag_setting(expr, ref.root, flags)


# The resolvers, in the order they are asked: the first that claims a chain answers for it.
# The surfaces other than a flag's come first: each claims only chains of its own kind.
RESOLVERS: tuple[Resolver, ...] = (
    model_config,
    environment,
    request_field,
    receiver_chain,
    local_alias,
    parsed_args,
    namespace_param,
    annotated_param,
    caller_argument,
    plain_parameter,
    constructor_argument,
)
