"""`vmine extract` and extract_snapshot: exact JSON Lines, the per-blob cache, skipped files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from extractors.facts import Rules
from pipeline.cli import main
from pipeline.keys import analysis_token
from pipeline.mine.extract import extract_snapshot, is_candidate, selected
from pipeline.source import open_source
from pipeline.store import Store
from tests.git_fixtures import CONFIG_V2, Upstream, commit, make_upstream

SKIPPED = "skipped: widgets/broken.py: syntax error at line 2: invalid syntax"


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return make_upstream(tmp_path / "src")


def extract(*args: str) -> Result:
    return CliRunner().invoke(main, ["extract", *args])


def _setting(field: str, type_: str, default: str) -> dict:
    """A field of the fixture's SchedulerConfig, which no parser sets."""
    return {
        "expr": f"self.{field}",
        "class": "SchedulerConfig",
        "field": field,
        "type": type_,
        "default": default,
        "choices": None,
        "doc": None,
        "flags": [],
        "surface": "code",
    }


def _site(
    sha: str,
    line: int,
    message: str,
    pattern: str,
    status: str,
    guard: str,
    prior: list[str],
    setting: dict,
) -> dict:
    window = CONFIG_V2.rstrip("\n")
    return {
        "repo": "acme/widgets",
        "analyzedSha": sha,
        "filePath": "widgets/config.py",
        "lineNumber": line,
        "qualname": "SchedulerConfig.__post_init__",
        "validatorKind": "post_init",
        "errorClass": "ValueError",
        "errorMessage": message,
        "messagePattern": pattern,
        "messageStatus": status,
        "messageFragments": [],
        "guards": [guard],
        "priorChecks": prior,
        "sourceCode": window,
        "sourceCodeStart": 1,
        "sourceCodeEnd": 13,
        "githubUrl": f"https://github.com/acme/widgets/blob/{sha}/widgets/config.py#L1-L13",
        "settings": [setting],
    }


def expected_lines(sha: str) -> str:
    sites = [
        _site(
            sha,
            11,
            "max_num_seqs must be positive",
            "max_num_seqs must be positive",
            "literal",
            "self.max_num_seqs <= 0",
            [],
            _setting("max_num_seqs", "int", "128"),
        ),
        _site(
            sha,
            13,
            "unknown --scheduling-policy {self.policy!r}",
            "unknown --scheduling-policy (.*?)",
            "template",
            'self.policy not in ("fcfs", "priority")',
            ["self.max_num_seqs > 0"],
            _setting("policy", "str", '"fcfs"'),
        ),
    ]
    return "".join(json.dumps(s, separators=(",", ":"), ensure_ascii=False) + "\n" for s in sites)


def test_extract_prints_sorted_sites_as_json_lines(upstream: Upstream, tmp_path: Path) -> None:
    result = extract(str(upstream.path), "--cache-dir", str(tmp_path / "cache"))
    assert result.stdout == expected_lines(upstream.c2)
    assert result.stderr.splitlines() == [
        "files: 1/2",
        "files: 2/2",
        SKIPPED,
        "extract: files=2 candidates=2 parsed=2 reused=0 sites=2 skipped=1 literal=1 "
        "template=1 partial=0 unresolved=0",
    ]
    assert result.exit_code == 1  # a file was skipped


