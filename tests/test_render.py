"""`vmine render`: a dataset -> Markdown pages and index, or a static HTML site."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.site.command import render
from pipeline.site.markdown import md_code, md_text
from pipeline.site.pages import page_title, pinned_ref, summary_line
from tests.datasets import CASES, SHA, Case, write_fixture_dataset

PAGE_3 = """\
acme/serve · error · ValueError

# max_batch_size must be a power of 2, got {value}

## Error message

```text
max_batch_size must be a power of 2, got {value}
```

## What it means

Raised when max_batch_size is not a power of two.

## Source

Thrown at `serve/config/engine.py:115`

```python
    @model_validator(mode="after")
    def check_decode(self) -> "EngineConfig":
        if not self.use_fast_decode:
            return self
        if self.speculative_tokens > 0:
            raise ValueError("--use-fast-decode does not support speculative decoding")
        if self.decode_backend != "flash":
            raise ValueError("--use-fast-decode requires --decode-backend flash")
        return self

    @field_validator("max_batch_size")
    @classmethod
    def validate_batching(cls, value: int) -> int:
        if value & (value - 1):
            raise ValueError(f"max_batch_size must be a power of 2, got {value}")
        return value
```

[View on GitHub (pinned to c0ffee1234)](https://github.com/acme/serve/blob/c0ffee1234555555555555555555555555555555/serve/config/engine.py#L101-L116)

## Solutions

1. Change the configuration so that no longer max_batch_size is not a power of two.
2. Restart.

## Example fix

```
# before
serve --use-fast-decode
# after
serve
```

## Defensive patterns

**Strategy:** validation

### Validate before calling

```python
if cfg.use_fast_decode:
    check(cfg)
```

### Type guard

```python
def is_valid(cfg) -> bool:
    return not cfg.use_fast_decode
```

## When it happens

**Trigger:** Starting the server while max_batch_size is not a power of two.

**Conditions** (all hold when it is raised, in `EngineConfig.validate_batching`):

- `value & (value - 1)`

## Related errors

- [--use-fast-decode does not support speculative decoding](aaaa000000000001.md) (`EngineConfig.check_decode`, line 106)
- [--use-fast-decode requires --decode-backend flash](aaaa000000000002.md) (`EngineConfig.check_decode`, line 108)

---

AI-assisted analysis of acme/serve@c0ffee1234 (2026-08-14). Data as JSON: `records/aaaa000000000003.json`.
"""

INDEX = """\
# acme/serve validation errors

4 errors at `c0ffee1234` (dataset 2026-08-15).

## `serve/config/engine.py`

### `EngineConfig.check_decode`

- [--use-fast-decode does not support speculative decoding](aaaa000000000001.md) (line 106)
- [--use-fast-decode requires --decode-backend flash](aaaa000000000002.md) (line 108)

### `EngineConfig.validate_batching`

- [max_batch_size must be a power of 2, got {value}](aaaa000000000003.md) (line 115)

## `serve/config/scheduler.py`

### `SchedulerConfig.__post_init__`

- [Unknown scheduler policy {self.policy!r}.](aaaa000000000004.md) (line 12)
"""

HOSTILE = Case(
    id="eeee000000000001",
    slug="script-alert",
    filePath="serve/<b>evil</b>.py",
    lineNumber=12,
    qualname="Config.check_<i>",
    validatorKind="name",
    errorMessage='<script>alert("message")</script> & {value}',
    messagePattern='<script>alert\\("message"\\)</script> & (.*?)',
    messageStatus="template",
    guards=['value == "<img src=x onerror=alert(1)>"'],
    source=CASES[3].source,
    sourceStart=10,
    explanation={
        "documentation": "<img src=x onerror=alert('doc')>",
        "triggerScenarios": "</p><script>alert('trigger')</script>",
        "commonSituations": "",
        "solutions": ["<a href='javascript:alert(1)'>click</a>"],
        "exampleFix": "</code></pre><script>alert('fix')</script>",
        "handlingStrategy": "validation",
        "validationCode": "x = '</script>'",
        "typeGuard": "",
        "tryCatchPattern": None,
        "preventionTips": [],
        "tags": ['"><script>alert("tag")</script>'],
    },
)


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    return write_fixture_dataset(tmp_path / "output")


@pytest.fixture()
def markdown(dataset: Path, tmp_path: Path) -> Path:
    render(dataset, "markdown", tmp_path / "md")
    return tmp_path / "md"


@pytest.fixture()
def site(dataset: Path, tmp_path: Path) -> Path:
    render(dataset, "html", tmp_path / "site")
    return tmp_path / "site"


# --- helpers ------------------------------------------------------------------------------

TITLE_CASES = [
    ("short message", "short message"),
    (
        "--enable-linear-cache is not supported under PD disaggregation yet (follow-up)",
        "--enable-linear-cache is not supported under PD disaggregati",
    ),
    ("first line only\nsecond line", "first line only"),
    ("cut at sixty " + "x" * 47 + " and trailing", "cut at sixty " + "x" * 47),
    # no run-time part: the text it prints, braces and all; else as written
    ('expected JSON like {{"a": 1}}', 'expected JSON like {"a": 1}'),
    ("axes {{{names}}} are unknown", "axes {{{names}}} are unknown"),
]


@pytest.mark.parametrize(("message", "title"), TITLE_CASES)
def test_page_title_is_the_first_line_cut_to_sixty_characters(message: str, title: str) -> None:
    assert page_title(message) == title


def test_summary_line_keeps_up_to_120_characters() -> None:
    assert summary_line("short\nsecond") == "short"
    assert summary_line("word " * 30) == ("word " * 24).rstrip() + "…"


@pytest.mark.parametrize(
    ("url", "ref"),
    [
        (f"https://github.com/acme/serve/blob/{SHA}/a.py#L1-L2", "c0ffee1234"),
        (
            "https://github.com/sgl-project/sglang/blob/v0.5.10.post1/python/a.py#L1-L2",
            "v0.5.10.post1",
        ),
    ],
)
def test_pinned_ref_is_the_short_sha_or_the_tag(url: str, ref: str) -> None:
    assert pinned_ref(url) == ref


def test_markdown_text_is_inert() -> None:
    assert md_text("max_len *must* be <b>[x](y)</b> _or_ #1") == (
        "max_len \\*must\\* be \\<b\\>\\[x\\](y)\\</b\\> \\_or\\_ \\#1"
    )
    assert md_code("a `b` c") == "``a `b` c``"


# --- markdown -----------------------------------------------------------------------------


def test_markdown_page_snapshot(markdown: Path) -> None:
    assert (markdown / "aaaa000000000003.md").read_text() == PAGE_3


def test_markdown_index_snapshot(markdown: Path) -> None:
    assert (markdown / "index.md").read_text() == INDEX


def test_markdown_writes_a_page_per_record_and_the_index(markdown: Path) -> None:
    assert sorted(path.name for path in markdown.iterdir()) == [
        "aaaa000000000001.md",
        "aaaa000000000002.md",
        "aaaa000000000003.md",
        "aaaa000000000004.md",
        "index.md",
    ]


def test_empty_sections_are_left_out(markdown: Path) -> None:
    full = (markdown / "aaaa000000000002.md").read_text()
    sparse = (markdown / "aaaa000000000003.md").read_text()
    headings = ["## Prevention", "### Try / catch", "**Common situations:**"]
    assert [heading in full for heading in headings] == [True, True, True]
    assert [heading in sparse for heading in headings] == [False, False, False]


def test_related_errors_list_same_validator_then_same_file(markdown: Path) -> None:
    page = (markdown / "aaaa000000000001.md").read_text()
    related = page.split("## Related errors\n\n", 1)[1].split("\n\n", 1)[0]
    assert related == (
        "- [--use-fast-decode requires --decode-backend flash](aaaa000000000002.md) "
        "(`EngineConfig.check_decode`, line 108)\n"
        "- [max_batch_size must be a power of 2, got {value}](aaaa000000000003.md) "
        "(`EngineConfig.validate_batching`, line 115)"
    )
    assert "## Related errors" not in (markdown / "aaaa000000000004.md").read_text()


def test_offline_dataset_footer_does_not_claim_ai(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output", provider="offline")
    render(root, "markdown", tmp_path / "md")
    assert (tmp_path / "md" / "aaaa000000000001.md").read_text().splitlines()[-1] == (
        "Offline analysis of acme/serve@c0ffee1234 (2026-08-14). "
        "Data as JSON: `records/aaaa000000000001.json`."
    )


def test_markdown_escapes_dataset_text(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output", [HOSTILE])
    render(root, "markdown", tmp_path / "md")
    page = (tmp_path / "md" / "eeee000000000001.md").read_text()
    assert '# \\<script\\>alert("message")\\</script\\> & {value}\n' in page
    assert "\\<img src=x onerror=alert('doc')\\>" in page
    prose = re.sub(r"^```.*?^```$", "", page, flags=re.MULTILINE | re.DOTALL)
    prose = re.sub(r"(`+).*?\1", "", prose)
    assert "<" not in prose.replace("\\<", "")  # only code holds a raw `<`


BRACES = Case(
    id="bbbb000000000001",
    slug="expected-json-like-a-1",
    filePath="serve/config/loader.py",
    lineNumber=12,
    qualname="LoaderConfig.check_json",
    validatorKind="name",
    errorMessage='expected JSON like {{"a": 1}}',
    messagePattern='expected JSON like \\{"a": 1\\}',
    messageStatus="literal",
    guards=[],
    source=CASES[3].source,
    sourceStart=10,
    explanation=CASES[0].explanation,
)


def test_pages_show_a_literal_message_with_braces_as_its_text(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output", [BRACES])
    render(root, "markdown", tmp_path / "md")
    render(root, "html", tmp_path / "site")
    page = (tmp_path / "md" / "bbbb000000000001.md").read_text()
    assert '## Error message\n\n```text\nexpected JSON like {"a": 1}\n```' in page
    html = (tmp_path / "site" / "errors" / "bbbb000000000001.html").read_text()
    assert "<code>expected JSON like {&quot;a&quot;: 1}</code>" in html


# --- html ---------------------------------------------------------------------------------


def test_site_layout(site: Path) -> None:
    files = sorted(str(path.relative_to(site)) for path in site.rglob("*") if path.is_file())
    assert files == [
        "api/errors/aaaa000000000001.json",
        "api/errors/aaaa000000000002.json",
        "api/errors/aaaa000000000003.json",
        "api/errors/aaaa000000000004.json",
        "assets/site.css",
        "assets/site.js",
        "errors/aaaa000000000001.html",
        "errors/aaaa000000000002.html",
        "errors/aaaa000000000003.html",
        "errors/aaaa000000000004.html",
        "index.html",
    ]


def test_index_embeds_the_search_index(site: Path) -> None:
    page = (site / "index.html").read_text()
    embedded = re.search(
        r'<script type="application/json" id="error-index">(.*?)</script>', page
    ).group(1)
    assert json.loads(embedded)[1] == {
        "id": "aaaa000000000002",
        "slug": "use-fast-decode-requires-decode-backend-flash",
        "message": "--use-fast-decode requires --decode-backend flash",
        "file": "serve/config/engine.py:108",
        "qualname": "EngineConfig.check_decode",
        "tags": ["config", "decode", "backend"],
    }
    assert '<input id="search" type="search"' in page
    assert (
        '<tr data-id="aaaa000000000002"><td><a href="errors/aaaa000000000002.html">'
        "--use-fast-decode requires --decode-backend flash</a>"
    ) in page


def test_record_page_marks_the_raise_line_and_links_github(site: Path) -> None:
    page = (site / "errors" / "aaaa000000000002.html").read_text()
    marked = re.search(r'<span class="hll">(.*?)</span>\n', page).group(1)
    assert re.sub(r"<[^>]+>", "", marked).replace("&quot;", '"') == (
        '            raise ValueError("--use-fast-decode requires --decode-backend flash")'
    )
    assert '<span class="normal">108</span>' in page
    assert (
        f'<a class="github" href="https://github.com/acme/serve/blob/{SHA}/'
        'serve/config/engine.py#L101-L116" rel="noopener noreferrer">'
        "View on GitHub (pinned to c0ffee1234)</a>"
    ) in page
    assert page.count('<button type="button" class="copy">Copy</button>') == 6
    assert '<a href="../api/errors/aaaa000000000002.json">' in page
    assert '<link rel="stylesheet" href="../assets/site.css">' in page


def test_site_makes_no_external_requests(site: Path) -> None:
    for path in site.rglob("*.html"):
        page = path.read_text()
        external = re.findall(r'(?:src|href)="((?:https?:)?//[^"]*)"', page)
        assert all(url.startswith("https://github.com/") for url in external), path
        assert "@import" not in page
    assert "url(" not in (site / "assets" / "site.css").read_text()


def test_api_files_hold_the_envelopes(site: Path, dataset: Path) -> None:
    for case in CASES:
        api = json.loads((site / "api" / "errors" / f"{case.id}.json").read_text())
        on_disk = json.loads((dataset / "records" / f"{case.id}.json").read_text())
        assert api == on_disk


def test_html_escapes_everything_from_the_dataset(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output", [HOSTILE])
    render(root, "html", tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text()
    page = (tmp_path / "site" / "errors" / "eeee000000000001.html").read_text()
    for html in (index, page):
        scripts = re.findall(r"<script[^>]*>", html)
        assert set(scripts) <= {
            '<script src="assets/site.js">',
            '<script src="../assets/site.js">',
            '<script type="application/json" id="error-index">',
        }
        assert "<img" not in html and "<b>" not in html and "<i>" not in html
        assert "javascript:" not in html.replace("javascript:alert", "")
    assert "&lt;script&gt;alert(&quot;message&quot;)&lt;/script&gt; &amp; {value}" in page
    assert "<a href='javascript" not in page
    assert "\\u003c/script\\u003e" in index  # the embedded JSON cannot close its element


def test_rerender_removes_pages_of_records_that_are_gone(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output")
    render(root, "html", tmp_path / "site")
    root = write_fixture_dataset(tmp_path / "output", CASES[:2])
    render(root, "html", tmp_path / "site")
    assert sorted(p.name for p in (tmp_path / "site" / "errors").iterdir()) == [
        "aaaa000000000001.html",
        "aaaa000000000002.html",
    ]


# --- the command --------------------------------------------------------------------------


def test_render_command(dataset: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["render", str(dataset), "--format", "html", "-o", str(tmp_path / "site")]
    )
    assert (result.exit_code, result.output) == (0, f"wrote 11 files to {tmp_path / 'site'}\n")


def test_render_accepts_a_folder_holding_one_dataset(tmp_path: Path) -> None:
    write_fixture_dataset(tmp_path / "output")
    result = CliRunner().invoke(
        main, ["render", str(tmp_path / "output"), "-o", str(tmp_path / "md")]
    )
    assert (result.exit_code, result.output) == (0, f"wrote 5 files to {tmp_path / 'md'}\n")


def test_render_without_a_dataset_is_an_input_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["render", str(tmp_path), "-o", str(tmp_path / "md")])
    assert (result.exit_code, result.output) == (
        2,
        f"Error: {tmp_path}: no dataset (manifest.json) under this folder; write one with "
        "`vmine run`\n",
    )


def test_footer_names_the_release_tag_a_release_dataset_is_pinned_to() -> None:
    from pipeline.site.pages import analysed_ref
    from tests.datasets import record_of

    record = record_of(CASES[0])
    assert analysed_ref(record) == "acme/serve@c0ffee1234"
    tagged = record.model_copy(
        update={
            "githubUrl": "https://github.com/acme/serve/blob/v1.2.0/serve/config/engine.py#L1-L9"
        }
    )
    assert analysed_ref(tagged) == "acme/serve@v1.2.0"


# --- hostile names and model text (issue 17) ------------------------------------------------

CONTROLS = "\x1b]0;pwned\x07 \x00 \x9b2J"
BEACON = Case(
    id="eeee000000000002",
    slug="beacon",
    filePath="serve/x`\n<img src=x onerror=alert(1)>\n\n<script>alert(2)</script>.py",
    lineNumber=12,
    qualname="Config.check\n<img src=y onerror=alert(3)>",
    validatorKind="name",
    errorMessage="bad value " + CONTROLS,
    messagePattern="bad value " + CONTROLS.replace("[", "\\["),
    messageStatus="literal",
    guards=["value\n\n<img src=z onerror=alert(4)>"],
    source=CASES[3].source,
    sourceStart=10,
    explanation={
        "documentation": (
            "See ![beacon](http://evil.example/b.png), [the docs](https://docs.example/x), "
            "[run](javascript:alert(1)), `![kept](in code)` and <img src=x>."
        ),
        "triggerScenarios": "Reference style: ![x][1]\n\n[1]: http://evil.example/ref.png",
        "commonSituations": "[data](data:text/html,<script>alert(5)</script>) " + CONTROLS,
        "solutions": ["<http://evil.example/auto.png> ![](https://evil.example/s.png)"],
        "exampleFix": "x = 1 " + CONTROLS,
        "handlingStrategy": "validation",
        "validationCode": "",
        "typeGuard": "",
        "tryCatchPattern": None,
        "preventionTips": ["\x1b[2J clear"],
        "tags": ["tag"],
    },
)


def _rendered_markdown(path: Path) -> str:
    """A page as a CommonMark renderer (markdown-it, raw HTML on) turns it into HTML."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").render(path.read_text(encoding="utf-8"))


