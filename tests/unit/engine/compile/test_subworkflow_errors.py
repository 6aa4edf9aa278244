"""A failed child execution fails its parent's task with the child's error: its kind,
message and next steps (:mod:`tripleo_flow.engine.compile.child_errors`).

Mistral gives the parent's task the failed sub-workflow's ``state_info`` as its own
(mistral/engine/workflows.py ``_send_result_to_parent_workflow``; test_subworkflows.py
``test_subworkflow_yaql_error``: the child's error is "bubbled up" to the parent).
Ours keeps the error's kind too, so a deploy whose steps run in a sub-workflow fails
with the error its action raised (its CLI exit code and HTTP status, its next steps),
on both engines (a ``workflow:`` task with ``timeout`` runs its child apart in a
graph; a join makes the parent run on the state machine), with ``with-items`` over
children, and when the child ended before its parent's task ran again (another process);
when the process running both is killed (``kill -9``) as the child fails:
``tests/functional/engine/test_subworkflow_errors_killed.py``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tests.unit.engine.test_mistral_reverse_subworkflows import host as host  # fixture
from tripleo_flow import exceptions
from tripleo_flow.engine.compile import subworkflow

STEPS = [{"command": "tripleo-flow plan create nowhere --templates DIR",
          "request": "POST /v1/plans?name=nowhere"}]
#: Start tasks that make the parent run on the state machine (a join).
MACHINE = """
      go:
        on-success: [call, side]
      side:
        on-success: [joined]
      joined:
        join: 1"""
WORKBOOK = """\
version: '2.0'
name: kinds
workflows:
  wf:
    input: [plans]
    tasks:MACHINE
      call:
        workflow: failing
        CALL
  failing:
    input:
      - plan: nowhere
    tasks:
      inner:
        action: test.missing_plan plan=<% $.plan %>
"""


def _workbook(machine: bool, call: str = "timeout: 60") -> str:
    """Workflow ``wf`` whose task ``call`` (with the policies ``call``, lines of its
    own indented by 8) runs ``failing``, whose one task fails for a missing plan."""
    return WORKBOOK.replace("MACHINE", MACHINE if machine else "").replace("CALL", call)


def _install(host: Host, tmp_path: Path, text: str) -> None:
    path = tmp_path / "kinds.yaml"
    path.write_text(text)
    host.workbooks.create(path)


def _parent_and_child(host: Host) -> tuple[Any, Any]:
    executions = host.executions.list()
    [parent] = [e for e in executions if e.parent_id is None]
    children = [e for e in executions if e.parent_id == parent.id]
    return host.executions.get(parent.id), children


def _check_kept(host: Host, cause: BaseException | None, message: str) -> None:
    """The parent's task, its execution's record and the raised error all carry the
    child's error: a missing plan (exit 3, 404) and its next step."""
    assert isinstance(cause, exceptions.PlanNotFound), repr(cause)
    assert exceptions.exit_code(cause) == 3 and exceptions.http_status(cause) == 404
    assert str(cause) == message
    assert [h.as_json() for h in cause.hints] == STEPS
    parent, _children = _parent_and_child(host)
    assert (parent.state, parent.failed_task) == ("ERROR", "call")
    assert parent.error == message and parent.hints == STEPS
    assert "POST /v1/plans?name=nowhere" in (parent.error_api or "")
    call = next(t for t in host.tasks.list(parent.id) if t.name == "call")
    assert call.error == message  # Mistral: the task's state_info is the child's


@pytest.mark.parametrize("machine", [False, True], ids=["graph", "state-machine"])
def test_a_failed_child_fails_its_task_with_its_kind(host: Host, tmp_path: Path,
                                                     machine: bool) -> None:
    _install(host, tmp_path, _workbook(machine))
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        host.executions.create("kinds.wf", {"plans": []})
    _parent, [child] = _parent_and_child(host)
    assert child.state == "ERROR" and child.hints == STEPS
    # The parent task's error is the child's, as Mistral's state_info.
    _check_kept(host, failed.value.__cause__, child.error or "")


@pytest.mark.parametrize("machine", [False, True], ids=["graph", "state-machine"])
def test_with_items_over_children_keeps_the_failed_child_s_kind(host: Host, tmp_path: Path,
                                                                machine: bool) -> None:
    _install(host, tmp_path, _workbook(machine, "with-items: plan in <% $.plans %>\n"
                                                "        input: {plan: <% $.plan %>}"))
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        host.executions.create("kinds.wf", {"plans": ["nowhere"]})
    _parent, [child] = _parent_and_child(host)
    message = f"task 'call', one of 1 items failed: {child.error}"
    _check_kept(host, failed.value.__cause__, message)


def test_a_child_that_fails_by_fail_lets_its_parent_s_task_retry(host: Host,
                                                                 tmp_path: Path) -> None:
    """A ``fail`` command steers its own workflow only: the parent's task, failed by
    it, is a plain task failure its ``retry`` runs again (Mistral retries it)."""
    _install(host, tmp_path, _workbook(False, "retry: {count: 1}").replace(
        "action: test.missing_plan plan=<% $.plan %>",
        "action: std.noop\n        on-success: [fail]"))
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        host.executions.create("kinds.wf", {"plans": []})
    assert type(failed.value.__cause__) is exceptions.TaskFailed
    _parent, children = _parent_and_child(host)
    assert len(children) == 2  # both attempts ran a child


def test_an_action_s_error_data_stays_with_the_child_s_task(host: Host,
                                                           tmp_path: Path) -> None:
    """``task().result`` of the parent's task reads the child's error message (Mistral:
    the sub-workflow's state_info), not the error data of the child's action."""
    _install(host, tmp_path, textwrap.dedent("""\
        version: '2.0'
        name: kinds
        workflows:
          wf:
            input: [plans]
            output:
              seen: <% $.seen %>
            tasks:
              call:
                workflow: failing
                timeout: 60
                on-error: [handle]
              handle:
                action: std.noop
                publish:
                  seen: <% task(call).result %>
          failing:
            tasks:
              inner:
                action: std.fail error_data="disk full"
        """))
    execution = host.executions.create("kinds.wf", {"plans": []})
    _parent, [child] = _parent_and_child(host)
    assert child.error == "std.fail was called: disk full"
    assert host.executions.get(execution.id).output == {"seen": child.error}


@pytest.mark.parametrize("machine", [False, True], ids=["graph", "state-machine"])
def test_a_child_that_ended_before_its_task_ran_again(host: Host, tmp_path: Path,
                                                      machine: bool) -> None:
    """The child execution ended (FAILED) before its parent's task ran (as when it ran
    in another process before this one resumed the parent): the task's error is
    rebuilt from the child's record alone."""
    _install(host, tmp_path, _workbook(machine))
    runner = host._session.runner()
    parent = runner.start("kinds.wf", {"plans": []})
    ident = subworkflow.child_id(parent.uuid, "call", 1, None)
    child = runner.start("kinds.failing", {}, execution_id=ident, parent={
        "parent_id": parent.uuid, "parent_task": "call", "attempt": 1, "item": None,
        "depth": 1})
    with pytest.raises(exceptions.WorkflowFailed):
        runner.execute(child)
    assert host.executions.get(ident).state == "ERROR"
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        runner.execute(runner.store.flow_detail(parent.uuid))
    assert [e.id for e in host.executions.list() if e.parent_id == parent.uuid] == [ident]
    _check_kept(host, failed.value.__cause__, host.executions.get(ident).error or "")
