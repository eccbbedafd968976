"""The `run` command's job end to end: source -> extract -> enrich -> assemble -> write."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from extractors.facts import EXTRACTOR_VERSION, Rules
from pipeline import __version__
from pipeline.cache import Store, default_store_path
from pipeline.console import Console, line_of, skipped_markdown
from pipeline.enrich import EnrichOutcome, enrich, plan
from pipeline.explainers.base import Explainer
from pipeline.extract import Extraction, extract_snapshot
from pipeline.grounding import RepoGrounding
from pipeline.identity import identities, record_id
from pipeline.manifest import (
    Counts,
    GroundingWarning,
    LLMUsage,
    Manifest,
    SiteProblem,
    SkippedFileEntry,
    StatusCounts,
    Tool,
)
from pipeline.models import ErrorRecord, IndexEntry, Site, Timestamp, now_timestamp
from pipeline.sources import Snapshot, open_source, resolve_cache_dir
from pipeline.writer import write_dataset

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_BUDGET = 0, 1, 2, 3
DEFAULT_MODEL = "gpt-4o-mini"
REQUEST_TIMEOUT = 120.0


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
    dry_run: bool = False
    cache: Path | None = None
    cache_dir: Path | None = None
    dataset_version: Timestamp | None = None
    rules: Rules = Rules()
    include: list[str] = []
    exclude: list[str] = []


@dataclass
class RunOutcome:
    """How a run ended: its exit code, and the dataset written (None for a dry run)."""

    exit_code: int
    dataset_dir: Path | None
    manifest: dict | None


def choose_explainer(options: RunOptions) -> Explainer:
    """`auto` means `openai` when an API key or a base URL is configured, else `offline`."""
    api_key = os.environ.get("OPENAI_API_KEY") or None
    base_url = options.base_url or os.environ.get("OPENAI_BASE_URL") or None
    provider = options.llm
    if provider == "auto":
        provider = "openai" if api_key or base_url else "offline"
    if provider == "offline":
        from pipeline.explainers.offline import OfflineExplainer

        return OfflineExplainer()
    if not api_key and not base_url and not options.dry_run:  # a dry run sends nothing
        raise RunError("--llm openai needs OPENAI_API_KEY or --base-url/OPENAI_BASE_URL")
    from pipeline.explainers import llm

    return llm.LLMExplainer(
        model=options.model or DEFAULT_MODEL,
        base_url=base_url,
        api_key=api_key,
        concurrency=options.concurrency,
        timeout=REQUEST_TIMEOUT,
    )


# The site facts a record carries, by their shared field names.
_RECORD_FACTS = set(ErrorRecord.model_fields) & set(Site.model_fields)


def assemble(
    sites: list[Site], outcome: EnrichOutcome
) -> tuple[list[ErrorRecord], list[IndexEntry]]:
    """Records and index entries of the explained sites; slugs are computed over every site
    (explained or not), so a resumed run gives each record the slug it would have had."""
    records: list[ErrorRecord] = []
    entries: list[IndexEntry] = []
    for (rid, slug), site in zip(identities(sites), sites, strict=True):
        cached = outcome.explanations.get(rid)
        if cached is None:
            continue
        records.append(
            ErrorRecord(
                id=rid,
                slug=slug,
                analyzedAt=cached.analyzed_at,
                **site.model_dump(include=_RECORD_FACTS),
                **cached.explanation.model_dump(),
            )
        )
        entries.append(IndexEntry.of(site, rid, slug))
    return records, entries


def _problem(site: Site, reason: str) -> SiteProblem:
    return SiteProblem(
        filePath=site.filePath, lineNumber=site.lineNumber, qualname=site.qualname, reason=reason
    )


def _distinct(sites: list[Site]) -> tuple[list[Site], list[SiteProblem]]:
    """Drop a site whose id another site already has (an extractor bug): it fails instead."""
    seen: set[str] = set()
    kept: list[Site] = []
    clashes: list[SiteProblem] = []
    for site in sites:
        rid = record_id(site)
        if rid in seen:
            clashes.append(_problem(site, f"same id {rid} as another site"))
            continue
        seen.add(rid)
        kept.append(site)
    return kept, clashes


def build_manifest(
    *,
    snapshot: Snapshot,
    extraction: Extraction,
    sites: list[Site],
    records: list[ErrorRecord],
    entries: list[IndexEntry],
    outcome: EnrichOutcome,
    explainer: Explainer,
    dataset_version: str,
    clashes: Sequence[SiteProblem] = (),
) -> Manifest:
    by_id = {record_id(site): site for site in sites}
    by_status = Counter(entry.messageStatus for entry in entries)
    failed = [_problem(by_id[rid], reason) for rid, reason in outcome.failures.items()]
    failed += list(clashes)
    pending_reason = (
        "interrupted" if outcome.interrupted_by
        else "explainer given up on" if outcome.gave_up
        else "budget ran out"
    )
    stats = extraction.stats
    return Manifest(
        repo=snapshot.repo,
        analyzedSha=snapshot.sha,
        datasetVersion=dataset_version,
        source=snapshot.origin,
        counts=Counts(
            records=len(records),
            files=stats.files_total,
            filesParsed=stats.files_parsed,
            filesReused=stats.files_reused,
            skippedFiles=len(extraction.skipped),
            failedSites=len(failed),
            pending=len(outcome.pending),
            sitesNew=len(outcome.explanations) - outcome.cache_hits,
            sitesReused=outcome.cache_hits,
            byStatus=StatusCounts(**by_status),
        ),
        skippedFiles=[
            SkippedFileEntry(filePath=item.filePath, reason=item.reason)
            for item in extraction.skipped
        ],
        failedSites=sorted(failed, key=lambda p: (p.filePath, p.lineNumber)),
        pendingSites=sorted(
            (_problem(by_id[rid], pending_reason) for rid in outcome.pending),
            key=lambda p: (p.filePath, p.lineNumber),
        ),
        groundingWarnings=[
            GroundingWarning(
                id=entry.id,
                filePath=entry.filePath,
                lineNumber=entry.lineNumber,
                violations=outcome.grounding_warnings[entry.id],
            )
            for entry in sorted(entries, key=lambda e: (e.filePath, e.lineNumber))
            if outcome.grounding_warnings.get(entry.id)
        ],
        llm=LLMUsage(
            provider=explainer.provider,
            model=explainer.model,
            promptVersion=explainer.prompt_version,
            requests=outcome.usage.requests,
            cacheHits=outcome.cache_hits,
            promptTokens=outcome.usage.prompt_tokens,
            completionTokens=outcome.usage.completion_tokens,
        ),
        tool=Tool(version=__version__, extractorVersion=EXTRACTOR_VERSION),
    )


def run_dataset(
    options: RunOptions, console: Console, *, explainer: Explainer | None = None
) -> RunOutcome:
    """Mine one repository at one commit into `options.out_dir`. Raises SourceError or
    RunError for input the user must fix; everything else becomes the exit code.
    `explainer` replaces the one `options.llm` would choose (tests, embedding)."""
    cache_dir = resolve_cache_dir(options.cache_dir)
    explainer = explainer or choose_explainer(options)
    if not options.dry_run:  # fail before the work, not after it
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
    snapshot.require_repo()
    with Store(options.cache or default_store_path(cache_dir)) as store:
        extraction = extract_snapshot(
            snapshot,
            options.rules,
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
            return RunOutcome(EXIT_OK, None, None)
        sites, clashes = _distinct(extraction.sites)
        enriched = enrich(
            sites,
            explainer,
            store,
            grounding,
            concurrency=options.concurrency,
            max_requests=options.max_requests,
            max_tokens=options.max_tokens,
            console=console,
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
    )
    root = write_dataset(options.out_dir, snapshot.repo, snapshot.sha, records, entries, manifest)
    code = exit_code(manifest, enriched)
    report(console, manifest, root, enriched)
    return RunOutcome(code, root, manifest.model_dump(mode="json"))


def exit_code(manifest: Manifest, outcome: EnrichOutcome) -> int:
    """A signal's code (130/143) beats an explainer given up on (2), which beats a spent
    budget (3), which beats problems (1)."""
    if outcome.exit_code_for_signal is not None:
        return outcome.exit_code_for_signal
    if outcome.gave_up is not None:
        return EXIT_USAGE
    if manifest.counts.pending:
        return EXIT_BUDGET
    if manifest.counts.skippedFiles or manifest.counts.failedSites:
        return EXIT_PROBLEMS
    return EXIT_OK


def report(console: Console, manifest: Manifest, root: Path, outcome: EnrichOutcome) -> None:
    """Warnings for what went wrong, then the summary lines (stderr, and the CI summary)."""
    for skipped in manifest.skippedFiles:
        console.warn(f"skipped: {skipped.reason}", file=skipped.filePath,
                      line=line_of(skipped.reason))
    for failed in manifest.failedSites:
        console.warn(
            f"no explanation: {failed.reason}", file=failed.filePath, line=failed.lineNumber
        )
    for warning in manifest.groundingWarnings:
        for violation in warning.violations:
            console.warn(f"grounding: {violation}", file=warning.filePath, line=warning.lineNumber)
    counts, llm = manifest.counts, manifest.llm
    status = counts.byStatus
    lines = [
        f"records: {counts.records} written to {root} "
        f"(literal {status.literal}, template {status.template}, partial {status.partial}, "
        f"unresolved {status.unresolved})",
        f"explainer: {llm.provider}/{llm.model} ({llm.promptVersion}): {llm.requests} requests, "
        f"{llm.cacheHits} cache hits, {llm.promptTokens} prompt + "
        f"{llm.completionTokens} completion tokens",
        f"files: {counts.files} in tree, {counts.filesParsed} parsed, {counts.filesReused} "
        f"reused, {counts.skippedFiles} skipped; sites: {counts.failedSites} failed, "
        f"{counts.pending} pending, {len(manifest.groundingWarnings)} with grounding warnings",
    ]
    if outcome.interrupted_by is not None:
        lines.append("interrupted: what finished is written and cached; rerun to resume")
    elif outcome.gave_up is not None:
        lines.append(
            f"explainer given up on: {outcome.gave_up}; check --base-url, OPENAI_API_KEY "
            "and --model, then rerun (what finished is cached)"
        )
    elif counts.pending:
        lines.append("budget ran out: what finished is written and cached; rerun to resume")
    for line in lines:
        console.line(line)
    console.step_summary(
        f"### vmine: {manifest.repo}@{manifest.analyzedSha[:12]}\n\n"
        + "".join(f"- {line}\n" for line in lines)
        + skipped_markdown([(s.filePath, s.reason) for s in manifest.skippedFiles])
    )


__all__ = ["RunError", "RunOptions", "RunOutcome", "run_dataset"]
