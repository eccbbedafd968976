"""The openai explainer against a real OpenAI-compatible server and model (not part of CI).

Explains a fixed small set of hand-written fixture sites (a scheduler config, a cache
config and a server's argument checks, with the flags they name defined in an argparse
parser so that grounding can tell real flags from invented ones) through the same
enrichment `vmine run` uses, with a fresh cache, and prints how the model did:

- first-try valid (the first answer valid and grounded), repaired, offline fallbacks,
  fields replaced by the offline explainer's, and the retries (timeouts, errors, a refused
  response format);
- grounding warnings left;
- the response format the server settled on, unknown keys dropped, values fixed;
- tokens and seconds per record.

    .venv/bin/python bench/real_llm.py --base-url http://127.0.0.1:8765/v1 --model M
    .venv/bin/python bench/real_llm.py --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3-8B

A local llama.cpp server (`llama-server -m model.gguf --port 8765`, or llama-cpp-python's
`python -m llama_cpp.server --model model.gguf --port 8765`) serves one request at a time on
CPU: expect 30-175 s per answer from a 0.5B model. Answers are streamed, so the defaults
(600 s in all, 120 s without a token) hold a slow model that is still sending tokens.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractors.facts import Rules  # noqa: E402
from extractors.sites import extract_file  # noqa: E402
from pipeline.console import Console  # noqa: E402
from pipeline.dataset.models import Site  # noqa: E402
from pipeline.explainers.base import (  # noqa: E402
    IDLE_TIMEOUT,
    REQUEST_TIMEOUT,
    Explainer,
    ExplainRequest,
    ExplainResult,
)
from pipeline.explainers.fallback import fallback_for  # noqa: E402
from pipeline.explainers.grounding import RepoGrounding  # noqa: E402
from pipeline.explainers.llm import LLMExplainer  # noqa: E402
from pipeline.mine.enrich import FALLBACK, enrich  # noqa: E402
from pipeline.store import Store  # noqa: E402

SHA = "0123456789abcdef0123456789abcdef01234567"
REPO = "acme/engine"

FIXTURE = {
    "engine/args.py": """\
import argparse


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="engine")
    parser.add_argument("--max-num-seqs", type=int, default=256)
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--max-num-batched-tokens", type=int, default=2048)
    parser.add_argument("--enable-chunked-prefill", action="store_true")
    parser.add_argument("--block-size", type=int, choices=[8, 16, 32], default=16)
    parser.add_argument("--swap-space", type=float, default=4.0)
    parser.add_argument("--port", type=int, default=8000)
    return parser
""",
    "engine/config.py": """\
from dataclasses import dataclass


@dataclass
class SchedulerConfig:
    max_num_seqs: int = 256
    max_model_len: int = 4096
    max_num_batched_tokens: int = 2048
    enable_chunked_prefill: bool = False

    def __post_init__(self) -> None:
        if self.max_num_seqs <= 0:
            raise ValueError(f"max_num_seqs must be positive, got {self.max_num_seqs}")
        if not self.enable_chunked_prefill and self.max_num_batched_tokens < self.max_model_len:
            raise ValueError(
                f"max_num_batched_tokens ({self.max_num_batched_tokens}) is smaller than "
                f"max_model_len ({self.max_model_len}); pass --enable-chunked-prefill or "
                "raise --max-num-batched-tokens"
            )


@dataclass
class CacheConfig:
    block_size: int = 16
    swap_space: float = 4.0

    def __post_init__(self) -> None:
        if self.block_size not in (8, 16, 32):
            raise ValueError(f"block_size must be 8, 16 or 32, got {self.block_size}")
        if self.swap_space < 0:
            raise ValueError("swap_space must not be negative")
""",
    "engine/server.py": """\
def check_server_args(args) -> None:
    if not 1024 <= args.port <= 65535:
        raise ValueError(f"--port must be between 1024 and 65535, got {args.port}")
    if args.host == "":
        raise ValueError("--host must not be empty")
