"""A small repository with both idioms of a settings model: `engine/` builds its parser from
its config classes (`get_kwargs(CacheConfig)`, as vLLM does) and `server/` spells each flag
out with `default=ServerArgs.x` (as SGLang does). Written by hand for the settings tests."""

from __future__ import annotations

from pathlib import Path

from tests.git_fixtures import commit, git

ENGINE_UTILS = '''\
from dataclasses import dataclass


def config(cls):
    """Make a config class: a dataclass whose fields are documented by the string after them."""
    return dataclass(cls)
'''

ENGINE_CACHE = '''\
from dataclasses import field
from typing import Literal

from engine.config.utils import config

MambaCacheMode = Literal["none", "all", "align"]
CacheDType = Literal["auto", "fp8", "fp8_e5m2"]


@config
class CacheConfig:
    """Configuration for the KV cache."""

    block_size: int = 16
    """Size of a cache block in number of tokens. Must be a power of two."""
    gpu_memory_utilization: float = 0.9
    """The fraction of GPU memory to use for the model executor."""
    cache_dtype: CacheDType = "auto"
    """Data type for the KV cache."""
    mamba_cache_mode: MambaCacheMode = "none"
    """The cache strategy for Mamba layers."""
    enable_prefix_caching: bool = False
    """Whether to enable prefix caching."""
    num_gpu_blocks: int | None = field(default=None, init=False)
    """Computed from the memory profile."""

    def __post_init__(self) -> None:
        if self.block_size <= 0:
            raise ValueError(f"block_size must be positive, got {self.block_size}")
        if self.gpu_memory_utilization > 1:
            raise ValueError("gpu_memory_utilization must be at most 1")
        if self.enable_prefix_caching and self.mamba_cache_mode == "all":
            raise ValueError("prefix caching does not support mamba_cache_mode all")
'''

ENGINE_KV_TRANSFER = '''\
from typing import Literal

from engine.config.utils import config

KVRole = Literal["kv_producer", "kv_consumer", "kv_both"]


@config
class KVTransferConfig:
    """Configuration for distributed KV cache transfer."""

    kv_connector: str | None = None
    """The connector that moves KV caches between instances."""
    kv_role: KVRole | None = None
    """Whether this instance produces KV caches, consumes them, or both."""

    def __post_init__(self) -> None:
        if self.kv_connector is not None and self.kv_role is None:
            raise ValueError("kv_role must be set when a kv_connector is given")
'''

ENGINE_SPECULATIVE = '''\
from engine.config.utils import config


@config
class SpeculativeConfig:
    """Configuration for speculative decoding."""

    num_speculative_tokens: int = 0
    """The number of tokens to propose per step."""
'''

ENGINE_CONFIG_INIT = """\
from engine.config.cache import CacheConfig, MambaCacheMode
from engine.config.kv_transfer import KVTransferConfig
from engine.config.speculative import SpeculativeConfig
from engine.config.engine import EngineConfig

__all__ = ["CacheConfig", "EngineConfig", "KVTransferConfig", "MambaCacheMode",
           "SpeculativeConfig"]
"""

ENGINE_CONFIG = '''\
from dataclasses import field

from engine.config.cache import CacheConfig
from engine.config.kv_transfer import KVTransferConfig
from engine.config.speculative import SpeculativeConfig
from engine.config.utils import config


@config
class EngineConfig:
    """Everything the engine is configured with."""

    cache_config: CacheConfig = field(default_factory=CacheConfig)
    """Cache configuration."""
    kv_transfer_config: KVTransferConfig | None = None
    """The configuration for distributed KV cache transfer."""
    speculative_config: SpeculativeConfig | None = None
    """The configuration for speculative decoding."""

    @property
    def num_speculative_tokens(self) -> int:
        if self.speculative_config is not None:
            return self.speculative_config.num_speculative_tokens
        return 0

    def __post_init__(self) -> None:
        cache = self.cache_config
        if self.kv_transfer_config is not None and cache.mamba_cache_mode == "all":
            raise ValueError("KV transfer does not support --mamba-cache-mode all")
        if self.num_speculative_tokens > 8:
            raise ValueError(
                f"at most 8 speculative tokens are supported, got {self.num_speculative_tokens}"
            )
'''

