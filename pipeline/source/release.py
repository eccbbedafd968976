"""`pypi:NAME==VERSION` -> a cached local git repository holding the release, fixed dates."""

from __future__ import annotations

import json
import re
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pipeline.console import Console
from pipeline.output import write_atomic
from pipeline.source.archives import (
    DEFAULT_LIMITS,
    ArchiveFiles,
    ArchiveLimits,
    archive_paths,
    read_archive,
)
from pipeline.source.git import (
    FETCH_TIMEOUT,
    error_line,
    git_env,
    init_bare,
    make_snapshot,
    run_git,
)
from pipeline.source.pip_index import fetch_archives, pip_settings
from pipeline.source.snapshot import Snapshot, SourceError
from pipeline.source.upstream import Upstream, upstream_of

_SPEC = re.compile(
    r"^pypi:(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)=="
    r"(?P<version>[A-Za-z0-9](?:[A-Za-z0-9.+!_-]*[A-Za-z0-9])?)$"
)

# Where a published package's code lives on GitHub, and under which folder of that tree,
# for projects whose metadata and sdist do not tell (SGLang's sdist is built in python/).
GITHUB_OF = {"vllm": "vllm-project/vllm", "sglang": "sgl-project/sglang"}
PATH_PREFIX_OF = {"sglang": "python/"}
DEFAULT_TAG = "v{version}"

# Fixed identity and dates: the same files always give the same commit SHA.
_FIXED = {
    "GIT_AUTHOR_NAME": "vmine",
    "GIT_AUTHOR_EMAIL": "vmine@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "vmine",
    "GIT_COMMITTER_EMAIL": "vmine@localhost",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_spec(spec: str) -> tuple[str, str]:
    """`pypi:NAME==VERSION` -> (canonical name, version)."""
    match = _SPEC.fullmatch(spec)
    if not match:
        raise SourceError(f"a release SOURCE must read pypi:NAME==VERSION, got {spec!r}")
    return canonical_name(match["name"]), match["version"]


def open_release(
    spec: str,
    *,
    cache_dir: Path,
    repo_name: str | None = None,
    tag: str | None = None,
    path_prefix: str | None = None,
    console: Console | None = None,
) -> Snapshot:
    """The release as a Snapshot, built once into `<cache>/releases/NAME.git` and reused.

    Its files are the wheel's (what users install), else the sdist's. Unless given, owner/
    name comes from the distribution's metadata (else a table of known projects) and the
    path prefix from the sdist's layout and the project URL; `tag` is the format of the
    release's GitHub tag (default `v{version}`)."""
    name, version = parse_spec(spec)
    url_ref = tag_name(tag or DEFAULT_TAG, version)
    if path_prefix is not None:
        path_prefix = check_path_prefix(path_prefix)
    releases = Path(cache_dir) / "releases"
    git_dir = releases / f"{name}.git"
    ref = f"refs/tags/{name}=={version}"
    sha = tag_commit(git_dir, ref)
    upstream = _read_upstream(releases, name, version)
    if sha is None or upstream is None:
        if console is not None:
            console.line(f"downloading {name}=={version} (its wheel and its sdist, as files)")
        with tempfile.TemporaryDirectory(prefix="vmine-release-") as tmp:
            files, sdist_paths = fetch_release(name, version, Path(tmp), console)
        if not files:
            raise SourceError(f"{name}=={version}: the downloaded archive holds no text files")
        upstream = upstream_of(files, sdist_paths)
        sha = commit_files(git_dir, files, message=f"{name}=={version}")
        run_git(git_dir, "update-ref", ref, sha)
        _write_upstream(releases, name, version, upstream)
    if path_prefix is None:
        path_prefix = upstream.path_prefix or PATH_PREFIX_OF.get(name, "")
    return make_snapshot(
        git_dir,
        sha,
        repo=repo_name or upstream.repo or GITHUB_OF.get(name),
        origin=f"pypi:{name}=={version}",
        source=spec,
        url_ref=url_ref,
        path_prefix=path_prefix,
    )


MAX_TAG_FORMAT = 100  # characters: a tag is a short name, and its format can be no longer


def tag_format_problem(tag_format: str) -> str | None:
    """What is wrong with a tag format (None: nothing). It holds literal text and
    `{version}`, no other field, no format spec or conversion (`{version:>300000000}` would
    build a 300 MB tag), and at most MAX_TAG_FORMAT characters."""
    if len(tag_format) > MAX_TAG_FORMAT:
        return f"longer than {MAX_TAG_FORMAT} characters"
    try:
        fields = list(string.Formatter().parse(tag_format))
    except ValueError as exc:
        return f"{exc}, got {tag_format!r}"
    if any(
        field is not None and (field != "version" or spec or conversion)
        for _, field, spec, conversion in fields
    ):
        return f"may hold only {{version}}, got {tag_format!r}"
    return None


def tag_name(tag_format: str, version: str) -> str:
    """The release's GitHub tag: `tag_format` with `{version}` filled in (the only field)."""
    problem = tag_format_problem(tag_format) or _tag_problem(tag_format, version)
    if problem is not None:
        raise SourceError(f"--tag-format: {problem}")
    return tag_format.format(version=version)


def _tag_problem(tag_format: str, version: str) -> str | None:
    tag = tag_format.format(version=version)
    if not tag or tag.startswith("-") or any(ch.isspace() for ch in tag):
        return f"gives the tag {tag!r}, not a git tag"
    return None


def check_path_prefix(prefix: str) -> str:
    """A folder of the GitHub tree as `dir/` ('' for the top), or a one-line SourceError."""
    if not prefix:
        return ""
    cleaned = prefix.strip("/")
    if (
        prefix.startswith("/")
        or "\\" in prefix
        or any(part in ("", ".", "..") for part in cleaned.split("/"))
    ):
        raise SourceError(f"--path-prefix must be a relative folder such as src/, got {prefix!r}")
    return cleaned + "/"


# Bumped when what is remembered beside a release's repository changes meaning.
_UPSTREAM_VERSION = 1


def _upstream_path(releases: Path, name: str, version: str) -> Path:
    # `==` as in the tag: no PEP 503 name and no version holds `=`, so two releases never
    # share a file (with `-`, hx-col 1-1 and hx-col-1 1 did).
    return releases / f"{name}=={version}.upstream.json"


def _read_upstream(releases: Path, name: str, version: str) -> Upstream | None:
    """What was found out about the release when it was built; None when nothing was (a
    release cached by an older vmine is built again: the same files give the same commit)."""
    try:
        data = json.loads(_upstream_path(releases, name, version).read_text(encoding="utf-8"))
        if data.get("version") != _UPSTREAM_VERSION:
            return None
        repo, prefix = data["repo"], data["path_prefix"]
    except (OSError, ValueError, KeyError, AttributeError):
        return None
    if not (repo is None or isinstance(repo, str)) or not isinstance(prefix, str):
        return None
    return Upstream(repo, prefix)


def _write_upstream(releases: Path, name: str, version: str, upstream: Upstream) -> None:
    path = _upstream_path(releases, name, version)
    data = {
        "version": _UPSTREAM_VERSION,
        "repo": upstream.repo,
        "path_prefix": upstream.path_prefix,
    }
    write_atomic(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))


