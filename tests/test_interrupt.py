"""`vmine run --llm openai` stopped by SIGINT/SIGTERM mid-enrichment, as a real process
against the standalone fake server: it stops quickly, leaves only whole files, and a rerun
finishes the same dataset an uninterrupted run writes, paying for each site once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.dataset.models import Envelope
from tests.conftest import make_git_repo

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
REPO = "acme/engine"
DATASET_VERSION = "2026-01-02T03:04:05.678Z"
LIMITS = [
    "max_num_seqs",
    "max_model_len",
    "block_size",
    "swap_space",
    "num_gpu_blocks",
    "max_loras",
    "max_lora_rank",
    "max_cpu_loras",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "max_parallel_loading_workers",
    "max_logprobs",
]
SITES = len(LIMITS)


def limits_module() -> str:
    checks = "".join(
        f"    if cfg.{name} <= 0:\n"
        f'        raise ValueError(f"{name} must be positive, got {{cfg.{name}}}")\n'
        for name in LIMITS
    )
    return f"def check_limits(cfg) -> None:\n{checks}"


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """`python -m tests.llm_server` as its own process, answering after 300 ms."""
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.llm_server", "--port", "0", "--latency-ms", "300"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


def stats(url: str) -> dict[str, int]:
    base = url.removesuffix("/v1")
    with urllib.request.urlopen(f"{base}/_stats", timeout=5) as answer:
        return json.load(answer)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return make_git_repo(tmp_path_factory.mktemp("repo"), {"engine/limits.py": limits_module()})


def start_run(url: str, repo: Path, out: Path, cache: Path) -> subprocess.Popen:
    vmine = Path(sys.executable).with_name("vmine")
    args = [
        str(vmine),
        "run",
        str(repo),
        "--repo-name",
        REPO,
        "-o",
        str(out),
        "--llm",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        url,
        "--concurrency",
        "2",
        "--cache",
        str(cache),
        "--cache-dir",
        str(cache.parent / "mirrors"),
        "--dataset-version",
        DATASET_VERSION,
        "--ci",
    ]
    env = {**os.environ, "OPENAI_API_KEY": "test", "CI": "true"}
    return subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def run_to_end(url: str, repo: Path, out: Path, cache: Path) -> str:
    process = start_run(url, repo, out, cache)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output
    return output


def comparable(out: Path) -> dict[str, object]:
    """Every file of a dataset, records without `analyzedAt` (when the explanation was first
    made: two independent caches differ in it) and the manifest without its LLM usage."""
    files: dict[str, object] = {}
    for path in sorted(out.rglob("*")):
        if not path.is_file():
            continue
        name = str(path.relative_to(out))
        if path.parent.name == "records":
            record = json.loads(path.read_text())
            del record["record"]["analyzedAt"]
            files[name] = record
        elif path.name == "manifest.json":
            manifest = json.loads(path.read_text())
            for key in ("llm", "counts"):
                del manifest[key]
            files[name] = manifest
        else:
            files[name] = path.read_text()
    return files


@pytest.fixture(scope="module")
def reference(server_url, repo, tmp_path_factory) -> dict[str, object]:
    """The dataset an uninterrupted run writes."""
    where = tmp_path_factory.mktemp("reference")
    run_to_end(server_url, repo, where / "out", where / "cache" / "store.sqlite")
    return comparable(where / "out")


def interrupt(url: str, repo: Path, out: Path, cache: Path, signum: int) -> tuple[int, str]:
    """Start a run, send `signum` once the server has answered three requests, and wait
    for the process to end (within seconds, or this raises)."""
    before = stats(url)["answered"]
    process = start_run(url, repo, out, cache)
    deadline = time.monotonic() + 60
    while stats(url)["answered"] - before < 3:
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, "the run never reached the server"
        time.sleep(0.02)
    process.send_signal(signum)
    output, _ = process.communicate(timeout=10)
    return process.returncode, output


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_resumes_to_the_same_dataset(
    server_url, repo, reference, tmp_path, signum, code
):
    out, cache = tmp_path / "out", tmp_path / "cache" / "store.sqlite"
    before = stats(server_url)["received"]

    returncode, output = interrupt(server_url, repo, out, cache, signum)

    assert returncode == code, output
    assert "interrupted" in output
    names = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert not [name for name in names if ".vmine-tmp-" in name], names
    for path in out.rglob("records/*.json"):
        Envelope.model_validate_json(path.read_text())  # whole files only
    # A third request went out only after the client had finished one of the first two.
    assert 1 <= len(list(out.rglob("records/*.json"))) < SITES

    run_to_end(server_url, repo, out, cache)

    assert comparable(out) == reference
    # Requests in flight at the signal finish and are cached: nothing is paid twice.
    assert stats(server_url)["received"] - before == SITES


def test_requests_in_flight_at_an_interruption_are_paid_once(server_url, repo, reference, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache" / "store.sqlite"
    before = stats(server_url)["received"]
    interrupt(server_url, repo, out, cache, signal.SIGINT)
    run_to_end(server_url, repo, out, cache)
    assert stats(server_url)["received"] - before == SITES
