"""A record's identity: its `id` (a content hash without line numbers) and its `slug`."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Protocol

from pipeline.cache import dumps_key

SLUG_MAX = 50
_NON_SLUG = re.compile(r"[^a-z0-9-]+")
_HYPHENS = re.compile(r"-{2,}")


class Identified(Protocol):
    repo: str
    filePath: str
    qualname: str
    errorClass: str
    errorMessage: str
    occurrence: int


def record_id(site: Identified) -> str:
    """16 hex digits over where the raise is and what it says; moving code keeps the id."""
    key = dumps_key(
        site.repo,
        site.filePath,
        site.qualname,
        site.errorClass,
        site.errorMessage,
        site.occurrence,
    )
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def identities(sites: Sequence[Identified]) -> list[tuple[str, str]]:
    """(id, slug) of each site, in order; slugs are unique among these sites."""
    ids = [record_id(site) for site in sites]
    slug_of = slugs(dict(zip(ids, (site.errorMessage for site in sites), strict=True)))
    return [(rid, slug_of[rid]) for rid in ids]


def _literal_text(message: str) -> str:
    """The message with every `{expr}` placeholder (nested braces included) removed."""
    kept: list[str] = []
    depth = 0
    for char in message:
        if char == "{":
            depth += 1
            kept.append(" ")
        elif char == "}" and depth:
            depth -= 1
        elif not depth:
            kept.append(char)
    return "".join(kept)


def _slug_word(word: str) -> str:
    ascii_word = unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode("ascii")
    # `max_model_len` reads better as `max-model-len`; `P/D` and `(x,` lose their marks.
    cleaned = _NON_SLUG.sub("", ascii_word.lower().replace("_", "-"))
    return _HYPHENS.sub("-", cleaned).strip("-")


def _cut(slug: str, limit: int) -> str:
    """At most `limit` characters, cut at a `-` so no word is split (unless one word is
    longer than the limit on its own)."""
    if len(slug) <= limit:
        return slug
    head = slug[: limit + 1]
    boundary = head.rfind("-")
    return (head[:boundary] if boundary > 0 else slug[:limit]).strip("-")


def base_slug(message: str, rid: str) -> str:
    """The slug of one message before de-duplication; `error-<id8>` when it has no words."""
    words = [w for w in (_slug_word(part) for part in _literal_text(message).split()) if w]
    return _cut("-".join(words), SLUG_MAX) or f"error-{rid[:8]}"


def slugs(messages: Mapping[str, str]) -> dict[str, str]:
    """Slugs for a dataset's records (`id -> errorMessage`), unique within it. Equal slugs
    get `-2`, `-3`, ... in the order of their ids, so line numbers never change them."""
    bases = {rid: base_slug(message, rid) for rid, message in messages.items()}
    result: dict[str, str] = {}
    taken: set[str] = set()
    duplicates: list[str] = []
    # The first id (in id order) of each base keeps the bare base; suffixes come after, so
    # a suffixed slug can never steal a bare one ("retry 2" keeps `retry-2`).
    for rid in sorted(bases):
        if bases[rid] in taken:
            duplicates.append(rid)
        else:
            taken.add(bases[rid])
            result[rid] = bases[rid]
    for rid in duplicates:
        number = 2
        while True:
            suffix = f"-{number}"
            candidate = _cut(bases[rid], SLUG_MAX - len(suffix)) + suffix
            if candidate not in taken:
                break
            number += 1
        taken.add(candidate)
        result[rid] = candidate
    return {rid: result[rid] for rid in messages}
