"""The settings facts a file yields (extractors/settings.py makes them): config classes and
fields, command-line flags, imports, Literal aliases and constant lists; and the outline, what
a byte scan of a file shows."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Bumped whenever a change here or in the modules below can change the facts of an
# unchanged file; the per-blob settings cache is keyed by it.
# 3: configuration classes are those of the Rules (extractors/classes.py config_kind).
# 4: flags keep nargs and whether a splat gives their keywords; outlines say whether a
# parser reads dotted keys; environment variables, request and model-config fields.
# 6: callers of a function defined in another's body (`m.<locals>.check`); an `__init__`
# attribute reassigned only to constants after its parameter keeps the parameter's type.
# 7: a class's `from_config` keys (the dict key each `__init__` parameter is read from).
SETTINGS_VERSION = "9"

# why a class counts: its decorator, its base, or only that it has annotated attributes
ClassKind = Literal["dataclass", "config", "pydantic", "enum", "annotated", "plain"]


class _Fact(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Import(_Fact):
    """A name a module binds by import: `from .cache import CacheConfig as CC` is
    `Import(name="CC", module="cache", level=1, attr="CacheConfig")`; `import vllm.config` is
    `Import(name="vllm.config", module="vllm.config")`."""

    name: str
    module: str
    level: int = 0
    attr: str | None = None


class TypeRef(_Fact):
    """What an annotation says about a value's type, `None` and wrappers (`Optional`,
    `Union`, `X | Y`, `Annotated`, string annotations) taken off: the dotted names of its
    other members (a generic by its head: `list[str]` is `list`) and the values of its
    `Literal` members."""

    names: list[str] = Field(default_factory=list)
    literals: list[str] = Field(default_factory=list)


class ConfigField(_Fact):
    """An annotated attribute of a config class, as written."""

    name: str
    annotation: str  # one line of source
    type: TypeRef
    default: str | None = None  # source text; `Field(default=x)` -> x, a factory f -> `f()`
    doc: str | None = None  # first sentence of the string after it, `description=`, or comment
    init: bool = True  # False for `field(init=False)`: computed, not something a user passes
    line: int


class Property(_Fact):
    """A property whose body returns attribute chains of `self` (`return self.a.b`)."""

    name: str
    returns: list[str]  # the chains as written, `self` included, in source order


class Derived(_Fact):
    """An attribute `__init__` sets from an attribute chain: `self.model_config =
    vllm_config.model_config` (`vllm_config: VllmConfig`) is cls `VllmConfig`, attrs
    `["model_config"]`; `self.max_len = self.model_config.max_model_len` is cls None (the
    object itself), attrs `["model_config", "max_model_len"]`."""

    cls: str | None = None  # the parameter's annotation, as written
    attrs: list[str]


class ConfigClass(_Fact):
    """A class that holds settings (or leads to them through its bases and attributes)."""

    name: str
    qualname: str
    kind: ClassKind
    bases: list[str] = Field(default_factory=list)  # dotted names as written
    fields: list[ConfigField] = Field(default_factory=list)
    properties: list[Property] = Field(default_factory=list)
    # instance attributes `__init__` sets from an annotated parameter (`self.args = args`)
    attributes: dict[str, TypeRef] = Field(default_factory=dict)
    # public attributes `__init__` sets, once, from a chain of a typed parameter or of itself
    derived: dict[str, Derived] = Field(default_factory=dict)
    # `__init__` parameter -> the key of the dict its `from_config` classmethod reads it from
    from_keys: dict[str, str] = Field(default_factory=dict)
    members: list[str] | None = None  # an Enum's values (or names, when values are not literal)
    line: int


class FieldRef(_Fact):
    """A field of a class, the class named as the file writes it (resolved by the join)."""

    cls: str
    field: str


class Flag(_Fact):
    """One `add_argument(...)` call: what a user types and the field it sets."""

    options: list[str]  # `--gpu-memory-utilization`, `--device-memory-utilization`, `-q`, ...
    dest: str
    action: str | None = None
    nargs: str | None = None  # source text
    # its keywords come (also) from a `**kwargs` splat: what it takes is decided elsewhere
    # (vLLM's get_kwargs gives a bool field BooleanOptionalAction)
    splat: bool = False
    type: str | None = None  # source text
    default: str | None = None  # source text
    choices: list[str] | None = None  # a literal list of values
    choicesFrom: str | None = None  # a name whose values are the choices (alias, list, enum)
    help: str | None = None  # the literal parts of `help=`
    sets: FieldRef | None = None  # `**kwargs["x"]` of `get_kwargs(C)`, `default=C.x`
    # the class whose field named `dest` the parsed value becomes: the class the parser
    # function sits in, else the class most of its `default=C.x` name
    argsClass: str | None = None
    # a loop adding one flag per field of `sets.cls` (and of its subclasses, for `cls`):
    # `--{name}` as the field is named, or with its `_` written `-` ("dashed"); options
    # and dest are then empty, each field gives its own
    eachField: Literal["as-is", "dashed"] | None = None
    line: int


class Reference(_Fact):
    """An attribute chain as read: `self.a.b` is root `self`, attrs `["a", "b"]`."""

    root: str
    attrs: tuple[str, ...] = ()

    @property
    def expr(self) -> str:
        return ".".join([self.root, *self.attrs])


class Binding(_Fact):
    """What a name of the function stands for: a value of an annotated type, or a chain."""

    type: TypeRef | None = None
    chain: Reference | None = None
    # an unannotated `args`: the flags of the site's own file only are its attributes
    parsed: bool = False


class FunctionScope(_Fact):
    """The names of a validator that lead to settings."""

    params: list[str] = Field(default_factory=list)  # positional parameters, in order
    static: bool = False  # a @staticmethod: its first parameter is no receiver
    bindings: dict[str, Binding] = Field(default_factory=dict)


class Caller(_Fact):
    """A call in the same file to a validator (extractors/callers.py): the calling
    function, the dotted names it passes by the callee's parameter, its own scope."""

    qualname: str
    args: dict[str, Reference] = Field(default_factory=dict)
    scope: FunctionScope


