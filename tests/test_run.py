"""Enrichment (cache, budgets, concurrency, interruption) and `vmine run` end to end."""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import signal
import subprocess

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.console import Console
from pipeline.dataset.models import Setting
from pipeline.dataset.reader import load_dataset
from pipeline.explainers.base import (
    Explainer,
    ExplainRequest,
    ExplainResult,
    Grounding,
    NoGrounding,
    Usage,
)
from pipeline.explainers.fallback import fallback_for
from pipeline.keys import dumps_key, explanation_key, record_id, site_meaning
from pipeline.mine.enrich import GIVE_UP_AFTER, by_key, enrich, plan
from pipeline.mine.run import RunOptions, run_dataset
from pipeline.store import Store
from tests.conftest import make_git_repo
from tests.site_factory import make_explanation, make_site

SITES = [
    make_site("max_batch must be positive", line=10),
    make_site("unknown scheduling policy", line=20, qualname="SchedulerConfig.check_policy"),
    make_site("timeout must be at least 1 s", line=30, qualname="ServerConfig.validate"),
    make_site("port is out of range", line=40, qualname="ServerConfig.validate"),
    make_site("host must not be empty", line=50, qualname="ServerConfig.validate"),
]


class CountingExplainer(Explainer):
    """A deterministic explainer that records its calls and reports one HTTP request each."""

    provider = "test"
    model = "test-model"
    prompt_version = "test-1"
    reads_whole_function = False

    def __init__(self, tokens: int = 10, fail: str | None = None, pause: float = 0.0) -> None:
        self.calls: list[str] = []
        self.tokens = tokens
        self.fail = fail
        self.pause = pause
        self.in_flight = 0
        self.most_in_flight = 0

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        message = request.site.errorMessage
        self.calls.append(message)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.pause)
        finally:
            self.in_flight -= 1
        usage = Usage(requests=1, prompt_tokens=self.tokens, completion_tokens=self.tokens)
        if message == self.fail:
            return ExplainResult(None, "the model refused", usage)
        explanation = make_explanation(f"Raised when {message}.")
        return ExplainResult(
            explanation, usage=usage, grounding_warnings=request.grounding.check(explanation)
        )

    def estimate_tokens(self, request: ExplainRequest) -> tuple[int, int]:
        return (len(request.site.errorMessage), 100)


class FlagGrounding(Grounding):
    def check(self, explanation, settings=()):
        return ["exampleFix: flag --max-batch does not occur in the repository"]


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "store.sqlite") as opened:
        yield opened


def run_enrich(store, explainer, sites=SITES, grounding=None, **options):
    return enrich(sites, explainer, store, grounding or NoGrounding(), **options)


# -- enrich ----------------------------------------------------------------------------


def test_cache_key_ignores_line_numbers_and_commit():
    moved = make_site("max_batch must be positive", line=99).model_copy(
        update={"analyzedSha": "f" * 40}
    )
    assert explanation_key("m", "v1", moved) == explanation_key("m", "v1", SITES[0])
    assert explanation_key("m", "v2", moved) != explanation_key("m", "v1", SITES[0])
    assert explanation_key("m2", "v1", moved) != explanation_key("m", "v1", SITES[0])


def test_cache_key_asks_again_when_a_setting_changes():
    site = SITES[0]
    mode = Setting(
        expr="self.mode",
        cls="CacheConfig",
        field="mode",
        type="Mode",
        default='"none"',
        choices=["none", "all"],
        doc=None,
        flags=["--mode"],
    )
    with_mode = site.model_copy(update={"settings": [mode]})
    more_choices = site.model_copy(
        update={"settings": [mode.model_copy(update={"choices": ["none", "all", "align"]})]}
    )
    other_default = site.model_copy(
        update={"settings": [mode.model_copy(update={"default": '"all"'})]}
    )
    keys = {explanation_key("m", "v1", s) for s in (site, with_mode, more_choices, other_default)}
    assert len(keys) == 4
    # a site that reads no setting keeps the key it had before settings existed
    assert (
        explanation_key("m", "v1", site)
        == hashlib.sha256(
            dumps_key(
                "m",
                "v1",
                site.errorClass,
                site.errorMessage,
                site.messagePattern,
                site.guards,
                site.qualname,
                site_meaning(site),
            ).encode()
        ).hexdigest()
    )


