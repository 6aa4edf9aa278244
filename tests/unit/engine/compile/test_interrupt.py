"""SIGINT/SIGTERM during a workflow run with ``interruptible``: the next task to start,
or a running task that looks (``ActionContext.check_stop``), fails with Interrupted and
the execution reverts.

A real workflow run (tasks in a thread pool, the main thread waiting) and real signals
sent to this process.
"""

from __future__ import annotations

import os
import signal
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host, Record
from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action


class Signal(Record):
    """Record, then send ``sig`` to this process (after execute or in revert)."""

    def execute(self, path: str, value: str, fail: bool = False, once: bool = False,
                sig: int = 0, in_revert: bool = False) -> str:
        done = super().execute(path, value)
        if sig and not in_revert:
            os.kill(os.getpid(), sig)
            time.sleep(0.3)  # the handler runs in the main thread meanwhile
        return done

    def revert(self, result: Any, path: str, value: str, **kwargs: Any) -> None:
        super().revert(result, path, value)
        if kwargs.get("sig") and kwargs.get("in_revert"):
            os.kill(os.getpid(), kwargs["sig"])
            time.sleep(0.3)


class Follow(Action):
    """Like a stack being followed: look every 50 ms, for at most 20 s."""

    def execute(self, path: str) -> str:
        Path(path + ".following").touch()  # for the test: it runs now
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            self.context.check_stop()
            time.sleep(0.05)
        Path(path).open("a").write("followed to the end\n")
        return "done"


WORKBOOK = textwrap.dedent("""\
    version: '2.0'
    name: stopping
    workflows:
      three:
        input: [log, sig, in_revert]
        tasks:
          one:
            action: test.signal
            input: {path: <% $.log %>, value: one, sig: <% $.sig %>,
                    in_revert: <% $.in_revert %>}
            on-success: two
          two:
            action: test.signal
            input: {path: <% $.log %>, value: two, sig: <% $.sig %>,
                    in_revert: <% not $.in_revert %>}
            on-success: three
          three:
            action: test.record
            input: {path: <% $.log %>, value: three}
      follow:
        input: [log]
        tasks:
          one:
            action: test.record
            input: {path: <% $.log %>, value: one}
            on-success: wait
          wait:
            action: test.follow
            input: {path: <% $.log %>}
    """)


@pytest.fixture
def host(tmp_path: Path) -> Any:
    host: Any = Host(tmp_path / "data",
                     {**ACTIONS, "test.signal": Signal, "test.follow": Follow})
    book = tmp_path / "stopping.yaml"
    book.write_text(WORKBOOK)
    host.workbooks.create(book)
    yield host
    host._session.close_workflows()


def _run(host: Any, workflow: str, inputs: dict[str, Any]) -> exceptions.Interrupted:
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(exceptions.Interrupted) as err:
        host._session.run_operation(f"stopping.{workflow}", inputs, interruptible="Test run")
    for sig, handler in previous.items():  # handlers restored
        assert signal.getsignal(sig) is handler
    return err.value


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_fails_the_next_task_and_the_run_reverts(host: Any, tmp_path: Path,
                                                          sig: int) -> None:
    log = tmp_path / "log"
    error = _run(host, "three", {"log": str(log), "sig": sig, "in_revert": False})
    # one sent the signal as it ended: two failed as it started, one was undone.
    assert log.read_text().splitlines() == ["do one", "undo one"]
    assert error.task == "two" and error.signal_name == signal.Signals(sig).name
    assert str(error).startswith(f"Test run was interrupted by {signal.Signals(sig).name}")
    assert exceptions.exit_code(error) == 130
    [execution] = host.executions.list()
    assert execution.state == "ERROR" and "interrupted by" in execution.error


def test_a_running_task_that_looks_stops_at_its_next_look(host: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    with pytest.raises(exceptions.Interrupted) as err:
        with _signal_once(Path(f"{log}.following"), signal.SIGINT):
            host._session.run_operation("stopping.follow", {"log": str(log)},
                                        interruptible="Test run")
    assert err.value.task == "wait"
    # stopped at a look, not followed to the end (20 s), and the first task undone
    assert log.read_text().splitlines() == ["do one", "undo one"]


def test_a_second_signal_does_not_cut_the_revert_short(host: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    # one signals in its execute; then two (started: fails) ... one signals again while
    # it reverts: the revert still completes.
    _run(host, "three", {"log": str(log), "sig": signal.SIGINT, "in_revert": False})
    log.unlink()
    _run(host, "three", {"log": str(log), "sig": signal.SIGINT, "in_revert": True})
    # in_revert for one: it signals only while reverting, two signals as it runs.
    assert log.read_text().splitlines() == ["do one", "do two", "undo two", "undo one"]


def test_without_interruptible_a_signal_is_not_taken_over(host: Any, tmp_path: Path) -> None:
    got: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: got.append(signum))
    try:
        host._session.run_operation("stopping.three", {"log": str(tmp_path / "log"),
                                                       "sig": signal.SIGUSR1, "in_revert": False})
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert got == [signal.SIGUSR1]  # one sent it (two only would, in a revert)
    assert (tmp_path / "log").read_text().splitlines() == ["do one", "do two", "do three"]


class _signal_once:
    """Send ``sig`` to this process once file ``ready`` exists (the task it is meant
    for runs), whatever the machine's load."""

    def __init__(self, ready: Path, sig: int) -> None:
        import threading
        self._stop = threading.Event()

        def send() -> None:
            while not self._stop.is_set():
                if ready.exists():
                    os.kill(os.getpid(), sig)
                    return
                time.sleep(0.02)

        self._thread = threading.Thread(target=send, name="signal-once", daemon=True)

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
