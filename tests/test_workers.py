"""Files are analysed in worker processes that may die (pipeline/mine/workers.py): a crash of
libcst's native parser, a file that runs too long, or the parent killed with `kill -9` loses
only what it must."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import extractors.limits
from extractors.facts import FileExtraction, Rules
from pipeline.keys import analysis_token
from pipeline.mine.extract import extract_snapshot
from pipeline.mine.workers import FactsWork, FileResult, SiteWork, WorkerPool, analyse
from pipeline.source import open_source
from pipeline.store import Store
from tests.conftest import make_git_repo

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forked workers, /proc")

CRASHER = "pkg/flags.py"
CRASH = "extractor crashed: killed by SIGSEGV"


def checks(number: int, name: str | None = None) -> str:
    return (
        f"def {name or f'check_{number}'}(cfg):\n"
        f"    if cfg.size_{number} < 0:\n"
        f'        raise ValueError("size_{number} must be >= 0")\n'
    )


def flags_module() -> str:
    terms = " and ".join(f"cfg.flag_{number}" for number in range(10_000))
    return f'def validate(cfg):\n    if {terms}:\n        raise ValueError("all flags set")\n'


def repo_with(tmp_path: Path, normal: int, extra: dict[str, str]) -> Path:
    files = {f"pkg/mod_{number:03d}.py": checks(number) for number in range(normal)}
    return make_git_repo(tmp_path / "repo", {**files, **extra})


def extract(repo: Path, tmp_path: Path, store: Store | None, **options):
    snapshot = open_source(str(repo), None, repo_name="acme/widgets", cache_dir=tmp_path / "cache")
    return extract_snapshot(snapshot, options.pop("rules", Rules()), store=store, **options)


@pytest.mark.parametrize("normal", [3, 200], ids=["one worker", "two workers"])
def test_a_segfault_of_libcst_loses_only_its_file(tmp_path, monkeypatch, normal):
    # Without the depth limit, libcst's native parser dies on this file (exit 139 for the whole
    # extraction, or every file "extractor crashed" once the process pool broke).
    monkeypatch.setattr(extractors.limits, "MAX_DEPTH", 10**9)
    repo = repo_with(tmp_path, normal, {CRASHER: flags_module()})
    with Store(tmp_path / "store.sqlite") as store:
        extraction = extract(repo, tmp_path, store, workers=2)
        assert [(item.filePath, item.reason) for item in extraction.skipped] == [(CRASHER, CRASH)]
        assert len(extraction.sites) == normal
        # A crash says nothing lasting: the file is not cached, the others are.
        snapshot = open_source(
            str(repo), None, repo_name="acme/widgets", cache_dir=tmp_path / "cache"
        )
        known = store.get_files([f.blob for f in snapshot.files], analysis_token(Rules()))
        assert len(known) == normal

        again = extract(repo, tmp_path, store, workers=2)
    assert [(item.filePath, item.reason) for item in again.skipped] == [(CRASHER, CRASH)]
    assert again.stats.files_parsed == 1 and again.stats.files_reused == normal
    assert again.sites == extraction.sites


def test_with_the_depth_limit_the_file_is_skipped_without_a_crash(tmp_path):
    repo = repo_with(tmp_path, 3, {CRASHER: flags_module()})
    extraction = extract(repo, tmp_path, None)
    assert [(item.filePath, item.reason) for item in extraction.skipped] == [
        (CRASHER, "expression nested too deep at line 2 (limit 400 levels)")
    ]
    assert len(extraction.sites) == 3


# A validator rule from a hostile pipeline.toml: exponential on a def name of many `a`s.
SLOW_RULES = Rules(name_pattern=r"^(a+)+$")
SLOW_MODULE = "def " + "a" * 40 + "b(cfg):\n    raise ValueError('x')\n"


def test_a_file_that_takes_too_long_is_skipped_and_its_worker_replaced(tmp_path):
    # validators named a, aa, aaa, ... (the rule matches them at once) after the slow file,
    # in the same batch: a new worker carries on with them
    files = {f"pkg/mod_{number:03d}.py": checks(number, "a" * (number + 1)) for number in range(30)}
    files["pkg/aaa_slow.py"] = SLOW_MODULE
    repo = make_git_repo(tmp_path / "repo", files)
    started = time.monotonic()
    extraction = extract(repo, tmp_path, None, rules=SLOW_RULES, workers=2, file_timeout=1.0)
    assert time.monotonic() - started < 30
    assert [(item.filePath, item.reason) for item in extraction.skipped] == [
        ("pkg/aaa_slow.py", "took longer than 1 s to analyse")
    ]
    assert len(extraction.sites) == 30


HANGING_PARENT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from extractors.facts import FileExtraction, Rules
    from pipeline.mine.extract import extract_snapshot
    from pipeline.source import open_source

    repo, cache = sys.argv[1], Path(sys.argv[2])
    snapshot = open_source(repo, None, repo_name="acme/widgets", cache_dir=cache)
    extract_snapshot(snapshot, Rules(name_pattern=r"^(a+)+$"), store=None, workers=2)
""")


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """Running or sleeping (a zombie is dead: nobody may be reaping it in a container)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.slow
def test_workers_exit_when_the_parent_is_killed(tmp_path):
    # one worker hangs on a file (all 31 are one batch), the other waits for work: both must
    # go with the parent
    files = {f"pkg/mod_{number:03d}.py": checks(number) for number in range(30)}
    files["pkg/slow.py"] = SLOW_MODULE
    repo = make_git_repo(tmp_path / "repo", files)
    parent = subprocess.Popen(
        [sys.executable, "-c", HANGING_PARENT, str(repo), str(tmp_path / "cache")], cwd=ROOT
    )
    try:
        deadline = time.monotonic() + 60
        while len(workers := children(parent.pid)) < 2:
            assert parent.poll() is None
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.05)
        time.sleep(1.0)  # the files are handed out; the slow ones hang their workers
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers):
            assert time.monotonic() < deadline, f"orphaned workers: {workers}"
            time.sleep(0.05)
    finally:
        if parent.poll() is None:
            parent.kill()


def many_raises(count: int) -> bytes:
    checks = "".join(
        f"    if cfg.limit_{n} < 0:\n        raise ValueError('limit_{n}')\n" for n in range(count)
    )
    return f"def validate(cfg):\n{checks}".encode()


def test_a_file_that_exhausts_its_worker_s_memory_loses_only_itself():
    # 20,000 raises take the ast pre-pass some 150 MB and libcst some 400 MB more; this worker
    # may map 64 MiB more than it had (what it inherited free may serve a little of that)
    with WorkerPool(1, None, memory_budget=64 * 2**20) as pool:
        pool.submit(
            [
                SiteWork("pkg/limits.py", many_raises(20_000), Rules()),
                SiteWork("pkg/ok.py", checks(1).encode(), Rules()),
            ]
        )
        results = {}
        while pool.busy:
            results.update((result.work.path, result) for result in pool.poll(timeout=1.0))
    big, ok = results["pkg/limits.py"], results["pkg/ok.py"]
    # where the allocation fails decides the words: CPython's parser says MemoryError for
    # nesting too deep as well, and libcst's native parser aborts
    assert big.extraction.skipped in (
        "out of memory",
        "nesting too deep",
        "extractor crashed: killed by SIGABRT",
        "extractor crashed: killed by SIGSEGV",
    )
    assert ok.extraction.skipped is None and len(ok.extraction.sites) == 1


def test_work_is_typed_a_file_s_sites_or_a_blob_s_facts_alone():
    parser = b"import argparse\np = argparse.ArgumentParser()\np.add_argument('--port', type=int)\n"
    with WorkerPool(1, None) as pool:
        pool.submit([SiteWork("pkg/ok.py", checks(1).encode(), Rules()), FactsWork("b1", parser)])
        results = []
        while pool.busy:
            results += pool.poll(timeout=1.0)
    sites, facts = sorted(results, key=lambda result: isinstance(result.work, FactsWork))
    assert len(sites.extraction.sites) == 1
    assert facts.work.blob == "b1" and facts.extraction is None and not facts.lasting
    assert [flag.options for flag in facts.settings.flags] == [["--port"]]


# A site pass brings a file's settings facts when the join is sure to want them: the file has
# sites, or builds a parser whose flags name their fields. A file that was parsed and has none
# (a validator that does not raise, a raise outside any validator) is asked for only if the
# join reaches it: making its facts for nothing cost a sixth of the site pass on vLLM.
FACTS_CASES = [
    ("a validator that raises", checks(1), True),
    (
        "a validator that does not raise, a raise elsewhere",
        "def check_size(cfg):\n    return cfg.size > 0\n\n"
        "def load(path):\n    raise ValueError(path)\n",
        False,
    ),
    (
        "a parser whose flags name their fields",
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--port', type=int, default=ServerConfig.port)\n",
        True,
    ),
    ("no raise at all", "def check_size(cfg):\n    return cfg.size > 0\n", False),
]


@pytest.mark.parametrize(
    ("source", "made"), [case[1:] for case in FACTS_CASES], ids=[case[0] for case in FACTS_CASES]
)
def test_the_site_pass_brings_the_facts_the_join_is_sure_to_want(source, made):
    ((extraction, facts),) = analyse(
        [SiteWork("pkg/m.py", source.encode(), Rules())], None, Rules()
    )
    assert extraction is not None and extraction.skipped is None
    assert (facts is not None) == made
    ((_, without),) = analyse([SiteWork("pkg/m.py", source.encode(), Rules())], None, None)
    assert without is None  # no facts asked for


@pytest.mark.parametrize(
    ("reason", "lasting"),
    [
        (None, True),
        ("syntax error at line 2: invalid syntax", True),
        ("too large to analyse: 38.0 MiB (limit 2 MiB)", True),
        ("extractor crashed: killed by SIGSEGV", False),
        ("took longer than 60 s to analyse", False),
        ("out of memory", False),
    ],
)
def test_only_what_says_something_about_the_file_is_cached(reason, lasting):
    extraction = FileExtraction(filePath="a.py", skipped=reason)
    assert FileResult(SiteWork("a.py", b"", Rules()), extraction).lasting is lasting


def test_warnings_about_the_analysed_code_are_not_printed(tmp_path):
    # `"\d"` is an invalid escape: Python warns when it parses it (a SyntaxWarning that is
    # shown by default from 3.12 on), but that is the analysed code's business, not the user's.
    files = {
        "engine/config.py": (
            "class CacheConfig:\n"
            "    def __post_init__(self):\n"
            '        if not self.pattern.startswith("\\d"):\n'
            '            raise ValueError("pattern must start with a digit class")\n'
        )
    }
    repo = make_git_repo(tmp_path / "repo", files)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pipeline.cli import main; main()",
            "extract",
            str(repo),
            "--repo-name",
            "acme/engine",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--ci",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "default"},
    )
    assert done.returncode == 0, done.stderr
    assert '"pattern must start with a digit class"' in done.stdout
    assert "Warning" not in done.stderr
