"""The settings facts of one file (extractors/settings.py and its modules): one case table per
field form, flag form and reference form, source in, facts out."""

from __future__ import annotations

import ast
import textwrap

import pytest

from extractors.references import function_scope, part_expressions, references
from extractors.settings import file_settings, outline_of
from extractors.settings_model import (
    Binding,
    Derived,
    FieldRef,
    Import,
    Reference,
    TypeRef,
    first_sentence,
)


def facts(source: str):
    return file_settings(textwrap.dedent(source))


def only_field(source: str):
    (cls,) = facts(source).classes
    (field,) = cls.fields
    return field


# --- fields: (case, class source, (annotation, default, choices-literals, doc, init)) --------

FIELD_FORMS = [
    (
        "plain default",
        """
        @dataclass
        class C:
            block_size: int = 16
        """,
        ("int", "16", [], None, True),
    ),
    (
        "no default",
        """
        @dataclass
        class C:
            model: str
        """,
        ("str", None, [], None, True),
    ),
    (
        "pydantic Field(default=)",
        """
        class C(BaseModel):
            ratio: float = Field(default=0.9, gt=0, le=1)
        """,
        ("float", "0.9", [], None, True),
    ),
    (
        "pydantic Field positional default",
        """
        class C(BaseModel):
            ratio: float = Field(0.5)
        """,
        ("float", "0.5", [], None, True),
    ),
    (
        "pydantic Field(...) is required",
        """
        class C(BaseModel):
            name: str = Field(..., description="The model name.")
        """,
        ("str", None, [], "The model name.", True),
    ),
    (
        "default_factory name",
        """
        @dataclass
        class C:
            layers: list[str] = field(default_factory=list)
        """,
        ("list[str]", "list()", [], None, True),
    ),
    (
        "default_factory lambda",
        """
        @dataclass
        class C:
            sizes: list[int] = field(default_factory=lambda: [1, 2])
        """,
        ("list[int]", "[1, 2]", [], None, True),
    ),
    (
        "init=False is computed",
        """
        @dataclass
        class C:
            num_blocks: int | None = field(default=None, init=False)
        """,
        ("int | None", "None", [], None, False),
    ),
    (
        "Literal in the annotation",
        """
        @config
        class C:
            mode: Literal["none", "all", "align"] = "none"
        """,
        ('Literal["none", "all", "align"]', '"none"', ["none", "all", "align"], None, True),
    ),
    (
        "Optional Literal",
        """
        @dataclass
        class C:
            role: Optional[Literal["producer", "consumer"]] = None
        """,
        ('Optional[Literal["producer", "consumer"]]', "None", ["producer", "consumer"], None, True),
    ),
    (
        "string after the field is its doc (vLLM)",
        '''
        @config
        class C:
            gpu_memory_utilization: float = 0.9
            """The fraction of GPU memory to use. For example, 0.5 is half of it."""
        ''',
        ("float", "0.9", [], "The fraction of GPU memory to use.", True),
    ),
    (
        "trailing comment is its doc",
        """
        @dataclass
        class C:
            num_reserved_decode_tokens: int = 512  # used for decode kv cache offload
        """,
        ("int", "512", [], "used for decode kv cache offload", True),
    ),
    (
        "a tool directive is no doc",
        """
        @dataclass
        class C:
            block_size: int = Field(default=None)  # type: ignore[assignment]
        """,
        ("int", "None", [], None, True),
    ),
    (
        "annotation on several lines is one line",
        """
        @dataclass
        class C:
            backend: (
                str | None
            ) = None
        """,
        ("str | None", "None", [], None, True),
    ),
    (
        "the help of a dataclass field's metadata (accelerate, transformers)",
        """
        @dataclass
        class C:
            num_machines: int = field(default=1, metadata={"help": "How many machines. Or one."})
        """,
        ("int", "1", [], "How many machines.", True),
    ),
    (
        "the class docstring's Args: entry (lmdeploy)",
        """
        @dataclass
        class C:
            \"\"\"The engine.

            Args:
                quant_policy (int): The quantization policy. 0 means none,
                    4 means kv int4.
            \"\"\"
            quant_policy: int = 0
        """,
        ("int", "0", [], "The quantization policy.", True),
    ),
    (
        "the class docstring's NumPy Parameters (diffusers)",
        """
        @dataclass
        class C:
            \"\"\"The pipeline.

            Parameters
            ----------
            num_steps : int
                How many denoising steps to run.
            \"\"\"
            num_steps: int = 50
        """,
        ("int", "50", [], "How many denoising steps to run.", True),
    ),
]


