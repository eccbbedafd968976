"""The `verify` command's job: one dataset named by the user, verified with progress, and the
lines that say what it found."""

from __future__ import annotations

from pathlib import Path

from pipeline.console import Console
from pipeline.dataset.reader import DatasetError, one_dataset
from pipeline.dataset.verification import VerificationSummary
from pipeline.verify.run import VerifyError, VerifyOptions, VerifyOutcome, verify_dataset


def run_verify(path: Path, options: VerifyOptions, console: Console) -> VerifyOutcome:
    """Verify the one dataset `path` names; VerifyError (one line) when it cannot be."""
    try:
        root = one_dataset(path)
    except DatasetError as error:
        raise VerifyError(str(error)) from None
    with console.progress("verify", 0) as tracker:

        def advance(done: int, total: int) -> None:
            tracker.total = total
            tracker.advance(done - tracker.done)

        try:
            outcome = verify_dataset(root, options, progress=advance)
        except DatasetError as error:
            raise VerifyError(str(error)) from None
    for line in summary_lines(outcome.summary):
        console.line(line)
    return outcome


def summary_lines(summary: VerificationSummary) -> list[str]:
    """`verify: 597 sites on vllm 0.28.0: verified 450, ...`, then one line per kind."""
    total = sum(summary.byOutcome.values())

    def counts(by: dict[str, int]) -> str:
        return ", ".join(f"{outcome} {count}" for outcome, count in by.items())

    lines = [f"verify: {total} sites on {summary.release}: {counts(summary.byOutcome)}"]
    lines += [f"  {kind}: {counts(by)}" for kind, by in summary.byKind.items()]
    if summary.byFix:
        lines.append(f"verify: fixes of the verified sites: {counts(summary.byFix)}")
    lines.append(f"verify: {summary.seconds:.0f} s")
    return lines
