"""Which functions count as validators, and why (extractors/functions.py, validators.py)."""

import ast
import textwrap

import pytest

from extractors.classes import scan_classes
from extractors.facts import Rules
from extractors.functions import function_table
from extractors.sites import extract_file
from extractors.syntax.annotations import annotated_class
from extractors.validators import find_validators


def validators_of(source: str, rules: Rules | None = None) -> dict[str, str]:
    rules = rules or Rules()
    text = textwrap.dedent(source)
    tree = ast.parse(text)
    return find_validators(function_table(tree, rules.error_classes), rules, scan_classes(text))


# (case name, source, every validator of the source -> its kind)
CASES = [
    (
        "pydantic decorator bare, called, and as attribute",
        """
        class Sampling(BaseModel):
            @validator
            def temperature_range(cls, v): ...

            @field_validator("top_p")
            @classmethod
            def top_p_range(cls, v): ...

            @pydantic.model_validator(mode="after")
            def consistent(self): ...

            @root_validator(pre=True)
            def legacy(cls, values): ...

            @property
            def plain(self): ...
        """,
        {
            "Sampling.temperature_range": "pydantic",
            "Sampling.top_p_range": "pydantic",
            "Sampling.consistent": "pydantic",
            "Sampling.legacy": "pydantic",
        },
    ),
    (
        "post_init method",
        """
        @dataclass
        class CacheConfig:
            def __post_init__(self): ...
        """,
        {"CacheConfig.__post_init__": "post_init"},
    ),
    (
        "names: validate/verify/check words with leading underscores, not prefixes of words",
        """
        def validate(x): ...
        def _validate(x): ...
        def __verify_shapes(x): ...
        def check_limits(x): ...
        def checkpoint_weights(x): ...
        def validated(x): ...
        def recheck_limits(x): ...
        """,
        {
            "validate": "name",
            "_validate": "name",
            "__verify_shapes": "name",
            "check_limits": "name",
        },
    ),
    (
        "names: a value handed back checked (`_validated_*`, `ensure_*`), `_require_*`",
        """
        def _validated_overlap(overlap, chunk): ...
        def validated_items(x): ...
        def ensure_response_format_compilable(fmt): ...
        def _ensure_media_type(item): ...
        def ensured(x): ...
        def _require_positive(name, value): ...
        def require_cuda(test_case): ...
        def required_fields(cls): ...
        """,
        {
            "_validated_overlap": "name",
            "validated_items": "name",
            "ensure_response_format_compilable": "name",
            "_ensure_media_type": "name",
            "_require_positive": "name",
        },
    ),
    (
        "pydantic wins over name, name wins over reached",
        """
        class Config(BaseModel):
            @field_validator("mode")
            def validate_mode(cls, v):
                return cls.check_mode_name(v)

            @classmethod
            def check_mode_name(cls, v): ...
        """,
        {"Config.validate_mode": "pydantic", "Config.check_mode_name": "name"},
    ),
    (
        "reached through self. and cls. in the same class, transitively",
        """
        class ParallelConfig:
            def __post_init__(self):
                self._handle_ranks()

            def _handle_ranks(self):
                self._handle_world_size()

            def _handle_world_size(self): ...

            @classmethod
            def from_cli(cls):
                cls._build()

            @model_validator(mode="before")
            def defaults(cls, data):
                return cls._fill(data)

            @classmethod
            def _fill(cls, data): ...

            @classmethod
            def _build(cls): ...
        """,
        {
            "ParallelConfig.__post_init__": "post_init",
            "ParallelConfig._handle_ranks": "reached",
            "ParallelConfig._handle_world_size": "reached",
            "ParallelConfig.defaults": "pydantic",
            "ParallelConfig._fill": "reached",
        },
    ),
    (
        "module function reached by a direct call, transitively; unreached helper is not",
        """
        def _parse_size(text):
            return _to_int(text)

        def _to_int(text): ...

        def _format_size(n): ...

        def validate_size(text):
            return _parse_size(text)

        def render(n):
            return _format_size(n)
        """,
        {"validate_size": "name", "_parse_size": "reached", "_to_int": "reached"},
    ),
    (
        "a same-named method of another class is not reached",
        """
        class Model:
            def __post_init__(self):
                self.resolve()

            def resolve(self): ...

        class Other:
            def resolve(self): ...
        """,
        {"Model.__post_init__": "post_init", "Model.resolve": "reached"},
    ),
    (
        "a direct call does not reach a method, and a method call does not reach a function",
        """
        def resolve(): ...

        class Model:
            def __post_init__(self):
                self.helper.resolve()
                prepare()

            def prepare(self): ...
        """,
        {"Model.__post_init__": "post_init"},
    ),
    (
        "a def nested in a validator and called by name is reached",
        """
        def validate_layers(layers):
            def one(layer): ...
            for layer in layers:
                one(layer)
        """,
        {"validate_layers": "name", "validate_layers.<locals>.one": "reached"},
    ),
    (
        "a closure of a method reaches the method's class through self",
        """
        class Engine:
            def __post_init__(self):
                def each():
                    self._check_one()
                each()

            def _check_one(self): ...
        """,
        {
            "Engine.__post_init__": "post_init",
            "Engine.__post_init__.<locals>.each": "reached",
            "Engine._check_one": "name",
        },
    ),
    (
        "methods of nested classes",
        """
        class Outer:
            class Inner:
                def __post_init__(self):
                    self.prepare()

                def prepare(self): ...
        """,
        {"Outer.Inner.__post_init__": "post_init", "Outer.Inner.prepare": "reached"},
    ),
]


