"""The values a pasted message holds, put into its record's fixes: the message says the
derived maximum is 4096, so `Give --max-model-len a value that passes the check` becomes
`Pass --max-model-len 4096`, and `<value>` in a command line the value pasted.

A run-time part of the message names a setting when its expression is the setting's chain
or ends with its field (`{self.max_model_len}`, `{max_model_len}`): that is the value that
failed. A part whose last name holds the field inside a longer one (`{derived_max_model_len}`,
`{max_num_seqs_limit}`) is the limit the message reports: that is the value to pass.

| fix as written | pasted parts | fix shown |
|---|---|---|
| ``Give `--max-model-len` a value that passes the check.`` | derived_max_model_len = 4096 | ``Pass `--max-model-len 4096` (the limit your message reports).`` |
| `vllm serve MODEL --max-model-len <value>` (after) | derived_max_model_len = 4096 | `vllm serve MODEL --max-model-len 4096` |
| `vllm serve MODEL --max-model-len <value>` (before) | max_model_len = 8192 | `vllm serve MODEL --max-model-len 8192` |
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from pipeline.dataset.models import Setting

_PLACEHOLDERS = ("<value>", "<other value>")
_SAFE = re.compile(r"[A-Za-z0-9_.:/+=-]+")


def _word(value: str) -> str:
    return value if _SAFE.fullmatch(value) else shlex.quote(value)


def _last_name(expr: str) -> str:
    return re.split(r"[.\[\]()\s]+", expr.strip().strip("'\"") or "x")[-1] or expr


def pasted_values(
    settings: Sequence[Setting], values: Sequence[tuple[str, str]]
) -> dict[str, tuple[str | None, str | None]]:
    """Per flag of the settings: (the value that failed, the limit to pass), from the
    pasted message's run-time parts."""
    found: dict[str, tuple[str | None, str | None]] = {}
    for setting in settings:
        flag = next((f for f in setting.flags if f.startswith("--")), None)
        if flag is None:
            continue
        failing = limit = None
        for expr, text in values:
            text = text.strip()
            if not text or "\n" in text:
                continue
            name = _last_name(expr)
            if expr == setting.expr or name == setting.field:
                failing = failing or text
            elif setting.field in name:
                limit = limit or text
        if failing or limit:
            found[flag] = (failing, limit)
    return found


def filled_solutions(
    solutions: Sequence[str], found: dict[str, tuple[str | None, str | None]]
) -> list[str]:
    """The solutions with the pasted limit put where they leave the value open."""
    filled = []
    for text in solutions:
        for flag, (_, limit) in found.items():
            if limit is None:
                continue
            vague = f"Give `{flag}` a value that passes the check"
            if text.startswith(vague):
                text = (
                    f"Pass `{flag} {_word(limit)}` (the limit your message reports)"
                    + text[len(vague) :]
                )
            for placeholder in _PLACEHOLDERS:
                text = text.replace(f"{flag} {placeholder}", f"{flag} {_word(limit)}")
        filled.append(text)
    return filled


def filled_fix(example: str, found: dict[str, tuple[str | None, str | None]]) -> str:
    """The example fix with the failing value on its before side and the limit after."""
    if not found or "# after" not in example:
        return example
    before, after = example.split("# after", 1)
    for flag, (failing, limit) in found.items():
        for placeholder in _PLACEHOLDERS:
            if failing is not None:
                before = before.replace(f"{flag} {placeholder}", f"{flag} {_word(failing)}")
            if limit is not None:
                after = after.replace(f"{flag} {placeholder}", f"{flag} {_word(limit)}")
    return before + "# after" + after
