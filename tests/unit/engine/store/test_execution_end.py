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
from pathlib import Path
from typing import Any

import pytest

from tripleo_flow import exceptions
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


#: A workflow that fails on the state machine (its cycle keeps it off TaskFlow's graph).
MACHINE = """---
version: '2.0'
name: machine_end
workflows:
  fails:
    tasks:
      begin:
        action: std.echo output=0
        on-success: [a]
      a:
        action: std.echo output=1
        on-success: [b]
      b:
        action: std.fail
        on-success: [a]
"""


@pytest.mark.parametrize("workflow", ["std_only.greet", "std_only.broken",
                                      "machine_end.fails"])
def test_a_kill_between_the_two_writes_is_repaired_by_a_resume(
        tmp_path: Path, workflow: str) -> None:
    """Killed after TaskFlow saved the flow's end but before its record (no crash point
    sits there: the record is made as such a kill leaves it): the execution reads
    INTERRUPTED, and a resume records its end as the first run would have, output or
    error, without running a task again."""
    from tests.engine_helpers import Host

    host = Host(tmp_path / "data")
    host.install("std_only")
    (tmp_path / "machine_end.yaml").write_text(MACHINE)
    host.workbooks.create(tmp_path / "machine_end.yaml")
    inputs = {"who": "you"} if workflow.endswith("greet") else {}
    try:
        host.executions.create(workflow, inputs)
    except exceptions.WorkflowFailed:
        pass
    [first] = host.executions.list()
    assert first.finished_at is not None and first.state in ("SUCCESS", "ERROR")
    store = host._session.execution_store()
    fd = store.flow_detail(first.id)
    fd.meta = {k: v for k, v in fd.meta.items()
               if k not in ("finished_at", "output", "error", "error_api", "failed_task",
                            "error_hints", "error_record")}
    store.update_meta(fd, pid=_dead_pid())
    killed = host.executions.get(first.id)
    assert (killed.state, killed.output, killed.finished_at) == ("INTERRUPTED", None, None)
    tasks_before = [(t.name, t.state, t.started_at) for t in host.tasks.list(first.id)]
    try:
        host.executions.resume(first.id)
    except exceptions.WorkflowFailed as failed:
        assert first.state == "ERROR", failed
    resumed = host.executions.get(first.id)
    assert resumed.state == first.state
    assert resumed.output == first.output and resumed.finished_at is not None
    if first.state == "ERROR":
        assert resumed.error == first.error
    again = [(t.name, t.state, t.started_at) for t in host.tasks.list(first.id)]
    assert again == tasks_before  # nothing ran again
