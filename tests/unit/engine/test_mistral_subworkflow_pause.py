"""Conformance with Mistral's engine tests (issue 26): pause and resume between a
workflow and its sub-workflows.

Each test ports the workflow and the asserted outcome of a Mistral test (its
docstring names it: mistral/tests/unit/engine/test_subworkflows_pause_resume.py
unless said), run on the real engine with the executions database: a sub-workflow
that pauses (its ``pause`` command, or a pause asked through the Python API) pauses
its parent, whose task reads PAUSED (Mistral's ``await_task_paused``); pausing the
parent pauses its running children; resuming the parent, or the child, resumes
both; a child that fails once resumed fails its parent's task as any failed child
does.

Difference kept, asserted where it shows: a failed workflow reverts what its
completed tasks did (it reads ERROR as Mistral's; its undo: ``reverted``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host, until
from tripleo_flow import exceptions
from tripleo_flow.engine.store.executions import Execution


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    # A test that failed may leave async actions waiting: completed, its runs can end.
    for execution in host.executions.list():
        for task in host.tasks.list(execution.id):
            if task.waiting:
                try:
                    host.tasks.complete(execution.id, task.name, "ERROR", "the test ended")
                except exceptions.TripleoFlowError:
                    pass
    host._session.close_workflows()


def _install(host: Host, tmp_path: Path, text: str) -> str:
    """Install a workbook of ``text``'s workflows; its name (``NAME.wf1``...)."""
    name = f"pause_{len(host.workbooks.list())}"
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n"
                    + textwrap.indent(textwrap.dedent(text), "  "))
    host.workbooks.create(path)
    return name


def _state(host: Host, execution_id: str, state: str) -> Execution:
    return until(f"{execution_id} {state} (now {host.executions.get(execution_id).state})",
                 lambda: (e := host.executions.get(execution_id)).state == state and e)


def _child(host: Host, parent_id: str, workflow: str) -> Execution:
    return until(f"a child {workflow} of {parent_id}", lambda: next(
        (e for e in host.executions.list()
         if e.parent_id == parent_id and e.workflow.endswith("." + workflow)), None))


def _waits(host: Host, execution_id: str, task: str) -> None:
    until(f"{task} of {execution_id} waiting for its client", lambda: any(
        t.name == task and t.waiting for t in host.tasks.list(execution_id)))


def _tasks(host: Host, execution_id: str) -> dict[str, str]:
    return {t.name: t.state for t in host.tasks.list(execution_id)}


def _ended(host: Host, execution_id: str) -> Execution:
    execution = until(f"the end of {execution_id}", lambda: (
        e := host.executions.get(execution_id)).finished_at is not None and e)
    host._session.runner().wait_background(10)
    return execution


CASCADE = """
wf1:
  tasks:
    task1:
      workflow: wf2
      on-success:
        - task3
    task2:
      workflow: wf3
      on-success:
        - task3
    task3:
      join: all
      action: std.noop
""" + "".join(f"""
{name}:
  tasks:
    task1:
      action: std.async_noop
      on-success:
        - task2
    task2:
      action: std.noop
""" for name in ("wf2", "wf3"))  # Mistral's two identical children


def _cascade(host: Host, tmp_path: Path) -> tuple[str, str, str]:
    """Start CASCADE's wf1; its id and its children's (wf2, wf3) once both wait."""
    name = _install(host, tmp_path, CASCADE)
    wf1 = host.executions.create(f"{name}.wf1", {}, wait=False).id
    wf2, wf3 = _child(host, wf1, "wf2").id, _child(host, wf1, "wf3").id
    _waits(host, wf2, "task1")
    _waits(host, wf3, "task1")
    assert host.executions.get(wf1).state == "RUNNING"
    assert _tasks(host, wf1) == {"task1": "RUNNING", "task2": "RUNNING"}
    assert _tasks(host, wf2) == _tasks(host, wf3) == {"task1": "RUNNING"}
    return wf1, wf2, wf3


def _finish_cascade(host: Host, wf1: str, wf2: str, wf3: str) -> None:
    """Complete both children's async task1: the three executions end SUCCESS."""
    _waits(host, wf2, "task1")
    _waits(host, wf3, "task1")
    host.tasks.complete(wf2, "task1", "SUCCESS", {"result": "foobar"})
    host.tasks.complete(wf3, "task1", "SUCCESS", {"result": "foobar"})
    assert _ended(host, wf1).state == "SUCCESS"
    for child in (wf2, wf3):
        assert host.executions.get(child).state == "SUCCESS"
        assert _tasks(host, child) == {"task1": "SUCCESS", "task2": "SUCCESS"}
    assert _tasks(host, wf1) == {"task1": "SUCCESS", "task2": "SUCCESS", "task3": "SUCCESS"}