@pytest.mark.parametrize(
    ("source", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_validator_kinds(source, expected):
    assert validators_of(source) == expected


def test_follow_calls_off_keeps_only_direct_validators():
    source = """
    class Model:
        def __post_init__(self):
            self.prepare()

        def prepare(self): ...
    """
    rules = Rules(follow_calls=False)
    assert validators_of(source, rules) == {"Model.__post_init__": "post_init"}


def test_rules_are_configurable():
    source = """
    @attr_checker
    def sizes(x): ...

    def ensure_positive(x): ...

    def validate(x): ...

    class Model:
        def __attrs_post_init__(self): ...
    """
    rules = Rules(
        decorators=("attr_checker",),
        method_names=("__attrs_post_init__",),
        name_pattern=r"^ensure_",
    )
    assert validators_of(source, rules) == {
        "sizes": "pydantic",
        "ensure_positive": "name",
        "Model.__attrs_post_init__": "post_init",
    }


def test_reached_function_yields_sites_with_kind_reached():
    source = textwrap.dedent(
        """
        @dataclass
        class LoadConfig:
            def __post_init__(self):
                self._handle_format()

            def _handle_format(self):
                if self.format not in FORMATS:
                    raise ValueError(f"unknown format {self.format!r}")

            def describe(self):
                raise ValueError("not a validator")
        """
    )
    sites = extract_file("cfg.py", source, Rules()).sites
    assert [(s.qualname, s.validatorKind, s.lineNumber) for s in sites] == [
        ("LoadConfig._handle_format", "reached", 9)
    ]


# (annotation as written, the one class it names)
ANNOTATIONS = [
    ("ModelLayout", "ModelLayout"),
    ("Optional[ModelLayout]", "ModelLayout"),
    ("'ModelLayout | None'", "ModelLayout"),
    ("None | ModelLayout", "ModelLayout"),
    ("layouts.ModelLayout", "ModelLayout"),
    ("Annotated[ModelLayout, Field(description='x')]", "ModelLayout"),
    ("typing.Optional['ModelLayout']", "ModelLayout"),
    ("list[ModelLayout]", None),
    ("dict[str, ModelLayout]", None),
    ("ModelLayout | CacheLayout", None),
]


@pytest.mark.parametrize(("annotation", "name"), ANNOTATIONS)
def test_an_annotation_names_one_class(annotation, name):
    assert annotated_class(annotation) == name


def test_init_of_a_class_deriving_from_another_files_configuration_class():
    source = """
    class EnvSettingsSource(SourceDefaults):
        def __init__(self, prefix):
            if not prefix.isidentifier():
                raise ValueError("bad prefix")
    """
    assert validators_of(source) == {}
    # the pipeline adds the tree's configuration classes this file derives from
    rules = Rules(config_bases=(*Rules().config_bases, "SourceDefaults"))
    assert validators_of(source, rules) == {"EnvSettingsSource.__init__": "init"}
