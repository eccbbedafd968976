"""The hostile inputs of issues 12 and 17, each run as its own `vmine` process with a time limit, with
its wall time and the peak RSS of its process tree (vmine and its workers together, or the
largest single process's own peak if higher). Run by `make
bench`, or alone: `.venv/bin/python bench/hostile.py [--only NAME]`.

- extract: an `if` of 10,000 `and` terms among 200 normal files, and among 3 (one worker);
  a 38 MB file; 4,000 raises in one validator;
- explain: the pastes of bench/explain_speed.py (patterns with six holes against 2,400 and
  20,000 characters, a planted `(.|\\s)*X`, 10 MB pastes, a 200 KB pydantic item);
- run: an OpenAI-compatible server (tests/llm_server.py) that trickles its answer one byte
  every 5 seconds, with `--timeout 10`; one whose answer escapes a lone surrogate and a NUL;
  one whose answer is a 306 KB gzip body, or a 658-byte `gzip, gzip` body, that inflates to
  300 MB (streamed and not); a `--base-url` nobody listens on;
- issue 17: `pypi:` releases whose build backend leaves a marker (sdist only, and with a
  wheel beside it), an sdist with a symlinked folder, a wheel holding a 1 GiB file and one
  of 250 files just under 4 MiB, lmdeploy 0.18.0's real wheel (a 346 MiB compiled library;
  downloaded once into bench/.cache/safety/), two releases that once shared a cache entry,
  an index listing another sha256;
  pipeline.toml
  tag formats, 5,000 nested arrays and `timeout = inf`; a FIFO in a dataset's records/
  (render, diff); a file name holding a newline and HTML; render onto a full disk and a
  cache on one (a small tmpfs, when run as root); a git tree holding `../evil.py`;
  `explain --all` over a file name holding a newline and a tab; a --command holding a
  newline;
- scale: 50,000 sites in one repository (1,000 files of 50 validators).

`--vmine CMD` measures another build (a wrapper running an older commit, say), so that
before and after are measured side by side.

Targets: each case finishes within its time (seconds) and under 1 GiB; a case past its hard
limit is killed and reported, never waited for."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.explain_speed import HOSTILE_TARGET, hostile_pastes  # noqa: E402
from bench.runner import VMINE, tree_memory  # noqa: E402
from bench.trees import CACHE  # noqa: E402
from tests.conftest import make_git_repo  # noqa: E402
from tests.release_fixtures import BACKEND, make_sdist, make_wheel, marker_script  # noqa: E402

MAX_RSS = 2**30
HARD_LIMIT = 180.0  # seconds; a case still running then is killed


@dataclass
class Outcome:
    seconds: float
    peak_rss: int
    code: int | None  # None: killed at the hard limit
    stderr: str


# The vmine measured: this checkout's, or another build's (`--vmine`, e.g. a wrapper that
# runs an older commit, to measure before and after side by side).
COMMAND = [str(VMINE)]


def measure(
    args: list[str],
    stdin: bytes = b"",
    limit: float = HARD_LIMIT,
    env: dict[str, str | None] | None = None,
    preexec: Callable[[], None] | None = None,
    stdout: Path | None = None,
) -> Outcome:
    """Run `vmine ARGS` in its own session, sampling its tree's RSS every 50 ms; kill the
    whole session at `limit` seconds. `env` entries that are None are removed; stdout goes
    to the file `stdout`, if given."""
    environ = {**os.environ, "CI": "true", **(env or {})}
    with tempfile.TemporaryFile() as err, open(stdout or os.devnull, "wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(
            [*COMMAND, *args],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
            start_new_session=True,
            env={key: value for key, value in environ.items() if value is not None},
            preexec_fn=preexec,
        )
        peak = 0
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, *tree_memory(process.pid))
                stop.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        feeder = threading.Thread(target=_feed, args=(process, stdin), daemon=True)
        feeder.start()
        try:
            code: int | None = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = None
        seconds = time.perf_counter() - started
        stop.set()
        sampler.join()
        err.seek(0)
        return Outcome(seconds, peak, code, err.read().decode("utf-8", "replace"))


def _feed(process: subprocess.Popen, data: bytes) -> None:
    try:
        process.stdin.write(data)
        process.stdin.close()
    except OSError:
        pass


@dataclass
class Case:
    name: str
    target: float  # seconds
    run: Callable[[Path], tuple[Outcome, str | None]]  # -> outcome, problem (None: as expected)


def report(case: Case, outcome: Outcome, problem: str | None) -> bool:
    fast = outcome.code is not None and outcome.seconds <= case.target
    small = outcome.peak_rss < MAX_RSS
    ok = fast and small and problem is None
    how = "killed at the hard limit" if outcome.code is None else f"exit {outcome.code}"
    notes = [] if problem is None else [problem]
    if not fast and outcome.code is not None:
        notes.append(f"over {case.target:g} s")
    if not small:
        notes.append(f"over {MAX_RSS // 2**20} MiB")
    print(
        f"hostile: {case.name:<44} {outcome.seconds:7.2f} s  "
        f"{outcome.peak_rss / 2**20:6.0f} MiB  {how:<8}  {'ok' if ok else 'FAIL'}"
        f"{': ' + '; '.join(notes) if notes else ''}",
        flush=True,
    )
    return ok


# --- extract ----------------------------------------------------------------------------------


def _check(number: int) -> str:
    return (
        f"def check_{number}(cfg):\n"
        f"    if cfg.size_{number} < 0:\n"
        f'        raise ValueError("size_{number} must be >= 0, got {{cfg.size_{number}}}")\n'
    )


def _and_terms() -> str:
    terms = " and ".join(f"cfg.flag_{number}" for number in range(10_000))
    return f'def validate(cfg):\n    if {terms}:\n        raise ValueError("all flags set")\n'


def _huge_file(size: int) -> str:
    chunk = "".join(_check(number) for number in range(1000))
    return chunk * (size // len(chunk) + 1)


def _many_raises(count: int) -> str:
    checks = "".join(
        f"    if cfg.limit_{n} < 0:\n"
        f'        raise ValueError(f"limit_{n} must be >= 0, got {{cfg.limit_{n}}}")\n'
        for n in range(count)
    )
    return f"def validate(cfg):\n{checks}"


def _extract(tmp: Path, files: dict[str, str]) -> Outcome:
    repo = make_git_repo(tmp / "repo", files)
    return measure(
        [
            "extract",
            str(repo),
            "--repo-name",
            "acme/hostile",
            "--no-cache",
            "--cache-dir",
            str(tmp / "cache"),
            "-o",
            str(tmp / "sites.jsonl"),
            "--ci",
        ]
    )


def _expect(outcome: Outcome, sites: int, skipped: str | None) -> str | None:
    summary = next(
        (line for line in outcome.stderr.splitlines() if line.startswith("extract: files=")), ""
    )
    if f" sites={sites} " not in summary:
        return f"expected {sites} sites: {summary or outcome.stderr.strip()[-200:]}"
    if skipped is not None and skipped not in outcome.stderr:
        return f"expected a skip '{skipped}'"
    return None


def and_terms_among(normal: int) -> Callable[[Path], tuple[Outcome, str | None]]:
    def run(tmp: Path) -> tuple[Outcome, str | None]:
        files = {f"pkg/mod_{n:03d}.py": _check(n) for n in range(normal)}
        outcome = _extract(tmp, {**files, "pkg/flags.py": _and_terms()})
        return outcome, _expect(
            outcome, normal, "skipped: pkg/flags.py: expression nested too deep at line 2"
        )

    return run


def huge_file(tmp: Path) -> tuple[Outcome, str | None]:
    outcome = _extract(tmp, {"pkg/huge.py": _huge_file(38 * 10**6), "pkg/ok.py": _check(1)})
    return outcome, _expect(outcome, 1, "skipped: pkg/huge.py: too large to analyse")


def many_raises(tmp: Path) -> tuple[Outcome, str | None]:
    outcome = _extract(tmp, {"pkg/limits.py": _many_raises(4000)})
    return outcome, _expect(outcome, 4000, None)


# --- explain ----------------------------------------------------------------------------------


def explain_paste(name: str) -> Callable[[Path], tuple[Outcome, str | None]]:
    def run(tmp: Path) -> tuple[Outcome, str | None]:
        root, pastes = hostile_pastes(tmp / "output")
        outcome = measure(["explain", "-", "--dataset", str(root)], stdin=pastes[name].encode())
        return outcome, None if outcome.code in (0, 1) else outcome.stderr.strip()[-200:]

    return run


# --- run against a trickling server ---------------------------------------------------------


def trickling_server(tmp: Path) -> tuple[Outcome, str | None]:
    from tests.llm_server import FAULT_KINDS, FakeLLM

    if "trickle" not in FAULT_KINDS:
        return Outcome(0.0, 0, 0, ""), "tests/llm_server.py has no trickle fault yet"
    repo = make_git_repo(tmp / "repo", {"pkg/config.py": _check(1)})
    help_text = subprocess.run([str(VMINE), "run", "--help"], capture_output=True, text=True).stdout
    timeout = ["--timeout", "10"] if "--timeout" in help_text else []
    with FakeLLM() as server:
        server.fail("trickle", trickle_seconds=5.0, times=1000)
        outcome = measure(
            [
                "run",
                str(repo),
                "--repo-name",
                "acme/hostile",
                "--llm",
                "openai",
                "--base-url",
                server.base_url,
                "--model",
                "m",
                *timeout,
                "--cache-dir",
                str(tmp / "cache"),
                "-o",
                str(tmp / "out"),
                "--ci",
            ],
            limit=120.0,
            env={"OPENAI_API_KEY": "bench"},
        )
    problem = None if timeout else "vmine run has no --timeout yet"
    return outcome, problem


# --- issue 17: releases, archives, pages, configs and datasets that attack -----------------


def _release_env(index: Path) -> dict[str, str | None]:
    """pip (and vmine's sdist lookup) see only the find-links folder `index`."""
    return {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(index),
        "PIP_INDEX_URL": None,
        "PIP_EXTRA_INDEX_URL": None,
    }


def _extract_release(tmp: Path, spec: str, index: Path, *args: str) -> Outcome:
    return measure(
        [
            "extract",
            spec,
            *args,
            "--cache-dir",
            str(tmp / "cache"),
            "-o",
            str(tmp / "sites.jsonl"),
            "--ci",
        ],
        env=_release_env(index),
    )


def _exits(outcome: Outcome, code: int, text: str = "") -> str | None:
    """None when the run exited `code`, without a traceback, saying `text` on stderr."""
    if "Traceback" in outcome.stderr:
        return "a traceback"
    last = (outcome.stderr.strip().splitlines() or [""])[-1][-160:]
    if outcome.code != code:
        return f"expected exit {code}: {last}"
    if text and text not in outcome.stderr:
        return f"expected '{text}' on stderr: {last}"
    return None


def release_code(with_wheel: bool) -> Callable[[Path], tuple[Outcome, str | None]]:
    """An sdist whose build backend leaves a marker when anything runs it."""

    def run(tmp: Path) -> tuple[Outcome, str | None]:
        marker = tmp / "marker"
        files = {"evilpkg/__init__.py": "", "evilpkg/limits.py": _check(1)}
        make_sdist(tmp / "index", "evilpkg", "1.0", files, marker_script(marker) + BACKEND)
        if with_wheel:
            make_wheel(tmp / "index", "evilpkg", "1.0", {"evilpkg/limits.py": _check(1).encode()})
        outcome = _extract_release(tmp, "pypi:evilpkg==1.0", tmp / "index", "--repo-name", "a/b")
        if marker.exists():
            return outcome, "the release's build backend ran"
        return outcome, _exits(outcome, 0)

    return run


def symlinked_folder(tmp: Path) -> tuple[Outcome, str | None]:
    """An sdist with a symlink to a folder outside, then a file "through" it."""
    outside = tmp / "outside"
    outside.mkdir()
    files = {"evilpkg/limits.py": _check(1), "escape/planted.py": "planted = True\n"}
    make_sdist(tmp / "index", "evilpkg", "1.0", files, None, links={"escape": str(outside)})
    outcome = _extract_release(tmp, "pypi:evilpkg==1.0", tmp / "index", "--repo-name", "a/b")
    if any(outside.iterdir()):
        return outcome, "wrote outside the cache"
    return outcome, _exits(outcome, 0)


def _big_wheel(path: Path, members: dict[str, int]) -> None:
    """A wheel whose members (name -> size) hold `# ` text, written in 1 MiB pieces."""
    piece = b"# " * 2**19
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("pkg/__init__.py", "")
        zf.writestr("pkg/limits.py", _check(1))
        for name, size in members.items():
            with zf.open(name, "w", force_zip64=True) as out:
                left = size
                while left > 0:
                    out.write(piece[: min(left, len(piece))])
                    left -= len(piece)
        info = "pkg-1.0.dist-info"
        zf.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
        zf.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zf.writestr(f"{info}/RECORD", "")


def wheel_member(size: int, count: int, code: int, text: str = ""):
    """A wheel holding `count` .py members of `size` bytes each."""

    def run(tmp: Path) -> tuple[Outcome, str | None]:
        (tmp / "index").mkdir()
        members = {f"pkg/big_{n}.py": size for n in range(count)}
        _big_wheel(tmp / "index" / "pkg-1.0-py3-none-any.whl", members)
        outcome = _extract_release(tmp, "pypi:pkg==1.0", tmp / "index", "--repo-name", "a/b")
        return outcome, _exits(outcome, code, text)

    return run


LMDEPLOY = "0.18.0"  # its wheel carries a 346 MiB compiled library


def real_wheel(tmp: Path) -> tuple[Outcome, str | None]:
    """lmdeploy's wheel (downloaded once into bench/.cache/safety/wheels/), extracted."""
    folder = CACHE / "safety" / "wheels"
    if not any(folder.glob(f"lmdeploy-{LMDEPLOY}-*.whl")):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                f"lmdeploy=={LMDEPLOY}",
                "--no-deps",
                "--only-binary=:all:",
                "--quiet",
                "-d",
                str(folder),
            ],
            check=True,
        )
    outcome = measure(
        [
            "extract",
            f"pypi:lmdeploy=={LMDEPLOY}",
            "--repo-name",
            "InternLM/lmdeploy",
            "--cache-dir",
            str(tmp / "cache"),
            "-o",
            str(tmp / "sites.jsonl"),
            "--ci",
        ],
        env=_release_env(folder),
        limit=600.0,
    )
    if "Traceback" in outcome.stderr or outcome.code not in (0, 1):
        return outcome, _exits(outcome, 0)
    return outcome, None


