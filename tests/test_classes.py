"""Class statements read from text, and the class rules of a tree (extractors/classes.py)."""

import textwrap

import pytest

from extractors.classes import (
    ClassFact,
    ClassRules,
    FileClasses,
    class_annotations,
    config_kind,
    rules_for_file,
    scan_file,
)
from extractors.facts import Rules
from extractors.settings import file_settings


def facts_of(source: str) -> list[ClassFact]:
    return list(scan_file(textwrap.dedent(source)).classes)


# (case name, source, the class statements read from it)
SCANS = [
    (
        "bases by their last dotted segment, subscripts dropped, keywords left out",
        """
        class SourceSettings(pydantic.BaseModel, Generic[T], metaclass=ABCMeta):
            pass
        """,
        [ClassFact("SourceSettings", ("BaseModel", "Generic"))],
    ),
    (
        "bases over several lines with comments, and a class without bases",
        """
        class LoraRuntimeConfig(
            PeftConfigMixin,  # the shared fields
            Serializable,
        ):
            ...

        class Marker:
            pass
        """,
        [ClassFact("LoraRuntimeConfig", ("PeftConfigMixin", "Serializable")), ClassFact("Marker")],
    ),
    (
        "decorators right above, a multi-line call among them",
        """
        @dataclasses.dataclass(
            frozen=True,
        )
        @register("ppo")
        class PPOTrainerArgs:
            pass
        """,
        [ClassFact("PPOTrainerArgs", decorators=("dataclass", "register"))],
    ),
    (
        "a statement above is no decorator",
        """
        handlers = make(
            "a",
        )
        class Handler(Base):
            pass
        """,
        [ClassFact("Handler", ("Base",))],
    ),
    (
        "a call as base is no base name",
        """
        class Compat(with_metaclass(Meta, object)):
            pass
        """,
        [ClassFact("Compat")],
    ),
]


@pytest.mark.parametrize(
    ("source", "expected"), [case[1:] for case in SCANS], ids=[case[0] for case in SCANS]
)
def test_class_statements_are_read(source, expected):
    assert facts_of(source) == expected


GENERATION = """
class GenerationConfig(PushToHubMixin):
    \"\"\"
    Args:
        max_length: the longest output
    \"\"\"
    max_length: int = 20
    cache: Optional["CacheConfig"] = None  # filled in later

    def update(self, **kwargs):
        local: int = 0

    class Inner:
        depth: int
"""


def test_annotated_attributes_of_a_class_body():
    # defaults and comments dropped; docstrings, nested classes and methods' lines are not
    # the body's
    assert class_annotations(GENERATION, "GenerationConfig") == (
        ("max_length", "int"),
        ("cache", 'Optional["CacheConfig"]'),
    )
    assert class_annotations(GENERATION, "Inner") == (("depth", "int"),)
    assert class_annotations(GENERATION, "Missing") == ()


def test_methods_of_a_class_by_indentation():
    source = textwrap.dedent("""
        @dataclass
        class TrainerOutput:
            loss: float

        class LoraLayer(Module):
            def __init__(self, rank):
                def __init__(inner): ...

        class PeftArgs:
            \"\"\"
            class Example:
            \"\"\"
            def __init__(self): ...

        def build():
            class Local:
                async def __init__(self): ...
    """)
    assert [(fact.name, fact.methods) for fact in scan_file(source).classes] == [
        ("TrainerOutput", ()),
        ("LoraLayer", ("__init__",)),
        ("PeftArgs", ("__init__",)),
        ("Example", ()),
        ("Local", ("__init__",)),
    ]


def test_raised_names_are_collected():
    scan = scan_file("raise SettingsError('x')\nraise builtins.ValueError\nraise(KeyError)\n")
    assert scan.raised == {"SettingsError", "ValueError", "KeyError"}


def test_a_scan_survives_its_row_form():
    scan = scan_file(GENERATION + "raise ValueError\n")
    assert FileClasses.from_row(scan.to_row()) == scan


