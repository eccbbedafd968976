"""The datasets `explain` searches, read fast and defensively: each index.jsonl kept as parsed
JSON with the literal fragments of every pattern, a record file read only when it is shown.

A dataset is untrusted input: a line that is no index entry is skipped and counted, a
messagePattern that is not of vmine's own form (escaped text and `(.*?)` holes) is never run
(the record is then found by its message's words only), and a folder whose manifest.json is not
vmine's is skipped; each of these is said in one warning line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from extractors.patterns import literal_text, pattern_fragments
from pipeline.dataset.folders import DatasetError, datasets_under, read_regular
from pipeline.dataset.layout import index_path, manifest_path, record_path
from pipeline.lookup.fragments import fold
from pipeline.lookup.wording import Word, template_words, word_keys

if TYPE_CHECKING:  # the models (pydantic) are imported when a record is shown
    from pipeline.dataset.models import Envelope, IndexEntry

_RELEASE = re.compile(r"^pypi:(?P<name>[^=\s]+)==(?P<version>\S+)$")


class ExplainError(Exception):
    """No dataset to search, or a record that cannot be read (one line; the CLI exits 2),
    with the warnings said on the way (folders skipped)."""

    def __init__(self, message: str, warnings: list[str] | None = None) -> None:
        super().__init__(message)
        self.warnings = warnings or []


@dataclass
class IndexedPattern:
    """One line of index.jsonl, ready for fast matching: kept as parsed JSON (validated into an
    `IndexEntry` only when shown), with its pattern's literal fragments and the message's
    pieces in whitespace-free form (None: the pattern is not vmine's and is not used)."""

    raw: dict
    dataset: IndexedDataset
    fragments: tuple[str, ...] | None  # folded
    pieces: tuple[str, ...]  # folded messageFragments (messages built from parts)
    _entry: IndexEntry | None = None

    @classmethod
    def of(cls, raw: dict, dataset: IndexedDataset) -> IndexedPattern:
        fragments = pattern_fragments(raw["messagePattern"])
        pieces = raw.get("messageFragments")
        if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
            pieces = []
        return cls(
            raw,
            dataset,
            None if fragments is None else tuple(fold(f) for f in fragments),
            tuple(fold(p) for p in pieces),
        )

    @property
    def id(self) -> str:
        return self.raw["id"]

    @property
    def message(self) -> str:
        return self.raw["errorMessage"]

    @property
    def entry(self) -> IndexEntry:
        if self._entry is None:
            from pydantic import ValidationError

            from pipeline.dataset.models import IndexEntry

            try:
                self._entry = IndexEntry.model_validate(self.raw, strict=True)
            except ValidationError as error:
                from pipeline.dataset.reader import validation_problem

                where = index_path(self.dataset.root)
                raise ExplainError(
                    f"{where}: invalid entry {self.raw.get('id')!r}: {validation_problem(error)}"
                ) from None
        return self._entry

    @cached_property
    def literal_chars(self) -> int:
        return sum(map(len, self.fragments or ()))

    @cached_property
    def message_literal_chars(self) -> int:
        """The message's literal characters, whitespace left out (what a reworded match
        rests on: a pattern not of vmine's form has no fragments to count)."""
        return len(fold(literal_text(self.message)))

    @cached_property
    def needle(self) -> str:
        """The longest literal fragment: a substring test rules most patterns out at once."""
        return max(self.fragments, key=len) if self.fragments else ""

    @cached_property
    def template(self) -> list[Word]:
        """The message's words, each run-time part a hole (for approximate matching)."""
        return template_words(self.message)

    @cached_property
    def keys(self) -> frozenset[str]:
        """The message's lowercased words, for picking the records worth aligning."""
        return word_keys(self.message)


@dataclass
class IndexedDataset:
    """A dataset's index.jsonl and manifest, read without loading the records."""

    root: Path
    repo: str
    sha: str
    source: str = "git"
    patterns: list[IndexedPattern] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def release(self) -> str:
        """How a person names this dataset's code: `vllm==0.28.0` for a published release,
        else `owner/name@sha10`."""
        found = _RELEASE.match(self.source)
        if found:
            return f"{found['name']}=={found['version']}"
        return f"{self.repo}@{self.sha[:10]}"

    @property
    def release_order(self) -> tuple:
        """Sorts the datasets of one repository oldest release first (by version numbers)."""
        found = _RELEASE.match(self.source)
        numbers = tuple(int(n) for n in re.findall(r"\d+", found["version"])) if found else ()
        return (self.repo, numbers, self.release, str(self.root))

    def envelope(self, record_id: str) -> Envelope:
        from pydantic import ValidationError

        from pipeline.dataset.models import Envelope

        path = record_path(self.root, record_id)
        try:
            return Envelope.model_validate_json(read_regular(path), strict=True)
        except ValidationError as error:
            from pipeline.dataset.reader import validation_problem

            raise ExplainError(f"{path}: invalid record: {validation_problem(error)}") from None
        except (OSError, ValueError, RecursionError) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ExplainError(f"{path}: cannot read the record: {reason}") from None


class NotADataset(Exception):
    """A folder whose manifest.json is not a vmine manifest (it is skipped, with a warning)."""


_INDEX_CACHE: dict[tuple[Path, int, int], IndexedDataset] = {}


def index_dataset(root: Path) -> IndexedDataset:
    """The dataset in `root`, indexed for matching (cached in memory while its index and
    manifest are unchanged). Raises NotADataset for a folder that is not vmine's."""
    root = Path(root).resolve()
    index_file, manifest_file = index_path(root), manifest_path(root)
    try:
        key = (root, index_file.stat().st_mtime_ns, manifest_file.stat().st_mtime_ns)
    except OSError:
        raise NotADataset(
            f"{manifest_file}: not a vmine manifest (no index.jsonl beside it), skipped"
        ) from None
    cached = _INDEX_CACHE.get(key)
    if cached is not None:
        return cached
    try:
        manifest = json.loads(read_regular(manifest_file))
        if not isinstance(manifest, dict) or not all(
            isinstance(manifest.get(key), str) for key in ("repo", "analyzedSha")
        ):
            raise ValueError("no repo and analyzedSha")
        repo, sha = manifest["repo"], manifest["analyzedSha"]
        source = manifest.get("source")
        source = source if isinstance(source, str) else "git"
        text = read_regular(index_file)
    except (OSError, ValueError, RecursionError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise NotADataset(f"{manifest_file}: not a vmine manifest ({reason}), skipped") from None
    dataset = IndexedDataset(root, repo, sha, source)
    entries, bad = _entries(text)
    dataset.patterns = [IndexedPattern.of(raw, dataset) for raw in entries]
    if bad:
        dataset.warnings.append(
            f"{index_file}: {bad} line{'s' if bad > 1 else ''} skipped (not an index entry "
            "with id, errorMessage and messagePattern)"
        )
    foreign = sum(1 for pattern in dataset.patterns if pattern.fragments is None)
    if foreign:
        dataset.warnings.append(
            f"{index_file}: {foreign} messagePattern{'s are' if foreign > 1 else ' is'} not "
            "vmine's (regex syntax beyond escaped text and (.*?) holes): not used, "
            f"{'those records are' if foreign > 1 else 'that record is'} matched by message "
            "words only"
        )
    _INDEX_CACHE[key] = dataset
    return dataset


def _entries(text: str) -> tuple[list[dict], int]:
    """The index entries of an index.jsonl, and how many lines were not one. JSON Lines are
    split at `\\n` only (a message may hold U+2028)."""
    lines = [line for line in text.split("\n") if line.strip()]
    try:
        # one parse of the whole file as an array is much faster than one per line
        parsed = json.loads("[" + ",".join(lines) + "]")
        if len(parsed) == len(lines) and all(map(_is_entry, parsed)):
            return parsed, 0
    except (ValueError, RecursionError):
        pass
    entries: list[dict] = []
    for line in lines:
        try:
            raw = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested absurdly deep
            continue
        if _is_entry(raw):
            entries.append(raw)
    return entries, len(lines) - len(entries)


def _is_entry(raw: object) -> bool:
    """Whether a parsed line has the fields matching reads before an entry is validated."""
    return isinstance(raw, dict) and all(
        isinstance(raw.get(key), str) for key in ("id", "errorMessage", "messagePattern")
    )


def resolve_datasets(paths: list[Path], default_root: Path = Path("output")) -> list[Path]:
    """The dataset directories to search: each PATH is a dataset or a folder holding some;
    without PATHs, every dataset under `default_root`."""
    try:
        return [found for root in paths or [default_root] for found in datasets_under(root)]
    except DatasetError as error:
        raise ExplainError(str(error)) from None


def load_datasets(
    paths: list[Path], default_root: Path = Path("output")
) -> tuple[list[IndexedDataset], list[str]]:
    """The datasets to search, and a warning line for each folder skipped or line not read.
    Raises ExplainError when no dataset is left."""
    datasets: list[IndexedDataset] = []
    warnings: list[str] = []
    seen: set[Path] = set()
    for root in resolve_datasets(paths, default_root):
        try:
            dataset = index_dataset(root)
        except NotADataset as skipped:
            warnings.append(str(skipped))
            continue
        if dataset.root not in seen:  # the same folder named twice is searched once
            seen.add(dataset.root)
            datasets.append(dataset)
            warnings.extend(dataset.warnings)
    if not datasets:
        where = ", ".join(str(p) for p in paths) if paths else str(default_root)
        raise ExplainError(
            f"{where}: no vmine dataset under this folder (only other tools' "
            "manifest.json); write one with `vmine run`",
            warnings,
        )
    return datasets, warnings
