"""An error message (or a pasted traceback) -> the dataset records that raise it, ranked."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from extractors.patterns import HOLE_PATTERN
from pipeline.layout import index_path, manifest_path, record_path
from pipeline.models import Envelope, IndexEntry
from pipeline.tracebacks import Candidate, candidates

_WORD = re.compile(r"\w+")
_PLACEHOLDER = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
APPROXIMATE_LIMIT = 5
# Below this similarity a record is not worth showing, even as an approximation.
APPROXIMATE_FLOOR = 0.25


class ExplainError(Exception):
    """No dataset to search, or one that cannot be read (one line; the CLI exits 2)."""


_TOKEN = re.compile(
    r"(?P<hole>\(\.\*\?\))|\\(?P<escaped>[\\^$.|?*+()\[\]{}])"
    r"|(?P<text>[^\\^$.|?*+()\[\]{}]+)|(?P<other>.)",
    re.DOTALL,
)


def pattern_fragments(pattern: str) -> tuple[str, ...] | None:
    """The literal texts between the `(.*?)` holes of a messagePattern, unescaped; None when
    the pattern uses regex syntax beyond the escaped literals and holes of the contract."""
    fragments: list[str] = []
    current: list[str] = []
    for token in _TOKEN.finditer(pattern):
        if token["hole"]:
            fragments.append("".join(current))
            current = []
        elif token["other"] is not None:
            return None
        else:
            current.append(token["escaped"] or token["text"])
    fragments.append("".join(current))
    return tuple(fragments)


@dataclass
class IndexedPattern:
    """One line of index.jsonl, ready for fast matching: kept as parsed JSON (validated into an
    `IndexEntry` only when shown), its regex compiled on first use, after a substring check of
    its longest literal fragment."""

    raw: dict
    dataset: IndexedDataset
    literal_chars: int
    needle: str
    has_holes: bool
    _regex: re.Pattern[str] | None = None
    _entry: IndexEntry | None = None
    _words: frozenset[str] | None = None

    @classmethod
    def of(cls, raw: dict, dataset: IndexedDataset) -> IndexedPattern:
        fragments = pattern_fragments(raw["messagePattern"])
        if fragments is None:  # a pattern outside the contract: run its regex every time
            plain = re.sub(r"\\.|[\\^$.|?*+()\[\]{}]", "", raw["messagePattern"])
            return cls(raw, dataset, len(plain), "", True)
        return cls(raw, dataset, sum(map(len, fragments)), max(fragments, key=len),
                   len(fragments) > 1)

    @property
    def entry(self) -> IndexEntry:
        if self._entry is None:
            try:
                self._entry = IndexEntry.model_validate(self.raw)
            except ValueError as error:
                where = index_path(self.dataset.root)
                raise ExplainError(f"{where}: invalid entry {self.raw.get('id')!r}: "
                                   f"{str(error).splitlines()[0]}") from None
        return self._entry

    @property
    def words(self) -> frozenset[str]:
        """The lowercased words of the message's literal text (for approximate matching)."""
        if self._words is None:
            text = literal_text(self.raw["errorMessage"]).lower()
            self._words = frozenset(_WORD.findall(text))
        return self._words

    def fullmatch(self, message: str) -> bool:
        if self.needle not in message:
            return False
        if self._regex is None:
            try:
                self._regex = re.compile(self.raw["messagePattern"], re.DOTALL)
            except re.error:
                self._regex = re.compile(re.escape(self.raw["messagePattern"]))
        return self._regex.fullmatch(message) is not None


@dataclass
class IndexedDataset:
    """A dataset's index.jsonl and manifest, read without loading the records."""

    root: Path
    repo: str
    sha: str
    patterns: list[IndexedPattern] = field(default_factory=list)

    def envelope(self, record_id: str) -> Envelope:
        path = record_path(self.root, record_id)
        try:
            return Envelope.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ExplainError(f"{path}: cannot read the record: {error}") from None


