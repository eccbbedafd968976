"""Requests per second of the `openai` explainer at concurrency 1 and 8, against the local
fake server answering after a fixed latency (target: concurrency 8 at least 6x faster).

    .venv/bin/python bench/llm_throughput.py [--sites 40] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.dataset.models import Site, github_url  # noqa: E402
from pipeline.explainers.base import ExplainRequest  # noqa: E402
from pipeline.explainers.llm import LLMExplainer  # noqa: E402

REPO, SHA = "acme/engine", "0123456789abcdef0123456789abcdef01234567"


def synthetic_site(number: int) -> Site:
    name = f"limit_{number}"
    source = (
        f"def check_{name}(cfg):\n"
        f"    if cfg.{name} <= 0:\n"
        f'        raise ValueError(f"{name} must be positive, got {{cfg.{name}}}")'
    )
    return Site(
        repo=REPO,
        analyzedSha=SHA,
        filePath="engine/limits.py",
        lineNumber=3 * number + 3,
        qualname=f"check_{name}",
        validatorKind="name",
        errorClass="ValueError",
        errorMessage=f"{name} must be positive, got {{cfg.{name}}}",
        messagePattern=f"{name} must be positive, got (.*?)",
        messageStatus="template",
        guards=[f"cfg.{name} <= 0"],
        sourceCode=source,
        sourceCodeStart=3 * number + 1,
        sourceCodeEnd=3 * number + 3,
        githubUrl=github_url(REPO, SHA, "engine/limits.py", 3 * number + 1, 3 * number + 3),
        functionSource=source,
    )


class Memory:
    """What a store remembers of the server between runs (its negotiated profile)."""

    def __init__(self) -> None:
        self.profiles: dict[tuple[str, str], object] = {}

    def get_server_profile(self, base_url, model):
        return self.profiles.get((base_url, model))

    def put_server_profile(self, base_url, model, profile) -> None:
        self.profiles[(base_url, model)] = profile


async def explain_all(
    base_url: str, sites: list[Site], concurrency: int, memory: Memory
) -> tuple[int, float]:
    """(HTTP requests made, seconds) for explaining every site once."""
    explainer = LLMExplainer("fake-model", base_url, "bench", concurrency)
    explainer.remember_with(memory)
    started = time.perf_counter()
    try:
        results = await asyncio.gather(*(explainer.explain(ExplainRequest(site)) for site in sites))
    finally:
        await explainer.aclose()
    elapsed = time.perf_counter() - started
    failed = [result.error for result in results if result.error]
    if failed:
        raise SystemExit(f"bench: {len(failed)} sites failed, first: {failed[0]}")
    return sum(result.usage.requests for result in results), elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="openai explainer throughput")
    parser.add_argument("--sites", type=int, default=40)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    args = parser.parse_args(argv)

    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.llm_server",
            "--port",
            "0",
            "--latency-ms",
            str(args.latency_ms),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = server.stdout.readline().strip()
        sites = [synthetic_site(number) for number in range(args.sites)]
        # As on any run after the first against a server: its profile is known, so no
        # request goes alone to learn it (the first run ever pays one such probe).
        memory = Memory()
        asyncio.run(explain_all(base_url, sites[:1], 1, memory))
        rates: dict[int, float] = {}
        for concurrency in (1, 8):
            requests, seconds = asyncio.run(explain_all(base_url, sites, concurrency, memory))
            rates[concurrency] = requests / seconds
            print(
                f"concurrency {concurrency}: {requests} requests in {seconds:.2f} s "
                f"= {rates[concurrency]:.1f} requests/s"
            )
        ratio = rates[8] / rates[1]
        verdict = "ok" if ratio >= 6 else "below target"
        print(
            f"speed-up at concurrency 8: {ratio:.2f}x (target >= 6x: {verdict}); "
            f"server latency {args.latency_ms:g} ms, {args.sites} sites"
        )
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
