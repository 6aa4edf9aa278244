"""SIGINT/SIGTERM during a flow: the running task fails with Interrupted and the flow reverts.

A real TaskFlow engine and real signals sent to this process (main thread).
"""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
from taskflow import task
from taskflow.patterns import linear_flow

from tripleo_flow import exceptions
from tripleo_flow.flows.run import run_flow
from tripleo_flow.workspace.interrupt import Interruption


class Step(task.Task):  # type: ignore[misc]
    def __init__(self, name: str, log: list[str], on_execute: Any = None,
                 on_revert: Any = None) -> None:
        super().__init__(name=name)
        self.log, self.on_execute, self.on_revert = log, on_execute, on_revert

    def execute(self) -> str:
        self.log.append(f"execute {self.name}")
        if self.on_execute:
            self.on_execute()
        return self.name

    def revert(self, *args: Any, **kwargs: Any) -> None:
        self.log.append(f"revert {self.name}")
        if self.on_revert:
            self.on_revert()


def _raise_signal(sig: int) -> Any:
    return lambda: os.kill(os.getpid(), sig)


def _run(steps: list[Step], before: Any = None) -> exceptions.Interrupted:
    flow = linear_flow.Flow("f").add(*steps)
    guard = Interruption("Test flow")
    guard.guard(flow)
    previous = signal.getsignal(signal.SIGINT)
    with guard.installed(), pytest.raises(exceptions.Interrupted) as err:
        if before:
            before()
        run_flow(flow, {})
    assert signal.getsignal(signal.SIGINT) is previous  # handlers restored
    return err.value


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_in_a_task_reverts_the_flow(sig: int) -> None:
    log: list[str] = []
    error = _run([Step("one", log), Step("two", log, on_execute=_raise_signal(sig)),
                  Step("three", log)])
    assert log == ["execute one", "execute two", "revert two", "revert one"]
    assert error.task == "two" and error.signal_name == signal.Signals(sig).name
    assert str(error).startswith(f"Test flow was interrupted by {signal.Signals(sig).name}")
    assert exceptions.exit_code(error) == 130


def test_signal_between_tasks_fails_the_next_one() -> None:
    log: list[str] = []
    error = _run([Step("one", log)], before=_raise_signal(signal.SIGINT))
    assert log == ["revert one"] and error.task == "one"


def test_a_second_signal_does_not_cut_the_revert_short() -> None:
    log: list[str] = []
    _run([Step("one", log, on_revert=_raise_signal(signal.SIGINT)),
          Step("two", log, on_execute=_raise_signal(signal.SIGINT))])
    assert log == ["execute one", "execute two", "revert two", "revert one"]