def shared_cache_entry(tmp: Path) -> tuple[Outcome, str | None]:
    """`hx-col` 1-1 and `hx-col-1` 1, mined one after the other into one cache."""
    for name, version, repo in (("hx_col", "1.post1", "first"), ("hx_col_1", "1", "second")):
        url = f"Project-URL: Source, https://github.com/{repo}/{name}\n"
        files = {f"{name}/limits.py": _check(1).encode()}
        make_wheel(tmp / "index", name, version, files, url)
    for spec in ("pypi:hx-col==1-1", "pypi:hx-col-1==1"):
        _extract_release(tmp, spec, tmp / "index")
    outcome = _extract_release(tmp, "pypi:hx-col==1-1", tmp / "index")
    site = json.loads((tmp / "sites.jsonl").read_text().splitlines()[0])
    if site["repo"] != "first/hx_col":
        return outcome, f"hx-col 1-1 got {site['repo']}'s repository"
    return outcome, _exits(outcome, 0)


def hash_mismatch(tmp: Path) -> tuple[Outcome, str | None]:
    """An index (PEP 691, on 127.0.0.1) that lists a sha256 the sdist does not have."""
    from tests.simple_index import SimpleIndex

    files = {"evilpkg/limits.py": _check(1)}
    make_sdist(tmp / "served", "evilpkg", "1.0", files, BACKEND)
    with SimpleIndex(tmp / "served") as index:
        index.bad_hash.add("evilpkg-1.0.tar.gz")
        env = {**_release_env(tmp / "none"), "PIP_NO_INDEX": None, "PIP_FIND_LINKS": None}
        outcome = measure(
            [
                "extract",
                "pypi:evilpkg==1.0",
                "--repo-name",
                "a/b",
                "--cache-dir",
                str(tmp / "cache"),
                "-o",
                str(tmp / "sites.jsonl"),
                "--ci",
            ],
            env={**env, "PIP_INDEX_URL": index.url},
        )
    return outcome, _exits(outcome, 2, "refusing it")