def test_every_site_is_explained_and_cached(store):
    explainer = CountingExplainer()
    outcome = run_enrich(store, explainer)
    assert sorted(explainer.calls) == sorted(s.errorMessage for s in SITES)
    assert set(outcome.explanations) == {record_id(s) for s in SITES}
    assert (outcome.failures, outcome.pending, outcome.cache_hits) == ({}, [], 0)
    assert outcome.usage == Usage(requests=5, prompt_tokens=50, completion_tokens=50)


def test_warm_cache_makes_no_calls_and_keeps_the_first_analysis_time(store):
    first = run_enrich(store, CountingExplainer())
    again = CountingExplainer()
    second = run_enrich(store, again)
    assert again.calls == []
    assert second.cache_hits == 5
    assert second.usage == Usage()
    assert {rid: c.analyzed_at for rid, c in second.explanations.items()} == {
        rid: c.analyzed_at for rid, c in first.explanations.items()
    }


def test_the_progress_counts_sites_as_the_records_do(store):
    # Two files hold the same check: one answer explains both sites (one key).
    twin = make_site(
        "host must not be empty", file_path="engine/copy.py", qualname="ServerConfig.validate"
    )
    run_enrich(store, CountingExplainer(), sites=SITES[:2])  # two sites cached
    stream = io.StringIO()
    explainer = CountingExplainer()
    outcome = run_enrich(store, explainer, sites=[*SITES, twin], console=Console("plain", stream))
    assert len(explainer.calls) == 3 and outcome.cache_hits == 2
    assert len(outcome.explanations) == 6
    lines = [line for line in stream.getvalue().splitlines() if line.startswith("explain: ")]
    assert lines[0].startswith("explain: 2/6 ") and lines[-1].startswith("explain: 6/6 ")


def test_the_explainer_contract_has_defaults_for_an_explainer_without_a_server(store):
    explainer = CountingExplainer()
    assert explainer.profile is None
    assert explainer.remember_with(store) is None
    assert asyncio.run(explainer.aclose()) is None
    assert FlagGrounding().prefetch([make_explanation()]) is None


def test_failure_is_reported_and_retried_on_the_next_run(store):
    outcome = run_enrich(store, CountingExplainer(fail="port is out of range"))
    assert outcome.failures == {record_id(SITES[3]): "the model refused"}
    retry = CountingExplainer()
    run_enrich(store, retry)
    assert retry.calls == ["port is out of range"]


def test_explainer_exception_becomes_a_failure(store):
    class Broken(CountingExplainer):
        async def explain(self, request):
            raise RuntimeError("boom")

    outcome = run_enrich(store, Broken(), sites=SITES[:1])
    assert outcome.failures == {record_id(SITES[0]): "RuntimeError: boom"}


def test_an_answer_that_cannot_be_stored_falls_back_like_any_bad_answer(store):
    class Unstorable(CountingExplainer):
        async def explain(self, request):
            explanation = make_explanation("lone \ud800 surrogate")  # no sanitising on the way
            return ExplainResult(explanation, usage=Usage(requests=1))

    outcome = run_enrich(store, Unstorable(), sites=SITES[:1], fallback=fallback_for(Unstorable()))
    rid = record_id(SITES[0])
    assert outcome.explained_by == {rid: "offline-fallback"}
    assert outcome.fallbacks[rid].startswith("the answer cannot be stored: ")
    assert outcome.failures == {}
    assert store.get_explanation(next(iter(by_key(SITES[:1], Unstorable())))) is None


def test_cache_write_error_is_raised_not_hidden_as_pending(tmp_path):
    class FullDisk(Store):
        def put_explanation(self, key, cached):
            raise OSError("No space left on device")

    with FullDisk(tmp_path / "full.sqlite") as full:
        with pytest.raises(OSError, match="No space left on device"):
            run_enrich(full, CountingExplainer(), sites=SITES[:2])


def test_request_budget_leaves_the_rest_pending_and_a_rerun_resumes(store):
    limited = CountingExplainer()
    outcome = run_enrich(store, limited, concurrency=3, max_requests=2)
    assert len(limited.calls) == 2
    assert len(outcome.pending) == 3
    assert len(outcome.explanations) == 2
    resumed = CountingExplainer()
    again = run_enrich(store, resumed)
    assert len(resumed.calls) == 3
    assert again.cache_hits == 2
    assert not again.pending


