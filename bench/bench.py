"""`make bench`: cold extraction of vLLM, SGLang, transformers and a small package against
semgrep, real-code checks, and the other bench sections (incremental, LLM throughput, explain
speed, offline run, hostile inputs) when present.

Targets, each measured side by side with semgrep on the same tree in this run (wall time;
CPU time, vmine's and its workers', is printed beside it, as the machine may be shared):
a cold `vmine extract` of vLLM 0.33.0 and of transformers 4.57.1 takes at most 0.10x
semgrep's wall time, SGLang 0.5.10.post1 at most 0.25x, and a small package
(`pypi:accelerate==1.10.1`, 83 files, its wheel and sdist downloaded again into an empty
vmine cache) at most 0.30x; the peak RSS (vmine and its worker processes together) stays
under 1 GiB. `--runs N` times each side N times, alternating, and takes the medians.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import VMINE, PeakMemory  # noqa: E402
from bench.trees import CACHE, ensure_trees  # noqa: E402
from pipeline.source.git import local_git_dir, run_git  # noqa: E402
from pipeline.source.release import tag_commit  # noqa: E402

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
MAX_RSS = 1024**3
# The transformers release is prepared where bench/ecosystem.py keeps it; the small package
# in a cache folder of its own.
ECOSYSTEM = CACHE / "ecosystem"
SMALL = CACHE / "small"
SMALL_PACKAGE = ("accelerate", "1.10.1")


@dataclass
class Measure:
    """One timed command: wall seconds and the peak RSS of its whole process tree."""

    seconds: float
    peak_rss: int
    returncode: int
    stderr: str = ""
    cpu: float = 0.0  # user + system seconds of the command and the processes it waited for


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
        print(f"  (targets: vmine/semgrep wall as listed, peak RSS < {MAX_RSS // 2**20} MiB)")
        sys.stdout.flush()


# -- measuring ----------------------------------------------------------------------------


def measure(cmd: list[str], *, stdout=subprocess.DEVNULL, env: dict | None = None) -> Measure:
    """Run `cmd`, sampling its process tree's RSS every 50 ms."""
    start, before = time.perf_counter(), os.times()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    with PeakMemory(proc.pid) as sampler:
        _, err = proc.communicate()
        seconds, after = time.perf_counter() - start, os.times()
    peak = sampler.peak
    cpu = (
        after.children_user - before.children_user + after.children_system - before.children_system
    )
    return Measure(seconds, peak, proc.returncode, err.decode("utf-8", "replace"), cpu)


def median_run(runs: list[Measure]) -> Measure:
    """The run of median wall time (the lower one of an even number)."""
    ordered = sorted(runs, key=lambda run: run.seconds)
    return ordered[(len(ordered) - 1) // 2]


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


@dataclass(frozen=True)
class Target:
    """What one cold extract is timed on: the vmine command's SOURCE arguments, the tree
    semgrep scans, and the largest vmine/semgrep wall ratio allowed."""

    label: str
    source: list[str]  # `vmine extract` arguments before the options
    git_dir: Path  # where the sites' files are read back from
    rev: str
    max_ratio: float
    path_prefix: str = ""  # what a `pypi:` release puts before the tree's paths (`src/`)


def _vmine_cold(target: Target, tmp: Path, number: int) -> tuple[Measure, Path]:
    """One cold extract: a fresh, empty cache folder (a `pypi:` source downloads again)."""
    out = tmp / f"sites-{number}.jsonl"
    cmd = [
        str(VMINE),
        "extract",
        *target.source,
        "--cache-dir",
        str(tmp / f"cache-{number}"),
        "-o",
        str(out),
        "--ci",
    ]
    return measure(cmd), out


def bench_target(target: Target, *, with_semgrep: bool, report: Report, runs: int = 1) -> None:
    """The target's cold extract and semgrep, alternating `runs` times each; the ratio is
    taken of the median wall times of this run."""
    label = target.label
    exe = None
    if with_semgrep:
        try:
            exe = semgrep()
        except (OSError, subprocess.CalledProcessError) as exc:
            report.check(f"{label}: semgrep installed", f"no ({exc})", False)
    tree = export_tree(
        target.git_dir, target.rev, f"{target.git_dir.stem}-{target.rev.replace('/', '_')}"
    )
    vmine_runs: list[Measure] = []
    semgrep_runs: list[Measure] = []
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="vmine-bench-") as tmp:
        for number in range(runs):
            run, out = _vmine_cold(target, Path(tmp), number)
            if run.returncode not in (0, 1):
                report.check(f"{label}: vmine extract exit code", run.returncode, False)
                print(run.stderr[-2000:], file=sys.stderr)
                return
            vmine_runs.append(run)
            if exe is not None:
                sg, results = run_semgrep(exe, tree)
                if sg.returncode != 0:
                    report.check(f"{label}: semgrep exit code", sg.returncode, False)
                    exe = None
                else:
                    semgrep_runs.append(sg)
            print(
                f"  {label} run {number + 1}: vmine {run.seconds:.2f} s wall {run.cpu:.2f} s CPU"
                + (
                    f"; semgrep {semgrep_runs[-1].seconds:.2f} s wall "
                    f"{semgrep_runs[-1].cpu:.2f} s CPU"
                    if exe is not None
                    else ""
                ),
                file=sys.stderr,
                flush=True,
            )
        summary = [ln for ln in run.stderr.splitlines() if ln.startswith("extract:")]
        sites = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    run = median_run(vmine_runs)
    files = re.search(r"files=(\d+)", summary[-1]).group(1) if summary else "?"
    report.add(f"{label}: .py files", files)
    report.add(f"{label}: sites", len(sites))
    report.add(f"{label}: vmine cold wall (s)", f"{run.seconds:.2f}")
    report.add(f"{label}: vmine cold CPU, with workers (s)", f"{run.cpu:.2f}")
    report.check(
        f"{label}: vmine peak RSS, tree (MiB)",
        f"{max(r.peak_rss for r in vmine_runs) / 2**20:.0f}",
        max(r.peak_rss for r in vmine_runs) < MAX_RSS,
    )
    if semgrep_runs:
        sg = median_run(semgrep_runs)
        ratio = statistics.median(r.seconds for r in vmine_runs) / statistics.median(
            r.seconds for r in semgrep_runs
        )
        report.add(f"{label}: semgrep wall (s)", f"{sg.seconds:.2f}")
        report.add(f"{label}: semgrep CPU (s)", f"{sg.cpu:.2f}")
        report.add(f"{label}: semgrep peak RSS (MiB)", f"{sg.peak_rss / 2**20:.0f}")
        report.add(f"{label}: semgrep matches (any raise ValueError)", len(results))
        report.add(f"{label}: vmine/semgrep CPU ratio", f"{run.cpu / sg.cpu:.3f}")
        report.check(
            f"{label}: vmine/semgrep wall ratio (<= {target.max_ratio})",
            f"{ratio:.3f}",
            ratio <= target.max_ratio,
        )
    check_sites(label, target.git_dir, target.rev, sites, report, target.path_prefix)


