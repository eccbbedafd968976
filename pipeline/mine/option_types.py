"""The value rules `vmine run`'s options and `pipeline.toml` share, each in one place."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

# A wait in seconds: more than 0, finite, and at most a day (an `inf` or `1e300` timeout is
# no bound at all, and overflows the clocks it is handed to).
MAX_SECONDS = 86_400
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]


# A value quoted in an error is cut to about this many characters: the error stays one line
# a person reads, however long the value.
QUOTED = 60


def shown(value: object) -> str:
    """`repr(value)`, cut short (`'aaaa…'`) when it is long."""
    text = repr(value)
    return text if len(text) <= QUOTED + 2 else text[: QUOTED + 1] + "…" + text[-1]


def one_line_command(value: str | None) -> str | None:
    """The entry point users run (`vllm serve MODEL`), on one line: example fixes start
    their command lines with it, and a line break would start another command."""
    if value is not None and (
        not value.strip() or any(ch in value for ch in "\n\r\v\f\x85\u2028\u2029")
    ):
        raise ValueError(f"expected a command on one line, got {shown(value)}")
    return value.strip() if value is not None else None


Command = Annotated[str | None, AfterValidator(one_line_command)]
