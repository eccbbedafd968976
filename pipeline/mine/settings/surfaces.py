"""The surfaces a setting other than a flag lives on, as resolvers of the chain walk
(`chains.RESOLVERS`), and the sites that no setting reaches.

| resolver | a chain | the setting |
|---|---|---|
| `model_config` | `hf_config.x`, `self.model_config.hf_text_config.x`, `self.x` of a PretrainedConfig subclass | key `x` of the model's config.json; `via` the override flag (`--hf-overrides`, `--json-model-override-args`) |
| `environment` | `envs.VLLM_X` (`envs.SGLANG_X.get()`) of a module that defines the variable | `export VLLM_X=...`, its type, default and comment |
| `request_field` | `self.x` of SamplingParams, PoolingParams or a pydantic `...Request` | field `x` of the request body |
| `constructor_argument` | `block_sizes`, a plain parameter of `Config.__init__` (a public class) | the argument `Config(block_sizes=...)`; not a tensor's, not a private class's or parameter's; a QuantizationConfig's that its `from_config` reads from a key: that key of the `quantization_config` of config.json |

`environ_reads` gives the variables a guard reads itself (`os.environ.get("X")`), and
`internal_reason` decides, from the guards alone, that a site checks what no user sets:
tensors handed to a function (`x.shape`, `x.dtype`, `x.dim()`), or the private state of an
object (`self._entries`).
"""

from __future__ import annotations

import ast
import re
from typing import Protocol

from extractors.environment import ENV_NAME, reads_of
from extractors.settings_model import ConfigField, EnvVar, FunctionScope, Reference
from pipeline.dataset.models import Setting
from pipeline.mine.settings.flags import FlagIndex
from pipeline.mine.settings.loaded import Loaded
from pipeline.mine.settings.names import MAX_DEPTH, ClassSymbol, TreeNames


class ChainWalk(Protocol):
    """What these resolvers use of `chains.ChainWalk` (which imports them)."""

    names: TreeNames
    flags: FlagIndex
    loaded: Loaded

    def setting(self, expr: str, cls: ClassSymbol, item: ConfigField) -> Setting: ...


class Where(Protocol):
    """What they use of `chains.Where`: the site's file, receiver class and name, scope."""

    path: str
    owner: ClassSymbol | None
    receiver: str | None
    scope: FunctionScope
    qualname: str


# names of a model's Hugging Face config (its config.json) on the objects that hold it
HF_CONFIGS = frozenset({"hf_config", "hf_text_config"})
# the classes of Hugging Face model configs: their attributes are config.json keys
PRETRAINED = frozenset({"PretrainedConfig", "PreTrainedConfig"})
# the classes of a checkpoint's quantization settings: their `from_config` reads the keys of
# the `quantization_config` object of the model's config.json
QUANTIZATION = frozenset({"QuantizationConfig"})
QUANTIZATION_KEY = "quantization_config"
# the flags whose JSON overrides config.json keys (vLLM, SGLang), by dest
OVERRIDE_DESTS = ("hf_overrides", "json_model_override_args")
# the classes of a request's parameters; pydantic models named `...Request` too
REQUEST_CLASSES = frozenset({"SamplingParams", "PoolingParams", "BeamSearchParams"})


def derives_from(walk: ChainWalk, cls: ClassSymbol, names: frozenset[str], depth: int = 0) -> bool:
    """Whether a class is, or derives from, a class of one of these names (bases followed in
    the tree, an external base by its name as written)."""
    if cls.facts.name in names:
        return True
    if depth > MAX_DEPTH:
        return False
    for base in cls.facts.bases:
        if base.rsplit(".", 1)[-1] in names:
            return True
        found = walk.names.lookup(cls.path, base)
        if isinstance(found, ClassSymbol) and found.key != cls.key:
            if derives_from(walk, found, names, depth + 1):
                return True
    return False


def is_request(walk: ChainWalk, cls: ClassSymbol) -> bool:
    """A request's parameters: SamplingParams and its kin, or a pydantic `...Request`."""
    if cls.facts.kind == "pydantic" and cls.facts.name.endswith("Request"):
        return True
    return derives_from(walk, cls, REQUEST_CLASSES)