def test_pause_resume_cascade_down_to_subworkflow(host: Host, tmp_path: Path) -> None:
    """test_pause_resume_cascade_down_to_subworkflow: pausing wf1 pauses wf2 and wf3
    (their async task1 stays RUNNING); resuming wf1 resumes them; once their actions
    are completed, all three end SUCCESS with every task SUCCESS."""
    wf1, wf2, wf3 = _cascade(host, tmp_path)
    host.executions.pause(wf1)
    _state(host, wf1, "PAUSED")
    assert host.executions.get(wf2).state == host.executions.get(wf3).state == "PAUSED"
    assert _tasks(host, wf2) == _tasks(host, wf3) == {"task1": "RUNNING"}
    # Task that were creating subwf inherit the wf state (Mistral's words).
    assert _tasks(host, wf1) == {"task1": "PAUSED", "task2": "PAUSED"}
    host.executions.resume(wf1, wait=False)
    _state(host, wf1, "RUNNING")
    _state(host, wf2, "RUNNING")
    _state(host, wf3, "RUNNING")
    _finish_cascade(host, wf1, wf2, wf3)


def test_pause_resume_cascade_up_from_subworkflow(host: Host, tmp_path: Path) -> None:
    """test_pause_resume_cascade_up_from_subworkflow: pausing wf2 (a child) pauses its
    parent wf1 and, through it, wf3; resuming wf2 resumes wf1 and wf3; all end
    SUCCESS."""
    wf1, wf2, wf3 = _cascade(host, tmp_path)
    host.executions.pause(wf2)
    _state(host, wf2, "PAUSED")
    _state(host, wf1, "PAUSED")
    _state(host, wf3, "PAUSED")
    # Readers show the family PAUSED at once; the pause spreads up and down in the
    # background (pausing): the tasks are read, and the resume asked, once it settled.
    for ident in (wf1, wf2, wf3):
        until(f"{ident} paused for good", lambda i=ident: not host.executions.get(i).pausing)
    assert _tasks(host, wf1) == {"task1": "PAUSED", "task2": "PAUSED"}
    host.executions.resume(wf2, wait=False)
    _state(host, wf1, "RUNNING")
    _state(host, wf2, "RUNNING")
    _state(host, wf3, "RUNNING")
    _finish_cascade(host, wf1, wf2, wf3)


PAUSING_CHILD = """
wf:
  input: [name]
  output:
    greeting: <% $.greeting %>
    after: <% $.after %>
  tasks:
    call:
      workflow: sub name=<% $.name %>
      publish:
        greeting: <% task().result.greeting %>
      on-success:
        - after
    after:
      action: std.echo output="after the child"
      publish:
        after: <% task().result %>
sub:
  input: [name]
  output:
    greeting: <% $.greeting %>
  tasks:
    hello:
      action: std.echo output=<% 'Hello, ' + $.name %>
      publish:
        greeting: <% task().result %>
      on-success:
        - pause
        - bye
    bye:
      action: std.noop
"""


def _paused_by_its_child(host: Host, tmp_path: Path) -> tuple[str, str]:
    name = _install(host, tmp_path, PAUSING_CHILD)
    parent = host.executions.create(f"{name}.wf", {"name": "John"})
    child = _child(host, parent.id, "sub")
    assert parent.state == "PAUSED", parent
    assert host.executions.get(child.id).state == "PAUSED"
    tasks = _tasks(host, child.id)  # a graph lists 'bye' PENDING; Mistral: not yet
    assert tasks["hello"] == "SUCCESS" and tasks.get("bye", "PENDING") == "PENDING"
    assert _tasks(host, parent.id) == {"call": "PAUSED"}
    return parent.id, child.id


def _ended_with_the_child(host: Host, parent: Execution, child: str) -> None:
    assert parent.state == "SUCCESS", parent
    assert parent.output == {"greeting": "Hello, John", "after": "after the child"}
    record = host.executions.get(child)
    assert (record.state, record.output) == ("SUCCESS", {"greeting": "Hello, John"})
    assert _tasks(host, child) == {"hello": "SUCCESS", "bye": "SUCCESS"}
    assert _tasks(host, parent.id) == {"call": "SUCCESS", "after": "SUCCESS"}
    assert [e.id for e in host.executions.list() if e.parent_id == parent.id] == [child]


def test_a_pause_command_in_the_child_pauses_the_parent(host: Host, tmp_path: Path) -> None:
    """test_pause_resume_cascade_up_from_subworkflow with the child paused by its own
    ``pause`` command (test_direct_workflow.py's pause transitions): the parent is
    PAUSED, its task PAUSED; resuming the parent resumes the child from after the
    command (``bye``), then the parent goes on; the outputs are the child's."""
    parent_id, child_id = _paused_by_its_child(host, tmp_path)
    parent = host.executions.resume(parent_id)
    _ended_with_the_child(host, host.executions.get(parent.id), child_id)


def test_resuming_the_paused_child_continues_the_parent(host: Host, tmp_path: Path) -> None:
    """Resuming the child (not its parent) resumes the parent too, as Mistral does:
    both end SUCCESS with the child's output published by the parent."""
    parent_id, child_id = _paused_by_its_child(host, tmp_path)
    returned = host.executions.resume(child_id)
    assert returned.id == child_id and returned.state == "SUCCESS"
    _ended_with_the_child(host, host.executions.get(parent_id), child_id)


