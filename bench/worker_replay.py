"""The workers' CPU of a cold extract, replayed in one process: the batches a cold `vmine
extract` hands its workers are recorded, then analysed again here, one file after another,
under an empty memo. It leaves out the parent, the pool and git, so on a shared machine a
change on the worker side shows through less noise than the whole command's CPU; `--phases`
adds the process time spent in the main steps of a file's analysis (inclusive).

    .venv/bin/python bench/worker_replay.py vllm [--runs 3] [--phases] [--against CHECKOUT]

The tree is picked as `bench/bench.py --only` does (vllm, transformers, sglang). The digest
printed with each run is that of every result: equal digests, equal analyses. `--against`
records and replays with another checkout's code too (run by this venv), the two sides
alternating run by run.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the code recorded and replayed: this checkout's, or the one `--against` names
CODE = os.environ.get("WORKER_REPLAY_CODE", str(ROOT))
sys.path.insert(0, CODE)

# module:function whose process time `--phases` adds up (calls nested in themselves count once)
PHASES = (
    "extractors.sites:parse",
    "extractors.sites:SegmentTable",
    "extractors.sites:find_validators",
    "extractors.sites:parse_function",
    "extractors.sites:_function_facts",
    "extractors.sites:file_settings",
    "pipeline.mine.workers:settings_facts_of",
    "extractors.settings:module_facts",
    "extractors.settings:callers_of",
)


def record(into: str, vmine_args: list[str]) -> None:
    """Run `vmine` here with every batch a worker analyses pickled into `into` (the workers
    are forked from this process, so they run the recording `analyse`)."""
    from pipeline.cli import main
    from pipeline.mine import workers

    analyse = workers.analyse

    def recorded(items, memo, facts_rules=None):
        with open(os.path.join(into, f"{os.getpid()}.pkl"), "ab") as out:
            pickle.dump((list(items), facts_rules), out)
        return analyse(items, memo, facts_rules)

    workers.analyse = recorded
    sys.argv = ["vmine", *vmine_args]
    main()


def replay(recorded: str, phases: bool) -> None:
    from pipeline.mine import workers
    from pipeline.store import Store

    batches = []
    for name in sorted(glob.glob(os.path.join(recorded, "*.pkl"))):
        with open(name, "rb") as stream:
            while True:
                try:
                    batches.append(pickle.load(stream))
                except EOFError:
                    break
    totals: dict[str, float] = {}
    if phases:
        for spec in PHASES:
            _time_calls(spec, totals)
    store = Path(tempfile.mkdtemp()) / "store.sqlite"
    Store(store)
    memo = workers.open_memo(store)
    digest = hashlib.sha1()
    files = 0
    started = time.process_time()
    for items, facts_rules in batches:
        for item in items:
            ((extraction, facts),) = workers.analyse([item], memo, facts_rules)
            for made in (extraction, facts):  # pickles of sets vary from run to run
                digest.update(b"-" if made is None else made.model_dump_json().encode())
            if memo is not None:
                memo.take()  # as the parent stores them only after the file
            files += 1
    cpu = time.process_time() - started
    print(f"replayed {files} files: {cpu:.2f} s CPU, digest {digest.hexdigest()[:12]}")
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"  {name:45} {seconds:6.2f} s  {100 * seconds / cpu:4.1f}%")


def _time_calls(spec: str, totals: dict[str, float]) -> None:
    """Wrap `module:function` wherever the extractor modules imported it."""
    module_name, name = spec.split(":")
    module = __import__(module_name, fromlist=[name])
    function = getattr(module, name)
    inside = [0]

    def timed(*args, **kwargs):
        if inside[0]:
            return function(*args, **kwargs)
        inside[0] += 1
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            inside[0] -= 1
            totals[spec] = totals.get(spec, 0.0) + time.process_time() - started

    for loaded in list(sys.modules.values()):
        if getattr(loaded, "__name__", "").startswith(("extractors", "pipeline")):
            if getattr(loaded, name, None) is function:
                setattr(loaded, name, timed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", help="vllm, transformers or sglang (as bench.py --only)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--phases", action="store_true", help="process time by step")
    parser.add_argument("--against", type=Path, help="another checkout, replayed in turn")
    args = parser.parse_args(argv)
    from bench.bench import targets

    (target,) = [t for t in targets() if args.tree.lower() in t.label.lower()]
    sides = [ROOT] + ([args.against.resolve()] if args.against else [])
    with tempfile.TemporaryDirectory() as tmp:
        for number, code in enumerate(sides):
            recorded = os.path.join(tmp, f"batches-{number}")
            os.mkdir(recorded)
            extract = ["extract", *target.source, "--cache-dir", os.path.join(tmp, f"c{number}")]
            extract += ["-o", os.path.join(tmp, "sites.jsonl"), "--ci"]
            command = [sys.executable, __file__, "--record", recorded, *extract]
            subprocess.run(command, check=False, stderr=subprocess.DEVNULL, env=_env(code))
        for _ in range(args.runs):
            for number, code in enumerate(sides):
                print(f"{code}: ", end="", flush=True)
                again = [
                    sys.executable,
                    __file__,
                    "--replay",
                    os.path.join(tmp, f"batches-{number}"),
                ]
                again += ["--phases"] if args.phases else []
                subprocess.run(again, check=True, env=_env(code))
    return 0


def _env(code: Path) -> dict[str, str]:
    return {**os.environ, "WORKER_REPLAY_CODE": str(code), "PYTHONPATH": str(code)}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        record(sys.argv[2], sys.argv[3:])
    elif sys.argv[1:2] == ["--replay"]:
        replay(sys.argv[2], "--phases" in sys.argv[3:])
    else:
        raise SystemExit(main())
