"""Pure static analysis with libcst: Python source text in, validator raise sites out.

Nothing here does I/O beyond the text it is handed, and nothing imports `pipeline`. The
names below are re-exported lazily: `extractors.patterns`, which `vmine explain` reads, must
not cost the import of the pydantic models in `facts.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from extractors.facts import FileExtraction, RaiseSite, Rules

__all__ = ["FileExtraction", "RaiseSite", "Rules"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from extractors import facts

        return getattr(facts, name)
    raise AttributeError(f"module 'extractors' has no attribute {name!r}")
