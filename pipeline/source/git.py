"""Git as vmine uses it: plain `git` subprocesses with a safe environment, a commit's tree
and blobs, and bare mirrors of remote repositories fetched as little as possible."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipeline.console import Console
from pipeline.dataset.formats import REPO_NAME_RE, SHA40_RE
from pipeline.keys import url_digest
from pipeline.source.snapshot import Snapshot, SourceError, TreeFile

# Seconds a git command that talks to a remote may take before it counts as unreachable;
# a stalled HTTP transfer is cut earlier by http.lowSpeedLimit below.
ASK_TIMEOUT = 120
FETCH_TIMEOUT = 3600

_ABBREV = re.compile(r"^[0-9a-f]{4,39}$")
_GITHUB = re.compile(
    r"^(?:https?://(?:[^@/]+@)?github\.com/|ssh://git@github\.com(?::\d+)?/|git@github\.com:)"
    r"(?P<owner>[A-Za-z0-9][A-Za-z0-9_.-]*)/(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)
# The parts of the caller's environment that would point git at another repository.
_GIT_ENV_DROP = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)


def git_env(**extra: str) -> dict[str, str]:
    """The environment for every git subprocess: never prompt, never wander to another repo."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=30")
    env["LC_ALL"] = "C"
    env.update(extra)
    return env


