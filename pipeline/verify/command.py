"""The `verify` command's job: one dataset named by the user, verified with progress, and the
lines that say what it found."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.console import Console
from pipeline.dataset.reader import DatasetError, one_dataset
from pipeline.dataset.verification import VerificationSummary
from pipeline.verify.run import VerifyError, VerifyOptions, VerifyOutcome, verify_dataset

if TYPE_CHECKING:
    from pipeline.mine.run import RunOptions


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


def with_model(options: VerifyOptions, run: RunOptions) -> VerifyOptions:
    """The verify options of `vmine run ... --verify`: with the run's model, when it has one,
    to send a fix of its that fails back to it once, and to write a program for a site the
    solver could not trigger."""
    from pipeline.explainers.llm import LLMExplainer
    from pipeline.mine.run import choose_explainer

    if run.dry_run or run.batch_file or run.batch_results:
        return options
    explainer = choose_explainer(run)
    if not isinstance(explainer, LLMExplainer):
        return options
    from pipeline.verify.retry import ModelFixes

    return replace(options, model=ModelFixes(explainer))


def summary_lines(summary: VerificationSummary) -> list[str]:
    """`verify: 597 sites on vllm 0.28.0: verified 450, ...`, then one line per kind."""
    total = sum(summary.byOutcome.values())

    def counts(by: dict[str, int]) -> str:
        return ", ".join(f"{outcome} {count}" for outcome, count in by.items())

    lines = [f"verify: {total} sites on {summary.release}: {counts(summary.byOutcome)}"]
    lines += [f"  {kind}: {counts(by)}" for kind, by in summary.byKind.items()]
    if summary.byFix:
        lines.append(f"verify: fixes of the verified sites: {counts(summary.byFix)}")
    if summary.chosenFixes:
        lines.append(
            f"verify: other fixes that stop the raise where these did not: {summary.chosenFixes}"
        )
    if summary.modelPrograms:
        lines.append(f"verify: verified by the model's programs: {summary.modelPrograms}")
    if summary.byFixRetry:
        lines.append(f"verify: the model's second fixes: {counts(summary.byFixRetry)}")
    lines.append(f"verify: {summary.seconds:.0f} s")
    return lines
