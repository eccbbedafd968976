"""Incremental regeneration on vLLM 0.32.0 -> 0.33.0: how much a warm cache saves.

1. cold `vmine extract` of 0.33.0 (empty cache);
2. with a fresh cache: extract 0.32.0, then extract 0.33.0 warm (only changed blobs parsed),
   then 0.33.0 once more (nothing to parse);
3. `vmine run --llm offline` twice on 0.33.0: the second explains nothing anew;
4. `vmine diff` of the 0.32.0 and 0.33.0 datasets: its summary line.

Target: the warm extract takes at most 25% of the cold one's wall time.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runner import Step, run_offline, vmine  # noqa: E402
from bench.trees import ensure_trees  # noqa: E402

REPO_NAME = "vllm-project/vllm"
MAX_WARM_RATIO = 0.25


def extract(repo: Path, rev: str, cache: Path, out: Path) -> Step:
    return vmine(
        "extract",
        str(repo),
        "--rev",
        rev,
        "--repo-name",
        REPO_NAME,
        "--cache-dir",
        str(cache),
        "-o",
        str(out),
        "--ci",
    )


def _run_line(label: str, manifest: dict) -> str:
    counts, llm = manifest["counts"], manifest["llm"]
    return (
        f"  {label}: {manifest['_seconds']:.1f} s, {counts['records']} records, "
        f"{counts['sitesNew']} explained anew, {counts['sitesReused']} from the cache, "
        f"{llm['requests']} explanation requests"
    )


def main() -> int:
    trees = ensure_trees()
    old, new = trees.vllm_old, trees.vllm_new
    failures = []
    with tempfile.TemporaryDirectory(prefix="vmine-incremental-") as tmp:
        work = Path(tmp)
        cold = extract(trees.vllm, new, work / "cold-cache", work / "cold.jsonl")
        prime = extract(trees.vllm, old, work / "cache", work / "old.jsonl")
        warm = extract(trees.vllm, new, work / "cache", work / "new.jsonl")
        again = extract(trees.vllm, new, work / "cache", work / "again.jsonl")
        ratio = warm.seconds / cold.seconds
        same = (work / "cold.jsonl").read_bytes() == (work / "new.jsonl").read_bytes()
        c, p, w = cold.extract_counts(), prime.extract_counts(), warm.extract_counts()
        a = again.extract_counts()
        print(
            f"  cold extract {new}: {cold.seconds:.2f} s, {cold.cpu:.2f} s CPU "
            f"({c['parsed']} files parsed, {c['reused']} reused, {c['sites']} sites)"
        )
        print(
            f"  extract {old} (fresh cache): {prime.seconds:.2f} s "
            f"({p['parsed']} parsed, {p['reused']} reused)"
        )
        print(
            f"  warm extract {new}: {warm.seconds:.2f} s, {warm.cpu:.2f} s CPU "
            f"({w['parsed']} files parsed, {w['reused']} reused, {w['sites']} sites)"
        )
        print(
            f"  extract {new} again (nothing changed): {again.seconds:.2f} s, "
            f"{again.cpu:.2f} s CPU "
            f"({a['parsed']} parsed, {a['reused']} reused; "
            f"{again.seconds / cold.seconds:.3f} of cold)"
        )
        changed = c["candidates"] - w["reused"]
        print(
            f"  candidate files that differ between {old} and {new}: "
            f"{changed} of {c['candidates']} ({changed / c['candidates']:.0%})"
        )
        verdict = "ok" if ratio <= MAX_WARM_RATIO else "MISSED"
        print(
            f"  warm/cold: {ratio:.3f} (target <= {MAX_WARM_RATIO}) {verdict}; "
            f"warm output identical to cold: {same}"
        )
        if ratio > MAX_WARM_RATIO:
            failures.append(f"warm/cold {ratio:.3f} > {MAX_WARM_RATIO}")
        if not same:
            failures.append("warm extract output differs from the cold one")

        out = work / "out"
        first = run_offline(trees.vllm, new, REPO_NAME, work / "cache", out)
        second = run_offline(trees.vllm, new, REPO_NAME, work / "cache", out)
        print(_run_line(f"run --llm offline {new} (1st)", first))
        print(_run_line(f"run --llm offline {new} (2nd)", second))
        if second["counts"]["sitesNew"] or second["llm"]["requests"]:
            failures.append("the second run explained sites anew")

        previous = run_offline(trees.vllm, old, REPO_NAME, work / "cache", out)
        diff = vmine("diff", previous["_dir"], second["_dir"])
        summary = diff.stdout.strip().splitlines()[-1]
        print(f"  vmine diff {old} {new}: {summary} ({diff.seconds:.2f} s)")
    if failures:
        raise SystemExit("incremental: " + "; ".join(failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
