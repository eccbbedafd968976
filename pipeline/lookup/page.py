"""What `explain` prints: the best record as a page for a terminal, or every candidate with its
score."""

from __future__ import annotations

from pathlib import Path

from extractors.patterns import shown_message
from pipeline.dataset.models import Envelope, IndexEntry
from pipeline.lookup.match import Lookup
from pipeline.site.pages import numbered_excerpt, page_title, pinned_ref


def format_candidates(found: Lookup) -> str:
    """`--all`: one line per candidate record with its score, best first."""
    if not found.matches:
        return "No record is close to this message.\n"
    lines = []
    if found.approximate:
        lines.append("No record matches this message; these are approximate (similarity):")
    for match in found.matches:
        entry = match.entry
        lines.append(
            f"{match.score:.3f}  {match.kind:<11}  {entry.id}  {match.dataset.repo}"
            f"@{match.dataset.sha[:10]}  {entry.filePath}:{entry.lineNumber}  "
            f"{_first_line(entry.errorMessage)}"
        )
    return "\n".join(lines) + "\n"


def format_lookup(found: Lookup) -> str:
    """The best record as a readable page, preceded by how it matched."""
    if not found.matches:
        return (
            "No record matches this message, and none is close to it.\n"
            "Searched for: " + _first_line(found.candidates[0].message if found.candidates
                                           else "") + "\n"
        )
    best = found.matches[0]
    head: list[str] = []
    if best.kind == "approximate":
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
        how = (
            "exact message" if best.kind == "exact"
            else f"message pattern, {best.score:.0%} of the message is literal text"
        )
        head.append(f"Match: {how}.")
        others = len(found.matches) - 1
        if others:
            head.append(f"{others} other record{'s' if others > 1 else ''} also "
                        f"match{'' if others > 1 else 'es'} (see --all).")
        if not best.class_agrees:
            head.append(
                f"Note: the message was raised as {best.candidate.errorClass}; "
                f"this record is a {best.entry.errorClass}."
            )
    head.append("")
    envelope = best.dataset.envelope(best.entry.id)
    return "\n".join(head) + "\n" + format_page(envelope, best.entry, best.dataset.root,
                                                 best.values())


def format_page(envelope: Envelope, entry: IndexEntry, dataset_root: Path,
                values: list[tuple[str, str]] | None = None) -> str:
    """A record as plain text for a terminal; `values` pairs each run-time part of the
    message with its text in the message the user pasted."""
    record = envelope.record
    sections: list[tuple[str, str]] = [("Error message", shown_message(record.errorMessage))]
    if values:
        sections.append((
            "In your message",
            "\n".join(f"{hole} = {_first_line(value)}" for hole, value in values),
        ))
    sections.append(("What it means", record.documentation))
    if entry.guards:
        which = "all of these hold" if len(entry.guards) > 1 else "this holds"
        sections.append((
            "When it is raised",
            f"{entry.qualname} raises it when {which}:\n"
            + "\n".join(f"- {guard}" for guard in entry.guards),
        ))
    sections.append((
        "Source",
        f"Thrown at {record.filePath}:{record.lineNumber}\n\n" + numbered_excerpt(record),
    ))
    sections.append((
        "Solutions",
        "\n".join(f"{n}. {text}" for n, text in enumerate(record.solutions, start=1)),
    ))
    sections.append(("Example fix", record.exampleFix))
    sections.append((
        "View on GitHub",
        f"{record.githubUrl}\n(pinned to {pinned_ref(record.githubUrl)})",
    ))
    out = [f"{record.repo} · error · {record.errorClass}", "", page_title(record.errorMessage)]
    for heading, body in sections:
        if body.strip():
            out += ["", heading, "", _indent(body)]
    out += ["", f"Record {record.id}: {dataset_root / 'records' / (record.id + '.json')}"]
    return "\n".join(out) + "\n"


def _indent(text: str) -> str:
    return "\n".join(("  " + line) if line else "" for line in text.split("\n"))


def _first_line(text: str) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= 100 else line[:99] + "…"
