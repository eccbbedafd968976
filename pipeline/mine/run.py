"""The `run` command's job end to end: source -> extract -> enrich -> assemble -> write."""

from __future__ import annotations

import os
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from extractors.facts import Rules, Scope
from pipeline.console import Console, line_of, skipped_markdown
from pipeline.dataset.layout import dataset_dir
from pipeline.dataset.manifest import (
    Manifest,
)
from pipeline.dataset.models import Site, Timestamp, now_timestamp
from pipeline.dataset.writer import (
    dataset_lock,
    has_complete_dataset,
    is_complete,
    write_dataset,
)
from pipeline.exits import Exit
from pipeline.explainers.base import IDLE_TIMEOUT, REQUEST_TIMEOUT, Explainer
from pipeline.explainers.fallback import fallback_for
from pipeline.explainers.grounding import RepoGrounding
from pipeline.mine.assemble import assemble, build_manifest, distinct
from pipeline.mine.enrich import EnrichOutcome, enrich, plan
from pipeline.mine.extract import extract_snapshot
from pipeline.mine.option_types import Command, Seconds
from pipeline.source import Snapshot, open_source, resolve_cache_dir
from pipeline.store import Store, default_store_path

if TYPE_CHECKING:  # the openai explainer is imported only when it is used
    from pipeline.explainers.llm import LLMExplainer

_SAME_REASON_LINES = 5  # sites warned of one by one for one fallback reason
DEFAULT_MODEL = "gpt-4o-mini"


class RunError(Exception):
    """A run that cannot start (bad option combination); one line for the user."""


class RunOptions(BaseModel):
    """Everything one run needs, as the `run` command's options name it (see cli.py)."""

    model_config = ConfigDict(extra="forbid")

    source: str
    rev: str | None = None
    repo_name: str | None = None
    github: str | None = None
    tag: str | None = None
    path_prefix: str | None = None
    out_dir: Path = Path("output")
    llm: Literal["auto", "openai", "offline"] = "auto"
    model: str | None = None
    base_url: str | None = None
    concurrency: int = Field(default=8, ge=1)
    max_requests: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    timeout: Seconds = REQUEST_TIMEOUT
    idle_timeout: Seconds = IDLE_TIMEOUT
    response_format: Literal["auto", "json_schema", "json_object"] = "auto"
    batch: bool = False
    batch_file: Path | None = None
    batch_results: Path | None = None
    batch_poll: Seconds = 30.0
    dry_run: bool = False
    cache: Path | None = None
    cache_dir: Path | None = None
    dataset_version: Timestamp | None = None
    rules: Rules = Rules()
    scope: Scope = "validators"  # which raises are sites (the rules' scope)
    include: list[str] = []
    exclude: list[str] = []
    command: Command = None  # the target's entry point, for the example fixes


@dataclass
class RunOutcome:
    """How a run ended: its exit code, and the dataset written (None for a dry run)."""

    exit_code: int
    dataset_dir: Path | None
    manifest: Manifest | None


def choose_explainer(options: RunOptions) -> Explainer:
    """`auto` means `openai` when an API key or a base URL is configured, else `offline`."""
    api_key = os.environ.get("OPENAI_API_KEY") or None
    base_url = options.base_url or os.environ.get("OPENAI_BASE_URL") or None
    provider = options.llm
    if provider == "auto":
        provider = "openai" if api_key or base_url else "offline"
    if provider == "offline":
        from pipeline.explainers.offline import OfflineExplainer

        return OfflineExplainer(command=options.command)
    sends = not (options.dry_run or options.batch_file or options.batch_results)
    if not api_key and not base_url and sends:
        raise RunError("--llm openai needs OPENAI_API_KEY or --base-url/OPENAI_BASE_URL")
    from pipeline.explainers.llm import LLMExplainer

    return LLMExplainer(
        model=options.model or DEFAULT_MODEL,
        base_url=base_url,
        api_key=api_key,
        concurrency=options.concurrency,
        timeout=options.timeout,
        idle_timeout=options.idle_timeout,
        response_format=options.response_format,
        command=options.command,
    )


