"""The settings figures (issue 9) on the bench trees, vLLM 0.33.0 and SGLang 0.5.10.post1:

- resolution: among the sites whose guards read an attribute of `self`, `cls`, `cfg`,
  `config`, `args` (or of a `*_config`, `*_cfg`, `*_args` name), the share with at least
  one resolved flag (goal: vLLM >= 70%, SGLang >= 85%), and the share with any setting;
- offline explanations (`vmine run --llm offline`): the share of records whose solutions
  name a flag that an `add_argument` call of the tree defines (goal: vLLM >= 60%,
  SGLang >= 75%), and the share of fallback example fixes, those that are only comments
  (goal: at most 20%);
- cost: cold extracts with and without the settings, alternated (each in a fresh
  interpreter with an empty cache): the added wall and CPU time of the fastest runs, the
  least disturbed on a shared machine, and of the medians (goal: +15% at most; the
  extract against semgrep is the cold section of bench.py).

    .venv/bin/python bench/settings.py [--runs N]      # N alternations, default 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import run_offline, vmine  # noqa: E402
from bench.trees import ensure_trees  # noqa: E402
from extractors.facts import Rules  # noqa: E402
from pipeline.keys import settings_token  # noqa: E402

GOALS = {"vLLM 0.33.0": (0.70, 0.60), "SGLang 0.5.10.post1": (0.85, 0.75)}
MAX_FALLBACK = 0.20
MAX_ADDED = 0.15
# a guard reads a setting through one of these names
_ROOT = re.compile(r"(?<![\w.])(self|cls|cfg|config|args|\w+_config|\w+_cfg|\w+_args)\.[A-Za-z_]")
_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")

# One cold extract in a fresh interpreter, with or without the settings.
_EXTRACT = """
import sys
from pathlib import Path
from pipeline.mine.extract import extract_source
repo, rev, name, cache, settings = sys.argv[1:6]
extract_source(repo, rev, repo_name=name, cache_dir=Path(cache), settings=settings == "1")
"""


def resolution(sites: list[dict]) -> tuple[int, int, int]:
    """(sites whose guards read a config-like chain, those with a flag, with any setting)."""
    reading = [s for s in sites if any(_ROOT.search(guard) for guard in s["guards"])]
    flagged = [s for s in reading if any(x["flags"] for x in s["settings"])]
    resolved = [s for s in reading if s["settings"]]
    return len(reading), len(flagged), len(resolved)


def parser_flags(store: Path) -> set[str]:
    """Every long option an `add_argument` call of the tree defines (the run's settings facts)."""
    flags: set[str] = set()
    with sqlite3.connect(store) as db:
        rows = db.execute(
            "SELECT settings FROM blob_settings WHERE token = ? AND settings IS NOT NULL",
            (settings_token(Rules()),),
        ).fetchall()
    for (text,) in rows:
        for flag in json.loads(text).get("flags", []):
            flags.update(option for option in flag["options"] if option.startswith("--"))
    return flags


def offline_figures(dataset: Path, flags: set[str]) -> tuple[int, int, int]:
    """(records, records whose solutions name a parser's flag, fallback example fixes)."""
    records = [json.loads(p.read_text())["record"] for p in (dataset / "records").glob("*.json")]
    named = sum(
        1
        for r in records
        if any(flag in flags for text in r["solutions"] for flag in _FLAG.findall(text))
    )
    fallback = sum(
        1
        for r in records
        if all(line.lstrip().startswith("#") for line in r["exampleFix"].splitlines() if line)
    )
    return len(records), named, fallback


def timed_extract(repo: Path, rev: str, name: str, settings: bool) -> tuple[float, float]:
    """(wall, CPU of the process tree) of one cold extract in a fresh interpreter."""
    with tempfile.TemporaryDirectory(prefix="vmine-bench-settings-") as cache:
        before, started = os.times(), time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", _EXTRACT, str(repo), rev, name, cache, "1" if settings else "0"],
            check=True,
            cwd=ROOT,
        )
        wall, after = time.perf_counter() - started, os.times()
    cpu = (
        after.children_user - before.children_user + after.children_system - before.children_system
    )
    return wall, cpu


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {part / whole:.0%}" if whole else "0/0"


def _verdict(ok: bool) -> str:
    return "ok" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="alternations of the cost runs")
    runs = parser.parse_args(argv if argv is not None else []).runs
    trees = ensure_trees()
    targets = [
        ("vLLM 0.33.0", trees.vllm, trees.vllm_new, "vllm-project/vllm"),
        ("SGLang 0.5.10.post1", trees.sglang, trees.sglang_rev, "sgl-project/sglang"),
    ]
    failed = False
    for label, repo, rev, name in targets:
        flag_goal, named_goal = GOALS[label]
        with tempfile.TemporaryDirectory(prefix="vmine-bench-settings-") as scratch:
            out = Path(scratch) / "sites.jsonl"
            vmine(
                "extract",
                str(repo),
                "--rev",
                rev,
                "--repo-name",
                name,
                "--cache-dir",
                str(Path(scratch) / "c"),
                "-o",
                str(out),
                "--ci",
            )
            sites = [json.loads(line) for line in out.read_text().splitlines()]
            reading, flagged, resolved = resolution(sites)
            share = flagged / reading if reading else 0.0
            print(
                f"  {label}: sites {len(sites)}; reading self/cfg/args {reading}; with a flag "
                f"{_share(flagged, reading)} (goal >= {flag_goal:.0%}) "
                f"{_verdict(share >= flag_goal)}; with a setting {_share(resolved, reading)}",
                flush=True,
            )
            failed |= share < flag_goal

            cache = Path(scratch) / "run-cache"
            manifest = run_offline(repo, rev, name, cache, Path(scratch) / "out")
            total, named, fallback = offline_figures(
                Path(manifest["_dir"]), parser_flags(cache / "store.sqlite")
            )
            named_share = named / total if total else 0.0
            fallback_share = fallback / total if total else 0.0
            print(
                f"  {label}: offline records {total}; solutions naming a parser's flag "
                f"{_share(named, total)} (goal >= {named_goal:.0%}) "
                f"{_verdict(named_share >= named_goal)}; fallback example fixes "
                f"{_share(fallback, total)} (goal <= {MAX_FALLBACK:.0%}) "
                f"{_verdict(fallback_share <= MAX_FALLBACK)}",
                flush=True,
            )
            failed |= named_share < named_goal or fallback_share > MAX_FALLBACK

        walls: dict[bool, list[float]] = {True: [], False: []}
        cpus: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(runs):
            for with_settings in (False, True):
                wall, cpu = timed_extract(repo, rev, name, with_settings)
                walls[with_settings].append(wall)
                cpus[with_settings].append(cpu)
        base, added = min(walls[False]), min(walls[True])
        base_cpu, added_cpu = min(cpus[False]), min(cpus[True])
        wall_cost = added / base - 1
        median_cost = statistics.median(walls[True]) / statistics.median(walls[False]) - 1
        print(
            f"  {label}: cold extract without settings {base:.2f} s wall / {base_cpu:.2f} s "
            f"CPU, with {added:.2f} s / {added_cpu:.2f} s (fastest of {runs}): "
            f"{wall_cost:+.1%} wall, {added_cpu / base_cpu - 1:+.1%} CPU "
            f"(goal <= +{MAX_ADDED:.0%}) {_verdict(wall_cost <= MAX_ADDED)}; medians "
            f"{median_cost:+.1%} wall; all walls without "
            f"{[round(w, 2) for w in walls[False]]}, with "
            f"{[round(w, 2) for w in walls[True]]}; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        failed |= wall_cost > MAX_ADDED
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
