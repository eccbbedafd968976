"""`vmine run --batch` through the Files and Batch APIs of the local fake server (driven by
the real openai client), and `--batch-file` / `--batch-results` for an offline runner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.dataset.reader import load_dataset
from tests.conftest import make_git_repo
from tests.llm_server import FakeLLM
from tests.test_llm import DATASET_VERSION, ENGINE_FILES, ENGINE_SITES, REPO

ROOT = Path(__file__).resolve().parent.parent


def batch_args(server: FakeLLM, repo: Path, tmp: Path, *more: str) -> list[str]:
    return [
        "run",
        str(repo),
        *more,
        "--repo-name",
        REPO,
        "-o",
        str(tmp / "out"),
        "--llm",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        server.base_url,
        "--cache",
        str(tmp / "cache" / "store.sqlite"),
        "--cache-dir",
        str(tmp / "mirrors"),
        "--dataset-version",
        DATASET_VERSION,
        "--ci",
    ]


def vmine(args: list[str]):
    from pipeline.cli import main

    return CliRunner().invoke(main, args, env={"OPENAI_API_KEY": "test", "CI": "true"})


def dataset(tmp: Path):
    [root] = {path.parent for path in (tmp / "out").rglob("manifest.json")}
    return load_dataset(root)


def batch_sizes(server: FakeLLM) -> list[int]:
    return [batch.total for batch in server.batches.values()]


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_git_repo(tmp_path / "repo", ENGINE_FILES)


def test_a_batch_run_writes_the_dataset_and_repairs_in_a_second_batch(fake_llm, repo, tmp_path):
    fake_llm.fail("malformed", site="port must be at least 1024")
    result = vmine(batch_args(fake_llm, repo, tmp_path, "--batch", "--batch-poll", "0.01"))
    assert result.exit_code == 0, result.output
    assert batch_sizes(fake_llm) == [ENGINE_SITES, 1]
    assert all(request.batch for request in fake_llm.requests)  # nothing outside the batches
    assert fake_llm.count == ENGINE_SITES + 1
    data = dataset(tmp_path)
    assert len(data.records) == ENGINE_SITES
    assert [entry.explainedBy for entry in data.entries] == ["openai"] * ENGINE_SITES
    assert (data.manifest.llm.requests, data.manifest.llm.repairs) == (ENGINE_SITES + 1, 1)
    assert "batch batch_1: submitted 4 requests" in result.output

    again = vmine(batch_args(fake_llm, repo, tmp_path, "--batch", "--batch-poll", "0.01"))
    assert again.exit_code == 0, again.output
    assert len(fake_llm.batches) == 2  # everything cached: no batch at all


def test_an_expired_batch_sends_a_second_batch_for_what_is_left(fake_llm, repo, tmp_path):
    fake_llm.plan_batch(ending="expired", done=1)
    result = vmine(batch_args(fake_llm, repo, tmp_path, "--batch", "--batch-poll", "0.01"))
    assert result.exit_code == 0, result.output
    assert [b.status for b in fake_llm.batches.values()] == ["expired", "completed"]
    assert batch_sizes(fake_llm) == [ENGINE_SITES, ENGINE_SITES - 1]
    assert [e.explainedBy for e in dataset(tmp_path).entries] == ["openai"] * ENGINE_SITES


def test_batches_that_keep_failing_leave_offline_fallbacks(fake_llm, repo, tmp_path):
    for _ in range(3):
        fake_llm.plan_batch(ending="failed")
    result = vmine(batch_args(fake_llm, repo, tmp_path, "--batch", "--batch-poll", "0.01"))
    assert result.exit_code == 1, result.output
    assert batch_sizes(fake_llm) == [ENGINE_SITES] * 3  # a first batch and two more tries
    data = dataset(tmp_path)
    assert [e.explainedBy for e in data.entries] == ["offline-fallback"] * ENGINE_SITES
    assert {site.reason for site in data.manifest.fallbackSites} == {
        "batch batch_3 failed: the input file is not valid"
    }


def test_a_refused_json_schema_in_a_batch_goes_again_in_json_mode(fake_llm, repo, tmp_path):
    fake_llm.fail("reject_schema_400", times=100)
    result = vmine(batch_args(fake_llm, repo, tmp_path, "--batch", "--batch-poll", "0.01"))
    assert result.exit_code == 0, result.output
    assert batch_sizes(fake_llm) == [ENGINE_SITES, ENGINE_SITES]
    formats = [r.response_format for r in fake_llm.requests]
    assert formats == ["json_schema"] * ENGINE_SITES + ["json_object"] * ENGINE_SITES


def results_of(server: FakeLLM, requests_file: Path, skip: int = 0) -> str:
    """What vLLM's offline runner writes for a request file, from the fake server's answers."""
    lines = []
    for line in requests_file.read_text().splitlines()[skip:]:
        request = json.loads(line)
        sent = urllib.request.Request(
            server.base_url + "/chat/completions",
            json.dumps(request["body"]).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(sent, timeout=10) as answer:
            body = json.load(answer)
        lines.append(
            json.dumps(
                {
                    "id": f"vllm-{len(lines)}",
                    "custom_id": request["custom_id"],
                    "response": {"status_code": 200, "request_id": "r", "body": body},
                    "error": None,
                }
            )
        )
    return "\n".join(lines) + "\n"


def test_a_batch_file_and_its_results_make_the_dataset(fake_llm, repo, tmp_path):
    requests_file = tmp_path / "requests.jsonl"
    wrote = vmine(batch_args(fake_llm, repo, tmp_path, "--batch-file", str(requests_file)))
    assert wrote.exit_code == 0, wrote.output
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*.json"))
    lines = [json.loads(line) for line in requests_file.read_text().splitlines()]
    assert len(lines) == ENGINE_SITES
    assert {(line["method"], line["url"]) for line in lines} == {("POST", "/v1/chat/completions")}
    assert all(line["body"]["response_format"]["type"] == "json_schema" for line in lines)
    assert fake_llm.count == 0
    assert f"batch file: {ENGINE_SITES} requests written to {requests_file}" in wrote.output

    # One answer missing from the results: that site gets the offline record.
    results = tmp_path / "results.jsonl"
    results.write_text(results_of(fake_llm, requests_file, skip=1))
    ingested = vmine(batch_args(fake_llm, repo, tmp_path, "--batch-results", str(results)))
    assert ingested.exit_code == 1, ingested.output
    data = dataset(tmp_path)
    assert sorted(e.explainedBy for e in data.entries) == ["offline-fallback"] + ["openai"] * 3
    assert [s.reason for s in data.manifest.fallbackSites] == ["not in results.jsonl"]

    # The next request file asks only for the fallback record.
    vmine(batch_args(fake_llm, repo, tmp_path, "--batch-file", str(requests_file)))
    assert len(requests_file.read_text().splitlines()) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--batch", "--dry-run"], "--batch and --dry-run do not go together: use one"),
        (["--batch", "--batch-file", "x.jsonl"], "--batch and --batch-file do not go together"),
        (["--batch-results", "missing.jsonl"], "--batch-results: missing.jsonl: no such file"),
    ],
)
def test_batch_options_that_do_not_go_together_are_one_line_errors(
    fake_llm, repo, tmp_path, options, message
):
    result = vmine(batch_args(fake_llm, repo, tmp_path, *options))
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.slow
def test_an_interrupted_batch_run_resumes_polling_the_same_batch(fake_llm, repo, tmp_path):
    fake_llm.plan_batch(hold=True)
    vmine_bin = Path(sys.executable).with_name("vmine")
    args = [
        str(vmine_bin),
        *batch_args(fake_llm, repo, tmp_path, "--batch", "--batch-poll", "0.05"),
    ]
    env = {**os.environ, "OPENAI_API_KEY": "test", "CI": "true"}
    process = subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + 60
    while fake_llm.stats()["retrieves"] < 3:
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, "the run never polled its batch"
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=10)
    assert process.returncode == 130, output
    assert list(fake_llm.batches) == ["batch_1"]
    assert fake_llm.batches["batch_1"].status == "in_progress"

    fake_llm.release_batches()
    resumed = vmine(batch_args(fake_llm, repo, tmp_path, "--batch", "--batch-poll", "0.01"))
    assert resumed.exit_code == 0, resumed.output
    assert "batch batch_1: resuming, 4 requests" in resumed.output
    assert list(fake_llm.batches) == ["batch_1"]  # followed again, not submitted again
    assert fake_llm.count == ENGINE_SITES
    assert [e.explainedBy for e in dataset(tmp_path).entries] == ["openai"] * ENGINE_SITES


def test_a_results_file_with_lone_surrogates_and_nuls_makes_the_dataset(fake_llm, repo, tmp_path):
    # Issue 17: one answer escaping "\ud800" stopped `--batch-results` with a traceback.
    requests_file = tmp_path / "requests.jsonl"
    vmine(batch_args(fake_llm, repo, tmp_path, "--batch-file", str(requests_file)))
    fake_llm.fail("surrogate", times=100)
    lines = results_of(fake_llm, requests_file).splitlines()
    # The first answer escapes them once more, inside the content (a lone surrogate in the
    # content itself once the line is read); the others inside the answer's JSON.
    lines[0] = lines[0].replace("\\\\ud800", "\\ud800").replace("\\\\u0000", "\\u0000")
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(lines) + "\n")
    for _ in range(2):  # and a rerun, which reads them from the cache
        ingested = vmine(batch_args(fake_llm, repo, tmp_path, "--batch-results", str(results)))
        assert ingested.exit_code == 0, ingested.output
        data = dataset(tmp_path)
        assert [e.explainedBy for e in data.entries] == ["openai"] * ENGINE_SITES
        texts = {record.documentation for record in data.records.values()}
        assert texts == {"bad \ufffd text \ufffd end"}


def test_batch_requests_never_stream(fake_llm, repo, tmp_path):
    requests_file = tmp_path / "requests.jsonl"
    vmine(batch_args(fake_llm, repo, tmp_path, "--batch-file", str(requests_file)))
    bodies = [json.loads(line)["body"] for line in requests_file.read_text().splitlines()]
    assert bodies and not any("stream" in body or "stream_options" in body for body in bodies)
    result = vmine(batch_args(fake_llm, repo, tmp_path, "--batch", "--batch-poll", "0.01"))
    assert result.exit_code == 0, result.output
    assert fake_llm.requests and not any("stream" in r.body for r in fake_llm.requests)
