"""A small pure-Python package, `acme`, written for verify's tests: one validator of each kind
that `vmine verify` calls, mined into a dataset, and importable from a folder of its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import make_git_repo

CONFIG = textwrap.dedent(
    """
    import argparse
    import dataclasses
    from typing import Literal

    from pydantic import BaseModel, field_validator, model_validator
    from pydantic.dataclasses import dataclass as pydantic_dataclass

    from acme import platform


    class ServerSettings(BaseModel):
        port: int = 8000
        mode: Literal["fast", "safe"] = "safe"
        workers: int = 1

        @field_validator("port")
        @classmethod
        def check_port(cls, value: int) -> int:
            if value < 1024:
                raise ValueError(f"port {value} is reserved; pick one above 1023")
            return value

        @model_validator(mode="after")
        def check_mode(self):
            if self.mode == "fast" and self.workers > 8:
                raise ValueError(f"fast mode takes at most 8 workers, got {self.workers}")
            return self


    @pydantic_dataclass
    class CacheSettings:
        block_size: int = 16
        swap_space: float = 4.0

        @field_validator("block_size")
        @classmethod
        def check_block_size(cls, value):
            if value % 8 != 0:
                raise ValueError(f"block_size must be a multiple of 8, got {value}")
            return value


    @dataclasses.dataclass
    class ParallelSettings:
        tensor_parallel_size: int = 1
        num_heads: int = 8
        backend: str | None = None

        def __post_init__(self):
            if self.backend is not None and self.backend not in ("mp", "ray"):
                raise ValueError(f"unknown backend {self.backend!r}")
            self._backend_ready()
            if self.num_heads % self.tensor_parallel_size != 0:
                raise ValueError(
                    f"num_heads ({self.num_heads}) must be divisible by "
                    f"tensor_parallel_size ({self.tensor_parallel_size})"
                )

        def _backend_ready(self):
            if self.tensor_parallel_size > 1 and not platform.has_ray():
                raise ValueError("tensor parallelism needs ray installed")


    class ModelConfig:
        def __init__(self, hidden_size: int = 64, num_attention_heads: int = 4, **kwargs):
            self.hidden_size = hidden_size
            self.num_attention_heads = num_attention_heads
            head_size = hidden_size // num_attention_heads
            if head_size > 256:
                raise ValueError(f"head size {head_size} is above 256")


    def make_parser() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="acme")
        parser.add_argument("--enforce-eager", action="store_true")
        parser.add_argument("--mode", choices=["fast", "safe"], default="safe")
        return parser


    def check_args(args: argparse.Namespace) -> None:
        if args.enforce_eager and args.mode == "fast":
            raise ValueError("--enforce-eager cannot be combined with --mode fast")
    """
).lstrip()

PLATFORM = textwrap.dedent(
    '''
    def has_ray() -> bool:
        """Whether ray can be imported here (this machine: no)."""
        return False
    '''
).lstrip()

FILES = {"acme/__init__.py": "", "acme/config.py": CONFIG, "acme/platform.py": PLATFORM}

# acme's command line (`acme serve --model FOLDER --port N`): a parser builder, the class that
# takes the parsed namespace, and its method that builds the configuration, reading the model
# folder's config.json (what only a command-line run reaches with a real folder).
LAUNCH = textwrap.dedent(
    """
    import argparse
    import dataclasses
    import json
    import os

    from acme.config import ModelConfig, ServerSettings


    class ContextSettings:
        def __init__(self, model: str, max_model_len: int | None = None, allow_long: bool = False):
            if max_model_len is not None and max_model_len > 65536 and not allow_long:
                raise ValueError(f"max_model_len ({max_model_len}) above 65536 needs --allow-long")
            with open(os.path.join(model, "config.json")) as file:
                limits = json.load(file)
            derived = limits["max_position_embeddings"]
            if max_model_len is not None and max_model_len > derived:
                raise ValueError(
                    f"max_model_len ({max_model_len}) is above the model's maximum ({derived})"
                )
            self.max_model_len = max_model_len or derived


    @dataclasses.dataclass
    class LaunchArgs:
        model: str = "acme/base"
        port: int = 8000
        mode: str = "safe"
        enforce_eager: bool = False
        workers: int = 1
        max_model_len: int | None = None
        allow_long: bool = False

        @staticmethod
        def add_cli_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
            parser.add_argument("--model", default="acme/base")
            parser.add_argument("--port", type=int, default=8000)
            parser.add_argument("--mode", choices=["fast", "safe"], default="safe")
            parser.add_argument("--enforce-eager", action="store_true")
            parser.add_argument("--workers", type=int, default=1)
            parser.add_argument("--max-model-len", type=int, default=None)
            parser.add_argument("--allow-long", action="store_true")
            return parser

        @classmethod
        def from_cli_args(cls, args: argparse.Namespace) -> "LaunchArgs":
            names = [field.name for field in dataclasses.fields(cls)]
            return cls(**{name: getattr(args, name) for name in names if hasattr(args, name)})

        def create_context(self) -> ContextSettings:
            return ContextSettings(self.model, self.max_model_len, self.allow_long)

        def create_config(self):
            context = self.create_context()
            with open(os.path.join(self.model, "config.json")) as file:
                sizes = json.load(file)
            model = ModelConfig(sizes["hidden_size"], sizes["num_attention_heads"])
            server = ServerSettings(port=self.port, mode=self.mode, workers=self.workers)
            return context, model, server
    """
).lstrip()

WITH_LAUNCH = {**FILES, "acme/launch.py": LAUNCH}


def mined_fixture(tmp_path: Path, files: dict[str, str] = FILES) -> tuple[Path, Path]:
    """The fixture (or other `files` of `acme`) mined (offline) into a dataset, and a folder
    from which `acme` imports (the same files, as an installed package would hold them):
    (dataset, site folder)."""
    repo = make_git_repo(tmp_path / "acme-repo", files)
    installed = tmp_path / "site"
    for name, text in files.items():
        (installed / name).parent.mkdir(parents=True, exist_ok=True)
        (installed / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("vmine")),
            "run",
            str(repo),
            "--repo-name",
            "acme/acme",
            "--llm",
            "offline",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-o",
            str(out),
            "--ci",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    (dataset,) = [path.parent for path in out.rglob("manifest.json")]
    return dataset, installed
