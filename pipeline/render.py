"""A dataset -> one Markdown page per record plus an index, or (via render_html) a static site."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from pipeline.dataset import Dataset, DatasetError, datasets_at, load_dataset
from pipeline.models import SHA40_RE, ErrorRecord, IndexEntry

TITLE_CHARS = 60
SUMMARY_CHARS = 120
SHORT_SHA = 10
RELATED_SAME_FILE = 10
# `_` only where it could start or end emphasis: intraword (`max_len`) it is inert.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|#]|(?<!\w)_|_(?!\w))")


class RenderError(Exception):
    """A dataset that cannot be rendered or an output problem (one line for the user)."""


def page_title(message: str) -> str:
    """The first line of the message, cut to ~60 characters (no ellipsis, as the seeds)."""
    return message.split("\n", 1)[0][:TITLE_CHARS].rstrip()


def summary_line(message: str) -> str:
    """The first line of the message, up to ~120 characters, for lists and links."""
    line = message.split("\n", 1)[0]
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1].rstrip() + "…"


def pinned_ref(github_url: str) -> str:
    """What a githubUrl is pinned to: a commit's first 10 hex digits, or a release tag."""
    parts = github_url.split("/blob/", 1)
    ref = parts[1].split("/", 1)[0] if len(parts) == 2 else ""
    return ref[:SHORT_SHA] if SHA40_RE.match(ref) else ref


def numbered_excerpt(record: ErrorRecord) -> str:
    """The source excerpt with line numbers, the raise line marked with `>`."""
    lines = record.sourceCode.split("\n")
    width = len(str(record.sourceCodeStart + len(lines) - 1))
    out = []
    for number, line in enumerate(lines, start=record.sourceCodeStart):
        mark = ">" if number == record.lineNumber else " "
        out.append(f"{mark} {number:>{width}} | {line}".rstrip())
    return "\n".join(out)


def analysed_ref(record: ErrorRecord) -> str:
    """`owner/name@ref` as the footer names it: the ref the GitHub link is pinned to (a
    release's tag, not the commit vmine made of its files; else the commit's short SHA)."""
    return f"{record.repo}@{pinned_ref(record.githubUrl)}"


def analysis_label(manifest: dict) -> str:
    """How the explanations were written, for the footer."""
    provider = (manifest.get("llm") or {}).get("provider", "")
    return "Offline analysis" if provider in ("", "offline") else "AI-assisted analysis"


@dataclass(frozen=True)
class Related:
    """Records raised by the same validator, then other records of the same file."""

    same_validator: list[IndexEntry]
    same_file: list[IndexEntry]
    more_in_file: int


def related_errors(entry: IndexEntry, entries: list[IndexEntry]) -> Related:
    validator = [
        other for other in entries
        if other.id != entry.id and (other.filePath, other.qualname) == (entry.filePath,
                                                                        entry.qualname)
    ]
    same_file = [
        other for other in entries
        if other.filePath == entry.filePath and other.qualname != entry.qualname
    ]
    shown = same_file[:RELATED_SAME_FILE]
    return Related(validator, shown, len(same_file) - len(shown))


# --- Markdown -----------------------------------------------------------------------------


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