# (case name, source of a tree, its configuration classes, its error classes)
RULES = [
    (
        "configuration classes by name, dataclass, pydantic model and base, transitively",
        """
        class PretrainedConfig(PushToHubMixin): ...
        class LlamaRope(PretrainedConfig): ...
        @dataclass
        class Sampling: ...
        class Greedy(Sampling): ...
        class EnvSource(BaseModel): ...
        class DotEnvSource(EnvSource): ...
        class Trainer: ...
        class QuantizationMixin: ...
        class AwqQuant(QuantizationMixin): ...
        """,
        {"PretrainedConfig", "LlamaRope", "Sampling", "Greedy", "EnvSource", "DotEnvSource"},
        set(),
    ),
    (
        "a base named like a configuration class counts though the tree lacks it",
        """
        class GRPOTrainerSetup(TrainingArguments): ...
        """,
        {"GRPOTrainerSetup"},
        set(),
    ),
    (
        "error classes derive from a configured class, transitively; others do not",
        """
        class SettingsError(ValueError): ...
        class EnvParsingFailure(SettingsError): ...
        class Timeout(RuntimeError): ...
        class Both(KeyError, EnvParsingFailure): ...
        """,
        set(),
        {"SettingsError", "EnvParsingFailure", "Both"},
    ),
]


@pytest.mark.parametrize(
    ("source", "configs", "errors"), [case[1:] for case in RULES], ids=[case[0] for case in RULES]
)
def test_class_rules_of_a_tree(source, configs, errors):
    found = ClassRules.of(facts_of(source), Rules())
    assert (set(found.configs), set(found.errors)) == (configs, errors)


# --- what makes a configuration class: (decorators, bases, kind) -----------------------------

CONFIG_KINDS = [
    (("dataclass",), (), "dataclass"),
    (("config", "dataclass"), (), "dataclass"),  # vLLM's `@config @dataclass`
    (("config",), (), "config"),
    (("define",), (), "config"),  # attrs
    (("s",), (), "config"),  # `@attr.s`
    ((), ("BaseModel",), "pydantic"),
    ((), ("BaseSettings", "Generic"), "pydantic"),
    (("lru_cache",), ("Base",), None),
    ((), (), None),
]


@pytest.mark.parametrize(("decorators", "bases", "kind"), CONFIG_KINDS)
def test_what_makes_a_configuration_class_is_one_rule_of_the_rules(decorators, bases, kind):
    assert config_kind(decorators, bases, Rules()) == kind


def test_the_init_rule_and_the_settings_facts_ask_the_same_rule():
    source = textwrap.dedent("""
        @settings_class
        class Sampling:
            temperature: float = 1.0
    """)
    custom = Rules(config_decorators=("settings_class",))
    assert ClassRules.of(facts_of(source), custom).configs == {"Sampling"}
    assert ClassRules.of(facts_of(source), Rules()).configs == frozenset()
    assert [c.kind for c in file_settings(source, rules=custom).classes] == ["config"]
    assert [c.kind for c in file_settings(source).classes] == ["annotated"]


def test_rules_for_a_file_add_what_the_tree_knows_and_the_file_uses():
    tree = ClassRules.of(
        facts_of("""
        class SettingsError(ValueError): ...
        class Unused(ValueError): ...
        @dataclass
        class Defaults: ...
        class Named(Defaults): ...
    """),
        Rules(),
    )
    file = scan_file(
        textwrap.dedent("""
        class EnvSettingsSource(Defaults):
            def __init__(self):
                raise SettingsError("bad env")
        class Other(Named): ...
    """)
    )
    rules = rules_for_file(Rules(), file, tree)
    assert rules.error_classes == ("ValueError", "SettingsError")
    assert rules.config_bases == ("BaseModel", "BaseSettings", "RootModel", "Defaults", "Named")
    # a file that uses none of them keeps the configured rules, the same object
    plain = Rules()
    assert rules_for_file(plain, scan_file("x = 1\n"), tree) is plain


def test_a_configuration_base_is_added_only_when_it_makes_an_init_method_count():
    tree = ClassRules.of(
        facts_of("""
        @dataclass
        class BaseModelOutput: ...
    """),
        Rules(),
    )
    plain = Rules()
    # a dataclass output deriving from another file's dataclass defines no __init__: the
    # file's rules (and so its cache key) do not depend on that file
    outputs = scan_file("class LlavaModelOutput(BaseModelOutput):\n    loss: float = 0.0\n")
    assert rules_for_file(plain, outputs, tree) is plain
    custom = scan_file(
        textwrap.dedent("""
        class CustomOutput(BaseModelOutput):
            def __init__(self, loss):
                self.loss = loss
    """)
    )
    assert rules_for_file(plain, custom, tree).config_bases[-1] == "BaseModelOutput"