def _config(tmp: Path, body: str) -> Path:
    path = tmp / "pipeline.toml"
    path.write_text(body)
    return path


def config_case(body: str, text: str) -> Callable[[Path], tuple[Outcome, str | None]]:
    """`vmine run --config` of a pipeline.toml whose target's git URL cannot be reached, so
    its release is mined, with the tag format or value given."""

    def run(tmp: Path) -> tuple[Outcome, str | None]:
        make_wheel(tmp / "index", "evilpkg", "1.0", {"evilpkg/limits.py": _check(1).encode()})
        config = _config(
            tmp,
            f'out = "{tmp / "out"}"\nllm = "offline"\ncache_dir = "{tmp / "cache"}"\n'
            + body.replace(
                "TARGET",
                '[targets.evil]\nrepo = "acme/evil"\n'
                'url = "https://127.0.0.1:9/evil.git"\nrelease = "evilpkg==1.0"\n',
            ),
        )
        outcome = measure(["run", "--config", str(config), "--ci"], env=_release_env(tmp / "index"))
        return outcome, _exits(outcome, 2, text)

    return run


def _dataset_with_fifo(tmp: Path) -> Path:
    from tests.datasets import write_fixture_dataset

    root = write_fixture_dataset(tmp / "output")
    os.mkfifo(root / "records" / "ffff000000000000.json")
    return root


