"""`vmine history` on ten vLLM releases against one cold release. Run:
`.venv/bin/python bench/history.py [--runs N] [--table]`.

The releases (vLLM 0.24.0 to 0.33.0, the wheels' files) are downloaded once into
bench/.cache/history/vmine-cache/releases/ (vmine's own release cache), so what is timed is
vmine, not pip. Each timed run gets an empty store (a fresh cache folder whose releases/
links to those repositories):

- one cold release: `vmine extract pypi:vllm==0.33.0` (every file parsed);
- ten releases: `vmine history pypi:vllm --releases 0.24.0 ... 0.33.0 --format json`, which
  extracts each release once through the per-blob cache (target: <= 3x the cold release).

The two alternate, `--runs` times each; wall and CPU time (vmine and its workers) and the peak
RSS of the process tree are printed for every run, and the ratios are taken of the medians
(memory: at most 2x). `--table` prints the history of five real errors of vLLM 0.28.0 ->
0.33.0 as Markdown (from a run of the six releases). `--by-release` runs the ten releases once
in this process and prints what each release cost (wall; CPU of this process, and of its
workers and git; this process's RSS after it): where a series spends what one cold release
does not."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import vmine  # noqa: E402
from pipeline.source.release import open_release  # noqa: E402

CACHE = ROOT / "bench" / ".cache" / "history"
RELEASES = CACHE / "vmine-cache"
VERSIONS = tuple(f"0.{minor}.0" for minor in range(24, 34))
TABLE_VERSIONS = tuple(f"0.{minor}.0" for minor in range(28, 34))
TARGET = 3.0
MEMORY_TARGET = 2.0


def ensure_releases(versions: tuple[str, ...]) -> None:
    """Each release committed into vmine's release cache once (downloaded from the index)."""
    for version in versions:
        open_release(f"pypi:vllm=={version}", cache_dir=RELEASES)


def fresh_cache(parent: Path, name: str) -> Path:
    """A cache folder with no store, whose releases are the prepared ones."""
    cache = parent / name
    cache.mkdir()
    (cache / "releases").symlink_to(RELEASES / "releases", target_is_directory=True)
    return cache


def cold_release(parent: Path, number: int):
    cache = fresh_cache(parent, f"cold-{number}")
    out = parent / f"sites-{number}.jsonl"
    return vmine(
        "extract",
        f"pypi:vllm=={VERSIONS[-1]}",
        "-o",
        str(out),
        "--cache-dir",
        str(cache),
        "--ci",
        memory=True,
    )


def history(parent: Path, number: int, versions: tuple[str, ...] = VERSIONS):
    cache = fresh_cache(parent, f"history-{number}")
    return vmine(
        "history",
        "pypi:vllm",
        "--releases",
        *versions,
        "--format",
        "json",
        "--cache-dir",
        str(cache),
        "--ci",
        ok=(0,),
        memory=True,
    )


def by_release(parent: Path) -> None:
    """The ten releases mined in this process (as `vmine history` does), each release's cost
    printed when it is done; its workers and git are waited for within the release, so
    their CPU falls in it."""
    from pipeline.history import command

    extract = command.extract_errors

    def timed(spec: str, role: str, **options):
        started, before = time.perf_counter(), os.times()
        errors, stats = extract(spec, role, **options)
        after = os.times()
        own = after.user - before.user + after.system - before.system
        children = (
            after.children_user
            - before.children_user
            + after.children_system
            - before.children_system
        )
        print(
            f"  {role}: {time.perf_counter() - started:.1f} s wall, {own:.1f} s CPU here, "
            f"{children:.1f} s in workers and git; {stats.files_parsed} files analysed; "
            f"{_rss() / 2**20:.0f} MiB here",
            flush=True,
        )
        return errors, stats

    command.extract_errors = timed
    try:
        command.mine_releases("pypi:vllm", VERSIONS, cache_dir=fresh_cache(parent, "by-release"))
    finally:
        command.extract_errors = extract