def md_code(text: str) -> str:
    """An inline code span that holds any text, backticks included."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _md_prose(text: str) -> str:
    """LLM prose keeps its inline `code`, but no raw HTML gets through."""
    return text.replace("<", "\\<").replace(">", "\\>")


def markdown_page(record: ErrorRecord, entry: IndexEntry, entries: list[IndexEntry],
                  manifest: dict) -> str:
    """One record as a Markdown page in the layout of the seed pages; empty sections are
    left out."""
    blocks = [
        f"{md_text(record.repo)} · error · {md_text(record.errorClass)}",
        f"# {md_text(page_title(record.errorMessage))}",
        "## Error message",
        md_fence(record.errorMessage, "text"),
    ]
    if record.documentation.strip():
        blocks += ["## What it means", _md_prose(record.documentation)]
    blocks += [
        "## Source",
        f"Thrown at {md_code(f'{record.filePath}:{record.lineNumber}')}",
        md_fence(record.sourceCode, "python"),
        f"[View on GitHub (pinned to {md_text(pinned_ref(record.githubUrl))})]"
        f"({md_url(record.githubUrl)})",
    ]
    if any(s.strip() for s in record.solutions):
        blocks += ["## Solutions", "\n".join(
            f"{n}. {_md_prose(text)}" for n, text in enumerate(record.solutions, start=1)
        )]
    if record.exampleFix.strip():
        blocks += ["## Example fix", md_fence(record.exampleFix)]
    defensive = []
    if record.handlingStrategy.strip():
        defensive.append(f"**Strategy:** {_md_prose(record.handlingStrategy)}")
    for heading, code in (("Validate before calling", record.validationCode),
                          ("Type guard", record.typeGuard),
                          ("Try / catch", record.tryCatchPattern or "")):
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
        when.append("**Conditions** (all hold when it is raised, in "
                    f"{md_code(entry.qualname)}):\n\n" + "\n".join(f"- {md_code(g)}" for g in entry.guards))
    if when:
        blocks += ["## When it happens", *when]
    related = related_errors(entry, entries)
    if related.same_validator or related.same_file:
        lines = [_md_related(other) for other in related.same_validator + related.same_file]
        if related.more_in_file:
            lines.append(f"- … and {related.more_in_file} more in {md_code(entry.filePath)} "
                         "(see [the index](index.md))")
        blocks += ["## Related errors", "\n".join(lines)]
    blocks += ["---", (
        f"{analysis_label(manifest)} of {md_text(analysed_ref(record))} "
        f"({record.analyzedAt[:10]}). Data as JSON: `records/{record.id}.json`."
    )]
    return "\n\n".join(blocks) + "\n"


def _md_related(other: IndexEntry) -> str:
    return (f"- [{md_text(summary_line(other.errorMessage))}]({other.id}.md) "
            f"({md_code(other.qualname)}, line {other.lineNumber})")


def markdown_index(entries: list[IndexEntry], manifest: dict) -> str:
    """`index.md`: every record, grouped by file, then by validator, in source order."""
    repo, sha = manifest["repo"], manifest["analyzedSha"]
    count = len(entries)
    blocks = [
        f"# {md_text(repo)} validation errors",
        f"{count} error{'s' if count != 1 else ''} at `{sha[:SHORT_SHA]}` "
        f"(dataset {manifest['datasetVersion'][:10]}).",
    ]
    for file_path, in_file in group_entries(entries).items():
        blocks.append(f"## {md_code(file_path)}")
        for qualname, in_validator in in_file.items():
            blocks.append(f"### {md_code(qualname)}")
            blocks.append("\n".join(
                f"- [{md_text(summary_line(e.errorMessage))}]({e.id}.md) (line {e.lineNumber})"
                for e in in_validator
            ))
    return "\n\n".join(blocks) + "\n"


def group_entries(entries: list[IndexEntry]) -> dict[str, dict[str, list[IndexEntry]]]:
    """Entries by file, then by validator (qualname), both in order of first line."""
    grouped: dict[str, dict[str, list[IndexEntry]]] = defaultdict(lambda: defaultdict(list))
    for entry in sorted(entries, key=lambda e: (e.filePath, e.lineNumber)):
        grouped[entry.filePath][entry.qualname].append(entry)
    return {path: dict(by_validator) for path, by_validator in grouped.items()}


def render_markdown(dataset: Dataset, out_dir: Path) -> list[Path]:
    """Write `{id}.md` per record and `index.md` into `out_dir`; return the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for entry in dataset.entries:
        record = dataset.records[entry.id]
        path = out_dir / f"{entry.id}.md"
        path.write_text(markdown_page(record, entry, dataset.entries, dataset.manifest),
                        encoding="utf-8")
        written.append(path)
    index = out_dir / "index.md"
    index.write_text(markdown_index(dataset.entries, dataset.manifest), encoding="utf-8")
    written.append(index)
    return written


def render(dataset_path: Path, fmt: str, out_dir: Path) -> list[Path]:
    """The `render` command: load the dataset, write the pages, return the files written."""
    found = datasets_at(dataset_path)
    if len(found) != 1:
        what = "no dataset" if not found else f"{len(found)} datasets"
        raise RenderError(f"{dataset_path}: {what} found; give one folder holding manifest.json")
    try:
        dataset = load_dataset(found[0])
    except DatasetError as error:
        raise RenderError(str(error)) from None
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RenderError(f"{out_dir}: exists and is not a directory")
    if fmt == "html":
        from pipeline.render_html import render_site

        return render_site(dataset, out_dir)
    return render_markdown(dataset, out_dir)
