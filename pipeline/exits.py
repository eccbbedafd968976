"""vmine's exit codes, in one table: every command and `run`'s outcome name them from here."""

from __future__ import annotations

import signal
from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    # done, but not all of it: files skipped, sites failed or records written by the offline
    # fallback (`run`, `extract`); a difference (`diff --exit-code`); only approximate
    # matches (`explain`)
    PROBLEMS = 1
    INPUT = 2  # a usage or input error: one line on stderr, no traceback
    BUDGET = 3  # a budget ran out: what is done is written, and a rerun resumes
    SIGINT = 130  # interrupted (128 + the signal's number)
    SIGTERM = 143


# The exit code of a run a signal stopped.
SIGNAL_EXIT = {signal.SIGINT: Exit.SIGINT, signal.SIGTERM: Exit.SIGTERM}
