"""A dataset -> one Markdown page per record plus an index; and the Markdown escaping helpers
(text, code spans, fences, link targets) that other writers of Markdown share."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from extractors.patterns import shown_message
from pipeline.dataset.manifest import Manifest
from pipeline.dataset.models import ErrorRecord, IndexEntry
from pipeline.dataset.reader import Dataset
from pipeline.site.pages import (
    SETTINGS_COLUMNS,
    SETTINGS_HEADING,
    SHORT_SHA,
    analysed_ref,
    analysis_label,
    group_entries,
    links_to_github,
    page_title,
    pinned_ref,
    related_errors,
    settings_involved,
    summary_line,
)

# `_` only where it could start or end emphasis: intraword (`max_len`) it is inert.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|#]|(?<!\w)_|_(?!\w))")


def md_text(text: str) -> str:
    """Text from the dataset made inert in Markdown (no emphasis, links or raw HTML)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_fence(code: str, language: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run in the code, so the
    code cannot close it early (pages, and the data blocks of the LLM prompt)."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code}\n{fence}"


def md_url(url: str) -> str:
    """A URL safe as a Markdown link destination: no spaces, brackets, parentheses or `<>`."""
    return quote(url, safe=":/#?&=%@+~,;!$*'")


def md_code(text: str, *, spaced: bool = False) -> str:
    """An inline code span that holds any text, backticks included; `spaced` pads it with a
    space inside the ticks whenever the text holds a backtick (Markdown strips the pair)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    padded = text.startswith("`") or text.endswith("`") or (spaced and longest > 0)
    pad = " " if padded else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _md_prose(text: str) -> str:
    """LLM prose keeps its inline `code`, but no raw HTML gets through."""
    return text.replace("<", "\\<").replace(">", "\\>")


def github_link(url: str) -> str:
    """A link to the pinned source; a URL that is not GitHub's is shown, not linked."""
    label = f"View on GitHub (pinned to {md_text(pinned_ref(url))})"
    if not links_to_github(url):
        return f"{label}: {md_code(url, spaced=True)}"
    return f"[{label}]({md_url(url)})"


def markdown_page(
    record: ErrorRecord, entry: IndexEntry, entries: list[IndexEntry], manifest: Manifest
) -> str:
    """One record as a Markdown page in the layout of the reference pages; empty sections are
    left out."""
    blocks = [
        f"{md_text(record.repo)} · error · {md_text(record.errorClass)}",
        f"# {md_text(page_title(record.errorMessage))}",
        "## Error message",
        md_fence(shown_message(record.errorMessage), "text"),
    ]
    if record.documentation.strip():
        blocks += ["## What it means", _md_prose(record.documentation)]
    blocks += [
        "## Source",
        f"Thrown at {md_code(f'{record.filePath}:{record.lineNumber}')}",
        md_fence(record.sourceCode, "python"),
        github_link(record.githubUrl),
    ]
    rows = settings_involved(entry)
    if rows:
        blocks += [
            f"## {SETTINGS_HEADING}",
            _md_table(
                SETTINGS_COLUMNS,
                [
                    [
                        ", ".join(md_code(f) for f in row.flags.split(", "))
                        if row.flags
                        else "(no flag)",
                        md_code(row.field),
                        md_code(row.type) if row.type else "",
                        md_code(row.default) if row.default else "",
                        md_text(row.accepted),
                    ]
                    for row in rows
                ],
            ),
        ]
    if any(s.strip() for s in record.solutions):
        blocks += [
            "## Solutions",
            "\n".join(
                f"{n}. {_md_prose(text)}" for n, text in enumerate(record.solutions, start=1)
            ),
        ]
    if record.exampleFix.strip():
        blocks += ["## Example fix", md_fence(record.exampleFix)]
    defensive = []
    if record.handlingStrategy.strip():
        defensive.append(f"**Strategy:** {_md_prose(record.handlingStrategy)}")
    for heading, code in (
        ("Validate before calling", record.validationCode),
        ("Type guard", record.typeGuard),
        ("Try / catch", record.tryCatchPattern or ""),
    ):
        if code.strip():
            defensive += [f"### {heading}", md_fence(code, "python")]
    if defensive:
        blocks += ["## Defensive patterns", *defensive]
    tips = [tip for tip in record.preventionTips if tip.strip()]
    if tips:
        blocks += ["## Prevention", "\n".join(f"- {_md_prose(tip)}" for tip in tips)]
    when = []
    if record.triggerScenarios.strip():
        when.append(f"**Trigger:** {_md_prose(record.triggerScenarios)}")
    if record.commonSituations.strip():
        when.append(f"**Common situations:** {_md_prose(record.commonSituations)}")
    if entry.guards:
        when.append(
            "**Conditions** (all hold when it is raised, in "
            f"{md_code(entry.qualname)}):\n\n" + "\n".join(f"- {md_code(g)}" for g in entry.guards)
        )
    if when:
        blocks += ["## When it happens", *when]
    related = related_errors(entry, entries)
    if related.same_validator or related.same_file:
        lines = [_md_related(other) for other in related.same_validator + related.same_file]
        if related.more_in_file:
            lines.append(
                f"- … and {related.more_in_file} more in {md_code(entry.filePath)} "
                "(see [the index](index.md))"
            )
        blocks += ["## Related errors", "\n".join(lines)]
    blocks += [
        "---",
        (
            f"{analysis_label(manifest)} of {md_text(analysed_ref(record))} "
            f"({record.analyzedAt[:10]}). Data as JSON: `records/{record.id}.json`."
        ),
    ]
    return "\n\n".join(blocks) + "\n"


def _md_table(header: tuple[str, ...], rows: list[list[str]]) -> str:
    """A GFM table; a `|` inside a cell (a code span `str | None` too) is escaped."""

    def line(cells) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in rows)])


def _md_related(other: IndexEntry) -> str:
    return (
        f"- [{md_text(summary_line(other.errorMessage))}]({other.id}.md) "
        f"({md_code(other.qualname)}, line {other.lineNumber})"
    )


def markdown_index(entries: list[IndexEntry], manifest: Manifest) -> str:
    """`index.md`: every record, grouped by file, then by validator, in source order."""
    repo, sha = manifest.repo, manifest.analyzedSha
    count = len(entries)
    blocks = [
        f"# {md_text(repo)} validation errors",
        f"{count} error{'s' if count != 1 else ''} at `{sha[:SHORT_SHA]}` "
        f"(dataset {manifest.datasetVersion[:10]}).",
    ]
    for file_path, in_file in group_entries(entries).items():
        blocks.append(f"## {md_code(file_path)}")
        for qualname, in_validator in in_file.items():
            blocks.append(f"### {md_code(qualname)}")
            blocks.append(
                "\n".join(
                    f"- [{md_text(summary_line(e.errorMessage))}]({e.id}.md) (line {e.lineNumber})"
                    for e in in_validator
                )
            )
    return "\n\n".join(blocks) + "\n"


def render_markdown(dataset: Dataset, out_dir: Path) -> list[Path]:
    """Write `{id}.md` per record and `index.md` into `out_dir`; return the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for entry in dataset.entries:
        record = dataset.records[entry.id]
        path = out_dir / f"{entry.id}.md"
        path.write_text(
            markdown_page(record, entry, dataset.entries, dataset.manifest), encoding="utf-8"
        )
        written.append(path)
    index = out_dir / "index.md"
    index.write_text(markdown_index(dataset.entries, dataset.manifest), encoding="utf-8")
    written.append(index)
    return written
