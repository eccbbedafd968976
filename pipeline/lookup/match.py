"""A pasted text -> the records that raise its message, ranked.

Kinds of match, best first:
- `exact`: the record's message has no run-time part and is the pasted message;
- `pattern`: the record's messagePattern fully matches (scored by the share of the message that
  is the record's literal text); `parts`: the record is built from parts (messageFragments)
  and its pieces, in order, cover most of the message (scored by that share);
- `reworded`: no pattern matches, but one record's words explain almost all of the message
  and no record of another function comes close: the same error in another release's
  wording, or the message cut short;
- `approximate`: the most similar messages, and nothing more.
- `ambiguous`: records match, but the text does not tell which raised it (`settled`): several
  functions raise the very same text or pattern, or the one record that matches renders words
  that other functions raise too (a helper's `{name} must ...`), and the traceback's frames,
  if any, name none of them.
The first four count as a match (exit code 0); `ambiguous` and `approximate` do not. Whatever
the score, `doubt` (the one rule of when evidence is too weak to be sure, with its case table)
makes a match at most `approximate`: a record with little literal text, a record whose literal
text covers little of the paste, or another exception class than the paste names (classes.py).

All matching is done without whitespace (a message wrapped by a terminal stays the same) and
without a regex engine (fragments.py): a hostile dataset or paste costs linear time. The same
record (repo and id) in several datasets, one per release, is one match that lists them all."""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from extractors.patterns import holes_in_message, literal_text, pattern_fragments
from pipeline.lookup.classes import WRAPPERS, class_agrees
from pipeline.lookup.fragments import Folded, covered_in_order, fold, fullmatch, holds_in_order
from pipeline.lookup.index import IndexedDataset, IndexedPattern
from pipeline.lookup.tracebacks import Candidate, candidates
from pipeline.lookup.wording import Wording, compare, opens_with_comparison, words

if TYPE_CHECKING:
    from pipeline.dataset.models import IndexEntry

# Only the end of a larger paste is read: a traceback ends with its exception.
MAX_PASTE = 1_000_000
# A candidate longer than this is no single error message: it is not matched.
MAX_MESSAGE = 20_000
# The approximate pass aligns words: it looks at the first candidates, up to this long.
MAX_APPROXIMATE = 5_000
APPROXIMATE_CANDIDATES = 6
APPROXIMATE_LIMIT = 5
SHORTLIST = 40
# Below this similarity a record is not worth showing, even as an approximation.
APPROXIMATE_FLOOR = 0.25
APPROXIMATE_MIN_WEIGHT = 2
# A pattern match whose literal text is less than this share of the message is weak.
WEAK_PATTERN = 0.5
# A record built from parts matches when its pieces cover this share of the message, and
# this many characters of it (a short piece such as `None` occurs in many messages).
PARTS_FLOOR = 0.6
PARTS_MIN_COVERED = 12
# `reworded` (a match): the record explains this much of the paste, scores this well, and
# beats every record of another function by this margin; the paste has this many words.
REWORDED_CONTAINMENT = 0.85
REWORDED_SCORE = 0.7
REWORDED_MARGIN = 0.1
REWORDED_MIN_WEIGHT = 4

# Evidence a match rests on (`doubt`): the record's literal characters, and their share of
# the pasted message (whitespace left out of both).
MIN_LITERAL = 16
MIN_COVER = 1 / 3
MIN_LEADING_COVER = 1 / 2  # for a message that starts with a run-time part

_TIER = {"exact": 0, "pattern": 1, "parts": 1, "reworded": 1, "ambiguous": 2, "approximate": 3}
# The kinds that are a match (exit code 0).
SURE = frozenset({"exact", "pattern", "parts", "reworded"})
# Other functions whose messages a generic record renders too, named in its note.
ALSO_RAISED_SHOWN = 3
# Functions raising the same text are counted up to this many (a hostile dataset has more).
MAX_FUNCTIONS = 64
_WORD = re.compile(r"\w")


