"""Verify's threads work one at a time and wait side by side (pipeline/verify/turns.py)."""

from __future__ import annotations

import threading
import time

from pipeline.verify.turns import Turns


def test_no_two_threads_work_at_once_but_they_wait_together():
    turns = Turns()
    working = [0]
    most_working = [0]
    waiting_together = threading.Barrier(3, timeout=10)  # passes only if all three wait at once

    def one() -> None:
        with turns:
            working[0] += 1
            most_working[0] = max(most_working[0], working[0])
            time.sleep(0.01)  # another thread would come in here, were it let
            working[0] -= 1
            with turns.waiting():
                waiting_together.wait()
            working[0] += 1
            most_working[0] = max(most_working[0], working[0])
            time.sleep(0.01)  # another thread would come in here, were it let
            working[0] -= 1

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert not waiting_together.broken
    assert most_working[0] == 1


def test_waiting_without_a_turn_changes_nothing():
    turns = Turns()
    with turns.waiting():
        pass
    with turns:  # the lock was never released by the wait above, so it is free now
        with turns.waiting():
            assert turns._lock.acquire(blocking=False)
            turns._lock.release()
