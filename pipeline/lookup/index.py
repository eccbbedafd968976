"""The datasets `explain` searches, read fast: each index.jsonl kept as parsed JSON with the
literal fragments of every pattern, and a record file read only when it is shown."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from extractors.patterns import literal_text, pattern_fragments
from pipeline.dataset.layout import index_path, manifest_path, record_path
from pipeline.dataset.models import Envelope, IndexEntry
from pipeline.dataset.reader import DatasetError, datasets_under

_WORD = re.compile(r"\w+")


class ExplainError(Exception):
    """No dataset to search, or one that cannot be read (one line; the CLI exits 2)."""


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


def resolve_datasets(paths: list[Path], default_root: Path = Path("output")) -> list[Path]:
    """The dataset directories to search: each PATH is a dataset or a folder holding some;
    without PATHs, every dataset under `default_root`."""
    try:
        return [found for root in paths or [default_root] for found in datasets_under(root)]
    except DatasetError as error:
        raise ExplainError(str(error)) from None
