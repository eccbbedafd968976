"""Cached virtual environments where a target release is installed, for `vmine verify` benches.

    .venv/bin/python bench/envs.py vllm-0.28.0        # builds (once) and prints its python
    .venv/bin/python bench/envs.py transformers-4.57.1

Each lives in bench/.cache/envs/NAME/ and is built only when its stamp file is missing.
vLLM needs the CPU build of torch: a plain `pip install torch` picks a CUDA build of several
gigabytes, so torch is installed first at the pinned release (a CPU wheel on this machine's
disk) and then pinned for the rest with a constraint file (`PIP_CONSTRAINT`). vLLM's
torchvision, torchaudio and torchcodec wheels do not match that torch and are removed, which is
enough for its configuration classes to import. transformers' configuration classes are pure
Python and need no torch.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Not bench.trees' CACHE: this script runs with any python, before vmine is installed.
ENVS = ROOT / "bench" / ".cache" / "envs"
TORCH = "torch==2.13.0"


@dataclass(frozen=True)
class Env:
    """One environment: what it installs, in order, and what it removes afterwards."""

    name: str
    installs: tuple[tuple[str, ...], ...]
    removes: tuple[str, ...] = ()
    pin_torch: bool = False

    @property
    def root(self) -> Path:
        return ENVS / self.name

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"


KNOWN = {
    "vllm-0.28.0": Env(
        "vllm-0.28.0",
        installs=((TORCH,), ("vllm==0.28.0",)),
        removes=("torchvision", "torchaudio", "torchcodec"),
        pin_torch=True,
    ),
    "transformers-4.57.1": Env("transformers-4.57.1", installs=(("transformers==4.57.1",),)),
}


def build(env: Env, log=sys.stderr) -> Path:
    """The environment's python, building the environment first when it is not complete."""
    stamp = env.root / ".complete"
    if stamp.exists():
        return env.python
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(env.root)], check=True)
    pip = [str(env.python), "-m", "pip", "--disable-pip-version-check", "-q"]
    environ = dict(os.environ)
    if env.pin_torch:
        # Any later resolution that asks for torch gets the CPU build already installed.
        constraint = env.root / "constraints.txt"
        constraint.write_text(TORCH + "\n")
    for packages in env.installs:
        print(f"envs: {env.name}: pip install {' '.join(packages)}", file=log, flush=True)
        subprocess.run([*pip, "install", *packages], check=True, env=environ)
        if env.pin_torch:
            environ["PIP_CONSTRAINT"] = str(env.root / "constraints.txt")
    if env.removes:
        subprocess.run([*pip, "uninstall", "-y", *env.removes], check=True, env=environ)
    stamp.write_text(f"{time.perf_counter() - started:.0f} seconds\n")
    return env.python


def main(argv: list[str]) -> int:
    names = argv or sorted(KNOWN)
    for name in names:
        if name not in KNOWN:
            print(f"envs: unknown environment {name!r}; known: {', '.join(sorted(KNOWN))}")
            return 2
        print(build(KNOWN[name]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
