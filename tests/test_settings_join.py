"""The settings model of a tree and each site's settings (pipeline/mine/settings/): one case
table per resolution step and per way a flag is linked to its field, then the fixture
repository with both parser idioms through `vmine extract` and `vmine run`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from extractors.facts import Rules
from extractors.settings import file_settings, outline_of
from extractors.sites import extract_file
from pipeline.cli import main
from pipeline.dataset.models import Setting
from pipeline.dataset.reader import load_dataset
from pipeline.mine.settings.chains import RESOLVERS
from pipeline.mine.settings.join import SettingsJoin, resolve_rounds
from pipeline.mine.settings.modules import ModuleIndex
from tests.settings_fixture import make_settings_repo


def resolve_tree(files: dict[str, str], site_file: str, full: bool = False) -> list[list]:
    """The settings of every site of `site_file`, joined over `files` (loaded on demand, as
    the pipeline loads them), each as (expr, class, field, flags), or whole with `full`."""
    texts = {path: textwrap.dedent(text) for path, text in files.items()}
    outlines = {path: outline_of(text.encode()) for path, text in texts.items()}
    loaded = {}

    def load(paths: set[str]) -> None:
        for path in paths:
            loaded[path] = file_settings(texts[path])

    load({site_file} | {p for p, o in outlines.items() if o.parser})
    extraction = extract_file(site_file, texts[site_file], Rules())
    assert extraction.skipped is None and extraction.sites, extraction
    found = resolve_rounds(
        [(site_file, s) for s in extraction.sites], outlines, ModuleIndex(texts), loaded.get, load
    )
    if full:
        return found
    return [[(s.expr, s.cls, s.field, s.flags) for s in settings] for settings in found]


CACHE = """
    from dataclasses import dataclass, field
    from typing import Literal

    MambaCacheMode = Literal["none", "all"]

    @dataclass
    class CacheConfig:
        block_size: int = 16
        mamba_cache_mode: MambaCacheMode = "none"
        num_gpu_blocks: int | None = field(default=None, init=False)
    """


def cache_with(method: str, header: str = "@dataclass\nclass CacheConfig:") -> str:
    """CACHE with a method added to CacheConfig (and its class line replaced, if asked)."""
    text = textwrap.dedent(CACHE).replace("@dataclass\nclass CacheConfig:", header)
    return text + textwrap.indent(textwrap.dedent(method), "    ")


# (case, files, the file with the site, settings of each of its sites)
RESOLUTION = [
    (
        "self is the enclosing class",
        {
            "pkg/cache.py": cache_with("""
            def __post_init__(self):
                if self.block_size <= 0:
                    raise ValueError("block_size must be positive")
        """),
        },
        "pkg/cache.py",
        [[("self.block_size", "CacheConfig", "block_size", [])]],
    ),
    (
        "a field annotated with a class of another file, through an import",
        {
            "pkg/__init__.py": "",
            "pkg/cache.py": CACHE,
            "pkg/engine.py": """
            from dataclasses import dataclass
            from pkg.cache import CacheConfig

            @dataclass
            class EngineConfig:
                cache_config: CacheConfig | None = None

                def __post_init__(self):
                    if self.cache_config.mamba_cache_mode == "all":
                        raise ValueError("mamba_cache_mode all is not supported")
        """,
        },
        "pkg/engine.py",
        [[("self.cache_config.mamba_cache_mode", "CacheConfig", "mamba_cache_mode", [])]],
    ),
    (
        "Optional[X], a re-export in __init__ and a relative import",
        {
            "pkg/__init__.py": "",
            "pkg/config/__init__.py": "from .cache import CacheConfig\n",
            "pkg/config/cache.py": CACHE,
            "pkg/engine.py": """
            from typing import Optional
            from .config import CacheConfig

            class EngineConfig(BaseModel):
                cache: Optional[CacheConfig] = None

                @model_validator(mode="after")
                def _check(self):
                    if self.cache.block_size > 64:
                        raise ValueError("block_size must be at most 64")
        """,
        },
        "pkg/engine.py",
        [[("self.cache.block_size", "CacheConfig", "block_size", [])]],
    ),
    (
        "a local bound once to a chain, and one bound twice",
        {
            "pkg/cache.py": CACHE,
            "pkg/engine.py": """
            from pkg.cache import CacheConfig

            class EngineConfig(BaseModel):
                cache_config: CacheConfig

                def _validate(self):
                    cfg = self.cache_config
                    other = self.cache_config
                    other = None
                    if cfg.block_size > 64 and other.block_size:
                        raise ValueError("block_size must be at most 64")
        """,
        },
        "pkg/engine.py",
        [[("cfg.block_size", "CacheConfig", "block_size", [])]],
    ),
    (
        "a parameter annotated with a class (a string annotation too)",
        {
            "pkg/cache.py": CACHE,
            "pkg/worker.py": """
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from pkg.cache import CacheConfig

            def check_worker(cache: "CacheConfig", n: int) -> None:
                if n > cache.block_size:
                    raise ValueError(f"{n} exceeds {cache.block_size}")
        """,
        },
        "pkg/worker.py",
        [[("cache.block_size", "CacheConfig", "block_size", [])]],
    ),
    (
        "a class no import names, defined in one file only",
        {
            "pkg/cache.py": CACHE,
            "pkg/worker.py": """
            from pkg.everything import *

            def check_worker(cache: CacheConfig) -> None:
                if cache.block_size > 64:
                    raise ValueError("too large")
        """,
        },
        "pkg/worker.py",
        [[("cache.block_size", "CacheConfig", "block_size", [])]],
    ),
    (
        "a class name two files define is not guessed",
        {
            "pkg/cache.py": CACHE,
            "pkg/other.py": "class CacheConfig:\n    block_size: int = 8\n",
            "pkg/worker.py": """
            def check_worker(cache: CacheConfig) -> None:
                if cache.block_size > 64:
                    raise ValueError("too large")
        """,
        },
        "pkg/worker.py",
        [[]],
    ),
    (
        "a class imported from outside the tree is not guessed",
        {
            "pkg/cache.py": CACHE,
            "pkg/worker.py": """
            from transformers import CacheConfig

            def check_worker(cache: CacheConfig) -> None:
                if cache.block_size > 64:
                    raise ValueError("too large")
        """,
        },
        "pkg/worker.py",
        [[]],
    ),
    (
        "a property that returns a chain is followed once",
        {
            "pkg/engine.py": """
            from dataclasses import dataclass

            @dataclass
            class SpeculativeConfig:
                num_speculative_tokens: int = 0

            @dataclass
            class EngineConfig:
                speculative_config: SpeculativeConfig | None = None

                @property
                def num_speculative_tokens(self) -> int:
                    return self.speculative_config.num_speculative_tokens

                @property
                def twice(self) -> int:
                    return self.num_speculative_tokens

                def __post_init__(self):
                    if self.num_speculative_tokens > 8 or self.twice:
                        raise ValueError("at most 8 speculative tokens")
        """,
        },
        "pkg/engine.py",
        [[("self.num_speculative_tokens", "SpeculativeConfig", "num_speculative_tokens", [])]],
    ),
    (
        "an attribute __init__ sets from an annotated parameter",
        {
            "srv/server_args.py": """
            import dataclasses

            @dataclasses.dataclass
            class ServerArgs:
                enable_lora: bool = False
        """,
            "srv/manager.py": """
            from srv.server_args import ServerArgs

            class TokenizerManager:
                def __init__(self, server_args: ServerArgs):
                    self.server_args = server_args

                def _validate_request(self, request):
                    if request.lora_path and not self.server_args.enable_lora:
                        raise ValueError("LoRA is not enabled")
        """,
        },
        "srv/manager.py",
        [[("self.server_args.enable_lora", "ServerArgs", "enable_lora", [])]],
    ),
    (
        "a field a base class declares",
        {
            "pkg/cache.py": cache_with("""
        class HybridCacheConfig(CacheConfig):
            def _check_hybrid(self):
                if self.mamba_cache_mode == "none":
                    raise ValueError("hybrid models need a mamba cache")
        """),
        },
        "pkg/cache.py",
        [[("self.mamba_cache_mode", "CacheConfig", "mamba_cache_mode", [])]],
    ),
    (
        "a field the constructor does not take is no setting",
        {
            "pkg/cache.py": cache_with("""
            def __post_init__(self):
                if self.num_gpu_blocks == 0:
                    raise ValueError("no GPU blocks")
        """),
        },
        "pkg/cache.py",
        [[]],
    ),
    (
        "a field validator's value is its field",
        {
            "pkg/cache.py": cache_with(
                header="class CacheConfig(BaseModel):",
                method="""
            @field_validator("block_size")
            @classmethod
            def check_block_size(cls, value):
                if value & (value - 1):
                    raise ValueError("block_size must be a power of two")
                return value
        """,
            ),
        },
        "pkg/cache.py",
        [[("value", "CacheConfig", "block_size", [])]],
    ),
    (
        "a closure reads its method's self",
        {
            "pkg/cache.py": cache_with("""
            def __post_init__(self):
                def check():
                    if self.block_size < 1:
                        raise ValueError("block_size must be positive")
                check()
        """),
        },
        "pkg/cache.py",
        [[("self.block_size", "CacheConfig", "block_size", [])]],
    ),
]


@pytest.mark.parametrize(
    ("case", "files", "site_file", "expected"), RESOLUTION, ids=[c[0] for c in RESOLUTION]
)
def test_resolution_step(case, files, site_file, expected):
    assert resolve_tree(files, site_file) == expected


# --- flags: how each is linked to the field it sets ------------------------------------------

ARGS = """
    import argparse
    from dataclasses import dataclass
    from pkg.cache import CacheConfig

    def get_kwargs(cls):
        return {}

    @dataclass
    class EngineArgs:
        block_size: int = 16
        seed: int = 0

        @staticmethod
        def add_cli_args(parser):
            cache_kwargs = get_kwargs(CacheConfig)
            parser.add_argument("--block-size", **cache_kwargs["block_size"])
            parser.add_argument("--mamba-cache-mode", **{**cache_kwargs["mamba_cache_mode"],
                                                         "default": None})
            parser.add_argument("--seed", type=int, default=0)

        def _validate(self):
            if self.block_size > 64 or self.seed < 0:
                raise ValueError("bad engine arguments")
    """

FLAG_LINKS = [
    (
        "get_kwargs(Config) in another file sets the config's field",
        {
            "pkg/cache.py": cache_with("""
            def __post_init__(self):
                if self.mamba_cache_mode == "all" and self.block_size > 16:
                    raise ValueError("mamba_cache_mode all needs a small block_size")
        """),
            "pkg/arg_utils.py": ARGS,
        },
        "pkg/cache.py",
        [
            [
                (
                    "self.mamba_cache_mode",
                    "CacheConfig",
                    "mamba_cache_mode",
                    ["--mamba-cache-mode"],
                ),
                ("self.block_size", "CacheConfig", "block_size", ["--block-size"]),
            ]
        ],
    ),
    (
        "the parser's args class gets the field named dest too",
        {
            "pkg/cache.py": CACHE,
            "pkg/arg_utils.py": ARGS,
        },
        "pkg/arg_utils.py",
        [
            [
                ("self.block_size", "EngineArgs", "block_size", ["--block-size"]),
                ("self.seed", "EngineArgs", "seed", ["--seed"]),
            ]
        ],
    ),
    (
        "a parsed Namespace reads the flags by dest",
        {
            "tool/bench.py": """
            import argparse

            def add_cli_args(parser):
                parser.add_argument("--num-prompts", type=int, default=10, help="How many.")

            def validate_args(args):
                if args.num_prompts < 1:
                    raise ValueError("--num-prompts must be positive")
        """,
        },
        "tool/bench.py",
        [[("args.num_prompts", None, "num_prompts", ["--num-prompts"])]],
    ),
    (
        "a config passed as one JSON flag: its fields come by that flag",
        {
            "pkg/engine.py": """
            from dataclasses import dataclass

            @dataclass
            class KVTransferConfig:
                kv_role: str | None = None

                def __post_init__(self):
                    if self.kv_role == "none":
                        raise ValueError("kv_role none is not a role")

            @dataclass
            class EngineConfig:
                kv_transfer_config: KVTransferConfig | None = None

                @staticmethod
                def add_cli_args(parser):
                    kwargs = get_kwargs(EngineConfig)
                    parser.add_argument("--kv-transfer-config", **kwargs["kv_transfer_config"])
        """,
        },
        "pkg/engine.py",
        [
            [
                ("self.kv_role", "KVTransferConfig", "kv_role", []),
                ("self", "EngineConfig", "kv_transfer_config", ["--kv-transfer-config"]),
            ]
        ],
    ),
    (
        "a parser that reads dotted keys: the field by its own dotted flag",
        {
            "pkg/engine.py": """
            from dataclasses import dataclass

            @dataclass
            class KVTransferConfig:
                kv_role: str | None = None

                def __post_init__(self):
                    if self.kv_role == "none":
                        raise ValueError("kv_role none is not a role")

            @dataclass
            class EngineConfig:
                kv_transfer_config: KVTransferConfig | None = None

                @staticmethod
                def add_cli_args(parser):
                    kwargs = get_kwargs(EngineConfig)
                    parser.add_argument("--kv-transfer-config", **kwargs["kv_transfer_config"])
        """,
            "pkg/argparse_utils.py": """
            from argparse import ArgumentParser

            class FlexibleArgumentParser(ArgumentParser):
                def parse_args(self, args=None, namespace=None):
                    for arg in args or []:
                        key, *keys = arg.split(".")
                    return super().parse_args(args, namespace)
        """,
        },
        "pkg/engine.py",
        [
            [
                ("self.kv_role", "KVTransferConfig", "kv_role", ["--kv-transfer-config.kv_role"]),
                ("self", "EngineConfig", "kv_transfer_config", ["--kv-transfer-config"]),
            ]
        ],
    ),
]


@pytest.mark.parametrize(
    ("case", "files", "site_file", "expected"), FLAG_LINKS, ids=[c[0] for c in FLAG_LINKS]
)
def test_flag_link(case, files, site_file, expected):
    assert resolve_tree(files, site_file) == expected


FRONTEND = """
    import argparse
    from dataclasses import dataclass

    @dataclass
    class BaseFrontendArgs:
        @classmethod
        def add_cli_args(cls, parser):
            kwargs = get_kwargs(cls)
            for key, value in kwargs.items():
                parser.add_argument(f"--{key.replace('_', '-')}", **value)

    @dataclass
    class FrontendArgs(BaseFrontendArgs):
        grpc_port: int | None = None
        ssl_keyfile: str | None = None

        def __post_init__(self):
            if self.grpc_port == 0:
                raise ValueError("--grpc-port must not be 0")

    def validate_serve_args(args: argparse.Namespace) -> None:
        if args.ssl_keyfile and not args.grpc_port:
            raise ValueError("--ssl-keyfile needs --grpc-port")
    """


def test_a_loop_flags_every_field_of_the_class_and_its_subclasses():
    (fields, namespace) = resolve_tree({"srv/cli_args.py": FRONTEND}, "srv/cli_args.py")
    assert fields == [("self.grpc_port", "FrontendArgs", "grpc_port", ["--grpc-port"])]
    assert namespace == [
        ("args.ssl_keyfile", "FrontendArgs", "ssl_keyfile", ["--ssl-keyfile"]),
        ("args.grpc_port", "FrontendArgs", "grpc_port", ["--grpc-port"]),
    ]


def test_setting_facts_come_from_field_and_flag():
    files = {
        "srv/args.py": """
            import dataclasses
            from typing import Optional
            from srv.backends import BACKENDS

            @dataclasses.dataclass
            class ServerArgs:
                attention_backend: Optional[str] = None
                model_path: str = ModelConfig.model_path

                def __post_init__(self):
                    if self.attention_backend == "triton" and self.model_path:
                        raise ValueError("triton does not support this model")

                @staticmethod
                def add_cli_args(parser):
                    parser.add_argument("--attention-backend", choices=BACKENDS,
                                        default=ServerArgs.attention_backend,
                                        help="Choose the kernels. Some are faster.")

            @dataclasses.dataclass
            class ModelConfig:
                model_path: str = "facebook/opt-125m"
        """,
        "srv/backends.py": 'BACKENDS = ["triton", "flashinfer"]\n',
    }
    texts = {p: textwrap.dedent(t) for p, t in files.items()}
    loaded = {p: file_settings(t) for p, t in texts.items()}
    (site, *_) = extract_file("srv/args.py", texts["srv/args.py"], Rules()).sites
    (settings,) = resolve_rounds(
        [("srv/args.py", site)],
        {p: outline_of(t.encode()) for p, t in texts.items()},
        ModuleIndex(texts),
        loaded.get,
        lambda paths: None,
    )
    assert [s.model_dump() for s in settings] == [
        {
            "expr": "self.attention_backend",
            "class": "ServerArgs",
            "field": "attention_backend",
            "type": "Optional[str]",
            "default": "None",
            "choices": ["triton", "flashinfer"],
            "doc": "Choose the kernels.",
            "flags": ["--attention-backend"],
            "surface": "flag",
        },
        # a default taken from another class's field is that field's default
        {
            "expr": "self.model_path",
            "class": "ServerArgs",
            "field": "model_path",
            "type": "str",
            "default": '"facebook/opt-125m"',
            "choices": None,
            "doc": None,
            "flags": [],
            "surface": "code",
        },
    ]


def test_the_join_is_a_stage_that_returns_its_requests_round_by_round():
    # nothing is loaded but the site's file: the first round asks for the file that defines
    # the class; the join loads nothing itself, and the next round, with it, asks for nothing
    texts = {
        "pkg/__init__.py": "",
        "pkg/cache.py": textwrap.dedent(CACHE),
        "pkg/engine.py": textwrap.dedent("""
            from pkg.cache import CacheConfig

            def check(cache: CacheConfig) -> None:
                if cache.block_size > 64:
                    raise ValueError("too large")
        """),
    }
    loaded = {"pkg/engine.py": file_settings(texts["pkg/engine.py"])}
    (site,) = extract_file("pkg/engine.py", texts["pkg/engine.py"], Rules()).sites
    join = SettingsJoin(
        [("pkg/engine.py", site)],
        {p: outline_of(t.encode()) for p, t in texts.items()},
        ModuleIndex(texts),
        loaded.get,
    )
    assert join.round() == {"pkg/cache.py"}
    assert join.results == [[]]
    assert set(loaded) == {"pkg/engine.py"}
    loaded["pkg/cache.py"] = file_settings(texts["pkg/cache.py"])
    assert join.round() == frozenset()
    assert [(s.expr, s.cls, s.field) for s in join.results[0]] == [
        ("cache.block_size", "CacheConfig", "block_size")
    ]
    assert join.round() == frozenset()  # done: a further round asks for nothing


def test_a_new_kind_of_root_is_a_resolver_in_the_table():
    # the extension point of new surfaces: a resolver that claims `envs.X` answers for it,
    # and the chains it does not claim go on to the built-in resolvers
    text = textwrap.dedent("""
        import envs
        from dataclasses import dataclass

        @dataclass
        class CacheConfig:
            block_size: int = 16

            def __post_init__(self):
                if envs.VLLM_STRICT and self.block_size > 64:
                    raise ValueError("too large")
    """)
    claimed = []

    def environment(walk, ref, expr, where, depth):
        if ref.root != "envs":
            return None
        claimed.append(expr)
        field = ref.attrs[0]
        return [
            Setting(
                expr=expr,
                cls=None,
                field=field,
                type="bool",
                default=None,
                choices=None,
                doc=None,
                flags=[],
            )
        ]

    (site,) = extract_file("pkg/cache.py", text, Rules()).sites
    join = SettingsJoin(
        [("pkg/cache.py", site)],
        {"pkg/cache.py": outline_of(text.encode())},
        ModuleIndex(["pkg/cache.py"]),
        {"pkg/cache.py": file_settings(text)}.get,
        resolvers=(environment, *RESOLVERS),
    )
    assert join.round() == frozenset()
    assert claimed == ["envs.VLLM_STRICT"]
    assert [(s.expr, s.cls, s.field) for s in join.results[0]] == [
        ("envs.VLLM_STRICT", None, "VLLM_STRICT"),
        ("self.block_size", "CacheConfig", "block_size"),
    ]


def test_module_index_knows_files_under_a_source_root():
    index = ModuleIndex(
        [
            "python/sglang/__init__.py",
            "python/sglang/srt/__init__.py",
            "python/sglang/srt/server_args.py",
            "setup.py",
            "tools/typing.py",
            "tools/launch.py",
        ]
    )
    assert index.path_of("sglang.srt.server_args") == "python/sglang/srt/server_args.py"
    assert index.path_of("python.sglang.srt.server_args") == "python/sglang/srt/server_args.py"
    assert index.path_of("sglang") == "python/sglang/__init__.py"
    assert index.path_of("setup") == "setup.py"
    assert index.path_of("launch") == "tools/launch.py"  # a directory of scripts
    assert index.path_of("typing") is None  # such a script never shadows the standard library
    assert index.path_of("tools.typing") == "tools/typing.py"
    assert index.absolute("cache", 1, "vllm/config/model.py") == "vllm.config.cache"
    assert index.absolute("", 2, "vllm/config/model.py") == "vllm"


# --- the fixture repository, end to end --------------------------------------------------------


def _s(expr, cls, field, type_, default, choices, doc, flags, **extra):
    return {
        "expr": expr,
        "class": cls,
        "field": field,
        "type": type_,
        "default": default,
        "choices": choices,
        "doc": doc,
        "flags": flags,
        "surface": "flag" if flags else "code",
        **extra,
    }


MAMBA = ["none", "all", "align"]
CACHE_MODE = _s(
    "self.mamba_cache_mode",
    "CacheConfig",
    "mamba_cache_mode",
    "MambaCacheMode",
    '"none"',
    MAMBA,
    "The cache strategy for Mamba layers.",
    ["--mamba-cache-mode"],
)
PREFIX = _s(
    "self.enable_prefix_caching",
    "CacheConfig",
    "enable_prefix_caching",
    "bool",
    "False",
    None,
    "Whether to enable prefix caching.",
    ["--enable-prefix-caching"],
    action="BooleanOptionalAction",  # a splat of a bool field: `--x` and `--no-x`
)
TP = (
    "tp_size",
    "ServerArgs",
    "tp_size",
    "int",
    "1",
    None,
    "tensor parallel size",
    ["--tp-size", "--tensor-parallel-size"],
)
DP = (
    "enable_dp_attention",
    "ServerArgs",
    "enable_dp_attention",
    "bool",
    "False",
    None,
    "Enable data parallelism for attention.",
    ["--enable-dp-attention"],
)

FIXTURE_SETTINGS = {
    ("engine/arg_utils.py", "EngineArgs._validate_args"): [
        _s(
            "self.mamba_cache_mode",
            "EngineArgs",
            "mamba_cache_mode",
            "MambaCacheMode | None",
            "None",
            MAMBA,
            None,
            ["--mamba-cache-mode"],
        ),
        _s(
            "self.enable_prefix_caching",
            "EngineArgs",
            "enable_prefix_caching",
            "bool",
            "False",
            None,
            None,
            ["--enable-prefix-caching"],
            action="BooleanOptionalAction",
        ),
    ],
    ("engine/config/cache.py", 29): [
        _s(
            "self.block_size",
            "CacheConfig",
            "block_size",
            "int",
            "16",
            None,
            "Size of a cache block in number of tokens.",
            ["--block-size"],
        ),
    ],
    ("engine/config/cache.py", 31): [
        _s(
            "self.gpu_memory_utilization",
            "CacheConfig",
            "gpu_memory_utilization",
            "float",
            "0.9",
            None,
            "The fraction of GPU memory to use for the model executor.",
            ["--gpu-memory-utilization", "--device-memory-utilization"],
        ),
    ],
    ("engine/config/cache.py", 33): [PREFIX, CACHE_MODE],
    ("engine/config/engine.py", 29): [
        _s(
            "self.kv_transfer_config",
            "EngineConfig",
            "kv_transfer_config",
            "KVTransferConfig | None",
            "None",
            None,
            "The configuration for distributed KV cache transfer.",
            ["--kv-transfer-config"],
        ),
        {**CACHE_MODE, "expr": "cache.mamba_cache_mode"},
    ],
    ("engine/config/engine.py", 31): [
        _s(
            "self.num_speculative_tokens",
            "SpeculativeConfig",
            "num_speculative_tokens",
            "int",
            "0",
            None,
            "The number of tokens to propose per step.",
            [],
        ),
        _s(
            "self.speculative_config",
            "EngineConfig",
            "speculative_config",
            "SpeculativeConfig | None",
            "None",
            None,
            "The configuration for speculative decoding.",
            ["--speculative-config"],
        ),
    ],
    ("engine/config/kv_transfer.py", 19): [
        _s(
            "self.kv_connector",
            "KVTransferConfig",
            "kv_connector",
            "str | None",
            "None",
            None,
            "The connector that moves KV caches between instances.",
            [],
        ),
        _s(
            "self",
            "EngineConfig",
            "kv_transfer_config",
            "KVTransferConfig | None",
            "None",
            None,
            "The configuration for distributed KV cache transfer.",
            ["--kv-transfer-config"],
        ),
        _s(
            "self.kv_role",
            "KVTransferConfig",
            "kv_role",
            "KVRole | None",
            "None",
            ["kv_producer", "kv_consumer", "kv_both"],
            "Whether this instance produces KV caches, consumes them, or both.",
            [],
        ),
    ],
    ("server/server_args.py", 21): [
        _s(f"self.{DP[0]}", *DP[1:], action="store_true"),
        _s(f"self.{TP[0]}", *TP[1:]),
    ],
    ("server/server_args.py", 25): [
        _s(
            "self.disaggregation_mode",
            "ServerArgs",
            "disaggregation_mode",
            'Literal["null", "prefill", "decode"]',
            '"null"',
            ["null", "prefill", "decode"],
            "Only used for PD disaggregation.",
            ["--disaggregation-mode"],
        ),
        _s(
            "self.attention_backend",
            "ServerArgs",
            "attention_backend",
            "Optional[str]",
            "None",
            ["triton", "flashinfer", "fa3"],
            "Choose the kernels for attention layers.",
            ["--attention-backend"],
        ),
    ],
    ("server/server_args.py", 68): [
        _s(f"args.{TP[0]}", *TP[1:]),
        _s(f"args.{DP[0]}", *DP[1:], action="store_true"),
    ],
}


@pytest.fixture
def settings_repo(tmp_path: Path) -> Path:
    return make_settings_repo(tmp_path / "engine")[0]


def test_extract_gives_each_site_its_settings(settings_repo: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "extract",
            str(settings_repo),
            "--repo-name",
            "acme/engine",
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
    )
    assert result.exit_code == 0, result.output
    sites = [json.loads(line) for line in result.stdout.splitlines()]
    got = {}
    for site in sites:
        key = (
            site["filePath"],
            site["qualname"] if site["filePath"].endswith("arg_utils.py") else site["lineNumber"],
        )
        got[key] = site["settings"]
    assert got == FIXTURE_SETTINGS


def test_settings_are_the_same_from_a_warm_cache(settings_repo: Path, tmp_path: Path) -> None:
    args = [
        "extract",
        str(settings_repo),
        "--repo-name",
        "acme/engine",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    cold = CliRunner().invoke(main, args)
    warm = CliRunner().invoke(main, args)
    assert "parsed=0" in warm.stderr.splitlines()[-1]
    assert warm.stdout == cold.stdout


def test_index_lines_carry_settings_and_an_older_index_still_loads(
    settings_repo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(settings_repo),
            "--repo-name",
            "acme/engine",
            "--llm",
            "offline",
            "-o",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--ci",
            "--command",
            "engine serve MODEL",
        ],
    )
    assert result.exit_code == 0, result.output
    (root,) = [p.parent for p in out.rglob("manifest.json")]
    lines = [json.loads(line) for line in (root / "index.jsonl").read_text().splitlines()]
    by_line = {(e["filePath"], e["lineNumber"]): e for e in lines}
    entry = by_line[("engine/config/cache.py", 33)]
    assert entry["settings"] == [PREFIX, CACHE_MODE]
    record = json.loads((root / "records" / f"{entry['id']}.json").read_text())["record"]
    assert record["exampleFix"] == (
        "# before\nengine serve MODEL --enable-prefix-caching --mamba-cache-mode all\n"
        "# after\nengine serve MODEL --enable-prefix-caching --mamba-cache-mode align"
    )
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["llm"]["promptVersion"] == "offline-13; command: engine serve MODEL"
    # a dataset written before settings existed: its index lines have none
    older = "".join(
        json.dumps({k: v for k, v in line.items() if k != "settings"}) + "\n" for line in lines
    )
    (root / "index.jsonl").write_text(older)
    assert all(entry.settings == [] for entry in load_dataset(root).entries)


def test_flags_no_idiom_links_are_linked_by_the_fields_name():
    files = {
        "pkg/messages.py": """
        from dataclasses import dataclass

        @dataclass
        class EngineConfig:
            quant_policy: int = 0
            dflash_block_size: int = 16

            def __post_init__(self):
                if self.quant_policy not in (0, 4, 8):
                    raise ValueError("bad policy")
                if self.dflash_block_size < 1:
                    raise ValueError("bad block size")
        """,
        "pkg/cli.py": """
        class ArgumentHelper:
            @staticmethod
            def quant_policy(parser):
                parser.add_argument("--quant-policy", type=int, default=0)

            @staticmethod
            def dflash(parser):
                parser.add_argument("--speculative-dflash-block-size", type=int, default=16)
        """,
    }
    assert resolve_tree(files, "pkg/messages.py") == [
        [("self.quant_policy", "EngineConfig", "quant_policy", ["--quant-policy"])],
        [
            (
                "self.dflash_block_size",
                "EngineConfig",
                "dflash_block_size",
                ["--speculative-dflash-block-size"],
            )
        ],
    ]
