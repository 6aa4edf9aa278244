"""An execution reads ended only once its end is recorded (issue 30's GUI test found
it): TaskFlow saves a flow's SUCCESS (or FAILURE, REVERTED) when its engine stops, and
the execution's own end (its output or error, and the time: ``run_outcomes``) is the
next write.  In between, a reader saw SUCCESS with no output, which Mistral never shows
(its workflow execution's state and output are one update).  It now reads RUNNING
until that write, and INTERRUPTED when the process that ran it is gone before it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from tripleo_flow.engine.store.execution_records import to_execution


@dataclass
class Flow:
    state: str
    meta: dict[str, Any] = field(default_factory=dict)
    uuid: str = "e1"
    name: str = "wb.flow"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _meta(pid: int, **more: Any) -> dict[str, Any]:
    return {"workflow": "wb.flow", "pid": pid, "host": socket.gethostname(), **more}


@pytest.mark.parametrize("stored", ["SUCCESS", "FAILURE", "REVERTED"])
def test_a_flow_ended_but_not_recorded_reads_running(stored: str) -> None:
    assert to_execution(Flow(stored, _meta(os.getpid()))).state == "RUNNING"


@pytest.mark.parametrize("stored", ["SUCCESS", "FAILURE", "REVERTED"])
def test_its_process_gone_before_the_record_it_reads_interrupted(stored: str) -> None:
    assert to_execution(Flow(stored, _meta(_dead_pid()))).state == "INTERRUPTED"


def test_once_recorded_it_reads_its_end_with_its_output() -> None:
    done = to_execution(Flow("SUCCESS", _meta(os.getpid(), finished_at=1.0,
                                                  output={"answer": 42})))
    assert (done.state, done.output) == ("SUCCESS", {"answer": 42})
    failed = to_execution(Flow("REVERTED", _meta(_dead_pid(), finished_at=1.0,
                                                 error="boom")))
    assert (failed.state, failed.error, failed.reverted) == ("ERROR", "boom", True)


def test_a_record_no_engine_ran_keeps_its_state() -> None:
    """(no ``pid``: nothing will write its end later)"""
    assert to_execution(Flow("SUCCESS", {"workflow": "wb.flow"})).state == "SUCCESS"
