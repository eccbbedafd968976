"""The hostile inputs of issue 12, each run as its own `vmine` process with a time limit, with
its wall time and the peak RSS of its process tree (vmine and its workers together, or the
largest single process's own peak if higher). Run by `make
bench`, or alone: `.venv/bin/python bench/hostile.py [--only NAME]`.

- extract: an `if` of 10,000 `and` terms among 200 normal files, and among 3 (one worker);
  a 38 MB file; 4,000 raises in one validator;
- explain: the pastes of bench/explain_speed.py (patterns with six holes against 2,400 and
  20,000 characters, a planted `(.|\\s)*X`, 10 MB pastes, a 200 KB pydantic item);
- run: an OpenAI-compatible server (tests/llm_server.py) that trickles its answer one byte
  every 5 seconds, with `--timeout 10`; one whose answer escapes a lone surrogate and a NUL;
  one whose answer is a 306 KB gzip body, or a 658-byte `gzip, gzip` body, that inflates to
  300 MB (streamed and not); a `--base-url` nobody listens on.

Targets: each case finishes within its time (seconds) and under 1 GiB; a case past its hard
limit is killed and reported, never waited for."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.explain_speed import HOSTILE_TARGET, hostile_pastes  # noqa: E402
from bench.runner import VMINE, tree_memory  # noqa: E402
from tests.conftest import make_git_repo  # noqa: E402

MAX_RSS = 2**30
HARD_LIMIT = 180.0  # seconds; a case still running then is killed


@dataclass
class Outcome:
    seconds: float
    peak_rss: int
    code: int | None  # None: killed at the hard limit
    stderr: str


def measure(
    args: list[str],
    stdin: bytes = b"",
    limit: float = HARD_LIMIT,
    env: dict[str, str] | None = None,
) -> Outcome:
    """Run `vmine ARGS` in its own session, sampling its tree's RSS every 50 ms; kill the
    whole session at `limit` seconds."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            [str(VMINE), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            env={**os.environ, "CI": "true", **(env or {})},
        )
        peak = 0
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, *tree_memory(process.pid))
                stop.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        feeder = threading.Thread(target=_feed, args=(process, stdin), daemon=True)
        feeder.start()
        try:
            code: int | None = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = None
        seconds = time.perf_counter() - started
        stop.set()
        sampler.join()
        err.seek(0)
        return Outcome(seconds, peak, code, err.read().decode("utf-8", "replace"))


def _feed(process: subprocess.Popen, data: bytes) -> None:
    try:
        process.stdin.write(data)
        process.stdin.close()
    except OSError:
        pass


@dataclass
class Case:
    name: str
    target: float  # seconds
    run: Callable[[Path], tuple[Outcome, str | None]]  # -> outcome, problem (None: as expected)


def report(case: Case, outcome: Outcome, problem: str | None) -> bool:
    fast = outcome.code is not None and outcome.seconds <= case.target
    small = outcome.peak_rss < MAX_RSS
    ok = fast and small and problem is None
    how = "killed at the hard limit" if outcome.code is None else f"exit {outcome.code}"
    notes = [] if problem is None else [problem]
    if not fast and outcome.code is not None:
        notes.append(f"over {case.target:g} s")
    if not small:
        notes.append(f"over {MAX_RSS // 2**20} MiB")
    print(
        f"hostile: {case.name:<44} {outcome.seconds:7.2f} s  "
        f"{outcome.peak_rss / 2**20:6.0f} MiB  {how:<8}  {'ok' if ok else 'FAIL'}"
        f"{': ' + '; '.join(notes) if notes else ''}",
        flush=True,
    )
    return ok


# --- extract ----------------------------------------------------------------------------------


def _check(number: int) -> str:
    return (
        f"def check_{number}(cfg):\n"
        f"    if cfg.size_{number} < 0:\n"
        f'        raise ValueError("size_{number} must be >= 0, got {{cfg.size_{number}}}")\n'
    )


def _and_terms() -> str:
    terms = " and ".join(f"cfg.flag_{number}" for number in range(10_000))
    return f'def validate(cfg):\n    if {terms}:\n        raise ValueError("all flags set")\n'