def override_flag(walk: ChainWalk) -> str | None:
    """The flag whose JSON overrides keys of the model's config.json, when the tree has one."""
    for dest in OVERRIDE_DESTS:
        for _, flag in walk.flags.by_dest(dest):
            if flag.options:
                return next((o for o in flag.options if o.startswith("--")), flag.options[0])
    return None


def _key_setting(
    walk: ChainWalk, expr: str, key: str, owner: ClassSymbol | None = None
) -> list[Setting]:
    member = walk.names.member(owner, key) if owner is not None else None
    field = member.field if member is not None else None
    return [
        Setting(
            expr=expr,
            cls=owner.facts.name if owner is not None else None,
            field=key,
            type=field.annotation if field is not None else None,
            default=field.default if field is not None else None,
            choices=None,
            doc=field.doc if field is not None else None,
            flags=[],
            surface="model-config",
            via=override_flag(walk),
        )
    ]


def quantization_key(
    walk: ChainWalk, expr: str, cls: ClassSymbol, name: str, type_: str | None = None
) -> Setting | None:
    """`weight_bits` of a QuantizationConfig subclass whose `from_config` reads it from
    `"bits"`: the key `quantization_config.bits` of the model's config.json (no override
    flag: an override replaces the whole `quantization_config` object)."""
    key = cls.facts.from_keys.get(name)
    if key is None or not derives_from(walk, cls, QUANTIZATION):
        return None
    return Setting(
        expr=expr,
        cls=cls.facts.name,
        field=f"{QUANTIZATION_KEY}.{key}",
        type=type_,
        default=None,
        choices=None,
        doc=None,
        flags=[],
        surface="model-config",
    )