@pytest.mark.parametrize(
    ("case", "source", "expected"), FIELD_FORMS, ids=[c[0] for c in FIELD_FORMS]
)
def test_field_form(case, source, expected):
    field = only_field(source)
    assert (field.annotation, field.default, field.type.literals, field.doc, field.init) == expected


def test_class_variables_and_unannotated_assignments_are_no_fields():
    (cls,) = facts("""
        @dataclass
        class C:
            registry: ClassVar[dict] = {}
            NAME = "c"
            size: int = 1
        """).classes
    assert [f.name for f in cls.fields] == ["size"]


# --- class kinds: (case, source, kind) ---------------------------------------------------------

CLASS_KINDS = [
    ("dataclass", "@dataclass\nclass C:\n    x: int = 1\n", "dataclass"),
    (
        "dataclasses.dataclass(...)",
        "@dataclasses.dataclass(frozen=True)\nclass C:\n    x: int\n",
        "dataclass",
    ),
    ("pydantic dataclass", "@pydantic.dataclasses.dataclass\nclass C:\n    x: int\n", "dataclass"),
    ("vLLM @config", "@config\nclass C:\n    x: int = 1\n", "config"),
    ("BaseModel", "class C(BaseModel):\n    x: int = 1\n", "pydantic"),
    ("annotated attributes only", "class C:\n    x: int = 1\n", "annotated"),
    ("an Enum", "class Mode(str, Enum):\n    A = 'a'\n", "enum"),
    ("a subclass with nothing of its own", "class D(C):\n    pass\n", "plain"),
]


@pytest.mark.parametrize(("case", "source", "kind"), CLASS_KINDS, ids=[c[0] for c in CLASS_KINDS])
def test_class_kind(case, source, kind):
    (cls,) = facts(source).classes
    assert cls.kind == kind


def test_plain_class_without_bases_or_members_is_left_out():
    assert facts("class Helper:\n    def run(self):\n        return 1\n").classes == []


def test_nested_classes_have_qualnames():
    found = facts("class Outer:\n    class Inner(BaseModel):\n        x: int = 1\n").classes
    assert [c.qualname for c in found] == ["Outer.Inner"]


# --- accepted values: aliases, constants, enums --------------------------------------------------


def test_literal_alias_at_module_level():
    found = facts("""
        MambaCacheMode = Literal["none", "all", "align"]
        KVRole: TypeAlias = Literal["kv_producer", "kv_consumer"]
        NotAnAlias = Literal["a"] | int
        """)
    assert found.aliases == {
        "MambaCacheMode": ["none", "all", "align"],
        "KVRole": ["kv_producer", "kv_consumer"],
    }


def test_literal_alias_of_earlier_aliases():
    found = facts("""
        KVProducer = Literal["kv_producer", "kv_both"]
        KVConsumer = Literal["kv_consumer", "kv_both"]
        KVRole = Literal[KVProducer, KVConsumer]
        AnyRole = KVProducer | KVConsumer
        """)
    assert found.aliases["KVRole"] == ["kv_producer", "kv_both", "kv_consumer"]
    assert found.aliases["AnyRole"] == ["kv_producer", "kv_both", "kv_consumer"]


def test_constant_lists_at_module_level():
    found = facts('LOAD_FORMATS = ["auto", "pt"]\nSIZES = (1, 2)\nMIXED = ["a", name]\n')
    assert found.constants == {"LOAD_FORMATS": ["auto", "pt"], "SIZES": ["1", "2"]}


ENUM_MEMBERS = [
    (
        "string values",
        "class B(str, Enum):\n    TRITON = 'triton'\n    FLASH = 'flash'\n",
        ["triton", "flash"],
    ),
    ("int values", "class L(IntEnum):\n    O0 = 0\n    O1 = 1\n", ["0", "1"]),
    (
        "auto(): the names",
        "class B(Enum):\n    TRITON = auto()\n    FLASH = auto()\n",
        ["TRITON", "FLASH"],
    ),
]


