"""The formats of the dataset's checked string fields, as regexes: pure `re`, so that the
source stage checks a SHA or an owner/name without loading the models (pydantic), which
import meanwhile. Use them with `fullmatch`: `$` also matches before a final newline.
They are ECMAScript too (the JSON Schema carries them), hence `^...$` and no `\\Z`."""

from __future__ import annotations

import re

TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
SHA40_RE = re.compile(r"^[0-9a-f]{40}$")
# owner/name; a name of `.` or `..` would lead a dataset's folder out of the output directory
REPO_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/(?!\.\.?$)[A-Za-z0-9_.-]+$")
RECORD_ID_RE = re.compile(r"^[0-9a-f]{16}$")
