"""Nothing from a repository or a dataset reaches the terminal raw (pipeline/console.py): an
ESC sequence in a file name or a message could set the title, clear the screen or write the
clipboard (OSC 52). Control characters are written as escapes."""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.console import Console, printable
from tests.conftest import make_git_repo
from tests.test_diff import NEW_SHA, OLD_SHA, raise_site, write_fixture_dataset

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # write "echo pwned" to the clipboard
TITLE = "\x1b]0;pwned\x07"

PRINTABLE = [
    ("plain text stays", "max_len must be > 0", False, "max_len must be > 0"),
    ("tabs stay", "a\tb", False, "a\tb"),
    ("an OSC 52 clipboard write", f"x{OSC52}y", False, "x\\x1b]52;c;ZWNobyBwd25lZA==\\x07y"),
    ("clear screen", "\x1b[2J\x1b[H", False, "\\x1b[2J\\x1b[H"),
    ("a newline, on one line", "a\nb", False, "a\\nb"),
    ("a newline, in a code block", "a\nb", True, "a\nb"),
    ("a carriage return hides text", "safe\revil", True, "safe\\x0devil"),
    ("bidi marks", "a\u200eb\u200f", True, "a\\u200eb\\u200f"),
    ("DEL and an 8-bit CSI", "\x7f\x9b2J", False, "\\x7f\\x9b2J"),
    ("Unicode line separators", "a\u2028b\u2029c\x85", True, "a\\u2028b\\u2029c\\x85"),
    ("bidi overrides", "if x\u202e\u2066:", False, "if x\\u202e\\u2066:"),
    ("NUL and BEL", "\x00\x07", False, "\\x00\\x07"),
]


@pytest.mark.parametrize(
    ("what", "text", "keep_newlines", "shown"), PRINTABLE, ids=[case[0] for case in PRINTABLE]
)
def test_printable_escapes_control_characters(what, text, keep_newlines, shown):
    assert printable(text, keep_newlines=keep_newlines) == shown


def test_every_console_line_and_annotation_is_escaped():
    stream = io.StringIO()
    console = Console("github", stream)
    console.warn(f"skipped: syntax error{TITLE}", file=f"pkg/{OSC52}.py", line=3)
    text = stream.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert text.splitlines() == [
        "warning: pkg/\\x1b]52;c;ZWNobyBwd25lZA==\\x07.py:3: skipped: syntax error"
        "\\x1b]0;pwned\\x07",
        "::warning file=pkg/\\x1b]52;c;ZWNobyBwd25lZA==\\x07.py,line=3::skipped: syntax error"
        "\\x1b]0;pwned\\x07",
    ]


def test_a_skipped_file_s_name_is_escaped(tmp_path):
    repo = make_git_repo(
        tmp_path / "repo",
        {
            f"pkg/bad{TITLE}.py": "def check(x):\n    raise ValueError('x' +)\n",
        },
    )
    result = CliRunner().invoke(
        main,
        [
            "extract",
            str(repo),
            "--repo-name",
            "acme/engine",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--ci",
        ],
    )
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr
    assert (
        "skipped: pkg/bad\\x1b]0;pwned\\x07.py: syntax error at line 2: invalid syntax"
        in result.stderr.splitlines()
    )


def test_diff_text_escapes_messages_and_paths(tmp_path):
    old = write_fixture_dataset(
        tmp_path / "old",
        OLD_SHA,
        [
            raise_site("Config.check", "size must be positive", line=10),
        ],
    )
    new = write_fixture_dataset(
        tmp_path / "new",
        NEW_SHA,
        [
            raise_site("Config.check", "size must be positive", line=10),
            raise_site("Config.check", f"mode is wrong{OSC52}", path=f"engine/{TITLE}.py", line=20),
        ],
    )
    for fmt in ("text", "markdown"):
        result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", fmt])
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout
        # text quotes messages as JSON strings (\u001b), Markdown shows them as code
        assert (
            "\\u001b]52;c;ZWNobyBwd25lZA==\\u0007"
            if fmt == "text"
            else "\\x1b]52;c;ZWNobyBwd25lZA==\\x07"
        ) in result.stdout
        assert "engine/\\x1b]0;pwned\\x07.py" in result.stdout


def test_an_error_line_quoting_a_path_is_escaped(tmp_path):
    result = CliRunner().invoke(
        main, ["render", str(tmp_path / f"no{TITLE}where"), "-o", str(tmp_path / "site")]
    )
    assert result.exit_code == 2
    assert result.stderr == f"Error: {tmp_path}/no\\x1b]0;pwned\\x07where: no such directory\n"
