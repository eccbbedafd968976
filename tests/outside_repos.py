"""Two small repositories written by hand in the style of an inference server (`serve`, as vLLM
lays out its code) and of a runtime (`fastgen`, as SGLang does): a few validators, and the
ValueErrors users meet outside validators, in model registries, model and weight loading,
backend selection and request handling. `vmine run --scope all` mines them for the tests of
the `all` scope and for the pastes of tests/explain_corpus.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.conftest import make_git_repo

SERVE_CONFIG = """\
from dataclasses import dataclass


@dataclass
class SchedulerConfig:
    max_num_seqs: int = 128
    policy: str = "fcfs"

    def __post_init__(self) -> None:
        if self.max_num_seqs <= 0:
            raise ValueError(f"max_num_seqs must be positive, got {self.max_num_seqs}")
        if self.policy not in ("fcfs", "priority"):
            raise ValueError(f"Unknown scheduling policy {self.policy!r}")
"""

SERVE_REGISTRY = """\
from collections.abc import Iterable


class _ModelRegistry:
    def __init__(self, models: dict[str, str]) -> None:
        self.models = dict(models)

    def register_model(self, model_arch: str, model_cls: str) -> None:
        if model_arch in self.models:
            raise ValueError(f"Model architecture {model_arch} is already registered")
        self.models[model_arch] = model_cls

    def _raise_for_unsupported(self, architectures: list[str]):
        all_supported_archs = sorted(self.models)
        raise ValueError(
            f"Model architectures {architectures} are not supported for now. "
            f"Supported architectures: {all_supported_archs}"
        )

    def resolve_model_cls(self, architectures: Iterable[str]) -> str:
        architectures = list(architectures)
        if not architectures:
            raise ValueError("No model architectures are specified")
        for arch in architectures:
            if arch in self.models:
                return self.models[arch]
        return self._raise_for_unsupported(architectures)
"""

SERVE_HF_CONFIG = """\
import json
import os


class ModelNotFoundError(ValueError):
    pass


def get_config(model: str, revision: str | None = None) -> dict:
    if not os.path.isdir(model) and "/" not in model:
        raise ModelNotFoundError(
            f"Invalid repository ID or local directory specified: '{model}'. Please verify "
            "the path or the model name on the Hub."
        )
    path = os.path.join(model, "config.json")
    if not os.path.exists(path):
        raise ValueError(
            f"No supported config format found in {model}. Expected config.json or "
            "params.json."
        )
    with open(path) as file:
        config = json.load(file)
    if "model_type" not in config:
        raise ValueError(f"Unrecognized model in {model}. Should have a `model_type` key in its config.json")
    return config
"""

SERVE_WEIGHTS = """\
import glob
import os


def download_weights_from_hub(model_name_or_path: str, allow_patterns: list[str]) -> str:
    hf_folder = os.path.join("/cache", model_name_or_path)
    files = [f for pattern in allow_patterns for f in glob.glob(os.path.join(hf_folder, pattern))]
    if not files:
        raise ValueError(f"Cannot find any model weights with `{model_name_or_path}`")
    return hf_folder


def get_quant_config(quantization: str, model_path: str) -> dict:
    candidates = [f for f in os.listdir(model_path) if f.endswith("quant_config.json")]
    if not candidates:
        raise ValueError(f"Cannot find the config file for {quantization}")
    if len(candidates) > 1:
        raise ValueError(
            f"Found multiple config files for {quantization}: {candidates}"
        )
    return {"file": candidates[0]}


class DefaultModelLoader:
    def __init__(self, load_format: str) -> None:
        self.load_format = load_format

    def _prepare_weights(self, model_name_or_path: str) -> list[str]:
        if self.load_format == "auto":
            allow_patterns = ["*.safetensors", "*.bin"]
        elif self.load_format == "safetensors":
            allow_patterns = ["*.safetensors"]
        elif self.load_format == "pt":
            allow_patterns = ["*.pt"]
        else:
            raise ValueError(f"Unknown load_format: {self.load_format}")
        return allow_patterns
"""

SERVE_SELECTOR = """\
_BACKENDS = ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "TORCH_SDPA")
SUPPORTED_HEAD_SIZES = [64, 80, 96, 112, 128, 256]


def backend_name_to_enum(backend_name: str) -> str:
    if backend_name not in _BACKENDS:
        raise ValueError(
            f"Invalid attention backend: '{backend_name}'. Valid backends are: {list(_BACKENDS)}"
        )
    return backend_name