class DeadServer(CountingExplainer):
    """Every call fails, as against a wrong base URL or key."""

    async def explain(self, request: ExplainRequest) -> ExplainResult:
        self.calls.append(request.site.errorMessage)
        return ExplainResult(None, "gave up after 5 requests: connection error.", Usage(requests=5))


def test_an_explainer_failing_every_site_from_the_start_is_given_up_on(store):
    dead = DeadServer()
    outcome = run_enrich(store, dead, concurrency=1)
    assert len(dead.calls) == GIVE_UP_AFTER
    assert outcome.gave_up == (
        "the first 3 sites all failed, the last with: gave up after 5 requests: connection error"
    )
    assert len(outcome.failures) == 3
    assert len(outcome.pending) == 2


def test_failures_after_a_success_do_not_stop_the_run(store):
    class FailsAfterFirst(CountingExplainer):
        async def explain(self, request):
            if self.calls:
                self.calls.append(request.site.errorMessage)
                return ExplainResult(None, "the model refused", Usage(requests=1))
            return await super().explain(request)

    explainer = FailsAfterFirst()
    outcome = run_enrich(store, explainer, concurrency=1)
    assert len(explainer.calls) == 5
    assert outcome.gave_up is None
    assert len(outcome.failures) == 4


def test_token_budget_stops_new_requests(store):
    explainer = CountingExplainer(tokens=50)  # 100 tokens a call
    outcome = run_enrich(store, explainer, concurrency=1, max_tokens=150)
    assert len(explainer.calls) == 2
    assert len(outcome.pending) == 3


def test_concurrency_bounds_the_calls_in_flight(store):
    explainer = CountingExplainer(pause=0.01)
    run_enrich(store, explainer, concurrency=2)
    assert explainer.most_in_flight == 2


def test_sites_with_the_same_content_share_one_call(store):
    twice = [make_site("bad value", line=10), make_site("bad value", line=20, occurrence=1)]
    explainer = CountingExplainer()
    outcome = run_enrich(store, explainer, sites=twice)
    assert explainer.calls == ["bad value"]
    assert set(outcome.explanations) == {record_id(s) for s in twice}


def test_grounding_warnings_for_new_and_cached_explanations(store):
    new = run_enrich(store, CountingExplainer(), sites=SITES[:1], grounding=FlagGrounding())
    cached = run_enrich(store, CountingExplainer(), sites=SITES[:1], grounding=FlagGrounding())
    expected = {
        record_id(SITES[0]): ["exampleFix: flag --max-batch does not occur in the repository"]
    }
    assert new.grounding_warnings == expected
    assert cached.grounding_warnings == expected


def test_interrupt_keeps_what_finished_and_leaves_the_rest_pending(store):
    class Interrupted(CountingExplainer):
        async def explain(self, request):
            if len(self.calls) == 1:
                self.calls.append(request.site.errorMessage)
                os.kill(os.getpid(), signal.SIGINT)
                await asyncio.sleep(30)
            return await super().explain(request)

    outcome = run_enrich(store, Interrupted(), concurrency=1, grace=0.05)
    assert outcome.interrupted_by == signal.SIGINT
    assert outcome.exit_code_for_signal == 130
    assert set(outcome.explanations) == {record_id(SITES[0])}
    assert len(outcome.pending) == 4
    resumed = CountingExplainer()
    run_enrich(store, resumed)
    assert len(resumed.calls) == 4


def test_requests_in_flight_at_an_interrupt_finish_within_the_grace(store):
    class SlowAfterSignal(CountingExplainer):
        async def explain(self, request):
            if len(self.calls) == 1:  # the second request, with the first in flight
                os.kill(os.getpid(), signal.SIGTERM)
            return await super().explain(request)

    explainer = SlowAfterSignal(pause=0.05)
    outcome = run_enrich(store, explainer, concurrency=2, grace=10)
    assert len(explainer.calls) == 2  # the two in flight; nothing started after the signal
    assert len(outcome.explanations) == 2
    assert len(outcome.pending) == 3
    assert outcome.exit_code_for_signal == 143
    resumed = CountingExplainer()
    run_enrich(store, resumed)
    assert len(resumed.calls) == 3