def run_git(
    git_dir: Path | None,
    *args: str,
    timeout: float | None = None,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """One git command (no shell); the caller checks `returncode`."""
    cmd = ["git"]
    if git_dir is not None:
        cmd += ["--git-dir", str(git_dir)]
    cmd += ["-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=60", *args]
    try:
        return subprocess.run(
            cmd, input=input, capture_output=True, timeout=timeout, env=env or git_env()
        )
    except subprocess.TimeoutExpired as exc:
        raise SourceError(f"git {args[0]} took longer than {timeout:.0f} s") from exc


def error_line(data: bytes) -> str:
    """The line of git's stderr that says what went wrong (its `fatal:`/`error:` line)."""
    lines = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    return (fatal or lines or ["no message"])[0]


def repo_from_url(url: str) -> str | None:
    """`owner/name` of a GitHub URL (https or ssh forms), else None (also for a name that is
    no repository's, such as `..`: the URL comes from an untrusted repository's config)."""
    match = _GITHUB.match(url.strip())
    repo = f"{match['owner']}/{match['name']}" if match else None
    return repo if repo is not None and REPO_NAME_RE.fullmatch(repo) else None


def local_git_dir(path: Path) -> Path:
    """The git directory of a repository whose top level (or bare directory) is `path`."""
    resolved = path.resolve()
    if not resolved.is_dir():
        raise SourceError(f"not a git repository: {path}")
    done = run_git(
        None, "-C", str(resolved), "rev-parse", "--is-bare-repository", "--absolute-git-dir"
    )
    lines = done.stdout.decode().splitlines()
    if done.returncode != 0 or len(lines) != 2:
        raise SourceError(f"not a git repository: {path}")
    git_dir = Path(lines[1])
    top: Path | None = git_dir
    if lines[0] != "true":
        shown = run_git(None, "-C", str(resolved), "rev-parse", "--show-toplevel")
        top = Path(shown.stdout.decode().strip()) if shown.returncode == 0 else None
    # A folder inside some other repository is not that repository.
    if top is None or top.resolve() != resolved:
        raise SourceError(f"not a git repository: {path} (it lies inside {top or git_dir})")
    return git_dir


def resolve_rev(git_dir: Path, rev: str, *, where: str) -> str:
    """The 40-hex commit a REV (SHA, abbreviated SHA, tag, branch) names in this repository."""
    done = run_git(
        git_dir, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
    )
    if done.returncode == 0:
        return done.stdout.decode().strip()
    if _ABBREV.fullmatch(rev):
        ambiguous = run_git(git_dir, "rev-parse", "--verify", "--end-of-options", rev)
        if b"ambiguous" in ambiguous.stderr:
            raise SourceError(f"REV {rev!r} is ambiguous in {where}: give more digits")
    raise SourceError(
        f"unknown revision {rev!r} in {where}: pass a commit SHA, tag or branch that exists"
    )


class GitObjects:
    """Reads the blobs of one git directory (a `BlobReader` for `Snapshot`)."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir

    def read_blobs(self, blobs: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """Contents of these blobs, in order, through one `git cat-file --batch` process."""
        wanted = list(blobs)
        if not wanted:
            return
        proc = subprocess.Popen(
            ["git", "--git-dir", str(self.git_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=git_env(),
        )
        assert proc.stdin is not None and proc.stdout is not None

        def feed() -> None:
            # A writer thread so that a full stdout pipe never blocks our writes.
            try:
                proc.stdin.write("".join(f"{blob}\n" for blob in wanted).encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for blob in wanted:
                header = proc.stdout.readline().split()
                if len(header) != 3:
                    raise SourceError(f"blob {blob} is missing from {self.git_dir}")
                size = int(header[2])
                data = proc.stdout.read(size)
                proc.stdout.read(1)
                yield blob, data
        finally:
            proc.stdout.close()
            proc.kill()
            proc.wait()
            writer.join()


def make_snapshot(
    git_dir: Path,
    sha: str,
    *,
    repo: str | None,
    origin: str,
    source: str,
    url_ref: str | None = None,
    path_prefix: str = "",
) -> Snapshot:
    """The snapshot of commit `sha` of `git_dir`, with its tree listed."""
    files, unsafe = list_tree(git_dir, sha)
    return Snapshot(
        git_dir=git_dir,
        repo=repo,
        sha=sha,
        url_ref=url_ref or sha,
        path_prefix=path_prefix,
        origin=origin,
        files=files,
        reader=GitObjects(git_dir),
        source=source,
        unsafe_paths=tuple(unsafe),
    )


def safe_tree_path(path: str) -> bool:
    """Whether a tree path is one git writes: no `..` or `.` part (`../evil.py`), no empty
    part. A crafted tree (`git mktree` checks nothing) may hold any name but `/`."""
    return all(part not in ("", ".", "..") for part in path.split("/"))


def list_tree(git_dir: Path, sha: str) -> tuple[list[TreeFile], list[str]]:
    """Every regular file of the commit's tree (symlinks and submodules left out), and the
    paths left out for not being `safe_tree_path`s, both sorted."""
    done = run_git(git_dir, "ls-tree", "-r", "-l", "-z", "--full-tree", sha)
    if done.returncode != 0:
        raise SourceError(f"cannot list the tree of {sha}: {error_line(done.stderr)}")
    files, unsafe = [], []
    for entry in done.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, blob, size = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            path = raw_path.decode("utf-8", "surrogateescape")
            if safe_tree_path(path):
                files.append(TreeFile(path, blob.decode(), int(size)))
            else:
                unsafe.append(path)
    files.sort(key=lambda f: f.path)
    return files, sorted(unsafe)


# -- remote repositories ---------------------------------------------------------------


def mirror_dir(cache_dir: Path, url: str) -> Path:
    """Where the bare mirror of a remote lives: readable name + hash of the exact URL."""
    tail = re.sub(r"[^A-Za-z0-9_.-]+", "_", url.rstrip("/").split("/")[-1])[:40]
    return cache_dir / "git" / f"{tail.removesuffix('.git')}-{url_digest(url)}.git"


def init_bare(git_dir: Path) -> bool:
    """Create an empty bare repository at `git_dir` unless there is one; True if created."""
    if (git_dir / "HEAD").exists():
        return False
    git_dir.parent.mkdir(parents=True, exist_ok=True)
    done = run_git(None, "init", "--bare", "--quiet", str(git_dir))
    if done.returncode != 0:
        raise SourceError(f"cannot create {git_dir}: {error_line(done.stderr)}")
    return True


def _init_mirror(git_dir: Path, url: str) -> None:
    if init_bare(git_dir):
        run_git(git_dir, "config", "remote.origin.url", url)


def _has_commit(git_dir: Path, sha: str) -> bool:
    return run_git(git_dir, "cat-file", "-e", f"{sha}^{{commit}}").returncode == 0


def _keep(git_dir: Path, sha: str) -> None:
    # A ref per analysed commit, so that git gc never drops a fetched commit.
    run_git(git_dir, "update-ref", f"refs/vmine/{sha}", sha)


def _fetch(git_dir: Path, url: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return run_git(
            git_dir,
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            *args,
            timeout=FETCH_TIMEOUT,
        )
    except SourceError as exc:
        raise SourceError(f"cannot fetch from {url}: {exc}") from exc


def _remote_refs(git_dir: Path, url: str) -> dict[str, str]:
    """Ref name -> commit SHA as the remote advertises them (peeled tags win)."""
    try:
        done = run_git(git_dir, "ls-remote", "origin", timeout=ASK_TIMEOUT)
    except SourceError as exc:
        raise SourceError(f"cannot reach {url}: {exc}") from exc
    if done.returncode != 0:
        raise SourceError(f"cannot reach {url}: {error_line(done.stderr)}")
    refs: dict[str, str] = {}
    for line in done.stdout.decode().splitlines():
        sha, _, name = line.partition("\t")
        if name.endswith("^{}"):
            refs[name[:-3]] = sha
        else:
            refs.setdefault(name, sha)
    return refs


def _ref_sha(refs: dict[str, str], rev: str) -> str | None:
    for name in (rev, f"refs/tags/{rev}", f"refs/heads/{rev}"):
        if name in refs and (name == "HEAD" or name.startswith("refs/")):
            return refs[name]
    return None


def open_remote(
    url: str,
    source: str,
    rev: str | None,
    repo_name: str | None,
    cache_dir: Path,
    console: Console | None,
) -> Snapshot:
    git_dir = mirror_dir(cache_dir, url)
    _init_mirror(git_dir, url)
    repo = repo_name or repo_from_url(url)
    wanted = rev or "HEAD"
    if SHA40_RE.fullmatch(wanted) and _has_commit(git_dir, wanted):
        return make_snapshot(git_dir, wanted, repo=repo, origin="git", source=source)
    if console is not None:
        console.line(f"fetching {url} at {wanted}")
    # Asking for the refs first fails fast (ASK_TIMEOUT) on a remote that cannot be reached.
    refs = _remote_refs(git_dir, url)
    if SHA40_RE.fullmatch(wanted):
        sha = wanted
    else:
        sha = _ref_sha(refs, wanted)
        if sha is None and _ABBREV.fullmatch(wanted):
            sha = _resolve_abbrev(cache_dir, url, wanted, refs)
        if sha is None:
            raise SourceError(
                f"unknown revision {wanted!r} in {url}: pass a commit SHA, tag or branch "
                "that exists"
            )
        if _has_commit(git_dir, sha):
            return make_snapshot(git_dir, sha, repo=repo, origin="git", source=source)
    # One commit, no history, where the server lets us ask for it by SHA.
    done = _fetch(git_dir, url, "--depth", "1", "origin", sha)
    if done.returncode != 0 and not _has_commit(git_dir, sha):
        # The server does not hand out commits by SHA: fetch its branches and tags.
        done = _fetch(
            git_dir,
            url,
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tags/*:refs/tags/*",
        )
        if done.returncode != 0:
            raise SourceError(f"cannot fetch from {url}: {error_line(done.stderr)}")
    if not _has_commit(git_dir, sha):
        raise SourceError(f"unknown revision {wanted!r} in {url}: the remote has no such commit")
    _keep(git_dir, sha)
    return make_snapshot(git_dir, sha, repo=repo, origin="git", source=source)


def _resolve_abbrev(cache_dir: Path, url: str, prefix: str, refs: dict[str, str]) -> str | None:
    """An abbreviated SHA, looked up in a commits-only copy of the remote's history."""
    tips = {sha for sha in refs.values() if sha.startswith(prefix)}
    if len(tips) == 1:
        return tips.pop()
    # Commits only (no trees, no blobs) in a side repository, so the mirror stays plain.
    index_dir = mirror_dir(cache_dir, url).with_suffix(".commits")
    _init_mirror(index_dir, url)
    done = _fetch(
        index_dir,
        url,
        "--filter=tree:0",
        "origin",
        "+refs/heads/*:refs/remotes/origin/*",
        "+refs/tags/*:refs/tags/*",
    )
    if done.returncode != 0:
        raise SourceError(f"cannot fetch from {url}: {error_line(done.stderr)}")
    try:
        return resolve_rev(index_dir, prefix, where=url)
    except SourceError as exc:
        if "ambiguous" in str(exc):
            raise
        return None