def doubt(literal: int, message: int, agrees: bool, leading: bool = False) -> str | None:
    """Why a match cannot be trusted (it is then at most `approximate`, exit 1), or None.
    `literal`: the record's literal characters the match rests on (its whole message for
    `exact`, its pattern's literal text for `pattern` and `reworded`, the pieces found for
    `parts`); `message`: the pasted message's characters; `agrees`: classes.py's rule;
    `leading`: the record's message starts with a run-time part (`{name} must be set`, a
    helper's message, which many callers' values start).

    | literal | message | agrees | leading | doubt                                         |
    |---------|---------|--------|---------|-----------------------------------------------|
    | 40      | 48      | yes    | no      | None                                          |
    | 15      | 15      | yes    | no      | `short`: 15 characters are in many messages   |
    | 16      | 48      | yes    | no      | None (a third of the message)                 |
    | 20      | 90      | yes    | no      | `sparse`: most of the paste is not the record's |
    | 18      | 42      | yes    | yes     | `sparse`: the value that starts it is most of it |
    | 18      | 30      | yes    | yes     | None (more than half is the record's)         |
    | 40      | 48      | no     | no      | `class`: the paste names another class        |

    tests/test_explain.py holds this table."""
    if not agrees:
        return "class"
    if literal < MIN_LITERAL:
        return "short"
    share = min(literal, message) / message if message else 1.0
    if share < MIN_COVER or (leading and share <= MIN_LEADING_COVER):
        return "sparse"
    return None


_DOUBTS = {
    "class": "it raises {raised}, and the paste names {named}",
    "short": "its message has only {literal} characters of fixed text",
    "sparse": "its fixed text is only {share:.0%} of the pasted message",
}


@dataclass(frozen=True)
class Match:
    """A record that may explain the message, how well, and every dataset holding it."""

    pattern: IndexedPattern  # the record as shown: the newest release holding it
    candidate: Candidate
    score: float
    kind: str
    wording: Wording | None = None
    holders: tuple[IndexedPattern, ...] = ()  # the same record in every dataset, oldest first
    doubt: str | None = None  # why a match of this score is only approximate (`doubt`)
    literal: int = 0  # the record's literal characters it rests on

    @property
    def entry(self) -> IndexEntry:
        return self.pattern.entry

    @property
    def dataset(self) -> IndexedDataset:
        return self.pattern.dataset

    @property
    def releases(self) -> list[IndexedDataset]:
        return [holder.dataset for holder in self.holders or (self.pattern,)]

    @property
    def class_agrees(self) -> bool:
        return class_agrees(self.candidate.errorClass, self.pattern.raw.get("errorClass"))

    def doubt_note(self) -> str | None:
        """Why this record is shown as approximate although its text matches, or None."""
        if self.doubt is None:
            return None
        folded = len(fold(self.candidate.message))
        return (
            "the closest record is no sure match: "
            + _DOUBTS[self.doubt].format(
                raised=self.pattern.raw.get("errorClass"),
                named=self.candidate.errorClass,
                literal=self.literal,
                share=min(self.literal, folded) / max(folded, 1),
            )
            + "."
        )

    @property
    def function(self) -> tuple[str, str, str]:
        """(repo, filePath, qualname) of the function that raises it."""
        raw = self.pattern.raw
        return (self.dataset.repo, str(raw.get("filePath")), str(raw.get("qualname")))

    @property
    def depth(self) -> int:
        """How deep in the paste's traceback the record's function runs (the innermost frame
        is the deepest, where an exception is raised); -1 when no frame runs it."""
        frames = self.candidate.frames
        if not frames:
            return -1
        _, file_path, qualname = self.function
        if qualname.rsplit(".", 1)[-1] not in self.candidate.functions:
            return -1  # (most records: no frame runs a function of that name)
        for number in range(len(frames) - 1, -1, -1):
            if frames[number].runs(file_path, qualname):
                return number
        return -1

    def values(self) -> list[tuple[str, str]]:
        """Each run-time part of the record's message (`{tp}`) with the text it has in the
        pasted message (`2`), for a pattern match; [] when they cannot be paired."""
        fragments = self.pattern.fragments
        if self.kind != "pattern" or not fragments:
            return []
        folded = Folded.of(self.candidate.message)
        holes = fullmatch(fragments, folded.text)
        names = holes_in_message(self.pattern.message, self.pattern.raw["messagePattern"])
        if holes is None or names is None or len(names) != len(holes):
            return []
        return [
            (name, folded.span(self.candidate.message, start, end))
            for name, (start, end) in zip(names, holes, strict=True)
        ]

    def sort_key(self) -> tuple:
        return (
            _TIER[self.kind],
            -round(self.score, 6),
            not self.class_agrees,
            self.dataset.repo,
            # raw: an entry is validated (pydantic) only when shown
            str(self.pattern.raw.get("filePath")),
            _line_number(self.pattern.raw.get("lineNumber")),
            str(self.dataset.root),
        )


