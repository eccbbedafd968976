"""pypi:NAME==VERSION -> a cached git repository with fixed dates, from a local package index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.source import SourceError, open_source
from pipeline.source.release import commit_files, parse_spec
from pipeline.source.upstream import github_of, sdist_prefix
from tests.git_fixtures import git
from tests.release_fixtures import BACKEND, FAILING_BACKEND, LIMITS, make_sdist, make_wheel


def test_sdist_release_gives_the_same_commit_every_time(index: Path, tmp_path: Path) -> None:
    make_sdist(index, "tinyval", "1.0", {"tinyval/__init__.py": "", "tinyval/limits.py": LIMITS})
    first = open_source(
        "pypi:tinyval==1.0", None, repo_name="acme/tinyval", cache_dir=tmp_path / "a"
    )
    second = open_source(
        "pypi:tinyval==1.0", None, repo_name="acme/tinyval", cache_dir=tmp_path / "b"
    )
    assert first.sha == second.sha
    assert [f.path for f in first.files] == [
        "PKG-INFO",
        "pyproject.toml",
        "tinybackend.py",
        "tinyval/__init__.py",
        "tinyval/limits.py",
    ]
    assert first.origin == "pypi:tinyval==1.0"
    assert first.url_ref == "v1.0"
    assert first.repo == "acme/tinyval"
    repo = tmp_path / "a" / "releases" / "tinyval.git"
    assert git(repo, "rev-parse", "refs/tags/tinyval==1.0") == first.sha
    assert git(repo, "log", "-1", "--format=%an <%ae> %aI | %cn <%ce> %cI", first.sha) == (
        "vmine <vmine@localhost> 2000-01-01T00:00:00+00:00 | "
        "vmine <vmine@localhost> 2000-01-01T00:00:00+00:00"
    )


def test_cached_release_is_reused_without_pip(index: Path, tmp_path: Path) -> None:
    make_wheel(index, "tinyval", "1.0", {"tinyval/limits.py": LIMITS.encode()})
    first = open_source("pypi:tinyval==1.0", None, repo_name=None, cache_dir=tmp_path)
    (index / "tinyval-1.0-py3-none-any.whl").unlink()
    again = open_source("pypi:tinyval==1.0", None, repo_name=None, cache_dir=tmp_path)
    assert again.sha == first.sha


def test_wheel_is_used_when_there_is_no_sdist_and_binaries_stay_out(
    index: Path, tmp_path: Path
) -> None:
    make_wheel(
        index,
        "tinywheel",
        "2.0",
        {
            "tinywheel/__init__.py": b"",
            "tinywheel/limits.py": LIMITS.encode(),
            "tinywheel/_speedups.so": b"\x7fELF\x02\x01\x01\x00\x00binary",
        },
    )
    snap = open_source("pypi:tinywheel==2.0", None, repo_name=None, cache_dir=tmp_path)
    assert [f.path for f in snap.files] == [
        "tinywheel-2.0.dist-info/METADATA",
        "tinywheel-2.0.dist-info/WHEEL",
        "tinywheel/__init__.py",
        "tinywheel/limits.py",
    ]
    assert snap.repo is None


def test_known_project_maps_onto_its_github_tree(index: Path, tmp_path: Path) -> None:
    make_wheel(index, "sglang", "0.0.1", {"sglang/limits.py": LIMITS.encode()})
    result = CliRunner().invoke(
        main, ["extract", "pypi:sglang==0.0.1", "--cache-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.stderr
    site = json.loads(result.stdout)
    assert (site["repo"], site["filePath"], site["githubUrl"]) == (
        "sgl-project/sglang",
        "python/sglang/limits.py",
        "https://github.com/sgl-project/sglang/blob/v0.0.1/python/sglang/limits.py#L1-L3",
    )
    assert (
        site["analyzedSha"]
        == open_source("pypi:sglang==0.0.1", None, repo_name=None, cache_dir=tmp_path).sha
    )


def test_commit_files_is_deterministic_and_order_free(tmp_path: Path) -> None:
    one = commit_files(tmp_path / "a.git", {"b.py": b"x = 1\n", "a/c.py": b""}, message="m")
    two = commit_files(tmp_path / "b.git", {"a/c.py": b"", "b.py": b"x = 1\n"}, message="m")
    # the SHA that `git commit` gives for these files with the same identity and dates
    assert one == two == "53e862dc6d150bc4b43dbb3311e5426a2c84c338"


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("pypi:vllm==0.33.0", ("vllm", "0.33.0")),
        ("pypi:SGLang==0.5.10.post1", ("sglang", "0.5.10.post1")),
        ("pypi:my_pkg==1.0rc1", ("my-pkg", "1.0rc1")),
    ],
)
def test_release_spec_is_parsed(spec: str, parsed: tuple[str, str]) -> None:
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["pypi:vllm", "pypi:vllm>=0.3", "pypi:==1.0", "pypi:vllm==1.0;x"])
def test_malformed_release_spec_is_refused(spec: str) -> None:
    with pytest.raises(SourceError) as info:
        parse_spec(spec)
    assert str(info.value) == f"a release SOURCE must read pypi:NAME==VERSION, got {spec!r}"


def test_missing_release_is_refused_in_one_line(index: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["extract", "pypi:nothere==1.0", "--cache-dir", str(tmp_path)]
    )
    assert result.exit_code == 2
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(errors) == 1
    assert errors[0].startswith(
        f"Error: cannot download nothere==1.0: no wheel of nothere==1.0 in {index},"
    )


# --- where a release lives on GitHub: metadata and sdist layout ---------------------------

PORTS = """\
from dataclasses import dataclass


