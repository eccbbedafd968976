"""Pure static analysis with libcst: Python source text in, validator raise sites out.

Nothing here does I/O beyond the text it is handed, and nothing imports `pipeline`.
"""

from extractors.facts import FileExtraction, RaiseSite, Rules

__all__ = ["FileExtraction", "RaiseSite", "Rules"]
