"""The page model shared by the Markdown pages, the HTML site and `vmine explain`: titles,
summaries, the numbered excerpt, related errors, grouping by file and validator."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from extractors.patterns import shown_message
from pipeline.console import printable
from pipeline.dataset.models import SHA40_RE, ErrorRecord, IndexEntry, Setting

if TYPE_CHECKING:  # an annotation only: explain shows pages without the manifest model
    from pipeline.dataset.manifest import Manifest
    from pipeline.dataset.verification import Verification


def inert_page(text: str) -> str:
    """A whole page (Markdown or HTML) as it is written to disk: CRLF read as LF, and every
    other control character (ESC, BEL, NUL, a lone CR, C1, the bidi overrides, U+2028)
    written as a visible escape (`\\x1b`), so no page can drive the terminal or confuse the
    renderer that shows it. What is inside a JSON script element is escaped before."""
    return printable(text.replace("\r\n", "\n"), keep_newlines=True)


TITLE_CHARS = 60
SUMMARY_CHARS = 120
SHORT_SHA = 10
RELATED_SAME_FILE = 10


def page_title(message: str) -> str:
    """The first line of the message (as a page shows it), cut to ~60 characters (no
    ellipsis, as the reference pages)."""
    return shown_message(message).split("\n", 1)[0][:TITLE_CHARS].rstrip()


def summary_line(message: str) -> str:
    """The first line of the message (as a page shows it), up to ~120 characters, for lists
    and links."""
    line = shown_message(message).split("\n", 1)[0]
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1].rstrip() + "…"


GITHUB = "https://github.com/"


def links_to_github(url: str) -> bool:
    """Whether a record's githubUrl may be a link: only to GitHub (the dataset is untrusted:
    a `javascript:` URL would run when clicked). Others are shown as text."""
    return url.startswith(GITHUB)


def pinned_ref(github_url: str) -> str:
    """What a githubUrl is pinned to: a commit's first 10 hex digits, or a release tag."""
    parts = github_url.split("/blob/", 1)
    ref = parts[1].split("/", 1)[0] if len(parts) == 2 else ""
    return ref[:SHORT_SHA] if SHA40_RE.fullmatch(ref) else ref


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


def analysis_label(manifest: Manifest) -> str:
    """How the explanations were written, for the footer."""
    provider = manifest.llm.provider
    return "Offline analysis" if provider in ("", "offline") else "AI-assisted analysis"


SETTINGS_HEADING = "Settings involved"
SETTINGS_COLUMNS = ("Flag", "Field", "Type", "Default", "Accepted values")


@dataclass(frozen=True)
class SettingRow:
    """One setting a record's guards or message read, as every page shows it: its flags,
    `Class.field`, type and default as written, and the values it accepts (empty: unknown)."""

    flags: str
    field: str
    type: str
    default: str
    accepted: str

    def cells(self) -> tuple[str, str, str, str, str]:
        return self.flags, self.field, self.type, self.default, self.accepted


def where_set(setting: Setting) -> str:
    """Where a user sets it, in a few words: its flags, `env VLLM_X`, `request body`,
    `config.json (--hf-overrides)`; empty for a constructor's argument."""
    if setting.surface == "env":
        return f"env {setting.field}"
    if setting.surface == "request":
        return "request body"
    if setting.surface == "model-config":
        return f"config.json ({setting.via})" if setting.via else "config.json"
    return ", ".join(setting.flags)


def settings_involved(entry: IndexEntry) -> list[SettingRow]:
    """The settings of a record, each field once, in the order the site reads them."""
    rows: dict[tuple[str | None, str], SettingRow] = {}
    for setting in entry.settings:
        key = (setting.cls, setting.field)
        if key in rows or setting.surface == "internal":
            continue
        rows[key] = SettingRow(
            flags=where_set(setting),
            field=f"{setting.cls}.{setting.field}" if setting.cls else setting.field,
            type=setting.type or "",
            default=setting.default or "",
            accepted=", ".join(setting.choices) if setting.choices else "",
        )
    return list(rows.values())


@dataclass(frozen=True)
class Related:
    """Records raised by the same validator, then other records of the same file."""

    same_validator: list[IndexEntry]
    same_file: list[IndexEntry]
    more_in_file: int