def test_second_signal_cancels_the_requests_in_flight(store):
    class Stubborn(CountingExplainer):
        async def explain(self, request):
            self.calls.append(request.site.errorMessage)
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0.01)
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(30)

    outcome = run_enrich(store, Stubborn(), concurrency=1, grace=60)
    assert outcome.explanations == {}
    assert len(outcome.pending) == 5


def test_error_caused_by_the_interrupt_leaves_the_site_pending_not_failed(store):
    class KilledChild(CountingExplainer):
        async def explain(self, request):
            # What a `git grep` killed by the same Ctrl-C looks like to the explainer.
            os.kill(os.getpid(), signal.SIGTERM)
            return ExplainResult(None, "SourceError: git grep failed")

    outcome = run_enrich(store, KilledChild(), sites=SITES[:2], concurrency=1)
    assert outcome.exit_code_for_signal == 143
    assert outcome.failures == {}
    assert sorted(outcome.pending) == sorted(record_id(s) for s in SITES[:2])


def test_interrupt_while_rechecking_cached_answers_keeps_them_all(store):
    run_enrich(store, CountingExplainer(), sites=SITES[:3])

    class InterruptedGrounding(Grounding):
        checked = 0

        def check(self, explanation, settings=()):
            self.checked += 1
            os.kill(os.getpid(), signal.SIGINT)
            return ["exampleFix: does not parse as Python"]

    grounding = InterruptedGrounding()
    explainer = CountingExplainer()
    outcome = run_enrich(store, explainer, grounding=grounding)
    assert grounding.checked == 1
    assert explainer.calls == []
    assert set(outcome.explanations) == {record_id(s) for s in SITES[:3]}
    assert sorted(outcome.pending) == sorted(record_id(s) for s in SITES[3:])
    assert len(outcome.grounding_warnings) == 1
    assert outcome.exit_code_for_signal == 130


def test_signal_handlers_are_restored_after_enrichment(store):
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    run_enrich(store, CountingExplainer(), sites=SITES[:1])
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_plan_counts_cached_sites_and_estimates_tokens(store):
    run_enrich(store, CountingExplainer(), sites=SITES[:2])
    estimate = plan(SITES, CountingExplainer(), store, NoGrounding())
    assert (estimate.sites, estimate.cached, estimate.to_request) == (5, 2, 3)
    assert estimate.input_tokens == sum(len(s.errorMessage) for s in SITES[2:])
    assert estimate.output_tokens == 300


# -- vmine run, end to end on a hand-written repository --------------------------------

CONFIG_PY = """\
from dataclasses import dataclass


@dataclass
class SchedulerConfig:
    max_batch: int = 8
    policy: str = "fcfs"

    def __post_init__(self) -> None:
        if self.max_batch <= 0:
            raise ValueError("max_batch must be positive")
        if self.policy not in ("fcfs", "priority"):
            raise ValueError(f"unknown scheduling policy {self.policy!r}")


def check_port(port: int) -> int:
    if not 0 < port < 65536:
        raise ValueError("port %d is out of range" % port)
    return port


def describe(port: int) -> str:
    raise ValueError("not inside a validator")
"""

VERSION = "2026-03-04T05:06:07.089Z"
SLUGS = {"max-batch-must-be-positive", "unknown-scheduling-policy", "port-is-out-of-range"}


@pytest.fixture
def repo(tmp_path):

    return make_git_repo(
        tmp_path / "engine",
        {"engine/__init__.py": "", "engine/config.py": CONFIG_PY, "README.md": "# engine\n"},
    )


def head_sha(repo) -> str:

    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, check=True)
    return done.stdout.decode().strip()


def vmine_run(repo, tmp_path, *extra):
    args = [
        "run",
        str(repo),
        "--repo-name",
        "acme/engine",
        "-o",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--llm",
        "offline",
        "--dataset-version",
        VERSION,
        "--ci",
        *extra,
    ]
    return CliRunner().invoke(main, args)


def options(repo, tmp_path, **more):

    return RunOptions(
        source=str(repo),
        repo_name="acme/engine",
        out_dir=tmp_path / "out",
        cache_dir=tmp_path / "cache",
        dataset_version=VERSION,
        **more,
    )


def records_of(root):
    return {path.name: path.read_bytes() for path in (root / "records").iterdir()}


