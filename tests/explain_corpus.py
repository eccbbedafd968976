"""Test data for `vmine explain`: a dataset of the fixture's records plus a few more in the style
of real validators (one built from parts, one reworded between two releases), and a corpus of
pastes as users make them: each real message of the fixture wrapped the way terminals, loggers,
launchers, HTTP clients and issue templates wrap it."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from tests.datasets import CASES, Case, _explanation, write_fixture_dataset

OLD_SHA = "01dc0de000" + "0" * 30
OLD_RELEASE = "pypi:serve==0.1.0"
NEW_RELEASE = "pypi:serve==0.2.0"

PREFILL_SOURCE = """\
    def verify_prefill(self) -> None:
        if self.enable_chunked_prefill and self.enable_prompt_embeds:
            raise ValueError(
                "--enable-chunked-prefill is not supported with --enable-prompt-embeds"
            )
        if not self.enable_chunked_prefill and self.max_model_len > self.max_num_batched_tokens:
            raise ValueError(
                f"max_model_len ({self.max_model_len}) must be <= max_num_batched_tokens "
                f"({self.max_num_batched_tokens}) when chunked prefill is disabled."
            )"""

CACHE_SOURCE = """\
    def __post_init__(self) -> None:
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(
                f"gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}. "
                "(this flag also controls CPU memory reservation when --cpu-offload-gb is set)"
            )"""

SPECULATIVE_SOURCE = """\
    def _verify_args(self) -> None:
        problems = []
        if self.model and not self.num_speculative_tokens:
            problems.append("--speculative-model requires --num-speculative-tokens.")
        if self.num_speculative_tokens > 8:
            problems.append(
                f"--num-speculative-tokens must be at most 8, got {self.num_speculative_tokens}."
            )
        if self.pipeline_parallel_size > 1:
            problems.append("Pipeline parallelism is not supported with speculative decoding.")
        if problems:
            raise ValueError(" ".join(problems))"""

PREFILL = Case(
    id="bbbb0000000000a1",
    slug="enable-chunked-prefill-is-not-supported-with",
    filePath="serve/config/scheduler.py",
    lineNumber=31,
    qualname="SchedulerConfig.verify_prefill",
    validatorKind="name",
    errorMessage="--enable-chunked-prefill is not supported with --enable-prompt-embeds",
    messagePattern="--enable-chunked-prefill is not supported with --enable-prompt-embeds",
    messageStatus="literal",
    guards=["self.enable_chunked_prefill and self.enable_prompt_embeds"],
    source=PREFILL_SOURCE,
    sourceStart=29,
    explanation=_explanation("chunked prefill meets prompt embeddings"),
)
MAX_MODEL_LEN = Case(
    id="bbbb0000000000a2",
    slug="max-model-len-self-max-model-len-must-be-max-num",
    filePath="serve/config/scheduler.py",
    lineNumber=35,
    qualname="SchedulerConfig.verify_prefill",
    validatorKind="name",
    errorMessage="max_model_len ({self.max_model_len}) must be <= max_num_batched_tokens "
    "({self.max_num_batched_tokens}) when chunked prefill is disabled.",
    messagePattern="max_model_len \\((.*?)\\) must be <= max_num_batched_tokens \\((.*?)\\) "
    "when chunked prefill is disabled\\.",
    messageStatus="template",
    guards=["not self.enable_chunked_prefill", "self.max_model_len > self.max_num_batched_tokens"],
    source=PREFILL_SOURCE,
    sourceStart=29,
    explanation=_explanation("the context is longer than one batch without chunked prefill"),
)
# Release 0.2.0 appended a clause to this message; 0.1.0 raised it without (GPU_OLD).
GPU_NEW = Case(
    id="bbbb0000000000a3",
    slug="gpu-memory-utilization-must-be-in-0-1-got-self",
    filePath="serve/config/cache.py",
    lineNumber=14,
    qualname="CacheConfig.__post_init__",
    validatorKind="post_init",
    errorMessage="gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}. "
    "(this flag also controls CPU memory reservation when --cpu-offload-gb is set)",
    messagePattern="gpu_memory_utilization must be in \\(0, 1\\], got (.*?)\\. \\(this flag "
    "also controls CPU memory reservation when --cpu-offload-gb is set\\)",
    messageStatus="template",
    guards=["not 0 < self.gpu_memory_utilization <= 1"],
    source=CACHE_SOURCE,
    sourceStart=12,
    explanation=_explanation("gpu_memory_utilization is outside (0, 1]"),
)
GPU_OLD = replace(
    GPU_NEW,
    id="bbbb0000000000b3",
    errorMessage="gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}.",
    messagePattern="gpu_memory_utilization must be in \\(0, 1\\], got (.*?)\\.",
    source=CACHE_SOURCE.replace(
        '{self.gpu_memory_utilization}. "\n                "(this flag also controls CPU '
        'memory reservation when --cpu-offload-gb is set)"',
        '{self.gpu_memory_utilization}."',
    ),
)
# A message built from parts: the pattern is all hole, the pieces are what a paste holds.
SPECULATIVE = Case(
    id="bbbb0000000000a4",
    slug="join-problems",
    filePath="serve/config/speculative.py",
    lineNumber=49,
    qualname="SpeculativeConfig._verify_args",
    validatorKind="reached",
    errorMessage="{' '.join(problems)}",
    messagePattern="(.*?)",
    messageStatus="partial",
    guards=["problems"],
    source=SPECULATIVE_SOURCE,
    sourceStart=38,
    explanation=_explanation("the speculative decoding flags disagree"),
    messageFragments=[
        "--speculative-model requires --num-speculative-tokens.",
        "--num-speculative-tokens must be at most 8, got ",
        ".",
        "Pipeline parallelism is not supported with speculative decoding.",
    ],
)

CORPUS_CASES = [*CASES, PREFILL, MAX_MODEL_LEN, GPU_NEW, SPECULATIVE]
OLD_CASES = [*CASES, GPU_OLD]


def write_corpus_dataset(out_dir: Path) -> Path:
    """The newer release (serve 0.2.0): every record of the corpus."""
    return write_fixture_dataset(out_dir, CORPUS_CASES, source=NEW_RELEASE)


def write_old_release(out_dir: Path) -> Path:
    """The older release (serve 0.1.0): the fixture's records and the old wording of GPU_NEW."""
    return write_fixture_dataset(out_dir, OLD_CASES, sha=OLD_SHA, source=OLD_RELEASE)


