"""`vmine run --llm offline` on the SGLang 0.5.10.post1 tree: wall time and records/s, cold
(empty cache) and warm (the same commit again: nothing explained anew).

    .venv/bin/python bench/run_offline.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import run_offline  # noqa: E402
from bench.trees import ensure_trees  # noqa: E402


def main() -> int:
    trees = ensure_trees()
    with tempfile.TemporaryDirectory(prefix="vmine-bench-run-") as scratch:
        cache, out = Path(scratch) / "cache", Path(scratch) / "out"
        for label in ("cold", "warm"):
            manifest = run_offline(trees.sglang, trees.sglang_rev, "sgl-project/sglang", cache, out)
            seconds, counts = manifest["_seconds"], manifest["counts"]
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
