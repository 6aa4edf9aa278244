"""Conformance with Mistral's engine tests (issue 26): what an error leaves behind.

Each test runs, on the real engine with the executions database, the workflow of the
Mistral test its docstring names (mistral/tests/unit/engine/...) and asserts its
outcome, on the compiled graph and on the state machine where both can run it: the
tasks listed before ``fail`` in a transition list start, ``task().result`` after an
error is the action's error data, a sub-workflow that ends ERROR by ``fail`` fails
its task (whose ``on-error`` decides), and an unhandled error lets the other
branches finish first.  Deliberate difference kept: a failed workflow reverts what
its completed tasks did (states read as Mistral's; the undo: ``reverted``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_conformance import FAILED, TASK_FAILED, UNDONE, Run
from tripleo_flow import exceptions
from tripleo_flow.engine.compile import compiler
from tripleo_flow.engine.lang.workbook_model import parse_workbook
from tripleo_flow.http import media


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


#: A start task that makes a workflow run on the state machine (a join).
MACHINE = """
            go:
              on-success: [task1, side]
            side:
              on-success: [joined]
            joined:
              join: 1
"""


def _on(engine: str, text: str) -> str:
    """``text`` (workflow ``wf`` first) as it runs on ``engine``."""
    return text.replace("          tasks:\n", "          tasks:\n" + MACHINE, 1) \
        if engine == "machine" else text


@pytest.mark.parametrize("commands, started", [
    ("[task2, fail]", {"task1": UNDONE, "task2": UNDONE}),
    ("[fail, task2]", {"task1": UNDONE}),  # a graph: task1 read ERROR before
], ids=["test_fail_second", "test_fail_first"])
def test_tasks_listed_before_fail_start(host: Host, tmp_path: Path, commands: str,
                                        started: dict[str, str]) -> None:
    """Ported from test_commands.py: OrderEngineCommandsTest.test_fail_second and
    test_fail_first: task2, listed before ``fail``, starts and succeeds; listed after
    it, never; the workflow fails and task1, which took ``fail``, succeeded (ours then
    reverts what ran).  Without a loop or a join this workflow used to run as one
    graph, where task2 never started; with ``[fail, task2]`` the graph's task1 read
    ERROR (its atom failed to stop the flow): any workflow that may take ``fail`` runs
    on the state machine now (:func:`~tripleo_flow.engine.compile.compiler.takes_fail`)."""
    run = Run(host, tmp_path, f"""
        wf:
          tasks:
            task1:
              action: std.echo output='1'
              on-complete: {commands}
            task2:
              action: std.echo output='2'
        """)
    assert run.state == FAILED and run.error is not None
    assert "reached a 'fail' transition" in str(run.error)
    assert run.tasks == started
    assert run.results.get("task2") == ("2" if "task2" in started else None)


@pytest.mark.parametrize("clauses, machine", [
    ({"on-complete": ["task2", "fail"]}, True),
    ({"on-success": ["task2"], "on-complete": ["fail"]}, True),
    ({"on-error": ["task2"], "on-complete": ["fail"]}, True),
    ({"on-complete": ["fail", "task2"]}, False),
    ({"on-success": ["fail"], "on-complete": ["task2"]}, False),
    ({"on-success": ["task2"], "on-error": ["fail"]}, False),
])
def test_which_workflows_run_as_a_state_machine_for_fail(clauses: dict[str, list[str]],
                                                          machine: bool) -> None:
    """A task started before ``fail`` needs the state machine (the graph cannot start
    it once its atom failed); ``fail`` first, or in the other clause, does not."""
    workbook, problems = parse_workbook({"version": "2.0", "name": "wb", "workflows": {
        "wf": {"tasks": {"task1": {"action": "std.noop", **clauses},
                         "task2": {"action": "std.noop"}}}}}, "wb.yaml")
    assert workbook is not None, problems
    workflow = next(iter(workbook.workflows.values()))
    assert compiler.runs_as_state_machine(workflow) is machine
    assert compiler.takes_fail(workflow)  # run as an execution: on the machine whatever


def test_a_start_task_beside_the_one_taking_fail_runs_and_its_successor_never_starts(
        host: Host, tmp_path: Path) -> None:
    """Mistral creates both start tasks at once; ``a``'s ``fail`` fails the workflow
    (``_fail_workflow``) while ``b`` runs, whose completion then starts nothing.  ``a``
    succeeded.  As a graph (before) ``a`` read ERROR, its atom failed to stop the flow."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            a:
              action: std.noop
              on-success: [fail]
            b:
              action: std.sleep seconds=1
              on-success: [c]
            c:
              action: std.noop
        """)
    assert run.state == FAILED and run.error is not None
    assert "task 'a' reached a 'fail' transition" in str(run.error)
    assert run.tasks == {"a": UNDONE, "b": UNDONE}


@pytest.mark.parametrize("engine", ["graph", "machine"])
def test_task_result_after_an_error_is_its_error_data(host: Host, tmp_path: Path,
                                                     engine: str) -> None:
    """Ported from test_error_result.py: test_error_result1 (the conditions of
    ``on-error`` read ``task(task1).result``: the action's error data, a number),
    with Mistral's ``std.fail error_data``; ``task().result`` in the task's own
    ``publish-on-error`` reads it too."""
    run = Run(host, tmp_path, _on(engine, """
        wf:
          output:
            seen: <% $.seen %>
            data: <% $.data %>
          tasks:
            task1:
              action: std.fail
              input:
                error_data: {code: 2, reason: disk full}
              publish-on-error:
                seen: <% task().result %>
              on-error:
                - task2: <% task(task1).result.code = 2 %>
                - task3: <% task(task1).result.code = 3 %>
            task2:
              action: std.noop
              publish:
                data: <% task(task1).result.reason %>
            task3:
              action: std.noop
        """))
    assert run.state == "SUCCESS"
    assert run.output == {"seen": {"code": 2, "reason": "disk full"}, "data": "disk full"}
    assert run.tasks["task1"] == "ERROR" and run.tasks["task2"] == "SUCCESS"
    assert "task3" not in run.tasks
    assert run.results["task1"] == {"code": 2, "reason": "disk full"}


@pytest.mark.parametrize("engine", ["graph", "machine"])
def test_a_sub_workflow_ended_by_fail_fails_its_task(host: Host, tmp_path: Path,
                                                    engine: str) -> None:
    """Mistral's sub-workflows (test_subworkflows.py: test_subworkflow_error: a
    sub-workflow that ends ERROR fails the parent's task) with the sub-workflow
    ended by ``fail`` (test_commands.py: test_fail): the parent's ``on-error``
    handles it, and ``first``, listed before ``fail``, ran."""
    log = tmp_path / "effects.log"
    run = Run(host, tmp_path, _on(engine, """
        wf:
          input: [log]
          output:
            handled: <% $.handled %>
          tasks:
            task1:
              workflow: failing
              input: {log: <% $.log %>}
              on-error: [handler]
              on-success: [never]
            handler:
              action: std.noop
              publish:
                handled: <% task(task1).state %>
            never:
              action: std.noop
        failing:
          input: [log]
          tasks:
            start:
              action: std.noop
              on-success: [first, fail]
            first:
              action: test.record
              input: {path: <% $.log %>, value: first}
        """), log=str(log))
    assert run.state == "SUCCESS"
    assert run.output == {"handled": "ERROR"}
    assert run.tasks["task1"] == "ERROR" and run.tasks["handler"] == "SUCCESS"
    assert log.read_text().splitlines()[0] == "do first"
    assert "never" not in run.tasks


#: A sub-workflow ended by ``fail`` alone in a transition list.
FAIL_ALONE = """
        failing:
          tasks:
            start:
              action: std.noop
              on-success: [fail]
"""


@pytest.mark.parametrize("engine", ["graph", "machine"])
def test_a_sub_workflow_ended_by_fail_alone_fails_its_task(host: Host, tmp_path: Path,
                                                          engine: str) -> None:
    """As above with ``fail`` alone in the sub-workflow's transition list (which
    runs inside its parent's graph): the parent's ``on-error`` still handles it."""
    run = Run(host, tmp_path, _on(engine, """
        wf:
          tasks:
            task1:
              workflow: failing
              on-error: [handler]
              on-success: [never]
            handler:
              action: std.noop
            never:
              action: std.noop
        """ + FAIL_ALONE))
    assert run.state == "SUCCESS"
    assert run.tasks["task1"] == "ERROR" and run.tasks["handler"] == "SUCCESS"
    assert "never" not in run.tasks


def test_a_sub_workflow_ended_by_fail_fails_an_unhandling_parent(host: Host,
                                                                tmp_path: Path) -> None:
    """The same sub-workflow under a task with no ``on-error``: the parent fails."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              workflow: failing
              on-complete: [after]
            after:
              action: std.noop
        """ + FAIL_ALONE)
    assert run.state == FAILED and run.error is not None
    assert "reached a 'fail' transition" in str(run.error)
    assert run.tasks["after"] == UNDONE  # its on-complete ran first, as Mistral's


@pytest.mark.parametrize("engine", ["graph", "machine"])
def test_an_unhandled_error_lets_the_other_branch_finish(host: Host, tmp_path: Path,
                                                        engine: str) -> None:
    """As in test_join.py: test_full_join_with_conditions (task4, ready when another
    task failed the workflow, still runs: Mistral's workflow ends once no task is
    incomplete), in a workflow without a join, which runs as one graph: the slower branch
    beside the failed task goes on to its end, the workflow then fails naming the
    failed task, and (our deliberate difference) what ran is undone, newest first."""
    log = tmp_path / "effects.log"
    run = Run(host, tmp_path, _on(engine, """
        wf:
          input: [log]
          tasks:
            task1:
              on-success: [a1, broken]
            a1:
              action: test.record
              input: {path: <% $.log %>, value: a1}
              on-success: [a2]
            a2:
              action: test.record
              input: {path: <% $.log %>, value: a2}
              wait-before: 0.2
              on-success: [a3]
            a3:
              action: test.record
              input: {path: <% $.log %>, value: a3}
            broken:
              action: std.fail error_data="disk full"
        """), log=str(log))
    assert run.state == FAILED and run.error is not None
    assert run.error.task == "broken" and run.error.reverted
    # the error the task raised (its kind and next steps kept), not a wrapped message
    assert str(run.error.__cause__) == "std.fail was called: disk full"
    assert log.read_text().splitlines() == ["do a1", "do a2", "do a3",
                                            "undo a3", "undo a2", "undo a1"]
    assert run.tasks["broken"] == TASK_FAILED



def test_an_error_in_a_sub_workflow_keeps_its_kind(host: Host, tmp_path: Path) -> None:
    """A sub-workflow's unhandled error that fails the workflow once the other branch
    ended is the error its task raised, as when it stopped the workflow at once."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              on-success: [call, other]
            call:
              workflow: failing
            other:
              action: std.noop
        failing:
          tasks:
            inner:
              action: std.fail error_data="disk full"
        """)
    assert run.state == FAILED and run.error is not None
    assert str(run.error.__cause__) == "std.fail was called: disk full"
    assert run.tasks["other"] == UNDONE


def test_a_pending_error_survives_a_pause(host: Host, tmp_path: Path) -> None:
    """On the state machine, 'broken' failed while the other branch goes on to a task
    that pauses the execution first: once resumed, that branch ends, then the workflow
    fails with the error recorded before the pause."""
    log = tmp_path / "effects.log"
    (tmp_path / "wb").mkdir()
    path = tmp_path / "wb" / "pending.yaml"
    path.write_text("""
version: '2.0'
name: pending
workflows:
  wf:
    input: [log]
    tasks:
      go:
        on-success: [slow, broken, side]
      side:
        on-success: [joined]
      joined:
        join: 1
      slow:
        action: std.noop
        on-success: [later]
      later:
        action: test.record
        input: {path: <% $.log %>, value: later}
        pause-before: true
      broken:
        action: std.fail error_data="disk full"
""")
    host.workbooks.create(path)
    execution = host.executions.create("pending.wf", {"log": str(log)})
    assert execution.state == "PAUSED"
    with pytest.raises(exceptions.WorkflowFailed) as info:
        host.executions.resume(execution.id)
    assert info.value.task == "broken" and "disk full" in str(info.value)
    assert log.read_text().splitlines() == ["do later", "undo later"]


@pytest.mark.parametrize("join", [False, True], ids=["graph", "machine"])
def test_a_failed_task_reads_error_its_undo_kept_apart(host: Host, tmp_path: Path,
                                                       join: bool) -> None:
    """Mistral's task states of a failed workflow: the failed task reads ERROR with its
    error (``state_info``), as Mistral's; that ours undid it (the workflow reverted) is
    its record's ``reverted``, shown by the API beside its state; a completed task ours
    undid reads SUCCESS (Mistral's), ``reverted`` too."""
    run = Run(host, tmp_path, f"""
        wf:
          tasks:
            task1:
              action: std.echo output=1
              on-success: [task2]
            task2:
              {"join: all" if join else ""}
              action: std.fail error_data="disk full"
        """)
    assert run.state == FAILED and run.error is not None
    (execution,) = host.executions.list()
    tasks = {t.name: t for t in host.tasks.list(execution.id)}
    assert [(t.state, t.reverted) for t in (tasks["task1"], tasks["task2"])] == [
        (UNDONE, True), (TASK_FAILED, True)]
    assert "disk full" in (tasks["task2"].error or "")
    body = media.task(tasks["task2"])
    assert (body["state"], body["reverted"]) == ("ERROR", True)
