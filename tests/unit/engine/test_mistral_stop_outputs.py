"""A stopped execution's output and sub-workflows, as Mistral's ``stop_workflow``
(issue 26).

Mistral's ``Workflow.stop`` (``mistral/engine/workflows.py``) ends a running
execution with SUCCESS through ``_succeed_workflow`` (the workflow's ``output``
evaluated over ``_get_final_context()``) and with ERROR through ``_fail_workflow``
(``{"result": message}`` with ``output-on-error`` evaluated over the same context
merged over it, ``merge_dicts``); the final context of a direct workflow is the merged
outbound context of the task executions that completed and fired no transition
(``DirectWorkflowController.evaluate_workflow_final_context``), the inputs and env
visible beside it (``data_flow.evaluate_workflow_output``'s ``ContextView``); without
the clause the output is that context.  ``workflow_handler.stop_workflow`` stops the
sub-workflow executions that have not completed only when the state is CANCELLED:
after SUCCESS or ERROR they run on, and their end completes the parent's task
(``task_handler._on_action_complete``) while ``_check_affected_tasks`` and
``continue_workflow`` start nothing in the completed parent.

The held task is Mistral's ``std.async_noop`` (RUNNING until a client completes it),
so the other branch has ended when the execution is stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host, until
from tests.pause_helpers import _effects
from tests.unit.engine.test_mistral_async_actions import _start
from tests.unit.engine.test_mistral_async_actions import host as host  # the fixture
from tests.unit.engine.test_mistral_cancel import (
    SUB,
    _ended,
    _family,
    _install,
    _task_states,
)
from tests.unit.engine.test_mistral_cancel import _start as _held
from tests.unit.engine.test_mistral_stop import _stop
from tripleo_flow import exceptions

#: ``ended`` completes and fires nothing (an end task of Mistral's), ``started`` fires
#: ``held``, which waits for a client, then ``after``.
BRANCHES = """\
    workflows:
      wf:
        input: [who]
        {clauses}
        tasks:
          ended:
            action: std.echo output="ended"
            publish:
              x: <% task().result %>
          started:
            action: std.echo output="started"
            publish:
              y: <% task().result %>
            on-success: [held]
          held:
            action: std.async_noop
            publish:
              z: 1
            on-complete: [after]
          after:
            {join}action: std.echo output="after"
    """


def _stopped(host: Host, tmp_path: Path, clauses: str, state: str,
             message: str | None = "Stopped", join: bool = False) -> tuple[str, Any]:
    """Run :data:`BRANCHES` with ``clauses`` (``join``: on the state machine) until
    ``held`` waits and ``ended`` ended, stop it in ``state``: its id and record as the
    stop gave it."""
    text = BRANCHES.format(clauses=clauses,
                           join="join: all\n            " if join else "")
    ident = _start(host, tmp_path, text, who="me")
    until("held waits, ended ended", lambda: (lambda found: found.get("ended") == (
        "SUCCESS") and found.get("held") == "RUNNING")(
        {t.name: t.state for t in host.tasks.list(ident)}))
    return ident, host.executions.stop(ident, state, message)


def _finished(host: Host, ident: str, complete: bool = False) -> Any:
    """The record of ``ident`` once its end is recorded (``complete``: once ``held``
    was completed)."""
    if complete:
        host.tasks.complete(ident, "held", "SUCCESS", "late")
    return until("its end recorded", lambda: (lambda done: done if done.finished_at
                                              else None)(host.executions.get(ident)))


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
def test_success_evaluates_the_output_over_the_final_context(host: Host, tmp_path: Path,
                                                             join: bool) -> None:
    """Mistral's ``_succeed_workflow`` from ``Workflow.stop(SUCCESS)``: ``output`` over
    the final context then: ``ended``'s published ``x`` (an end task); the inputs and
    ``task()`` visible (null for ``held``, not completed).  The output stays that once
    its end is recorded; ``after`` never runs."""
    clauses = ("output:\n          x: <% $.x %>\n          who: <% $.who %>\n"
               "          last: <% task(ended).result %>\n"
               "          held: <% task(held) %>")
    ident, asked = _stopped(host, tmp_path, clauses, "SUCCESS", join=join)
    want = {"x": "ended", "who": "me", "last": "ended", "held": None}
    assert (asked.state, asked.state_info, asked.output) == ("SUCCESS", "Stopped", want)
    done = _finished(host, ident)
    assert (done.state, done.state_info, done.output) == ("SUCCESS", "Stopped", want)
    assert "after" not in {t.name for t in host.tasks.list(ident)}


def test_success_without_an_output_gives_the_final_context(host: Host,
                                                          tmp_path: Path) -> None:
    """``evaluate_workflow_output``'s ``output or ctx``: no ``output``, the final context:
    ``ended``'s outbound context (the inputs and its ``x``), not ``started``'s ``y``
    (it fired ``held``) nor ``held``'s ``z`` (still running)."""
    _, asked = _stopped(host, tmp_path, "", "SUCCESS")
    assert asked.output == {"who": "me", "x": "ended"}


