"""vmine reads back what it wrote, strictly, and says in one line what is wrong: Unicode line
breaks in messages, strict types, names that cannot leave the output folder, a hostile
githubUrl."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from pipeline.cli import main
from pipeline.dataset.jsonl import jsonl_lines
from pipeline.dataset.models import REPO_NAME_RE, ErrorRecord, Site
from pipeline.dataset.reader import DatasetError, load_dataset
from pipeline.site.markdown import github_link
from tests.conftest import make_git_repo
from tests.site_factory import REPO, SHA, make_site
from tests.test_dataset import edit_json, first_record
from tests.test_writer import SITES, write

# --- U+2028, U+2029 and U+0085 in messages ----------------------------------------------------

BREAKS = "line\u2028separator\u2029paragraph\x85next"


def test_unicode_line_breaks_are_escaped_in_what_is_written_and_read_back(tmp_path):
    root = write(tmp_path, [make_site(f"bad value: {BREAKS}")])
    for path in [root / "index.jsonl", root / "manifest.json", *root.glob("records/*.json")]:
        data = path.read_bytes()
        assert not any(char.encode() in data for char in "\u2028\u2029\x85"), path
    assert (
        "bad value: line\\u2028separator\\u2029paragraph\\u0085next"
        in (root / "index.jsonl").read_text()
    )
    (entry,) = load_dataset(root).entries
    assert entry.errorMessage == f"bad value: {BREAKS}"


def test_an_index_written_with_raw_line_separators_still_loads(tmp_path):
    # what the previous vmine wrote: `splitlines()` cut this line in three
    root = write(tmp_path, [make_site(f"bad value: {BREAKS}")])
    index = root / "index.jsonl"
    raw = index.read_text()
    for char in "\u2028\u2029\x85":
        raw = raw.replace(f"\\u{ord(char):04x}", char)
    index.write_text(raw)
    assert len(index.read_text().splitlines()) == 7  # message and pattern, cut in 4 each
    (entry,) = load_dataset(root).entries
    assert entry.errorMessage == f"bad value: {BREAKS}"


JSONL = [
    ("", []),
    ("a\n", ["a"]),
    ("a\nb", ["a", "b"]),
    ("a\r\nb\r\n", ["a", "b"]),
    ("a\u2028b\x85c\n", ["a\u2028b\x85c"]),
    ("a\n\nb\n", ["a", "", "b"]),
]


@pytest.mark.parametrize(("text", "lines"), JSONL)
def test_json_lines_split_on_newline_only(text, lines):
    assert jsonl_lines(text) == lines


def test_a_message_with_line_separators_goes_through_run_render_and_diff(tmp_path):
    repo = make_git_repo(
        tmp_path / "engine",
        {
            "engine/config.py": (
                "def check(mode):\n"
                "    if mode < 0:\n"
                f'        raise ValueError("bad mode:{BREAKS}")\n'
            )
        },
    )
    cli = CliRunner()
    run = cli.invoke(
        main,
        [
            "run",
            str(repo),
            "--repo-name",
            "acme/engine",
            "-o",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--llm",
            "offline",
            "--ci",
        ],
    )
    assert run.exit_code == 0, run.output
    [root] = (tmp_path / "out" / "acme" / "engine").iterdir()
    rendered = cli.invoke(main, ["render", str(root), "-o", str(tmp_path / "pages")])
    assert rendered.exit_code == 0, rendered.output
    diffed = cli.invoke(main, ["diff", str(root), str(root)])
    assert diffed.exit_code == 0, diffed.output
    assert diffed.stdout.endswith(
        "0 added, 0 removed, 0 reworded, 0 moved, 0 changed, 1 unchanged\n"
    )


# --- strict types where data is read back ---------------------------------------------------


@pytest.fixture
def root(tmp_path):
    return write(tmp_path, SITES)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("30", "record.lineNumber: Input should be a valid integer"),
        (-3, "record.lineNumber: Input should be greater than or equal to 1"),
        (0, "record.lineNumber: Input should be greater than or equal to 1"),
        (30.0, "record.lineNumber: Input should be a valid integer"),
    ],
)
def test_a_line_number_is_a_positive_integer(root, value, problem):
    edit_json(first_record(root), lambda data: data["record"].update(lineNumber=value))
    with pytest.raises(DatasetError) as caught:
        load_dataset(root)
    assert str(caught.value) == f"{first_record(root)}: {problem}"


def test_a_bad_index_line_number_is_refused(root):
    index = root / "index.jsonl"
    lines = index.read_text().splitlines()
    lines[0] = lines[0].replace('"lineNumber":7', '"lineNumber":"7"')
    index.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        DatasetError,
        match=r"index\.jsonl:1: lineNumber: Input should be a "
        r"valid integer$",
    ):
        load_dataset(root)


def test_a_bad_record_is_one_line_naming_the_file_and_the_field(root, tmp_path):
    # pydantic's own text spans lines and quotes the whole input
    edit_json(
        first_record(root),
        lambda data: data["record"].update(
            repo="acme/engine\nrm -rf /", documentation=["not", "text"]
        ),
    )
    result = CliRunner().invoke(main, ["render", str(root), "-o", str(tmp_path / "pages")])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {first_record(root)}: record.repo: Value error, repo must match "
        f"{REPO_NAME_RE.pattern}, got 'acme/engine\\nrm -rf /' (and 1 more)\n"
    )


def test_explain_names_the_file_and_the_field_of_a_bad_record(root, tmp_path):
    edit_json(first_record(root), lambda data: data["record"].update(lineNumber="30"))
    result = CliRunner().invoke(main, ["explain", SITES[0].errorMessage, "--dataset", str(root)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {first_record(root)}: invalid record: record.lineNumber: "
        "Input should be a valid integer\n"
    )


# --- names that cannot lead out of the output folder ----------------------------------------

REPO_NAMES = [
    ("acme/engine", True),
    ("vllm-project/vllm", True),
    ("a/b.c", True),
    ("a/...", True),
    ("acme/engine\n", False),
    ("a/..", False),
    ("a/.", False),
    ("../x", False),
    ("a/b/c", False),
    ("-a/b", False),
    ("a/", False),
]


@pytest.mark.parametrize(("name", "valid"), REPO_NAMES)
def test_repo_names(name, valid):
    assert (REPO_NAME_RE.fullmatch(name) is not None) is valid
    site = {**make_site().model_dump(), "functionSource": "", "repo": name}
    if valid:
        Site(**site)
    else:
        with pytest.raises(ValidationError):
            Site(**site)


def test_a_record_id_or_sha_with_a_final_newline_is_refused():
    record = load_record_fields()
    for field, value in (("id", "0123456789abcdef\n"), ("analyzedSha", SHA + "\n")):
        with pytest.raises(ValidationError, match=field):
            ErrorRecord(**{**record, field: value})


def load_record_fields() -> dict:
    from pipeline.keys import record_id
    from tests.site_factory import make_record

    site = SITES[0]
    return make_record(site, record_id(site), "slug", "2026-01-01T00:00:00.000Z").model_dump()


def test_repo_name_dot_dot_is_refused_on_the_command_line(tmp_path):
    repo = make_git_repo(tmp_path / "engine", {"engine/a.py": "x = 1\n"})
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(repo),
            "--repo-name",
            "acme/..",
            "-o",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--llm",
            "offline",
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ")
    assert not (tmp_path / "out" / "acme").exists()


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("https://github.com/acme/engine.git", "acme/engine"),
        ("https://github.com/acme/..", None),
        ("https://github.com/acme/..git", None),
        ("git@github.com:acme/.", None),
    ],
)
def test_an_origin_url_names_no_repo_that_leaves_the_output(url, repo):
    from pipeline.source.git import repo_from_url

    assert repo_from_url(url) == repo


# --- a hostile githubUrl --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "page"),
    [
        (
            f"https://github.com/{REPO}/blob/{SHA}/a.py#L1-L3",
            f"[View on GitHub (pinned to {SHA[:10]})](https://github.com/{REPO}/blob/{SHA}/a.py"
            "#L1-L3)",
        ),
        (
            "javascript:alert(document.cookie)",
            "View on GitHub (pinned to ): `javascript:alert(document.cookie)`",
        ),
        (
            "https://evil.example/github.com/",
            "View on GitHub (pinned to ): `https://evil.example/github.com/`",
        ),
    ],
)
def test_markdown_links_only_to_github(url, page):
    assert github_link(url) == page


def test_a_rendered_page_does_not_link_a_hostile_url(root, tmp_path):
    edit_json(
        first_record(root), lambda data: data["record"].update(githubUrl="javascript:alert(1)")
    )
    result = CliRunner().invoke(main, ["render", str(root), "-o", str(tmp_path / "pages")])
    assert result.exit_code == 0, result.output
    pages = "".join(p.read_text() for p in (tmp_path / "pages").rglob("*.md"))
    assert "](javascript" not in pages
    assert "`javascript:alert(1)`" in pages


def test_manifest_text_is_json(root):
    assert json.loads((root / "manifest.json").read_text())["repo"] == REPO
