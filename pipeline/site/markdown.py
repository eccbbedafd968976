"""A dataset -> one Markdown page per record plus an index; and the Markdown escaping helpers
(text, code spans, fences, link targets) that other writers of Markdown share."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

from extractors.patterns import shown_message
from pipeline.console import printable
from pipeline.dataset.manifest import Manifest
from pipeline.dataset.models import ErrorRecord, IndexEntry
from pipeline.dataset.reader import Dataset, load_verification
from pipeline.dataset.verification import Verification
from pipeline.site.pages import (
    SETTINGS_COLUMNS,
    SETTINGS_HEADING,
    SHORT_SHA,
    VERIFIED_HEADING,
    analysed_ref,
    analysis_label,
    group_entries,
    inert_page,
    links_to_github,
    page_title,
    pinned_ref,
    related_errors,
    settings_involved,
    summary_line,
    verification_note,
)

# `_` only where it could start or end emphasis: intraword (`max_len`) it is inert.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|#]|(?<!\w)_|_(?!\w))")


def md_text(text: str) -> str:
    """Text from the dataset made inert in Markdown (no emphasis, links or raw HTML), on one
    line: a line break is written `\\n`, as other control characters are (a file name with a
    newline would end the heading or table row it is in)."""
    return _MD_SPECIAL.sub(r"\\\1", printable(text))


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
    text = printable(text)  # on one line: a newline would end the span's paragraph
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    padded = text.startswith("`") or text.endswith("`") or (spaced and longest > 0)
    pad = " " if padded else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


# A code span as CommonMark reads one: a backtick run, then the next run of the same length.
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
# The one kind of link model text keeps: to an http(s) URL, with a plain label.
_WEB_LINK = re.compile(r"(!?)\[([^\[\]\n]{1,300})\]\((https?://[^\s()<>]+)\)")
_PROSE_SPECIAL = re.compile(r"([\\<>\[\]])")


def _md_prose(text: str) -> str:
    """Model text (an explanation, a solution) as Markdown: its inline `code` and its
    emphasis stay, its links to http(s) pages stay links, and nothing else of Markdown or
    HTML works: no raw HTML, no image (one becomes a link to its URL, so viewing the page
    fetches nothing), no link to another scheme (`javascript:`, `data:`), no reference
    link or definition. Backslashes are escaped too, so none can turn a code span's
    backtick into text and what is inside it into Markdown."""
    out, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [_prose_links(text[last : span.start()]), span.group()]
        last = span.end()
    out.append(_prose_links(text[last:]))
    return "".join(out)


def _prose_links(text: str) -> str:
    out, last = [], 0
    for link in _WEB_LINK.finditer(text):
        image, label, url = link.groups()
        out.append(_PROSE_SPECIAL.sub(r"\\\1", text[last : link.start()]))
        bang = "\\!" if image else ""  # an image is shown as a link to it
        out.append(f"{bang}[{md_text(label)}]({md_url(url)})")
        last = link.end()
    out.append(_PROSE_SPECIAL.sub(r"\\\1", text[last:]))
    return "".join(out)


def github_link(url: str) -> str:
    """A link to the pinned source; a URL that is not GitHub's is shown, not linked."""
    label = f"View on GitHub (pinned to {md_text(pinned_ref(url))})"
    if not links_to_github(url):
        return f"{label}: {md_code(url, spaced=True)}"
    return f"[{label}]({md_url(url)})"


def markdown_page(
    record: ErrorRecord,
    entry: IndexEntry,
    entries: list[IndexEntry],
    manifest: Manifest,
    verification: Verification | None = None,
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
    note = verification_note(verification)
    if note is not None:
        blocks += [f"## {VERIFIED_HEADING}", md_text(note[0])]
        if note[1]:
            blocks.append(md_fence(note[1], "python"))
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


# Where `render` writes a record's page: a page of a record no longer in the dataset goes.
MARKDOWN_OWNED = (("", re.compile(r"[0-9a-f]{16}\.md")),)


def markdown_files(dataset: Dataset) -> Iterator[tuple[str, str]]:
    """(relative path, text) of `{id}.md` per record and `index.md`, as written to disk."""
    verified = load_verification(dataset.root)
    for entry in dataset.entries:
        record = dataset.records[entry.id]
        page = markdown_page(
            record, entry, dataset.entries, dataset.manifest, verified.get(entry.id)
        )
        yield f"{entry.id}.md", inert_page(page)
    yield "index.md", inert_page(markdown_index(dataset.entries, dataset.manifest))
