"""`pypi:NAME==VERSION` -> a cached local git repository holding the release, fixed dates."""

from __future__ import annotations

import json
import os
import re
import string
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath

from pipeline.console import Console
from pipeline.output import write_atomic
from pipeline.source.git import (
    FETCH_TIMEOUT,
    error_line,
    git_env,
    init_bare,
    make_snapshot,
    run_git,
)
from pipeline.source.snapshot import MAX_TEXT_FILE, Snapshot, SourceError
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
            console.line(f"downloading {name}=={version} with pip")
        with tempfile.TemporaryDirectory(prefix="vmine-release-") as tmp:
            files, sdist_paths = fetch_release(name, version, Path(tmp))
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


def tag_name(tag_format: str, version: str) -> str:
    """The release's GitHub tag: `tag_format` with `{version}` filled in (the only field)."""
    try:
        fields = list(string.Formatter().parse(tag_format))
    except ValueError as exc:
        raise SourceError(f"--tag-format {tag_format!r}: {exc}") from None
    if any(
        field is not None and (field != "version" or spec or conversion)
        for _, field, spec, conversion in fields
    ):
        raise SourceError(f"--tag-format may hold only {{version}}, got {tag_format!r}")
    tag = tag_format.format(version=version)
    if not tag or tag.startswith("-") or any(ch.isspace() for ch in tag):
        raise SourceError(f"--tag-format {tag_format!r} gives the tag {tag!r}, not a git tag")
    return tag


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
    return releases / f"{name}-{version}.upstream.json"


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


def fetch_release(name: str, version: str, into: Path) -> tuple[dict[str, bytes], list[str] | None]:
    """The release's files, and the paths of its sdist's files when the files are a wheel's
    (None when no sdist could be had). A wheel is preferred: it holds what users run."""
    wheel, wheel_reason = _pip_download(name, version, into / "wheel", ("--only-binary", name))
    sdist = _sdist(name, version, into / "sdist")
    if wheel is not None:
        files = dict(release_files(wheel))
        return files, (None if sdist is None else [path for path, _ in _sdist_files(sdist)])
    if sdist is not None:
        return dict(_sdist_files(sdist)), None
    raise SourceError(f"cannot download {name}=={version} with pip: {wheel_reason}")


def _pip_download(
    name: str,
    version: str,
    target: Path,
    choice: tuple[str, ...],
    env: dict[str, str] | None = None,
) -> tuple[Path | None, str]:
    """The archive pip downloads into `target` (so the user's index settings apply), or
    None and pip's last error line."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--quiet",
        "--disable-pip-version-check",
        *choice,
        "-d",
        str(target),
        f"{name}=={version}",
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=FETCH_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return None, "pip timed out"
    archives = sorted(target.glob("*")) if target.exists() else []
    if done.returncode == 0 and archives:
        return archives[0], ""
    lines = [ln.strip() for ln in done.stderr.decode("utf-8", "replace").splitlines()]
    errors = [ln for ln in lines if ln.startswith("ERROR:")] or [ln for ln in lines if ln]
    return None, errors[-1] if errors else f"pip exited {done.returncode}"


def _sdist(name: str, version: str, into: Path) -> Path | None:
    """The release's sdist: its archive, or the folder pip unpacked it into.

    pip prepares an sdist's metadata before it saves the archive, and without build
    isolation (which could install vLLM's torch) that fails whenever the build backend is
    not installed here. With `--no-clean` pip leaves the unpacked sdist in its temporary
    build folder, under our TMPDIR; that folder is found by its PKG-INFO."""
    scratch = into / "tmp"
    scratch.mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(scratch), "TEMP": str(scratch), "TMP": str(scratch)}
    archive, _ = _pip_download(
        name,
        version,
        into / "dist",
        ("--no-binary", name, "--no-build-isolation", "--no-clean"),
        env,
    )
    if archive is not None:
        return archive
    for info in sorted(scratch.glob("*/*/PKG-INFO")) + sorted(scratch.glob("*/PKG-INFO")):
        headers = HeaderParser().parsestr(info.read_text("utf-8", "replace"), headersonly=True)
        if (
            canonical_name(str(headers.get("Name", ""))) == name
            and str(headers.get("Version", "")).strip() == version
        ):
            return info.parent
    return None


def _sdist_files(sdist: Path) -> Iterator[tuple[str, bytes]]:
    """(posix path, bytes) of an sdist's text files, from its archive or unpacked folder."""
    if sdist.is_dir():
        for path in sorted(sdist.rglob("*")):
            if path.is_symlink() or not path.is_file():
                continue
            relative = _safe_path(path.relative_to(sdist).as_posix())
            data = path.read_bytes()
            if relative is not None and _is_text(relative, data):
                yield relative, data
    else:
        yield from release_files(sdist)


def release_files(archive: Path) -> Iterator[tuple[str, bytes]]:
    """(posix path, bytes) of the text files of an sdist or wheel; an sdist's top folder
    `NAME-VERSION/` is dropped so paths start where the package's tree starts."""
    if archive.name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")):
        yield from _strip_top(_tar_members(archive))
    elif archive.suffix == ".zip":
        yield from _strip_top(_zip_members(archive))
    elif archive.suffix == ".whl":
        yield from _zip_members(archive)
    else:
        raise SourceError(f"unknown archive type: {archive.name}")


def _safe_path(name: str) -> str | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    return path.as_posix()


def _is_text(path: str, data: bytes) -> bool:
    # .py files and other text; compiled extensions and other binaries stay out.
    if len(data) > MAX_TEXT_FILE or b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return path.endswith(".py")
    return True


def _tar_members(archive: Path) -> Iterator[tuple[str, bytes]]:
    with tarfile.open(archive) as tar:
        for member in tar:
            path = _safe_path(member.name)
            if not member.isfile() or path is None:
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            data = handle.read()
            if _is_text(path, data):
                yield path, data


def _zip_members(archive: Path) -> Iterator[tuple[str, bytes]]:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            path = _safe_path(info.filename)
            if info.is_dir() or path is None:
                continue
            data = zf.read(info)
            if _is_text(path, data):
                yield path, data


def _strip_top(members: Iterable[tuple[str, bytes]]) -> Iterator[tuple[str, bytes]]:
    for path, data in members:
        top, _, rest = path.partition("/")
        if rest:
            yield rest, data


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