class EnvVar(_Fact):
    """An environment variable a module defines or reads (extractors/environment.py)."""

    name: str
    type: str | None = None  # source text of its annotation, or what its reader says
    default: str | None = None  # source text
    doc: str | None = None  # first sentence of the comment above it


class FileSettings(_Fact):
    """Everything one file says about settings (nothing about where it lives: the same
    text at two paths has the same facts)."""

    imports: list[Import] = Field(default_factory=list)
    aliases: dict[str, list[str]] = Field(default_factory=dict)  # `Mode = Literal["a", "b"]`
    constants: dict[str, list[str]] = Field(default_factory=dict)  # `CHOICES = ["a", "b"]`
    classes: list[ConfigClass] = Field(default_factory=list)
    flags: list[Flag] = Field(default_factory=list)
    environ: list[EnvVar] = Field(default_factory=list)  # the environment variables it defines
    # the validators' scopes by qualname, when the site pass had their trees at hand
    scopes: dict[str, FunctionScope] = Field(default_factory=dict)
    # the calls to those validators in the file, by the callee's qualname
    callers: dict[str, list[Caller]] = Field(default_factory=dict)


class Outline(_Fact):
    """What a byte scan of a file shows: the class names it may define, whether it may
    build a command-line parser."""

    classes: list[str] = Field(default_factory=list)
    parser: bool = False
    # its flags name the field they set (`default=C.x`, `**kwargs["x"]`): read them early
    links: bool = False
    # it subclasses ArgumentParser and its parse_args reads `--config.key value` (dotted keys
    # of a JSON-config flag, vLLM's FlexibleArgumentParser)
    dotted: bool = False


# --- first sentences ----------------------------------------------------------------------

# a sentence ends at a full stop, ! or ? before white space; `e.g.`, `i.e.`, `etc.`, `vs.`
# and a dotted name (`torch.float16`) do not end one
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)[.!?](?=\s|$)")
_MAX_SENTENCE = 300


def first_sentence(text: str | None) -> str | None:
    """The first sentence of a doc text, on one line; None when there is no text."""
    if not text:
        return None
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    flat = " ".join(paragraph.split())
    match = _SENTENCE_END.search(flat)
    sentence = flat[: match.end()] if match else flat
    if len(sentence) > _MAX_SENTENCE:
        cut = sentence[:_MAX_SENTENCE]
        sentence = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + " ..."
    return sentence or None
