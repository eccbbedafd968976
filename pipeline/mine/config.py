"""`pipeline.toml`: the pinned targets a regeneration mines, loaded into validated models.

Every problem is reported in one line that names the file, the key and what is wrong,
e.g. `pipeline.toml: targets.vllm.rev: expected a string, got 12`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from extractors.facts import Rules
from pipeline.dataset.models import REPO_NAME_RE
from pipeline.mine.option_types import Command, Seconds, shown
from pipeline.source import TRANSPORT_URL, SourceError
from pipeline.source.release import tag_format_problem, tag_name

_RELEASE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$")
_TARGET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class ConfigError(Exception):
    """A `pipeline.toml` that cannot be used; the message is one line for the user."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleOverrides(_Strict):
    """`[targets.NAME.rules]`: fields of `extractors.facts.Rules` to replace for one target."""

    decorators: list[str] | None = None
    method_names: list[str] | None = None
    name_pattern: str | None = None
    error_classes: list[str] | None = None
    follow_calls: bool | None = None
    init_methods: list[str] | None = None
    config_suffixes: list[str] | None = None
    config_decorators: list[str] | None = None
    config_bases: list[str] | None = None

    @field_validator("name_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression ({exc})") from None
        return value

    def apply(self, base: Rules) -> Rules:
        changes = {
            key: tuple(value) if isinstance(value, list) else value
            for key, value in self.model_dump(exclude_none=True).items()
        }
        return base.model_copy(update=changes)


def command_line_rules(
    added: Mapping[str, Sequence[str]],
    flags: Mapping[str, str],
    name_pattern: str | None = None,
    follow_calls: bool | None = None,
) -> Rules:
    """The rules of the command line: the defaults with the names given for each list field
    added (`--decorator register_to_config` keeps pydantic's decorators), and the name pattern
    and `follow_calls` replaced when given. ConfigError names the option (`flags`: field ->
    option) of a bad value."""
    rules = Rules()
    changes: dict[str, object] = {}
    for field, names in added.items():
        for name in names:
            # a suffix is the end of a name (`Config`); everything else is a whole name
            if not (name.isidentifier() or (field == "config_suffixes" and name.isalnum())):
                raise ConfigError(f"{flags[field]}: expected a Python name, got {shown(name)}")
        if names:
            changes[field] = tuple(dict.fromkeys((*getattr(rules, field), *names)))
    if name_pattern is not None:
        try:
            re.compile(name_pattern)
        except re.error as exc:
            raise ConfigError(f"--name-pattern: not a valid regular expression ({exc})") from None
        changes["name_pattern"] = name_pattern
    if follow_calls is not None:
        changes["follow_calls"] = follow_calls
    return rules.model_copy(update=changes)


class Target(_Strict):
    """One code base pinned to a commit, with the release to mine when git is unreachable."""

    repo: str
    rev: str | None = None
    url: str | None = None
    release: str | None = None
    tag: str = "v{version}"
    path_prefix: str | None = None  # None: found from the release's sdist and metadata
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    rules: RuleOverrides = Field(default_factory=RuleOverrides)
    # the entry point a user runs (`vllm serve MODEL`): example fixes start with it
    command: Command = None
    # variables `vmine run --verify` adds to the verify workers' environment for this target
    verify_env: dict[str, str] = Field(default_factory=dict)
    # which raises are sites for this target (beats the top-level `scope`, loses to --scope)
    scope: Literal["validators", "all"] | None = None

    @field_validator("repo")
    @classmethod
    def _owner_name(cls, value: str) -> str:
        if not REPO_NAME_RE.fullmatch(value):
            raise ValueError(f"expected owner/name, got {shown(value)}")
        return value

    @field_validator("rev", "url")
    @classmethod
    def _not_an_option(cls, value: str | None) -> str | None:
        if value is not None and (not value or value.startswith("-")):
            raise ValueError(f"must not be empty or start with '-', got {shown(value)}")
        return value

    @field_validator("url")
    @classmethod
    def _plain_transport(cls, value: str | None) -> str | None:
        if value is not None and TRANSPORT_URL.match(value):
            raise ValueError(f"git transport URLs are refused, got {shown(value)}")
        return value

    @field_validator("tag")
    @classmethod
    def _tag_format(cls, value: str, info: ValidationInfo) -> str:
        problem = tag_format_problem(value)
        release = info.data.get("release")  # declared before `tag`, so already checked
        if problem is None and release is not None:
            try:
                tag_name(value, release.split("==", 1)[1])
            except SourceError as exc:
                problem = str(exc).removeprefix("--tag-format: ")
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("release")
    @classmethod
    def _pinned(cls, value: str | None) -> str | None:
        if value is not None and not _RELEASE.fullmatch(value):
            raise ValueError(f"expected NAME==VERSION, got {shown(value)}")
        return value

    @field_validator("path_prefix")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        if value and (value.startswith("/") or not value.endswith("/")):
            raise ValueError(f"expected a relative folder ending in '/', got {shown(value)}")
        return value

    @property
    def source_url(self) -> str:
        return self.url or f"https://github.com/{self.repo}.git"

    @property
    def release_tag(self) -> str | None:
        """The GitHub tag of the release (`v0.28.0`), which the fallback's links pin."""
        if self.release is None:
            return None
        return tag_name(self.tag, self.release.split("==", 1)[1])


