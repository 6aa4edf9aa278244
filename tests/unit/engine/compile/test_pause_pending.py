"""What a pending pause does to a run's end and to its engine commands (issue 26).

A pause is pending from the moment a client asks it (the execution reads PAUSED)
until the running tasks of the execution ended.  Mistral (openstack/mistral,
``mistral/engine``) keeps a paused workflow from completing and leaves a task that
completes meanwhile unprocessed: ``Task.complete`` returns before it dispatches the
task's commands while the workflow is paused, ``Workflow.check_and_complete`` and
``_fail_workflow`` do nothing then, and ``Workflow.resume`` works out the commands of
the unprocessed tasks (``continue_workflow``) and applies them.  So a ``fail`` or a
``succeed`` that a task reaches, or an error no transition handles, while a pause is
pending leaves the execution PAUSED; resumed, it fails (ours: reverts) or succeeds.

Each task here waits at a gate the test opens (:class:`tests.engine_helpers.Hold`),
so the pause always arrives while the task runs.  It is asked in this process (the
engine is suspended) or from another one (a second host on the same executions
database: a pause request, which the engine reads); both engines: a compiled TaskFlow
graph and the state machine (a ``join`` makes a workflow run there).
"""

from __future__ import annotations

import textwrap
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host, gate_of
from tests.pause_helpers import _effects, _tasks
from tests.pause_helpers import host as host  # the fixture
from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.compile import resumes
from tripleo_flow.engine.store import pause_requests

ENGINES = pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
WHERE = pytest.mark.parametrize("where", ["here", "elsewhere"])

#: What the held task does once its gate opens, by workflow.
ENDS = {"fails": "on-success: [fail]", "succeeds": "on-success: [succeed]",
        "errs": "", "ends": "", "fails_after": "on-success: [after, fail]",
        "pauses_after": "on-success: [after, pause]"}


AFTER = """\
    after:
      action: test.record path=<% $.log %> value="after"
"""


def _workbook(join: bool) -> str:
    flows = "".join(textwrap.indent(textwrap.dedent(f"""\
        {name}:
          input: [log, gate]
          tasks:
            first:
              action: test.record path=<% $.log %> value="first"
              on-success: [held]
            held:
              {"join: all" if join else ""}
              action: test.hold gate=<% $.gate %>{" fail=true" if name == "errs" else ""}
              {then}
        """) + (AFTER if "after" in then else ""), "  ") for name, then in ENDS.items())
    return f"version: '2.0'\nname: pending\nworkflows:\n{flows}"


class Run:
    """A run of ``pending.WORKFLOW`` in a thread of ``host``, its held task waiting
    (``join``: the workbook is installed first, with a join that makes its workflows
    run on the state machine; None: it is installed already)."""

    def __init__(self, host: Host, tmp_path: Path, workflow: str, join: bool | None) -> None:
        if join is not None:  # else installed already
            path = tmp_path / "pending.yaml"
            path.write_text(_workbook(join))
            host.workbooks.create(path)
        self.host = host
        self.log = tmp_path / "effects.log"
        name = uuid.uuid4().hex
        self.gate = gate_of(name)
        self.id = host.executions.create(f"pending.{workflow}", {"log": str(self.log),
                                                                 "gate": name}, wait=False).id
        assert self.gate.reached.wait(60), "the held task did not start"

    def end(self) -> Any:
        """Open the gate; the execution's record once its run in this process ended."""
        self.gate.opened.set()
        self.host._session.runner().wait_background(60)
        return self.host.executions.get(self.id)


def _pause(host: Host, tmp_path: Path, execution_id: str, where: str) -> None:
    """Pause it from this process, or from another one (its own host and runner)."""
    if where == "here":
        asked = host.executions.pause(execution_id)
    else:
        other = Host(tmp_path / "data", ACTIONS)
        try:
            asked = other.executions.pause(execution_id)
        finally:
            other._session.close_workflows()
    assert (asked.state, asked.pausing) == ("PAUSED", True)


