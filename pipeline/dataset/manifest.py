"""The shape of a dataset's `manifest.json`: what was analysed, with what, and what is missing."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from extractors.facts import Scope
from pipeline.dataset.jsonl import json_text
from pipeline.dataset.models import LineNumber, RepoName, Sha40, Timestamp
from pipeline.dataset.verification import VerificationSummary


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StatusCounts(_Strict):
    literal: int = 0
    template: int = 0
    partial: int = 0
    unresolved: int = 0


class Counts(_Strict):
    records: int = 0
    files: int = 0
    filesParsed: int = 0
    filesReused: int = 0
    skippedFiles: int = 0
    failedSites: int = 0
    pending: int = 0
    sitesNew: int = 0
    sitesReused: int = 0
    byStatus: StatusCounts = Field(default_factory=StatusCounts)
    # records by the explainer that wrote them: openai, offline, offline-fallback
    explainedBy: dict[str, int] = Field(default_factory=dict)
    fallbacks: int = 0  # records the offline explainer wrote for a site the LLM failed on
    replacedFields: int = 0  # fields of LLM answers replaced by the offline explainer's

    # Fields added after datasets were first written: a manifest read back may lack them.
    added_fields: ClassVar[frozenset[str]] = frozenset(
        {"explainedBy", "fallbacks", "replacedFields"}
    )


class SkippedFileEntry(_Strict):
    filePath: str
    reason: str


class SiteProblem(_Strict):
    """A site without a record: it failed (`reason` says why) or is pending."""

    filePath: str
    lineNumber: LineNumber
    qualname: str
    reason: str


class ReplacedFields(_Strict):
    """The fields of one record's LLM answer that the offline explainer's replaced, and why."""

    id: str
    filePath: str
    lineNumber: int
    fields: list[str]
    reasons: list[str]


class GroundingWarning(_Strict):
    id: str
    filePath: str
    lineNumber: LineNumber
    violations: list[str]


class LLMUsage(_Strict):
    provider: str
    model: str
    promptVersion: str
    requests: int = 0
    cacheHits: int = 0
    promptTokens: int = 0
    completionTokens: int = 0
    responseFormat: str | None = None  # json_schema, json_object or text, as negotiated
    repairs: int = 0  # requests asking to repair an invalid or ungrounded answer
    droppedKeys: int = 0  # unknown keys dropped from answers
    fixedValues: int = 0  # code fences unwrapped, enums and nulls normalised

    added_fields: ClassVar[frozenset[str]] = frozenset(
        {"responseFormat", "repairs", "droppedKeys", "fixedValues"}
    )


class Tool(_Strict):
    name: str = "vmine"
    version: str
    extractorVersion: str


class Manifest(_Strict):
    repo: RepoName
    analyzedSha: Sha40
    datasetVersion: Timestamp
    source: str
    # which raises are records: those inside validators, or those of any function (`all`)
    scope: Scope = "validators"
    counts: Counts
    skippedFiles: list[SkippedFileEntry] = Field(default_factory=list)
    failedSites: list[SiteProblem] = Field(default_factory=list)
    pendingSites: list[SiteProblem] = Field(default_factory=list)
    # sites the offline explainer wrote the record of, with why the LLM did not
    fallbackSites: list[SiteProblem] = Field(default_factory=list)
    replacedFields: list[ReplacedFields] = Field(default_factory=list)
    groundingWarnings: list[GroundingWarning] = Field(default_factory=list)
    llm: LLMUsage
    tool: Tool
    # what `vmine verify` found, when it ran on this dataset (verification.jsonl has each site)
    verification: VerificationSummary | None = None

    added_fields: ClassVar[frozenset[str]] = frozenset(
        {"scope", "fallbackSites", "replacedFields", "verification"}
    )

    def to_json(self) -> str:
        return json_text(self, indent=2) + "\n"
