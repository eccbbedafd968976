"""How much of a pasted message a record's wording explains, word by word: the score of a message
from another release (a clause appended or dropped, a typo fixed) or cut short by the user, and
the words that differ, for the one-line note on the page.

Words are aligned in order (difflib over word tokens); a run-time part of the record (`{expr}`)
absorbs the few words of its value. Flags and identifiers (`--max-model-len`, `block_size`,
`fp8`) weigh double: two messages that differ in one of them are two different errors."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cached_property

from pipeline.lookup.fragments import placeholders

_TOKEN = re.compile(r"-{0,2}\w[\w.\-/]*")
_HOLE = "\x00"  # a run-time part in the record's token list; no word is ever this
_IDENTIFIER = re.compile(r"[_\d]|^-|.[./]|.[A-Z]")
# A value fills a hole with this many words at most; the rest of the paste there is unexplained.
HOLE_WORDS = 3


@dataclass(frozen=True)
class Word:
    text: str  # as written
    key: str  # lowercased, for comparing
    weight: int  # 2 for a flag or identifier, 1 for a plain word

    @property
    def identifier(self) -> bool:
        return self.weight > 1


def words(text: str) -> list[Word]:
    """The words of a message, trailing sentence punctuation dropped."""
    found = []
    for token in _TOKEN.findall(text):
        token = token.rstrip(".-/")
        if token:
            found.append(Word(token, token.lower(), 2 if _IDENTIFIER.search(token) else 1))
    return found


def word_keys(text: str) -> frozenset[str]:
    """The lowercased words of a text, cheaply (placeholders' expressions included): enough
    to pick the few records worth aligning."""
    return frozenset(token.rstrip(".-/") for token in _TOKEN.findall(text.lower()))


_HOLE_WORD = Word(_HOLE, _HOLE, 0)


def template_words(message: str) -> list[Word]:
    """The words of an errorMessage with each `{expr}` placeholder as one hole."""
    out: list[Word] = []
    rest = message
    for placeholder in placeholders(message):
        before, _, rest = rest.partition(placeholder)
        out += words(before)
        out.append(_HOLE_WORD)
    return out + words(rest)


@dataclass(frozen=True)
class Wording:
    """The paste's words against a record's: how much of the paste the record explains
    (containment), how much of the record the paste lacks (extra), and the phrases of each."""

    containment: float
    extra: float
    lacks: tuple[str, ...]  # phrases of the record that the paste does not have
    adds: tuple[str, ...]  # phrases of the paste that the record does not have
    identifiers_agree: bool  # every flag or identifier of the paste is in the record
    paste_weight: int

    @cached_property
    def score(self) -> float:
        # A record that adds words (a longer release, the rest of a truncated message) costs
        # half as much as words of the paste it cannot explain.
        return self.containment * (1 - 0.5 * self.extra)

    @property
    def differs(self) -> bool:
        return bool(self.lacks or self.adds)


def compare(paste: list[Word], record: list[Word]) -> Wording | None:
    """Align the paste's words with the record's; None when the paste has no words."""
    total = sum(word.weight for word in paste)
    record_weight = sum(word.weight for word in record)
    if not total or not record_weight:
        return None
    matcher = difflib.SequenceMatcher(
        None, [w.key for w in paste], [w.key for w in record], autojunk=False
    )
    covered = missing = 0
    lacks: list[str] = []
    adds: list[str] = []
    agree = True
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        ours, theirs = paste[i1:i2], record[j1:j2]
        if op == "equal":
            covered += sum(w.weight for w in ours)
            continue
        theirs_words = [w for w in theirs if w.key != _HOLE]
        holes = len(theirs) - len(theirs_words)
        if holes and not theirs_words:
            # the value of a run-time part, between words that agree: its first few words
            # are explained by the hole
            covered += sum(w.weight for w in ours[: HOLE_WORDS * holes])
        elif ours:
            adds.append(" ".join(w.text for w in ours))
            agree = agree and not any(w.identifier for w in ours)
        if theirs_words:
            missing += sum(w.weight for w in theirs_words)
            lacks.append(" ".join(w.text for w in theirs_words))
    return Wording(
        containment=covered / total,
        extra=missing / record_weight,
        lacks=tuple(lacks),
        adds=tuple(adds),
        identifiers_agree=agree,
        paste_weight=total,
    )
