"""SOURCE + REV -> a `Snapshot`: a local repository, a remote one (mirrored in the cache) or
a `pypi:` release; dangerous inputs are refused before git sees them."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.cache_dir import default_cache_dir, resolve_cache_dir
from pipeline.console import Console
from pipeline.dataset.formats import REPO_NAME_RE
from pipeline.source.git import (
    local_git_dir,
    make_snapshot,
    open_remote,
    repo_from_url,
    resolve_rev,
    run_git,
)
from pipeline.source.release import open_release
from pipeline.source.snapshot import Snapshot, SourceError, TreeFile

# `ext::cmd`, `fd::3`: git remote helpers that run commands; refused (also in pipeline.toml).
TRANSPORT_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
_URL = re.compile(r"^(https?|ssh|git|file)://", re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP = re.compile(r"^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:(?!/)")


def check_repo_name(name: str) -> str:
    if not REPO_NAME_RE.fullmatch(name):
        raise SourceError(f"--repo-name must be OWNER/NAME, got {name!r}")
    return name


def _refuse_option_like(source: str, rev: str | None) -> None:
    if not source.strip():
        raise SourceError(
            "SOURCE is empty: give a path, a git URL, OWNER/NAME or pypi:NAME==VERSION"
        )
    if rev is not None and not rev.strip():
        raise SourceError("REV is empty: give a commit SHA, a tag or a branch, or leave --rev out")
    if source.startswith("-"):
        raise SourceError(f"SOURCE must not start with '-': {source!r}")
    if rev is not None and rev.startswith("-"):
        raise SourceError(f"REV must not start with '-': {rev!r}")
    if TRANSPORT_URL.match(source):
        raise SourceError(
            f"refusing the git transport URL {source!r}: use a path, an https://, ssh:// "
            "or file:// URL, or OWNER/NAME"
        )


def _is_url(source: str) -> bool:
    return bool(_URL.match(source) or _SCP.match(source))


def open_source(
    source: str,
    rev: str | None,
    *,
    repo_name: str | None,
    cache_dir: Path,
    console: Console | None = None,
    github: str | None = None,
    tag: str | None = None,
    path_prefix: str | None = None,
) -> Snapshot:
    """Resolve SOURCE at REV to a Snapshot; `github`, `tag` (the tag format) and
    `path_prefix` only apply to `pypi:` releases (see pipeline/source/release.py)."""
    _refuse_option_like(source, rev)
    if repo_name is not None:
        check_repo_name(repo_name)
    if not source.startswith("pypi:"):
        for flag, value in (("--tag-format", tag), ("--path-prefix", path_prefix)):
            if value is not None:
                raise SourceError(f"{flag} applies only to a pypi:NAME==VERSION SOURCE")
    if source.startswith("pypi:"):
        if rev is not None:
            raise SourceError("--rev does not apply to a pypi: SOURCE (the version pins it)")
        return open_release(
            source,
            cache_dir=Path(cache_dir),
            repo_name=repo_name or github,
            tag=tag,
            path_prefix=path_prefix,
            console=console,
        )
    path = Path(source).expanduser()
    if not _is_url(source) and path.exists():
        return _open_local(path, source, rev, repo_name)
    return open_remote(remote_url(source), source, rev, repo_name, Path(cache_dir), console)


def remote_url(source: str) -> str:
    """The git URL a SOURCE that is no local path names (OWNER/NAME means GitHub)."""
    if _is_url(source):
        return source
    if REPO_NAME_RE.fullmatch(source) and not source.startswith("."):
        return f"https://github.com/{source}.git"
    if _SCHEME.match(source):
        raise SourceError(f"unsupported URL scheme in {source!r}: use https://, ssh:// or file://")
    raise SourceError(
        f"{source!r} is not an existing path, a git URL, OWNER/NAME or pypi:NAME==VERSION"
    )


def _open_local(path: Path, source: str, rev: str | None, repo_name: str | None) -> Snapshot:
    git_dir = local_git_dir(path)
    sha = resolve_rev(git_dir, rev or "HEAD", where=source)
    origin_url = run_git(git_dir, "config", "--get", "remote.origin.url").stdout.decode().strip()
    repo = repo_name or repo_from_url(origin_url)
    return make_snapshot(git_dir, sha, repo=repo, origin="local", source=source)


__all__ = [
    "Snapshot",
    "SourceError",
    "TreeFile",
    "default_cache_dir",
    "open_source",
    "resolve_cache_dir",
]