def get_attn_backend_cls(selected_backend, head_size: int, dtype: str, use_mla: bool) -> str:
    if use_mla and dtype == "float32":
        raise ValueError("MLA does not support the float32 KV cache dtype")
    if selected_backend == "FLASH_ATTN" and head_size not in SUPPORTED_HEAD_SIZES:
        raise ValueError(
            f"Head size {head_size} is not supported by FlashAttention. "
            f"Supported head sizes are: {SUPPORTED_HEAD_SIZES}."
        )
    return selected_backend or "FLASH_ATTN"
"""

SERVE_SERVING_CHAT = """\
class OpenAIServingChat:
    def __init__(self, max_model_len: int, chat_template: str | None) -> None:
        self.max_model_len = max_model_len
        self.chat_template = chat_template

    def _tokenize_prompt(self, input_ids: list[int], max_tokens: int) -> list[int]:
        token_num = len(input_ids)
        if token_num + max_tokens > self.max_model_len:
            raise ValueError(
                f"This model's maximum context length is {self.max_model_len} tokens. "
                f"However, you requested {token_num + max_tokens} tokens ({token_num} in the "
                f"messages, {max_tokens} in the completion). Please reduce the length of the "
                "messages or completion."
            )
        return input_ids

    def _resolve_chat_template(self, tokenizer_template: str | None) -> str:
        template = self.chat_template or tokenizer_template
        if template is None:
            raise ValueError(
                "As of transformers v4.44, default chat template is no longer allowed, so you "
                "must provide a chat template if the tokenizer does not define one."
            )
        return template

    def _tool_named(self, tools: list[dict], name: str) -> dict:
        for tool in tools:
            if tool["function"]["name"] == name:
                return tool
        raise ValueError(f"Tool '{name}' was chosen but is not in the request's tools")
"""

SERVE_LORA = """\
class LoRAModelManager:
    def __init__(self, max_lora_rank: int, lora_slots: int) -> None:
        self.max_lora_rank = max_lora_rank
        self.lora_slots = lora_slots
        self.active: dict[int, object] = {}

    def add_adapter(self, lora_id: int, rank: int) -> None:
        if rank > self.max_lora_rank:
            raise ValueError(
                f"LoRA rank {rank} is greater than max_lora_rank {self.max_lora_rank}."
            )
        if len(self.active) >= self.lora_slots:
            raise ValueError(f"No free LoRA slots: {self.lora_slots} adapters are active")
        self.active[lora_id] = rank
"""

SERVE_MULTIMODAL = """\
def parse_image_url(url: str) -> bytes:
    scheme = url.split(":", 1)[0]
    if scheme not in ("http", "https", "data", "file"):
        raise ValueError(f"Unsupported URL scheme {scheme!r} for an image")
    return url.encode()


def count_items(modality: str, items: list, limit: int) -> int:
    if len(items) > limit:
        raise ValueError(
            f"At most {limit} {modality}(s) may be provided in one prompt, got {len(items)}."
        )
    return len(items)
"""

FASTGEN_SERVER_ARGS = """\
from dataclasses import dataclass


@dataclass
class ServerArgs:
    tp_size: int = 1
    attention_backend: str = "flashinfer"

    def check_server_args(self) -> None:
        if self.tp_size < 1:
            raise ValueError(f"tp_size must be at least 1, got {self.tp_size}")
"""

FASTGEN_TOKENIZER_MANAGER = """\
class TokenizerManager:
    def __init__(self, context_len: int) -> None:
        self.context_len = context_len

    def _validate_one_request(self, input_ids: list[int]) -> None:
        if len(input_ids) >= self.context_len:
            raise ValueError(
                f"The input ({len(input_ids)} tokens) is longer than the model's context "
                f"length ({self.context_len} tokens)."
            )

    def _handle_batch_request(self, obj) -> None:
        if obj.parallel_sample_num > 1 and obj.stream:
            raise ValueError("Streaming is not supported with parallel sampling (n > 1)")
        if obj.lora_path and not obj.lora_enabled:
            raise ValueError(
                f"LoRA adapter {obj.lora_path} was requested but the server runs without "
                "--enable-lora"
            )
"""

FASTGEN_QUANTIZATION = """\
QUANTIZATION_METHODS = {"fp8": "Fp8Config", "awq": "AWQConfig", "gptq": "GPTQConfig"}


def get_quantization_config(quantization: str) -> str:
    if quantization not in QUANTIZATION_METHODS:
        raise ValueError(
            f"Invalid quantization method: {quantization}. "
            f"Available methods: {list(QUANTIZATION_METHODS.keys())}"
        )
    return QUANTIZATION_METHODS[quantization]
"""

FASTGEN_LOADER = """\
def get_model_loader(load_format: str):
    if load_format == "dummy":
        return "DummyModelLoader"
    if load_format in ("auto", "safetensors", "pt"):
        return "DefaultModelLoader"
    raise ValueError(f"Unrecognized load format: {load_format}")


