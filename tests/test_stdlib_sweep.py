"""A sweep over the Python standard library's own sources with rules that make every function
a validator and many error classes sites: the extractor never fails (no `extractor error`
skip), a memo changes nothing, and every messagePattern compiles in Python and in
ECMAScript and fully matches its own errorMessage in both.

`make test` sweeps a fixed sample (every 10th file by path, ~180 files, ~2 s); the whole
library (~1,800 files, ~30 s on one core) runs with
`VMINE_STDLIB_SWEEP=full .venv/bin/python -m pytest tests/test_stdlib_sweep.py`.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from extractors.facts import FileExtraction, Rules
from extractors.sites import extract_file

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SAMPLE_STEP = 1 if os.environ.get("VMINE_STDLIB_SWEEP") == "full" else 10
RULES = Rules(
    name_pattern="",  # every name matches: every function is a validator
    error_classes=(
        "ValueError",
        "TypeError",
        "RuntimeError",
        "KeyError",
        "IndexError",
        "AttributeError",
        "OSError",
        "NotImplementedError",
        "Error",
    ),
)
# why a file of the standard library may be skipped (its test data holds broken files)
FILE_PROBLEMS = (
    "syntax error",
    "Python 2 code",
    "not decodable",
    "not UTF-8",
    "NUL byte",
    "nesting too deep",
)


class DictMemo:
    """The extractor's memo, in memory."""

    def __init__(self) -> None:
        self.entries: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self.entries.get(key)

    def put(self, key: str, value: str) -> None:
        self.entries[key] = value


def stdlib_files() -> list[Path]:
    files = sorted(
        path
        for path in STDLIB.rglob("*.py")
        if "site-packages" not in path.relative_to(STDLIB).parts
    )
    return files[::SAMPLE_STEP]


@functools.cache
def swept() -> tuple[FileExtraction, ...]:
    """Every file extracted with a memo (as `vmine` does), checked against no memo."""
    memo = DictMemo()
    results = []
    for path in stdlib_files():
        name, data = path.relative_to(STDLIB).as_posix(), path.read_bytes()
        with_memo = extract_file(name, data, RULES, memo)
        assert with_memo == extract_file(name, data, RULES), name
        results.append(with_memo)
    return tuple(results)


def test_extract_never_fails_on_the_standard_library():
    results = swept()
    problems = {
        r.filePath: r.skipped
        for r in results
        if r.skipped and not r.skipped.startswith(FILE_PROBLEMS)
    }
    assert problems == {}
    # not vacuous: the sample holds many files, and sites with and without run-time parts
    assert len(results) >= 150
    sites = [site for result in results for site in result.sites]
    assert len(sites) >= 200
    assert {"literal", "template", "unresolved"} <= {site.messageStatus for site in sites}


NODE_SCRIPT = """
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const wrong = [];
for (const [pattern, message] of cases) {
  try {
    if (!new RegExp("^(?:" + pattern + ")$", "s").test(message)) wrong.push([pattern, "no match"]);
  } catch (error) {
    wrong.push([pattern, String(error)]);
  }
}
process.stdout.write(JSON.stringify(wrong));
"""


def test_every_pattern_compiles_and_matches_its_message_in_python_and_ecmascript():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the ECMAScript check needs it")
    cases = sorted(
        {(site.messagePattern, site.errorMessage) for result in swept() for site in result.sites}
    )
    in_python = [
        [pattern, "no match"]
        for pattern, message in cases
        if re.fullmatch(pattern, message, re.DOTALL) is None
    ]
    assert in_python == []
    result = subprocess.run(
        [node, "-e", NODE_SCRIPT],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=120,
    )
    assert json.loads(result.stdout) == []
    assert len(cases) >= 150
