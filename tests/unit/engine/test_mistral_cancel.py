"""Cancelling executions, ported from Mistral's engine tests (issue 26).

The cases of openstack/mistral ``mistral/tests/unit/engine/test_workflow_cancel.py``
and the resume of an ended execution (``workflow_handler.resume_workflow`` returns a
workflow that is not paused unchanged).  Mistral cancels while ``task1`` runs (a
``wait-before`` on ``task2`` leaves time); here ``task1`` waits at a gate the test
opens (:class:`tests.engine_helpers.Hold`), so the cancel always arrives while it
runs.  Both engines (a ``join`` makes a workflow run on the state machine), and the
cancel asked in this process (the engine is suspended) or from another one (a
second host on the same executions database: a request its engine reads).
"""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host, gate_of
from tests.pause_helpers import _effects, _tasks
from tests.pause_helpers import host as host  # the fixture
from tripleo_flow import exceptions
from tripleo_flow.common import clock

ENGINES = pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
WHERE = pytest.mark.parametrize("where", ["here", "elsewhere"])
MSG = "Cancelled by user."


def _install(host: Host, tmp_path: Path, text: str) -> str:
    name = "c" + uuid.uuid4().hex[:8]
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n"
                    + textwrap.indent(textwrap.dedent(text), "  "))
    host.workbooks.create(path)
    return name


def _wf(join: bool) -> str:
    """Mistral's ``test_cancel_workflow`` workflow, ``task1`` held at a gate."""
    return f"""\
        wf:
          input: [log, gate]
          tasks:
            task1:
              action: test.hold gate=<% $.gate %>
              on-complete:
                - task2
            task2:
              {"join: all" if join else ""}
              action: test.record path=<% $.log %> value="task2"
        """


def _cancel(host: Host, tmp_path: Path, ident: str, where: str,
            message: str | None = MSG) -> Any:
    if where == "here":
        return host.executions.cancel(ident, message)
    other = Host(tmp_path / "data", ACTIONS)
    try:
        return other.executions.cancel(ident, message)
    finally:
        other._session.close_workflows()


def _start(host: Host, tmp_path: Path, workflow: str, **inputs: Any) -> tuple[str, Any]:
    gate_name = uuid.uuid4().hex
    gate = gate_of(gate_name)
    ident = host.executions.create(workflow, {**inputs, "gate": gate_name}, wait=False).id
    assert gate.reached.wait(60), "the held task did not start"
    return ident, gate


def _task_states(host: Host, ident: str) -> dict[str, tuple[str, str | None]]:
    """Each task of ``ident``: its state and ``state_info`` (Mistral's)."""
    return {t.name: (t.state, t.state_info) for t in host.tasks.list(ident)}


def _ended(host: Host, gate: Any) -> None:
    gate.opened.set()
    host._session.runner().wait_background(60)


@ENGINES
@WHERE
def test_cancel_workflow(host: Host, tmp_path: Path, join: bool, where: str) -> None:
    """Mistral's ``test_cancel_workflow``: CANCELLED at once with the message as its
    state_info; the running task1 ends SUCCESS, task2 is never run; its output is
    ``{"result": message}``; a resume returns it unchanged and runs nothing."""
    name = _install(host, tmp_path, _wf(join))
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    asked = _cancel(host, tmp_path, ident, where)
    assert (asked.state, asked.state_info) == ("CANCELLED", MSG)
    assert host.executions.get(ident).state == "CANCELLED"  # before task1 ended
    _ended(host, gate)
    done = host.executions.get(ident)
    assert (done.state, done.state_info, done.output) == ("CANCELLED", MSG, {"result": MSG})
    assert done.finished_at is not None
    tasks = _tasks(host, ident)
    assert tasks["task1"] == "SUCCESS" and tasks.get("task2", "PENDING") == "PENDING"
    assert _effects(log) == []
    again = host.executions.resume(ident)
    assert (again.state, again.state_info) == ("CANCELLED", MSG)
    assert _effects(log) == [] and gate.calls == 1
    with pytest.raises(exceptions.Conflict, match=r"has already ended \(CANCELLED\)"):
        host.executions.pause(ident)
    assert host._session.runner().store.pause_requests.pending() == [ident]  # never runs again