@dataclass(frozen=True)
class Paste:
    """What a user pasted, and the record (id) and kind of match explain must find first."""

    name: str
    text: str
    record: str | None  # None: nothing may match (exit code 1)
    kind: str = "exact"


FAST_DECODE = "--use-fast-decode requires --decode-backend flash"
SPECULATIVE_DECODE = "--use-fast-decode does not support speculative decoding"
BATCH_6 = "max_batch_size must be a power of 2, got 6"
MODEL_LEN = (
    "max_model_len (8192) must be <= max_num_batched_tokens (2048) when chunked prefill "
    "is disabled."
)


def _traceback(
    line: str, frame: str = "serve/config/engine.py", function: str = "check_decode"
) -> str:
    """A traceback that raised `line` in `function` of the repository's file `frame` (the
    innermost frame is where it was raised: explain reads it)."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/serve/launch.py", line 40, in main\n'
        "    config = EngineConfig(**vars(args))\n"
        f'  File "/srv/{frame}", line 108, in {function}\n'
        "    raise ValueError(message)\n"
        f"{line}"
    )


def _batching_traceback(line: str) -> str:
    return _traceback(line, function="validate_batching")


def _prefixed(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


def _hard_wrapped(text: str, width: int) -> str:
    """As a terminal without line joining copies it: cut every `width` characters."""
    return "\n".join(text[at : at + width] for at in range(0, len(text), width))


def _soft_wrapped(text: str, width: int) -> str:
    """As an issue template or editor wraps it: at spaces, lines up to `width`."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


PYDANTIC_ITEM = (
    "  Value error, max_batch_size must be a power of 2, got 12 [type=value_error, "
    "input_value=12, input_type=int]"
)
FOOTER = "    For further information visit https://errors.pydantic.dev/2.11/v/value_error"