def prepared_release(cache: Path, name: str, version: str) -> tuple[Path, str, str]:
    """A release committed into vmine's release cache in `cache` (downloaded once): its
    git directory, tag and path prefix."""
    git_dir = cache / "releases" / f"{name}.git"
    tag = f"refs/tags/{name}=={version}"
    if tag_commit(git_dir, tag) is None:
        with tempfile.TemporaryDirectory(prefix="vmine-bench-") as tmp:
            run = measure(
                [
                    str(VMINE),
                    "extract",
                    f"pypi:{name}=={version}",
                    "--cache-dir",
                    str(cache),
                    "-o",
                    str(Path(tmp) / "sites.jsonl"),
                    "--ci",
                ]
            )
        if run.returncode not in (0, 1):
            raise RuntimeError(f"cannot prepare {name}=={version}:\n{run.stderr[-2000:]}")
    upstream = json.loads((cache / "releases" / f"{name}=={version}.upstream.json").read_text())
    return git_dir, tag, upstream.get("path_prefix") or ""


def check_sites(
    label: str, git_dir: Path, rev: str, sites: list[dict], report: Report, prefix: str = ""
) -> None:
    """Real-code checks: each site points at a `raise`, its sourceCode is the file's lines,
    its messagePattern compiles in Python (`prefix`: what filePath has before the tree's
    path)."""
    git_dir = local_git_dir(git_dir)
    texts: dict[str, list[str]] = {}
    bad_line = bad_source = bad_pattern = 0
    for site in sites:
        path = site["filePath"].removeprefix(prefix)
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


def targets() -> list[Target]:
    trees = ensure_trees()
    transformers, transformers_tag, _ = prepared_release(ECOSYSTEM, "transformers", "4.57.1")
    name, version = SMALL_PACKAGE
    small, small_tag, small_prefix = prepared_release(SMALL, name, version)
    return [
        Target(
            "vLLM 0.33.0",
            [str(trees.vllm), "--rev", trees.vllm_new, "--repo-name", "vllm-project/vllm"],
            trees.vllm,
            trees.vllm_new,
            0.10,
        ),
        Target(
            "transformers 4.57.1",
            [
                str(transformers),
                "--rev",
                transformers_tag,
                "--repo-name",
                "huggingface/transformers",
            ],
            transformers,
            transformers_tag,
            0.10,
        ),
        Target(
            "SGLang 0.5.10.post1",
            [str(trees.sglang), "--rev", trees.sglang_rev, "--repo-name", "sgl-project/sglang"],
            trees.sglang,
            trees.sglang_rev,
            0.25,
        ),
        # the wheel and the sdist are downloaded again into the empty vmine cache
        Target(
            f"{name} {version} (pypi:, small)",
            [f"pypi:{name}=={version}"],
            small,
            small_tag,
            0.30,
            small_prefix,
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="cold runs of each side")
    parser.add_argument("--only", help="run only the targets whose label contains this")
    parser.add_argument("--no-sections", action="store_true", help="only the cold extracts")
    args = parser.parse_args(argv)
    report = Report()
    for target in targets():
        if args.only and args.only.lower() not in target.label.lower():
            continue
        bench_target(target, with_semgrep=True, report=report, runs=args.runs)
    report.print(f"cold extract (cpus={os.cpu_count()})")
    failed = [] if args.no_sections else run_sections()
    print("\n== summary ==")
    print(f"  extract checks failed: {', '.join(report.failures) or 'none'}")
    print(f"  sections failed: {', '.join(failed) or 'none'}")
    return 1 if report.failures or failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