def fifo_in_records(command: str) -> Callable[[Path], tuple[Outcome, str | None]]:
    def run(tmp: Path) -> tuple[Outcome, str | None]:
        from tests.datasets import write_fixture_dataset

        root = _dataset_with_fifo(tmp)
        if command == "render":
            args = ["render", str(root), "-o", str(tmp / "pages")]
        else:
            args = ["diff", str(write_fixture_dataset(tmp / "other")), str(root)]
        outcome = measure(args, limit=20.0)
        return outcome, _exits(outcome, 2, "not a regular file")

    return run


def newline_file_name(tmp: Path) -> tuple[Outcome, str | None]:
    """A record whose file name holds a newline, then raw HTML, rendered as Markdown."""
    from dataclasses import replace as changed

    from tests.datasets import CASES, write_fixture_dataset

    name = "serve/x\n<img src=x onerror=alert(1)>\n\n<script>alert(2)</script>.py"
    root = write_fixture_dataset(tmp / "output", [changed(CASES[0], filePath=name)])
    outcome = measure(["render", str(root), "-o", str(tmp / "pages")])
    pages = "".join(path.read_text() for path in (tmp / "pages").glob("*.md"))
    if re.search(r"^<(img|script)", pages, re.MULTILINE):
        return outcome, "raw HTML starts a line of a page"
    return outcome, _exits(outcome, 0)