PASTES = [
    # -- the message itself, and exception lines
    Paste("plain message", FAST_DECODE, "aaaa000000000002"),
    Paste("exception line", f"ValueError: {SPECULATIVE_DECODE}", "aaaa000000000001"),
    Paste(
        "qualified exception class",
        f"builtins.ValueError: {BATCH_6}",
        "aaaa000000000003",
        "pattern",
    ),
    Paste("traceback", _traceback(f"ValueError: {FAST_DECODE}"), "aaaa000000000002"),
    Paste(
        "chained traceback, the ValueError first",
        _traceback(f"ValueError: {FAST_DECODE}")
        + "\n\nThe above exception was the direct cause of the following exception:\n\n"
        'Traceback (most recent call last):\n  File "/srv/serve/launch.py", line 60, in '
        "<module>\n    main()\nRuntimeError: Engine core initialization failed. See root "
        "cause above.",
        "aaaa000000000002",
    ),
    # -- pydantic
    Paste(
        "pydantic, indented",
        "pydantic_core._pydantic_core.ValidationError: 1 validation "
        f"error for EngineConfig\nmax_batch_size\n{PYDANTIC_ITEM}\n{FOOTER}",
        "aaaa000000000003",
        "pattern",
    ),
    Paste("pydantic, without its indent", PYDANTIC_ITEM.strip(), "aaaa000000000003", "pattern"),
    Paste(
        "pydantic, on the header's line",
        "pydantic_core._pydantic_core.ValidationError: 1 "
        f"validation error for VllmConfig Value error, {FAST_DECODE} [type=value_error, "
        "input_value=ArgsKwargs((), {'use_fast_decode': True}), input_type=ArgsKwargs]",
        "aaaa000000000002",
    ),
    Paste(
        "pydantic, no [type=...] tail", f"Value error, {MODEL_LEN}", "bbbb0000000000a2", "pattern"
    ),
    Paste(
        "pydantic, two items",
        "2 validation errors for EngineConfig\nmax_batch_size\n"
        f"{PYDANTIC_ITEM}\n{FOOTER}\ndecode_backend\n  Value error, {FAST_DECODE} "
        "[type=value_error, input_value='paged', input_type=str]\n" + FOOTER,
        "aaaa000000000002",
    ),
    Paste(
        "pydantic, a multi-line message",
        "pydantic_core._pydantic_core.ValidationError: 1 "
        "validation error for SchedulerConfig\n  Value error, Unknown scheduler policy "
        "'lifo'.\nChoose one of: fcfs, priority [type=value_error, input_value=ArgsKwargs((), "
        "{'policy': 'lifo'}), input_type=ArgsKwargs]\n" + FOOTER,
        "aaaa000000000004",
        "pattern",
    ),
    # -- HTTP clients and error bodies
    Paste("HTTP reason prefix", f"Bad Request: {PREFILL.errorMessage}", "bbbb0000000000a1"),
    Paste(
        "openai client error, a Python dict",
        "openai.BadRequestError: Error code: 400 - "
        f"{{'error': {{'message': '{BATCH_6}', 'type': 'BadRequestError', 'param': None, "
        "'code': 400}}",
        "aaaa000000000003",
        "pattern",
    ),
    Paste("JSON detail", f'{{"detail": "{FAST_DECODE}"}}', "aaaa000000000002"),
    Paste(
        "JSON error.message holding pydantic's rendering",
        '{"error": {"message": "1 '
        "validation error for EngineConfig\\n  Value error, max_batch_size must be a power of "
        '2, got 24 [type=value_error, input_value=24, input_type=int]", "type": '
        '"BadRequestError", "param": null, "code": 400}}',
        "aaaa000000000003",
        "pattern",
    ),
    Paste(
        "vLLM's older error body",
        '{"object": "error", "message": '
        f'"{PREFILL.errorMessage}", "type": "BadRequestError", "param": null, "code": 400}}',
        "bbbb0000000000a1",
    ),
    Paste(
        "FastAPI validation detail",
        '{"detail": [{"type": "value_error", "loc": ["body"], '
        '"msg": "Value error, max_batch_size must be a power of 2, got 3", "input": '
        '{"max_batch_size": 3}, "ctx": {"error": {}}}]}',
        "aaaa000000000003",
        "pattern",
    ),
    Paste(
        "status line before a JSON body",
        f'HTTP 400: {{"detail": "{SPECULATIVE_DECODE}"}}',
        "aaaa000000000001",
    ),
    # -- terminals and log prefixes
    Paste(
        "ANSI colours",
        "\x1b[1;31mERROR\x1b[0m 08-14 12:00:01 [core.py:700] ValueError: "
        f"\x1b[31m{FAST_DECODE}\x1b[0m",
        "aaaa000000000002",
    ),
    Paste(
        "colour codes that lost their ESC", f"[31mValueError: {FAST_DECODE}[0m", "aaaa000000000002"
    ),
    Paste(
        "[rank0]: prefixes",
        _prefixed(_batching_traceback(f"ValueError: {BATCH_6}"), "[rank0]: "),
        "aaaa000000000003",
        "pattern",
    ),
    Paste(
        "(APIServer pid=N) and vLLM's logger",
        _prefixed(
            _traceback(f"ValueError: {FAST_DECODE}"),
            "(APIServer pid=2994609) ERROR 08-14 12:00:01 [api_server.py:91] ",
        ),
        "aaaa000000000002",
    ),
    Paste(
        "Ray worker prefix",
        _prefixed(
            _traceback(f"ValueError: {SPECULATIVE_DECODE}"),
            "(RayWorkerWrapper pid=4242, ip=10.0.0.7) ",
        ),
        "aaaa000000000001",
    ),
    Paste(
        "SGLang timestamps",
        _prefixed(
            _traceback(f"ValueError: {MODEL_LEN}", "serve/config/scheduler.py", "verify_prefill"),
            "[2026-08-14 12:00:01 TP0] ",
        ),
        "bbbb0000000000a2",
        "pattern",
    ),
    Paste(
        "kubectl --timestamps",
        _prefixed(_traceback(f"ValueError: {FAST_DECODE}"), "2026-08-14T12:00:01.123456789Z "),
        "aaaa000000000002",
    ),
    Paste(
        "journald",
        _prefixed(
            _traceback(f"ValueError: {FAST_DECODE}"), "Aug 14 12:00:01 gpu-node-3 serve[2231]: "
        ),
        "aaaa000000000002",
    ),
    Paste(
        "docker compose",
        _prefixed(_batching_traceback(f"ValueError: {BATCH_6}"), "serve-1  | "),
        "aaaa000000000003",
        "pattern",
    ),
    Paste(
        "mpirun",
        _prefixed(_traceback(f"ValueError: {FAST_DECODE}"), "[1,0]<stderr>:"),
        "aaaa000000000002",
    ),
    Paste(
        "CRLF line endings",
        _traceback(f"ValueError: {FAST_DECODE}").replace("\n", "\r\n"),
        "aaaa000000000002",
    ),
    Paste(
        "hard-wrapped by a terminal, inside words",
        _hard_wrapped(f"ValueError: {MODEL_LEN}", 37),
        "bbbb0000000000a2",
        "pattern",
    ),
    Paste(
        "wrapped at spaces by an issue template",
        _soft_wrapped(MODEL_LEN, 30),
        "bbbb0000000000a2",
        "pattern",
    ),
    Paste("Markdown quote", f"> ValueError: {FAST_DECODE}", "aaaa000000000002"),
    Paste(
        "Markdown code fence",
        "```text\n" + _batching_traceback(f"ValueError: {BATCH_6}") + "\n```",
        "aaaa000000000003",
        "pattern",
    ),
    # -- other wording: a release's, or the user's cut
    Paste(
        "older release, the clause the record appends is missing",
        "ValueError: gpu_memory_utilization must be in (0, 1], got 1.5.",
        "bbbb0000000000a3",
        "reworded",
    ),
    Paste(
        "message cut short",
        "max_model_len (8192) must be <= max_num_batched_tokens (2048) when chunked",
        "bbbb0000000000a2",
        "reworded",
    ),
    Paste(
        "a typo fixed since",
        "--use-fast-decode does not suport speculative decoding",
        "aaaa000000000001",
        "reworded",
    ),
    # -- built from parts
    Paste(
        "message built from parts",
        "ValueError: --speculative-model requires "
        "--num-speculative-tokens. Pipeline parallelism is not supported with speculative "
        "decoding.",
        "bbbb0000000000a4",
        "parts",
    ),
    Paste(
        "parts with a value",
        "--num-speculative-tokens must be at most 8, got 12. Pipeline "
        "parallelism is not supported with speculative decoding.",
        "bbbb0000000000a4",
        "parts",
    ),
    # -- a message quoted inside another error
    Paste(
        "vLLM's worker error quoting the message",
        "RuntimeError: Worker failed with error 'max_model_len (8192) must be <= "
        "max_num_batched_tokens (2048) when chunked prefill is disabled.', please check the "
        "stack trace above for the root cause",
        "bbbb0000000000a2",
        "pattern",
    ),
    Paste(
        "an exception's repr inside the engine's error",
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. "
        f"See stack trace (above) for the root cause. ValueError('{SPECULATIVE_DECODE}')",
        "aaaa000000000001",
    ),
    Paste(
        "FastAPI's RequestValidationError holding the ValueError",
        "fastapi.exceptions.RequestValidationError: [{'type': 'value_error', 'loc': ('body',), "
        f"'msg': 'Value error, {FAST_DECODE}', 'input': {{'model': 'llama'}}, 'ctx': "
        f"{{'error': ValueError('{FAST_DECODE}')}}}}]",
        "aaaa000000000002",
    ),
    Paste(
        "the openai client's body quoting a worker error",
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"Worker "
        "failed with error 'gpu_memory_utilization must be in (0, 1], got 1.2. (this flag also "
        "controls CPU memory reservation when --cpu-offload-gb is set)', please check the "
        "stack trace above for the root cause\", 'type': 'BadRequestError', 'param': None, "
        "'code': 400}",
        "bbbb0000000000a3",
        "pattern",
    ),
    # -- unrelated log lines after the error
    Paste(
        "the API server's access-log line after the error",
        "(APIServer pid=1) ERROR 08-14 12:00:01 [serving_chat.py:250] Error in preprocessing "
        "prompt inputs\n"
        + _prefixed(
            _batching_traceback(f"ValueError: {BATCH_6}"),
            "(APIServer pid=1) ERROR 08-14 12:00:01 [serving_chat.py:250] ",
        )
        + '\n(APIServer pid=1) INFO:     10.0.0.7:51234 - "POST /v1/chat/completions '
        'HTTP/1.1" 400 Bad Request',
        "aaaa000000000003",
        "pattern",
    ),
    Paste(
        "the engine's throughput line after the error",
        "ERROR 08-14 12:00:01 [core.py:708] ValueError: "
        f"{FAST_DECODE}\nINFO 08-14 12:00:10 [loggers.py:123] Engine 000: Avg prompt "
        "throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs",
        "aaaa000000000002",
    ),
    Paste(
        "SGLang's scheduler traceback, then its sigquit line",
        "[2026-08-14 12:00:01 TP0] Scheduler hit an exception: Traceback (most recent call "
        'last):\n  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line '
        "2511, in run_scheduler_process\n    scheduler = Scheduler(server_args, port_args)\n"
        f"ValueError: {MODEL_LEN}\n\n[2026-08-14 12:00:01] Received sigquit from a child "
        "process. It usually means the child failed.",
        "bbbb0000000000a2",
        "pattern",
    ),
    # -- several prefixes on one line
    Paste(
        "docker compose, process tag and vLLM's logger on one line",
        "vllm-openai-1  | (APIServer pid=1) ERROR 08-14 12:00:01 [serving.py:1262] ValueError: "
        f"{FAST_DECODE}",
        "aaaa000000000002",
    ),
    Paste(
        "logging's asctime, name and level",
        "2026-08-14 12:00:01,123 - sglang.srt.entrypoints.http_server - ERROR - ValueError: "
        f"{BATCH_6}",
        "aaaa000000000003",
        "pattern",
    ),
    Paste(
        "kubectl --timestamps over SGLang's prefix",
        _prefixed(
            _traceback(f"ValueError: {SPECULATIVE_DECODE}"),
            "2026-08-14T12:00:01.123456789Z [2026-08-14 12:00:01 TP0] ",
        ),
        "aaaa000000000001",
    ),
    Paste(
        "a level and a source file only",
        f"ERROR [serving.py:1262] ValueError: {PREFILL.errorMessage}",
        "bbbb0000000000a1",
    ),
    # -- the same words raised as another class: no sure match
    Paste(
        "an AssertionError in a record's words",
        f"AssertionError: {FAST_DECODE}",
        "aaaa000000000002",
        "approximate",
    ),
    # -- nothing to find
    Paste(
        "another error altogether",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        None,
        "approximate",
    ),
]