@ENGINES
def test_cancel_paused_workflow(host: Host, tmp_path: Path, join: bool) -> None:
    """Mistral's ``test_cancel_paused_workflow``: a PAUSED execution cancelled reads
    CANCELLED; task1 SUCCESS, task2 never run, resumed or not."""
    name = _install(host, tmp_path, _wf(join))
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    host.executions.pause(ident)
    _ended(host, gate)
    assert host.executions.get(ident).state == "PAUSED"
    done = host.executions.cancel(ident, MSG)
    assert (done.state, done.state_info, done.output) == ("CANCELLED", MSG, {"result": MSG})
    assert done.finished_at is not None
    assert host.executions.resume(ident).state == "CANCELLED"
    host._session.runner().wait_background(60)
    assert _tasks(host, ident)["task1"] == "SUCCESS"
    assert _effects(log) == [] and gate.calls == 1
    assert host.executions.follow(ident, timeout=60).state == "CANCELLED"  # ended
    # What a conductor that claims its job again (or a crash-resume) runs: nothing.
    runner = host._session.runner()
    assert runner.execute(runner.store.flow_detail(ident)).state == "CANCELLED"
    assert _effects(log) == [] and gate.calls == 1


def test_cancel_completed_workflow(host: Host, tmp_path: Path) -> None:
    """Mistral's ``test_cancel_completed_workflow`` (verbatim): nothing changes."""
    name = _install(host, tmp_path, """\
        wf:
          type: direct
          tasks:
            task1:
              action: std.echo output="Echo"
        """)
    done = host.executions.create(f"{name}.wf", {})
    assert done.state == "SUCCESS"
    after = host.executions.cancel(done.id, MSG)
    assert (after.state, after.state_info) == ("SUCCESS", None)
    assert host.executions.get(done.id) == done
    assert _tasks(host, done.id) == {"task1": "SUCCESS"}


def test_resume_of_an_ended_execution_returns_it_unchanged(host: Host, tmp_path: Path) -> None:
    """Mistral's ``resume_workflow`` of a workflow that is not paused returns it as it
    is (no error): a succeeded one and a failed one stay as they ended, nothing runs."""
    name = _install(host, tmp_path, """\
        ok:
          input: [log]
          tasks:
            task1:
              action: test.record path=<% $.log %> value="ok"
        bad:
          tasks:
            task1:
              action: std.fail
        """)
    log = tmp_path / "log"
    done = host.executions.create(f"{name}.ok", {"log": str(log)})
    assert host.executions.resume(done.id) == host.executions.get(done.id)
    assert host.executions.resume(done.id, wait=False).state == "SUCCESS"
    assert _effects(log) == ["do ok"]
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create(f"{name}.bad", {})
    failed = next(e for e in host.executions.list() if e.workflow == f"{name}.bad")
    again = host.executions.resume(failed.id)
    assert (again.state, again.error) == (failed.state, failed.error)


SUB = """\
    wf:
      input: [log, gate]
      tasks:
        taskx:
          workflow: subwf log=<% $.log %> gate=<% $.gate %>
    subwf:
      input: [log, gate]
      tasks:
        task1:
          action: test.hold gate=<% $.gate %>
          on-complete:
            - task2
        task2:
          join: all
          action: test.record path=<% $.log %> value="task2"
    """


def _family(host: Host, tmp_path: Path) -> tuple[str, str, Any, Path]:
    name = _install(host, tmp_path, SUB)
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    children = [e for e in host.executions.list() if e.parent_id == ident]
    assert len(children) == 1
    return ident, children[0].id, gate, log