def related_errors(entry: IndexEntry, entries: list[IndexEntry]) -> Related:
    validator = [
        other
        for other in entries
        if other.id != entry.id
        and (other.filePath, other.qualname) == (entry.filePath, entry.qualname)
    ]
    same_file = [
        other
        for other in entries
        if other.filePath == entry.filePath and other.qualname != entry.qualname
    ]
    shown = same_file[:RELATED_SAME_FILE]
    return Related(validator, shown, len(same_file) - len(shown))


def group_entries(entries: list[IndexEntry]) -> dict[str, dict[str, list[IndexEntry]]]:
    """Entries by file, then by validator (qualname), both in order of first line."""
    grouped: dict[str, dict[str, list[IndexEntry]]] = defaultdict(lambda: defaultdict(list))
    for entry in sorted(entries, key=lambda e: (e.filePath, e.lineNumber)):
        grouped[entry.filePath][entry.qualname].append(entry)
    return {path: dict(by_validator) for path, by_validator in grouped.items()}


VERIFIED_HEADING = "Verified"


def verification_note(verification: Verification | None) -> tuple[str, str | None] | None:
    """What a page says of a record's verification (`vmine verify`): a sentence, and the
    reproducer of a verified site; None when the dataset was not verified."""
    if verification is None:
        return None
    release = verification.release
    if verification.outcome == "verified" and verification.reproducerKind == "command-line":
        return (
            f"Verified on {release} from the command line `{verification.commandLine}` "
            "(with a tiny model folder, no weights): this program runs the target's own "
            "parser and configuration path and raises exactly this message "
            f"(run it with that environment's python).{_fix_note(verification)}",
            verification.reproducer,
        )
    if verification.outcome == "verified" and verification.reproducerKind == "model":
        return (
            f"Verified on {release} by a program the model wrote (the solver's inputs did not "
            "trigger it): run with that environment's python, it raises exactly this message."
            f"{_fix_note(verification)}",
            verification.reproducer,
        )
    if verification.outcome == "verified":
        return (
            f"Verified on {release}: this program raises exactly this message "
            f"(run it with that environment's python).{_fix_note(verification)}",
            verification.reproducer,
        )
    if verification.outcome == "stale":
        return f"Not verified: the raise line installed in {release} differs from this one.", None
    said = {
        "mismatch": "it raised here, but the message pattern does not match",
        "raised-elsewhere": "another check fired first",
        "other-exception": "the validator raised something else",
        "no-raise": "the validator returned without raising",
        "not-importable": "the module does not import",
        "not-callable": "the validator cannot be called on its own",
    }[verification.outcome]
    where = f" at line {verification.lineNumber}" if verification.lineNumber else ""
    detail = verification.message or verification.missing
    got = f" ({verification.raisedClass or ''}{': ' if verification.raisedClass else ''}"
    tail = f"{got}{_shortened(detail)}){where}" if detail else where
    return f"Not verified on {release} ({verification.outcome}): {said}{tail}.", None


def _fix_note(verification: Verification) -> str:
    """What running the fixes on the reproducer showed: the record's example fix stops the
    raise, or does not, and the fix that does when one was found (`chosenFix`)."""
    chosen = verification.chosenFix
    after = _after_half(chosen) if chosen else None
    if verification.fix == "verified":
        return " Its example fix, applied to this program, stops the raise."
    if verification.fix == "fails" and after:
        return f" Its example fix did not stop the raise there; this one does: {after}."
    if verification.fix == "fails":
        return " Its example fix, applied to this program, did not stop the raise."
    if after:
        return f" This fix, applied to this program, stops the raise: {after}."
    return ""


def _after_half(fix: str) -> str:
    """A before/after fix's "after" lines on one line (the whole fix when it has no halves)."""
    lines = fix.splitlines()
    marks = [line.strip().lower() for line in lines]
    kept = lines[marks.index("# after") + 1 :] if "# after" in marks else lines
    return _shortened("; ".join(line.strip() for line in kept if line.strip()))


def _shortened(text: str) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= 160 else line[:159] + "…"
