"""Class rules across a repository's files: error subclasses and configuration classes that
another file defines (pipeline/mine/classes.py), and their effect on the per-file cache."""

from __future__ import annotations

import textwrap
from pathlib import Path

from extractors.facts import Rules
from extractors.sites import extract_file
from pipeline.mine.extract import extract_snapshot
from pipeline.source import open_source
from pipeline.store import Store
from tests.git_fixtures import commit, git

EXCEPTIONS = '''\
class SettingsError(ValueError):
    """A settings source could not be read."""


class EnvParsingError(SettingsError):
    pass
'''

BASE = """\
from dataclasses import dataclass


@dataclass
class SourceDefaults:
    case_sensitive: bool = False
"""

SOURCES = """\
from .base import SourceDefaults
from .exceptions import EnvParsingError, SettingsError


class DotEnvSource(SourceDefaults):
    def __init__(self, path: str, encoding: str = "utf-8") -> None:
        if not path.endswith(".env"):
            raise SettingsError(f"not a dotenv file: {path}")
        self.path = path

    def _validate_encoding(self) -> None:
        if self.encoding not in ("utf-8", "latin-1"):
            raise EnvParsingError(f"unsupported encoding {self.encoding!r}")


def check_path(path: str) -> None:
    if not path:
        raise ValueError("empty path")
"""


def test_error_subclasses_of_the_same_file_are_sites_under_their_own_name():
    source = textwrap.dedent("""
        class SettingsError(ValueError):
            pass

        class EnvParsingError(SettingsError):
            pass

        def check_prefix(prefix):
            if not prefix:
                raise EnvParsingError("empty prefix")
            if prefix.startswith("_"):
                raise SettingsError(f"prefix {prefix!r} starts with '_'")
            raise KeyError(prefix)
    """)
    sites = extract_file("settings.py", source, Rules()).sites
    assert [(s.lineNumber, s.errorClass, s.errorMessage) for s in sites] == [
        (10, "EnvParsingError", "empty prefix"),
        (12, "SettingsError", "prefix {prefix!r} starts with '_'"),
    ]


def _repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    commit(root, files, "one")
    return root


def _sites(root: Path, cache: Path, store: Store):
    snap = open_source(str(root), None, repo_name="acme/settings", cache_dir=cache)
    return extract_snapshot(snap, Rules(), store=store)


def test_classes_of_other_files_make_sites_and_a_change_of_them_reanalyses(tmp_path: Path):
    root = _repo(
        tmp_path / "repo",
        {
            "settings/exceptions.py": EXCEPTIONS,
            "settings/base.py": BASE,
            "settings/sources.py": SOURCES,
        },
    )
    with Store(tmp_path / "store.sqlite") as store:
        first = _sites(root, tmp_path, store)
        assert [(s.qualname, s.validatorKind, s.errorClass) for s in first.sites] == [
            ("DotEnvSource.__init__", "init", "SettingsError"),
            ("DotEnvSource._validate_encoding", "name", "EnvParsingError"),
            ("check_path", "name", "ValueError"),
        ]
        # sources.py was analysed under its own classes' rules while the rest was read, then
        # again under the tree's: it counts once, with the second analysis
        assert first.stats.model_dump() == {
            "files_total": 3,
            "files_candidate": 1,
            "files_parsed": 1,
            "files_reused": 0,
        }
        again = _sites(root, tmp_path, store)
        assert again.sites == first.sites
        assert again.stats.files_parsed == 0

        # SettingsError is no ValueError any more: sources.py, unchanged, is analysed again
        # under its new rules
        commit(
            root,
            {"settings/exceptions.py": EXCEPTIONS.replace("(ValueError)", "(RuntimeError)")},
            "two",
        )
        changed = _sites(root, tmp_path, store)
        assert [s.qualname for s in changed.sites] == ["check_path"]
        assert changed.stats.files_parsed == 1


def test_files_deriving_from_the_same_configuration_class_each_get_their_own_rules(
    tmp_path: Path,
):
    # a.py's class defines no __init__ (the base adds nothing to its rules), b.py's does
    root = _repo(
        tmp_path / "repo",
        {
            "settings/base.py": BASE,
            "settings/a.py": "class EnvOutput(SourceDefaults):\n    path: str = ''\n",
            "settings/b.py": (
                "class EnvSource(SourceDefaults):\n"
                "    def __init__(self, path):\n"
                "        if not path:\n"
                '            raise ValueError("no path")\n'
            ),
        },
    )
    with Store(tmp_path / "store.sqlite") as store:
        sites = _sites(root, tmp_path, store).sites
    assert [(s.filePath, s.qualname, s.validatorKind) for s in sites] == [
        ("settings/b.py", "EnvSource.__init__", "init"),
    ]