def test_success_whose_output_fails_changes_nothing(host: Host, tmp_path: Path) -> None:
    """An ``output`` that cannot be evaluated: Mistral's ``stop_workflow`` lets the error
    out of its transaction, nothing changes (ours: invalid input, 400); the execution
    runs on to its end, where the same output fails it as any run's end does."""
    clauses = "output:\n          bad: <% $.who.nothing.here %>"
    with pytest.raises(exceptions.InvalidInput, match="output cannot be evaluated"):
        _stopped(host, tmp_path, clauses, "SUCCESS")
    (ident,) = [e.id for e in host.executions.list()]
    assert host.executions.get(ident).state == "RUNNING"
    assert _finished(host, ident, complete=True).state != "SUCCESS"
    assert {t.name: t.state for t in host.tasks.list(ident)}["after"] == "SUCCESS"


def test_error_merges_output_on_error(host: Host, tmp_path: Path) -> None:
    """Mistral's ``_fail_workflow`` from ``Workflow.stop(ERROR)``: ``{"result": message}``
    with ``output-on-error`` over the final context merged over it (a ``result`` of
    its own wins, ``merge_dicts``)."""
    clauses = ("output-on-error:\n          x: <% $.x %>\n          who: <% $.who %>\n"
               "          result: <% 'overridden' %>")
    ident, asked = _stopped(host, tmp_path, clauses, "ERROR", "Failure")
    want = {"result": "overridden", "x": "ended", "who": "me"}
    assert (asked.state, asked.error, asked.output) == ("ERROR", "Failure", want)
    done = _finished(host, ident)
    assert (done.state, done.state_info, done.output) == ("ERROR", "Failure", want)


def test_error_without_output_on_error_merges_the_final_context(host: Host,
                                                                tmp_path: Path) -> None:
    """No ``output-on-error``: the final context itself merged over the result."""
    _, asked = _stopped(host, tmp_path, "", "ERROR", "Failure")
    assert asked.output == {"result": "Failure", "who": "me", "x": "ended"}


def test_error_whose_output_on_error_fails(host: Host, tmp_path: Path) -> None:
    """An ``output-on-error`` that cannot be evaluated: the execution is still stopped
    ERROR (Mistral's ``_fail_workflow`` catches it), its output's result names the
    message and why (Mistral's state_info does)."""
    clauses = "output-on-error:\n          bad: <% $.who.nothing.here %>"
    _, asked = _stopped(host, tmp_path, clauses, "ERROR", "Failure")
    assert (asked.state, asked.error) == ("ERROR", "Failure")
    assert list(asked.output) == ["result"]
    assert asked.output["result"].startswith(
        "Failure (output-on-error could not be evaluated")


