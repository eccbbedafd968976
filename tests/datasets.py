"""A small hand-written dataset on disk, for the tests of explain and render."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.dataset.manifest import Counts, LLMUsage, Manifest, StatusCounts, Tool
from pipeline.dataset.models import ErrorRecord, IndexEntry, Setting, github_url
from pipeline.dataset.writer import write_dataset

REPO = "acme/serve"
SHA = "c0ffee1234" + "5" * 30
ANALYZED_AT = "2026-08-14T21:17:39.825Z"
DATASET_VERSION = "2026-08-15T22:17:37.221Z"

ENGINE_SOURCE = """\
    @model_validator(mode="after")
    def check_decode(self) -> "EngineConfig":
        if not self.use_fast_decode:
            return self
        if self.speculative_tokens > 0:
            raise ValueError("--use-fast-decode does not support speculative decoding")
        if self.decode_backend != "flash":
            raise ValueError("--use-fast-decode requires --decode-backend flash")
        return self

    @field_validator("max_batch_size")
    @classmethod
    def validate_batching(cls, value: int) -> int:
        if value & (value - 1):
            raise ValueError(f"max_batch_size must be a power of 2, got {value}")
        return value"""

SCHEDULER_SOURCE = """\
    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(
                f"Unknown scheduler policy {self.policy!r}.\\n"
                f"Choose one of: {', '.join(POLICIES)}"
            )"""


@dataclass
class Case:
    """One record of the fixture and the site facts its index entry carries."""

    id: str
    slug: str
    filePath: str
    lineNumber: int
    qualname: str
    validatorKind: str
    errorMessage: str
    messagePattern: str
    messageStatus: str
    guards: list[str]
    source: str
    sourceStart: int
    explanation: dict = field(default_factory=dict)
    errorClass: str = "ValueError"
    messageFragments: list[str] = field(default_factory=list)
    settings: list[Setting] = field(default_factory=list)


def _explanation(topic: str, **overrides: object) -> dict:
    fields = {
        "documentation": f"Raised when {topic}.",
        "triggerScenarios": f"Starting the server while {topic}.",
        "commonSituations": "Copying flags from an older launch script.",
        "solutions": [f"Change the configuration so that no longer {topic}.", "Restart."],
        "exampleFix": "# before\nserve --use-fast-decode\n# after\nserve",
        "handlingStrategy": "validation",
        "validationCode": "if cfg.use_fast_decode:\n    check(cfg)",
        "typeGuard": "def is_valid(cfg) -> bool:\n    return not cfg.use_fast_decode",
        "tryCatchPattern": "try:\n    EngineConfig(**args)\nexcept ValueError as exc:\n    log(exc)",
        "preventionTips": ["Keep one launch profile per backend."],
        "tags": ["config", "decode"],
    }
    fields.update(overrides)
    return fields


CASES = [
    Case(
        id="aaaa000000000001",
        slug="use-fast-decode-does-not-support-speculative",
        filePath="serve/config/engine.py",
        lineNumber=106,
        qualname="EngineConfig.check_decode",
        validatorKind="pydantic",
        errorMessage="--use-fast-decode does not support speculative decoding",
        messagePattern="--use-fast-decode does not support speculative decoding",
        messageStatus="literal",
        guards=["self.use_fast_decode", "self.speculative_tokens > 0"],
        source=ENGINE_SOURCE,
        sourceStart=101,
        explanation=_explanation("fast decode meets speculative decoding"),
    ),
    Case(
        id="aaaa000000000002",
        slug="use-fast-decode-requires-decode-backend-flash",
        filePath="serve/config/engine.py",
        lineNumber=108,
        qualname="EngineConfig.check_decode",
        validatorKind="pydantic",
        errorMessage="--use-fast-decode requires --decode-backend flash",
        messagePattern="--use-fast-decode requires --decode-backend flash",
        messageStatus="literal",
        guards=["self.use_fast_decode", 'self.decode_backend != "flash"'],
        source=ENGINE_SOURCE,
        sourceStart=101,
        explanation=_explanation(
            "fast decode runs on a backend other than flash",
            solutions=["Pass --decode-backend flash.", "Drop --use-fast-decode."],
            tags=["config", "decode", "backend"],
        ),
    ),
    Case(
        id="aaaa000000000003",
        slug="max-batch-size-must-be-a-power-of-2-got-value",
        filePath="serve/config/engine.py",
        lineNumber=115,
        qualname="EngineConfig.validate_batching",
        validatorKind="pydantic",
        errorMessage="max_batch_size must be a power of 2, got {value}",
        messagePattern="max_batch_size must be a power of 2, got (.*?)",
        messageStatus="template",
        guards=["value & (value - 1)"],
        source=ENGINE_SOURCE,
        sourceStart=101,
        explanation=_explanation(
            "max_batch_size is not a power of two",
            tryCatchPattern=None,
            preventionTips=[],
            commonSituations="",
            tags=["batching"],
        ),
    ),
    Case(
        id="aaaa000000000004",
        slug="unknown-scheduler-policy-self-policy-r-choose-one",
        filePath="serve/config/scheduler.py",
        lineNumber=12,
        qualname="SchedulerConfig.__post_init__",
        validatorKind="post_init",
        errorMessage=(
            "Unknown scheduler policy {self.policy!r}.\nChoose one of: {', '.join(POLICIES)}"
        ),
        messagePattern="Unknown scheduler policy (.*?)\\.\nChoose one of: (.*?)",
        messageStatus="template",
        guards=["self.policy not in POLICIES"],
        source=SCHEDULER_SOURCE,
        sourceStart=10,
        explanation=_explanation("the scheduler policy is unknown", tags=["scheduler"]),
    ),
]


def record_of(case: Case, repo: str = REPO, sha: str = SHA) -> ErrorRecord:
    end = case.sourceStart + case.source.count("\n")
    return ErrorRecord(
        id=case.id,
        repo=repo,
        slug=case.slug,
        errorMessage=case.errorMessage,
        messagePattern=case.messagePattern,
        errorClass=case.errorClass,
        filePath=case.filePath,
        lineNumber=case.lineNumber,
        sourceCode=case.source,
        sourceCodeStart=case.sourceStart,
        sourceCodeEnd=end,
        githubUrl=github_url(repo, sha, case.filePath, case.sourceStart, end),
        analyzedSha=sha,
        analyzedAt=ANALYZED_AT,
        **case.explanation,
    )


def entry_of(case: Case) -> IndexEntry:
    return IndexEntry(
        id=case.id,
        slug=case.slug,
        filePath=case.filePath,
        lineNumber=case.lineNumber,
        qualname=case.qualname,
        validatorKind=case.validatorKind,
        errorClass=case.errorClass,
        errorMessage=case.errorMessage,
        messagePattern=case.messagePattern,
        messageStatus=case.messageStatus,
        guards=case.guards,
        messageFragments=case.messageFragments,
        settings=case.settings,
    )


def write_fixture_dataset(
    out_dir: Path,
    cases: list[Case] | None = None,
    repo: str = REPO,
    sha: str = SHA,
    provider: str = "openai",
    source: str = "git",
) -> Path:
    """Write the cases as a dataset under `out_dir` and return its directory."""
    cases = CASES if cases is None else cases
    by_status = {"literal": 0, "template": 0, "partial": 0, "unresolved": 0}
    for case in cases:
        by_status[case.messageStatus] += 1
    manifest = Manifest(
        repo=repo,
        analyzedSha=sha,
        datasetVersion=DATASET_VERSION,
        source=source,
        counts=Counts(records=len(cases), byStatus=StatusCounts(**by_status)),
        llm=LLMUsage(provider=provider, model="test-model", promptVersion="explain-v1"),
        tool=Tool(version="0.1.0", extractorVersion="1"),
    )
    return write_dataset(
        out_dir,
        repo,
        sha,
        [record_of(case, repo, sha) for case in cases],
        [entry_of(case) for case in cases],
        manifest,
    )