def load_weights_and_postprocess(model, weights: dict, params: dict) -> None:
    for name in weights:
        if name not in params:
            raise ValueError(f"Parameter {name} not found in params_dict")
"""

FASTGEN_ATTENTION = """\
ATTENTION_BACKENDS = {}


def register_attention_backend(name):
    def decorator(fn):
        ATTENTION_BACKENDS[name] = fn
        return fn

    return decorator


def create_attention_backend(runner, backend_str: str):
    if backend_str not in ATTENTION_BACKENDS:
        raise ValueError(f"Invalid attention backend: {backend_str}")
    return ATTENTION_BACKENDS[backend_str](runner)


def init_double_sparsity(heavy_channel_type: str) -> str:
    if heavy_channel_type not in ("q", "k", "qk"):
        raise ValueError(f"Unknown heavy channel type: {heavy_channel_type!r}")
    return heavy_channel_type
"""

FASTGEN_GRAMMAR = """\
class GrammarBackend:
    def dispatch_regex(self, key: str):
        try:
            return compile_regex(key)
        except RuntimeError as error:
            raise ValueError(f"Invalid regex: {key!r}: {error}") from error

    def dispatch_json(self, key_string: str):
        if not key_string.startswith("{"):
            raise ValueError(f"Invalid JSON schema: expected an object, got {key_string[:40]!r}")
        return key_string


def compile_regex(key: str):
    return key
"""

SERVE_FILES = {
    "serve/__init__.py": "",
    "serve/config/scheduler.py": SERVE_CONFIG,
    "serve/models/registry.py": SERVE_REGISTRY,
    "serve/transformers_utils/config.py": SERVE_HF_CONFIG,
    "serve/model_loader/weights.py": SERVE_WEIGHTS,
    "serve/attention/selector.py": SERVE_SELECTOR,
    "serve/entrypoints/serving_chat.py": SERVE_SERVING_CHAT,
    "serve/lora/manager.py": SERVE_LORA,
    "serve/multimodal/parse.py": SERVE_MULTIMODAL,
}

FASTGEN_FILES = {
    "fastgen/__init__.py": "",
    "fastgen/srt/server_args.py": FASTGEN_SERVER_ARGS,
    "fastgen/srt/managers/tokenizer_manager.py": FASTGEN_TOKENIZER_MANAGER,
    "fastgen/srt/layers/quantization/__init__.py": FASTGEN_QUANTIZATION,
    "fastgen/srt/model_loader/loader.py": FASTGEN_LOADER,
    "fastgen/srt/layers/attention/__init__.py": FASTGEN_ATTENTION,
    "fastgen/srt/constrained/grammar.py": FASTGEN_GRAMMAR,
}

SERVE_REPO = "acme/serve"
FASTGEN_REPO = "acme/fastgen"


def make_outside_repos(root: Path) -> dict[str, Path]:
    """Both repositories as git repositories under `root`, by their owner/name."""
    return {
        SERVE_REPO: make_git_repo(root / "serve", SERVE_FILES),
        FASTGEN_REPO: make_git_repo(root / "fastgen", FASTGEN_FILES),
    }


def mine_outside(repos: dict[str, Path], out: Path, cache: Path, scope: str = "all") -> Path:
    """Both repositories mined offline into `out` in `scope`; `out` is returned."""
    from pipeline.console import Console
    from pipeline.mine.run import RunOptions, run_dataset

    for repo_name, repo in repos.items():
        options = RunOptions(
            source=str(repo),
            repo_name=repo_name,
            out_dir=out,
            llm="offline",
            cache_dir=cache,
            scope=scope,
            dataset_version="2026-01-01T00:00:00.000Z",
        )
        outcome = run_dataset(options, Console("plain", io.StringIO()))
        assert outcome.exit_code == 0, repo_name
    return out


def explained_record(text: str, datasets: Path) -> tuple[int, dict | None]:
    """`vmine explain`'s exit code for a paste, and the record it puts first."""
    from pipeline.lookup.command import explain

    explained = explain(text, [datasets], fmt="json")
    lines = explained.output.splitlines()
    first = json.loads(lines[0])["envelope"]["record"] if lines else None
    return explained.code, first


def finds(paste, datasets: Path) -> bool:
    """Whether explain puts the paste's record first, as a match (exit 0), not a guess."""
    code, record = explained_record(paste.text, datasets)
    return (
        code == 0
        and record is not None
        and record["filePath"] == paste.file_path
        and record["errorMessage"].startswith(paste.message_start)
    )
