"""Whether the exception class a paste names can be the record's: the one rule `class_agrees`.

A paste that names its class (`AssertionError: x must be set`) is not explained by a record
that raises another class with the same words: that is a different `raise`. A wrapper is
the exception another library raises around the record's: pydantic reports a validator's
ValueError inside its `ValidationError`, FastAPI inside its `RequestValidationError`.

| paste's class            | record's class | agrees |
|--------------------------|----------------|--------|
| none named               | any            | yes    |
| `ValueError`             | `ValueError`   | yes    |
| `errors.ConfigError`     | `ConfigError`  | yes    |
| `ValidationError`        | `ValueError`   | yes    |
| `RequestValidationError` | `ValueError`   | yes    |
| `AssertionError`         | `ValueError`   | no     |
| `TypeError`              | `ValueError`   | no     |

tests/test_explain.py holds this table."""

from __future__ import annotations

# The classes libraries raise around a validator's own error, by short name.
WRAPPERS = frozenset({"ValidationError", "RequestValidationError"})


def class_agrees(named: str | None, raised: str | None) -> bool:
    """Whether a paste naming the exception class `named` (None: it names none) may be
    explained by a record raising `raised`."""
    if named is None or raised is None:
        return True
    named, raised = _short(named), _short(raised)
    return named == raised or named in WRAPPERS


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]
