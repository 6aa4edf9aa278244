"""Pausing an execution another process runs (issue 26): a pause request in the
executions database, read by the engine of that process before its next tasks.

Each run happens in a real separate process (``python -c`` on the test host), paused
from this one through the Python API, as Mistral lets any client pause a running
execution: its running task ends, nothing new starts, it reads PAUSED; resumed, it
ends SUCCESS with every task's side effect made once.  Both engines: a compiled
TaskFlow graph and the state machine (a ``join`` makes the workflow run there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host, until
from tripleo_flow import exceptions

ROOT = Path(__file__).resolve().parents[3]

#: Run a workflow in this separate process; print its id, then how it ended.
RUN_ELSEWHERE = textwrap.dedent("""\
    import json, sys
    from pathlib import Path
    from tests.engine_helpers import Host
    host = Host(Path(sys.argv[1]))
    runner = host._runner()
    fd = runner.start(sys.argv[2], json.loads(sys.argv[3]))
    print(fd.uuid, flush=True)
    print(runner.execute(fd).state, flush=True)
    host.close_workflows()
    """)


def _workbook(join: bool) -> str:
    return textwrap.dedent(f"""\
        version: '2.0'
        name: pausing
        workflows:
          chain:
            input: [log]
            tasks:
              first:
                action: test.record path=<% $.log %> value="first"
                on-success: [slow]
              slow:
                action: std.sleep seconds=4
                on-success: [after]
              after:
                action: test.record path=<% $.log %> value="after"
                on-success: [last]
              last:
                {"join: all" if join else ""}
                action: test.record path=<% $.log %> value="last"
          parent:
            input: [log]
            tasks:
              call:
                workflow: chain log=<% $.log %>
                retry: {{count: 1, delay: 0}}  # run apart: a child execution
                on-success: [done]
              done:
                action: test.record path=<% $.log %> value="parent-done"
        """)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host.close_workflows()




def _tasks(host: Host, execution_id: str) -> dict[str, str]:
    return {t.name: t.state for t in host.execution_tasks(execution_id)}


def _elsewhere(host: Host, tmp_path: Path, workflow: str, join: bool = False,
               workbook: str | None = None) -> tuple[subprocess.Popen[str], str, Path]:
    """Start ``pausing.WORKFLOW`` (of ``workbook``'s text when given) in another
    process; it, the execution's id, its log."""
    path = tmp_path / "pausing.yaml"
    path.write_text(workbook or _workbook(join))
    host.create_workbook(path)
    log = tmp_path / "effects.log"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN_ELSEWHERE, str(tmp_path / "data"), f"pausing.{workflow}",
         json.dumps({"log": str(log)})], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip(), log


def _effects(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _slow_runs(host: Host, execution_id: str, log: Path) -> None:
    """Once the first task is done, the slow one runs (its RUNNING mark is written
    with its result, so it cannot be read yet): its 4 s sleep has long begun 0.5 s on."""
    until("the first task done", lambda: _effects(log) == ["do first"])
    time.sleep(0.5)
    assert host.get_execution(execution_id).state == "RUNNING"
    assert _tasks(host, execution_id).get("slow") != "SUCCESS"


def _ended_elsewhere(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    try:
        state = proc.stdout.readline().strip()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    return state


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_a_run_in_another_process_pauses_then_resumes(host: Host, tmp_path: Path,
                                                      join: bool) -> None:
    proc, ident, log = _elsewhere(host, tmp_path, "chain", join)
    _slow_runs(host, ident, log)
    asked = host.pause_execution(ident)
    # Mistral's PAUSED at once; its running task ends first (pausing)
    assert (asked.state, asked.pausing) == ("PAUSED", True)
    assert host._runner().store.pause_requests.pending() == [ident]
    assert _ended_elsewhere(proc) == "PAUSED"
    assert host.get_execution(ident).state == "PAUSED"
    assert _effects(log) == ["do first"]  # the next task never started
    tasks = _tasks(host, ident)
    assert tasks["first"] == tasks["slow"] == "SUCCESS"
    assert tasks.get("after", "PENDING") == "PENDING"
    resumed = host.resume_execution(ident)
    assert resumed.state == "SUCCESS"
    assert _effects(log) == ["do first", "do after", "do last"]  # each once
    assert _tasks(host, ident) == dict.fromkeys(["first", "slow", "after", "last"], "SUCCESS")
    assert host._runner().store.pause_requests.pending() == []


@pytest.mark.parametrize("paused", ["child", "parent"])
def test_a_request_on_a_child_or_its_parent_pauses_both(host: Host, tmp_path: Path,
                                                        paused: str) -> None:
    """Mistral's cascades, across processes: a request on the child pauses its parent;
    one on the parent pauses its running child; resuming the parent resumes both."""
    proc, parent, log = _elsewhere(host, tmp_path, "parent")
    child = until("the child execution", lambda: next(
        (e.id for e in host.list_executions() if e.parent_id == parent), None))
    _slow_runs(host, child, log)
    host.pause_execution(child if paused == "child" else parent)
    assert _ended_elsewhere(proc) == "PAUSED"
    assert host.get_execution(child).state == "PAUSED"
    assert host.get_execution(parent).state == "PAUSED"
    assert _effects(log) == ["do first"]
    assert _tasks(host, parent) == {"call": "PAUSED"}  # as Mistral's
    assert host.resume_execution(parent).state == "SUCCESS"
    assert host.get_execution(child).state == "SUCCESS"
    assert _effects(log) == ["do first", "do after", "do last", "do parent-done"]
    assert host._runner().store.pause_requests.pending() == []


def test_refused_pauses_change_nothing(host: Host, tmp_path: Path) -> None:
    """Mistral refuses to pause an ended execution (an unknown id is not found); a
    paused one is left as it is (Mistral's ``Workflow.pause`` returns when the workflow
    is paused already)."""
    proc, ident, log = _elsewhere(host, tmp_path, "chain")
    _slow_runs(host, ident, log)
    host.pause_execution(ident)
    host.pause_execution(ident)  # asked twice while it runs: one request
    assert _ended_elsewhere(proc) == "PAUSED"
    again = host.pause_execution(ident)
    assert (again.state, again.pausing) == ("PAUSED", False)
    assert host.get_execution(ident).state == "PAUSED"
    assert host._runner().store.pause_requests.pending() == [ident]  # cleared on resume
    assert host.resume_execution(ident).state == "SUCCESS"
    with pytest.raises(exceptions.Conflict, match=r"has already ended \(SUCCESS\)"):
        host.pause_execution(ident)
    assert host.get_execution(ident).state == "SUCCESS"
    assert host._runner().store.pause_requests.pending() == []
    with pytest.raises(exceptions.ExecutionNotFound):
        host.pause_execution("no-such-execution")
    assert _effects(log) == ["do first", "do after", "do last"]