@pytest.mark.parametrize(
    ("case", "source", "members"), ENUM_MEMBERS, ids=[c[0] for c in ENUM_MEMBERS]
)
def test_enum_members(case, source, members):
    (cls,) = facts(source).classes
    assert cls.members == members


# --- annotations: (annotation, names, literals) ------------------------------------------------

TYPE_REFS = [
    ("CacheConfig", ["CacheConfig"], []),
    ("CacheConfig | None", ["CacheConfig"], []),
    ("Optional[CacheConfig]", ["CacheConfig"], []),
    ("Union[CacheConfig, None]", ["CacheConfig"], []),
    ('"VllmConfig"', ["VllmConfig"], []),
    ('Optional["VllmConfig"]', ["VllmConfig"], []),
    ("Annotated[int, Field(gt=0)]", ["int"], []),
    ("list[str]", ["list"], []),
    ("config.CacheConfig", ["config.CacheConfig"], []),
    ('Literal["a", 1, True] | None', [], ["a", "1", "True"]),
    ("CacheDType | str", ["CacheDType", "str"], []),
    ('Literal["auto"] | int', ["int"], ["auto"]),
]


@pytest.mark.parametrize(
    ("annotation", "names", "literals"), TYPE_REFS, ids=[c[0] for c in TYPE_REFS]
)
def test_annotation_type_ref(annotation, names, literals):
    field = only_field(f"class C:\n    x: {annotation} = None\n")
    assert field.type == TypeRef(names=names, literals=literals)


# --- properties and __init__ attributes ------------------------------------------------------


def test_property_returning_chains_of_self():
    (cls,) = facts("""
        @config
        class VllmConfig:
            speculative_config: SpeculativeConfig | None = None

            @property
            def num_speculative_tokens(self) -> int:
                if self.speculative_config is not None:
                    return self.speculative_config.num_speculative_tokens
                return 0

            @cached_property
            def spec_method(self):
                return self.speculative_config.method if self.speculative_config else None

            @property
            def computed(self):
                return len(self.speculative_config)
        """).classes
    assert [(p.name, p.returns) for p in cls.properties] == [
        ("num_speculative_tokens", ["self.speculative_config.num_speculative_tokens"]),
        ("spec_method", ["self.speculative_config.method"]),
    ]


def test_init_attributes_from_annotated_parameters():
    (cls,) = facts("""
        class TokenizerManager:
            def __init__(
                self, server_args: ServerArgs, port_args, other: "ModelConfig", top_k: int
            ):
                self.server_args = server_args
                self.port_args = port_args
                self.model_config: ModelConfig = make(other)
                self.twice = server_args
                self.twice = None
                self.top_k = top_k
                if self.top_k == -1:
                    self.top_k = TOP_K_ALL  # a normalisation: still the parameter's value
                self.reset = server_args
                if port_args:
                    self.reset = None
        """).classes
    assert cls.attributes == {
        "server_args": TypeRef(names=["ServerArgs"]),
        "model_config": TypeRef(names=["ModelConfig"]),
        "top_k": TypeRef(names=["int"]),
    }


# --- imports ------------------------------------------------------------------------------------


def test_imports_at_module_level_and_under_type_checking():
    found = facts("""
        import vllm.envs as envs
        from vllm.config import CacheConfig as CC
        from .cache import MambaCacheMode
        if TYPE_CHECKING:
            from ..vllm import VllmConfig

        def later():
            from elsewhere import Ignored
        """)
    assert found.imports == [
        Import(name="envs", module="vllm.envs"),
        Import(name="CC", module="vllm.config", attr="CacheConfig"),
        Import(name="MambaCacheMode", module="cache", level=1, attr="MambaCacheMode"),
        Import(name="VllmConfig", module="vllm", level=2, attr="VllmConfig"),
    ]


# --- flags: (case, parser source, expected (options, dest, sets, argsClass, other facts)) ---


