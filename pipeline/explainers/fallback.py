"""When an LLM answer is kept but some of its fields still fail grounding (code that does not
parse, a flag the repository lacks, a flag value outside its choices), those fields, and
only those, are replaced by the offline explainer's version of them."""

from __future__ import annotations

import re

from pipeline.dataset.models import Explanation

# A violation names its field first: `solutions[1]: flag --x does not occur ...`.
_FIELD = re.compile(r"^([A-Za-z]+)(?:\[\d+\])?: ")


def violated_fields(violations: list[str]) -> dict[str, list[str]]:
    """The explanation fields that violations name, each with its violations, in order
    (a list item's violation names its whole list: `solutions[1]` -> `solutions`)."""
    fields: dict[str, list[str]] = {}
    for violation in violations:
        found = _FIELD.match(violation)
        if found is not None and found.group(1) in Explanation.model_fields:
            fields.setdefault(found.group(1), []).append(violation)
    return fields


def replace_fields(
    answer: Explanation, offline: Explanation, violations: list[str]
) -> tuple[Explanation, dict[str, list[str]]]:
    """`answer` with every field a violation names taken from `offline`; and those fields,
    each with the violations that replaced it."""
    fields = violated_fields(violations)
    if not fields:
        return answer, {}
    merged = answer.model_copy(update={name: getattr(offline, name) for name in fields})
    return Explanation.model_validate(merged.model_dump()), fields