_INDEX_CACHE: dict[tuple[Path, int, int], IndexedDataset] = {}


def index_dataset(root: Path) -> IndexedDataset:
    """The dataset in `root`, indexed for matching (cached in memory while its index and
    manifest are unchanged)."""
    root = Path(root).resolve()
    index_file, manifest_file = index_path(root), manifest_path(root)
    try:
        key = (root, index_file.stat().st_mtime_ns, manifest_file.stat().st_mtime_ns)
    except OSError:
        raise ExplainError(f"{root}: not a dataset (no manifest.json and index.jsonl)") from None
    cached = _INDEX_CACHE.get(key)
    if cached is not None:
        return cached
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
        dataset = IndexedDataset(root, manifest["repo"], manifest["analyzedSha"])
        lines = index_file.read_text(encoding="utf-8").splitlines()
        # one parse of the whole file as an array is much faster than one per line
        entries = json.loads("[" + ",".join(line for line in lines if line.strip()) + "]")
        dataset.patterns = [IndexedPattern.of(_checked(raw), dataset) for raw in entries]
    except (OSError, ValueError, KeyError, TypeError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ExplainError(f"{root}: not a valid dataset: {reason}") from None
    _INDEX_CACHE[key] = dataset
    return dataset


def _checked(raw: object) -> dict:
    """The fields matching reads before an entry is validated in full."""
    if not isinstance(raw, dict) or not all(
        isinstance(raw.get(key), str) for key in ("id", "errorMessage", "messagePattern")
    ):
        raise ValueError("an index line lacks id, errorMessage or messagePattern")
    return raw


@dataclass(frozen=True)
class Match:
    """A record that may explain the message, and how well."""

    pattern: IndexedPattern
    candidate: Candidate
    score: float  # pattern matches: share of the message that is literal text; else similarity
    kind: str  # 'exact' | 'pattern' | 'approximate'

    @property
    def entry(self) -> IndexEntry:
        return self.pattern.entry

    @property
    def dataset(self) -> IndexedDataset:
        return self.pattern.dataset

    @property
    def class_agrees(self) -> bool:
        return self.candidate.errorClass in (None, self.entry.errorClass)

    def values(self) -> list[tuple[str, str]]:
        """Each run-time part of the record's message (`{tp}`) with the text it has in the
        pasted message (`2`), for a pattern match; [] when they cannot be paired."""
        if self.kind != "pattern":
            return []
        raw = self.pattern.raw
        fragments = pattern_fragments(raw["messagePattern"])
        found = re.fullmatch(raw["messagePattern"], self.candidate.message, re.DOTALL)
        if fragments is None or found is None:
            return []
        holes = re.fullmatch(HOLE_PATTERN.join(map(re.escape, fragments)), raw["errorMessage"],
                             re.DOTALL)
        if holes is None or len(holes.groups()) != len(found.groups()):
            return []
        return list(zip(holes.groups(), found.groups(), strict=True))

    def sort_key(self) -> tuple:
        return (
            self.kind != "exact",
            -round(self.score, 6),
            not self.class_agrees,
            self.dataset.repo,
            self.entry.filePath,
            self.entry.lineNumber,
            str(self.dataset.root),
        )


@dataclass
class Lookup:
    """What `explain` found for one pasted text."""

    candidates: list[Candidate]
    matches: list[Match]

    @property
    def approximate(self) -> bool:
        return not self.matches or self.matches[0].kind == "approximate"


def lookup(text: str, datasets: list[IndexedDataset]) -> Lookup:
    """Rank the records of `datasets` against every message found in `text`: records whose
    pattern fully matches first (exact literal matches, then by the share of the message
    their literal text covers); when none does, the most similar messages, as approximate."""
    found = candidates(text)
    best: dict[tuple[Path, str], Match] = {}
    for candidate in found:
        message = candidate.message
        for pattern in (p for dataset in datasets for p in dataset.patterns):
            if pattern.literal_chars == 0 or not pattern.fullmatch(message):
                continue  # a pattern without literal text matches anything
            exact = not pattern.has_holes
            score = 1.0 if exact else min(1.0, pattern.literal_chars / max(len(message), 1))
            _keep(best, Match(pattern, candidate, score, "exact" if exact else "pattern"))
    if not best:
        for match in _closest(found, datasets):
            _keep(best, match)
    return Lookup(found, sorted(best.values(), key=Match.sort_key))


def _keep(best: dict[tuple[Path, str], Match], match: Match) -> None:
    key = (match.dataset.root, match.entry.id)
    if key not in best or match.sort_key() < best[key].sort_key():
        best[key] = match


def literal_text(message: str) -> str:
    """An errorMessage without its `{expr}` placeholders."""
    return _PLACEHOLDER.sub(" ", message)


def _closest(found: list[Candidate], datasets: list[IndexedDataset]) -> list[Match]:
    """The records whose message is most similar to a candidate: a cheap word-overlap score
    picks a shortlist, difflib's ratio on the characters refines it."""
    shortlist: list[tuple[float, IndexedPattern, Candidate]] = []
    for candidate in found[:3]:
        words = set(_WORD.findall(candidate.message.lower()))
        if not words:
            continue
        for dataset in datasets:
            for pattern in dataset.patterns:
                theirs = pattern.words
                if theirs:
                    overlap = len(words & theirs) / len(words | theirs)
                    shortlist.append((overlap, pattern, candidate))
    shortlist.sort(key=lambda item: -item[0])
    matches = []
    for overlap, pattern, candidate in shortlist[:40]:
        ratio = difflib.SequenceMatcher(
            None, candidate.message.lower(), literal_text(pattern.raw["errorMessage"]).lower()
        ).ratio()
        score = (overlap + ratio) / 2
        if score >= APPROXIMATE_FLOOR:
            matches.append(Match(pattern, candidate, score, "approximate"))
    matches.sort(key=Match.sort_key)
    return matches[:APPROXIMATE_LIMIT]


def resolve_datasets(paths: list[Path], default_root: Path = Path("output")) -> list[Path]:
    """The dataset directories to search: each PATH is a dataset or a folder holding some;
    without PATHs, every dataset under `default_root`."""
    from pipeline.dataset import find_datasets

    roots = paths or [default_root]
    found: list[Path] = []
    for root in roots:
        if not Path(root).is_dir():
            raise ExplainError(f"{root}: no such directory")
        inside = find_datasets(Path(root))
        if not inside:
            raise ExplainError(
                f"{root}: no dataset found (run `vmine run` first, or pass --dataset DIR)"
            )
        found.extend(inside)
    return found


def explain(text: str, dataset_paths: list[Path], *, fmt: str = "text",
            show_all: bool = False, default_root: Path = Path("output")) -> tuple[str, int]:
    """The `explain` command: the output to print and the exit code (0 a match, 1 only
    approximate results). `fmt` is `text` (a page) or `json` (JSON Lines of envelopes)."""
    datasets = [index_dataset(path) for path in resolve_datasets(dataset_paths, default_root)]
    found = lookup(text, datasets)
    code = 1 if found.approximate else 0
    if fmt == "json":
        shown = found.matches if show_all or found.approximate else _tied_best(found.matches)
        lines = [m.dataset.envelope(m.entry.id).model_dump_json() + "\n" for m in shown]
        return "".join(lines), code
    if show_all:
        return format_candidates(found), code
    return format_lookup(found), code


def _tied_best(matches: list[Match]) -> list[Match]:
    """Every match as good as the first (the same error in several datasets or places)."""
    if not matches:
        return []
    head = matches[0]
    return [m for m in matches if (m.kind, round(m.score, 6)) == (head.kind, round(head.score, 6))]


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
    from pipeline.render import numbered_excerpt, page_title, pinned_ref

    record = envelope.record
    sections: list[tuple[str, str]] = [("Error message", record.errorMessage)]
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
