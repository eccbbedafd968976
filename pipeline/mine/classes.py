"""The repository's classes, joined: each blob's `class` statements (scanned once, then kept
in the store under the blob SHA) give the rules in effect for each file, with the error
subclasses and configuration classes that other files define."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from extractors.classes import ClassRules, FileClasses, rules_for_file, scan_file
from extractors.facts import Rules
from pipeline.store import Store

# Part of the store key of a blob's scan: bumped when extractors/classes.py reads files
# differently.
SCAN_VERSION = "2"
_KIND = f"classes:{SCAN_VERSION}"


def _key(blob: str) -> str:
    return f"{_KIND}:{blob}"


@dataclass
class TreeClasses:
    """Every blob's classes, for the rules in effect for each file."""

    by_blob: dict[str, FileClasses]

    def rules_by_blob(self, rules: Rules) -> dict[str, Rules]:
        """The rules in effect for each blob's file (the same object for most of them)."""
        tree = ClassRules.of(
            (fact for file in self.by_blob.values() for fact in file.classes), rules
        )
        cached: dict[tuple, Rules] = {}
        result = {}
        for blob, file in self.by_blob.items():
            # the names a file raises decide its rules, and so do its own classes when it
            # derives from a configuration class of the tree
            configs = file.base_names & tree.configs
            key = (
                tuple(sorted(file.raised & tree.errors)),
                tuple(sorted(configs)),
                file.classes if configs else (),
            )
            if key not in cached:
                cached[key] = rules_for_file(rules, file, tree)
            result[blob] = cached[key]
        return result


@functools.lru_cache(maxsize=8192)
def own_rules(rules: Rules, file: FileClasses) -> Rules:
    """The rules a file's own classes give (`rules_for_file` without the tree's): most files
    define no class or raise only configured ones, and a history's releases share most of
    the others, so each distinct answer is worked out once."""
    return rules_for_file(rules, file)


def stored_classes(store: Store | None, blobs: Iterable[str]) -> dict[str, FileClasses]:
    """The classes of the blobs the store has scanned before."""
    if store is None:
        return {}
    decoded: dict[str, FileClasses] = store.decoded(_KIND)
    blobs = list(blobs)
    found = {blob: decoded[blob] for blob in blobs if blob in decoded}
    for key, value in store.get_memos(_key(b) for b in blobs if b not in found).items():
        found[key.rsplit(":", 1)[1]] = FileClasses.from_row(json.loads(value))
    decoded.update(found)
    return found


def scan_blob(data: bytes) -> FileClasses:
    """The classes of one blob's file."""
    # a scan only needs the ASCII of `class` lines; a file in another encoding that is not
    # UTF-8 keeps those readable under surrogate escapes
    return scan_file(data.decode("utf-8", "surrogateescape"))


def store_classes(
    store: Store | None, by_blob: dict[str, FileClasses], blobs: Iterable[str]
) -> None:
    """Keep these blobs' scans in the store."""
    if store is not None:
        blobs = list(blobs)
        store.put_memo(_rows(blobs, by_blob))
        store.decoded(_KIND).update((blob, by_blob[blob]) for blob in blobs)


def _rows(blobs: list[str], by_blob: dict[str, FileClasses]) -> Iterator[tuple[str, str]]:
    for blob in blobs:
        yield _key(blob), json.dumps(by_blob[blob].to_row(), separators=(",", ":"))
