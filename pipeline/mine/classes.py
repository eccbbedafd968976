"""The repository's classes, joined: each blob's `class` statements (scanned once, then kept
in the store under the blob SHA) give the rules in effect for each file, with the error
subclasses and configuration classes that other files define."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from extractors.classes import ClassRules, FileClasses, rules_for_file, scan_file
from extractors.facts import Rules
from pipeline.source import Snapshot
from pipeline.store import Store

# Part of the store key of a blob's scan: bumped when extractors/classes.py reads files
# differently.
SCAN_VERSION = "1"


def _key(blob: str) -> str:
    return f"classes:{SCAN_VERSION}:{blob}"


@dataclass
class TreeClasses:
    """Every blob's classes, and the bytes of the blobs that had to be read to know them
    (handed on to the analysis, so no blob is read twice)."""

    by_blob: dict[str, FileClasses]
    read: dict[str, bytes]

    def rules_by_blob(self, rules: Rules) -> dict[str, Rules]:
        """The rules in effect for each blob's file (the same object for most of them)."""
        tree = ClassRules.of((fact for file in self.by_blob.values() for fact in file.classes),
                             rules)
        cached: dict[tuple, Rules] = {}
        result = {}
        for blob, file in self.by_blob.items():
            # only the names a file raises or derives from decide its rules
            key = (tuple(sorted(file.raised & tree.errors)),
                   tuple(sorted(file.base_names & tree.configs)))
            if key not in cached:
                cached[key] = rules_for_file(rules, file, tree)
            result[blob] = cached[key]
        return result


def scan_tree(snapshot: Snapshot, blobs: Iterable[str], store: Store | None) -> TreeClasses:
    """The classes of these blobs: from the store where it has them, else read and scanned
    (and then stored)."""
    wanted = list(dict.fromkeys(blobs))
    by_blob: dict[str, FileClasses] = {}
    if store is not None:
        for key, value in store.get_memos(_key(blob) for blob in wanted).items():
            by_blob[key.rsplit(":", 1)[1]] = FileClasses.from_row(json.loads(value))
    missing = [blob for blob in wanted if blob not in by_blob]
    read: dict[str, bytes] = {}
    for blob, data in snapshot.read_blobs(missing):
        read[blob] = data
        by_blob[blob] = scan_file(_text(data))
    if store is not None and missing:
        store.put_memo(_rows(missing, by_blob))
    return TreeClasses(by_blob, read)


def _rows(blobs: list[str], by_blob: dict[str, FileClasses]) -> Iterator[tuple[str, str]]:
    for blob in blobs:
        yield _key(blob), json.dumps(by_blob[blob].to_row(), separators=(",", ":"))


def _text(data: bytes) -> str:
    # a scan only needs the ASCII of `class` lines; a file in another encoding that is not
    # UTF-8 keeps those readable under surrogate escapes
    return data.decode("utf-8", "surrogateescape")
