"""The pure data at the centre of the pipeline: sites, explanations, records, envelopes."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal
from urllib.parse import quote

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from extractors.facts import MessageStatus, RaiseSite, ValidatorKind
from pipeline.dataset.formats import (  # noqa: F401  (the models' formats, read here too)
    RECORD_ID_RE,
    REPO_NAME_RE,
    SHA40_RE,
    TIMESTAMP_RE,
)
from pipeline.dataset.jsonl import json_text

SCHEMA_VERSION = 2


def format_timestamp(moment: datetime) -> str:
    """UTC timestamp in the dataset's format, `YYYY-MM-DDTHH:MM:SS.mmmZ`."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def now_timestamp() -> str:
    """The current time in the dataset's format."""
    return format_timestamp(datetime.now(UTC))


def _check(pattern: re.Pattern[str], what: str, shape: str | None = None):
    """`shape` says in words what `pattern` wants, for values a user types."""

    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            wanted = shape or f"match {pattern.pattern}"
            raise ValueError(f"{what} must {wanted}, got {value!r}")
        return value

    return AfterValidator(check)


Timestamp = Annotated[
    str,
    _check(
        TIMESTAMP_RE,
        "timestamp",
        "be UTC time as YYYY-MM-DDTHH:MM:SS.mmmZ, e.g. 2026-08-15T22:17:37.221Z",
    ),
]
Sha40 = Annotated[str, _check(SHA40_RE, "analyzedSha")]
RepoName = Annotated[str, _check(REPO_NAME_RE, "repo")]
RecordId = Annotated[str, _check(RECORD_ID_RE, "id")]


# Line numbers are 1-based; a dataset read back with 0, a negative number or "12" is refused.
LineNumber = Annotated[int, Field(ge=1)]


# What a URL path segment may hold as is (RFC 3986 pchar); the rest is percent-encoded, so a
# file name with a space, `#`, `?`, a quote or a newline stays inside its URL.
_PATH_SAFE = "/!$&'()*+,;=:@-._~"


def github_url(repo: str, sha: str, file_path: str, start: int, end: int) -> str:
    """The source lines on GitHub: the ref (a commit SHA or a release tag) and the file's
    path percent-encoded."""
    ref, path = quote(sha, safe=_PATH_SAFE), quote(file_path, safe=_PATH_SAFE)
    return f"https://github.com/{repo}/blob/{ref}/{path}#L{start}-L{end}"


Surface = Literal["flag", "env", "request", "model-config", "code", "internal"]
SWITCH_ACTIONS = frozenset(
    {"store_true", "store_false", "store_const", "count", "BooleanOptionalAction"}
)


SURFACE_EXTRAS = frozenset({"action", "nargs", "via", "reason"})  # written only when set


class Setting(BaseModel):
    """A setting a site's guards or message read, resolved through the repository's config
    classes and parsers (pipeline/mine/settings/): the field, what it accepts, its default,
    the first sentence of its doc and the command-line flags that set it."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        serialize_by_alias=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

    expr: str  # the chain as the site reads it: `self.cache_config.mamba_cache_mode`
    # the class declaring the field; None for an `args.x` of a parsed Namespace
    cls: str | None = Field(alias="class")
    field: str
    type: str | None  # the annotation as written (a flag's `type=` for a Namespace value)
    default: str | None  # source text
    choices: list[str] | None  # the values it accepts, when the code lists them all
    doc: str | None
    flags: list[str]  # option strings, the primary one first
    # where a user changes it (pipeline/mine/settings/surfaces.py): `flag` (a command-line
    # flag), `env` (an environment variable, `field` its name), `request` (a field of a
    # request body or of SamplingParams), `model-config` (a key of the model's config.json,
    # `field` the key), `code` (a constructor or function argument), `internal` (no
    # setting reaches it: `reason` says why)
    surface: Surface = "flag"
    action: str | None = None  # the flag's argparse action (store_true, BooleanOptionalAction)
    nargs: str | None = None  # the flag's nargs, as written
    # a model-config key's override flag (`--hf-overrides`); a request field's
    # offline-Python name when it differs from the JSON one
    via: str | None = None
    reason: str | None = None  # an internal check: why no setting reaches it

    # what an index written before surfaces lacks (load_dataset accepts it without them)
    added_fields: ClassVar[frozenset[str]] = frozenset({"surface", *SURFACE_EXTRAS})

    @model_serializer(mode="wrap")
    def _without_empty_extras(self, handler: SerializerFunctionWrapHandler):  # noqa: ANN202
        """What only some surfaces have is written only when it is there."""
        data = handler(self)
        return {k: v for k, v in data.items() if v is not None or k not in SURFACE_EXTRAS}

    @model_validator(mode="before")
    @classmethod
    def _surface_of_old_entries(cls, data: object) -> object:
        """A setting written before surfaces: a flag when it has one, else a constructor's."""
        if isinstance(data, dict) and "surface" not in data:
            return {**data, "surface": "flag" if data.get("flags") else "code"}
        return data