def only_flag(source: str, **wanted):
    flags = facts(source).flags
    assert len(flags) == 1, flags
    flag = flags[0]
    return {key: getattr(flag, key) for key in wanted}, wanted


FLAG_FORMS = [
    (
        "get_kwargs idiom (vLLM)",
        """
        def add_cli_args(parser):
            cache_kwargs = get_kwargs(CacheConfig)
            group = parser.add_argument_group("cache")
            group.add_argument("--mamba-cache-mode", **cache_kwargs["mamba_cache_mode"])
        """,
        dict(
            options=["--mamba-cache-mode"],
            dest="mamba_cache_mode",
            sets=FieldRef(cls="CacheConfig", field="mamba_cache_mode"),
            argsClass=None,
        ),
    ),
    (
        "get_kwargs inside a dict with overrides",
        """
        def add_cli_args(parser):
            cache_kwargs = get_kwargs(CacheConfig)
            parser.add_argument("--enable-prefix-caching",
                                **{**cache_kwargs["enable_prefix_caching"], "default": None,
                                   "help": "Whether to cache prefixes."})
        """,
        dict(
            sets=FieldRef(cls="CacheConfig", field="enable_prefix_caching"),
            default="None",
            help="Whether to cache prefixes.",
        ),
    ),
    (
        "one field's kwargs bound to a name",
        """
        def add_cli_args(parser):
            logging_kwargs = get_kwargs(VllmConfig)["logging_config"]
            logging_kwargs["default"] = None
            parser.add_argument("--logging-config", **logging_kwargs)
        """,
        dict(sets=FieldRef(cls="VllmConfig", field="logging_config")),
    ),
    (
        "get_kwargs(cls) in a classmethod is its class",
        """
        class FrontendArgs:
            @classmethod
            def add_cli_args(cls, parser):
                kwargs = get_kwargs(cls)
                parser.add_argument("--port", **kwargs["port"])
        """,
        dict(sets=FieldRef(cls="FrontendArgs", field="port"), argsClass="FrontendArgs"),
    ),
    (
        "default=Args.x idiom (SGLang)",
        """
        class ServerArgs:
            @staticmethod
            def add_cli_args(parser):
                parser.add_argument(
                    "--disaggregation-mode",
                    type=str,
                    default=ServerArgs.disaggregation_mode,
                    choices=["null", "prefill", "decode"],
                    help='Only used for PD disaggregation. "prefill" for prefill-only.',
                )
        """,
        dict(
            options=["--disaggregation-mode"],
            dest="disaggregation_mode",
            type="str",
            default="ServerArgs.disaggregation_mode",
            choices=["null", "prefill", "decode"],
            sets=FieldRef(cls="ServerArgs", field="disaggregation_mode"),
            argsClass="ServerArgs",
            help='Only used for PD disaggregation. "prefill" for prefill-only.',
        ),
    ),
    (
        "explicit dest and several option strings",
        """
        def add(parser):
            parser.add_argument("--gpu-memory-utilization", "--device-memory-utilization",
                                dest="gpu_memory_utilization", type=float)
        """,
        dict(
            options=["--gpu-memory-utilization", "--device-memory-utilization"],
            dest="gpu_memory_utilization",
            type="float",
        ),
    ),
    (
        "dest derived from the first long option",
        """
        def add(parser):
            parser.add_argument("-q", "--quantization-method", action="store_true")
        """,
        dict(dest="quantization_method", action="store_true"),
    ),
    (
        "choices from a constant or get_args of an alias",
        """
        def add(parser):
            parser.add_argument("--log-level", choices=get_args(LogLevel))
        """,
        dict(choices=None, choicesFrom="LogLevel"),
    ),
    (
        "a local add_argument wrapper",
        """
        class SamplingParams:
            @staticmethod
            def add_cli_args(parser):
                def add_argument(*names, **kwargs):
                    return parser.add_argument(*names, **kwargs)
                add_argument("--num-frames", type=int, default=SamplingParams.num_frames)
        """,
        dict(sets=FieldRef(cls="SamplingParams", field="num_frames")),
    ),
]