def run_dataset(
    options: RunOptions, console: Console, *, explainer: Explainer | None = None
) -> RunOutcome:
    """Mine one repository at one commit into `options.out_dir`. Raises SourceError or
    RunError for input the user must fix; everything else becomes the exit code.
    `explainer` replaces the one `options.llm` would choose (tests, embedding)."""
    cache_dir = resolve_cache_dir(options.cache_dir)
    batching = check_batch_options(options)
    explainer = explainer or choose_explainer(options)
    batcher = batch_explainer(explainer) if batching else None
    if not options.dry_run and not options.batch_file:  # fail before the work, not after it
        Path(options.out_dir).mkdir(parents=True, exist_ok=True)
    snapshot = open_source(
        options.source,
        options.rev,
        repo_name=options.repo_name,
        cache_dir=cache_dir,
        console=console,
        github=options.github,
        tag=options.tag,
        path_prefix=options.path_prefix,
    )
    root = dataset_dir(options.out_dir, snapshot.require_repo(), snapshot.sha)
    with ExitStack() as held:
        if not options.dry_run:  # a second run on the same output stops here, in one line
            held.enter_context(dataset_lock(root))
        return _mine(options, snapshot, root, explainer, batcher, cache_dir, console)


def _mine(
    options: RunOptions,
    snapshot: Snapshot,
    root: Path,
    explainer: Explainer,
    batcher: LLMExplainer | None,
    cache_dir: Path,
    console: Console,
) -> RunOutcome:
    """`batcher` is the explainer again when the run batches (`batch_explainer`)."""
    with Store(options.cache or default_store_path(cache_dir)) as store:
        explainer.remember_with(store)  # an LLM explainer starts from what it learnt
        extraction = extract_snapshot(
            snapshot,
            options.rules.model_copy(update={"scope": options.scope}),
            store=store,
            include=options.include,
            exclude=options.exclude,
            console=console,
        )
        grounding = RepoGrounding(snapshot.contains)
        if options.dry_run:
            estimate = plan(extraction.sites, explainer, store, grounding)
            console.line(
                f"dry run: {estimate.sites} sites, {estimate.cached} cached, "
                f"{estimate.to_request} to request with {explainer.provider}/{explainer.model} "
                f"(about {estimate.input_tokens} input + {estimate.output_tokens} output tokens)"
            )
            return RunOutcome(Exit.OK, None, None)
        sites, clashes = distinct(extraction.sites)
        if batcher is not None and options.batch_file is not None:
            return write_batch_file(options, sites, batcher, store, grounding, console)
        runner = None
        if batcher is not None:
            from pipeline.mine.batch import BatchOptions, batch_runner

            runner = batch_runner(
                BatchOptions(
                    "results" if options.batch_results else "api",
                    options.batch_results,
                    options.batch_poll,
                ),
                batcher,
            )
        enriched = enrich(
            sites,
            explainer,
            store,
            grounding,
            concurrency=options.concurrency,
            max_requests=options.max_requests,
            max_tokens=options.max_tokens,
            console=console,
            fallback=fallback_for(explainer, options.command),
            explain_misses=runner,
        )

    records, entries = assemble(sites, enriched)
    manifest = build_manifest(
        snapshot=snapshot,
        extraction=extraction,
        sites=sites,
        records=records,
        entries=entries,
        outcome=enriched,
        explainer=explainer,
        dataset_version=options.dataset_version or now_timestamp(),
        clashes=clashes,
        scope=options.scope,
    )
    # A dataset is replaced only by a complete one: a run that left sites without a record (a
    # budget, a signal, an explainer given up on, failures) keeps a complete dataset.
    kept = not is_complete(manifest) and has_complete_dataset(root)
    if not kept:
        write_dataset(options.out_dir, snapshot.repo, snapshot.sha, records, entries, manifest)
    code = exit_code(manifest, enriched, auto=options.llm == "auto")
    report(console, manifest, root, enriched, kept=kept, auto=options.llm == "auto")
    return RunOutcome(code, root, manifest)


