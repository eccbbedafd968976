"""Explained sites -> what a dataset holds: records, index entries and the manifest."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from extractors.facts import EXTRACTOR_VERSION, Scope
from pipeline import __version__
from pipeline.dataset.manifest import (
    Counts,
    GroundingWarning,
    LLMUsage,
    Manifest,
    ReplacedFields,
    SiteProblem,
    SkippedFileEntry,
    StatusCounts,
    Tool,
)
from pipeline.dataset.models import ErrorRecord, IndexEntry, Site
from pipeline.explainers.base import Explainer
from pipeline.keys import identities, record_id
from pipeline.mine.enrich import EnrichOutcome
from pipeline.mine.extract import Extraction
from pipeline.source import Snapshot

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
        entries.append(
            IndexEntry.of(
                site,
                rid,
                slug,
                explainedBy=outcome.explained_by.get(rid),
                replacedFields=sorted(outcome.replaced.get(rid, {})),
            )
        )
    return records, entries


def _problem(site: Site, reason: str) -> SiteProblem:
    return SiteProblem(
        filePath=site.filePath, lineNumber=site.lineNumber, qualname=site.qualname, reason=reason
    )


def distinct(sites: list[Site]) -> tuple[list[Site], list[SiteProblem]]:
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


def _response_format(explainer: Explainer) -> str | None:
    """The response format an LLM explainer settled on (None for the offline explainer)."""
    return None if explainer.profile is None else explainer.profile.response_format


def _prompt_versions(explainer: Explainer, sites: Sequence[Site]) -> str:
    """The explainer's prompt version, then the others its sites were explained under (the
    sites outside validators of the `all` scope), joined by `, `."""
    versions = dict.fromkeys([explainer.prompt_version])
    versions.update(dict.fromkeys(explainer.prompt_version_for(site) for site in sites))
    return ", ".join(versions)


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
    scope: Scope = "validators",
) -> Manifest:
    by_id = {record_id(site): site for site in sites}
    by_status = Counter(entry.messageStatus for entry in entries)
    failed = [_problem(by_id[rid], reason) for rid, reason in outcome.failures.items()]
    failed += list(clashes)
    pending_reason = (
        "interrupted"
        if outcome.interrupted_by
        else "explainer given up on"
        if outcome.gave_up
        else "budget ran out"
    )
    stats = extraction.stats
    by_position = sorted(entries, key=lambda e: (e.filePath, e.lineNumber))
    return Manifest(
        repo=snapshot.repo,
        analyzedSha=snapshot.sha,
        datasetVersion=dataset_version,
        source=snapshot.origin,
        scope=scope,
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
            explainedBy=dict(
                sorted(Counter(entry.explainedBy for entry in entries if entry.explainedBy).items())
            ),
            fallbacks=len(outcome.fallbacks),
            replacedFields=sum(len(fields) for fields in outcome.replaced.values()),
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
        fallbackSites=sorted(
            (_problem(by_id[rid], reason) for rid, reason in outcome.fallbacks.items()),
            key=lambda p: (p.filePath, p.lineNumber),
        ),
        replacedFields=[
            ReplacedFields(
                id=entry.id,
                filePath=entry.filePath,
                lineNumber=entry.lineNumber,
                fields=sorted(outcome.replaced[entry.id]),
                reasons=[
                    why
                    for name in sorted(outcome.replaced[entry.id])
                    for why in outcome.replaced[entry.id][name]
                ],
            )
            for entry in by_position
            if outcome.replaced.get(entry.id)
        ],
        groundingWarnings=[
            GroundingWarning(
                id=entry.id,
                filePath=entry.filePath,
                lineNumber=entry.lineNumber,
                violations=outcome.grounding_warnings[entry.id],
            )
            for entry in by_position
            if outcome.grounding_warnings.get(entry.id)
        ],
        llm=LLMUsage(
            provider=explainer.provider,
            model=explainer.model,
            promptVersion=_prompt_versions(explainer, sites),
            requests=outcome.usage.requests,
            cacheHits=outcome.cache_hits,
            promptTokens=outcome.usage.prompt_tokens,
            completionTokens=outcome.usage.completion_tokens,
            responseFormat=_response_format(explainer),
            repairs=outcome.repairs,
            droppedKeys=outcome.dropped_keys,
            fixedValues=outcome.fixed_values,
        ),
        tool=Tool(version=__version__, extractorVersion=EXTRACTOR_VERSION),
    )
