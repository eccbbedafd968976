"""Every key vmine hashes, in one place (the extractor's memo keys are in
`extractors/keys.py`, since `extractors/` never imports `pipeline/`): the per-file analysis
and settings tokens, a record's `id` and `slug`, the cache key of an explanation, the
name of a remote's mirror, and the digest a downloaded sdist is checked with. None of the first ones holds a line number or a commit, so
moving code keeps ids, slugs and cached answers."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from extractors.meaning import raise_line, raise_meaning
from extractors.patterns import literal_text

if TYPE_CHECKING:
    from extractors.facts import Rules
    from pipeline.dataset.models import Site

SLUG_MAX = 50
_NON_SLUG = re.compile(r"[^a-z0-9-]+")
_HYPHENS = re.compile(r"-{2,}")


def dumps_key(*parts: object) -> str:
    """A stable text for hashing a key from its parts."""
    return json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def url_digest(url: str) -> str:
    """12 hex digits over a remote's exact URL: its mirror's name in the cache."""
    return _sha256(url)[:12]


def file_digest(algorithm: str) -> hashlib._Hash:
    """A running digest (`sha256`, ...) of a file as it is downloaded, to compare with the
    hash its index lists (pipeline/source/pip_index.py)."""
    return hashlib.new(algorithm)


def analysis_token(rules: Rules) -> str:
    """The per-blob cache key's second half: changes whenever the extractor or a rule does
    (the token the extractor's own memo keys carry, and the functions other files'
    validators call)."""
    # imported here, as SETTINGS_VERSION below: the source stage hashes with this module
    # before the models (pydantic) are loaded
    from extractors import keys as extractor_keys

    return extractor_keys.analysis_token(rules)


def settings_token(rules: Rules) -> str:
    """The per-blob settings cache key's second half: changes whenever the settings facts of
    an unchanged file can (of the rules, only what makes a configuration class counts)."""
    from extractors.settings_model import SETTINGS_VERSION

    return _sha256(
        dumps_key("settings", SETTINGS_VERSION, rules.config_decorators, rules.config_bases)
    )


def explanation_key(
    model: str, prompt_version: str, site: Site, *, whole_function: bool = False
) -> str:
    """The cache key of a site's explanation: what the explainer reads of the site, never
    its line numbers or its commit. An LLM reads what the site means (its function's name,
    the error, its message and pattern, its guards, the raise statement with what encloses
    it, and the settings it reads), so a regeneration pays only for errors whose meaning
    changed, not for the function's other lines or raises. An explainer that reads the
    whole function (`whole_function`: the offline one, which also counts the function's
    other checks) is keyed by the whole function and the earlier checks, so that a cached
    explanation is always the one a cold run would make. A site that reads no setting keeps
    the key it had without them."""
    settings = [setting.model_dump() for setting in site.settings]
    context = [site.functionSource, site.priorChecks] if whole_function else [site_meaning(site)]
    return _sha256(
        dumps_key(
            model,
            prompt_version,
            site.errorClass,
            site.errorMessage,
            site.messagePattern,
            site.guards,
            site.qualname,
            *context,
            *([settings] if settings else []),
        )
    )


def site_meaning(site: Site) -> list[str] | str:
    """The raise statement and its enclosing conditions (extractors/meaning.py); the whole
    function's source when that cannot be made out."""
    window = site.sourceCode.split("\n")
    line = raise_line(
        site.functionSource.split("\n"), window, site.lineNumber - site.sourceCodeStart
    )
    meaning = raise_meaning(site.functionSource, line)
    return site.functionSource if meaning is None else meaning


class Identified(Protocol):
    repo: str
    filePath: str
    qualname: str
    errorClass: str
    errorMessage: str
    occurrence: int


class Slugged(Identified, Protocol):
    messageFragments: list[str]
    validatorKind: str


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
    return _sha256(key)[:16]


def identities(sites: Sequence[Slugged]) -> list[tuple[str, str]]:
    """(id, slug) of each site, in order; slugs are unique among these sites. The sites
    outside validators (the `all` scope) take theirs after the others, so a validator's
    record has the same slug in either scope."""
    ids = [record_id(site) for site in sites]
    source_of = dict(zip(ids, map(_slug_source, sites), strict=True))
    outside = {rid for rid, site in zip(ids, sites, strict=True) if site.validatorKind == "none"}
    slug_of = slugs({rid: text for rid, text in source_of.items() if rid not in outside})
    if outside:
        taken = set(slug_of.values())
        slug_of |= slugs({rid: source_of[rid] for rid in source_of if rid in outside}, taken)
    return [(rid, slug_of[rid]) for rid in ids]


def _slug_source(site: Slugged) -> str:
    """The message a slug is made of: a message built from parts with the words of its
    optional pieces too (its fragments, braces doubled as an errorMessage writes them)."""
    if site.messageFragments:
        return " ".join(f.replace("{", "{{").replace("}", "}}") for f in site.messageFragments)
    return site.errorMessage


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
    words = [w for w in (_slug_word(part) for part in literal_text(message).split()) if w]
    return _cut("-".join(words), SLUG_MAX) or f"error-{rid[:8]}"


def slugs(messages: Mapping[str, str], taken_before: Iterable[str] = ()) -> dict[str, str]:
    """Slugs for a dataset's records (`id -> errorMessage`), unique within it and apart from
    `taken_before`. Equal slugs get `-2`, `-3`, ... in the order of their ids, so line
    numbers never change them."""
    bases = {rid: base_slug(message, rid) for rid, message in messages.items()}
    result: dict[str, str] = {}
    taken: set[str] = set(taken_before)
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