@WHERE
def test_cancel_parent_workflow(host: Host, tmp_path: Path, where: str) -> None:
    """Mistral's ``test_cancel_parent_workflow``: the sub-workflow execution is
    cancelled with the parent, both with the message; task2 never runs."""
    parent, child, gate, log = _family(host, tmp_path)
    _cancel(host, tmp_path, parent, where)
    _ended(host, gate)
    for ident in (parent, child):
        done = host.executions.get(ident)
        assert (done.state, done.state_info) == ("CANCELLED", MSG)
    # taskx, whose sub-workflow was cancelled, reads CANCELLED with its message
    assert _task_states(host, parent) == {"taskx": ("CANCELLED", MSG)}
    assert _task_states(host, child) == {"task1": ("SUCCESS", None)}
    assert _effects(log) == [] and gate.calls == 1
    assert host.executions.resume(child).state == "CANCELLED"
    assert host.executions.resume(parent).state == "CANCELLED"
    host._session.runner().wait_background(60)
    assert _effects(log) == [] and gate.calls == 1


@WHERE
def test_cancel_child_workflow(host: Host, tmp_path: Path, where: str) -> None:
    """Mistral's ``test_cancel_child_workflow``: the child reads CANCELLED with the
    message, its parent CANCELLED with ``Cancelled tasks: taskx``."""
    parent, child, gate, log = _family(host, tmp_path)
    _cancel(host, tmp_path, child, where)
    _ended(host, gate)
    sub = host.executions.get(child)
    assert (sub.state, sub.state_info) == ("CANCELLED", MSG)
    top = host.executions.get(parent)
    assert (top.state, top.state_info) == ("CANCELLED", "Cancelled tasks: taskx")
    assert _task_states(host, parent) == {"taskx": ("CANCELLED", MSG)}
    assert _effects(log) == [] and gate.calls == 1


def test_cancel_with_items_parent_workflow(host: Host, tmp_path: Path) -> None:
    """Mistral's ``test_cancel_with_items_parent_workflow``: a ``with-items`` task runs
    one sub-workflow execution per item; cancelling the parent cancels both (each with
    the message, whether it had started its task1 yet or not), task2 never runs."""
    name = _install(host, tmp_path, SUB.replace(
        "        taskx:\n", "        taskx:\n          with-items: i in [1, 2]\n"))
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    host.executions.cancel(ident, MSG)
    _ended(host, gate)
    children = [e for e in host.executions.list() if e.parent_id == ident]
    assert len(children) == 2
    for done in (host.executions.get(ident), *children):
        assert (done.state, done.state_info) == ("CANCELLED", MSG)
        assert done.finished_at is not None
    ((state, info),) = _task_states(host, ident).values()
    assert state == "CANCELLED" and "2 of 2" in str(info) and "cancelled" in str(info)
    assert _effects(log) == []
    # A sub-workflow that starts as its parent is cancelled (an item's child the
    # parent's task starts meanwhile) stops at once, cancelled with it, not PAUSED.
    runner = host._session.runner()
    late = runner.start(f"{name}.subwf", {"log": str(log), "gate": uuid.uuid4().hex},
                        execution_id=str(uuid.uuid4()),
                        parent={"parent_id": ident, "parent_task": "taskx"})
    done = runner.execute(late)
    assert (done.state, done.state_info) == ("CANCELLED", MSG)
    assert _effects(log) == []


def test_a_cancel_is_refused_to_what_is_not_text(host: Host, tmp_path: Path) -> None:
    """A message that is not text is refused and changes nothing; an unknown id is 404."""
    name = _install(host, tmp_path, _wf(False))
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(tmp_path / "log"))
    with pytest.raises(exceptions.InvalidInput, match="must be text"):
        host.executions.cancel(ident, {"no": "text"})  # type: ignore[arg-type]
    assert host.executions.get(ident).state == "RUNNING"
    with pytest.raises(exceptions.ExecutionNotFound):
        host.executions.cancel("no-such-execution")
    _ended(host, gate)
    assert host.executions.get(ident).state == "SUCCESS"