def _rss() -> int:
    """This process's resident memory now, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def five_errors(report: dict) -> list[dict]:
    """Five errors that show each kind of timeline: reworded, settings changed, added after
    the first release, removed, and present throughout without a change."""
    errors = report["errors"]
    first, last = report["releases"][0]["release"], report["releases"][-1]["release"]
    picks: list[dict] = []

    # errors of vllm/config/ first, and those present since the first release before others
    ranked = sorted(
        errors, key=lambda e: ("vllm/config/" not in e["filePath"], e["firstSeen"] != first)
    )

    def pick(test) -> None:
        for error in ranked:
            if error not in picks and test(error):
                picks.append(error)
                return

    pick(lambda e: e["rewordedIn"])
    pick(lambda e: e["settingsChangedIn"])
    pick(lambda e: e["firstSeen"] != first and e["lastSeen"] == last)
    pick(lambda e: e["removedIn"])
    pick(lambda e: e["firstSeen"] == first and e["lastSeen"] == last and not e["events"])
    return picks


def table(report: dict) -> str:
    rows = [
        "| error | where (newest) | first seen | last seen | reworded in | moved in | changed in |",
        "|---|---|---|---|---|---|---|",
    ]
    for error in five_errors(report):
        changed = [
            f"{event['release']} ({'+'.join(f for f in event['fields'] if f in ('guards', 'messagePattern', 'settings'))})"
            for event in error["events"]
            if event["kind"] == "changed"
        ]
        message = error["errorMessage"].replace("|", "\\|").replace("\n", " ")
        message = message if len(message) <= 90 else message[:89] + "…"
        last = error["lastSeen"] + (
            f" (removed in {error['removedIn']})" if error["removedIn"] else ""
        )
        rows.append(
            f"| `{error['qualname']}`: {message} | `{error['filePath']}:{error['lineNumber']}` "
            f"| {error['firstSeen']} | {last} | {', '.join(error['rewordedIn']) or '–'} "
            f"| {', '.join(error['movedIn']) or '–'} | {', '.join(changed) or '–'} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--by-release", action="store_true")
    args = parser.parse_args(argv)
    ensure_releases(VERSIONS)
    with tempfile.TemporaryDirectory(prefix="vmine-bench-history-") as tmp:
        parent = Path(tmp)
        if args.by_release:
            by_release(parent)
            return 0
        if args.table:
            step = history(parent, 0, TABLE_VERSIONS)
            report = json.loads(step.stdout)
            print(f"vLLM {TABLE_VERSIONS[0]} -> {TABLE_VERSIONS[-1]}: {report['counts']}")
            print(table(report))
            return 0
        cold, ten = [], []
        for number in range(args.runs):
            cold.append(cold_release(parent, number))
            ten.append(history(parent, number))
            print(
                f"  run {number + 1}: one cold release {cold[-1].seconds:.1f} s wall "
                f"{cold[-1].cpu:.1f} s CPU {cold[-1].peak_rss / 2**20:.0f} MiB; ten releases "
                f"{ten[-1].seconds:.1f} s wall {ten[-1].cpu:.1f} s CPU "
                f"{ten[-1].peak_rss / 2**20:.0f} MiB (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
            shutil.rmtree(parent / f"cold-{number}")
            shutil.rmtree(parent / f"history-{number}")
        counts = json.loads(ten[-1].stdout)["counts"]
    wall = statistics.median(s.seconds for s in ten) / statistics.median(s.seconds for s in cold)
    cpu = statistics.median(s.cpu for s in ten) / statistics.median(s.cpu for s in cold)
    memory = statistics.median(s.peak_rss for s in ten) / statistics.median(
        s.peak_rss for s in cold
    )
    print(f"  vLLM {VERSIONS[0]} .. {VERSIONS[-1]}: {counts}")
    verdict = "ok" if wall <= TARGET else "OVER"
    print(
        f"  ten releases / one cold release: {wall:.2f}x wall, {cpu:.2f}x CPU "
        f"(target <= {TARGET}x wall) {verdict}; {memory:.2f}x peak RSS "
        f"(target <= {MEMORY_TARGET}x)"
    )
    return 0 if wall <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
