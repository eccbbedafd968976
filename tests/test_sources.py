"""SOURCE + REV -> Snapshot: local repositories, file:// remotes, refusals with one-line reasons."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.source import (
    Snapshot,
    SourceError,
    TreeFile,
    default_cache_dir,
    open_source,
    remote_url,
)
from pipeline.source.git import repo_from_url
from tests.git_fixtures import CONFIG_V1, CONFIG_V2, Upstream, commit, git, make_upstream


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return make_upstream(tmp_path / "src")


def _open(source: str, rev: str | None, cache: Path, repo_name: str | None = None) -> Snapshot:
    return open_source(source, rev, repo_name=repo_name, cache_dir=cache)


# -- local repositories ---------------------------------------------------------------------


def test_local_head_lists_every_file_with_its_blob(upstream: Upstream, tmp_path: Path) -> None:
    snap = _open(str(upstream.path), None, tmp_path / "cache")
    assert snap.sha == upstream.c2
    assert snap.url_ref == upstream.c2
    assert snap.origin == "local"
    assert snap.path_prefix == ""
    assert snap.repo == "acme/widgets"
    blob = git(upstream.path, "rev-parse", "HEAD:widgets/config.py")
    assert snap.files == [
        TreeFile("README.md", git(upstream.path, "rev-parse", "HEAD:README.md")),
        TreeFile("widgets/broken.py", git(upstream.path, "rev-parse", "HEAD:widgets/broken.py")),
        TreeFile("widgets/config.py", blob),
    ]


@pytest.mark.parametrize(
    ("rev", "expected"),
    [
        ("v1", "c1"),  # annotated tag, peeled to its commit
        ("v2", "c2"),  # lightweight tag
        ("feature", "feature"),  # branch
        ("main", "c2"),
        ("HEAD~1", "c1"),
    ],
)
def test_local_rev_names_resolve_to_40_hex(
    upstream: Upstream, tmp_path: Path, rev: str, expected: str
) -> None:
    snap = _open(str(upstream.path), rev, tmp_path / "cache")
    assert snap.sha == getattr(upstream, expected)


def test_abbreviated_sha_resolves_to_the_full_sha(upstream: Upstream, tmp_path: Path) -> None:
    snap = _open(str(upstream.path), upstream.c1[:8], tmp_path / "cache")
    assert snap.sha == upstream.c1
    assert [f.path for f in snap.files] == ["README.md", "widgets/config.py"]


def test_bare_repository_is_a_local_source(upstream: Upstream, tmp_path: Path) -> None:
    snap = _open(str(upstream.bare), "v1", tmp_path / "cache", repo_name="acme/widgets")
    assert snap.sha == upstream.c1


_OPENED = """\
import sys
from pathlib import Path
from pipeline.mine.opening import open_importing
before = {name.split(".")[0] for name in sys.modules}
snap = open_importing(sys.argv[1], None, cache_dir=Path(sys.argv[2]))
after = {name.split(".")[0] for name in sys.modules}
print(snap.sha, " ".join(sorted(before & {"pydantic", "libcst"})), sep="\\n")
print(" ".join(sorted(after & {"pydantic", "libcst"})))
"""


def test_a_source_opens_before_the_models_load_and_the_stage_imports_beside_it(
    upstream: Upstream, tmp_path: Path
) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _OPENED, str(upstream.path), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        check=True,
    )
    sha, before, after = result.stdout.split("\n")[:3]
    assert sha == upstream.c2
    assert before == ""  # the source stage loads no models (nor libcst)
    assert after == "libcst pydantic"  # imported by the other thread while it opened


def test_read_blobs_gives_contents_in_the_order_asked(upstream: Upstream, tmp_path: Path) -> None:
    snap = _open(str(upstream.path), "v2", tmp_path / "cache")
    by_path = {f.path: f.blob for f in snap.files}
    wanted = [by_path["widgets/config.py"], by_path["README.md"]]
    assert list(snap.read_blobs(wanted)) == [
        (wanted[0], CONFIG_V2.encode()),
        (wanted[1], b"widgets\n"),
    ]


def test_contains_finds_needles_hidden_inside_longer_ones(
    upstream: Upstream, tmp_path: Path
) -> None:
    snap = _open(str(upstream.path), "v2", tmp_path / "cache")
    needles = ["--scheduling-policy", "--scheduling", "max_num_seqs", "--absent-flag", ""]
    assert snap.contains(needles) == {"--scheduling-policy", "--scheduling", "max_num_seqs"}


def test_contains_reads_the_commit_not_the_work_tree(upstream: Upstream, tmp_path: Path) -> None:
    snap = _open(str(upstream.path), "v1", tmp_path / "cache")
    assert snap.contains(["--scheduling-policy"]) == set()


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("https://github.com/vllm-project/vllm.git", "vllm-project/vllm"),
        ("https://github.com/vllm-project/vllm", "vllm-project/vllm"),
        ("https://github.com/sgl-project/sglang/", "sgl-project/sglang"),
        ("git@github.com:vllm-project/vllm.git", "vllm-project/vllm"),
        ("ssh://git@github.com/sgl-project/sglang.git", "sgl-project/sglang"),
        ("https://gitlab.com/acme/widgets.git", None),
        ("file:///srv/git/widgets.git", None),
    ],
)
def test_repo_name_comes_from_a_github_origin(url: str, repo: str | None) -> None:
    assert repo_from_url(url) == repo


def test_local_repository_without_github_origin_has_no_repo(
    tmp_path: Path,
) -> None:
    upstream = make_upstream(tmp_path / "src", origin="https://git.example.com/widgets.git")
    snap = _open(str(upstream.path), None, tmp_path / "cache")
    assert snap.repo is None
    with pytest.raises(SourceError) as info:
        snap.require_repo()
    assert str(info.value) == (
        f"cannot tell the GitHub owner/name of {upstream.path}: pass --repo-name OWNER/NAME"
    )


def test_default_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VMINE_CACHE_DIR", "/srv/vmine-cache")
    assert default_cache_dir() == Path("/srv/vmine-cache")


# -- remote repositories over file:// -------------------------------------------------------


def test_remote_tag_is_fetched_into_a_bare_mirror(upstream: Upstream, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    snap = _open(upstream.url, "v1", cache, repo_name="acme/widgets")
    assert snap.sha == upstream.c1
    assert snap.origin == "git"
    assert snap.git_dir.parent == cache / "git"
    assert git(snap.git_dir, "rev-parse", "--is-bare-repository") == "true"
    # one commit, no history
    assert git(snap.git_dir, "rev-list", "--count", "--all") == "1"
    contents = dict(snap.read_blobs(f.blob for f in snap.files))
    assert sorted(contents.values()) == sorted([b"widgets\n", CONFIG_V1.encode()])


@pytest.mark.parametrize(("rev", "expected"), [(None, "c2"), ("feature", "feature")])
def test_remote_head_and_branch(
    upstream: Upstream, tmp_path: Path, rev: str | None, expected: str
) -> None:
    snap = _open(upstream.url, rev, tmp_path / "cache")
    assert snap.sha == getattr(upstream, expected)


def test_remote_full_sha_is_reused_from_the_mirror_without_the_remote(
    upstream: Upstream, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = _open(upstream.url, upstream.feature, cache)
    shutil.rmtree(upstream.bare)
    again = _open(upstream.url, upstream.feature, cache)
    assert again.sha == first.sha == upstream.feature
    assert [f.path for f in again.files] == ["README.md", "widgets/config.py", "widgets/limits.py"]


def test_remote_abbreviated_sha_of_an_inner_commit_resolves(
    upstream: Upstream, tmp_path: Path
) -> None:
    # c1 is no ref tip (v1 is an annotated tag object), so only history can resolve it.
    snap = _open(upstream.url, upstream.c1[:10], tmp_path / "cache")
    assert snap.sha == upstream.c1


# -- refusals through the CLI: exit code 2, one line ---------------------------------------


def _refusal(args: list[str]) -> tuple[int, str]:
    """Exit code and the error part of stderr (a progress line such as `fetching URL` may
    come before it)."""
    result = CliRunner().invoke(main, ["extract", *args])
    lines = result.stderr.splitlines(keepends=True)
    errors = [line for line in lines if line.startswith("Error: ")]
    assert lines[len(lines) - len(errors) :] == errors  # the error closes stderr
    return result.exit_code, "".join(errors)


def test_ext_transport_is_refused(tmp_path: Path) -> None:
    code, err = _refusal(["ext::sh -c touch% /tmp/pwned", "--cache-dir", str(tmp_path)])
    assert (code, err) == (
        2,
        (
            "Error: refusing the git transport URL 'ext::sh -c touch% /tmp/pwned': use a path, "
            "an https://, ssh:// or file:// URL, or OWNER/NAME\n"
        ),
    )
    assert not Path("/tmp/pwned").exists()


def test_source_starting_with_dash_is_refused(tmp_path: Path) -> None:
    code, err = _refusal(["--cache-dir", str(tmp_path), "--", "--upload-pack=touch x"])
    assert (code, err) == (2, "Error: SOURCE must not start with '-': '--upload-pack=touch x'\n")


def test_rev_starting_with_dash_is_refused(upstream: Upstream, tmp_path: Path) -> None:
    code, err = _refusal(
        [str(upstream.path), "--rev=--output=/tmp/x", "--cache-dir", str(tmp_path)]
    )
    assert (code, err) == (2, "Error: REV must not start with '-': '--output=/tmp/x'\n")


def test_empty_rev_is_refused_not_taken_as_head(upstream: Upstream, tmp_path: Path) -> None:
    code, err = _refusal([str(upstream.path), "--rev", "", "--cache-dir", str(tmp_path)])
    assert (code, err) == (
        2,
        "Error: REV is empty: give a commit SHA, a tag or a branch, or leave --rev out\n",
    )


def test_empty_source_is_refused(tmp_path: Path) -> None:
    code, err = _refusal(["", "--cache-dir", str(tmp_path)])
    assert (code, err) == (
        2,
        "Error: SOURCE is empty: give a path, a git URL, OWNER/NAME or pypi:NAME==VERSION\n",
    )


def test_unknown_rev_is_refused(upstream: Upstream, tmp_path: Path) -> None:
    code, err = _refusal([str(upstream.path), "--rev", "v9", "--cache-dir", str(tmp_path)])
    assert (code, err) == (
        2,
        (
            f"Error: unknown revision 'v9' in {upstream.path}: pass a commit SHA, tag or branch "
            "that exists\n"
        ),
    )


def test_unknown_rev_of_a_remote_is_refused(upstream: Upstream, tmp_path: Path) -> None:
    code, err = _refusal([upstream.url, "--rev", "nope", "--cache-dir", str(tmp_path)])
    assert (code, err) == (
        2,
        (
            f"Error: unknown revision 'nope' in {upstream.url}: pass a commit SHA, tag or branch "
            "that exists\n"
        ),
    )


def test_folder_that_is_no_repository_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, err = _refusal([str(plain), "--cache-dir", str(tmp_path / "cache")])
    assert (code, err) == (2, f"Error: not a git repository: {plain}\n")


def test_folder_inside_a_repository_is_refused(upstream: Upstream, tmp_path: Path) -> None:
    inner = upstream.path / "widgets"
    code, err = _refusal([str(inner), "--cache-dir", str(tmp_path / "cache")])
    assert (code, err) == (
        2,
        f"Error: not a git repository: {inner} (it lies inside {upstream.path})\n",
    )


def test_unreachable_remote_is_refused_with_its_url(tmp_path: Path) -> None:
    url = (tmp_path / "gone.git").as_uri()
    code, err = _refusal([url, "--cache-dir", str(tmp_path / "cache")])
    assert code == 2
    assert err.startswith(f"Error: cannot reach {url}: fatal: ")
    assert err.count("\n") == 1


def test_source_that_is_nothing_known_is_refused(tmp_path: Path) -> None:
    code, err = _refusal(["no such thing", "--cache-dir", str(tmp_path)])
    assert (code, err) == (
        2,
        (
            "Error: 'no such thing' is not an existing path, a git URL, OWNER/NAME or "
            "pypi:NAME==VERSION\n"
        ),
    )


def test_bad_repo_name_is_refused(upstream: Upstream, tmp_path: Path) -> None:
    code, err = _refusal(
        [str(upstream.path), "--repo-name", "widgets", "--cache-dir", str(tmp_path)]
    )
    assert (code, err) == (2, "Error: --repo-name must be OWNER/NAME, got 'widgets'\n")


def test_server_refusing_a_sha_gets_a_full_fetch(
    upstream: Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c3 = commit(upstream.path, {"NOTES.md": "three\n"}, "three")
    commit(upstream.path, {"NOTES.md": "four\n"}, "four")
    git(upstream.path, "push", "-q", str(upstream.bare), "main")
    # Protocol v0 only serves advertised tips; c3 is none, so the depth-1 fetch is refused.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.version")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "0")
    snap = _open(upstream.url, c3, tmp_path / "cache")
    assert snap.sha == c3
    assert git(snap.git_dir, "rev-list", "--count", "--all") == "5"


@pytest.mark.parametrize(
    ("source", "url"),
    [
        ("vllm-project/vllm", "https://github.com/vllm-project/vllm.git"),
        ("https://github.com/sgl-project/sglang", "https://github.com/sgl-project/sglang"),
        ("git@github.com:acme/widgets.git", "git@github.com:acme/widgets.git"),
        (
            "ssh://git@git.example.com:2222/widgets.git",
            "ssh://git@git.example.com:2222/widgets.git",
        ),
        ("file:///srv/git/widgets.git", "file:///srv/git/widgets.git"),
    ],
)
def test_remote_sources_name_their_git_url(source: str, url: str) -> None:
    assert remote_url(source) == url


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "ftp://example.com/widgets.git",
            "unsupported URL scheme in 'ftp://example.com/widgets.git': use https://, ssh:// or "
            "file://",
        ),
        (
            "./missing/dir/here",
            "'./missing/dir/here' is not an existing path, a git URL, "
            "OWNER/NAME or pypi:NAME==VERSION",
        ),
    ],
)
def test_unknown_source_forms_are_refused(source: str, message: str) -> None:
    with pytest.raises(SourceError) as info:
        remote_url(source)
    assert str(info.value) == message


# --- a crafted tree: names git itself would never write -----------------------------------

CHECK = (
    'def check_size(cfg):\n    if cfg.size < 0:\n        raise ValueError("size must be >= 0")\n'
)


def _crafted_repo(tmp_path: Path, names: list[str]) -> Path:
    """A bare repository whose one commit's tree has `evil.py` in folders named `names`
    (made with `git mktree`, which checks no names), beside a plain `ok.py`."""
    repo = tmp_path / "crafted.git"
    git(tmp_path, "init", "-q", "--bare", str(repo))
    blob = git(repo, "hash-object", "-w", "--stdin", input=CHECK)
    inner = git(repo, "mktree", input=f"100644 blob {blob}\tevil.py\n")
    listing = "".join(f"040000 tree {inner}\t{name}\n" for name in names)
    tree = git(repo, "mktree", input=listing + f"100644 blob {blob}\tok.py\n")
    sha = git(repo, "commit-tree", tree, "-m", "crafted")
    git(repo, "update-ref", "refs/heads/main", sha)
    return repo


def test_a_crafted_tree_name_is_never_a_file_path(tmp_path: Path) -> None:
    repo = _crafted_repo(tmp_path, ["..", "."])
    result = CliRunner().invoke(
        main,
        [
            "extract",
            str(repo),
            "--rev",
            "main",
            "--repo-name",
            "acme/x",
            "--no-cache",
            "--cache-dir",
            str(tmp_path / "c"),
        ],
    )
    assert result.exit_code == 1, result.stderr
    assert [json.loads(line)["filePath"] for line in result.stdout.splitlines()] == ["ok.py"]
    assert "skipped: ../evil.py: not a safe path (a '..' or '.' part)" in result.stderr
    assert "skipped: ./evil.py: not a safe path (a '..' or '.' part)" in result.stderr


def test_a_tree_with_an_empty_name_is_refused_in_one_line(tmp_path: Path) -> None:
    repo = _crafted_repo(tmp_path, [""])  # would be /evil.py
    result = CliRunner().invoke(
        main,
        [
            "extract",
            str(repo),
            "--rev",
            "main",
            "--repo-name",
            "acme/x",
            "--cache-dir",
            str(tmp_path / "c"),
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: cannot list the tree of ")
    assert len(result.stderr.splitlines()) == 1