class PipelineConfig(_Strict):
    """The whole file: run defaults at the top level, then `[targets.NAME]` tables. A key
    left out is None and `RunOptions` keeps its own default (one place for each default);
    only `out` has one here, since it is relative to the file, not to the working dir."""

    out: Path = Path("output")
    llm: Literal["auto", "openai", "offline"] | None = None
    model: str | None = None
    base_url: str | None = None
    concurrency: int | None = Field(default=None, ge=1)
    max_requests: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    timeout: Seconds | None = None
    idle_timeout: Seconds | None = None
    response_format: Literal["auto", "json_schema", "json_object"] | None = None
    cache_dir: Path | None = None
    scope: Literal["validators", "all"] | None = None
    targets: dict[str, Target] = Field(min_length=1)

    @field_validator("targets")
    @classmethod
    def _names(cls, value: dict[str, Target]) -> dict[str, Target]:
        for name in value:
            if not _TARGET_NAME.fullmatch(name):
                raise ValueError(
                    f"target name {shown(name)} must be letters, digits, '.', '_', '-'"
                )
        return value

    def select(self, names: list[str] | tuple[str, ...]) -> dict[str, Target]:
        """The named targets in the order given (all of them, in file order, when none)."""
        if not names:
            return dict(self.targets)
        unknown = [name for name in names if name not in self.targets]
        if unknown:
            known = ", ".join(self.targets)
            raise ConfigError(f"unknown target {shown(unknown[0])} (the config defines: {known})")
        return {name: self.targets[name] for name in dict.fromkeys(names)}


def _location(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


_EXPECTED = {
    "string_type": "expected a string",
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "list_type": "expected an array",
    "dict_type": "expected a table",
    "model_type": "expected a table",
    "path_type": "expected a path",
}


def _problem(error: dict) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind in _EXPECTED:
        return f"{_EXPECTED[kind]}, got {shown(error['input'])}"
    if kind == "literal_error":
        return f"expected {error['ctx']['expected']}, got {shown(error['input'])}"
    if kind == "greater_than_equal":
        return f"must be at least {error['ctx']['ge']}, got {shown(error['input'])}"
    if kind == "greater_than":
        return f"must be more than {error['ctx']['gt']:g}, got {shown(error['input'])}"
    if kind == "less_than_equal":
        return f"must be at most {error['ctx']['le']:g}, got {shown(error['input'])}"
    if kind == "finite_number":
        return f"expected a finite number, got {shown(error['input'])}"
    if kind in ("float_type", "float_parsing"):
        return f"expected a number, got {shown(error['input'])}"
    if kind == "too_short" and error["loc"] == ("targets",):
        return "define at least one [targets.NAME] table"
    return error["msg"].removeprefix("Value error, ")


def parse_config(data: dict, name: str = "pipeline.toml") -> PipelineConfig:
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        problem = re.sub(r"\s*\n\s*", " ", _problem(first))  # one line, always
        raise ConfigError(f"{name}: {_location(first['loc'])}: {problem}") from None
    except RecursionError:
        raise ConfigError(f"{name}: nested too deep") from None


def load_config(path: Path) -> PipelineConfig:
    """Read and validate `path`; relative `out`/`cache_dir` are resolved against its folder."""
    name = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{name}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(f"{name}: not valid TOML: nested too deep") from None
    config = parse_config(data, name)
    base = path.resolve().parent
    updates: dict[str, Path] = {}
    if not config.out.is_absolute():
        updates["out"] = base / config.out
    if config.cache_dir is not None and not config.cache_dir.is_absolute():
        updates["cache_dir"] = base / config.cache_dir
    return config.model_copy(update=updates)
