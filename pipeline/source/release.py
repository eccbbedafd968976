"""`pypi:NAME==VERSION` -> a cached local git repository holding the release, fixed dates."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from pipeline.console import Console
from pipeline.source.git import (
    FETCH_TIMEOUT,
    error_line,
    git_env,
    init_bare,
    make_snapshot,
    run_git,
)
from pipeline.source.snapshot import MAX_TEXT_FILE, Snapshot, SourceError

_SPEC = re.compile(r"^pypi:(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)=="
                   r"(?P<version>[A-Za-z0-9](?:[A-Za-z0-9.+!_-]*[A-Za-z0-9])?)$")

# Where a published package's code lives on GitHub, and under which folder of that tree.
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
    """The release as a Snapshot, built once into `<cache>/releases/NAME.git` and reused."""
    name, version = parse_spec(spec)
    git_dir = Path(cache_dir) / "releases" / f"{name}.git"
    ref = f"refs/tags/{name}=={version}"
    sha = tag_commit(git_dir, ref)
    if sha is None:
        if console is not None:
            console.line(f"downloading {name}=={version} with pip")
        with tempfile.TemporaryDirectory(prefix="vmine-release-") as tmp:
            archive = download(name, version, Path(tmp))
            files = dict(release_files(archive))
        if not files:
            raise SourceError(f"{name}=={version}: the downloaded archive holds no text files")
        sha = commit_files(git_dir, files, message=f"{name}=={version}")
        run_git(git_dir, "update-ref", ref, sha)
    prefix = PATH_PREFIX_OF.get(name, "") if path_prefix is None else path_prefix
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    return make_snapshot(
        git_dir, sha, repo=repo_name or GITHUB_OF.get(name), origin=f"pypi:{name}=={version}",
        source=spec, url_ref=(tag or DEFAULT_TAG).format(version=version), path_prefix=prefix,
    )


def tag_commit(git_dir: Path, ref: str) -> str | None:
    """The commit a tag (`refs/tags/...`) of the repository points to; None if it has none."""
    if not (git_dir / "HEAD").exists():
        return None
    done = run_git(git_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return done.stdout.decode().strip() if done.returncode == 0 else None


def download(name: str, version: str, into: Path) -> Path:
    """The release's sdist, else its wheel, fetched by pip (so the user's index settings
    apply); returns the archive's path."""
    # No build isolation: preparing an sdist's metadata must not install its build
    # requirements (vLLM's would pull in torch); when it cannot, the wheel is used.
    attempts = (("--no-binary", name, "--no-build-isolation"), ("--only-binary", name))
    reasons = []
    for index, choice in enumerate(attempts):
        target = into / str(index)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
               "--disable-pip-version-check", *choice, "-d", str(target), f"{name}=={version}"]
        try:
            done = subprocess.run(cmd, capture_output=True, timeout=FETCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            reasons.append("pip timed out")
            continue
        archives = sorted(target.glob("*")) if target.exists() else []
        if done.returncode == 0 and archives:
            return archives[0]
        lines = [ln.strip() for ln in done.stderr.decode("utf-8", "replace").splitlines()]
        errors = [ln for ln in lines if ln.startswith("ERROR:")] or [ln for ln in lines if ln]
        reasons.append(errors[-1] if errors else f"pip exited {done.returncode}")
    raise SourceError(f"cannot download {name}=={version} with pip: {reasons[-1]}")


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
        done = run_git(git_dir, "hash-object", "-w", "--no-filters", "--stdin-paths",
                       input="\n".join(names).encode())
    if done.returncode != 0:
        raise SourceError(f"git hash-object failed: {error_line(done.stderr)}")
    return done.stdout.decode().split()
