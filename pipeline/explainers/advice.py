"""What a message itself tells a user to do: "please use --mamba-scheduler-strategy
extra_buffer and set SGLANG_ENABLE_SPEC_V2=1" is a flag with its value and an environment
variable with its value, in the order the message gives them.

The message is the reconstructed one (`errorMessage`: placeholders in braces, literal braces
doubled). Concatenated literals often lack a space (`"... no_buffer." "To use ..."` reads
`no_buffer.To use`), so a full stop before a capitalised word ends a sentence even without
one. Only a clause led by a verb of advice counts: "when using --x a" or "is not supported
with --x a" says what fails, not what to do.

| message | advice |
|---|---|
| `please use --x extra_buffer and set SGLANG_V2=1` | flag `--x` = extra_buffer; env SGLANG_V2 = 1 |
| `not compatible with --x no_buffer.To fix, use --x a` | flag `--x` = a (not no_buffer) |
| `Use `--runner pooling` for this model` | flag `--runner` = pooling |
| `pass --enforce-eager` | flag `--enforce-eager`, no value |
| `or use `--gpu_ids='all'`` | flag `--gpu_ids` = all (quotes taken off) |
| `export VLLM_USE_V1=0 to fall back` | env VLLM_USE_V1 = 0 |
| `requires --kernel-backend triton or cuda.` | flag `--kernel-backend` = triton, then cuda |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pipeline.explainers.flags import FLAG_NAME, VALUE

# a sentence ends at . ! ? ; before white space, or before a capitalised word glued to it
# by a concatenation without a space (`no_buffer.To`); `e.g.` and `i.e.` do not end one
_SENTENCE = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?:[.!?;](?=\s|$)|\.(?=[A-Z][a-z]))")
# the verbs of advice; a clause starts at one when it leads it (see `_leads`)
_VERB = re.compile(
    r"(?i)\b(use|pass|set|specify|add|enable|export|try|run\s+with|launch\s+with|"
    r"start\s+with|try\s+using|consider\s+using|requires?|needs?)\b"
)
# what may come right before a verb that leads a clause of advice
_LEAD = re.compile(
    r"(?i)(?:^|[,:;(`'\"]|\b(?:please|instead|or|and|then|fix(?:\s+this)?|you\s+(?:can|may|"
    r"should|must|need\s+to|have\s+to)|to\s+\w+(?:\s+\w+)?\s*,))\s*$"
)
_ENV = r"[A-Z][A-Z0-9]*_[A-Z0-9_]+"
# what a clause names: `--flag value`, `--flag=value`, `NAME=value`, `` `NAME=value` ``
_ITEM = re.compile(
    rf"`?(?P<flag>{FLAG_NAME})`?(?:(?:=|\s+)`?['\"]?(?P<fvalue>{VALUE})['\"]?`?)?"
    rf"|`?(?P<env>{_ENV})\s*=\s*`?(?P<evalue>[A-Za-z0-9_.:/-]+?)`?(?=[\s.,;:)`'\"]|$)"
    rf"|(?<=\bor\s)`?(?P<alt>{VALUE})`?(?=[.,;:)`'\"]|\s*$)"
)
# words after a flag that are never its value
NOT_VALUES = frozenset(
    "a an and are as at be but by for if in is it must not of on only or the to when "
    "which with instead this that these those you your more less higher lower greater larger "
    "smaller above below".split()
)


@dataclass(frozen=True)
class Advice:
    """One thing the message tells a user to do."""

    kind: Literal["flag", "env"]
    name: str  # `--flag` or the variable's NAME
    value: str | None  # the value to give it; None: a switch, or none said


def plain_message(message: str) -> str:
    """The message as a reader sees it: placeholders as `{}`, literal braces single."""
    text = re.sub(r"(?<!\{)\{(?!\{)[^{}]*\}", "{}", message)
    return text.replace("{{", "{").replace("}}", "}")


def sentences(text: str) -> list[str]:
    """The sentences of a text, a glued `.To` ending one too."""
    parts, start = [], 0
    for match in _SENTENCE.finditer(text):
        parts.append(text[start : match.start()])
        start = match.end()
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def message_advice(message: str) -> list[Advice]:
    """What the message tells a user to do, each (kind, name, value) once, in order."""
    found: dict[tuple[str, str, str | None], Advice] = {}
    for sentence in sentences(plain_message(message)):
        verbs = [v for v in _VERB.finditer(sentence) if _leads(sentence, v)]
        for index, verb in enumerate(verbs):
            end = verbs[index + 1].start(1) if index + 1 < len(verbs) else len(sentence)
            for advice in _items(sentence[verb.end(1) : end]):
                found.setdefault((advice.kind, advice.name, advice.value), advice)
    return list(found.values())


def _leads(sentence: str, verb: re.Match[str]) -> bool:
    """A verb leads a clause of advice: at the sentence's start, after `please`, `you
    should`, a comma, ...; `requires` / `needs` anywhere ("X requires --y z")."""
    if verb[1].lower().startswith(("require", "need")):
        return True
    return _LEAD.search(sentence[: verb.start()]) is not None


def _items(clause: str) -> list[Advice]:
    items: list[Advice] = []
    last_flag: str | None = None  # the flag a value was given to, for `a or b`
    for match in _ITEM.finditer(clause):
        if match["flag"]:
            value = _value(match["fvalue"])
            last_flag = match["flag"] if value is not None else None
            items.append(Advice("flag", match["flag"], value))
        elif match["env"]:
            items.append(Advice("env", match["env"], match["evalue"].rstrip(".")))
        elif match["alt"] and last_flag is not None and (value := _value(match["alt"])):
            items.append(Advice("flag", last_flag, value))  # `--x triton or cuda`
    return items


def _value(text: str | None) -> str | None:
    if not text:
        return None
    value = text.rstrip(".,;:")
    if not value or value.lower() in NOT_VALUES or value == "{}" or value.isupper():
        return None
    return value