def model_config(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """A key of the model's config.json: after `hf_config` / `hf_text_config` in a chain, or
    an attribute of a PretrainedConfig subclass (its own validator, or a parameter typed so)."""
    chain = [ref.root, *ref.attrs]
    for index, name in enumerate(chain[:-1]):
        if name in HF_CONFIGS:
            return _key_setting(walk, expr, chain[index + 1])
    if not ref.attrs or ref.attrs[0].startswith("_") or ref.attrs[0].isupper():
        return None
    if where.owner is not None and ref.root == where.receiver:
        if derives_from(walk, where.owner, PRETRAINED):
            return _key_setting(walk, expr, ref.attrs[0], where.owner)
        return None
    binding = where.scope.bindings.get(ref.root)
    if binding is not None and binding.type is not None:
        if any(name.rsplit(".", 1)[-1] in PRETRAINED for name in binding.type.names):
            return _key_setting(walk, expr, ref.attrs[0])
    return None


def _env_setting(expr: str, var: EnvVar) -> Setting:
    return Setting(
        expr=expr,
        cls=None,
        field=var.name,
        type=var.type,
        default=var.default,
        choices=None,
        doc=var.doc,
        flags=[],
        surface="env",
    )


def environment(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`envs.VLLM_X`: a variable of the module the name `envs` is imported from."""
    if not ref.attrs or not ENV_NAME.match(ref.attrs[0]):
        return None
    facts = walk.loaded.get(where.path)
    imp = next((i for i in facts.imports if i.name == ref.root), None) if facts else None
    if imp is None:
        return None
    modules = walk.names.modules
    module = modules.absolute(imp.module, imp.level, where.path)
    candidates = [f"{module}.{imp.attr}" if module else imp.attr, module] if imp.attr else [module]
    for name in candidates:
        path = modules.path_of(name or "")
        found = walk.loaded.get(path) if path is not None else None
        for var in found.environ if found is not None else ():
            if var.name == ref.attrs[0]:
                return [_env_setting(expr, var)]
    return None


def request_field(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`self.top_k` of SamplingParams (or of a `...Request`): a field of the request body."""
    if where.owner is None or ref.root != where.receiver or len(ref.attrs) != 1:
        return None
    if not is_request(walk, where.owner):
        return None
    member = walk.names.member(where.owner, ref.attrs[0])
    if member is None or ref.attrs[0].startswith("_"):
        return None
    if member.field is not None:
        return [walk.setting(expr, member.owner, member.field)]
    if member.attribute is None:
        return None
    return [
        Setting(
            expr=expr,
            cls=member.owner.facts.name,
            field=ref.attrs[0],
            type=" | ".join(member.attribute.names) or None,
            default=None,
            choices=list(member.attribute.literals) or None,
            doc=None,
            flags=[],
            surface="request",
        )
    ]


# annotations of a parameter that holds data handed in, not a value a user chooses
DATA_TYPES = re.compile(r"\b(Tensor|ndarray|Array|Module|Parameter)\b")


def constructor_argument(
    walk: ChainWalk, ref: Reference, expr: str, where: Where, depth: int
) -> list[Setting] | None:
    """`block_sizes` read in `Config.__init__(self, block_sizes)`: what a user passes to the
    public constructor, `Config(block_sizes=...)`. Only a parameter of `__init__` itself (not a
    closure's), of a class and a parameter not named private, not annotated as a tensor."""
    *outer, method = where.qualname.split(".")
    if ref.attrs or method != "__init__" or not outer or "<locals>" in outer:
        return None
    cls = outer[-1]  # any class: the config classes the tree facts hold are not all of them
    if ref.root not in where.scope.params[1:] or ref.root.startswith("_") or cls.startswith("_"):
        return None
    binding = where.scope.bindings.get(ref.root)
    if binding is not None and binding.chain is not None:
        return None  # reassigned from a chain: another resolver's
    names = binding.type.names if binding is not None and binding.type is not None else []
    if any(DATA_TYPES.search(name) for name in names):
        return None
    if where.owner is not None and derives_from(walk, where.owner, PRETRAINED):
        return _key_setting(walk, expr, ref.root, where.owner)  # a key of its config.json
    if where.owner is not None:
        read = quantization_key(walk, expr, where.owner, ref.root, " | ".join(names) or None)
        if read is not None:
            return [read]  # a key of the checkpoint's quantization config
    literals = binding.type.literals if binding is not None and binding.type is not None else []
    return [
        Setting(
            expr=expr,
            cls=cls,
            field=ref.root,
            type=" | ".join(names) or None,
            default=None,
            choices=list(literals) or None,
            doc=None,
            flags=[],
            surface="code",
        )
    ]


def environ_reads(guards: tuple[str, ...]) -> list[Setting]:
    """The variables the guards read themselves: `os.environ.get("X", "0") == "1"`."""
    found: dict[str, Setting] = {}
    for guard in guards:
        if "env" not in guard:
            continue
        try:
            tree = ast.parse(f"(\n{guard}\n)", mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            continue
        for var in reads_of(tree, guard.split("\n")):
            found.setdefault(var.name, _env_setting(var.name, var))
    return list(found.values())


# what a tensor, an array or a buffer is asked: its shape, type, place in memory
_TENSOR = re.compile(
    r"\.(shape|dtype|device|ndim|is_cuda|is_contiguous|stride|numel|dim|size|nbytes|"
    r"element_size|data_ptr|storage_offset|layout)\b|\btorch\.|\bnp\.|\bnumpy\."
)


# a root that holds a configuration (the bench's reading of a guard, and the explainers')
_CONFIG_ROOT = re.compile(r"^(cls|cfg|config|args|\w+_config|\w+_cfg|\w+_args|\w+_params)$")


def internal_reason(
    qualname: str, guards: tuple[str, ...], refs: tuple[Reference, ...], where: Where
) -> str | None:
    """Why no setting reaches a site, when its guards say so: they test tensors (`x.shape`,
    `x.dtype`, `x.dim()`) and read no configuration (no public attribute of the receiver, no
    `config`/`args`-like name), or only the private state of its object. None otherwise."""
    if not guards:
        return None
    text = " ".join(guards)
    receiver = where.receiver
    private = [
        ref for ref in refs if ref.root == receiver and ref.attrs and ref.attrs[0].startswith("_")
    ]
    public = [ref for ref in refs if ref.root == receiver and ref not in private]
    configs = [ref for ref in refs if _CONFIG_ROOT.match(ref.root) and ref.root != receiver]
    if configs or public:
        return None
    if _TENSOR.search(text):
        return (
            f"it checks the shapes or types of the tensors and values passed to {qualname}, "
            "which the calling code builds; no setting reaches them"
        )
    if private:
        names = ", ".join(sorted({ref.expr for ref in private}))
        return f"it checks the internal state of the object ({names}), which no setting sets"
    return None
