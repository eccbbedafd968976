"""Runs the installed `vmine` command for the benches: timed, in batch mode, its output kept."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

VMINE = Path(sys.executable).parent / "vmine"
_SUMMARY = re.compile(
    r"extract: files=(\d+) candidates=(\d+) parsed=(\d+) reused=(\d+) "
    r"sites=(\d+)"
)


@dataclass
class Step:
    """One timed vmine command and what its closing lines said."""

    seconds: float
    stderr: str
    stdout: str
    cpu: float = 0.0  # user + system seconds of vmine and its worker processes
    peak_rss: int = 0  # bytes: the largest summed RSS of its process tree (when sampled)

    def extract_counts(self) -> dict[str, int]:
        match = _SUMMARY.search(self.stderr)
        if match is None:
            raise RuntimeError(f"no summary line in vmine extract's stderr:\n{self.stderr}")
        keys = ("files", "candidates", "parsed", "reused", "sites")
        return dict(zip(keys, map(int, match.groups()), strict=True))


def vmine(*args: str, ok: tuple[int, ...] = (0, 1), memory: bool = False) -> Step:
    """Run `vmine ARGS` as CI would (plain lines, no GitHub annotations); with `memory`, its
    process tree's RSS is sampled every 50 ms for the peak."""
    env = {**os.environ, "CI": "true"}
    env.pop("GITHUB_ACTIONS", None)
    started, before = time.perf_counter(), os.times()
    proc = subprocess.Popen(
        [str(VMINE), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    sampler = PeakMemory(proc.pid) if memory else None
    with sampler or contextlib.nullcontext():
        stdout, stderr = proc.communicate()
        seconds, after = time.perf_counter() - started, os.times()
    peak = sampler.peak if sampler else 0
    cpu = (
        after.children_user - before.children_user + after.children_system - before.children_system
    )
    if proc.returncode not in ok:
        raise RuntimeError(f"vmine {' '.join(args)} exited {proc.returncode}:\n{stderr}")
    return Step(seconds, stderr, stdout, cpu, peak)


def run_offline(repo: Path, rev: str, repo_name: str, cache: Path, out: Path) -> dict:
    """`vmine run --llm offline`; the manifest it wrote, with `_seconds` and `_dir` added."""
    step = vmine(
        "run",
        str(repo),
        "--rev",
        rev,
        "--repo-name",
        repo_name,
        "--llm",
        "offline",
        "--cache-dir",
        str(cache),
        "-o",
        str(out),
        "--ci",
    )
    match = re.search(r"records: \d+ written to (\S+)", step.stderr)
    if match is None:
        raise RuntimeError(f"vmine run did not say where it wrote:\n{step.stderr}")
    manifest = json.loads((Path(match[1]) / "manifest.json").read_text())
    manifest["_seconds"] = step.seconds
    manifest["_dir"] = match[1]
    return manifest


class PeakMemory:
    """The peak RSS of `pid`'s process tree (tree_memory), sampled every 50 ms by a thread
    while the `with` block runs."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak = pid, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_memory(self.pid)[0])
            self._stop.wait(0.05)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def tree_memory(root: int) -> tuple[int, int]:
    """The summed VmRSS of `root` and its descendants, and the largest VmHWM among them (a
    process's own peak, which catches what happens between two samples; ru_maxrss would
    count this bench's size from before the exec)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(b")", 1)[1].split()[1])
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    total = highest = 0
    for pid in tree:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        total += int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
        highest = max(highest, int(fields.get("VmHWM", "0 kB").split()[0]) * 1024)
    return total, highest
