"""A dataset -> a self-contained static site: a searchable index, a page and a JSON file per
record; relative links only, nothing fetched at run time, so it works from file:// too."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import escape
from importlib import resources

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from extractors.patterns import shown_message
from pipeline.dataset.manifest import Manifest
from pipeline.dataset.models import Envelope, ErrorRecord, IndexEntry
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

# Nothing leaves the page: no remote scripts, styles, fonts, images or connections.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'"
)


def h(text: object) -> str:
    """HTML-escape text from the dataset (it is untrusted), quotes included."""
    return escape(str(text), quote=True)


def embedded_json(value: object) -> str:
    """JSON that is safe inside a <script> element: no `<`, `>` or `&` survive literally,
    and no character beyond ASCII (a control character among them) is written raw."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _document(title: str, body: str, root: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{h(title)}</title>\n"
        f'<link rel="stylesheet" href="{root}assets/site.css">\n'
        f"</head>\n<body>\n<main>\n{body}</main>\n"
        f'<script src="{root}assets/site.js"></script>\n</body>\n</html>\n'
    )


def _code_block(html_code: str) -> str:
    return (
        '<div class="code-block"><button type="button" class="copy">Copy</button>'
        f"{html_code}</div>\n"
    )


def _plain_code(code: str) -> str:
    return _code_block(f"<pre><code>{h(code)}</code></pre>")


def _python_code(code: str) -> str:
    formatter = HtmlFormatter(cssclass="highlight", wrapcode=True)
    return _code_block(highlight(code, PythonLexer(stripnl=False), formatter))


def source_block(record: ErrorRecord) -> str:
    """The excerpt highlighted by Pygments, numbered from sourceCodeStart, the raise line
    marked (`hll`)."""
    formatter = HtmlFormatter(
        cssclass="highlight source",
        linenos="table",
        linenostart=record.sourceCodeStart,
        hl_lines=[record.lineNumber - record.sourceCodeStart + 1],
        wrapcode=True,
    )
    return _code_block(highlight(record.sourceCode, PythonLexer(stripnl=False), formatter))


def github_link(url: str) -> str:
    """A link to the pinned source; a URL that is not GitHub's is shown, not linked."""
    label = f"View on GitHub (pinned to {h(pinned_ref(url))})"
    if not links_to_github(url):
        return f'<p class="github muted">{label}: {h(url)}</p>\n'
    return f'<p><a class="github" href="{h(url)}" rel="noopener noreferrer">{label}</a></p>\n'


def record_page(
    envelope: Envelope,
    entry: IndexEntry,
    entries: list[IndexEntry],
    manifest: Manifest,
    verification: Verification | None = None,
) -> str:
    """One record as an HTML page (in `errors/`); sections without content are left out."""
    record = envelope.record
    title = page_title(record.errorMessage)
    parts = [
        '<p class="crumbs"><a href="../index.html">All errors</a></p>\n',
        f'<p class="kicker">{h(record.repo)} · error · {h(record.errorClass)}</p>\n',
        f"<h1>{h(title)}</h1>\n",
        "<h2>Error message</h2>\n",
        _code_block(
            f'<pre class="message"><code>{h(shown_message(record.errorMessage))}</code></pre>'
        ),
    ]
    if record.documentation.strip():
        parts += ["<h2>What it means</h2>\n", f"<p>{h(record.documentation)}</p>\n"]
    note = verification_note(verification)
    if note is not None:
        parts += [f"<h2>{VERIFIED_HEADING}</h2>\n", f"<p>{h(note[0])}</p>\n"]
        if note[1]:
            parts.append(_python_code(note[1]))
    parts += [
        "<h2>Source</h2>\n",
        f'<p class="thrown">Thrown at <code>{h(record.filePath)}:{record.lineNumber}</code></p>\n',
        source_block(record),
        github_link(record.githubUrl),
    ]
    rows = settings_involved(entry)
    if rows:
        head = "".join(f"<th>{h(column)}</th>" for column in SETTINGS_COLUMNS)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td><code>{h(cell)}</code></td>" if cell and n < 4 else f"<td>{h(cell)}</td>"
                for n, cell in enumerate(row.cells())
            )
            + "</tr>"
            for row in rows
        )
        parts += [
            f"<h2>{SETTINGS_HEADING}</h2>\n",
            f'<table class="settings"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>\n",
        ]
    solutions = [s for s in record.solutions if s.strip()]
    if solutions:
        items = "".join(f"<li>{h(s)}</li>" for s in solutions)
        parts += ["<h2>Solutions</h2>\n", f'<ol class="solutions">{items}</ol>\n']
    if record.exampleFix.strip():
        parts += ["<h2>Example fix</h2>\n", _plain_code(record.exampleFix)]
    defensive = []
    if record.handlingStrategy.strip():
        defensive.append(f"<p><strong>Strategy:</strong> {h(record.handlingStrategy)}</p>\n")
    for heading, code in (
        ("Validate before calling", record.validationCode),
        ("Type guard", record.typeGuard),
        ("Try / catch", record.tryCatchPattern or ""),
    ):
        if code.strip():
            defensive += [f"<h3>{heading}</h3>\n", _python_code(code)]
    if defensive:
        parts += ["<h2>Defensive patterns</h2>\n", *defensive]
    tips = [tip for tip in record.preventionTips if tip.strip()]
    if tips:
        items = "".join(f"<li>{h(tip)}</li>" for tip in tips)
        parts += ["<h2>Prevention</h2>\n", f"<ul>{items}</ul>\n"]
    when = []
    if record.triggerScenarios.strip():
        when.append(f"<p><strong>Trigger:</strong> {h(record.triggerScenarios)}</p>\n")
    if record.commonSituations.strip():
        when.append(f"<p><strong>Common situations:</strong> {h(record.commonSituations)}</p>\n")
    if entry.guards:
        items = "".join(f"<li><code>{h(g)}</code></li>" for g in entry.guards)
        when.append(
            f"<p><strong>Conditions</strong> (all hold when it is raised, in "
            f"<code>{h(entry.qualname)}</code>):</p>\n<ul>{items}</ul>\n"
        )
    if when:
        parts += ["<h2>When it happens</h2>\n", *when]
    related = related_errors(entry, entries)
    if related.same_validator or related.same_file:
        items = "".join(
            f'<li><a href="{other.id}.html">{h(summary_line(other.errorMessage))}</a> '
            f'<span class="muted">(<code>{h(other.qualname)}</code>, line '
            f"{other.lineNumber})</span></li>"
            for other in related.same_validator + related.same_file
        )
        if related.more_in_file:
            items += (
                f'<li class="muted">… and {related.more_in_file} more in '
                f'<a href="../index.html">the index</a></li>'
            )
        parts += ["<h2>Related errors</h2>\n", f'<ul class="related">{items}</ul>\n']
    tags = "".join(f'<span class="tag">{h(tag)}</span>' for tag in record.tags)
    if tags:
        parts.append(f'<p class="tags">{tags}</p>\n')
    parts.append(
        f"<footer>{analysis_label(manifest)} of {h(analysed_ref(record))} "
        f"({h(record.analyzedAt[:10])}). Data as JSON: "
        f'<a href="../api/errors/{record.id}.json">api/errors/{record.id}.json</a>.</footer>\n'
    )
    return _document(f"{title} · {record.repo}", "".join(parts), "../")