def _line_number(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


@dataclass
class Lookup:
    """What `explain` found for one pasted text."""

    candidates: list[Candidate]
    matches: list[Match]
    datasets: list[IndexedDataset] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def sure(self) -> bool:
        """Whether the best record is a match (exit code 0): not `ambiguous` or `approximate`."""
        return bool(self.matches) and self.matches[0].kind in SURE


def lookup(text: str, datasets: list[IndexedDataset]) -> Lookup:
    """Rank the records of `datasets` against every message found in `text` (see the module's
    doc for the kinds of match and their order)."""
    notes = []
    if len(text) > MAX_PASTE:
        cut = text.find("\n", len(text) - MAX_PASTE)
        notes.append(
            f"The paste is {len(text):,} characters long; only its last {MAX_PASTE:,} were read."
        )
        text = text[cut + 1 if 0 <= cut < len(text) - 1 else len(text) - MAX_PASTE :]
    found = candidates(text)
    looked_up = [c for c in found if len(c.message) <= MAX_MESSAGE]
    if found and not looked_up:
        notes.append(
            f"No message in the paste is shorter than {MAX_MESSAGE:,} characters; "
            "paste the error message itself."
        )
    records = _records(datasets)
    best: dict[tuple[str, str], Match] = {}
    for candidate in looked_up:
        folded = fold(candidate.message)
        if not folded:
            continue
        for key, holders in records.items():
            match = _literal_match(holders, candidate, folded)
            if match is not None and (key not in best or match.sort_key() < best[key].sort_key()):
                best[key] = match
    matches = sorted(best.values(), key=Match.sort_key)
    if not matches or matches[0].kind == "approximate":
        # none is sure: the records whose words are closest compete with them
        matches = _merged(matches, _closest(looked_up, records))
        note = matches[0].doubt_note() if matches else None
        if note:
            notes.append(note)
    elif matches[0].kind != "exact" and matches[0].score < WEAK_PATTERN:
        # a pattern mostly made of holes matches many messages: a record whose words explain
        # the message far better comes first
        closest = _closest(looked_up, records)
        if (
            closest
            and closest[0].kind == "reworded"
            and closest[0].score > matches[0].score
            and all(m.pattern is not closest[0].pattern for m in matches)
        ):
            matches = [closest[0], *matches]
    matches, note = settled(matches, records)
    if note:
        notes.append(note)
    return Lookup(found, matches, datasets, notes)


# Every record once, (repo, id) -> its entries oldest release first; and what `settled` gives.
Records = dict[tuple[str, str], tuple[IndexedPattern, ...]]
Settled = tuple[list[Match], "str | None"]


def settled(matches: list[Match], records: Records) -> Settled:
    """The sure matches as the paste's evidence leaves them, and a note that says why. The
    text alone cannot tell which function raised a message that several functions raise, or
    that a helper renders for many callers; a traceback can.

    | sure matches (best first)                          | traceback names  | result                    |
    |----------------------------------------------------|------------------|---------------------------|
    | one function's record                              | any              | as they are               |
    | A and B raise the same text (equal kind and score) | none             | A, B `ambiguous` (exit 1) |
    | A and B raise the same text                        | B                | B first, a match          |
    | A (`[{*levels}]`) and B (`{list(levels)}`): B's pattern reads A's words, its parts take only punctuation | none | A, B `ambiguous` (exit 1) |
    | A (`pattern`), B (lower score)                     | B, deeper than A | B first, a match          |
    | A `{name} must be set`, whose words C raises too   | none             | A `ambiguous` (exit 1)    |
    | A `{name} must be set`, whose words C raises too   | A                | as they are               |
    | A, the paste's own class (not a wrapper)           | none, and its innermost frame is in a file of the datasets | A `approximate` (exit 1): raised elsewhere |
    | A `reworded`, whose words C's message reads as a rewording of | none     | A `ambiguous` (exit 1)    |

    The deepest frame that runs a matching record's function names it (a helper a validator
    calls raises in the inner frame). The innermost frame of an exception's own traceback is
    where it was raised: in a file the datasets know, by no function of a matching record,
    the records are not the raise (a wrapper's traceback, such as pydantic's, ends in other
    code). tests/test_explain.py holds this table."""
    if not matches or matches[0].kind not in SURE:
        return matches, None
    for step in (_by_traceback, _shared, _generic):
        found = step(matches, records)
        if found is not None:
            return found
    return matches, None


def _by_traceback(matches: list[Match], records: Records) -> Settled | None:
    """The traceback's word: the deepest frame that runs one matching function names it;
    an innermost frame in the datasets' code that runs none says they are not the raise."""
    sure = [m for m in matches if m.kind in SURE]
    deepest = max(m.depth for m in sure)
    if deepest < 0 and _raised_elsewhere(matches[0], records):
        frame = matches[0].candidate.frames[-1]
        elsewhere = [
            replace(m, kind="approximate", doubt="elsewhere") if m.kind in SURE else m
            for m in matches
        ]
        return elsewhere, (
            f"No sure match: the traceback says it was raised in {frame.function} "
            f"({frame.path}), and no record of that function matches."
        )
    named = [m for m in sure if m.depth == deepest] if deepest >= 0 else []
    if not named or len({m.function for m in named}) > 1:
        return None
    taken = {id(m) for m in named}
    head = named[0]
    note = None
    if head is not matches[0]:
        note = (
            f"The traceback names {head.function[2]} ({head.function[1]}): of the records "
            "that match, it is the one that raised the error."
        )
    return [*named, *(m for m in matches if id(m) not in taken)], note


def _shared(matches: list[Match], records: Records) -> Settled | None:
    """Several functions whose records match equally well (the same text or pattern), or
    whose patterns say the same words (`_same_words`)."""
    head = matches[0]
    best = (_TIER[head.kind], round(head.score, 6))
    said = fold(literal_text(head.pattern.message))
    tied, worded = [], False
    for m in matches:
        if m.kind not in SURE:
            continue
        if (_TIER[m.kind], round(m.score, 6)) == best:
            tied.append(m)
        elif _same_words(said, head, m):
            tied.append(m)
            worded = True
    functions = _functions(tied)
    if functions < 2:
        return None
    taken = {id(m) for m in tied}
    ambiguous = [replace(m, kind="ambiguous", doubt="shared") for m in tied]
    same = (
        "these same words (one writes as text what another fills in)"
        if worded
        else "this same text"
    )
    return [*ambiguous, *(m for m in matches if id(m) not in taken)], (
        f"No sure match: {functions} functions raise {same}, and the paste does not "
        "say which one ran (a traceback's frames would tell them apart)."
    )


def _generic(matches: list[Match], records: Records) -> Settled | None:
    """One function's record, on words other functions say too: a rewording that another
    function's message reads as well, or a helper's `{name} ...` that renders their text."""
    head = matches[0]
    if head.kind == "reworded":
        twin = next((m for m in matches[1:] if _near_twin(head, m)), None)
        if twin is not None:
            return [replace(head, kind="ambiguous", doubt="generic"), *matches[1:]], (
                f"No sure match: the paste's wording differs from {head.function[2]}'s, and "
                f"{twin.function[2]} ({twin.function[1]}) says nearly the same "
                f"({twin.pattern.message[:80]!r}): the paste may come from either, or from "
                "another function that says it."
            )
    if head.kind == "pattern" and _leading(head.pattern):
        others = _also_raised(head, records)
        if others:
            said = "; ".join(
                f"{o.message[:80]!r} in {o.raw.get('filePath')}" for o in others[:ALSO_RAISED_SHOWN]
            )
            more = ", and more" if len(others) > ALSO_RAISED_SHOWN else ""
            return [replace(head, kind="ambiguous", doubt="generic"), *matches[1:]], (
                f"No sure match: {head.function[2]} raises its message for whatever value "
                f"starts it, and other functions raise the same words ({said}{more}): the "
                "paste may come from one of those, or from one not in the datasets searched."
            )
    return None


def _raised_elsewhere(head: Match, records: Records) -> bool:
    """Whether the head's exception, of the record's own class, was raised (its innermost
    frame) in a file of the datasets searched: by another function than the matches'."""
    frames = head.candidate.frames
    named, raised = head.candidate.errorClass, head.pattern.raw.get("errorClass")
    if not frames or named is None or not class_agrees(named, raised):
        return False
    if named.rsplit(".", 1)[-1] in WRAPPERS:
        return False
    path = frames[-1].path.replace("\\", "/")
    return any(
        path.endswith("/" + str(holders[-1].raw.get("filePath"))) for holders in records.values()
    )


def _same_words(said: str, head: Match, other: Match) -> bool:
    """Whether `other`, a pattern match of another function, writes every word the head
    writes (`said`: its literal text, folded): its pattern fully matches that text, and what
    its run-time parts take there holds no word (the `[...]` the head writes around a list
    that the other's `{list(levels)}` renders). The head's higher score then rests on
    punctuation alone."""
    if other.kind != "pattern" or other.function == head.function or not other.pattern.fragments:
        return False
    holes = fullmatch(other.pattern.fragments, said)
    return holes is not None and not any(_WORD.search(said, s, e) for s, e in holes)


def _near_twin(head: Match, other: Match) -> bool:
    """Whether `other`, a record of another function, says what `head` says in another
    wording: the head's words explain its message (literal text) as they would a paste in
    another release's wording."""
    if other.function == head.function:
        return False
    found = compare(words(literal_text(other.pattern.message)), head.pattern.template)
    return (
        found is not None
        and found.containment >= REWORDED_CONTAINMENT
        and found.score >= REWORDED_SCORE
        and found.same_message
    )


def _functions(matches: list[Match]) -> int:
    """How many functions raise these records (counted up to MAX_FUNCTIONS): a function
    moved to another file between releases (the same qualname, no release holding both) is
    one."""
    releases: dict[tuple[str, str, str], set] = {}
    for match in matches:
        releases.setdefault(match.function, set()).update(d.root for d in match.releases)
        if len(releases) > MAX_FUNCTIONS:
            break
    # functions of one qualname, each a set of releases; moved when no release holds two
    by_name: dict[tuple[str, str], list[set]] = {}
    for (repo, _, qualname), held in releases.items():
        groups = by_name.setdefault((repo, qualname), [])
        group = next((g for g in groups if not g & held), None)
        if group is None:
            groups.append(set(held))
        else:
            group |= held
    return sum(map(len, by_name.values()))


def _also_raised(head: Match, records: Records) -> list[IndexedPattern]:
    """Records of other functions whose message (its literal text, each run-time part
    empty) the head's pattern fully matches: the same words said elsewhere (at most
    ALSO_RAISED_SHOWN + 1 of them)."""
    fragments = head.pattern.fragments or ()
    raw = pattern_fragments(head.pattern.raw["messagePattern"]) or ()
    literal_words = [word for fragment in raw for word in fragment.split()]
    if not literal_words:
        return []
    # a cheap test first: the pattern's longest word must be in the other message
    needle = max(literal_words, key=len)
    _, file_path, qualname = head.function
    found: list[IndexedPattern] = []
    for holders in records.values():
        other = holders[-1]
        message = other.raw["errorMessage"]
        if needle not in message or other is head.pattern:
            continue
        if (other.raw.get("filePath"), other.raw.get("qualname")) == (file_path, qualname):
            continue
        if fullmatch(fragments, fold(literal_text(message))) is not None:
            found.append(other)
            if len(found) > ALSO_RAISED_SHOWN:
                break
    return found


def _merged(doubted: list[Match], closest: list[Match]) -> list[Match]:
    """Doubted literal matches and the closest records by wording, each record once, best
    first."""
    best: dict[int, Match] = {}
    for match in [*doubted, *closest]:
        key = id(match.pattern)
        if key not in best or match.sort_key() < best[key].sort_key():
            best[key] = match
    return sorted(best.values(), key=Match.sort_key)[: max(APPROXIMATE_LIMIT, len(doubted))]


def _records(datasets: list[IndexedDataset]) -> dict[tuple[str, str], tuple[IndexedPattern, ...]]:
    """Every record, once: (repo, id) -> its entries in each dataset, oldest release first."""
    records: dict[tuple[str, str], list[IndexedPattern]] = {}
    for dataset in sorted(datasets, key=lambda d: d.release_order):
        repo = dataset.repo
        for pattern in dataset.patterns:  # raw["id"]: `.id` is a property, called per record
            records.setdefault((repo, pattern.raw["id"]), []).append(pattern)
    return {key: tuple(holders) for key, holders in records.items()}


def _literal_match(
    holders: tuple[IndexedPattern, ...], candidate: Candidate, folded: str
) -> Match | None:
    """An exact, pattern or parts match of the record against one candidate message."""
    shown = holders[-1]
    fragments = shown.fragments
    kind, score = None, 0.0
    if (
        fragments
        and shown.literal_chars
        and shown.needle in folded
        and fullmatch(fragments, folded) is not None
    ):
        # a pattern without literal text matches anything: it is never a match
        if len(fragments) == 1:
            kind, score = "exact", 1.0
        elif on_word_edges(shown.raw["messagePattern"], candidate.message):
            kind, score = "pattern", min(1.0, shown.literal_chars / len(folded))
    literal = shown.literal_chars
    if shown.pieces and kind != "exact" and holds_in_order(fragments or (), folded):
        # (the text outside the optional pieces is in every rendering: the paste has it too)
        covered = covered_in_order(shown.pieces, folded)
        share = covered / len(folded)
        if share >= PARTS_FLOOR and covered >= PARTS_MIN_COVERED and share > score:
            kind, score, literal = "parts", share, covered
    if kind is None:
        return None
    agrees = class_agrees(candidate.errorClass, shown.raw.get("errorClass"))
    why = doubt(literal, len(folded), agrees, _leading(shown, kind))
    if why is not None:
        kind = "approximate"
    return Match(shown, candidate, score, kind, holders=holders, doubt=why, literal=literal)


def _leading(shown: IndexedPattern, kind: str = "pattern") -> bool:
    """Whether the record's message starts with a run-time part (not for `exact` or `parts`:
    the whole message, or the pieces found, are what they rest on)."""
    return kind in ("pattern", "reworded", "approximate") and shown.message.startswith("{")


def on_word_edges(pattern: str, message: str) -> bool:
    """Whether each hole of a fully matching pattern starts and ends where the record says a
    word does: where the record writes a space between its text and a run-time part
    (`Unknown mode {m}`), the paste has one too (`Unknown modes: x` is another message); and
    no hole's value starts with a comparison (`length must be {n}` against `length must be
    >= 4` is another check: wording.opens_with_comparison)."""
    raw = pattern_fragments(pattern)
    folded = Folded.of(message)
    holes = fullmatch(tuple(fold(f) for f in raw or ()), folded.text) if raw else None
    if holes is None:
        return False
    for number, (start, end) in enumerate(holes):
        if start >= end:
            continue  # an empty value: no word to bound
        first, last = folded.positions[start], folded.positions[end - 1]
        if opens_with_comparison(message[first : last + 1]):
            return False
        if raw[number][-1:].isspace() and not message[first - 1 : first].isspace():
            return False
        if raw[number + 1][:1].isspace() and not message[last + 1 : last + 2].isspace():
            return False
    return True


def _closest(
    found: list[Candidate], records: dict[tuple[str, str], tuple[IndexedPattern, ...]]
) -> list[Match]:
    """The records whose words explain most of a candidate message: the share of the
    message's words each record has picks a shortlist, the in-order alignment of words
    scores it (wording.py). The best is `reworded` when it is a clear winner."""
    scored: dict[tuple[str, str], Match] = {}
    looked_at = [c for c in found if len(c.message) <= MAX_APPROXIMATE]
    for candidate in looked_at[:APPROXIMATE_CANDIDATES]:
        paste = words(candidate.message)
        ours = {word.key for word in paste}
        if not ours:
            continue
        shortlist = heapq.nlargest(
            SHORTLIST,
            records.items(),
            key=lambda item: len(ours & item[1][-1].keys),
        )
        for key, holders in shortlist:
            wording = compare(paste, holders[-1].template)
            if (
                wording is None
                or wording.score < APPROXIMATE_FLOOR
                or wording.paste_weight < APPROXIMATE_MIN_WEIGHT
            ):
                continue  # one word is close to many messages, and tells none apart
            match = Match(holders[-1], candidate, wording.score, "approximate", wording, holders)
            if key not in scored or match.sort_key() < scored[key].sort_key():
                scored[key] = match
    ranked = sorted(scored.values(), key=Match.sort_key)
    if ranked and _clear_winner(ranked):
        head = ranked[0]
        # what the match rests on: the record's words that the paste has, not those it lacks
        literal = min(head.pattern.message_literal_chars, head.wording.literal_chars)
        agrees = class_agrees(head.candidate.errorClass, head.pattern.raw.get("errorClass"))
        why = doubt(literal, len(fold(head.candidate.message)), agrees, _leading(head.pattern))
        ranked[0] = Match(
            head.pattern,
            head.candidate,
            head.score,
            "reworded" if why is None else "approximate",
            head.wording,
            head.holders,
            why,
            literal,
        )
    return ranked[:APPROXIMATE_LIMIT]


def _clear_winner(ranked: list[Match]) -> bool:
    head = ranked[0]
    wording = head.wording
    if wording is None or not (
        wording.containment >= REWORDED_CONTAINMENT
        and head.score >= REWORDED_SCORE
        and wording.same_message
        and wording.paste_weight >= REWORDED_MIN_WEIGHT
    ):
        return False
    # The same words in another function explain the paste as well: a tie, shown as such.
    rivals = [
        m.score
        for m in ranked[1:]
        if m.function[::2] != head.function[::2] and m.pattern.message != head.pattern.message
    ]
    return not rivals or head.score - max(rivals) >= REWORDED_MARGIN
