"""`vmine explain` on hostile or careless input (issue 12): patterns that would backtrack, a
dataset's own regex, huge pastes, folders that are not datasets, absurd index lines, and
terminal escapes in what it prints."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import main
from pipeline.lookup.fragments import fold, fullmatch
from pipeline.lookup.match import MAX_PASTE
from pipeline.lookup.tracebacks import Candidate, candidates
from tests.datasets import CASES, SHA, write_fixture_dataset

FAST_DECODE = "--use-fast-decode requires --decode-backend flash"


def _explain(dataset: Path, *args: str):
    return CliRunner().invoke(main, ["explain", *args, "--dataset", str(dataset)])


# Six holes between literals that the text holds many times but never in the right order:
# a backtracking engine tries every split (over 60 s for 2,400 characters).
SIX_HOLES = replace(
    CASES[2],
    id="cccc000000000001",
    slug="six-holes",
    errorMessage="{a} x {b} x {c} x {d} x {e} x {f}y",
    messagePattern="(.*?) x (.*?) x (.*?) x (.*?) x (.*?) x (.*?)y",
)


def test_fragments_match_without_backtracking() -> None:
    text = fold(" x " * 800)
    assert fullmatch(("", "x", "x", "x", "x", "x", "y"), text) is None
    assert fullmatch(("", "x", "x", "x", "x", "x", "y"), text + "y") is not None


def test_a_pattern_with_many_holes_against_a_long_paste(tmp_path: Path) -> None:
    write_fixture_dataset(tmp_path / "output", [*CASES, SIX_HOLES])
    result = _explain(tmp_path / "output", " x " * 800 + "z", "--all")
    assert (result.exit_code, result.output) == (1, "No record is close to this message.\n")


def test_a_regex_of_a_hostile_dataset_is_never_run(tmp_path: Path) -> None:
    planted = replace(CASES[1], messagePattern="(.|\\s)*X")  # exponential in `re`
    root = write_fixture_dataset(tmp_path / "output", [CASES[0], planted])
    result = _explain(tmp_path / "output", "a" * 40 + FAST_DECODE, "--all")
    assert result.exit_code == 1
    assert result.stderr == (
        f"warning: {root.resolve()}/index.jsonl: 1 messagePattern is not vmine's (regex syntax "
        "beyond escaped text and (.*?) holes): not used, that record is matched by message "
        "words only\n"
    )
    # found by its words, never by the planted regex
    assert result.stdout.split("\n")[1].split()[1:3] == ["approximate", "aaaa000000000002"]


def test_a_paste_larger_than_the_bound_is_read_from_its_end(tmp_path: Path) -> None:
    write_fixture_dataset(tmp_path / "output")
    pasted = "noise " * (MAX_PASTE // 6 + 1000)
    result = _explain(tmp_path / "output", pasted)
    assert (result.exit_code, result.output) == (
        1,
        (
            f"Note: The paste is {len(pasted):,} characters long; only its last 1,000,000 were "
            "read.\n"
            "Note: No message in the paste is shorter than 20,000 characters; paste the error "
            "message itself.\n"
            "No record matches this message, and none is close to it.\n"
            "Searched for: " + pasted[-MAX_PASTE:].strip()[:99] + "…\n"
        ),
    )


def test_the_end_of_a_huge_paste_still_finds_the_error(tmp_path: Path) -> None:
    write_fixture_dataset(tmp_path / "output")
    pasted = "INFO loading weights\n" * 60_000 + f"ValueError: {FAST_DECODE}\n"
    result = _explain(tmp_path / "output", pasted, "--all")
    assert result.exit_code == 0
    assert result.output.splitlines()[1].split()[1:3] == ["exact", "aaaa000000000002"]


def test_a_large_pydantic_item_is_read_in_linear_time() -> None:
    # the former regex for pydantic's items was quadratic: 200 KB took 13.7 s
    value = "x" * 200_000
    assert candidates(f"Value error, {value}")[:1] == [Candidate(value, "ValueError")]


def test_a_manifest_that_is_not_vmine_s_is_skipped_with_a_warning(tmp_path: Path) -> None:
    write_fixture_dataset(tmp_path / "output")
    extension = tmp_path / "output" / "tools" / "extension"
    extension.mkdir(parents=True)
    (extension / "manifest.json").write_text('{"manifest_version": 3, "name": "x"}')
    result = _explain(tmp_path / "output", FAST_DECODE, "--all")
    assert (result.exit_code, result.stderr) == (
        0,
        (
            f"warning: {extension.resolve()}/manifest.json: not a vmine manifest (no index.jsonl "
            "beside it), skipped\n"
        ),
    )
    assert result.stdout.split()[1:3] == ["exact", "aaaa000000000002"]


def test_only_foreign_manifests_is_no_dataset(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "manifest.json").write_text("[1, 2]")
    (tmp_path / "site" / "index.jsonl").write_text("")
    result = _explain(tmp_path / "site", FAST_DECODE)
    assert (result.exit_code, result.stderr) == (
        2,
        (
            f"warning: {(tmp_path / 'site').resolve()}/manifest.json: not a vmine manifest "
            "(no repo and analyzedSha), skipped\n"
            f"Error: {tmp_path / 'site'}: no vmine dataset under this folder (only other tools' "
            "manifest.json); write one with `vmine run`\n"
        ),
    )


def test_an_index_line_nested_too_deep_is_counted_and_skipped(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output")
    with (root / "index.jsonl").open("a") as index:
        index.write("[" * 100_000 + "]" * 100_000 + "\n" + '{"id": 3}\n')
    result = _explain(tmp_path / "output", FAST_DECODE, "--all")
    assert (result.exit_code, result.stderr) == (
        0,
        (
            f"warning: {root.resolve()}/index.jsonl: 2 lines skipped (not an index entry with id, "
            "errorMessage and messagePattern)\n"
        ),
    )
    assert result.stdout.split()[1:3] == ["exact", "aaaa000000000002"]


def test_a_line_separator_inside_a_message_keeps_its_line_whole(tmp_path: Path) -> None:
    message = "--use-fast-decode\u2028requires --decode-backend flash"
    root = write_fixture_dataset(
        tmp_path / "output", [replace(CASES[1], errorMessage=message, messagePattern=message)]
    )
    # the writer escapes it; a dataset of an older vmine holds it raw
    index = root / "index.jsonl"
    assert "\u2028" not in index.read_text()
    index.write_text(index.read_text().replace("\\u2028", "\u2028"))
    assert "\u2028" in index.read_text()
    result = _explain(tmp_path / "output", message, "--all")
    assert result.exit_code == 0
    assert result.output.split()[1:3] == ["exact", "aaaa000000000002"]


HOSTILE = (
    "--use-fast-decode requires\x1b]52;c;cm0gLXJmIH4=\x07 --decode-backend "
    "flash\x1b[2J\x1b]0;pwned\x07\r"
)


def test_control_characters_are_escaped_in_the_page(tmp_path: Path) -> None:
    hostile = replace(
        CASES[1],
        errorMessage=HOSTILE,
        messagePattern=HOSTILE.replace("[", "\\["),
        filePath="serve/config/\x1b[31mengine.py",
        guards=["self.mode == '\x1b[5m'"],
    )
    write_fixture_dataset(tmp_path / "output", [hostile])
    result = _explain(tmp_path / "output", HOSTILE)
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\r" not in result.output
    lines = result.output.split("\n")
    assert lines[lines.index("Error message") + 2] == (
        "  "
        "--use-fast-decode requires\\x1b]52;c;cm0gLXJmIH4=\\x07 --decode-backend "
        "flash\\x1b[2J\\x1b]0;pwned\\x07\\x0d"
    )
    assert "  - self.mode == '\\x1b[5m'" in lines
    assert "  Thrown at serve/config/\\x1b[31mengine.py:108" in lines
    # the source keeps its lines
    assert (
        '  > 108 |             raise ValueError("--use-fast-decode requires --decode-backend '
        'flash")' in lines
    )


def test_control_characters_are_escaped_in_json(tmp_path: Path) -> None:
    hostile = replace(
        CASES[1],
        errorMessage=HOSTILE + "\x9b2J\u2028",
        messagePattern=HOSTILE.replace("[", "\\[") + "\x9b2J\u2028",
    )
    write_fixture_dataset(tmp_path / "output", [hostile])
    result = _explain(tmp_path / "output", HOSTILE + "\x9b2J\u2028", "--json")
    assert result.exit_code == 0
    assert not any(ch in result.stdout for ch in "\x1b\x07\r\x9b\u2028")
    assert json.loads(result.stdout)["envelope"]["record"]["errorMessage"] == (
        HOSTILE + "\x9b2J\u2028"
    )


def test_a_record_id_from_the_index_is_checked_before_its_file_is_read(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output")
    lines = (root / "index.jsonl").read_text().splitlines()
    entry = json.loads(lines[1])
    entry["id"] = "../../../../etc/passwd"
    lines[1] = json.dumps(entry)
    (root / "index.jsonl").write_text("\n".join(lines) + "\n")
    result = _explain(tmp_path / "output", FAST_DECODE)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error: {root.resolve()}/index.jsonl: invalid entry '../../../../etc/passwd': "
    )
    assert SHA in result.stderr


def test_names_with_line_breaks_and_tabs_stay_on_their_line_in_all(tmp_path: Path) -> None:
    hostile = replace(CASES[1], filePath="serve/\nFAKE 1.000  exact\tengine.py")
    write_fixture_dataset(tmp_path / "output", [CASES[0], hostile])
    result = _explain(tmp_path / "output", FAST_DECODE, "--all")
    assert result.exit_code == 0
    (line,) = result.stdout.splitlines()  # one line per candidate
    assert "\t" not in line
    assert "  serve/\\nFAKE 1.000  exact\\tengine.py:108  " in line
