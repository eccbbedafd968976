"""What `explain` prints: the best record as a page for a terminal, every candidate with its
score (`--all`), or JSON Lines of the matches with their envelopes (`--json`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from extractors.patterns import shown_message
from pipeline.console import one_line
from pipeline.console import printable as console_printable
from pipeline.dataset.models import Envelope, IndexEntry
from pipeline.dataset.verification import load_verification
from pipeline.lookup.filled import filled_fix, filled_solutions, pasted_values
from pipeline.lookup.match import Lookup, Match
from pipeline.lookup.past import record_past
from pipeline.site.pages import (
    SETTINGS_HEADING,
    VERIFIED_HEADING,
    numbered_excerpt,
    page_title,
    pinned_ref,
    settings_involved,
    verification_note,
)


def printable(text: str) -> str:
    """A page safe to print to a terminal: control characters escaped, newlines kept."""
    return console_printable(text, keep_newlines=True)


def format_candidates(found: Lookup) -> str:
    """`--all`: one line per candidate record with its score, best first."""
    lines = _notes(found)
    if not found.matches:
        return "\n".join([*lines, "No record is close to this message."]) + "\n"
    if found.matches[0].kind == "ambiguous":
        lines.append("No sure match: these records match, and the paste does not say which ran:")
    elif not found.sure:
        lines.append("No record matches this message; these are approximate (similarity):")
    for match in found.matches:
        entry = match.entry
        more = len(match.releases) - 1
        lines.append(
            f"{match.score:.3f}  {match.kind:<11}  {entry.id}  {match.dataset.repo}"
            f"@{match.dataset.sha[:10]}{f' (+{more} more)' if more else ''}  "
            f"{one_line(entry.filePath)}:{entry.lineNumber}  "
            f"{one_line(_first_line(entry.errorMessage))}"
        )
    return "\n".join(lines) + "\n"


_NEAREST = 5  # records listed when none matches
_TIED_LISTED = 10  # records listed when several match and the paste does not say which ran


def format_lookup(found: Lookup) -> str:
    """The best record as a readable page, preceded by how it matched."""
    head = _notes(found)
    if not found.matches:
        searched = found.candidates[0].message if found.candidates else ""
        return (
            "\n".join(
                [
                    *head,
                    "No record matches this message, and none is close to it.",
                    "Searched for: " + _first_line(searched),
                ]
            )
            + "\n"
        )
    best = found.matches[0]
    if best.kind == "approximate" and best.doubt is None:
        # only similar words: a few lines, no page of a record that is not this one
        head.append("No record matches this message. The nearest records (text similarity):")
        for match in found.matches[:_NEAREST]:
            head.append(
                f"  {match.score:.2f}  {_first_line(match.entry.errorMessage)}  "
                f"({match.entry.filePath}:{match.entry.lineNumber})"
            )
        head.append("Paste the whole message (the traceback's last line) to match it; --all lists")
        head.append("every candidate, --json gives the nearest records whole.")
        return "\n".join(head) + "\n"
    if best.kind == "ambiguous":  # records match, the paste does not say which one ran
        head.append("Records that match this message (the paste does not say which one raised it):")
        tied = [match for match in found.matches if match.kind == "ambiguous"]
        for match in tied[:_TIED_LISTED]:
            head.append(
                f"  {one_line(match.entry.qualname)}  {_first_line(match.entry.errorMessage)}"
                f"  ({match.entry.filePath}:{match.entry.lineNumber})"
            )
        if len(tied) > _TIED_LISTED:
            head.append(f"  and {len(tied) - _TIED_LISTED:,} more (see --all)")
        head.append("Paste the whole traceback: its frames name the function that raised it.")
        head.append("")
        head.append("First of them:")
    elif best.kind == "approximate":  # a match on weak evidence (`doubt`): its page, said so
        head.append(
            "No record matches this message exactly. The closest records (approximate, "
            "by text similarity):"
        )
        for match in found.matches:
            head.append(
                f"  {match.score:.2f}  {_first_line(match.entry.errorMessage)}  "
                f"({match.entry.filePath}:{match.entry.lineNumber})"
            )
        head.append("")
        head.append("Closest record:")
    else:
        head.append(f"Match: {_how(best)}.")
        if best.kind == "reworded" and best.wording is not None:
            head.append(_wording_note(best))
        head += _releases_note(best, found)
        past = record_past(best, found.datasets)
        if past is not None and _eventful(past[1]):
            head.append(f"History: {past[0]}.")
        others = len(found.matches) - 1
        if others and best.kind != "reworded":
            head.append(
                f"{others} other record{'s' if others > 1 else ''} also "
                f"match{'' if others > 1 else 'es'} (see --all)."
            )
    head.append("")
    entry = best.entry  # validated before its record file is opened
    envelope = best.dataset.envelope(entry.id)
    return "\n".join(head) + "\n" + format_page(envelope, entry, best.dataset.root, best.values())


def _how(match: Match) -> str:
    if match.kind == "exact":
        return "exact message"
    if match.kind == "pattern":
        return f"message pattern, {match.score:.0%} of the message is literal text"
    if match.kind == "parts":
        return f"message built from parts, its pieces cover {match.score:.0%} of the message"
    containment = match.wording.containment if match.wording else match.score
    return f"approximate, wording differs; the record explains {containment:.0%} of your message"


_PHRASES = 3
_PHRASE_CHARS = 60


def _wording_note(match: Match) -> str:
    """One line: the words the pasted message lacks and adds, against the record."""
    wording = match.wording
    parts = []
    if wording.lacks:
        parts.append("lacks " + _phrases(wording.lacks))
    if wording.adds:
        parts.append("adds " + _phrases(wording.adds))
    said = " and ".join(parts) if parts else "has the same words in another order"
    return f"Wording: your message {said}; it may come from another release."


def _phrases(phrases: tuple[str, ...]) -> str:
    quoted = [
        '"' + (p if len(p) <= _PHRASE_CHARS else p[: _PHRASE_CHARS - 1] + "…") + '"'
        for p in phrases[:_PHRASES]
    ]
    more = len(phrases) - _PHRASES
    return ", ".join(quoted) + (f" and {more} more" if more > 0 else "")


def _releases_note(match: Match, found: Lookup) -> list[str]:
    """Which of the datasets searched hold the record, when more than one of its repository
    was searched: every release, the one shown last."""
    same_repo = [d for d in found.datasets if d.repo == match.dataset.repo]
    if len(same_repo) < 2:
        return []
    held = match.releases
    what = "Closest wording, in" if match.kind == "reworded" else "Releases holding this record:"
    if len(held) == len(same_repo) and len(held) > 3:  # every one: the range says enough
        return [
            f"{what} all {len(held)} datasets of {match.dataset.repo} searched "
            f"({held[0].release} to {held[-1].release}); shown: {match.dataset.release}."
        ]
    names = ", ".join(d.release for d in held)
    return [
        f"{what} {names} ({len(held)} of {len(same_repo)} datasets of "
        f"{match.dataset.repo} searched); shown: {match.dataset.release}."
    ]


def _eventful(facts: dict) -> bool:
    """Whether the history says more than the releases note: something happened to the
    record, or it is younger than the oldest release searched."""
    changed = ("rewordedIn", "movedIn", "changedIn", "removedIn")
    return any(facts[key] for key in changed) or facts["firstSeen"] != facts["releasesSearched"][0]


def _past_facts(match: Match, found: Lookup) -> dict | None:
    """The record's history among the releases searched (null with fewer than two)."""
    past = record_past(match, found.datasets)
    return past[1] if past is not None else None