def explain_all_names(tmp: Path) -> tuple[Outcome, str | None]:
    """`explain --all` over a record whose file name holds a newline and a tab."""
    from dataclasses import replace as changed

    from tests.datasets import CASES, write_fixture_dataset

    name = "serve/\nFAKE 1.000  exact\tengine.py"
    root = write_fixture_dataset(tmp / "output", [changed(CASES[1], filePath=name)])
    printed_to = tmp / "printed.txt"
    outcome = measure(
        ["explain", CASES[1].errorMessage, "--all", "--dataset", str(root)], stdout=printed_to
    )
    printed = printed_to.read_text()
    if len(printed.splitlines()) != 1 or "\t" in printed:
        return outcome, "a file name broke its line"
    return outcome, _exits(outcome, 0)


def _old_site_and_big_dataset(tmp: Path, pages: Path) -> tuple[Path, dict[str, bytes]]:
    from dataclasses import replace as changed

    from tests.datasets import CASES, write_fixture_dataset

    subprocess.run(
        [*COMMAND, "render", str(write_fixture_dataset(tmp / "old")), "-o", str(pages)],
        capture_output=True,
        check=True,
    )
    big = changed(
        CASES[0],
        id="ffff000000000001",
        explanation={**CASES[0].explanation, "documentation": "long words " * 200_000},
    )
    before = {str(p): p.read_bytes() for p in pages.rglob("*") if p.is_file()}
    return write_fixture_dataset(tmp / "new", [*CASES, big]), before