@WHERE
def test_cancel_workflow_with_a_waiting_task(host: Host, tmp_path: Path, where: str) -> None:
    """A task that waits for a client (``std.async_noop``) when its execution is
    cancelled can no longer complete (its action execution is cancelled, a completion
    is refused): it reads CANCELLED with the execution's message, as Mistral's task of
    a cancelled action execution (test_task_cancel.py); nothing after it runs."""
    name = _install(host, tmp_path, """\
        wf:
          input: [log]
          tasks:
            wait:
              action: std.async_noop
              on-complete: [after]
            after:
              action: test.record path=<% $.log %> value="after"
        """)
    log = tmp_path / "log"
    ident = host.executions.create(f"{name}.wf", {"log": str(log)}, wait=False).id
    _waiting_for_client(host, ident, "wait")
    assert _task_states(host, ident) == {"wait": ("RUNNING", None)}
    _cancel(host, tmp_path, ident, where)
    assert host.executions.follow(ident, timeout=60).state == "CANCELLED"
    host._session.runner().wait_background(60)
    assert _task_states(host, ident) == {"wait": ("CANCELLED", MSG)}
    with pytest.raises(exceptions.Conflict, match="does not wait"):
        host.tasks.complete(ident, "wait", "SUCCESS", "late")
    assert host.executions.resume(ident).state == "CANCELLED"
    host._session.runner().wait_background(60)
    assert _task_states(host, ident) == {"wait": ("CANCELLED", MSG)}
    assert _effects(log) == []


def _waiting_for_client(host: Host, ident: str, task: str) -> None:
    deadline = clock.monotonic() + 60
    while not any(t.name == task and t.waiting for t in host.tasks.list(ident)):
        assert clock.monotonic() < deadline, host.tasks.list(ident)
        clock.sleep(0.05)


ITEMS = """\
    wf:
      input: [log, gates, fails]
      tasks:
        taskx:
          with-items:
            - g in <% $.gates %>
            - f in <% $.fails %>
          workflow: subwf log=<% $.log %> gate=<% $.g %> fail=<% $.f %>
    subwf:
      input: [log, gate, fail]
      tasks:
        task1:
          action: test.hold gate=<% $.gate %> fail=<% $.fail %>
          on-success:
            - task2
        task2:
          join: all
          action: test.record path=<% $.log %> value=<% $.gate %>
    """


def _until(what: str, check: Any) -> None:
    deadline = clock.monotonic() + 60
    while not check():
        assert clock.monotonic() < deadline, what
        clock.sleep(0.05)


@pytest.mark.parametrize("fail", [False, True], ids=["then-succeed", "then-fail"])
def test_cancel_with_items_child_workflow(host: Host, tmp_path: Path, fail: bool) -> None:
    """Mistral's ``test_cancel_with_items_child_workflow`` and
    ``test_cancel_then_fail_with_items_child_workflow``: one of a ``with-items`` task's
    two sub-workflow executions is cancelled; the other runs to its end (SUCCESS, or
    its failure), then the task reads CANCELLED (``cancelled`` in its state_info) and
    the parent ends CANCELLED with ``Cancelled tasks: taskx``."""
    name = _install(host, tmp_path, ITEMS)
    log = tmp_path / "log"
    first, second = (uuid.uuid4().hex for _ in range(2))
    ident = host.executions.create(f"{name}.wf", {"log": str(log), "gates": [first, second],
                                                  "fails": [False, fail]}, wait=False).id
    assert gate_of(first).reached.wait(60) and gate_of(second).reached.wait(60)
    children = {e.input["gate"]: e.id for e in host.executions.list()
                if e.parent_id == ident}
    asked = host.executions.cancel(children[first], MSG)
    assert (asked.state, asked.state_info) == ("CANCELLED", MSG)
    assert host.executions.get(ident).state == "RUNNING"  # its other branch goes on
    assert host.executions.get(children[second]).state == "RUNNING"
    gate_of(first).opened.set()
    gate_of(second).opened.set()
    assert host.executions.follow(ident, timeout=60).state == "CANCELLED"
    host._session.runner().wait_background(60)
    cancelled, other = (host.executions.get(children[g]) for g in (first, second))
    assert (cancelled.state, cancelled.state_info) == ("CANCELLED", MSG)
    assert other.state == ("ERROR" if fail else "SUCCESS")
    top = host.executions.get(ident)
    assert (top.state, top.state_info) == ("CANCELLED", "Cancelled tasks: taskx")
    ((state, info),) = _task_states(host, ident).values()
    assert state == "CANCELLED" and "1 of 2" in str(info) and "cancelled" in str(info)
    assert _effects(log) == ([] if fail else [f"do {second}"])