class Site(BaseModel):
    """A raise site placed in a repository at a commit (the site table of docs/architecture.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: RepoName
    analyzedSha: Sha40
    filePath: str
    lineNumber: LineNumber
    qualname: str
    validatorKind: ValidatorKind
    errorClass: str
    errorMessage: str
    messagePattern: str
    messageStatus: MessageStatus
    messageFragments: list[str] = Field(default_factory=list)
    guards: list[str]
    priorChecks: list[str] = Field(default_factory=list)
    sourceCode: str
    sourceCodeStart: LineNumber
    sourceCodeEnd: LineNumber
    githubUrl: str
    settings: list[Setting] = Field(default_factory=list)
    functionSource: str = Field(exclude=True)
    occurrence: int = Field(default=0, exclude=True)

    @classmethod
    def place(
        cls,
        raw: RaiseSite,
        repo: str,
        sha: str,
        path_prefix: str = "",
        url_ref: str | None = None,
        settings: list[Setting] | None = None,
    ) -> Site:
        """Put an extracted site into its repository; `path_prefix` maps a release's files
        back onto the GitHub tree (SGLang's package lives under `python/`), and `url_ref`
        (a release tag) is what githubUrl pins instead of `sha`; `settings` are the ones its
        guards and message read."""
        fields = raw.model_dump()
        fields["filePath"] = path_prefix + raw.filePath
        return cls(
            repo=repo,
            analyzedSha=sha,
            githubUrl=github_url(
                repo, url_ref or sha, fields["filePath"], raw.sourceCodeStart, raw.sourceCodeEnd
            ),
            settings=settings or [],
            **fields,
        )

    def to_json_line(self) -> str:
        """One line of `vmine extract` output: the site table's fields, in its order."""
        return json_text(self)


class Explanation(BaseModel):
    """What an explainer (LLM or offline) says about one site."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    documentation: str
    triggerScenarios: str
    commonSituations: str
    solutions: list[str]
    exampleFix: str
    handlingStrategy: str
    validationCode: str
    typeGuard: str
    tryCatchPattern: str | None
    preventionTips: list[str]
    tags: list[str]


class ErrorRecord(BaseModel):
    """A schema-v2 record: site facts + explanation + identity, in the field order of the
    dataset's reference records."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: RecordId
    repo: RepoName
    slug: str
    errorCode: None = None
    errorMessage: str
    messagePattern: str
    errorType: Literal["validation"] = "validation"
    errorClass: str
    httpStatus: None = None
    severity: Literal["error"] = "error"
    filePath: str
    lineNumber: LineNumber
    sourceCode: str
    sourceCodeStart: LineNumber
    sourceCodeEnd: LineNumber
    githubUrl: str
    documentation: str
    triggerScenarios: str
    commonSituations: str
    solutions: list[str]
    exampleFix: str
    handlingStrategy: str
    validationCode: str
    typeGuard: str
    tryCatchPattern: str | None
    preventionTips: list[str]
    tags: list[str]
    backgroundTag: str | None = None
    analyzedSha: Sha40
    analyzedAt: Timestamp
    schemaVersion: Literal[2] = SCHEMA_VERSION


class Envelope(BaseModel):
    """What each `records/{id}.json` file holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    record: ErrorRecord
    datasetVersion: Timestamp


class IndexEntry(BaseModel):
    """One line of a dataset's `index.jsonl`: a record's identity plus the site facts that
    the record itself does not carry (qualname, guards, status), for diff, explain, render."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: RecordId
    slug: str
    filePath: str
    lineNumber: LineNumber
    qualname: str
    validatorKind: ValidatorKind
    errorClass: str
    errorMessage: str
    messagePattern: str
    messageStatus: MessageStatus
    guards: list[str]
    # A message built from parts (`" ".join(parts)`): the literal pieces a rendering may hold,
    # in source order; empty for other messages. Absent from datasets of older vmine.
    messageFragments: list[str] = Field(default_factory=list)
    # The negated tests of the earlier checks of the function (see Site).
    priorChecks: list[str] = Field(default_factory=list)
    # Which explainer wrote the record (`openai`, `offline`, `offline-fallback`) and which of
    # its fields the offline explainer replaced; missing in datasets of older vmines.
    explainedBy: str | None = None
    replacedFields: list[str] = Field(default_factory=list)
    # The settings its guards and message read (pipeline/mine/settings/). Absent from
    # datasets of older vmine.
    settings: list[Setting] = Field(default_factory=list)

    # Fields added after datasets were first written: a dataset read back may lack them.
    added_fields: ClassVar[frozenset[str]] = frozenset(
        {"messageFragments", "priorChecks", "explainedBy", "replacedFields", "settings"}
    )

    @classmethod
    def of(cls, site: Site, id: str, slug: str, **explained: object) -> IndexEntry:
        """The index line of a site, under its record's id and slug (`explained`: how)."""
        return cls(id=id, slug=slug, **site.model_dump(include=_SITE_FACTS_IN_INDEX), **explained)


_SITE_FACTS_IN_INDEX = set(IndexEntry.model_fields) - {
    "id",
    "slug",
    "explainedBy",
    "replacedFields",
}