@dataclass
class ServerOptions:
    port: int = 8000

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be between 1 and 65535, got {self.port}")
"""


def _src_layout_release(index: Path, metadata: str, backend: str = BACKEND) -> None:
    """acme-ports 1.0: the wheel holds acme_ports/, the sdist src/acme_ports/."""
    make_wheel(
        index,
        "acme_ports",
        "1.0",
        {
            "acme_ports/__init__.py": b"",
            "acme_ports/options.py": PORTS.encode(),
        },
        metadata,
    )
    make_sdist(
        index,
        "acme_ports",
        "1.0",
        {
            "src/acme_ports/__init__.py": "",
            "src/acme_ports/options.py": PORTS,
            "tests/test_options.py": "def test_port():\n    pass\n",
        },
        backend,
    )


def _extract(tmp_path: Path, *args: str) -> dict:
    result = CliRunner().invoke(
        main, ["extract", "pypi:acme-ports==1.0", "--cache-dir", str(tmp_path / "cache"), *args]
    )
    assert result.exit_code == 0, result.stderr
    site = json.loads(result.stdout)
    return {key: site[key] for key in ("repo", "filePath", "githubUrl")}


def test_wheel_and_sdist_release_maps_onto_its_src_layout_and_project_url(
    index: Path, tmp_path: Path
) -> None:
    _src_layout_release(
        index,
        "Project-URL: Documentation, https://acme.example/ports\n"
        "Project-URL: Source, https://github.com/acme/ports\n",
    )
    assert _extract(tmp_path, "--tag-format", "ports-{version}") == {
        "repo": "acme/ports",
        "filePath": "src/acme_ports/options.py",
        "githubUrl": "https://github.com/acme/ports/blob/ports-1.0/src/acme_ports/options.py"
        "#L1-L10",
    }
    # the files analysed are the wheel's: the sdist's tests are not among them
    snap = open_source("pypi:acme-ports==1.0", None, repo_name=None, cache_dir=tmp_path / "cache")
    assert [f.path for f in snap.files] == [
        "acme_ports-1.0.dist-info/METADATA",
        "acme_ports-1.0.dist-info/WHEEL",
        "acme_ports/__init__.py",
        "acme_ports/options.py",
    ]
    assert (snap.repo, snap.path_prefix, snap.url_ref) == ("acme/ports", "src/", "v1.0")


def test_a_project_url_into_a_monorepo_gives_its_folder(index: Path, tmp_path: Path) -> None:
    _src_layout_release(
        index, "Project-URL: repository, https://github.com/acme/mono/tree/main/libs/ports\n"
    )
    assert _extract(tmp_path) == {
        "repo": "acme/mono",
        "filePath": "libs/ports/src/acme_ports/options.py",
        "githubUrl": "https://github.com/acme/mono/blob/v1.0/libs/ports/src/acme_ports/options.py"
        "#L1-L10",
    }


def test_an_sdist_pip_cannot_prepare_still_gives_its_layout(index: Path, tmp_path: Path) -> None:
    _src_layout_release(index, "Home-page: https://github.com/acme/ports\n", FAILING_BACKEND)
    assert _extract(tmp_path)["filePath"] == "src/acme_ports/options.py"


def test_path_prefix_and_repo_name_override_what_the_release_says(
    index: Path, tmp_path: Path
) -> None:
    _src_layout_release(index, "Project-URL: Source, https://github.com/acme/ports\n")
    assert _extract(tmp_path, "--path-prefix", "python", "--repo-name", "fork/ports") == {
        "repo": "fork/ports",
        "filePath": "python/acme_ports/options.py",
        "githubUrl": "https://github.com/fork/ports/blob/v1.0/python/acme_ports/options.py#L1-L10",
    }


def test_a_release_cached_before_its_layout_was_known_is_built_again(
    index: Path, tmp_path: Path
) -> None:
    _src_layout_release(index, "Project-URL: Source, https://github.com/acme/ports\n")
    first = open_source("pypi:acme-ports==1.0", None, repo_name=None, cache_dir=tmp_path)
    (tmp_path / "releases" / "acme-ports==1.0.upstream.json").unlink()
    again = open_source("pypi:acme-ports==1.0", None, repo_name=None, cache_dir=tmp_path)
    assert (again.sha, again.path_prefix) == (first.sha, "src/")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["pypi:acme-ports==1.0", "--tag-format", "v{major}"],
            "Error: --tag-format: may hold only {version}, got 'v{major}'",
        ),
        (
            ["pypi:acme-ports==1.0", "--tag-format", "v{version"],
            "Error: --tag-format: expected '}' before end of string, got 'v{version'",
        ),
        (
            ["pypi:acme-ports==1.0", "--path-prefix", "../up"],
            "Error: --path-prefix must be a relative folder such as src/, got '../up'",
        ),
        (
            [".", "--tag-format", "{version}"],
            "Error: --tag-format applies only to a pypi:NAME==VERSION SOURCE",
        ),
    ],
)
def test_bad_tag_format_and_path_prefix_are_refused_in_one_line(
    index: Path, tmp_path: Path, args: list[str], error: str
) -> None:
    result = CliRunner().invoke(main, ["extract", *args, "--cache-dir", str(tmp_path)])
    assert (result.exit_code, result.stderr.strip().splitlines()) == (2, [error])


# (case, metadata lines, (owner/name, folder) found)
GITHUB_OF = [
    (
        "Source wins over Homepage",
        "Project-URL: Homepage, https://github.com/acme/site\n"
        "Project-URL: Source, https://github.com/acme/ports.git\n",
        ("acme/ports", ""),
    ),
    (
        "labels are normalised; a tree URL gives its folder",
        "Project-URL: Source Code, https://github.com/acme/mono/tree/master/libs/core/\n",
        ("acme/mono", "libs/core/"),
    ),
    (
        "Repository, then Homepage, then Home-page; GitHub URLs only",
        "Home-page: https://github.com/acme/old\n"
        "Project-URL: Repository, https://gitlab.com/acme/ports\n"
        "Project-URL: homepage, https://github.com/acme/ports/\n",
        ("acme/ports", ""),
    ),
    (
        "Home-page alone",
        "Home-page: https://github.com/huggingface/peft\n",
        ("huggingface/peft", ""),
    ),
    (
        "an issues URL is no repository URL",
        "Project-URL: Source, https://github.com/acme/ports/issues\n",
        None,
    ),
    (
        "a folder that climbs out is dropped",
        "Project-URL: Source, https://github.com/acme/ports/tree/main/../x\n",
        ("acme/ports", ""),
    ),
    ("nothing on GitHub", "Project-URL: Source, https://example.com/ports\n", None),
    # a name no repository has would put the dataset outside its folder
    (
        "a repository named .. is none",
        "Project-URL: Source, https://github.com/acme/..\n"
        "Home-page: https://github.com/acme/ports\n",
        ("acme/ports", ""),
    ),
]


@pytest.mark.parametrize(
    ("metadata", "found"), [case[1:] for case in GITHUB_OF], ids=[case[0] for case in GITHUB_OF]
)
def test_github_repository_from_metadata(metadata: str, found) -> None:
    assert github_of("Metadata-Version: 2.1\nName: x\nVersion: 1\n" + metadata) == found


# (case, wheel paths, sdist paths, the sdist folder holding the wheel's package)
LAYOUTS = [
    (
        "src layout",
        ["ports/__init__.py", "ports/a.py", "ports-1.dist-info/METADATA"],
        ["PKG-INFO", "src/ports/__init__.py", "src/ports/a.py", "tests/a.py"],
        "src/",
    ),
    (
        "flat layout: files that also sit deeper do not win",
        ["ports/__init__.py", "ports/a.py"],
        ["ports/__init__.py", "ports/a.py", "vendor/ports/a.py"],
        "",
    ),
    (
        "a sdist that holds less than half of the wheel says nothing",
        ["ports/a.py", "ports/b.py", "ports/c.py"],
        ["lib/ports/a.py"],
        "",
    ),
    ("a single-module wheel", ["ports.py"], ["python/ports.py", "setup.py"], "python/"),
]


@pytest.mark.parametrize(
    ("wheel", "sdist", "prefix"), [case[1:] for case in LAYOUTS], ids=[case[0] for case in LAYOUTS]
)
def test_sdist_layout_prefix(wheel: list[str], sdist: list[str], prefix: str) -> None:
    assert sdist_prefix(wheel, sdist) == prefix


def test_run_takes_the_release_mapping_flags_too(index: Path, tmp_path: Path) -> None:
    _src_layout_release(index, "Project-URL: Source, https://github.com/acme/ports\n")
    result = CliRunner().invoke(
        main,
        [
            "run",
            "pypi:acme-ports==1.0",
            "--llm",
            "offline",
            "--tag-format",
            "ports-{version}",
            "--path-prefix",
            "lib/",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-o",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.stderr
    (index_file,) = (tmp_path / "out").rglob("index.jsonl")
    (record_file,) = index_file.parent.glob("records/*.json")
    record = json.loads(record_file.read_text())["record"]
    assert (record["repo"], record["filePath"], record["githubUrl"]) == (
        "acme/ports",
        "lib/acme_ports/options.py",
        "https://github.com/acme/ports/blob/ports-1.0/lib/acme_ports/options.py#L1-L10",
    )