def cancel_child_then_end(host: Host, tmp_path: Path, workflow: str, where: str,
                          **inputs: Any) -> str:
    """Start ``workflow`` (its ``taskx`` runs a sub-workflow held at ``gate``, its
    ``other`` is held at ``gate2``), cancel the child, and check: ``taskx`` reads
    CANCELLED with the message once the child ended, while the parent runs on; once
    ``other`` is let go the parent ends CANCELLED with ``Cancelled tasks: taskx``.
    The parent's id."""
    gate2 = uuid.uuid4().hex
    ident, gate = _start(host, tmp_path, workflow, gate2=gate2, **inputs)
    assert gate_of(gate2).reached.wait(60)
    (child,) = [e.id for e in host.executions.list() if e.parent_id == ident]
    _cancel(host, tmp_path, child, where)
    gate.opened.set()
    _until("taskx cancelled", lambda: _task_states(host, ident).get("taskx", ("",))[0]
           == "CANCELLED")
    assert _task_states(host, ident)["taskx"] == ("CANCELLED", MSG)
    assert host.executions.get(ident).state == "RUNNING"  # other still holds
    gate_of(gate2).opened.set()
    assert host.executions.follow(ident, timeout=60).state == "CANCELLED"
    host._session.runner().wait_background(60)
    top = host.executions.get(ident)
    assert (top.state, top.state_info) == ("CANCELLED", "Cancelled tasks: taskx")
    return ident


@WHERE
def test_cancel_child_workflow_lets_the_other_branches_end(host: Host, tmp_path: Path,
                                                           where: str) -> None:
    """Mistral's parent of a cancelled sub-workflow: the task reads CANCELLED with the
    child's message as soon as the child ended and fires nothing (not even
    ``on-complete``); the parent's other branch runs to its end (its ``task(taskx)``
    reads the child's message as ``state_info``), then the parent ends CANCELLED with
    ``Cancelled tasks: taskx``."""
    name = _install(host, tmp_path, SUB.replace("""\
        taskx:
          workflow: subwf log=<% $.log %> gate=<% $.gate %>
""", """\
        taskx:
          workflow: subwf log=<% $.log %> gate=<% $.gate %>
          on-complete: [after_x]
        other:
          action: test.hold gate=<% $.gate2 %>
          on-success: [next]
        next:
          action: test.record path=<% $.log %> value=<% task(taskx).state_info %>
        after_x:
          action: test.record path=<% $.log %> value="after_x"
""").replace("input: [log, gate]\n      tasks:\n        taskx", "input: [log, gate, gate2]\n"
             "      tasks:\n        taskx", 1))
    log = tmp_path / "log"
    ident = cancel_child_then_end(host, tmp_path, f"{name}.wf", where, log=str(log))
    assert {n: s for n, (s, _info) in _task_states(host, ident).items()} == {
        "taskx": "CANCELLED", "other": "SUCCESS", "next": "SUCCESS"}
    assert _effects(log) == [f"do {MSG}"]
    assert host.executions.resume(ident).state == "CANCELLED"
    assert _effects(log) == [f"do {MSG}"]
