"""Plan locks and execution locks are separate names in one lock service."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tripleo_flow import exceptions
from tripleo_flow.plans.lock import PlanLocks


def _other_holds(url: str, hold: str, name: str, ready: threading.Event,
                 done: threading.Event) -> threading.Thread:
    """Another holder (its own coordinator) keeps ``hold(name)`` until ``done``."""

    def run() -> None:
        other = PlanLocks(url)
        try:
            with getattr(other, hold)(name):
                ready.set()
                done.wait(10)
        finally:
            other.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    return thread


@pytest.mark.parametrize("hold,other", [("hold", "hold_execution"),
                                        ("hold_execution", "hold")])
def test_a_plan_named_like_an_execution_lock_does_not_block_it(
        tmp_path: Path, hold: str, other: str) -> None:
    url = f"file://{tmp_path / 'locks'}"
    ready, done = threading.Event(), threading.Event()
    thread = _other_holds(url, hold, "abc", ready, done)
    locks = PlanLocks(url)
    try:
        with getattr(locks, other)("abc", timeout=0.5):  # the other kind: free
            pass
        with pytest.raises(exceptions.Conflict) as err, getattr(locks, hold)("abc", timeout=0.3):
            pass  # the same kind and name: held
        if hold == "hold_execution":
            assert isinstance(err.value, exceptions.ExecutionLockTimeout)
            assert "Execution 'abc' is being resumed by another process" in str(err.value)
        else:
            assert isinstance(err.value, exceptions.LockTimeout)
            assert "Plan 'abc' is being changed" in str(err.value)
    finally:
        done.set()
        thread.join(10)
        locks.close()