def tag_commit(git_dir: Path, ref: str) -> str | None:
    """The commit a tag (`refs/tags/...`) of the repository points to; None if it has none."""
    if not (git_dir / "HEAD").exists():
        return None
    done = run_git(git_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return done.stdout.decode().strip() if done.returncode == 0 else None


def fetch_release(
    name: str,
    version: str,
    into: Path,
    console: Console | None = None,
    limits: ArchiveLimits = DEFAULT_LIMITS,
) -> tuple[dict[str, bytes], list[str] | None]:
    """The release's files, and the paths of its sdist's files when the files are a wheel's
    (None when no sdist could be had). A wheel is preferred: it holds what users run.

    Nothing of the release runs and nothing is unpacked: the wheel and the sdist are
    fetched as files from the indexes pip is configured with (pipeline/source/pip_index.py)
    and read by pipeline/source/archives.py. pip is asked for the wheel only when one of
    those places could not be read here (it may reach it through settings vmine does not
    copy), and then it may take only a wheel: it never builds one."""
    wheel, sdist = fetch_archives(name, version, into, pip_settings(), timeout=FETCH_TIMEOUT)
    wheel_path, wheel_reason = wheel.path, wheel.why
    if wheel_path is None and wheel.unread:
        wheel_path, wheel_reason = _PipWheel(name, version, into / "pip").result()
        if wheel_path is None:
            wheel_reason = f"pip found no wheel ({wheel_reason})"
    if wheel_path is not None:
        found = read_archive(wheel_path, limits)
        layout = None if sdist.path is None else archive_paths(sdist.path, limits)
    elif sdist.path is not None:
        found, layout = read_archive(sdist.path, limits), None
    else:
        raise SourceError(f"cannot download {name}=={version}: {wheel_reason}, and {sdist.why}")
    if console is not None:
        _report_left_out(console, found)
    return found.files, layout


def _report_left_out(console: Console, found: ArchiveFiles, shown: int = 10) -> None:
    for path, reason in found.left_out[:shown]:
        console.line(f"left out of the release: {path}: {reason}")
    if len(found.left_out) > shown:
        console.line(f"left out of the release: {len(found.left_out) - shown} more files")


def pip_wheel_command(name: str, version: str, target: Path) -> list[str]:
    """`pip download` of the release's wheel only: pip never builds or unpacks anything
    when it may take only wheels (the user's index settings apply)."""
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--quiet",
        "--disable-pip-version-check",
        "--only-binary=:all:",
        "-d",
        str(target),
        f"{name}=={version}",
    ]