def search_index(entries: list[IndexEntry], records: dict[str, ErrorRecord]) -> list[dict]:
    """What the search box filters on, per record."""
    return [
        {
            "id": e.id,
            "slug": e.slug,
            "message": shown_message(e.errorMessage),
            "file": f"{e.filePath}:{e.lineNumber}",
            "qualname": e.qualname,
            "tags": records[e.id].tags,
        }
        for e in entries
    ]


def index_page(
    entries: list[IndexEntry], records: dict[str, ErrorRecord], manifest: Manifest
) -> str:
    """`index.html`: every record grouped by file, a search box, and the embedded index."""
    repo, sha = manifest.repo, manifest.analyzedSha
    groups = []
    for file_path, in_file in group_entries(entries).items():
        rows = [f'<tr class="group"><th class="group" colspan="3">{h(file_path)}</th></tr>']
        for qualname, in_validator in in_file.items():
            for e in in_validator:
                tags = "".join(f'<span class="tag">{h(t)}</span>' for t in records[e.id].tags)
                rows.append(
                    f'<tr data-id="{e.id}"><td><a href="errors/{e.id}.html">'
                    f"{h(summary_line(e.errorMessage))}</a><br>{tags}</td>"
                    f"<td><code>{h(qualname)}</code></td>"
                    f'<td class="where">line {e.lineNumber}</td></tr>'
                )
        groups.append("<tbody>" + "\n".join(rows) + "</tbody>\n")
    count = len(entries)
    body = (
        f"<h1>{h(repo)} validation errors</h1>\n"
        f'<p class="muted">{count} errors at <code>{h(sha[:SHORT_SHA])}</code> '
        f"(dataset {h(manifest.datasetVersion[:10])}).</p>\n"
        '<input id="search" type="search" autocomplete="off" '
        'placeholder="Search messages, files, validators, tags" aria-label="Search errors">\n'
        f'<p id="count" class="muted">{count} of {count} errors</p>\n'
        '<p id="no-results" class="muted" hidden>No error matches this search.</p>\n'
        '<table id="errors">\n<thead><tr><th>Error</th><th>Validator</th><th>Line</th></tr>'
        "</thead>\n" + "".join(groups) + "</table>\n"
        '<script type="application/json" id="error-index">'
        + embedded_json(search_index(entries, records))
        + "</script>\n"
    )
    return _document(f"{repo} validation errors", body, "")


def stylesheet() -> str:
    base = resources.files("pipeline.site").joinpath("assets/site.css").read_text(encoding="utf-8")
    colours = HtmlFormatter(style="default").get_style_defs(".highlight")
    return base + "\n/* Pygments, style 'default' */\n" + colours + "\n"


# Where `render` writes a record's files: those of a record no longer in the dataset go.
SITE_OWNED = (
    ("errors", re.compile(r"[0-9a-f]{16}\.html")),
    ("api/errors", re.compile(r"[0-9a-f]{16}\.json")),
)


def site_files(dataset: Dataset) -> Iterator[tuple[str, str]]:
    """(relative path, text) of every file of the site, as written to disk."""
    yield "assets/site.css", stylesheet()
    script = resources.files("pipeline.site").joinpath("assets/site.js").read_text(encoding="utf-8")
    yield "assets/site.js", script
    verified = load_verification(dataset.root)
    for entry in dataset.entries:
        envelope = Envelope(record=dataset.records[entry.id], datasetVersion=dataset.datasetVersion)
        page = record_page(
            envelope, entry, dataset.entries, dataset.manifest, verified.get(entry.id)
        )
        yield f"errors/{entry.id}.html", inert_page(page)
        yield f"api/errors/{entry.id}.json", envelope.model_dump_json(indent=2) + "\n"
    index = index_page(dataset.entries, dataset.records, dataset.manifest)
    yield "index.html", inert_page(index)
