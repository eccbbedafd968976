"""The offline explainer as the fallback of an LLM explainer, in one place: which explainer
gets one, the record of a site the LLM gave no usable answer for, and, when an LLM answer is
kept but some of its fields still fail grounding (code that does not parse, a flag the
repository lacks, a flag value outside its choices), the offline version of those fields,
and only those. Enrichment (pipeline/mine/enrich.py) applies them."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from pipeline.dataset.models import Explanation, Site
from pipeline.explainers.base import Explainer

# The offline explanation of a site, given the other sites of its function.
Fallback = Callable[[Site, list[Site]], Explanation]

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


def fallback_for(explainer: Explainer, command: str | None = None) -> Fallback | None:
    """The fallback of `explainer`'s sites: the offline explainer's (with the target's
    `command` in its example fixes) for an LLM explainer; None for the offline explainer,
    which answers every site itself."""
    if explainer.provider == "offline":
        return None
    return functools.partial(offline_explanation, command=command)


def offline_explanation(
    site: Site, siblings: list[Site], command: str | None = None
) -> Explanation:
    """What the offline explainer says of a site."""
    from pipeline.explainers.offline.explainer import explain_site  # only when one is needed

    return explain_site(site, siblings, command)
