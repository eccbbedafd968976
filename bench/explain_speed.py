"""How fast `vmine explain` answers on a 5,000-record dataset: end to end in a subprocess, and
the in-process lookup alone. Run: `.venv/bin/python bench/explain_speed.py [--records N]`."""

from __future__ import annotations

import argparse
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from extractors.patterns import HOLE_PATTERN, escape_literal  # noqa: E402
from pipeline.dataset.manifest import Counts, LLMUsage, Manifest, Tool  # noqa: E402
from pipeline.dataset.models import ErrorRecord, IndexEntry, github_url  # noqa: E402
from pipeline.dataset.writer import write_dataset  # noqa: E402
from pipeline.lookup.index import _INDEX_CACHE, index_dataset  # noqa: E402
from pipeline.lookup.match import lookup  # noqa: E402

REPO = "bench/serve"
SHA = "ab" * 20
WORDS = ("cache", "block", "tensor", "parallel", "pipeline", "decode", "prefill", "kv",
         "spec", "draft", "lora", "quant", "rope", "sliding", "window", "expert", "mamba")
# Message shapes seen in real validators: flag pairs, ranges, choices, multi-line hints.
SHAPES = (
    ("--{a}-{b} requires --{c}-backend {d}", "literal"),
    ("--{a}-{b} is not supported with --{c}-{d}", "literal"),
    ("{a}_{b}_size must be a power of 2, got {{self.{a}_{b}_size}}", "template"),
    ("{a}_{b} ({{self.{a}_{b}}}) must be <= max_{c}_len ({{self.max_{c}_len}})", "template"),
    ("Unknown {a} {b} mode {{mode!r}}. Choose one of: {{', '.join(MODES)}}", "template"),
    ("{a}-{b} {{name}} is incompatible with {c}; pass --{d}-{a} instead.\n"
     "See the docs for --{c}-{d}.", "template"),
)
_PLACEHOLDER = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
SOURCE = "\n".join(f"        line_{n} = compute(self.value_{n})" for n in range(37))


def _pattern(message: str) -> str:
    parts = _PLACEHOLDER.split(message)
    return HOLE_PATTERN.join(escape_literal(part) for part in parts)


def build_dataset(out_dir: Path, count: int, seed: int = 7) -> tuple[Path, list[str]]:
    """Write a synthetic dataset of `count` records; return its root and the messages."""
    rng = random.Random(seed)
    records, entries, messages, seen = [], [], [], set()
    while len(records) < count:
        shape, status = rng.choice(SHAPES)
        fill = {key: rng.choice(WORDS) for key in "abcd"}
        message = shape.format(**fill) + ("" if rng.random() < 0.7 else f" (v{rng.randint(1, 99)})")
        if message in seen:
            continue
        seen.add(message)
        index = len(records)
        file_path = f"serve/config/module_{index // 50}.py"
        line = 20 + (index % 50) * 40
        record_id = f"{index:016x}"
        records.append(ErrorRecord(
            id=record_id, repo=REPO, slug=f"error-{index}", errorMessage=message,
            messagePattern=_pattern(message), errorClass="ValueError", filePath=file_path,
            lineNumber=line, sourceCode=SOURCE, sourceCodeStart=line - 18,
            sourceCodeEnd=line + 18,
            githubUrl=github_url(REPO, SHA, file_path, line - 18, line + 18),
            documentation="Raised when the configuration is inconsistent.",
            triggerScenarios="Starting the server.", commonSituations="Old launch scripts.",
            solutions=["Fix the flag."], exampleFix="serve --flag", handlingStrategy="validation",
            validationCode="check(cfg)", typeGuard="def ok(cfg) -> bool: ...",
            tryCatchPattern=None, preventionTips=[], tags=["config"],
            analyzedSha=SHA, analyzedAt="2026-08-14T00:00:00.000Z",
        ))
        entries.append(IndexEntry(
            id=record_id, slug=f"error-{index}", filePath=file_path, lineNumber=line,
            qualname=f"Config{index // 50}.validate", validatorKind="pydantic",
            errorClass="ValueError", errorMessage=message, messagePattern=_pattern(message),
            messageStatus=status, guards=["self.enabled"],
        ))
        messages.append(message)
    manifest = Manifest(
        repo=REPO, analyzedSha=SHA, datasetVersion="2026-08-14T00:00:00.000Z", source="git",
        counts=Counts(records=count),
        llm=LLMUsage(provider="offline", model="offline", promptVersion="offline-1"),
        tool=Tool(version="bench", extractorVersion="1"),
    )
    return write_dataset(out_dir, REPO, SHA, records, entries, manifest), messages


def _rendered(message: str) -> str:
    """A message as it would appear at run time: placeholders filled with values."""
    return _PLACEHOLDER.sub("'fp8'", message)


def _vmine() -> list[str]:
    script = shutil.which("vmine", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-c", "from pipeline.cli import main; main()"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vmine-explain-bench-") as tmp:
        started = time.perf_counter()
        root, messages = build_dataset(Path(tmp) / "output", args.records)
        print(f"dataset: {args.records} records written in {time.perf_counter() - started:.1f} s")
        rng = random.Random(1)
        queries = {
            "literal": next(m for m in messages if "{" not in m),
            "template": _rendered(rng.choice([m for m in messages if "{" in m])),
            "traceback": "Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                         "ValueError: " + _rendered(messages[-1]),
            "approximate": "the kv cache block size should be a power of two",
        }

        _INDEX_CACHE.clear()
        started = time.perf_counter()
        dataset = index_dataset(root)
        print(f"in-process: index {len(dataset.patterns)} entries (cold): "
              f"{(time.perf_counter() - started) * 1000:.1f} ms")
        for name, text in queries.items():
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                found = lookup(text, [dataset])
                times.append(time.perf_counter() - started)
            kind = found.matches[0].kind if found.matches else "none"
            print(f"in-process: lookup {name:<11} median {statistics.median(times) * 1000:7.1f} ms"
                  f"  (best: {kind})")

        for name, text in queries.items():
            times, cpu = [], []
            for _ in range(args.runs):
                before = _children_cpu()
                started = time.perf_counter()
                result = subprocess.run([*_vmine(), "explain", text, "--dataset", str(root)],
                                        capture_output=True, text=True)
                times.append(time.perf_counter() - started)
                cpu.append(_children_cpu() - before)
            # CPU time too: on a loaded machine the wall time mostly measures the neighbours
            print(f"end to end: vmine explain {name:<11} median {statistics.median(times):.3f} s"
                  f" wall, {statistics.median(cpu):.3f} s CPU  (exit {result.returncode})")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