@pytest.mark.parametrize("where", ["here", "elsewhere"])
@pytest.mark.parametrize("state", ["ERROR", "SUCCESS"])
def test_a_stopped_parent_lets_its_sub_workflow_run_on(host: Host, tmp_path: Path,
                                                       state: str, where: str) -> None:
    """Mistral's ``workflow_handler.stop_workflow`` stops sub-workflows only for
    CANCELLED: the parent stopped with ERROR or SUCCESS reads that state at once,
    its running sub-workflow runs on to its end (its task2 runs, it ends SUCCESS),
    which completes the parent's task (``task_handler._on_action_complete``) and starts
    nothing more in it; the parent keeps the state and message of the stop.  (A
    CANCELLED stop cancels it: ``test_mistral_cancel``'s
    ``test_cancel_parent_workflow``.)  Asked here or of another process (``where``),
    whose request the running parent reads and its child does not."""
    parent, child, gate, log = _family(host, tmp_path)
    asked = _stop(host, tmp_path, parent, state, "Stopped", where)
    assert asked.state == state
    assert host.executions.get(child).state == "RUNNING"
    _ended(host, gate)
    top = host.executions.get(parent)
    assert (top.state, top.state_info) == (asked.state, "Stopped")
    assert top.finished_at is not None
    sub = host.executions.get(child)
    assert (sub.state, sub.state_info) == ("SUCCESS", None)
    assert _task_states(host, child) == {"task1": ("SUCCESS", None),
                                         "task2": ("SUCCESS", None)}
    assert _task_states(host, parent)["taskx"][0] == "SUCCESS"
    assert _effects(log) == ["do task2"]


def test_a_sub_workflow_stopped_with_success_gives_its_output_to_its_task(
        host: Host, tmp_path: Path) -> None:
    """A sub-workflow stopped with SUCCESS: its ``output`` evaluated then is its parent
    task's result (Mistral's ``_send_result_to_parent_workflow`` sends none for SUCCESS:
    the task reads the sub-workflow execution's saved output); the parent runs on to
    SUCCESS."""
    text = SUB.replace("      input: [log, gate]\n      tasks:\n        task1:",
                       "      input: [log, gate]\n      output:\n"
                       "        stopped: <% $.log %>\n      tasks:\n        task1:")
    assert text != SUB
    name = _install(host, tmp_path, text)
    log = tmp_path / "log"
    ident, gate = _held(host, tmp_path, f"{name}.wf", log=str(log))
    (child,) = [e.id for e in host.executions.list() if e.parent_id == ident]
    assert host.executions.stop(child, "SUCCESS").output == {"stopped": str(log)}
    _ended(host, gate)
    assert host.executions.follow(ident, timeout=60).state == "SUCCESS"
    (taskx,) = host.tasks.list(ident)
    assert (taskx.name, taskx.state, taskx.result) == ("taskx", "SUCCESS",
                                                      {"stopped": str(log)})
    assert _effects(log) == []


@pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
@pytest.mark.parametrize(("stop", "completion", "task"), [
    ("SUCCESS", "SUCCESS", "SUCCESS"), ("ERROR", "ERROR", "ERROR")])
def test_a_completion_after_the_stop_is_recorded(host: Host, tmp_path: Path, join: bool,
                                                 stop: str, completion: str,
                                                 task: str) -> None:
    """Mistral's ``on_action_complete`` after ``stop_workflow``: the stop leaves ``held``
    and its action execution RUNNING; a client's completion then is recorded (the action
    execution takes its state and output, ``Action.complete``) and completes the task
    (``RegularTask.on_action_complete``: its state, its result the output, the error
    as its ``state_info``); the workflow keeps the state and output the stop gave it and
    ``after`` never runs (``continue_workflow`` of a completed workflow)."""
    ident, _asked = _stopped(host, tmp_path, "", stop, join=join)
    before = _finished(host, ident)
    assert {t.name: t.state for t in host.tasks.list(ident)}["held"] == "RUNNING"
    done = host.tasks.complete(ident, "held", completion, "late")
    assert (done.state, done.output) == (completion, "late")
    held = {t.name: t for t in host.tasks.list(ident)}["held"]
    assert (held.state, held.result, held.waiting) == (task, "late", [])
    assert held.state_info == (None if task == "SUCCESS" else "late")
    # Mistral's ``Task.complete`` publishes into the task execution (a SUCCESS
    # completion: ``publish``; an ERROR one: ``publish-on-error``, none here); the
    # workflow's output is not changed by it.
    assert held.published == ({"z": 1} if task == "SUCCESS" else {})
    after = host.executions.get(ident)
    assert (after.state, after.output) == (before.state, before.output)
    assert "after" not in {t.name for t in host.tasks.list(ident)}
    with pytest.raises(exceptions.Conflict, match="does not wait"):
        host.tasks.complete(ident, "held", "SUCCESS", "again")  # completed once only
