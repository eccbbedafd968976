"""Versioned LLM prompt templates: `explain_v1.md` holds a system part and a user part."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

_PART = re.compile(r"^<!-- (system|user) -->\n", re.MULTILINE)


@dataclass(frozen=True)
class Prompt:
    """A prompt template: `version` (e.g. `explain-v1`) is part of every cache key, so a
    wording change means a new file, never an edit of a published one."""

    version: str
    system: str
    user: Template

    def render_user(self, **values: str) -> str:
        # string.Template substitutes values verbatim: braces and `$` inside the code stay.
        return self.user.substitute(values)


@cache
def load_prompt(name: str) -> Prompt:
    """The template `prompts/{name}.md`, e.g. `load_prompt("explain_v1")`."""
    text = resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    parts = dict(zip(_PART.findall(text), _PART.split(text)[2::2], strict=True))
    if set(parts) != {"system", "user"}:
        raise ValueError(f"prompt {name}: needs a '<!-- system -->' and a '<!-- user -->' part")
    return Prompt(
        version=name.replace("_", "-"),
        system=parts["system"].strip() + "\n",
        user=Template(parts["user"].strip() + "\n"),
    )