# == Pastes of ValueErrors raised outside validators (issue 19, the `all` scope) ==============
# Each is what a user of tests/outside_repos.py's `serve` (laid out as vLLM is) or `fastgen`
# (as SGLang is) would paste from a registry, model loading, backend selection or request
# handling; `vmine run --scope all` gives their records. A paste names its record by file and
# the start of its errorMessage (the repositories' ids depend on the commit's repo name only,
# but a message start reads better than a hash).


@dataclass(frozen=True)
class OutsidePaste:
    """A paste of an error raised outside validators, and the record it must find first."""

    name: str
    text: str
    file_path: str  # the record's filePath
    message_start: str  # how its errorMessage starts


_SERVE_PKG = "/usr/local/lib/python3.12/dist-packages/"


def _frames(*frames: tuple[str, int, str, str]) -> str:
    """A traceback's frames: (file under the package folder, line, function, code line)."""
    return "".join(
        f'  File "{_SERVE_PKG}{path}", line {line}, in {function}\n    {code}\n'
        for path, line, function, code in frames
    )


def _server_traceback(error: str, *frames: tuple[str, int, str, str]) -> str:
    return (
        "Traceback (most recent call last):\n"
        + _frames(("serve/entrypoints/api_server.py", 1868, "run_server", "await init_app()"))
        + _frames(*frames)
        + error
    )