def _notes(found: Lookup) -> list[str]:
    return [f"Note: {note}" for note in found.notes]


def format_json(found: Lookup, show_all: bool) -> str:
    """JSON Lines, best first: how each record matched, the datasets holding it and its
    envelope. Without --all, only the best matches (all of them when approximate)."""
    shown = found.matches if show_all or not found.sure else tied_best(found.matches)
    lines = []
    for match in shown:
        entry = match.entry
        described = {
            "kind": match.kind,
            "score": round(match.score, 3),
            "message": match.candidate.message,
            "values": [{"part": part, "text": text} for part, text in match.values()],
            "wording": None
            if match.wording is None or match.kind not in ("reworded", "approximate")
            else {
                "containment": round(match.wording.containment, 3),
                "lacks": list(match.wording.lacks),
                "adds": list(match.wording.adds),
            },
            "releases": [
                {
                    "release": d.release,
                    "repo": d.repo,
                    "analyzedSha": d.sha,
                    "dataset": str(d.root),
                    "shown": d is match.dataset,
                }
                for d in match.releases
            ],
            "history": _past_facts(match, found),
        }
        envelope = json.loads(match.dataset.envelope(entry.id).model_dump_json())
        line = json.dumps({"match": described, "envelope": envelope}, ensure_ascii=False)
        lines.append(_JSON_UNSAFE.sub(lambda c: f"\\u{ord(c.group()):04x}", line) + "\n")
    return "".join(lines)


