"""Every key the extractor hashes, in one place: the token of the rules that every memo key
carries (the pipeline's per-blob analysis token is this token too), a validator's facts
and a segment's function table. `extractors/` never imports `pipeline/`, so these sit here;
`pipeline/keys.py` holds every other key. None holds a line number or a path, so moved code
keeps what is remembered about it."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence

from extractors.facts import EXTRACTOR_VERSION, Rules


def digest(text: str) -> str:
    """The SHA-256 of a text, in hex (lone surrogates of undecodable source kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@functools.lru_cache(maxsize=64)
def memo_token(rules: Rules) -> str:
    """The part of every memo key that changes whenever the extractor or a rule does; which
    functions other files' validators call (`reached`) is left out: what is remembered about
    a piece of text does not depend on it."""
    if rules.reached:
        rules = rules.model_copy(update={"reached": ()})
    return digest(f"{EXTRACTOR_VERSION}\0{rules.cache_token()}")


@functools.lru_cache(maxsize=256)
def analysis_token(rules: Rules) -> str:
    """The token of a whole file's analysis under `rules`: the memo token, and the functions
    other files' validators call (they make sites of the file)."""
    token = memo_token(rules)
    return digest(f"{token}\0reached\0{json.dumps(rules.reached)}") if rules.reached else token


def function_key(
    rules: Rules, qualname: str, kind: str, written: str, called: Sequence[str]
) -> str:
    """The memo key of a validator's facts: its text, name and kind, and the text of the
    same-file helpers it calls (a changed helper changes its messages)."""
    return "function:" + digest("\0".join([memo_token(rules), qualname, kind, written, *called]))


def segment_key(token: str, member: bool, text: str) -> str:
    """The memo key of a segment's function table (`member`: a class member's segment)."""
    return "segment:" + digest(f"{token}\0{'member' if member else 'top'}\0{text}")