class _SmallDisk:
    """A 2 MiB tmpfs at `path` when this process may mount one (root), else None."""

    def __init__(self, path: Path, size: str = "2m") -> None:
        self.path, self.size, self.mounted = path, size, False

    def __enter__(self) -> Path | None:
        self.path.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", str(self.path)],
            capture_output=True,
        )
        self.mounted = done.returncode == 0
        return self.path if self.mounted else None

    def grow(self) -> None:
        subprocess.run(["mount", "-o", "remount,size=64m", str(self.path)], check=True)

    def __exit__(self, *exc: object) -> None:
        if self.mounted:
            subprocess.run(["umount", str(self.path)], check=False)


def _limit_file_size() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, 2**20))


def render_full_disk(tmp: Path) -> tuple[Outcome, str | None]:
    """`render` over an old site on a disk too small for the new one (a 2 MiB tmpfs; without
    root, a 1 MiB file size limit, which stops a write the same way)."""
    with _SmallDisk(tmp / "disk") as disk:
        pages = (disk or tmp) / "pages"
        dataset, before = _old_site_and_big_dataset(tmp, pages)
        outcome = measure(
            ["render", str(dataset), "-o", str(pages)],
            preexec=None if disk else _limit_file_size,
        )
        after = {str(p): p.read_bytes() for p in pages.rglob("*") if p.is_file()}
    if after != before:
        return outcome, f"the old site changed ({len(after)} files, {len(before)} before)"
    return outcome, _exits(outcome, 2, "nothing was changed")


def cache_full_disk(tmp: Path) -> tuple[Outcome, str | None]:
    """`extract` with its cache on a full disk, then again once there is room."""
    files = {f"pkg/mod_{n:03d}.py": _check(n) + "# " + "x" * 4000 + "\n" for n in range(300)}
    repo = make_git_repo(tmp / "repo", files)
    small = _SmallDisk(tmp / "disk", "600k")
    with small as disk:
        if disk is None:
            return Outcome(0.0, 0, 0, ""), "needs root, to mount a small tmpfs"
        args = ["extract", str(repo), "--repo-name", "a/b", "--cache-dir", str(disk / "cache")]
        outcome = measure([*args, "-o", str(tmp / "sites.jsonl"), "--ci"])
        problem = _exits(outcome, 2, "free some space")
        small.grow()
        again = measure([*args, "-o", str(tmp / "sites.jsonl"), "--ci"])
    return outcome, problem or _exits(again, 0)


def crafted_tree(tmp: Path) -> tuple[Outcome, str | None]:
    """A tree made with `git mktree` holding `../evil.py` and `./evil.py`."""
    repo = tmp / "crafted.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)

    def git(*args: str, text: str = "") -> str:
        return (
            subprocess.run(
                ["git", "--git-dir", str(repo), *args],
                input=text.encode(),
                capture_output=True,
                check=True,
                env={
                    **os.environ,
                    "GIT_AUTHOR_NAME": "a",
                    "GIT_AUTHOR_EMAIL": "a@b",
                    "GIT_COMMITTER_NAME": "a",
                    "GIT_COMMITTER_EMAIL": "a@b",
                },
            )
            .stdout.decode()
            .strip()
        )

    blob = git("hash-object", "-w", "--stdin", text=_check(1))
    inner = git("mktree", text=f"100644 blob {blob}\tevil.py\n")
    tree = git("mktree", text=f"040000 tree {inner}\t..\n040000 tree {inner}\t.\n")
    git("update-ref", "refs/heads/main", git("commit-tree", tree, "-m", "crafted"))
    outcome = measure(
        [
            "extract",
            str(repo),
            "--rev",
            "main",
            "--repo-name",
            "a/b",
            "--no-cache",
            "--cache-dir",
            str(tmp / "cache"),
            "-o",
            str(tmp / "sites.jsonl"),
            "--ci",
        ]
    )
    sites = tmp / "sites.jsonl"
    if sites.exists() and "../evil.py" in sites.read_text():
        return outcome, "../evil.py became a filePath"
    return outcome, _exits(outcome, 1, "skipped: ../evil.py")


