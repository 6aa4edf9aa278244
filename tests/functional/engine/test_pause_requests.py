"""Pausing an execution another process runs (issue 26): a pause request in the
executions database, read by the engine of that process before its next tasks.

Each run happens in a real separate process (``python -c`` on the test host), paused
from this one through the Python API, as Mistral lets any client pause a running
execution: its running task ends, nothing new starts, it reads PAUSED; resumed, it
ends SUCCESS with every task's side effect made once.  Both engines: a compiled
TaskFlow graph and the state machine (a ``join`` makes the workflow run there).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_helpers import Host, until
from tests.pause_helpers import _effects, _elsewhere, _ended_elsewhere, _slow_runs, _tasks
from tests.pause_helpers import host as host  # the fixture
from tripleo_flow import exceptions


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_a_run_in_another_process_pauses_then_resumes(host: Host, tmp_path: Path,
                                                      join: bool) -> None:
    proc, ident, log = _elsewhere(host, tmp_path, "chain", join)
    _slow_runs(host, ident, log)
    asked = host.executions.pause(ident)
    # Mistral's PAUSED at once; its running task ends first (pausing)
    assert (asked.state, asked.pausing) == ("PAUSED", True)
    assert host._session.runner().store.pause_requests.pending() == [ident]
    assert _ended_elsewhere(proc) == "PAUSED"
    assert host.executions.get(ident).state == "PAUSED"
    assert _effects(log) == ["do first"]  # the next task never started
    tasks = _tasks(host, ident)
    assert tasks["first"] == tasks["slow"] == "SUCCESS"
    assert tasks.get("after", "PENDING") == "PENDING"
    resumed = host.executions.resume(ident)
    assert resumed.state == "SUCCESS"
    assert _effects(log) == ["do first", "do after", "do last"]  # each once
    assert _tasks(host, ident) == dict.fromkeys(["first", "slow", "after", "last"], "SUCCESS")
    assert host._session.runner().store.pause_requests.pending() == []


@pytest.mark.parametrize("paused", ["child", "parent"])
def test_a_request_on_a_child_or_its_parent_pauses_both(host: Host, tmp_path: Path,
                                                        paused: str) -> None:
    """Mistral's cascades, across processes: a request on the child pauses its parent;
    one on the parent pauses its running child; resuming the parent resumes both."""
    proc, parent, log = _elsewhere(host, tmp_path, "parent")
    child = until("the child execution", lambda: next(
        (e.id for e in host.executions.list() if e.parent_id == parent), None))
    _slow_runs(host, child, log)
    host.executions.pause(child if paused == "child" else parent)
    assert _ended_elsewhere(proc) == "PAUSED"
    assert host.executions.get(child).state == "PAUSED"
    assert host.executions.get(parent).state == "PAUSED"
    assert _effects(log) == ["do first"]
    assert _tasks(host, parent) == {"call": "PAUSED"}  # as Mistral's
    assert host.executions.resume(parent).state == "SUCCESS"
    assert host.executions.get(child).state == "SUCCESS"
    assert _effects(log) == ["do first", "do after", "do last", "do parent-done"]
    assert host._session.runner().store.pause_requests.pending() == []


def test_refused_pauses_change_nothing(host: Host, tmp_path: Path) -> None:
    """Mistral refuses to pause an ended execution (an unknown id is not found); a
    paused one is left as it is (Mistral's ``Workflow.pause`` returns when the workflow
    is paused already)."""
    proc, ident, log = _elsewhere(host, tmp_path, "chain")
    _slow_runs(host, ident, log)
    host.executions.pause(ident)
    host.executions.pause(ident)  # asked twice while it runs: one request
    assert _ended_elsewhere(proc) == "PAUSED"
    again = host.executions.pause(ident)
    assert (again.state, again.pausing) == ("PAUSED", False)
    assert host.executions.get(ident).state == "PAUSED"
    assert host._session.runner().store.pause_requests.pending() == [ident]  # cleared on resume
    assert host.executions.resume(ident).state == "SUCCESS"
    with pytest.raises(exceptions.Conflict, match=r"has already ended \(SUCCESS\)"):
        host.executions.pause(ident)
    assert host.executions.get(ident).state == "SUCCESS"
    assert host._session.runner().store.pause_requests.pending() == []
    with pytest.raises(exceptions.ExecutionNotFound):
        host.executions.pause("no-such-execution")
    assert _effects(log) == ["do first", "do after", "do last"]