_VLLM_LOG = "(APIServer pid=3117) ERROR 03-02 10:14:07 [api_server.py:1420] "
_SGLANG_LOG = "[2026-03-02 10:14:07] "
_SGLANG_TP = "[2026-03-02 10:14:07 TP0] "
_ARCHS = "['LlamaForCausalLM', 'MistralForCausalLM', 'Qwen2ForCausalLM']"
_CONTEXT = (
    "This model's maximum context length is 32768 tokens. However, you requested 33792 "
    "tokens (1024 in the messages, 32768 in the completion). Please reduce the length of the "
    "messages or completion."
)

OUTSIDE_PASTES = [
    # -- model registries
    OutsidePaste(
        "unsupported architecture, a server traceback with vLLM's log prefix",
        _prefixed(
            _server_traceback(
                "ValueError: Model architectures ['Qwen3NextForCausalLM'] are not supported "
                f"for now. Supported architectures: {_ARCHS}",
                (
                    "serve/models/registry.py",
                    28,
                    "resolve_model_cls",
                    "return self._raise_for_unsupported(architectures)",
                ),
                (
                    "serve/models/registry.py",
                    16,
                    "_raise_for_unsupported",
                    "raise ValueError(",
                ),
            ),
            _VLLM_LOG,
        ),
        "serve/models/registry.py",
        "Model architectures {architectures} are not supported",
    ),
    OutsidePaste(
        "unsupported architecture inside pydantic's ValidationError",
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
        "  Value error, Model architectures ['GptOssForCausalLM'] are not supported for now. "
        f"Supported architectures: {_ARCHS} [type=value_error, input_value=ArgsKwargs((), "
        "{'model': 'openai/gpt-oss-20b'}), input_type=ArgsKwargs]\n" + FOOTER,
        "serve/models/registry.py",
        "Model architectures {architectures} are not supported",
    ),
    OutsidePaste(
        "no architecture in the model's config",
        "ERROR 03-02 10:14:07 [engine.py:160] ValueError: No model architectures are specified",
        "serve/models/registry.py",
        "No model architectures are specified",
    ),
    OutsidePaste(
        "a plugin registering an architecture twice",
        "WARNING 03-02 10:14:05 [__init__.py:40] Loading plugin my_models\n"
        + _server_traceback(
            "ValueError: Model architecture MyLlamaForCausalLM is already registered",
            ("my_models/__init__.py", 9, "register", "ModelRegistry.register_model("),
            ("serve/models/registry.py", 10, "register_model", "raise ValueError("),
        ),
        "serve/models/registry.py",
        "Model architecture {model_arch} is already registered",
    ),
    # -- model and weight loading
    OutsidePaste(
        "the repository's own ValueError subclass, module-qualified",
        "serve.transformers_utils.config.ModelNotFoundError: Invalid repository ID or local "
        "directory specified: 'llama3-8b'. Please verify the path or the model name on the Hub.",
        "serve/transformers_utils/config.py",
        "Invalid repository ID or local directory specified",
    ),
    OutsidePaste(
        "no config file in the model folder, in a docker compose log",
        _prefixed(
            _server_traceback(
                "ValueError: No supported config format found in /models/qwen2.5-7b. Expected "
                "config.json or params.json.",
                ("serve/transformers_utils/config.py", 18, "get_config", "raise ValueError("),
            ),
            "serve-1  | ",
        ),
        "serve/transformers_utils/config.py",
        "No supported config format found in",
    ),
    OutsidePaste(
        "a config.json without model_type",
        "ValueError: Unrecognized model in ./checkpoints/step-2000. Should have a `model_type` "
        "key in its config.json",
        "serve/transformers_utils/config.py",
        "Unrecognized model in",
    ),
    OutsidePaste(
        "no weights found, with [rank0]: prefixes",
        _prefixed(
            _server_traceback(
                "ValueError: Cannot find any model weights with `/data/models/llama-70b`",
                (
                    "serve/model_loader/weights.py",
                    9,
                    "download_weights_from_hub",
                    "raise ValueError(",
                ),
            ),
            "[rank0]: ",
        ),
        "serve/model_loader/weights.py",
        "Cannot find any model weights with",
    ),
    OutsidePaste(
        "a quantized checkpoint without its quantization config",
        f"{_VLLM_LOG}ValueError: Cannot find the config file for awq",
        "serve/model_loader/weights.py",
        "Cannot find the config file for",
    ),
    OutsidePaste(
        "two quantization configs in a checkpoint",
        "ValueError: Found multiple config files for gptq: ['quant_config.json', "
        "'quantize_config.json']",
        "serve/model_loader/weights.py",
        "Found multiple config files for",
    ),
    OutsidePaste(
        "an unknown load format, as a Markdown quote",
        "> ValueError: Unknown load_format: gguf-q4",
        "serve/model_loader/weights.py",
        "Unknown load_format",
    ),
    # -- backend selection
    OutsidePaste(
        "an attention backend the selector does not know",
        _server_traceback(
            "ValueError: Invalid attention backend: 'FLASHINFER_MLA'. Valid backends are: "
            "['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'TORCH_SDPA']",
            ("serve/attention/selector.py", 7, "backend_name_to_enum", "raise ValueError("),
        ),
        "serve/attention/selector.py",
        "Invalid attention backend: '{backend_name}'",
    ),
    OutsidePaste(
        "MLA with a float32 KV cache",
        f"{_VLLM_LOG}ValueError: MLA does not support the float32 KV cache dtype",
        "serve/attention/selector.py",
        "MLA does not support the float32 KV cache dtype",
    ),
    OutsidePaste(
        "a head size FlashAttention lacks, under Ray",
        _prefixed(
            "ValueError: Head size 192 is not supported by FlashAttention. Supported head "
            "sizes are: [64, 80, 96, 112, 128, 256].",
            "(RayWorkerWrapper pid=4242, ip=10.0.0.7) ",
        ),
        "serve/attention/selector.py",
        "Head size {head_size} is not supported by FlashAttention",
    ),
    # -- request handling
    OutsidePaste(
        "context length exceeded, from the openai client",
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \""
        + _CONTEXT
        + "\", 'type': 'BadRequestError', 'param': None, 'code': 400}",
        "serve/entrypoints/serving_chat.py",
        "This model's maximum context length is",
    ),
    OutsidePaste(
        "context length exceeded, as a JSON error body",
        json.dumps(
            {"error": {"message": _CONTEXT, "type": "BadRequestError", "param": None, "code": 400}}
        ),
        "serve/entrypoints/serving_chat.py",
        "This model's maximum context length is",
    ),
    OutsidePaste(
        "a tokenizer without a chat template",
        f"{_VLLM_LOG}Error in preprocessing prompt inputs\n"
        + _prefixed(
            _server_traceback(
                "ValueError: As of transformers v4.44, default chat template is no longer "
                "allowed, so you must provide a chat template if the tokenizer does not "
                "define one.",
                (
                    "serve/entrypoints/serving_chat.py",
                    24,
                    "_resolve_chat_template",
                    "raise ValueError(",
                ),
            ),
            _VLLM_LOG,
        ),
        "serve/entrypoints/serving_chat.py",
        "As of transformers v4.44, default chat template is no longer allowed",
    ),
    OutsidePaste(
        "a tool choice naming a tool the request lacks",
        '{"detail": "Tool \'get_weather\' was chosen but is not in the request\'s tools"}',
        "serve/entrypoints/serving_chat.py",
        "Tool '{name}' was chosen but is not in the request's tools",
    ),
    OutsidePaste(
        "a LoRA adapter of too high a rank",
        "ValueError: LoRA rank 128 is greater than max_lora_rank 64.",
        "serve/lora/manager.py",
        "LoRA rank {rank} is greater than max_lora_rank",
    ),
    OutsidePaste(
        "no free LoRA slot, wrapped by an issue template",
        _soft_wrapped("ValueError: No free LoRA slots: 4 adapters are active", 30),
        "serve/lora/manager.py",
        "No free LoRA slots",
    ),
    OutsidePaste(
        "an image URL of an unsupported scheme",
        "Bad Request: Unsupported URL scheme 's3' for an image",
        "serve/multimodal/parse.py",
        "Unsupported URL scheme",
    ),
    OutsidePaste(
        "too many images in one prompt",
        f"{_VLLM_LOG}ValueError: At most 1 image(s) may be provided in one prompt, got 3.",
        "serve/multimodal/parse.py",
        "At most {limit} {modality}(s) may be provided in one prompt",
    ),
    # -- the SGLang-shaped runtime
    OutsidePaste(
        "streaming with n > 1, SGLang's timestamps",
        _prefixed(
            "Traceback (most recent call last):\n"
            + _frames(
                (
                    "fastgen/srt/managers/tokenizer_manager.py",
                    14,
                    "_handle_batch_request",
                    "raise ValueError(",
                )
            )
            + "ValueError: Streaming is not supported with parallel sampling (n > 1)",
            _SGLANG_LOG,
        ),
        "fastgen/srt/managers/tokenizer_manager.py",
        "Streaming is not supported with parallel sampling",
    ),
    OutsidePaste(
        "a LoRA request to a server without --enable-lora",
        f"{_SGLANG_LOG}ValueError: LoRA adapter /loras/sql-lora was requested but the server "
        "runs without --enable-lora",
        "fastgen/srt/managers/tokenizer_manager.py",
        "LoRA adapter {obj.lora_path} was requested",
    ),
    OutsidePaste(
        "a quantization method the runtime does not have",
        _prefixed(
            "Traceback (most recent call last):\n"
            + _frames(
                (
                    "fastgen/srt/layers/quantization/__init__.py",
                    6,
                    "get_quantization_config",
                    "raise ValueError(",
                )
            )
            + "ValueError: Invalid quantization method: mxfp4. Available methods: ['fp8', "
            "'awq', 'gptq']",
            _SGLANG_TP,
        ),
        "fastgen/srt/layers/quantization/__init__.py",
        "Invalid quantization method",
    ),
    OutsidePaste(
        "an unrecognized load format",
        f"{_SGLANG_TP}ValueError: Unrecognized load format: bitsandbytes-8bit",
        "fastgen/srt/model_loader/loader.py",
        "Unrecognized load format",
    ),
    OutsidePaste(
        "a checkpoint parameter the model does not have",
        _prefixed(
            "ValueError: Parameter model.layers.0.mlp.experts.w13_weight_scale not found in "
            "params_dict",
            _SGLANG_TP,
        ),
        "fastgen/srt/model_loader/loader.py",
        "Parameter {name} not found in params_dict",
    ),
    OutsidePaste(
        "an attention backend the runtime does not register",
        f"{_SGLANG_TP}ValueError: Invalid attention backend: fa4",
        "fastgen/srt/layers/attention/__init__.py",
        "Invalid attention backend: {backend_str}",
    ),
    OutsidePaste(
        "an unknown heavy channel type",
        "ValueError: Unknown heavy channel type: 'v'",
        "fastgen/srt/layers/attention/__init__.py",
        "Unknown heavy channel type",
    ),
    OutsidePaste(
        "a regex the grammar backend cannot compile",
        f"{_SGLANG_LOG}ValueError: Invalid regex: '[a-z': unterminated character set",
        "fastgen/srt/constrained/grammar.py",
        "Invalid regex",
    ),
    OutsidePaste(
        "a JSON schema that is not an object",
        '{"object": "error", "message": "Invalid JSON schema: expected an object, got \'[1, '
        '2]\'", "type": "BadRequestError", "param": null, "code": 400}',
        "fastgen/srt/constrained/grammar.py",
        "Invalid JSON schema",
    ),
]