def test_second_run_reuses_the_cache_and_prints_the_same_bytes(
    upstream: Upstream, tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache")
    first = extract(str(upstream.path), "--cache-dir", cache)
    second = extract(str(upstream.path), "--cache-dir", cache)
    assert second.stdout == first.stdout
    assert second.stderr.splitlines()[-1] == (
        "extract: files=2 candidates=2 parsed=0 reused=2 sites=2 skipped=1 literal=1 "
        "template=1 partial=0 unresolved=0"
    )
    assert (tmp_path / "cache" / "store.sqlite").exists()


def test_no_cache_parses_every_candidate_again(upstream: Upstream, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    extract(str(upstream.path), "--cache-dir", cache)
    again = extract(str(upstream.path), "--cache-dir", cache, "--no-cache")
    assert "parsed=2 reused=0" in again.stderr.splitlines()[-1]


def test_output_file_holds_what_stdout_would(upstream: Upstream, tmp_path: Path) -> None:
    out = tmp_path / "out" / "sites.jsonl"
    result = extract(str(upstream.path), "--cache-dir", str(tmp_path / "c"), "-o", str(out))
    assert result.stdout == ""
    assert out.read_text(encoding="utf-8") == expected_lines(upstream.c2)
    assert result.exit_code == 1


def test_strict_writes_nothing_and_exits_1(upstream: Upstream, tmp_path: Path) -> None:
    out = tmp_path / "sites.jsonl"
    result = extract(
        str(upstream.path), "--cache-dir", str(tmp_path / "c"), "-o", str(out), "--strict"
    )
    assert result.exit_code == 1
    assert not out.exists()
    assert result.stderr.splitlines()[-2:] == [
        SKIPPED,
        "extract: --strict: 1 file(s) skipped, no output written",
    ]


def test_strict_without_skipped_files_exits_0(upstream: Upstream, tmp_path: Path) -> None:
    result = extract(
        str(upstream.path), "--rev", "v1", "--cache-dir", str(tmp_path / "c"), "--strict"
    )
    assert result.exit_code == 0
    assert [json.loads(line)["lineNumber"] for line in result.stdout.splitlines()] == [11]


@pytest.mark.parametrize(
    ("args", "summary"),
    [
        (["--exclude", "*/broken.py"], "files=1 candidates=1 parsed=1 reused=0 sites=2 skipped=0"),
        (["--include", "*/broken.py"], "files=1 candidates=1 parsed=1 reused=0 sites=0 skipped=1"),
        (["--include", "docs/*"], "files=0 candidates=0 parsed=0 reused=0 sites=0 skipped=0"),
    ],
)
def test_include_and_exclude_globs_pick_the_files(
    upstream: Upstream, tmp_path: Path, args: list[str], summary: str
) -> None:
    result = extract(str(upstream.path), "--cache-dir", str(tmp_path / "c"), *args)
    assert result.stderr.splitlines()[-1].startswith(f"extract: {summary} ")
    assert result.exit_code == (1 if "skipped=1" in summary else 0)


def test_remote_tag_through_a_file_url(upstream: Upstream, tmp_path: Path) -> None:
    result = extract(
        upstream.url,
        "--rev",
        "v1",
        "--repo-name",
        "acme/widgets",
        "--cache-dir",
        str(tmp_path / "c"),
    )
    sites = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(s["analyzedSha"], s["lineNumber"]) for s in sites] == [(upstream.c1, 11)]
    assert result.exit_code == 0


def test_missing_repo_name_exits_2_with_the_fix(tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path / "src", origin="https://git.example.com/widgets.git")
    result = extract(str(upstream.path), "--cache-dir", str(tmp_path / "c"))
    assert (result.exit_code, result.stderr) == (
        2,
        (
            f"Error: cannot tell the GitHub owner/name of {upstream.path}: "
            "pass --repo-name OWNER/NAME\n"
        ),
    )
    assert result.stdout == ""


def test_help_states_the_exit_codes() -> None:
    result = CliRunner().invoke(main, ["extract", "--help"])
    text = " ".join(result.stdout.split())
    assert (
        "Exit codes: 0 done, 1 some files were skipped (with --strict: nothing is written), "
        "2 usage or input error, 130 interrupted (files analysed so far stay cached)." in text
    )


# -- extract_snapshot -----------------------------------------------------------------------

CHECKER = """\
def check_{n}(value: int) -> None:
    if value > {n}:
        raise ValueError("value must be at most {n}")
"""


def test_same_bytes_under_two_paths_keep_their_own_paths(tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path / "src")
    text = CHECKER.format(n=1)
    commit(upstream.path, {"a/check.py": text, "b/check.py": text}, "twins")
    snap = open_source(str(upstream.path), None, repo_name=None, cache_dir=tmp_path)
    with Store(tmp_path / "store.sqlite") as store:
        for _ in range(2):  # cold, then every analysis from the cache
            extraction = extract_snapshot(snap, Rules(), store=store, exclude=["widgets/*"])
            assert [(s.filePath, s.githubUrl.rsplit("/", 2)[-2:]) for s in extraction.sites] == [
                ("a/check.py", ["a", "check.py#L1-L3"]),
                ("b/check.py", ["b", "check.py#L1-L3"]),
            ]
    assert extraction.stats.files_reused == 2


def test_worker_processes_give_what_one_process_gives(tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path / "src")
    commit(upstream.path, {f"checks/c{n:02d}.py": CHECKER.format(n=n) for n in range(30)}, "many")
    snap = open_source(str(upstream.path), None, repo_name=None, cache_dir=tmp_path)
    pooled = extract_snapshot(snap, Rules(), store=None, workers=2)
    single = extract_snapshot(snap, Rules(), store=None, workers=1)
    assert pooled == single
    assert [s.filePath for s in pooled.sites][:2] == ["checks/c00.py", "checks/c01.py"]
    assert len(pooled.sites) == 32
    assert pooled.stats.model_dump() == {
        "files_total": 32,
        "files_candidate": 32,
        "files_parsed": 32,
        "files_reused": 0,
    }


def test_release_tag_pins_the_github_url(upstream: Upstream, tmp_path: Path) -> None:
    snap = open_source(str(upstream.path), "v1", repo_name=None, cache_dir=tmp_path)
    snap = replace(snap, url_ref="v1.0.0", path_prefix="python/")
    (site,) = extract_snapshot(snap, Rules(), store=None).sites
    assert (site.filePath, site.analyzedSha, site.githubUrl) == (
        "python/widgets/config.py",
        upstream.c1,
        "https://github.com/acme/widgets/blob/v1.0.0/python/widgets/config.py#L1-L11",
    )


@pytest.mark.parametrize(
    ("data", "candidate"),
    [
        (b'def check(x):\n    raise ValueError("no")\n', True),
        (b"def check(x):\n    raise TypeError('no')\n", False),  # no configured class
        (b"ERRORS = (ValueError, KeyError)\n", False),  # no raise
        (b"raise builtins.ValueError\n", True),
    ],
)
def test_byte_prefilter_needs_raise_and_a_class_name(data: bytes, candidate: bool) -> None:
    assert is_candidate(data, [b"ValueError"]) is candidate


@pytest.mark.parametrize(
    ("path", "include", "exclude", "kept"),
    [
        ("vllm/config/model.py", [], [], True),
        ("vllm/config/model.pyi", [], [], False),
        ("README.md", [], [], False),
        ("vllm/config/model.py", ["vllm/config/*"], [], True),
        ("vllm/engine/arg_utils.py", ["vllm/config/*"], [], False),
        ("tests/test_config.py", [], ["tests/*"], False),
        ("tests/test_config.py", ["tests/*"], [], False),  # test code is never mined
        ("src/diffusers/utils/testing_utils.py", [], [], False),
        ("vllm/config/model.py", ["vllm/*"], ["*/model.py"], False),
    ],
)
def test_globs_select_python_files(
    path: str, include: list[str], exclude: list[str], kept: bool
) -> None:
    assert selected(path, include, exclude) is kept


def test_analysis_token_changes_with_the_rules() -> None:
    # equal within one process (memo_token is cached); tests/test_determinism.py compares
    # the tokens of two processes
    assert analysis_token(Rules()) == analysis_token(Rules())
    assert analysis_token(Rules()) != analysis_token(
        Rules(error_classes=("ValueError", "TypeError"))
    )