@pytest.mark.parametrize(("case", "source", "wanted"), FLAG_FORMS, ids=[c[0] for c in FLAG_FORMS])
def test_flag_form(case, source, wanted):
    got, wanted = only_flag(source, **wanted)
    assert got == wanted


def test_a_loop_over_a_classs_kwargs_adds_one_flag_per_field():
    (flag,) = facts("""
        class BaseFrontendArgs:
            @classmethod
            def add_cli_args(cls, parser):
                frontend_kwargs = get_kwargs(cls)
                frontend_kwargs = cls._customize(frontend_kwargs)
                for key, value in frontend_kwargs.items():
                    extra = value.pop("flags", [])
                    parser.add_argument(*extra, f"--{key.replace('_', '-')}", **value)
        """).flags
    assert (flag.options, flag.sets, flag.eachField, flag.argsClass) == (
        [],
        FieldRef(cls="BaseFrontendArgs", field="*"),
        "dashed",
        "BaseFrontendArgs",
    )


def test_help_keeps_the_literal_parts():
    flags = facts("""
        HELP = "Use the cache."
        def add(parser):
            parser.add_argument("--a", help="First " + f"{NAME} second.")
            parser.add_argument("--b", help=HELP)
            parser.add_argument("--c", help=describe())
        """).flags
    assert [f.help for f in flags] == ["First {NAME} second.", "Use the cache.", None]


def test_args_class_inferred_from_most_defaults():
    flags = facts("""
        def add_cli_args(parser):
            parser.add_argument("--a", default=ServerArgs.a)
            parser.add_argument("--b", default=ServerArgs.b)
            parser.add_argument("--c", action="store_true")
        """).flags
    assert [(f.dest, f.argsClass) for f in flags] == [
        ("a", "ServerArgs"),
        ("b", "ServerArgs"),
        ("c", "ServerArgs"),
    ]


def test_file_without_add_argument_has_no_flags():
    assert facts("def f(parser):\n    parser.parse_args()\n").flags == []


# --- references: (guard or message, chains read) ---------------------------------------------

REFERENCES = [
    ('self.cache_config.mamba_cache_mode == "all"', ["self.cache_config.mamba_cache_mode"]),
    ("self.kv_transfer_config is not None", ["self.kv_transfer_config"]),
    ("not self.model.startswith('x')", ["self.model"]),
    ("len(self.items) > cfg.limit", ["self.items", "cfg.limit"]),
    ("self.layers[0].size < 1", ["self.layers"]),
    ("mode == 'x'", ["mode"]),
    # a getattr with a name reads the attribute it fetches
    ("getattr(self.hf_config, 'n', None)", ["self.hf_config.n"]),
    ('getattr(args, "grpc_port", None) is not None', ["args.grpc_port"]),
    ("getattr(self, name) > 1", ["self", "name"]),
    ("self.check()", ["self"]),
]


@pytest.mark.parametrize(("guard", "chains"), REFERENCES, ids=[c[0] for c in REFERENCES])
def test_references_of_a_guard(guard, chains):
    assert [r.expr for r in references([guard], "")] == chains


PLACEHOLDERS = [
    ("unknown mode {cfg.mode!r}", ["cfg.mode"]),
    ("value {x:.2f} and {d['k']}", ["x", "d['k']"]),
    ("size {self.size!r:>10}", ["self.size"]),
    ("braces around prose {see the docs} and a lone {", []),
    ("nested braces {f(a, {b})}", ["f(a, {b})"]),
    ("doubled braces are literal: expected {{x}}", []),
    ("an optional piece {? (equivalent to {x})} and a repeat {* {name}}", ["x", "name"]),
    ("one of several words too {?large|small}", []),
]


@pytest.mark.parametrize(("message", "exprs"), PLACEHOLDERS, ids=[c[0] for c in PLACEHOLDERS])
def test_message_placeholders(message, exprs):
    assert part_expressions(message) == exprs


def test_references_join_guards_and_message_first_seen_first():
    found = references(["self.a is None", "self.b"], "{self.b} and {self.c}")
    assert found == [
        Reference(root="self", attrs=("a",)),
        Reference(root="self", attrs=("b",)),
        Reference(root="self", attrs=("c",)),
    ]


# --- function scopes ------------------------------------------------------------------------------