class _PipWheel:
    """`pip download` of the release's wheel, in the background."""

    def __init__(self, name: str, version: str, target: Path) -> None:
        self._target = target
        self._errors = tempfile.TemporaryFile()  # a pipe could fill up while nobody reads it
        self._process = subprocess.Popen(
            pip_wheel_command(name, version, target),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._errors,
        )
        self._deadline = time.monotonic() + FETCH_TIMEOUT

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()
        self._errors.close()

    def result(self) -> tuple[Path | None, str]:
        """The wheel pip downloaded into the target, or None and pip's last error line."""
        try:
            code = self._process.wait(timeout=max(0.0, self._deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.stop()
            return None, "pip timed out"
        except BaseException:
            self.stop()
            raise
        self._errors.seek(0)
        stderr = self._errors.read()
        self._errors.close()
        target = self._target
        wheels = sorted(target.glob("*.whl")) if target.exists() else []
        if code == 0 and wheels:
            return wheels[0], ""
        lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines()]
        errors = [ln for ln in lines if ln.startswith("ERROR:")] or [ln for ln in lines if ln]
        return None, errors[-1][:300] if errors else f"pip exited {code}"


def commit_files(
    git_dir: Path, files: dict[str, bytes], *, message: str, parent: str | None = None
) -> str:
    """Commit these files (sorted, mode 100644) into a bare repository with the fixed
    identity and dates; returns the commit SHA (the same files always give the same SHA)."""
    init_bare(git_dir)
    paths = sorted(files)
    blobs = _write_blobs(git_dir, [files[p] for p in paths])
    with tempfile.TemporaryDirectory(prefix="vmine-index-") as tmp:
        env = git_env(GIT_INDEX_FILE=str(Path(tmp) / "index"))
        listing = "".join(f"100644 blob {b}\t{p}\0" for p, b in zip(paths, blobs, strict=True))
        steps = [
            (("update-index", "--add", "-z", "--index-info"), listing.encode()),
            (("write-tree",), None),
        ]
        out = b""
        for args, data in steps:
            done = run_git(git_dir, *args, input=data, env=env)
            if done.returncode != 0:
                raise SourceError(f"git {args[0]} failed: {error_line(done.stderr)}")
            out = done.stdout
    tree = out.decode().strip()
    args = ["commit-tree", tree, "-m", message]
    if parent:
        args += ["-p", parent]
    done = run_git(git_dir, *args, env=git_env(**_FIXED))
    if done.returncode != 0:
        raise SourceError(f"git commit-tree failed: {error_line(done.stderr)}")
    return done.stdout.decode().strip()


def _write_blobs(git_dir: Path, contents: list[bytes]) -> list[str]:
    """Write blobs through one `git hash-object --stdin-paths` over temporary files."""
    with tempfile.TemporaryDirectory(prefix="vmine-blobs-") as tmp:
        names = []
        for index, data in enumerate(contents):
            path = Path(tmp) / str(index)
            path.write_bytes(data)
            names.append(str(path))
        done = run_git(
            git_dir,
            "hash-object",
            "-w",
            "--no-filters",
            "--stdin-paths",
            input="\n".join(names).encode(),
        )
    if done.returncode != 0:
        raise SourceError(f"git hash-object failed: {error_line(done.stderr)}")
    return done.stdout.decode().split()
