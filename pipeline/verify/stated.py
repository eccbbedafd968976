"""A reproducer states the environment verify ran it in: the variables the workers set
(offline, no GPU) and the user's `--env`, put into `os.environ` before the target is
imported. A target may read them (vLLM treats an empty CUDA_VISIBLE_DEVICES as a
distributed worker and keeps Triton on, which turns on another check first), so a
reproducer without them may raise something else when a user runs it alone.

| the reproducer                      | becomes                                             |
|-------------------------------------|-----------------------------------------------------|
| `# vmine verify: ...\\nimport m ...` | its opening comments, the two lines, then the rest  |
| empty (nothing verified)            | unchanged                                           |
| already stating them                | unchanged                                           |
"""

from __future__ import annotations

from collections.abc import Mapping

from pipeline.verify.workers import OFFLINE

# read when the interpreter starts, before any program: stating them changes nothing
_AT_START = ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")
_MARK = "# the environment vmine verify ran it in"


def stated_variables(extra: Mapping[str, str] = ()) -> dict[str, str]:
    """The variables a reproducer states: the workers' own and the user's `--env`."""
    variables = {key: value for key, value in OFFLINE.items() if key not in _AT_START}
    variables.update(dict(extra))
    return variables


def with_environment(code: str | None, variables: Mapping[str, str]) -> str | None:
    """`code` with `variables` put into os.environ after its opening comments (what it
    is, and the command line it gives), before anything it imports."""
    if not code or not variables or _MARK in code:
        return code
    lines = code.splitlines(keepends=True)
    opening = next((at for at, line in enumerate(lines) if not line.startswith("#")), len(lines))
    stated = f"import os  {_MARK}\nos.environ.update({dict(variables)!r})\n"
    return "".join([*lines[:opening], stated, *lines[opening:]])