def test_run_writes_the_dataset_and_a_warm_rerun_calls_no_explainer(repo, tmp_path, monkeypatch):
    from pipeline.explainers.offline import OfflineExplainer

    result = vmine_run(repo, tmp_path)
    assert result.exit_code == 0, result.output
    root = tmp_path / "out" / "acme" / "engine" / head_sha(repo)
    dataset = load_dataset(root)
    assert {record.slug for record in dataset.records.values()} == SLUGS
    assert [(e.filePath, e.lineNumber) for e in dataset.entries] == [
        ("engine/config.py", 11),
        ("engine/config.py", 13),
        ("engine/config.py", 18),
    ]
    counts = dataset.manifest.counts
    assert (counts.records, counts.sitesNew, counts.sitesReused) == (3, 3, 0)
    assert counts.byStatus.model_dump() == {
        "literal": 1,
        "template": 2,
        "partial": 0,
        "unresolved": 0,
    }
    assert dataset.manifest.llm.provider == "offline"
    assert f"records: 3 written to {root}" in result.output

    calls = []
    original = OfflineExplainer.explain

    async def counted(self, request):
        calls.append(request.site.errorMessage)
        return await original(self, request)

    monkeypatch.setattr(OfflineExplainer, "explain", counted)
    before = records_of(root)
    again = vmine_run(repo, tmp_path)
    assert again.exit_code == 0, again.output
    assert calls == []
    assert records_of(root) == before
    manifest = load_dataset(root).manifest
    assert (manifest.counts.sitesNew, manifest.counts.sitesReused) == (0, 3)


def test_budget_exit_3_writes_fallbacks_for_pending_sites_and_a_rerun_upgrades_them(repo, tmp_path):
    limited = CountingExplainer()
    outcome = run_dataset(options(repo, tmp_path, max_requests=1), Console(), explainer=limited)
    assert outcome.exit_code == 3
    assert len(limited.calls) == 1
    counts = outcome.manifest.counts
    assert (counts.pending, counts.fallbacks, counts.records) == (2, 2, 3)
    assert counts.explainedBy == {"offline-fallback": 2, "test": 1}
    assert {site.reason for site in outcome.manifest.pendingSites} == {"budget ran out"}
    assert {site.reason for site in outcome.manifest.fallbackSites} == {
        "the budget ran out before this site"
    }
    first = load_dataset(outcome.dataset_dir)
    assert sorted(entry.explainedBy for entry in first.entries) == [
        "offline-fallback",
        "offline-fallback",
        "test",
    ]

    resumed = CountingExplainer()
    final = run_dataset(options(repo, tmp_path), Console(), explainer=resumed)
    assert final.exit_code == 0
    assert len(resumed.calls) == 2  # only the fallback records are asked again
    dataset = load_dataset(final.dataset_dir)
    assert len(dataset.records) == 3
    assert {r.slug for r in dataset.records.values()} == SLUGS
    assert [entry.explainedBy for entry in dataset.entries] == ["test"] * 3


def test_failed_site_gets_the_offline_record_with_exit_1_and_is_listed(repo, tmp_path):

    explainer = CountingExplainer(fail="max_batch must be positive")
    outcome = run_dataset(options(repo, tmp_path), Console(), explainer=explainer)
    assert outcome.exit_code == 1
    manifest = outcome.manifest.model_dump()
    assert manifest["failedSites"] == []
    assert manifest["fallbackSites"] == [
        {
            "filePath": "engine/config.py",
            "lineNumber": 11,
            "qualname": "SchedulerConfig.__post_init__",
            "reason": "the model refused",
        }
    ]
    assert manifest["counts"]["records"] == 3


def test_skipped_file_gives_exit_1(tmp_path):

    broken = make_git_repo(
        tmp_path / "broken",
        {
            "engine/config.py": CONFIG_PY,
            "engine/bad.py": "def check(:\n    raise ValueError('x')\n",
        },
    )
    result = vmine_run(broken, tmp_path)
    assert result.exit_code == 1, result.output
    root = tmp_path / "out" / "acme" / "engine" / head_sha(broken)

    skipped = load_dataset(root).manifest.skippedFiles
    assert [entry.filePath for entry in skipped] == ["engine/bad.py"]