def command_with_newline(tmp: Path) -> tuple[Outcome, str | None]:
    repo = make_git_repo(tmp / "repo", {"pkg/ok.py": _check(1)})
    outcome = measure(
        [
            "run",
            str(repo),
            "--repo-name",
            "a/b",
            "--llm",
            "offline",
            "--command",
            "serve\nrm -rf ~",
            "-o",
            str(tmp / "out"),
            "--cache-dir",
            str(tmp / "cache"),
            "--ci",
        ]
    )
    return outcome, _exits(outcome, 2, "expected a command on one line")


def scale(tmp: Path) -> tuple[Outcome, str | None]:
    """50,000 sites in one repository: 1,000 files of 50 validators each."""
    files = {
        f"pkg/mod_{n:04d}.py": "".join(_check(n * 50 + k) for k in range(50)) for n in range(1000)
    }
    outcome = _extract(tmp, files)
    return outcome, _expect(outcome, 50_000, None)


SAFETY_CASES = [
    Case("pypi: sdist whose backend writes a marker", 60.0, release_code(with_wheel=False)),
    Case("pypi: the same with a wheel beside it", 60.0, release_code(with_wheel=True)),
    Case("pypi: sdist with a symlinked folder", 60.0, symlinked_folder),
    Case("pypi: 1 MB wheel holding a 1 GiB file", 60.0, wheel_member(2**30, 1, 0)),
    Case(
        "pypi: wheel of 250 files of 4 MiB - 1",
        60.0,
        wheel_member(4 * 2**20 - 1, 250, 2, "MiB of text files"),
    ),
    Case(f"pypi: lmdeploy {LMDEPLOY} (a 346 MiB library)", 180.0, real_wheel),
    Case("pypi: hx-col 1-1 and hx-col-1 1, one cache", 60.0, shared_cache_entry),
    Case("pypi: an index listing another sha256", 60.0, hash_mismatch),
    Case(
        "config: tag = {version:>300000000}",
        30.0,
        config_case('TARGET\ntag = "{version:>300000000}"\n', "may hold only {version}"),
    ),
    Case("config: tag = {}", 30.0, config_case('TARGET\ntag = "{}"\n', "may hold only")),
    Case(
        "config: 5,000 nested arrays",
        30.0,
        config_case("x = " + "[" * 5000 + "]" * 5000 + "\nTARGET", "nested too deep"),
    ),
    Case("config: timeout = inf", 30.0, config_case("timeout = inf\nTARGET", "finite number")),
    Case("render: a FIFO in records/", 20.0, fifo_in_records("render")),
    Case("diff: a FIFO in records/", 20.0, fifo_in_records("diff")),
    Case("render: a file name holding newline and HTML", 30.0, newline_file_name),
    Case("render: onto a full disk", 60.0, render_full_disk),
    Case("extract: cache on a full disk, then room", 60.0, cache_full_disk),
    Case("extract: a tree holding ../evil.py", 30.0, crafted_tree),
    Case("explain --all: a file name holding newline, tab", 30.0, explain_all_names),
    Case("run: --command holding a newline", 30.0, command_with_newline),
]
SCALE_CASE = Case("extract: 50,000 sites in one repository", 300.0, scale)


