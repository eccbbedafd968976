"""The facts the extractor hands back: one RaiseSite per raise, per file a FileExtraction."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

# `none`: a function that is no validator (a site of the `all` scope)
ValidatorKind = Literal["pydantic", "post_init", "init", "name", "reached", "none"]
# Which raises are sites: those inside validators, or those of any function.
Scope = Literal["validators", "all"]
MessageStatus = Literal["literal", "template", "partial", "unresolved"]

# Bumped whenever a change to extractors/ can change the sites of an unchanged file;
# it is part of the per-blob analysis cache key.
# 3: a message Hole spanning lines is joined as guards are (runs of spaces collapsed,
# string literals kept as written) instead of by regular expressions, and the Hole of a
# conditional `msg += ...` is joined too (it kept its line breaks and comments).
# 4: files over 2 MiB and expressions nested over 400 levels are skipped with a reason, a
# site keeps at most 64 guards (the nearest), and MemoryError is no longer "nesting too deep".
# 5: messages built from parts (conditional pieces, joined lists, tuples, several branches,
# same-file helpers) and literal braces doubled in errorMessage; sites carry
# messageFragments.
# 6: `init` validators, the wider name rule, `post_init`, calls followed through class
# names, super(), properties and annotated members, and the file's own error subclasses;
# guards for nested early exits, `continue`, loop headers, without duplicates; priorChecks.
# 7: one syntax toolkit: an annotation's class is read as the settings facts read it
# (`Union[X, None]`, `ClassVar[X]`, ... name X), and configuration classes are those of
# the Rules alone (attrs' and vLLM's decorators are in `config_decorators`).
# 8: validators followed into other files through imports (`Rules.reached`, and each file's
# `calls_out`); the name rule takes `_validated_*`, `ensure_*` and `_require_*`; a def
# nested in the validator is a message helper; a test on the `ok` of a helper's
# `(ok, message)` tuples keeps the returns it lets through.
# 9: a list that a test lets through only when non-empty (`if errors:`) holds one of its
# entries: a message made only of its optional entries gets a lookahead in its pattern.
EXTRACTOR_VERSION = "9"


class Memo(Protocol):
    """Where the extractor may remember analyses of pieces of text between files and runs
    (the pipeline backs it with the SQLite store); keys and values are opaque text."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, value: str) -> None: ...


class Rules(BaseModel):
    """Which functions count as validators and which raises count as sites."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    decorators: tuple[str, ...] = (
        "model_validator",
        "field_validator",
        "validator",
        "root_validator",
    )
    method_names: tuple[str, ...] = ("__post_init__", "post_init")
    # the name rule (its case table: tests/test_validators.py `CASES`, the names cases)
    name_pattern: str = (
        r"^_*(validate|verify|check)(_|$)|^_*(assert|validated|ensure)_|^_+require_"
        r"|_(validation|checks?)$"
    )
    error_classes: tuple[str, ...] = ("ValueError",)
    follow_calls: bool = True
    # What makes a configuration class (extractors/classes.py `config_kind`, the one rule):
    # a name with one of the suffixes, one of the decorators (by its last dotted name:
    # dataclasses, vLLM's `@config`, attrs' `@define`/`@frozen`/`@attr.s`), one of the bases
    # (pydantic's), or deriving from a configuration class of the repository. The `init`
    # rule takes these methods of such classes; the settings facts read their fields.
    init_methods: tuple[str, ...] = ("__init__",)
    config_suffixes: tuple[str, ...] = (
        "Config",
        "Args",
        "Arguments",
        "Options",
        "Params",
        "Settings",
    )
    config_decorators: tuple[str, ...] = (
        "dataclass",
        "config",
        "configclass",
        "define",
        "frozen",
        "mutable",
        "attrs",
        "s",
    )
    config_bases: tuple[str, ...] = ("BaseModel", "BaseSettings", "RootModel")
    # The file's top-level functions that validators of other files of the repository call
    # (set per file by the pipeline, pipeline/mine/reach.py; no option): `reached`, as the
    # functions a validator of the file calls.
    reached: tuple[str, ...] = ()
    # `validators`: the raises inside validators; `all`: every raise of an error class in
    # any function, a function that is no validator giving its sites the kind `none`
    scope: Scope = "validators"

    def cache_token(self) -> str:
        """A stable text that changes whenever a rule does (part of cache keys). The default
        scope leaves it as it was before scopes existed, so the caches made then still hold."""
        return self.model_dump_json(exclude={"scope"} if self.scope == "validators" else None)


class RaiseSite(BaseModel):
    """One `raise` of a configured error class inside a validator (with the `all` scope, in
    any function), as the code shows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    filePath: str
    lineNumber: int
    qualname: str
    validatorKind: ValidatorKind
    errorClass: str
    errorMessage: str
    messagePattern: str
    messageStatus: MessageStatus
    # the literal pieces a message built from parts may show, in source order (see
    # extractors/parts.py); [] for any other message
    messageFragments: list[str] = Field(default_factory=list)
    guards: list[str] = Field(default_factory=list)
    # the negated tests of the earlier `if ...: raise` checks of the function that passed
    priorChecks: list[str] = Field(default_factory=list)
    sourceCode: str
    sourceCodeStart: int
    sourceCodeEnd: int
    # The whole validator function as written (decorators included), for explainers and
    # content-keyed caches; not part of the extract output.
    functionSource: str
    # 0 for the first raise of this exact message in the function, 1 for the second, ...
    occurrence: int = 0


class FileExtraction(BaseModel):
    """What one file yielded: its sites, or the reason it was skipped."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    filePath: str
    sites: list[RaiseSite] = Field(default_factory=list)
    skipped: str | None = None
    # `module:name` of the functions the file's validators call through its imports
    # (extractors/imports.py), for the pipeline to follow into the files that define them
    calls_out: list[str] = Field(default_factory=list)
