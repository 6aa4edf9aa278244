"""What readers see of a pause asked from another process, as Mistral shows it (issue 26).

Mistral marks an execution PAUSED the moment a client pauses it (its running tasks
finish, no new task starts: mistral/engine/workflows.py ``Workflow.pause``), keeps a
paused workflow from completing until it is resumed (``check_and_complete`` and
``_fail_workflow`` return while it is paused), and a task whose sub-workflow is
paused reads PAUSED (test_subworkflows_pause_resume.py ``await_task_paused``).
Each run here happens in a real separate process, paused from this one through
the Python API; both engines: a compiled TaskFlow graph and the state machine (a
``join`` makes the workflow run there).
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host, until
from tests.pause_helpers import (
    _effects,
    _elsewhere,
    _ended_elsewhere,
    _slow_runs,
    _tasks,
)
from tests.pause_helpers import _workbook as pausing_workbook
from tripleo_flow import exceptions


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


#: The first task of each workflow below.
FIRST = """
              first:
                action: test.record path=<% $.log %> value="first"
                on-success: [slow{more}]"""


def _workbook(join: bool) -> str:
    """Workflows whose last task (``slow``) runs when the pause is asked: ``ends``
    ends with it; in ``fails``, a task failed meanwhile (no handler)."""
    slow = f"""
              slow:
                {"join: all" if join else ""}
                action: std.sleep seconds=3"""
    return textwrap.dedent(f"""\
        version: '2.0'
        name: pausing
        workflows:
          ends:
            input: [log]
            tasks:{FIRST.format(more="")}{slow}
          fails:
            input: [log]
            tasks:{FIRST.format(more=", bad")}{slow}
              bad:
                action: std.fail
        """)


def _views(host: Host, tmp_path: Path, workflow: str, join: bool
           ) -> tuple[subprocess.Popen[str], str, Path]:
    return _elsewhere(host, tmp_path, workflow, join, _workbook(join))


ENGINES = pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])


@ENGINES
def test_a_pause_from_another_process_reads_paused_at_once(host: Host, tmp_path: Path,
                                                           join: bool) -> None:
    """Mistral's ``Workflow.pause`` sets PAUSED at once; the running task goes on (it
    stays RUNNING) and no new task starts.  Resuming before the running task ended is
    refused, with why (Mistral would go on at once: a difference named here)."""
    proc, ident, log = _elsewhere(host, tmp_path, "chain", join)  # the slow task: 4 s
    _slow_runs(host, ident, log)
    asked = host.executions.pause(ident)
    assert (asked.state, asked.pausing) == ("PAUSED", True)
    shown = host.executions.get(ident)
    assert (shown.state, shown.pausing) == ("PAUSED", True)
    assert [(e.state, e.pausing) for e in host.executions.list()] == [("PAUSED", True)]
    page, _marker = host.executions.page()
    assert [(e.state, e.pausing) for e in page] == [("PAUSED", True)]
    assert _tasks(host, ident).get("slow") != "SUCCESS"  # its running task goes on
    with pytest.raises(exceptions.Conflict, match="is pausing"):
        host.executions.resume(ident)
    host.executions.pause(ident)  # asked again while pausing: Mistral's no-op
    assert _ended_elsewhere(proc) == "PAUSED"
    ended = host.executions.get(ident)
    assert (ended.state, ended.pausing) == ("PAUSED", False)
    assert _effects(log) == ["do first"]  # the next task never started
    assert host.executions.resume(ident).state == "SUCCESS"
    assert _effects(log) == ["do first", "do after", "do last"]
    assert not host.executions.get(ident).pausing


@ENGINES
def test_a_run_whose_last_task_ends_after_a_pause_stays_paused(host: Host, tmp_path: Path,
                                                               join: bool) -> None:
    """Mistral's ``check_and_complete`` does not complete a paused workflow: the
    last task ends, the execution stays PAUSED (never an end the reader did not
    show), and completes once resumed."""
    proc, ident, log = _views(host, tmp_path, "ends", join)
    _slow_runs(host, ident, log)
    assert host.executions.pause(ident).state == "PAUSED"
    assert _ended_elsewhere(proc) == "PAUSED"
    assert _tasks(host, ident) == {"first": "SUCCESS", "slow": "SUCCESS"}
    assert host.executions.get(ident).state == "PAUSED"
    ended = host.executions.resume(ident)
    assert ended.state == "SUCCESS"
    assert _effects(log) == ["do first"]


@ENGINES
def test_an_unhandled_error_while_paused_fails_the_workflow_once_resumed(
        host: Host, tmp_path: Path, join: bool) -> None:
    """Mistral's ``_fail_workflow`` does nothing while the workflow is paused: a task
    that failed with no handler leaves it PAUSED; resumed, it fails (ours: reverts)."""
    proc, ident, log = _views(host, tmp_path, "fails", join)
    until("the failed task", lambda: _tasks(host, ident).get("bad") in ("ERROR", "FAILURE"))
    assert _tasks(host, ident).get("slow") != "SUCCESS"
    assert host.executions.pause(ident).state == "PAUSED"
    assert _ended_elsewhere(proc) == "PAUSED"
    assert host.executions.get(ident).state == "PAUSED"
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.resume(ident)
    ended = host.executions.get(ident)
    assert (ended.state, ended.failed_task) == ("ERROR", "bad")
    assert _effects(log) == ["do first", "undo first"]


@ENGINES
def test_a_pending_execution_can_be_paused(host: Host, tmp_path: Path, join: bool) -> None:
    """Mistral shows an execution RUNNING from its start, and pauses it; ours may
    wait PENDING for a conductor (or its worker): it is paused as well, reads PAUSED,
    and its engine starts no task; resumed, it runs to its end."""
    path = tmp_path / "pausing.yaml"
    path.write_text(pausing_workbook(join))
    host.workbooks.create(path)
    log = tmp_path / "effects.log"
    runner = host._session.runner()
    fd = runner.start("pausing.chain", {"log": str(log)}, local=False)
    assert host.executions.get(fd.uuid).state == "PENDING"
    asked = host.executions.pause(fd.uuid)
    assert (asked.state, asked.pausing) == ("PAUSED", True)
    assert runner.execute(fd).state == "PAUSED"  # as a conductor claiming it runs it
    assert not log.exists()  # no task started
    assert host.executions.get(fd.uuid).state == "PAUSED"
    assert host.executions.resume(fd.uuid).state == "SUCCESS"
    assert _effects(log) == ["do first", "do after", "do last"]
    assert runner.store.pause_requests.pending() == []
