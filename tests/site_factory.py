"""Hand-built sites, explanations and records for tests of identity, enrichment and writing."""

from __future__ import annotations

from pipeline.dataset.models import ErrorRecord, Explanation, IndexEntry, Site, github_url

SHA = "0123456789abcdef0123456789abcdef01234567"
REPO = "acme/engine"


def make_site(
    message: str = "max_batch must be positive",
    *,
    file_path: str = "engine/config.py",
    line: int = 12,
    qualname: str = "SchedulerConfig.__post_init__",
    occurrence: int = 0,
    guards: tuple[str, ...] = ("self.max_batch <= 0",),
    status: str = "literal",
) -> Site:
    start, end = max(1, line - 18), line + 18
    return Site(
        repo=REPO,
        analyzedSha=SHA,
        filePath=file_path,
        lineNumber=line,
        qualname=qualname,
        validatorKind="post_init",
        errorClass="ValueError",
        errorMessage=message,
        messagePattern=message,
        messageStatus=status,
        guards=list(guards),
        sourceCode=f"        raise ValueError({message!r})",
        sourceCodeStart=start,
        sourceCodeEnd=end,
        githubUrl=github_url(REPO, SHA, file_path, start, end),
        functionSource=f"def __post_init__(self):\n    raise ValueError({message!r})\n",
        occurrence=occurrence,
    )


def make_explanation(text: str = "The batch size is not positive.") -> Explanation:
    return Explanation(
        documentation=text,
        triggerScenarios="Passing max_batch=0.",
        commonSituations="A config file with a zero batch size.",
        solutions=["Set max_batch to a positive integer."],
        exampleFix="SchedulerConfig(max_batch=8)",
        handlingStrategy="validation",
        validationCode="assert max_batch > 0",
        typeGuard="def ok(n: int) -> bool:\n    return n > 0",
        tryCatchPattern=None,
        preventionTips=[],
        tags=["config"],
    )


def make_record(site: Site, record_id: str, slug: str, analyzed_at: str) -> ErrorRecord:
    facts = site.model_dump(
        include={
            "repo",
            "errorMessage",
            "messagePattern",
            "errorClass",
            "filePath",
            "lineNumber",
            "sourceCode",
            "sourceCodeStart",
            "sourceCodeEnd",
            "githubUrl",
            "analyzedSha",
        }
    )
    return ErrorRecord(
        id=record_id,
        slug=slug,
        analyzedAt=analyzed_at,
        **facts,
        **make_explanation().model_dump(),
    )


def make_entry(site: Site, record_id: str, slug: str) -> IndexEntry:
    return IndexEntry(
        id=record_id,
        slug=slug,
        **site.model_dump(
            include={
                "filePath",
                "lineNumber",
                "qualname",
                "validatorKind",
                "errorClass",
                "errorMessage",
                "messagePattern",
                "messageStatus",
                "guards",
            }
        ),
    )