def test_dry_run_counts_and_writes_nothing(repo, tmp_path):
    result = vmine_run(repo, tmp_path, "--dry-run")
    assert result.exit_code == 0, result.output
    assert (
        "dry run: 3 sites, 0 cached, 3 to request with offline/offline "
        "(about 0 input + 0 output tokens)"
    ) in result.output
    assert not (tmp_path / "out").exists()


def test_source_that_does_not_exist_is_exit_2_in_one_line(tmp_path):
    result = vmine_run(tmp_path / "missing", tmp_path)
    assert result.exit_code == 2
    assert result.output.startswith("Error: ")
    assert len(result.output.strip().splitlines()) == 1


def test_openai_without_key_or_url_is_exit_2(repo, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = vmine_run(repo, tmp_path, "--llm", "openai")
    assert result.exit_code == 2
    assert "--llm openai needs OPENAI_API_KEY or --base-url/OPENAI_BASE_URL" in result.output


def test_bad_dataset_version_is_exit_2(repo, tmp_path):

    result = CliRunner().invoke(main, ["run", str(repo), "--dataset-version", "yesterday"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: --dataset-version: timestamp must be UTC time as YYYY-MM-DDTHH:MM:SS.mmmZ, "
        "e.g. 2026-08-15T22:17:37.221Z, got 'yesterday'"
    )


def test_run_without_source_is_a_usage_error():
    result = CliRunner().invoke(main, ["run"])
    assert result.exit_code == 2
    assert "give exactly one SOURCE (or --config FILE [TARGET...])" in result.output


def test_run_config_that_does_not_exist_is_exit_2(tmp_path):
    result = CliRunner().invoke(main, ["run", "--config", str(tmp_path / "pipeline.toml")])
    assert result.exit_code == 2
    assert result.output.startswith("Error: ")


def test_openai_budget_counts_http_requests_and_a_rerun_resumes(repo, tmp_path, fake_llm):
    llm = ["--llm", "openai", "--base-url", fake_llm.base_url, "--model", "fake-model"]
    limited = vmine_run(repo, tmp_path, *llm, "--max-requests", "2", "--concurrency", "1")
    assert limited.exit_code == 3, limited.output
    assert fake_llm.count == 2
    root = tmp_path / "out" / "acme" / "engine" / head_sha(repo)
    manifest = load_dataset(root).manifest
    assert (manifest.llm.requests, manifest.counts.pending) == (2, 1)
    assert manifest.llm.model == "fake-model"
    assert "budget ran out: what finished is written and cached; rerun to resume" in limited.output

    resumed = vmine_run(repo, tmp_path, *llm)
    assert resumed.exit_code == 0, resumed.output
    assert fake_llm.count == 3
    warm = vmine_run(repo, tmp_path, *llm)
    assert warm.exit_code == 0, warm.output
    assert fake_llm.count == 3
    assert load_dataset(root).manifest.llm.cacheHits == 3


def test_openai_dry_run_estimates_tokens_without_a_key(repo, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = vmine_run(repo, tmp_path, "--llm", "openai", "--dry-run")
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("dry run:"))
    assert line.startswith("dry run: 3 sites, 0 cached, 3 to request with openai/")
    assert " 0 input" not in line


def test_output_directory_that_cannot_be_made_is_exit_2_in_one_line(repo, tmp_path):
    (tmp_path / "out").write_text("a file where the owner directory should go")
    result = vmine_run(repo, tmp_path, "-o", str(tmp_path / "out" / "datasets"))
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"Error: {tmp_path / 'out' / 'datasets'}: Not a directory; pass a directory you can "
        "write to\n"
    )


def test_fallbacks_for_one_shared_reason_are_one_warning(tmp_path):
    many = {
        "engine/limits.py": "def check_limits(cfg):\n"
        + "".join(
            f"    if cfg.limit_{n} <= 0:\n        raise ValueError('limit_{n} must be positive')\n"
            for n in range(8)
        )
    }
    repo = make_git_repo(tmp_path / "many", many)
    stream = io.StringIO()
    outcome = run_dataset(
        options(repo, tmp_path, max_requests=1),
        Console("plain", stream),
        explainer=CountingExplainer(),
    )
    assert outcome.exit_code == 3
    warnings = [line for line in stream.getvalue().splitlines() if "offline fallback" in line]
    assert warnings == [
        "warning: offline fallback for 7 sites: the budget ran out before this site"
    ]
