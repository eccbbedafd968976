"""The "Settings involved" section of every page: the Markdown page, the HTML page and the
`vmine explain` page list each setting's flag, field, type, default and accepted values."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.dataset.models import Setting
from pipeline.site.command import render
from tests.datasets import CASES, write_fixture_dataset

BACKEND = Setting(
    expr="self.decode_backend",
    cls="EngineConfig",
    field="decode_backend",
    type="DecodeBackend | None",
    default='"flash"',
    choices=["flash", "paged"],
    doc="The decode kernels.",
    flags=["--decode-backend", "-db"],
)
FAST = Setting(
    expr="self.use_fast_decode",
    cls="EngineConfig",
    field="use_fast_decode",
    type="bool",
    default="False",
    choices=None,
    doc=None,
    flags=["--use-fast-decode"],
)
LIMIT = Setting(
    expr="self.limit",
    cls="EngineConfig",
    field="limit",
    type=None,
    default=None,
    choices=None,
    doc=None,
    flags=[],
)

# the record whose guards read --use-fast-decode and --decode-backend (and one unflagged)
CASE = replace(
    CASES[1], settings=[FAST, BACKEND, LIMIT, BACKEND.model_copy(update={"expr": "backend"})]
)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_fixture_dataset(tmp_path / "out", [CASE])


def test_markdown_page_has_a_settings_table(dataset: Path, tmp_path: Path) -> None:
    render(dataset, "markdown", tmp_path / "md")
    page = (tmp_path / "md" / f"{CASE.id}.md").read_text()
    assert (
        "## Settings involved\n\n"
        "| Flag | Field | Type | Default | Accepted values |\n"
        "|---|---|---|---|---|\n"
        "| `--use-fast-decode` | `EngineConfig.use_fast_decode` | `bool` | `False` |  |\n"
        "| `--decode-backend`, `-db` | `EngineConfig.decode_backend` | `DecodeBackend \\| None` "
        '| `"flash"` | flash, paged |\n'
        "| (no flag) | `EngineConfig.limit` |  |  |  |\n\n"
        "## Solutions\n"
    ) in page


def test_html_page_has_a_settings_table(dataset: Path, tmp_path: Path) -> None:
    render(dataset, "html", tmp_path / "site")
    page = (tmp_path / "site" / "errors" / f"{CASE.id}.html").read_text()
    assert (
        "<h2>Settings involved</h2>\n"
        '<table class="settings"><thead><tr><th>Flag</th><th>Field</th><th>Type</th>'
        "<th>Default</th><th>Accepted values</th></tr></thead><tbody>"
        "<tr><td><code>--use-fast-decode</code></td><td><code>EngineConfig.use_fast_decode"
        "</code></td><td><code>bool</code></td><td><code>False</code></td><td></td></tr>"
        "<tr><td><code>--decode-backend, -db</code></td><td><code>EngineConfig.decode_backend"
        "</code></td><td><code>DecodeBackend | None</code></td><td><code>&quot;flash&quot;"
        "</code></td><td>flash, paged</td></tr>"
        "<tr><td></td><td><code>EngineConfig.limit</code></td><td></td><td></td><td></td></tr>"
        "</tbody></table>\n"
        "<h2>Solutions</h2>\n"
    ) in page


def test_explain_page_lists_the_settings(dataset: Path) -> None:
    result = CliRunner().invoke(main, ["explain", CASE.errorMessage, "--dataset", str(dataset)])
    assert result.exit_code == 0, result.output
    assert (
        "Settings involved\n\n"
        "  --use-fast-decode: EngineConfig.use_fast_decode\n"
        "    type bool, default False\n"
        "  --decode-backend, -db: EngineConfig.decode_backend\n"
        '    type DecodeBackend | None, default "flash", accepted: flash, paged\n'
        "  (no flag): EngineConfig.limit\n\n"
        "Solutions\n"
    ) in result.output


def test_a_record_without_settings_has_no_section(tmp_path: Path) -> None:
    dataset = write_fixture_dataset(tmp_path / "out", [CASES[1]])
    render(dataset, "markdown", tmp_path / "md")
    assert "Settings involved" not in (tmp_path / "md" / f"{CASES[1].id}.md").read_text()