def test_a_task_not_safe_to_rerun_goes_on_with_its_paused_child(host: Host,
                                                                tmp_path: Path) -> None:
    """``safe-rerun: false`` refuses to run again a task a crash interrupted; a task
    whose child paused was not interrupted: resumed, it goes on with its child."""
    name = _install(host, tmp_path, PAUSING_CHILD.replace(
        "      workflow: sub name=<% $.name %>\n",
        "      workflow: sub name=<% $.name %>\n      safe-rerun: false\n"))
    parent = host.executions.create(f"{name}.wf", {"name": "John"})
    assert parent.state == "PAUSED"
    child = _child(host, parent.id, "sub").id
    _ended_with_the_child(host, host.executions.resume(parent.id), child)


def test_a_child_that_fails_once_resumed_fails_the_parent_task(host: Host,
                                                               tmp_path: Path) -> None:
    """test_pause_resume_cascade_up_from_subworkflow's error case: the child, paused then
    resumed, fails; the parent's task is ERROR and its on-error runs (here), as for
    any failed sub-workflow."""
    name = _install(host, tmp_path, """
        wf:
          output:
            handled: <% $.handled %>
          tasks:
            call:
              workflow: sub
              on-error:
                - handle
            handle:
              action: std.echo output="handled"
              publish:
                handled: <% task().result %>
        sub:
          tasks:
            first:
              action: std.noop
              on-success:
                - pause
                - broken
            broken:
              action: std.fail
    """)
    parent = host.executions.create(f"{name}.wf", {})
    assert parent.state == "PAUSED"
    child = _child(host, parent.id, "sub")
    assert host.executions.get(child.id).state == "PAUSED"
    ended = host.executions.resume(parent.id)
    assert ended.state == "SUCCESS" and ended.output == {"handled": "handled"}
    assert host.executions.get(child.id).state == "ERROR"  # Mistral: ERROR
    tasks = {t.name: t for t in host.tasks.list(parent.id)}
    # The task's error is the child's, as Mistral's task state_info is its sub-workflow's.
    failed = host.executions.get(child.id).error
    assert tasks["call"].state == "ERROR" and failed and tasks["call"].error == failed
    assert tasks["handle"].state == "SUCCESS"


def test_with_items_over_sub_workflows_one_child_pauses(host: Host, tmp_path: Path) -> None:
    """test_pause_resume_cascade_up_from_with_items_subworkflow: a with-items task runs
    one child per item; the child of item 2 pauses: the others end, the parent is
    PAUSED with its task PAUSED (those still running are paused with it); resumed,
    the paused children go on and the task's
    result is every child's output in item order."""
    name = _install(host, tmp_path, """
        wf:
          input: [numbers]
          output:
            result: <% $.result %>
          tasks:
            task1:
              with-items: n in <% $.numbers %>
              workflow: sub n=<% $.n %>
              publish:
                result: <% task().result %>
        sub:
          input: [n]
          output:
            v: <% $.v %>
          tasks:
            t1:
              action: std.echo output=<% $.n * 10 %>
              publish:
                v: <% task().result %>
              on-success:
                - pause: <% $.n = 2 %>
                - t2
            t2:
              action: std.noop
    """)
    parent = host.executions.create(f"{name}.wf", {"numbers": [1, 2, 3]})
    assert parent.state == "PAUSED", parent
    assert _tasks(host, parent.id) == {"task1": "PAUSED"}
    store = host._session.runner().store
    by_item = {(store.flow_detail(e.id, lazy=True).meta or {}).get("item"): e.id
               for e in host.executions.list() if e.parent_id == parent.id}
    assert sorted(by_item) == [0, 1, 2]
    assert host.executions.get(by_item[1]).state == "PAUSED"
    # The others ended, or were paused with their parent while running (Mistral too).
    assert {host.executions.get(by_item[i]).state for i in (0, 2)} <= {"SUCCESS", "PAUSED"}
    children = [by_item[i] for i in (0, 1, 2)]
    ended = host.executions.resume(parent.id)
    assert ended.state == "SUCCESS", ended
    assert ended.output == {"result": [{"v": 10}, {"v": 20}, {"v": 30}]}
    after = [host.executions.get(ident) for ident in children]
    assert [e.state for e in after] == ["SUCCESS"] * 3
    assert len({e.id for e in host.executions.list() if e.parent_id == parent.id}) == 3
    for child in after:
        assert _tasks(host, child.id) == {"t1": "SUCCESS", "t2": "SUCCESS"}


def test_pausing_an_execution_not_running_here_is_refused(host: Host,
                                                          tmp_path: Path) -> None:
    """As Mistral: an ended execution cannot be paused; nothing changes (one another
    process runs gets a pause request: tests/functional/engine/test_pause_requests.py)."""
    name = _install(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.noop
    """)
    done = host.executions.create(f"{name}.wf", {})
    with pytest.raises(exceptions.Conflict, match=r"has already ended \(SUCCESS\)"):
        host.executions.pause(done.id)
    assert host.executions.get(done.id).state == "SUCCESS"
    with pytest.raises(exceptions.ExecutionNotFound):
        host.executions.pause("no-such-execution")
