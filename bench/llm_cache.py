"""What a regeneration pays the LLM for: vLLM 0.32.0 -> 0.33.0 with a warm explanation cache.

1. `vmine run --llm openai` of vLLM 0.32.0 against the local fake server (no latency), which
   warms a fresh cache with an explanation for every site;
2. `vmine run --dry-run` of 0.33.0 with that cache: the requests it would make;
3. `vmine diff` of the two releases: the floor, added + reworded + changed (the errors whose
   meaning is new), which a cache keyed by the site's meaning should come close to.

Target: requests <= 1.10x the floor.

    .venv/bin/python bench/llm_cache.py
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import vmine  # noqa: E402
from bench.trees import ensure_trees  # noqa: E402
from tests.llm_server import FakeLLM  # noqa: E402

REPO_NAME = "vllm-project/vllm"
MAX_RATIO = 1.10
_DRY = re.compile(r"dry run: (\d+) sites, (\d+) cached, (\d+) to request")


def main() -> int:
    trees = ensure_trees()
    with tempfile.TemporaryDirectory(prefix="vmine-llm-cache-") as tmp, FakeLLM() as server:
        work = Path(tmp)
        common = [
            "--repo-name",
            REPO_NAME,
            "--llm",
            "openai",
            "--model",
            "fake-model",
            "--base-url",
            server.base_url,
            "--cache-dir",
            str(work / "cache"),
            "--ci",
        ]
        warm = vmine(
            "run",
            str(trees.vllm),
            "--rev",
            trees.vllm_old,
            *common,
            "-o",
            str(work / "out"),
            "--concurrency",
            "8",
        )
        warmed = server.count
        dry = vmine("run", str(trees.vllm), "--rev", trees.vllm_new, *common, "--dry-run")
        found = _DRY.search(dry.stderr)
        if found is None:
            raise RuntimeError(f"no dry-run line in:\n{dry.stderr}")
        sites, cached, to_request = map(int, found.groups())
        diff = vmine(
            "diff",
            f"{trees.vllm}@{trees.vllm_old}",
            f"{trees.vllm}@{trees.vllm_new}",
            "--format",
            "json",
            "--cache-dir",
            str(work / "cache"),
        )
        counts = json.loads(diff.stdout)["counts"]
    floor = counts["added"] + counts["reworded"] + counts["changed"]
    ratio = to_request / floor if floor else float("inf")
    print(f"  warm the cache at {trees.vllm_old}: {warmed} requests in {warm.seconds:.1f} s")
    print(f"  dry run at {trees.vllm_new}: {sites} sites, {cached} cached, {to_request} to request")
    print(
        f"  floor from vmine diff: {counts['added']} added + {counts['reworded']} reworded + "
        f"{counts['changed']} changed = {floor}"
    )
    verdict = "ok" if ratio <= MAX_RATIO else "above target"
    print(
        f"  requests / floor: {to_request} / {floor} = {ratio:.2f}x (target <= {MAX_RATIO}x: "
        f"{verdict})"
    )
    return 0 if ratio <= MAX_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