def check_batch_options(options: RunOptions) -> bool:
    """Whether the run batches; RunError for options that do not go together."""
    given = [
        flag
        for flag, on in (
            ("--batch", options.batch),
            ("--batch-file", options.batch_file is not None),
            ("--batch-results", options.batch_results is not None),
        )
        if on
    ]
    if len(given) > 1:
        raise RunError(f"{given[0]} and {given[1]} do not go together: use one")
    if given and options.dry_run:
        raise RunError(f"{given[0]} and --dry-run do not go together: use one")
    if options.batch_results is not None and not Path(options.batch_results).is_file():
        raise RunError(f"--batch-results: {options.batch_results}: no such file")
    return bool(given)


def batch_explainer(explainer: Explainer) -> LLMExplainer:
    """The explainer batches are built with: the openai one (RunError for any other)."""
    from pipeline.explainers.llm import LLMExplainer

    if not isinstance(explainer, LLMExplainer):
        raise RunError(
            "--batch, --batch-file and --batch-results need the openai explainer: "
            "pass --llm openai (and --model)"
        )
    return explainer


def write_batch_file(
    options: RunOptions,
    sites: list[Site],
    explainer: LLMExplainer,
    store: Store,
    grounding: RepoGrounding,
    console: Console,
) -> RunOutcome:
    """`--batch-file`: the requests of the sites the cache cannot answer, and nothing else."""
    from pipeline.mine.batch import write_request_file

    assert options.batch_file is not None
    written, cached = write_request_file(
        sites, explainer, store, grounding, options.batch_file, options.max_requests
    )
    console.line(
        f"batch file: {written} requests written to {options.batch_file} ({cached} sites "
        f"cached); run them (e.g. python -m vllm.entrypoints.openai.run_batch -i "
        f"{options.batch_file} -o results.jsonl --model {explainer.model}), then rerun with "
        "--batch-results results.jsonl"
    )
    return RunOutcome(Exit.OK, None, None)


def exit_code(manifest: Manifest, outcome: EnrichOutcome, auto: bool = False) -> int:
    """A signal's code (130/143) beats an explainer given up on (2), which beats a spent
    budget (3), which beats problems (1): skipped files, failed sites, or records the
    offline explainer wrote because the LLM gave no usable answer. With `--llm auto` (the
    LLM used because a base URL or key is set, not because it was asked for), a server
    that cannot be reached is not an error: the run is the offline explainer's (1)."""
    if outcome.exit_code_for_signal is not None:
        return outcome.exit_code_for_signal
    if outcome.gave_up is not None and not (auto and outcome.unreachable):
        return Exit.INPUT
    if outcome.gave_up is not None:
        return Exit.PROBLEMS
    if manifest.counts.pending:
        return Exit.BUDGET
    counts = manifest.counts
    if counts.skippedFiles or counts.failedSites or counts.fallbacks:
        return Exit.PROBLEMS
    return Exit.OK


