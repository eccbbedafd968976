"""`make bench`: cold extraction of vLLM and SGLang against semgrep, real-code checks, and the
other bench sections (incremental, LLM throughput, explain speed, offline run, hostile inputs)
when present.

Targets: a cold `vmine extract` of vLLM 0.33.0 takes at most 0.25x semgrep's wall time on the
same tree, with a peak RSS (vmine and its worker processes together) under 1 GiB.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import VMINE, tree_memory  # noqa: E402
from bench.trees import CACHE, ensure_trees  # noqa: E402
from pipeline.source.git import local_git_dir, run_git  # noqa: E402

TOOLS = CACHE / "tools"
SEMGREP_VERSION = "1.185.0"
SECTIONS = (
    "incremental",
    "llm_throughput",
    "llm_cache",
    "explain_speed",
    "run_offline",
    "messages",
    "hostile",
    "ecosystem",
    "settings",
    "history",
    "scope",
)
MAX_RATIO = 0.25
MAX_RSS = 1024**3


@dataclass
class Measure:
    """One timed command: wall seconds and the peak RSS of its whole process tree."""

    seconds: float
    peak_rss: int
    returncode: int
    stderr: str = ""


@dataclass
class Row:
    label: str
    value: str
    verdict: str = ""


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def add(self, label: str, value: object, verdict: str = "") -> None:
        self.rows.append(Row(label, str(value), verdict))

    def check(self, label: str, value: object, ok: bool) -> None:
        self.add(label, value, "ok" if ok else "FAIL")
        if not ok:
            self.failures.append(label)

    def print(self, title: str) -> None:
        width = max((len(row.label) for row in self.rows), default=10)
        vwidth = max((len(row.value) for row in self.rows), default=10)
        print(f"\n== {title} ==")
        for row in self.rows:
            print(f"  {row.label:<{width}}  {row.value:>{vwidth}}  {row.verdict}".rstrip())
        print(f"  (targets: vmine/semgrep wall <= {MAX_RATIO}, peak RSS < {MAX_RSS // 2**20} MiB)")
        sys.stdout.flush()


# -- measuring ----------------------------------------------------------------------------


def measure(cmd: list[str], *, stdout=subprocess.DEVNULL, env: dict | None = None) -> Measure:
    """Run `cmd`, sampling its process tree's RSS every 50 ms."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_memory(proc.pid)[0])
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - start
    stop.set()
    sampler.join()
    return Measure(seconds, peak, proc.returncode, err.decode("utf-8", "replace"))


# -- tools and trees ------------------------------------------------------------------------


