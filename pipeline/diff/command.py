"""What `vmine diff` does: read both sides, diff them, and report in the format asked for."""

from __future__ import annotations

from pathlib import Path

from pipeline.console import Console
from pipeline.diff.changes import DatasetDiff, ErrorSet, diff_error_sets
from pipeline.diff.report import annotation, render, render_markdown
from pipeline.diff.sarif import render_sarif
from pipeline.diff.sides import extract_side, is_dataset_spec, load_dataset_side


def run_diff(
    old_spec: str,
    new_spec: str,
    *,
    fmt: str = "text",
    console: Console | None = None,
    color: bool = False,
    cache_dir: Path | None = None,
) -> tuple[str, DatasetDiff]:
    """What `vmine diff` does: read both sides, diff, render (`fmt`: text, markdown, json
    or sarif); under GitHub Actions also
    annotate each change (moves aside) and append the Markdown report to the job summary."""
    sides: dict[str, ErrorSet] = {}
    # Datasets first: an extracted side whose repository has no GitHub origin (a release,
    # a local path) takes the other side's repo, so that record ids are comparable.
    for role, spec in (("OLD", old_spec), ("NEW", new_spec)):
        if is_dataset_spec(spec):
            sides[role] = load_dataset_side(Path(spec), role)
    for role, spec in (("OLD", old_spec), ("NEW", new_spec)):
        if role not in sides:
            other = next((side.repo for side in sides.values() if side.repo), None)
            sides[role] = extract_side(
                spec, role, cache_dir=cache_dir, console=console, fallback_repo=other
            )
    diff = diff_error_sets(sides["OLD"], sides["NEW"])
    if console is not None and console.mode == "github":
        for change in diff.changes:
            if change.kind != "moved":
                console.annotate(annotation(change))
        console.step_summary(render_markdown(diff))
    if fmt == "sarif":
        return render_sarif(diff), diff
    return render(diff, fmt, color=color), diff
