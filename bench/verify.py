"""`vmine verify` on vLLM 0.28.0's dataset, in a cached environment with that release on CPU.

    .venv/bin/python bench/verify.py [--alone N] [--jobs 2]

Builds (once) bench/.cache/envs/vllm-0.28.0 (bench/envs.py) and the offline dataset of
`pypi:vllm==0.28.0` under bench/.cache/verify/out, copies the dataset into a temporary folder
and runs `vmine verify` on it there. Prints the counts by validator kind and outcome, the wall
time and the CPU time (user + system of vmine and its workers). Then N of the verified sites'
reproducers (default 40, chosen by a fixed seed; 0 for none, -1 for all) are each run alone in
a new interpreter of that environment: each must raise exactly the recorded message.

Every reproducer that runs the target's own command line (`reproducerKind: command-line`) is
run alone as well, besides the sample.

Goals (issue 21): at least 75% of the sites verified, in at most 5 minutes on 2 cores, and no
verified site whose reproducer, run alone, fails to raise its message.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.envs import KNOWN, build  # noqa: E402
from bench.runner import vmine  # noqa: E402
from bench.trees import CACHE  # noqa: E402

RELEASE = "pypi:vllm==0.28.0"
OUT = CACHE / "verify" / "out"


def dataset() -> Path:
    """The offline dataset of vLLM 0.28.0, mined once."""
    found = [path.parent for path in OUT.rglob("manifest.json")] if OUT.exists() else []
    if not found:
        vmine("run", RELEASE, "--llm", "offline", "--cache-dir", str(CACHE / "verify" / "cache"),
              "-o", str(OUT), "--ci")  # fmt: skip
        found = [path.parent for path in OUT.rglob("manifest.json")]
    (root,) = found
    return root


# Runs a reproducer and prints what it raised as JSON (its message may span lines).
_WRAPPER = """
import json, sys
try:
    exec(compile(sys.argv[1], "<reproducer>", "exec"), {"__name__": "__main__"})
except BaseException as error:
    print(json.dumps([type(error).__name__, str(error)]))
"""


def verify_env() -> dict[str, str]:
    """The vllm target's `verify_env` in pipeline.toml (the hint discovery cannot give)."""
    from pipeline.mine.config import load_config

    return dict(load_config(ROOT / "pipeline.toml").targets["vllm"].verify_env)


def alone(python: Path, reproducer: str, pattern: str) -> str | None:
    """None when the reproducer, run by a new interpreter, raises a ValueError whose message
    `pattern` fully matches; else what it did."""
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(
            [str(python), "-c", _WRAPPER, reproducer],
            capture_output=True,
            text=True,
            cwd=home,
            env={
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "PATH": "/usr/bin:/bin",
                **verify_env(),
            },  # fmt: skip
            timeout=600,
        )
    last = (done.stdout.rstrip().splitlines() or ["null"])[-1]
    try:
        raised = json.loads(last)
    except ValueError:
        raised = None
    if isinstance(raised, list) and re.fullmatch(pattern, raised[1], re.DOTALL):
        return None
    return f"exit {done.returncode}: {last[:200]}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alone", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    python = build(KNOWN["vllm-0.28.0"])
    source = dataset()
    with tempfile.TemporaryDirectory(prefix="vmine-bench-verify-") as scratch:
        copy = Path(scratch) / "dataset"
        shutil.copytree(source, copy)
        hints = [f"--env={name}={value}" for name, value in verify_env().items()]
        step = vmine("verify", str(copy), "--python", str(python), "--jobs", str(args.jobs),
                     *hints, "--ci")  # fmt: skip
        manifest = json.loads((copy / "manifest.json").read_text())
        lines = [
            json.loads(line) for line in (copy / "verification.jsonl").read_text().splitlines()
        ]
        index = {
            entry["id"]: entry
            for entry in map(json.loads, (copy / "index.jsonl").read_text().splitlines())
        }
    summary = manifest["verification"]
    total = sum(summary["byOutcome"].values())
    verified = summary["byOutcome"].get("verified", 0)
    print(f"vLLM 0.28.0: {total} sites, {verified} verified ({verified / total:.0%})")
    for outcome, count in summary["byOutcome"].items():
        print(f"  {outcome:17} {count:4}")
    for kind, counts in summary["byKind"].items():
        shown = ", ".join(f"{outcome} {count}" for outcome, count in counts.items())
        print(f"  {kind:10} {shown}")
    fixes = summary.get("byFix", {})
    tested = fixes.get("verified", 0) + fixes.get("fails", 0)
    if tested:
        print(f"fixes: {fixes} ({fixes.get('verified', 0) / tested:.0%} of the tested verified)")
    if summary.get("chosenFixes"):
        print(
            f"other fixes that stop the raise where the record's did not: {summary['chosenFixes']}"
        )
    if summary.get("byFixCommand"):
        print(f"fix command lines (parser {summary.get('parser')}): {summary['byFixCommand']}")
    print(f"verified from the command line (the target's own configuration path): "
          f"{summary.get('commandLines', 0)}")  # fmt: skip
    print(f"time: {step.seconds:.0f} s wall, {step.cpu:.0f} s CPU (vmine and its workers)")
    reasons = Counter(
        (line.get("raisedClass") or "", (line.get("message") or "")[:60])
        for line in lines
        if line["outcome"] == "other-exception"
    )
    print("most common other exceptions:")
    for (raised, message), count in reasons.most_common(12):
        print(f"  {count:4}  {raised}: {message}")
    proofs = [line for line in lines if line["outcome"] == "verified"]
    if args.alone:
        chosen = (
            proofs
            if args.alone < 0
            else random.Random(21).sample(proofs, min(args.alone, len(proofs)))
        )
        # every command-line reproducer too (they are few), besides the sample
        chosen += [
            line
            for line in proofs
            if line.get("reproducerKind") == "command-line" and line not in chosen
        ]
        failures = []
        for line in chosen:
            entry = index[line["id"]]
            problem = alone(python, line["reproducer"], entry["messagePattern"])
            if problem is not None:
                failures.append(f"{entry['filePath']}:{entry['lineNumber']}: {problem}")
        print(
            f"reproducers run alone: {len(chosen) - len(failures)} of {len(chosen)} raise their message"
        )
        for failure in failures:
            print(f"  {failure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