def test_scope_of_a_method_with_parameters_and_locals():
    scope = function_scope(
        textwrap.dedent("""
        def _verify(self, vllm_config: "VllmConfig", args: argparse.Namespace, n: int, raw):
            cfg = self.cache_config
            model = vllm_config.model_config
            mode = self.a
            mode = self.b
            args_copy = args
        """)
    )
    assert scope.params == ["self", "vllm_config", "args", "n", "raw"]
    assert scope.bindings == {
        "vllm_config": Binding(type=TypeRef(names=["VllmConfig"])),
        "args": Binding(type=TypeRef(names=["argparse.Namespace"])),
        "n": Binding(type=TypeRef(names=["int"])),
        "cfg": Binding(chain=Reference(root="self", attrs=("cache_config",))),
        "model": Binding(chain=Reference(root="vllm_config", attrs=("model_config",))),
    }


def test_scope_binds_a_local_fetched_by_getattr():
    scope = function_scope(
        textwrap.dedent("""
        def verify(model_config: "ModelConfig"):
            hf_config = model_config.hf_config
            pooling = getattr(hf_config, "pooling", None)
            layer = getattr(model_config, name)
            size = len(hf_config.sizes)
        """)
    )
    assert scope.bindings["pooling"] == Binding(
        chain=Reference(root="hf_config", attrs=("pooling",))
    )
    assert "layer" not in scope.bindings and "size" not in scope.bindings


def test_scope_of_a_field_validator_binds_its_value():
    scope = function_scope(
        textwrap.dedent("""
        @field_validator("mamba_cache_mode")
        @classmethod
        def check_mode(cls, value):
            return value
        """)
    )
    assert scope.bindings == {
        "value": Binding(chain=Reference(root="cls", attrs=("mamba_cache_mode",)))
    }


def test_scope_of_an_unannotated_args_parameter():
    scope = function_scope("def validate_args(args):\n    pass\n")
    assert scope.bindings == {"args": Binding(parsed=True)}


def test_static_method_has_no_receiver():
    assert function_scope("@staticmethod\ndef check(x):\n    pass\n").static is True


def test_validators_scopes_kept_when_the_tree_is_given():
    source = "class C:\n    def _check(self, cfg: C):\n        pass\n"
    tree = ast.parse(source)
    method = tree.body[0].body[0]
    found = file_settings(source, tree, {"C._check": method})
    assert found.scopes["C._check"].bindings == {"cfg": Binding(type=TypeRef(names=["C"]))}


# --- outline and sentences ------------------------------------------------------------------------


def test_outline_is_a_byte_scan():
    outline = outline_of(
        b"class A:\n    class B(C):\n        pass\nx = 'class D'\nparser.add_argument('--x')\n"
    )
    assert (outline.classes, outline.parser) == (["A", "B"], True)


FIRST_SENTENCES = [
    ("Size of a block. Must be a power of two.", "Size of a block."),
    ("Use e.g. fp8 or i.e. half. Then more.", "Use e.g. fp8 or i.e. half."),
    ("The dtype, torch.float16 by default. Other.", "The dtype, torch.float16 by default."),
    ("First line\ncontinues here.\n\nSecond paragraph.", "First line continues here."),
    ("No full stop", "No full stop"),
    ("", None),
]


@pytest.mark.parametrize(("text", "sentence"), FIRST_SENTENCES, ids=[c[0] for c in FIRST_SENTENCES])
def test_first_sentence(text, sentence):
    assert first_sentence(text) == sentence


def test_derived_attributes_of_init():
    (cls,) = facts("""
        class Processor:
            def __init__(self, vllm_config: VllmConfig, n, size: int | None = None):
                self.vllm_config = vllm_config
                self.model_config = model_config = vllm_config.model_config
                self.max_len = self.model_config.max_model_len
                self.width = n.width
                self._private = vllm_config.cache_config
                self.mode = vllm_config.mode
                if size:
                    self.mode = "fixed"
        """).classes
    assert cls.derived == {
        "model_config": Derived(cls="VllmConfig", attrs=["model_config"]),
        "max_len": Derived(attrs=["model_config", "max_model_len"]),
    }
