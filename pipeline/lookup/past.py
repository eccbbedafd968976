"""A matched record's past among the datasets searched: "present since X; reworded in Y".

Only the entries of the record's own function are diffed: `vmine diff` pairs records by id,
then by function and message, then by wording within a function, so the pairs of one
function are the same whether or not the rest of each dataset is there (and explain stays
fast on many releases)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.lookup.index import IndexedDataset
    from pipeline.lookup.match import Match


def record_past(match: Match, datasets: list[IndexedDataset]) -> tuple[str, dict[str, Any]] | None:
    """The sentence for the page and the facts for --json, when two or more releases of the
    record's repository were searched; else None."""
    same_repo = sorted(
        (d for d in datasets if d.repo == match.dataset.repo), key=lambda d: d.release_order
    )
    series: dict[str, IndexedDataset] = {}
    for dataset in same_repo:
        series.setdefault(dataset.release, dataset)  # the same commit twice is one release
    if len(series) < 2:
        return None
    # diff and history are imported only when there is a past to tell (start-up time)
    from pipeline.diff.changes import ErrorSet
    from pipeline.history.report import since
    from pipeline.history.timeline import Release, build_history, timeline_of

    qualname = match.pattern.raw.get("qualname")
    releases = [
        Release(
            name,
            ErrorSet(
                label=str(dataset.root),
                repo=dataset.repo,
                sha=dataset.sha,
                entries=tuple(
                    p.entry for p in dataset.patterns if p.raw.get("qualname") == qualname
                ),
            ),
        )
        for name, dataset in series.items()
    ]
    history = build_history(releases)
    line = timeline_of(history, match.dataset.release, match.entry.id)
    if line is None:
        return None
    facts = {
        "firstSeen": line.first_seen,
        "lastSeen": line.last_seen,
        "presentIn": line.present_in,
        "removedIn": line.removed_in,
        "rewordedIn": line.reworded_in(),
        "movedIn": line.moved_in(),
        "changedIn": line.changed_in(),
        "settingsChangedIn": line.settings_changed_in(),
        "releasesSearched": history.names,
    }
    return since(line, history), facts