# What json.dumps leaves raw but a terminal acts on: escaped the JSON way (still valid JSON).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def tied_best(matches: list[Match]) -> list[Match]:
    """Every match as good as the first (the same message raised in several places)."""
    if not matches:
        return []
    head = matches[0]
    return [m for m in matches if (m.kind, round(m.score, 6)) == (head.kind, round(head.score, 6))]


def format_page(
    envelope: Envelope,
    entry: IndexEntry,
    dataset_root: Path,
    values: list[tuple[str, str]] | None = None,
) -> str:
    """A record as plain text for a terminal; `values` pairs each run-time part of the
    message with its text in the message the user pasted."""
    record = envelope.record
    sections: list[tuple[str, str]] = [("Error message", shown_message(record.errorMessage))]
    if values:
        sections.append(
            (
                "In your message",
                "\n".join(f"{hole} = {_first_line(value)}" for hole, value in values),
            )
        )
    sections.append(("What it means", record.documentation))
    note = verification_note(load_verification(dataset_root).get(record.id))
    if note is not None:
        sections.append((VERIFIED_HEADING, note[0] + (f"\n\n{note[1]}" if note[1] else "")))
    if entry.guards:
        which = "all of these hold" if len(entry.guards) > 1 else "this holds"
        sections.append(
            (
                "When it is raised",
                f"{entry.qualname} raises it when {which}:\n"
                + "\n".join(f"- {guard}" for guard in entry.guards),
            )
        )
    sections.append(
        (
            "Source",
            f"Thrown at {record.filePath}:{record.lineNumber}\n\n" + numbered_excerpt(record),
        )
    )
    sections.append((SETTINGS_HEADING, _settings_text(entry)))
    found = pasted_values(entry.settings, values or [])  # the paste's values in the fixes
    solutions = filled_solutions(record.solutions, found)
    sections.append(
        (
            "Solutions",
            "\n".join(f"{n}. {text}" for n, text in enumerate(solutions, start=1)),
        )
    )
    sections.append(("Example fix", filled_fix(record.exampleFix, found)))
    sections.append(
        (
            "View on GitHub",
            f"{record.githubUrl}\n(pinned to {pinned_ref(record.githubUrl)})",
        )
    )
    out = [f"{record.repo} · error · {record.errorClass}", "", page_title(record.errorMessage)]
    for heading, body in sections:
        if body.strip():
            out += ["", heading, "", _indent(body)]
    out += ["", f"Record {record.id}: {dataset_root / 'records' / (record.id + '.json')}"]
    return "\n".join(out) + "\n"


def _settings_text(entry: IndexEntry) -> str:
    """Each setting on two lines: flags and field, then type, default and accepted values."""
    lines = []
    for row in settings_involved(entry):
        lines.append(f"{row.flags or '(no flag)'}: {row.field}")
        facts = [
            f"type {row.type}" if row.type else "",
            f"default {row.default}" if row.default else "",
            f"accepted: {row.accepted}" if row.accepted else "",
        ]
        if any(facts):
            lines.append("  " + ", ".join(f for f in facts if f))
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join(("  " + line) if line else "" for line in text.split("\n"))


def _first_line(text: str) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= 100 else line[:99] + "…"
