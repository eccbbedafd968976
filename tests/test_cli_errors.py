"""The CLI's one table of errors a user can fix: each becomes one line and exit 2, anything
else keeps its traceback, and every class the table names exists where it says."""

from __future__ import annotations

import importlib
import sqlite3
from pathlib import Path

import pytest

from pipeline.cli import _INPUT_ERRORS, _input_error_line
from pipeline.dataset.writer import DatasetBusy
from pipeline.exits import Exit
from pipeline.source.snapshot import SourceError
from pipeline.store import StoreError


@pytest.mark.parametrize(("module", "name"), [(module, name) for module, name, _ in _INPUT_ERRORS])
def test_every_error_the_table_names_exists_where_it_says(module, name):
    kind = getattr(importlib.import_module(module), name)
    assert issubclass(kind, Exception)


# (error, hint, the one line)
LINES = [
    (SourceError("no such repository: x\nmore"), "", "no such repository: x"),
    (DatasetBusy("another run is writing out/a/b"), "", "another run is writing out/a/b"),
    (
        StoreError(Path("store.sqlite"), sqlite3.DatabaseError("file is not a database")),
        "pass --cache PATH",
        "store.sqlite: cannot use this cache file (file is not a database); remove it (it "
        "only saves time) or pass --cache PATH",
    ),
    (
        PermissionError(13, "Permission denied", "/out"),
        "",
        "/out: Permission denied; pass a directory you can write to",
    ),
]


@pytest.mark.parametrize(("error", "hint", "line"), LINES)
def test_an_error_the_user_can_fix_is_one_line(error, hint, line):
    assert _input_error_line(error, hint) == line


def test_any_other_error_keeps_its_traceback():
    assert _input_error_line(KeyError("bug"), "") is None
    assert _input_error_line(ValueError("bug"), "") is None


def test_the_exit_codes_are_the_documented_numbers():
    assert [int(code) for code in Exit] == [0, 1, 2, 3, 130, 143]