def semgrep() -> Path:
    """semgrep from PATH, else installed with pip into bench/.cache/tools."""
    found = shutil.which("semgrep")
    if found:
        return Path(found)
    exe = TOOLS / "bin" / "semgrep"
    if not exe.exists():
        print("installing semgrep into bench/.cache/tools ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(TOOLS)], check=True)
        subprocess.run(
            [
                str(TOOLS / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                f"semgrep=={SEMGREP_VERSION}",
            ],
            check=True,
        )
    return exe


def export_tree(git_dir: Path, rev: str, name: str) -> Path:
    """The commit's files on disk (for semgrep, which cannot read git blobs)."""
    target = CACHE / "export" / name
    if target.exists():
        return target
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        archive = Path(tmp) / "tree.tar"
        with archive.open("wb") as out:
            subprocess.run(
                ["git", "--git-dir", str(git_dir), "archive", rev], stdout=out, check=True
            )
        unpacked = Path(tmp) / "tree"
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
        target.parent.mkdir(parents=True, exist_ok=True)
        unpacked.rename(target)
    return target


def semgrep_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(SEMGREP_ENABLE_VERSION_CHECK="0", SEMGREP_SEND_METRICS="off")
    return env


# -- one target ---------------------------------------------------------------------------


def run_semgrep(exe: Path, tree: Path) -> tuple[Measure, list[dict]]:
    """`semgrep -e 'raise ValueError(...)'` over a tree: the timed run and its matches."""
    cmd = [
        str(exe),
        "scan",
        "--lang",
        "python",
        "-e",
        "raise ValueError(...)",
        "--metrics=off",
        "--disable-version-check",
        "--json",
        "--quiet",
        "--no-git-ignore",
        str(tree),
    ]
    with tempfile.TemporaryFile() as out:
        run = measure(cmd, stdout=out, env=semgrep_env())
        out.seek(0)
        return run, json.loads(out.read() or b"{}").get("results", [])


def bench_target(
    label: str, git_dir: Path, rev: str, repo: str, *, with_semgrep: bool, report: Report
) -> None:
    with tempfile.TemporaryDirectory(prefix="vmine-bench-") as tmp:
        out = Path(tmp) / "sites.jsonl"
        cmd = [
            str(VMINE),
            "extract",
            str(git_dir),
            "--rev",
            rev,
            "--repo-name",
            repo,
            "--cache-dir",
            str(Path(tmp) / "cache"),
            "-o",
            str(out),
            "--ci",
        ]
        run = measure(cmd)
        if run.returncode not in (0, 1):
            report.check(f"{label}: vmine extract exit code", run.returncode, False)
            print(run.stderr[-2000:], file=sys.stderr)
            return
        summary = [ln for ln in run.stderr.splitlines() if ln.startswith("extract:")]
        sites = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    files = re.search(r"files=(\d+)", summary[-1]).group(1) if summary else "?"
    report.add(f"{label}: .py files", files)
    report.add(f"{label}: sites", len(sites))
    report.add(f"{label}: vmine cold wall (s)", f"{run.seconds:.2f}")
    report.check(
        f"{label}: vmine peak RSS, tree (MiB)",
        f"{run.peak_rss / 2**20:.0f}",
        run.peak_rss < MAX_RSS,
    )
    if with_semgrep:
        tree = export_tree(git_dir, rev, f"{git_dir.stem}-{rev}")
        try:
            exe = semgrep()
        except (OSError, subprocess.CalledProcessError) as exc:
            report.check(f"{label}: semgrep installed", f"no ({exc})", False)
            check_sites(label, git_dir, rev, sites, report)
            return
        sg, results = run_semgrep(exe, tree)
        if sg.returncode != 0:
            report.check(f"{label}: semgrep exit code", sg.returncode, False)
        else:
            ratio = run.seconds / sg.seconds
            report.add(f"{label}: semgrep wall (s)", f"{sg.seconds:.2f}")
            report.add(f"{label}: semgrep peak RSS (MiB)", f"{sg.peak_rss / 2**20:.0f}")
            report.add(f"{label}: semgrep matches (any raise ValueError)", len(results))
            report.check(
                f"{label}: vmine/semgrep wall ratio (<= {MAX_RATIO})",
                f"{ratio:.3f}",
                ratio <= MAX_RATIO,
            )
    check_sites(label, git_dir, rev, sites, report)


def check_sites(label: str, git_dir: Path, rev: str, sites: list[dict], report: Report) -> None:
    """Real-code checks: each site points at a `raise`, its sourceCode is the file's lines,
    its messagePattern compiles in Python."""
    git_dir = local_git_dir(git_dir)
    texts: dict[str, list[str]] = {}
    bad_line = bad_source = bad_pattern = 0
    for site in sites:
        path = site["filePath"]
        if path not in texts:
            shown = run_git(git_dir, "show", f"{rev}:{path}")
            texts[path] = shown.stdout.decode("utf-8", "replace").split("\n")
        lines = texts[path]
        if not lines[site["lineNumber"] - 1].lstrip().startswith("raise"):
            bad_line += 1
        start, end = site["sourceCodeStart"], site["sourceCodeEnd"]
        if site["sourceCode"] != "\n".join(lines[start - 1 : end]):
            bad_source += 1
        try:
            re.compile(site["messagePattern"], re.DOTALL)
        except re.error:
            bad_pattern += 1
    report.check(f"{label}: lineNumber not at a raise", bad_line, bad_line == 0)
    report.check(f"{label}: sourceCode differs from file", bad_source, bad_source == 0)
    report.check(f"{label}: messagePattern not compiling", bad_pattern, bad_pattern == 0)
    by_status = Counter(site["messageStatus"] for site in sites)
    for name in ("literal", "template", "partial", "unresolved"):
        report.add(f"{label}: sites {name}", by_status[name])


# -- the other sections -------------------------------------------------------------------


def run_sections() -> list[str]:
    """Import and run each other bench section present; one failing does not stop the rest."""
    failed = []
    for name in SECTIONS:
        if not (ROOT / "bench" / f"{name}.py").exists():
            print(f"\n== {name} == (not present, skipped)")
            continue
        print(f"\n== {name} ==", flush=True)
        try:
            module = importlib.import_module(f"bench.{name}")
            code = module.main()
            if code:
                failed.append(name)
                print(f"  section {name} FAILED: main() returned {code}", flush=True)
        except (Exception, SystemExit) as exc:  # a section's failure is reported, not fatal
            failed.append(name)
            traceback.print_exc()
            print(f"  section {name} FAILED: {type(exc).__name__}: {exc}", flush=True)
    return failed


def main() -> int:
    trees = ensure_trees()
    report = Report()
    bench_target(
        "vLLM 0.33.0",
        trees.vllm,
        trees.vllm_new,
        "vllm-project/vllm",
        with_semgrep=True,
        report=report,
    )
    bench_target(
        "SGLang 0.5.10.post1",
        trees.sglang,
        trees.sglang_rev,
        "sgl-project/sglang",
        with_semgrep=True,
        report=report,
    )
    report.print(f"cold extract (cpus={os.cpu_count()})")
    failed = run_sections()
    print("\n== summary ==")
    print(f"  extract checks failed: {', '.join(report.failures) or 'none'}")
    print(f"  sections failed: {', '.join(failed) or 'none'}")
    return 1 if report.failures or failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
