"""How much of a pasted message a record's wording explains, word by word: the score of a message
from another release (a clause appended or dropped, a typo fixed) or cut short by the user, and
the words that differ, for the one-line note on the page.

Words are aligned in order (difflib over word tokens); a run-time part of the record (`{expr}`)
absorbs the few words of its value. Flags and identifiers (`--max-model-len`, `block_size`,
`fp8`) weigh double: two messages that differ in one of them are two different errors. A
comparison written between spaces (`must be >= 4`) is a word that tells two checks apart the
same way (`must be >= {n}` and `must be {n}`), and a value never holds one
(`opens_with_comparison`)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cached_property

from extractors.patterns import runtime_parts

# A comparison operator with a space after it (`>= 4`, not `<{x}>`) is a word too.
_COMPARISON = r"(?<!\S)(?:[<>!=]=|[<>])(?=\s)"
_TOKEN = re.compile(r"-{0,2}\w[\w.\-/]*|" + _COMPARISON)
_HOLE = "\x00"  # a run-time part in the record's token list; no word is ever this
_IDENTIFIER = re.compile(r"[_\d]|^-|.[./]|.[A-Z]")
# A value fills a hole with this many words at most; the rest of the paste there is unexplained.
HOLE_WORDS = 3
# A record mostly made of run-time parts fits any text: its own words must explain this much.
SAME_MESSAGE_LITERAL = 0.6


@dataclass(frozen=True)
class Word:
    text: str  # as written
    key: str  # lowercased, for comparing
    weight: int  # 2 for a flag or identifier, 1 for a plain word

    @property
    def identifier(self) -> bool:
        return self.weight > 1

    @property
    def comparison(self) -> bool:
        return self.text[:1] in "<>!="


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
    for placeholder in runtime_parts(message):
        before, _, rest = rest.partition(placeholder)
        out += words(before)
        out.append(_HOLE_WORD)
    return out + words(rest)


@dataclass(frozen=True)
class Wording:
    """The paste's words against a record's: how much of the paste the record explains
    (containment), how much of the record the paste lacks (extra), the phrases of each, and
    what tells two different messages from one message in two wordings."""

    containment: float
    literal: float  # the share of the paste that the record's own words explain (no values)
    literal_chars: int  # the characters of those words of the paste
    extra: float
    lacks: tuple[str, ...]  # phrases of the record that the paste does not have
    adds: tuple[str, ...]  # phrases of the paste that the record does not have
    identifiers_agree: bool  # every flag, identifier or comparison of the paste is in the record
    substituted: bool  # a word of the paste stands where the record has another (no typo)
    starts_together: bool  # the record has no words before the paste's first one
    # a run-time part of the record and words beside it fall inside the paste with nothing
    # there: the message always renders a value, so the paste is another message (a value
    # alone missing is a release that added it)
    value_missing: bool
    paste_weight: int

    @cached_property
    def score(self) -> float:
        # A record that adds words (a longer release, the rest of a truncated message) costs
        # half as much as words of the paste it cannot explain.
        return self.containment * (1 - 0.5 * self.extra)

    @property
    def same_message(self) -> bool:
        """Whether the difference is one a release or a user makes to one message: words
        added, dropped or cut off, typos fixed; not a word or identifier exchanged."""
        return (
            self.identifiers_agree
            and not self.substituted
            and self.starts_together
            and not self.value_missing
            and self.literal >= SAME_MESSAGE_LITERAL
        )


def compare(paste: list[Word], record: list[Word]) -> Wording | None:
    """Align the paste's words with the record's; None when the paste has no words."""
    total = sum(word.weight for word in paste)
    record_weight = sum(word.weight for word in record)
    if not total or not record_weight:
        return None
    matcher = difflib.SequenceMatcher(
        None, [w.key for w in paste], [w.key for w in record], autojunk=False
    )
    covered = literal = literal_chars = missing = 0
    lacks: list[str] = []
    adds: list[str] = []
    agree, substituted, starts_together, value_missing = True, False, True, False
    for number, (op, i1, i2, j1, j2) in enumerate(matcher.get_opcodes()):
        ours, theirs = paste[i1:i2], record[j1:j2]
        if op == "equal":
            covered += sum(w.weight for w in ours)
            literal += sum(w.weight for w in ours)
            literal_chars += sum(len(w.text) for w in ours)
            continue
        if number == 0 and theirs and theirs[0].key != _HOLE and not ours:
            starts_together = False  # the record says more before the paste begins
        if number == 0 and ours and not theirs:
            starts_together = False  # the paste says more before the record begins
        if (
            not ours
            and 0 < i1 < len(paste)
            and any(w.key == _HOLE for w in theirs)
            and any(w.key != _HOLE for w in theirs)
        ):
            value_missing = True  # a value and the words around it: not a release's edit
        # a run-time part at either end of the difference takes the value next to it, when
        # words that agree hold the value in place on that side
        if theirs and theirs[0].key == _HOLE and ours and (number or len(theirs) == 1):
            value = _value_words(ours, _spare(theirs))
            covered += sum(w.weight for w in value)
            ours, theirs = ours[len(value) :], theirs[1:]
        if theirs and theirs[-1].key == _HOLE and ours and j2 < len(record):
            value = _value_words(ours[::-1], _spare(theirs))
            covered += sum(w.weight for w in value)
            ours, theirs = ours[: len(ours) - len(value)], theirs[:-1]
        theirs_words = [w for w in theirs if w.key != _HOLE]
        if ours and theirs_words and _typos(ours, theirs_words):
            covered += sum(w.weight for w in ours)
            literal += sum(w.weight for w in ours)
            literal_chars += sum(len(w.text) for w in ours)
            adds.append(" ".join(w.text for w in ours))
            lacks.append(" ".join(w.text for w in theirs_words))
            continue
        if ours:
            adds.append(" ".join(w.text for w in ours))
            agree = agree and not any(w.identifier or w.comparison for w in ours)
            substituted = substituted or bool(theirs_words)
        if theirs_words:
            missing += sum(w.weight for w in theirs_words)
            lacks.append(" ".join(w.text for w in theirs_words))
    return Wording(
        containment=covered / total,
        literal=literal / total,
        literal_chars=literal_chars,
        extra=missing / record_weight,
        lacks=tuple(lacks),
        adds=tuple(adds),
        identifiers_agree=agree,
        substituted=substituted,
        starts_together=starts_together,
        value_missing=value_missing,
        paste_weight=total,
    )


def opens_with_comparison(value: str) -> bool:
    """Whether a run-time part's value, as the paste has it, starts with a comparison: the
    paste then says more than the record there (`must be >= 4` against `must be {n}`).

    | value            | comparison |
    |------------------|------------|
    | `>= 4`           | yes        |
    | `!= 'auto'`      | yes        |
    | `  < 0.5`        | yes        |
    | `<class 'int'>`  | no: a repr, the `<` glued to it |
    | `x >= 4`         | no: a value that holds an expression |
    | `>=4`            | no: one token, as a version pin writes it |
    | `4`              | no         |

    tests/test_explain.py holds this table."""
    value = value.lstrip()
    found = words(value[:8])
    return bool(found) and found[0].comparison and value.startswith(found[0].text)


def _spare(theirs: list[Word]) -> int:
    """How many of the paste's words a run-time part may take: a few when the part is all the
    record has there, else only the word next to it (the rest stand against the record's)."""
    return HOLE_WORDS if all(w.key == _HOLE for w in theirs) else 1


def _value_words(ours: list[Word], limit: int) -> list[Word]:
    """The first words of `ours` (at most `limit`) that one run-time part explains: a value
    is a few identifiers, numbers or quoted words, and at most one plain word."""
    explained, plain = [], 0
    for word in ours[: min(HOLE_WORDS, limit)]:
        if word.comparison:
            break  # the message's own word: `>= 4` is no value of `must be {n}`
        if not word.identifier:
            plain += 1
            if plain > 1:
                break
        explained.append(word)
    return explained


# Two words this alike (difflib's ratio on their letters) are one word with a typo.
TYPO_RATIO = 0.75


def _typos(ours: list[Word], theirs: list[Word]) -> bool:
    """Whether the paste's words are the record's, each with a typo made or fixed (in plain
    words only: `numa_bind_cpus` and `numa_bind_nodes` are two names, not a typo)."""
    return len(ours) == len(theirs) and all(
        not a.identifier
        and not b.identifier
        and difflib.SequenceMatcher(None, a.key, b.key).ratio() >= TYPO_RATIO
        for a, b in zip(ours, theirs, strict=True)
    )