def _huge_file(size: int) -> str:
    chunk = "".join(_check(number) for number in range(1000))
    return chunk * (size // len(chunk) + 1)


def _many_raises(count: int) -> str:
    checks = "".join(
        f"    if cfg.limit_{n} < 0:\n"
        f'        raise ValueError(f"limit_{n} must be >= 0, got {{cfg.limit_{n}}}")\n'
        for n in range(count)
    )
    return f"def validate(cfg):\n{checks}"


def _extract(tmp: Path, files: dict[str, str]) -> Outcome:
    repo = make_git_repo(tmp / "repo", files)
    return measure(
        [
            "extract",
            str(repo),
            "--repo-name",
            "acme/hostile",
            "--no-cache",
            "--cache-dir",
            str(tmp / "cache"),
            "-o",
            str(tmp / "sites.jsonl"),
            "--ci",
        ]
    )


def _expect(outcome: Outcome, sites: int, skipped: str | None) -> str | None:
    summary = next(
        (line for line in outcome.stderr.splitlines() if line.startswith("extract: files=")), ""
    )
    if f" sites={sites} " not in summary:
        return f"expected {sites} sites: {summary or outcome.stderr.strip()[-200:]}"
    if skipped is not None and skipped not in outcome.stderr:
        return f"expected a skip '{skipped}'"
    return None


def and_terms_among(normal: int) -> Callable[[Path], tuple[Outcome, str | None]]:
    def run(tmp: Path) -> tuple[Outcome, str | None]:
        files = {f"pkg/mod_{n:03d}.py": _check(n) for n in range(normal)}
        outcome = _extract(tmp, {**files, "pkg/flags.py": _and_terms()})
        return outcome, _expect(
            outcome, normal, "skipped: pkg/flags.py: expression nested too deep at line 2"
        )

    return run


def huge_file(tmp: Path) -> tuple[Outcome, str | None]:
    outcome = _extract(tmp, {"pkg/huge.py": _huge_file(38 * 10**6), "pkg/ok.py": _check(1)})
    return outcome, _expect(outcome, 1, "skipped: pkg/huge.py: too large to analyse")


def many_raises(tmp: Path) -> tuple[Outcome, str | None]:
    outcome = _extract(tmp, {"pkg/limits.py": _many_raises(4000)})
    return outcome, _expect(outcome, 4000, None)


# --- explain ----------------------------------------------------------------------------------


def explain_paste(name: str) -> Callable[[Path], tuple[Outcome, str | None]]:
    def run(tmp: Path) -> tuple[Outcome, str | None]:
        root, pastes = hostile_pastes(tmp / "output")
        outcome = measure(["explain", "-", "--dataset", str(root)], stdin=pastes[name].encode())
        return outcome, None if outcome.code in (0, 1) else outcome.stderr.strip()[-200:]

    return run


# --- run against a trickling server ---------------------------------------------------------


def trickling_server(tmp: Path) -> tuple[Outcome, str | None]:
    from tests.llm_server import FAULT_KINDS, FakeLLM

    if "trickle" not in FAULT_KINDS:
        return Outcome(0.0, 0, 0, ""), "tests/llm_server.py has no trickle fault yet"
    repo = make_git_repo(tmp / "repo", {"pkg/config.py": _check(1)})
    help_text = subprocess.run([str(VMINE), "run", "--help"], capture_output=True, text=True).stdout
    timeout = ["--timeout", "10"] if "--timeout" in help_text else []
    with FakeLLM() as server:
        server.fail("trickle", trickle_seconds=5.0, times=1000)
        outcome = measure(
            [
                "run",
                str(repo),
                "--repo-name",
                "acme/hostile",
                "--llm",
                "openai",
                "--base-url",
                server.base_url,
                "--model",
                "m",
                *timeout,
                "--cache-dir",
                str(tmp / "cache"),
                "-o",
                str(tmp / "out"),
                "--ci",
            ],
            limit=120.0,
            env={"OPENAI_API_KEY": "bench"},
        )
    problem = None if timeout else "vmine run has no --timeout yet"
    return outcome, problem


def _run(tmp: Path, base_url: str, *more: str) -> Outcome:
    """`vmine run --llm openai` of a one-site repository against `base_url`."""
    repo = make_git_repo(tmp / "repo", {"pkg/config.py": _check(1)})
    return measure(
        [
            "run",
            str(repo),
            "--repo-name",
            "acme/hostile",
            "--llm",
            "openai",
            "--base-url",
            base_url,
            "--model",
            "m",
            "--cache-dir",
            str(tmp / "cache"),
            "-o",
            str(tmp / "out"),
            "--ci",
            *more,
        ],
        limit=120.0,
        env={"OPENAI_API_KEY": "bench"},
    )


def _said(outcome: Outcome, code: int, line: str) -> str | None:
    """None when the run exited `code`, said `line` and printed no traceback."""
    if "Traceback" in outcome.stderr:
        return "a traceback: " + outcome.stderr.strip()[-200:]
    if outcome.code != code or line not in outcome.stderr:
        return f"exit {outcome.code}, expected {code} and {line!r}: {outcome.stderr[-300:]}"
    return None


def surrogate_answer(tmp: Path) -> tuple[Outcome, str | None]:
    from tests.llm_server import FakeLLM

    with FakeLLM() as server:
        server.fail("surrogate", times=1000)
        outcome = _run(tmp, server.base_url)
    return outcome, _said(outcome, 0, "explained by: openai 1;")


def inflating_answer(fault: str, streams: bool) -> Callable[[Path], tuple[Outcome, str | None]]:
    def run(tmp: Path) -> tuple[Outcome, str | None]:
        from tests.llm_server import FakeLLM

        with FakeLLM(streams=streams) as server:
            server.fail(fault, times=1000, huge_bytes=300 * 2**20)
            outcome = _run(tmp, server.base_url)
        # every request dropped at the bound, then the offline record
        return outcome, _said(outcome, 1, "the response is larger than 2048 KiB")

    return run


def nobody_listening(tmp: Path) -> tuple[Outcome, str | None]:
    import socket

    with socket.socket() as probe:  # a port nobody listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    outcome = _run(tmp, f"http://127.0.0.1:{port}/v1")
    return outcome, _said(outcome, 2, "connection refused")


CASES = [
    Case("extract: if of 10,000 and-terms, 200 files", 30.0, and_terms_among(200)),
    Case("extract: if of 10,000 and-terms, 3 files", 30.0, and_terms_among(3)),
    Case("extract: a 38 MB file", 30.0, huge_file),
    Case("extract: 4,000 raises in one validator", 30.0, many_raises),
    *(
        Case(f"explain: {name}", HOSTILE_TARGET, explain_paste(name))
        for name in (
            "6 holes, 2,400 chars",
            "6 holes, 20,000 chars",
            "planted (.|\\s)*X",
            "10 MB, no traceback",
            "10 MB log, error at the end",
            "200 KB pydantic item",
        )
    ),
    Case("run: server trickling 1 byte / 5 s, --timeout 10", 60.0, trickling_server),
    Case("run: answer escaping a lone surrogate and a NUL", 30.0, surrogate_answer),
    *(
        Case(
            f"run: {size} {fault.replace('_', ' ')} -> 300 MB, {how}",
            30.0,
            inflating_answer(fault, how == "streamed"),
        )
        for fault, size in (("gzip_bomb", "306 KB"), ("gzip_gzip", "658 B"))
        for how in ("streamed", "one body")
    ),
    Case("run: --base-url nobody listens on", 30.0, nobody_listening),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="run the cases whose name contains this text")
    args = parser.parse_args(argv if argv is not None else [])
    failed = []
    for case in CASES:
        if args.only and args.only not in case.name:
            continue
        with tempfile.TemporaryDirectory(prefix="vmine-hostile-") as tmp:
            outcome, problem = case.run(Path(tmp))
        if not report(case, outcome, problem):
            failed.append(case.name)
    print(
        f"hostile: {len(failed)} of the cases failed"
        if failed
        else "hostile: every case finished in time and memory"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