""",
}


def fixture_sites() -> list[Site]:
    sites = []
    for path, text in FIXTURE.items():
        extraction = extract_file(path, text, Rules())
        sites += [Site.place(raw, REPO, SHA) for raw in extraction.sites]
    return sites


def contains(needles) -> set[str]:
    return {needle for needle in needles if any(needle in text for text in FIXTURE.values())}


class Recording(Explainer):
    """The explainer, keeping each site's result for the figures."""

    def __init__(self, inner: LLMExplainer) -> None:
        self.inner = inner
        self.provider, self.model, self.prompt_version = (
            inner.provider,
            inner.model,
            inner.prompt_version,
        )
        self.reads_whole_function = inner.reads_whole_function
        self.results: list[ExplainResult] = []
        self.seconds: list[float] = []

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        started = time.monotonic()
        result = await self.inner.explain(request)
        self.seconds.append(time.monotonic() - started)
        self.results.append(result)
        state = result.error or (
            "valid"
            if not result.grounding_warnings
            else f"kept with {len(result.grounding_warnings)} violations"
        )
        print(
            f"  {request.site.qualname}: {result.usage.requests} requests, {result.repairs} "
            f"repairs: {state} ({self.seconds[-1]:.0f} s)",
            flush=True,
        )
        return result

    @property
    def profile(self):
        return self.inner.profile

    def remember_with(self, memory) -> None:
        self.inner.remember_with(memory)

    def estimate_tokens(self, request):
        return self.inner.estimate_tokens(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--timeout", type=float, default=REQUEST_TIMEOUT, help="in all")
    parser.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT, help="without a token")
    parser.add_argument(
        "--response-format", default="auto", choices=["auto", "json_schema", "json_object"]
    )
    parser.add_argument("--sites", type=int, default=0, help="only the first N sites")
    args = parser.parse_args(argv)

    sites = fixture_sites()
    if args.sites:
        sites = sites[: args.sites]
    explainer = LLMExplainer(
        args.model,
        args.base_url,
        concurrency=1,
        timeout=args.timeout,
        idle_timeout=args.idle_timeout,
        response_format=args.response_format,
    )
    recording = Recording(explainer)
    print(f"  {len(sites)} fixture sites against {args.base_url} ({args.model})", flush=True)
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="vmine-real-llm-") as tmp,
        Store(Path(tmp) / "store.sqlite") as store,
    ):
        recording.remember_with(store)
        outcome = enrich(
            sites,
            recording,
            store,
            RepoGrounding(contains),
            concurrency=1,
            console=Console("plain", sys.stderr),
            fallback=fallback_for(explainer),
        )
    seconds = time.monotonic() - started
    results = recording.results
    # first try: the first answer was valid and grounded (a request that timed out or failed
    # before it and was sent again is a retry, counted below, not a repair)
    first_try = sum(
        1
        for r in results
        if r.explanation is not None and r.repairs == 0 and not r.grounding_warnings
    )
    repaired = sum(1 for r in results if r.explanation is not None and r.repairs)
    retried = outcome.usage.requests - len(results) - outcome.repairs
    records = len(outcome.explanations)
    fallbacks = sum(1 for by in outcome.explained_by.values() if by == FALLBACK)
    replaced = [f"{name}" for fields in outcome.replaced.values() for name in fields]
    warnings = [w for ws in outcome.grounding_warnings.values() for w in ws]
    usage = outcome.usage
    print(f"  records: {records} of {len(sites)} sites")
    print(
        f"  first-try valid: {first_try}; repaired: {repaired}; offline fallbacks: "
        f"{fallbacks}; fields replaced: {len(replaced)} ({', '.join(sorted(replaced)) or '-'})"
    )
    for rid, reason in outcome.fallbacks.items():
        print(f"    fallback {rid}: {reason[:160]}")
    print(f"  grounding warnings left: {len(warnings)}")
    for warning in warnings:
        print(f"    {warning[:160]}")
    print(
        f"  response format: {explainer.profile.response_format}; streaming: "
        f"{explainer.profile.stream}; unknown keys dropped: "
        f"{outcome.dropped_keys}; values fixed: {outcome.fixed_values}; repairs asked: "
        f"{outcome.repairs}"
    )
    per = max(1, records)
    print(
        f"  requests: {usage.requests} ({retried} of them retries of a request that timed out, "
        f"failed or was refused for its format); tokens: {usage.prompt_tokens} prompt + "
        f"{usage.completion_tokens} completion = "
        f"{(usage.prompt_tokens + usage.completion_tokens) / per:.0f} per record; "
        f"{seconds:.0f} s in all = {seconds / per:.0f} s per record"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
