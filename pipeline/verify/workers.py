"""The verify workers: processes of the target's interpreter running probe.py, each in a temporary
working directory, with the network refused and no GPU. The I/O edge of verify."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from pipeline.verify.turns import Turns

PROBE = Path(__file__).with_name("probe.py")
# Variables that would let the target's code reach the network or a GPU.
_DROPPED = ("http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "no_proxy")
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "CUDA_VISIBLE_DEVICES": "",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}


# Run as a file of its own (its folder is not put on sys.path: the cwd, empty, is).
_START = "import sys; exec(compile(open(sys.argv[1]).read(), sys.argv[1], 'exec'))"


class WorkerError(Exception):
    """The interpreter cannot run the probe (one line for the user)."""


def worker_environment(extra: Mapping[str, str] = ()) -> dict[str, str]:
    """The probe's environment: ours without proxies, offline, no GPU, plus `extra`."""
    environ = {key: value for key, value in os.environ.items() if key.lower() not in _DROPPED}
    environ.update(OFFLINE)
    environ.update(dict(extra))
    return environ


class Worker:
    """One probe process; `ask` sends a request and waits for its answer."""

    def __init__(self, python: str, environ: Mapping[str, str], turns: Turns | None = None) -> None:
        # the probe runs in a temporary folder: a relative path is read from ours (a venv's
        # python is a link that must stay one, so it is not resolved)
        python = os.path.abspath(python) if os.sep in python else python
        self.home = tempfile.mkdtemp(prefix="vmine-verify-")
        try:
            self.process = subprocess.Popen(
                [python, "-c", _START, str(PROBE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=self.home,
                env=dict(environ),
                start_new_session=True,  # what the target's imports start is killed with it
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        except OSError as error:
            shutil.rmtree(self.home, ignore_errors=True)
            raise WorkerError(f"{python}: cannot run: {error.strerror or error}") from None
        self.python = python
        self.environ = dict(environ)
        self.lock = threading.Lock()
        self.turns = turns or Turns()  # the turn is given up while the probe answers

    def ask(self, request: dict) -> dict:
        """The probe's answer; a probe that died (the target's code may kill it) is started
        again once and the request answered as a crash."""
        with self.lock, self.turns.waiting():
            try:
                assert self.process.stdin is not None and self.process.stdout is not None
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
                line = self.process.stdout.readline()
            except (BrokenPipeError, OSError):
                line = ""
            if line:
                try:
                    return json.loads(line)
                except ValueError:
                    pass
            self._restart()
            return {"outcome": "crashed", "message": "the worker process died"}

    def _restart(self) -> None:
        self._kill()
        self.process.wait()
        replacement = Worker(self.python, self.environ, self.turns)
        shutil.rmtree(self.home, ignore_errors=True)
        self.process, self.home = replacement.process, replacement.home

    def _kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:  # already gone
            pass

    def close(self) -> None:
        try:
            if self.process.stdin:
                self.process.stdin.close()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._kill()  # the worker and anything the target's code left running
        self.process.wait()
        shutil.rmtree(self.home, ignore_errors=True)