def report(
    console: Console,
    manifest: Manifest,
    root: Path,
    outcome: EnrichOutcome,
    kept: bool = False,
    auto: bool = False,
) -> None:
    """Warnings for what went wrong, then the summary lines (stderr, and the CI summary);
    `kept` says the complete dataset in `root` was kept instead of this run's, `auto` that
    the explainer was chosen by `--llm auto`."""
    for skipped in manifest.skippedFiles:
        console.warn(
            f"skipped: {skipped.reason}", file=skipped.filePath, line=line_of(skipped.reason)
        )
    for failed in manifest.failedSites:
        console.warn(
            f"no explanation: {failed.reason}", file=failed.filePath, line=failed.lineNumber
        )
    # One line per site, but one line in all for a reason many sites share (a budget, an
    # explainer given up on) or a server that could not be reached: the manifest lists them.
    shared = Counter(fell.reason for fell in manifest.fallbackSites)

    def grouped(reason: str) -> bool:
        return shared[reason] > _SAME_REASON_LINES or (
            outcome.unreachable and reason == outcome.gave_up
        )

    for fell in manifest.fallbackSites:
        if not grouped(fell.reason):
            console.warn(
                f"offline fallback: {fell.reason}", file=fell.filePath, line=fell.lineNumber
            )
    for reason, count in shared.items():
        if grouped(reason):
            console.warn(f"offline fallback for {count} sites: {reason}")
    for replaced in manifest.replacedFields:
        console.warn(
            f"replaced by the offline explainer's: {', '.join(replaced.fields)} "
            f"({'; '.join(replaced.reasons)})",
            file=replaced.filePath,
            line=replaced.lineNumber,
        )
    for warning in manifest.groundingWarnings:
        for violation in warning.violations:
            console.warn(f"grounding: {violation}", file=warning.filePath, line=warning.lineNumber)
    counts, llm = manifest.counts, manifest.llm
    status = counts.byStatus
    by = ", ".join(f"{name} {count}" for name, count in counts.explainedBy.items()) or "none"
    if kept:
        written = f"not written: kept the complete dataset in {root}"
    else:
        written = f"written to {root}"
    lines = [
        f"records: {counts.records} {written} "
        f"(literal {status.literal}, template {status.template}, partial {status.partial}, "
        f"unresolved {status.unresolved})",
        f"explainer: {llm.provider}/{llm.model} ({llm.promptVersion}): {llm.requests} requests, "
        f"{llm.cacheHits} cache hits, {llm.promptTokens} prompt + "
        f"{llm.completionTokens} completion tokens"
        + (
            f", {llm.repairs} repairs, response format {llm.responseFormat}"
            if llm.responseFormat
            else ""
        ),
        f"files: {counts.files} in tree, {counts.filesParsed} parsed, {counts.filesReused} "
        f"reused, {counts.skippedFiles} skipped; sites: {counts.failedSites} failed, "
        f"{counts.pending} pending, {len(manifest.groundingWarnings)} with grounding warnings",
    ]
    if llm.provider != "offline":
        lines.insert(
            2,
            f"explained by: {by}; {counts.replacedFields} fields replaced by the "
            "offline explainer's",
        )
    if outcome.interrupted_by is not None:
        lines.append("interrupted: what finished is written and cached; rerun to resume")
    elif outcome.unreachable:
        lines.append(
            f"LLM server not reached ({outcome.gave_up}): the records are the offline "
            "explainer's; start the server or fix --base-url (or OPENAI_BASE_URL), then rerun"
            + (", or pass --llm offline not to try it" if auto else "")
        )
    elif outcome.gave_up is not None:
        lines.append(
            f"explainer given up on: {outcome.gave_up}; check --base-url, OPENAI_API_KEY "
            "and --model, then rerun (what finished is cached)"
        )
    elif counts.pending:
        lines.append("budget ran out: what finished is written and cached; rerun to resume")
    if kept:
        left = {
            (s.filePath, s.lineNumber) for s in [*manifest.pendingSites, *manifest.fallbackSites]
        }
        lines.append(
            f"{len(left) + counts.failedSites} sites not explained: the complete "
            "dataset stays until a rerun explains them all (what finished is cached)"
        )
    for line in lines:
        console.line(line)
    console.step_summary(
        f"### vmine: {manifest.repo}@{manifest.analyzedSha[:12]}\n\n"
        + "".join(f"- {line}\n" for line in lines)
        + skipped_markdown([(s.filePath, s.reason) for s in manifest.skippedFiles])
    )


__all__ = ["RunError", "RunOptions", "RunOutcome", "run_dataset"]