def test_markdown_pages_carry_no_html_image_or_unsafe_link(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output", [CASES[0], BEACON])
    render(root, "markdown", tmp_path / "md")
    for path in [tmp_path / "md" / "index.md", *(tmp_path / "md").glob("*.md")]:
        raw = path.read_text(encoding="utf-8")
        assert not any(char in raw for char in "\x1b\x07\x00\x9b"), path.name
        html = _rendered_markdown(path)
        assert re.findall(r"<(img|script)\b", html) == [], path.name
        links = re.findall(r'<a href="([^"]*)"', html)
        assert all(re.match(r"^(https?://|[0-9a-f]{16}\.md$|index\.md$)", url) for url in links)
    page = _rendered_markdown(tmp_path / "md" / f"{BEACON.id}.md")
    assert '<a href="https://docs.example/x">the docs</a>' in page  # an https link stays one
    assert '!<a href="http://evil.example/b.png">beacon</a>' in page  # an image is a link
    assert "<code>![kept](in code)</code>" in page
    assert "serve/x`\\n&lt;img src=x onerror=alert(1)&gt;\\n\\n&lt;script&gt;" in page


def test_html_pages_carry_no_raw_control_characters(tmp_path: Path) -> None:
    root = write_fixture_dataset(tmp_path / "output", [BEACON])
    render(root, "html", tmp_path / "site")
    for path in [*(tmp_path / "site").rglob("*.html")]:
        raw = path.read_text(encoding="utf-8")
        assert not any(char in raw for char in "\x1b\x07\x00\x9b"), path.name
    page = (tmp_path / "site" / "errors" / f"{BEACON.id}.html").read_text()
    assert "bad value \\x1b]0;pwned\\x07 \\x00 \\x9b2J" in page
    index = (tmp_path / "site" / "index.html").read_text()
    embedded = re.search(r'id="error-index">(.*?)</script>', index).group(1)
    assert json.loads(embedded)[0]["message"] == "bad value " + CONTROLS


def test_github_urls_percent_encode_their_path() -> None:
    from pipeline.dataset.models import github_url

    url = github_url("acme/serve", "v1.0", 'a b/#x?y"<z>\n.py', 3, 4)
    assert url == "https://github.com/acme/serve/blob/v1.0/a%20b/%23x%3Fy%22%3Cz%3E%0A.py#L3-L4"
    assert github_url("acme/lc", "langchain-core==1.0", "libs/é.py", 1, 2) == (
        "https://github.com/acme/lc/blob/langchain-core==1.0/libs/%C3%A9.py#L1-L2"
    )


# --- a render that fails leaves what was there (issue 17) ------------------------------------

BIG = Case(
    **{
        **CASES[0].__dict__,
        "id": "ffff000000000001",
        "slug": "big",
        "explanation": {**CASES[0].explanation, "documentation": "long words " * 200_000},
    }
)


def _render_with_a_file_size_limit(dataset: Path, fmt: str, out: Path):
    """`vmine render` in a process that may write no file over 1 MB, as a full disk stops a
    write part way (Python ignores SIGXFSZ, so the write fails with EFBIG)."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, 2**20))

    return subprocess.run(
        [
            str(Path(sys.executable).parent / "vmine"),
            "render",
            str(dataset),
            "--format",
            fmt,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=120,
    )


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_a_render_that_cannot_finish_leaves_the_old_pages_whole(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "pages"
    render(write_fixture_dataset(tmp_path / "old"), fmt, out)
    (out / "notes.txt").write_text("the user's own file")
    before = _tree(out)
    done = _render_with_a_file_size_limit(
        write_fixture_dataset(tmp_path / "new", [*CASES, BIG]), fmt, out
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == f"Error: {out}: cannot write the pages (File too large); nothing was changed\n"
    )
    assert _tree(out) == before  # no page replaced, no temporary folder left


def test_a_first_render_that_cannot_finish_leaves_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "pages"
    done = _render_with_a_file_size_limit(write_fixture_dataset(tmp_path / "d", [BIG]), "html", out)
    assert done.returncode == 2
    assert not out.exists()


def test_rerendering_markdown_keeps_other_files_and_drops_pages_that_are_gone(
    tmp_path: Path,
) -> None:
    render(write_fixture_dataset(tmp_path / "output"), "markdown", tmp_path / "md")
    (tmp_path / "md" / "README.md").write_text("mine")
    root = write_fixture_dataset(tmp_path / "output", CASES[:2])
    render(root, "markdown", tmp_path / "md")
    assert sorted(p.name for p in (tmp_path / "md").iterdir()) == [
        "README.md",
        "aaaa000000000001.md",
        "aaaa000000000002.md",
        "index.md",
    ]