@ENGINES
@WHERE
@pytest.mark.parametrize("workflow", ["fails", "succeeds", "errs"])
def test_a_command_or_an_error_met_while_pausing_waits_for_the_resume(
        host: Host, tmp_path: Path, join: bool, where: str, workflow: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The held task reaches ``fail`` or ``succeed``, or fails with no handler, once
    the pause was asked: the execution stays PAUSED (Mistral's ``Task.complete``
    leaves the task unprocessed); resumed, the command (the error) applies.  (A
    request is trusted absent for an hour once looked for: only a look where the run
    would end can see it.)"""
    monkeypatch.setattr(pause_requests, "CHECK_INTERVAL", 3600.0)
    run = Run(host, tmp_path, workflow, join)
    _pause(host, tmp_path, run.id, where)
    ended = run.end()
    assert (ended.state, ended.pausing, ended.error) == ("PAUSED", False, None)
    assert _effects(run.log) == ["do first"]
    # Mistral's: the held task SUCCESS (fail, succeed), ERROR (errs).  (A workflow that
    # may take 'fail' runs on the state machine: as a graph, its task read ERROR.)
    held = {"succeeds": "SUCCESS", "fails": "SUCCESS", "errs": "ERROR"}[workflow]
    assert _tasks(host, run.id) == {"first": "SUCCESS", "held": held}  # here or elsewhere
    if workflow == "succeeds":
        assert host.executions.resume(run.id).state == "SUCCESS"
        assert _effects(run.log) == ["do first"]
        assert _tasks(host, run.id) == {"first": "SUCCESS", "held": "SUCCESS"}
        assert run.gate.calls == 1
        return
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.resume(run.id)
    resumed = host.executions.get(run.id)
    assert (resumed.state, resumed.failed_task) == ("ERROR", "held")
    assert _effects(run.log) == ["do first", "undo first"]
    assert run.gate.calls == 1  # the held task did not run again


def test_the_tasks_listed_before_fail_start_once_resumed(host: Host, tmp_path: Path) -> None:
    """``on-success: [after, fail]`` met while pausing: nothing starts before the
    resume; resumed, the run does what it would have done unpaused (``after`` starts,
    then the workflow fails: Mistral's ``_rearrange_commands`` keeps the task commands
    listed before ``fail``).  Such a workflow runs on the state machine."""
    unpaused = tmp_path / "unpaused"
    unpaused.mkdir()
    first = Run(host, unpaused, "fails_after", join=False)
    first.gate.opened.set()
    host._session.runner().wait_background(60)
    assert host.executions.get(first.id).state == "ERROR"
    run = Run(host, tmp_path, "fails_after", join=None)
    _pause(host, tmp_path, run.id, "elsewhere")
    assert run.end().state == "PAUSED"
    assert _effects(run.log) == ["do first"]
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.resume(run.id)
    assert host.executions.get(run.id).state == "ERROR"
    assert _effects(run.log) == _effects(first.log)
    assert "do after" in _effects(run.log)


@WHERE
def test_a_pause_command_met_while_pausing_starts_nothing_before_the_resume(
        host: Host, tmp_path: Path, where: str) -> None:
    """``on-success: [after, pause]``: unpaused, ``after`` starts before the execution
    pauses (test_mistral_resume's ``test_resume_direct``); met once a pause was asked,
    the held task's commands wait for the resume, as Mistral's unprocessed task: nothing
    starts.  The resume applies them but the pause, as Mistral's
    ``Workflow._continue_workflow`` (it drops the pause commands of the tasks completed
    while paused): ``after`` starts and the execution ends."""
    run = Run(host, tmp_path, "pauses_after", join=False)
    _pause(host, tmp_path, run.id, where)
    assert run.end().state == "PAUSED"
    assert _effects(run.log) == ["do first"]
    assert _tasks(host, run.id).get("after", "PENDING") == "PENDING"
    assert host.executions.resume(run.id).state == "SUCCESS"
    assert _effects(run.log) == ["do first", "do after"]
    assert _tasks(host, run.id) == {"first": "SUCCESS", "held": "SUCCESS", "after": "SUCCESS"}


@ENGINES
def test_a_pause_asked_as_the_last_task_ends_keeps_the_run_paused(
        host: Host, tmp_path: Path, join: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine trusts a check that found no request for a while
    (:data:`~tripleo_flow.engine.store.pause_requests.CHECK_INTERVAL`); made an hour here, the
    "no" read as the last task started is still trusted when it ends: a request that
    arrived meanwhile must still be seen before the run ends, which then stays PAUSED
    (Mistral's ``check_and_complete`` does not complete a paused workflow) and
    completes once resumed."""
    monkeypatch.setattr(pause_requests, "CHECK_INTERVAL", 3600.0)
    run = Run(host, tmp_path, "ends", join)
    _pause(host, tmp_path, run.id, "elsewhere")
    ended = run.end()
    assert (ended.state, ended.pausing) == ("PAUSED", False)
    assert host.executions.resume(run.id).state == "SUCCESS"
    assert _effects(run.log) == ["do first"]
    assert _tasks(host, run.id) == {"first": "SUCCESS", "held": "SUCCESS"}
    assert host._session.runner().store.pause_requests.pending() == []


@ENGINES
def test_a_pause_asked_right_after_the_last_check_lets_the_run_succeed(
        host: Host, tmp_path: Path, join: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request lands right after the engine's last look for one (before the run
    is recorded as ended): the pause is answered PAUSED (pausing), the run ends
    SUCCESS, nothing of the request is left, and readers show SUCCESS; pausing or
    resuming it then is refused as ended (never a run stuck PAUSED or pausing)."""
    monkeypatch.setattr(pause_requests, "CHECK_INTERVAL", 3600.0)
    run = Run(host, tmp_path, "ends", join)
    looked = pause_requests.PauseRequests.requested
    landed: list[str] = []

    def then_asked(self: pause_requests.PauseRequests, ids: Any) -> bool:
        found = looked(self, ids)
        if run.gate.opened.is_set() and not landed:  # the engine's look at its end
            landed.append("asked")
            _pause(host, tmp_path, run.id, "elsewhere")
        return found

    monkeypatch.setattr(pause_requests.PauseRequests, "requested", then_asked)
    ended = run.end()
    assert landed == ["asked"], "the engine did not look for a request at its end"
    assert (ended.state, ended.pausing) == ("SUCCESS", False)
    assert host._session.runner().store.pause_requests.pending() == []
    with pytest.raises(exceptions.Conflict, match=r"has already ended \(SUCCESS\)"):
        host.executions.pause(run.id)
    assert host.executions.resume(run.id).state == "SUCCESS"  # unchanged, as Mistral's
    assert _effects(run.log) == ["do first"]


@ENGINES
def test_a_resume_while_pausing_is_accepted_at_once_and_goes_on_once_paused(
        host: Host, tmp_path: Path, join: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resume (not waited for: the HTTP API's) of an execution this process runs that
    is still pausing is accepted at once (Mistral resumes a paused workflow at once),
    answered as readers show it (PAUSED, pausing); the caller waits for nothing (its
    held task is still running when the answer comes), readers show the pause until
    its task ended, a second resume meanwhile is refused, and the run then goes on to
    SUCCESS, each task once.
    (The caller's own wait, for a resume waited for, is cut to 0.5 s here: the old
    wait-then-refuse would answer Conflict.)"""
    monkeypatch.setattr(resumes, "PAUSE_SETTLE", 0.5)
    run = Run(host, tmp_path, "ends", join)
    _pause(host, tmp_path, run.id, "here")
    accepted = host.executions.resume(run.id, wait=False)
    assert not run.gate.opened.is_set()
    assert (accepted.state, accepted.pausing) == ("PAUSED", True)  # as readers show it
    shown = host.executions.get(run.id)
    assert (shown.state, shown.pausing) == ("PAUSED", True)
    with pytest.raises(exceptions.Conflict, match="being resumed already"):
        host.executions.resume(run.id, wait=False)
    ended = run.end()
    assert (ended.state, ended.pausing) == ("SUCCESS", False)
    assert _tasks(host, run.id) == {"first": "SUCCESS", "held": "SUCCESS"}
    assert _effects(run.log) == ["do first"] and run.gate.calls == 1
    assert host._session.runner().store.pause_requests.pending() == []


def test_a_resume_waiting_for_the_pause_starts_once_the_pause_is_recorded(
        host: Host, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run that paused writes its record (PAUSED) after its engine stopped; a resume
    waiting for the pause must not start before, or that late write would put the
    resumed (and ended) execution back to PAUSED for good.  Staged: the paused run's
    record waits (up to 3 s) for the resumed run to end, which must not happen
    meanwhile."""
    runner = host._session.runner()
    resumed_ended = threading.Event()
    recorded: list[str] = []
    succeeded = runner.succeeded

    def recording(fd: Any, engine: Any) -> Any:
        if engine.storage.get_flow_state() != "SUSPENDED":
            try:
                return succeeded(fd, engine)
            finally:
                resumed_ended.set()
        clock.wait(resumed_ended, 3)
        recorded.append("paused")
        return succeeded(fd, engine)

    monkeypatch.setattr(runner, "succeeded", recording)
    run = Run(host, tmp_path, "ends", join=False)
    _pause(host, tmp_path, run.id, "here")
    assert host.executions.resume(run.id, wait=False).pausing
    ended = run.end()
    assert recorded == ["paused"]
    assert (ended.state, ended.pausing) == ("SUCCESS", False)
    assert _effects(run.log) == ["do first"] and run.gate.calls == 1
