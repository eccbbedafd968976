"""A dataset's `verification.jsonl` (written by `vmine verify` beside `index.jsonl`): one
`Verification` a line, one per record, and the summary the manifest holds."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.dataset.folders import DatasetError, NotRegularFile, read_regular
from pipeline.dataset.jsonl import jsonl_lines
from pipeline.dataset.layout import verification_path
from pipeline.dataset.models import LineNumber, RecordId

Outcome = Literal[
    "verified",
    "mismatch",
    "raised-elsewhere",
    "other-exception",
    "no-raise",
    "not-importable",
    "not-callable",
    "stale",
]
OUTCOMES: tuple[Outcome, ...] = Outcome.__args__  # type: ignore[attr-defined]
# Which of two attempts' outcomes is kept: the nearer to a proof.
_RANK = {outcome: rank for rank, outcome in enumerate(OUTCOMES)}


class Verification(BaseModel):
    """How one record's site behaved when its validator ran in the target's environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: RecordId
    outcome: Outcome
    release: str  # what ran: `vllm 0.28.0`, or the interpreter's version
    raisedClass: str | None = None
    filePath: str | None = None  # where it raised, when not at the site (installed path)
    lineNumber: LineNumber | None = None
    message: str | None = None  # what it raised, or why it did not run (cut to 500)
    missing: str | None = None  # the module that did not import
    reproducer: str | None = None  # a verified site's program, which raises the message
    # What the reproducer runs: `command-line` (the target's own parser and configuration
    # path, given `commandLine` and a tiny model folder), `call` (the validator called
    # directly, with solved inputs) or `model` (a program the run's model wrote for a site
    # the solver could not trigger); None when the site was not verified.
    reproducerKind: Literal["command-line", "call", "model"] | None = None
    commandLine: str | None = None  # the arguments a user passes to see the message
    attempts: int = 0
    # A verified site's exampleFix applied to its reproducer: `verified` (this raise no
    # longer fires), `fails` (it still does), `untested` (the fix changes no setting that
    # can be applied); None when the site was not verified.
    fix: Literal["verified", "fails", "untested"] | None = None
    fixMessage: str | None = None  # what the reproducer raised with the fix applied
    # When the exampleFix does not stop the raise (or cannot be applied): the first of the
    # offline explainer's other fixes for the site that does, run on the reproducer.
    chosenFix: str | None = None
    # With a model (`run --llm openai --verify`): its second fix, asked after its first
    # failed, run the same way (`verified` makes it the chosenFix).
    fixRetry: Literal["verified", "fails", "untested"] | None = None
    # The exampleFix's "after" command line parsed by the target's own parser: `accepted`
    # (every flag parsed to the value the fix means), `differs` (it parsed, to another
    # value), `rejected` (the parser refused it); None when the fix has no command line or
    # no parser was found.
    fixCommand: Literal["accepted", "differs", "rejected"] | None = None
    fixCommandMessage: str | None = None  # the parser's message, or what differs

    def better_than(self, other: Verification) -> bool:
        return _RANK[self.outcome] < _RANK[other.outcome]


class VerificationSummary(BaseModel):
    """What the manifest says of a verification: where it ran and the counts of outcomes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    release: str
    python: str  # the interpreter's version
    byOutcome: dict[str, int] = Field(default_factory=dict)
    byKind: dict[str, dict[str, int]] = Field(default_factory=dict)  # validatorKind -> outcomes
    byFix: dict[str, int] = Field(default_factory=dict)  # the verified sites' fix outcomes
    chosenFixes: int = 0  # verified sites whose chosenFix stops the raise their fix did not
    byFixRetry: dict[str, int] = Field(default_factory=dict)  # the models' second fixes
    byFixCommand: dict[str, int] = Field(default_factory=dict)  # the fixes' command lines
    commandLines: int = 0  # verified sites whose reproducer is a command line
    modelPrograms: int = 0  # verified sites whose reproducer the run's model wrote
    parser: str | None = None  # the parser builder the command lines were parsed with
    seconds: float = 0.0


def load_verification(root: Path) -> dict[str, Verification]:
    """The `verification.jsonl` of the dataset in `root` by record id ({} when it has none);
    DatasetError on a line that is not a Verification (read strictly, as every dataset file)."""
    path = verification_path(root)
    try:
        text = read_regular(path)
    except FileNotFoundError:
        return {}
    except NotRegularFile as exc:
        raise DatasetError(f"{path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    found: dict[str, Verification] = {}
    for number, line in enumerate(jsonl_lines(text), start=1):
        try:
            verification = Verification.model_validate_json(line, strict=True)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(top level)"
            raise DatasetError(f"{path}:{number}: {where}: {first['msg']}") from None
        found[verification.id] = verification
    return found