ENGINE_ARGS = '''\
import argparse
from dataclasses import dataclass, fields
from typing import Any

from engine.config import CacheConfig, EngineConfig, MambaCacheMode


def get_kwargs(cls: type) -> dict[str, dict[str, Any]]:
    """The argparse keyword arguments of each field of a config class."""
    return {f.name: {"default": f.default} for f in fields(cls)}


@dataclass
class EngineArgs:
    """The arguments of the engine, as parsed from the command line."""

    block_size: int = 16
    gpu_memory_utilization: float = 0.9
    mamba_cache_mode: MambaCacheMode | None = None
    enable_prefix_caching: bool = False

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cache_kwargs = get_kwargs(CacheConfig)
        cache_group = parser.add_argument_group("CacheConfig")
        cache_group.add_argument("--block-size", **cache_kwargs["block_size"])
        cache_group.add_argument(
            "--gpu-memory-utilization",
            "--device-memory-utilization",
            dest="gpu_memory_utilization",
            **cache_kwargs["gpu_memory_utilization"],
        )
        cache_group.add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])
        cache_group.add_argument(
            "--mamba-cache-mode", **{**cache_kwargs["mamba_cache_mode"], "default": None}
        )
        cache_group.add_argument(
            "--enable-prefix-caching", **cache_kwargs["enable_prefix_caching"]
        )
        engine_kwargs = get_kwargs(EngineConfig)
        parser.add_argument("--kv-transfer-config", **engine_kwargs["kv_transfer_config"])
        parser.add_argument("--speculative-config", **engine_kwargs["speculative_config"])
        return parser

    def _validate_args(self) -> None:
        if self.mamba_cache_mode == "align" and not self.enable_prefix_caching:
            raise ValueError("--mamba-cache-mode align needs --enable-prefix-caching")
'''

SERVER_ARGS = '''\
import argparse
import dataclasses
from typing import Literal, Optional

ATTENTION_BACKENDS = ["triton", "flashinfer", "fa3"]


@dataclasses.dataclass
class ServerArgs:
    """The arguments of the server."""

    model_path: str
    tp_size: int = 1  # tensor parallel size
    attention_backend: Optional[str] = None
    disaggregation_mode: Literal["null", "prefill", "decode"] = "null"
    enable_dp_attention: bool = False

    def __post_init__(self) -> None:
        self._validate_disaggregation()
        if self.enable_dp_attention and self.tp_size < 2:
            raise ValueError("--enable-dp-attention needs --tp-size 2 or more")

    def _validate_disaggregation(self) -> None:
        if self.disaggregation_mode == "decode" and self.attention_backend == "triton":
            raise ValueError(
                f"disaggregation mode {self.disaggregation_mode} does not support triton"
            )

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--model-path",
            "--model",
            type=str,
            help="The path of the model weights. A local folder or a Hugging Face repo ID.",
            required=True,
        )
        parser.add_argument(
            "--tp-size",
            "--tensor-parallel-size",
            type=int,
            default=ServerArgs.tp_size,
            help="The tensor parallelism size.",
        )
        parser.add_argument(
            "--attention-backend",
            type=str,
            choices=ATTENTION_BACKENDS,
            default=ServerArgs.attention_backend,
            help="Choose the kernels for attention layers.",
        )
        parser.add_argument(
            "--disaggregation-mode",
            type=str,
            default=ServerArgs.disaggregation_mode,
            choices=["null", "prefill", "decode"],
            help='Only used for PD disaggregation. "prefill" for a prefill-only server.',
        )
        parser.add_argument(
            "--enable-dp-attention",
            action="store_true",
            help="Enable data parallelism for attention.",
        )


def check_server_args(args: argparse.Namespace) -> None:
    if args.tp_size % 2 and args.enable_dp_attention:
        raise ValueError("--tp-size must be even with --enable-dp-attention")
'''

FILES = {
    "engine/__init__.py": "",
    "engine/config/__init__.py": ENGINE_CONFIG_INIT,
    "engine/config/utils.py": ENGINE_UTILS,
    "engine/config/cache.py": ENGINE_CACHE,
    "engine/config/kv_transfer.py": ENGINE_KV_TRANSFER,
    "engine/config/speculative.py": ENGINE_SPECULATIVE,
    "engine/config/engine.py": ENGINE_CONFIG,
    "engine/arg_utils.py": ENGINE_ARGS,
    "server/__init__.py": "",
    "server/server_args.py": SERVER_ARGS,
}


def make_settings_repo(root: Path) -> tuple[Path, str]:
    """The fixture as a git repository at `root` (one commit); its path and the commit."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    sha = commit(root, FILES, "settings fixture")
    return root, sha
