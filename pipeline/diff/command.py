"""What `vmine diff` does: read both sides, diff them, and report in the format asked for."""

from __future__ import annotations

from pathlib import Path

from extractors.facts import Scope
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
    scope: Scope = "validators",
) -> tuple[str, DatasetDiff]:
    """What `vmine diff` does: read both sides (a side extracted on the spot in `scope`),
    diff, render (`fmt`: text, markdown, json or sarif); under GitHub Actions also
    annotate each change (moves aside) and append the Markdown report to the job summary.
    Sides of different scopes are diffed as they are, with a warning."""
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
                spec, role, cache_dir=cache_dir, console=console, fallback_repo=other, scope=scope
            )
    old, new = sides["OLD"], sides["NEW"]
    if old.scope != new.scope and console is not None:
        console.line(scope_warning(old, new))
    diff = diff_error_sets(old, new)
    if console is not None and console.mode == "github":
        for change in diff.changes:
            if change.kind != "moved":
                console.annotate(annotation(change))
        console.step_summary(render_markdown(diff))
    if fmt == "sarif":
        return render_sarif(diff), diff
    return render(diff, fmt, color=color), diff


def scope_warning(old: ErrorSet, new: ErrorSet) -> str:
    """Why a diff of two scopes lists errors that did not change (one line)."""
    wider = "NEW" if new.scope == "all" else "OLD"
    shows = "added" if wider == "NEW" else "removed"
    return (
        f"warning: OLD holds the {old.scope} scope and NEW the {new.scope} scope: the errors "
        f"outside validators in {wider} show as {shows} (pass --scope, or mine both sides in "
        "one scope)"
    )
