"""`vmine run --llm offline` on the SGLang 0.5.10.post1 tree: wall time and records/s, cold
(empty cache) and warm (the same commit again: nothing explained anew).

    .venv/bin/python bench/run_offline.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.trees import ensure_trees  # noqa: E402

VMINE = Path(sys.executable).parent / "vmine"


def run_offline(repo: Path, rev: str, cache: Path, out: Path) -> tuple[float, dict]:
    """Seconds taken and the manifest written by one offline run."""
    env = {**os.environ, "CI": "true"}
    env.pop("GITHUB_ACTIONS", None)
    started = time.perf_counter()
    done = subprocess.run(
        [str(VMINE), "run", str(repo), "--rev", rev, "--repo-name", "sgl-project/sglang",
         "--llm", "offline", "--cache-dir", str(cache), "-o", str(out), "--ci"],
        capture_output=True, text=True, env=env,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"vmine run exited {done.returncode}:\n{done.stderr}")
    where = re.search(r"records: \d+ written to (\S+)", done.stderr)
    if where is None:
        raise RuntimeError(f"vmine run did not say where it wrote:\n{done.stderr}")
    return seconds, json.loads((Path(where[1]) / "manifest.json").read_text())


def main() -> int:
    trees = ensure_trees()
    with tempfile.TemporaryDirectory(prefix="vmine-bench-run-") as scratch:
        cache, out = Path(scratch) / "cache", Path(scratch) / "out"
        for label in ("cold", "warm"):
            seconds, manifest = run_offline(trees.sglang, trees.sglang_rev, cache, out)
            counts = manifest["counts"]
            print(
                f"  run --llm offline SGLang 0.5.10.post1 ({label}): {seconds:.2f} s, "
                f"{counts['records']} records, {counts['records'] / seconds:.0f} records/s, "
                f"{counts['sitesNew']} explained anew, {counts['sitesReused']} from the cache, "
                f"{manifest['llm']['requests']} requests",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