def _run(tmp: Path, base_url: str, *more: str) -> Outcome:
    """`vmine run --llm openai` of a one-site repository against `base_url`."""
    repo = make_git_repo(tmp / "repo", {"pkg/config.py": _check(1)})
    return measure(
        [
            "run",
            str(repo),
            "--repo-name",
            "acme/hostile",
            "--llm",
            "openai",
            "--base-url",
            base_url,
            "--model",
            "m",
            "--cache-dir",
            str(tmp / "cache"),
            "-o",
            str(tmp / "out"),
            "--ci",
            *more,
        ],
        limit=120.0,
        env={"OPENAI_API_KEY": "bench"},
    )


def _said(outcome: Outcome, code: int, line: str) -> str | None:
    """None when the run exited `code`, said `line` and printed no traceback."""
    if "Traceback" in outcome.stderr:
        return "a traceback: " + outcome.stderr.strip()[-200:]
    if outcome.code != code or line not in outcome.stderr:
        return f"exit {outcome.code}, expected {code} and {line!r}: {outcome.stderr[-300:]}"
    return None


def surrogate_answer(tmp: Path) -> tuple[Outcome, str | None]:
    from tests.llm_server import FakeLLM

    with FakeLLM() as server:
        server.fail("surrogate", times=1000)
        outcome = _run(tmp, server.base_url)
    return outcome, _said(outcome, 0, "explained by: openai 1;")


def inflating_answer(fault: str, streams: bool) -> Callable[[Path], tuple[Outcome, str | None]]:
    def run(tmp: Path) -> tuple[Outcome, str | None]:
        from tests.llm_server import FakeLLM

        with FakeLLM(streams=streams) as server:
            server.fail(fault, times=1000, huge_bytes=300 * 2**20)
            outcome = _run(tmp, server.base_url)
        # every request dropped at the bound, then the offline record
        return outcome, _said(outcome, 1, "the response is larger than 2048 KiB")

    return run


def nobody_listening(tmp: Path) -> tuple[Outcome, str | None]:
    import socket

    with socket.socket() as probe:  # a port nobody listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    outcome = _run(tmp, f"http://127.0.0.1:{port}/v1")
    return outcome, _said(outcome, 2, "connection refused")


CASES = [
    Case("extract: if of 10,000 and-terms, 200 files", 30.0, and_terms_among(200)),
    Case("extract: if of 10,000 and-terms, 3 files", 30.0, and_terms_among(3)),
    Case("extract: a 38 MB file", 30.0, huge_file),
    Case("extract: 4,000 raises in one validator", 30.0, many_raises),
    *(
        Case(f"explain: {name}", HOSTILE_TARGET, explain_paste(name))
        for name in (
            "6 holes, 2,400 chars",
            "6 holes, 20,000 chars",
            "planted (.|\\s)*X",
            "10 MB, no traceback",
            "10 MB log, error at the end",
            "200 KB pydantic item",
        )
    ),
    Case("run: server trickling 1 byte / 5 s, --timeout 10", 60.0, trickling_server),
    Case("run: answer escaping a lone surrogate and a NUL", 30.0, surrogate_answer),
    *(
        Case(
            f"run: {size} {fault.replace('_', ' ')} -> 300 MB, {how}",
            30.0,
            inflating_answer(fault, how == "streamed"),
        )
        for fault, size in (("gzip_bomb", "306 KB"), ("gzip_gzip", "658 B"))
        for how in ("streamed", "one body")
    ),
    Case("run: --base-url nobody listens on", 30.0, nobody_listening),
    *SAFETY_CASES,
    SCALE_CASE,
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="run the cases whose name contains this text")
    parser.add_argument(
        "--vmine", help="the vmine command to measure (default: this checkout's)", default=None
    )
    args = parser.parse_args(argv if argv is not None else [])
    if args.vmine:
        COMMAND[:] = [args.vmine]
    failed = []
    for case in CASES:
        if args.only and args.only not in case.name:
            continue
        with tempfile.TemporaryDirectory(prefix="vmine-hostile-") as tmp:
            outcome, problem = case.run(Path(tmp))
        if not report(case, outcome, problem):
            failed.append(case.name)
    print(
        f"hostile: {len(failed)} of the cases failed"
        if failed
        else "hostile: every case finished in time and memory"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
