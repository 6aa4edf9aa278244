"""Conformance with Mistral's own engine tests (issue 26): error handling.

Each test runs, on the real engine, the workflow of the Mistral test its docstring
names (mistral/tests/unit/engine/...) and asserts the same outcome: the workflow's
state, which tasks ran and in which state, the output.  One deliberate difference
runs through them: a failed workflow reverts what its completed tasks did; the
execution reads ERROR and its completed tasks SUCCESS all the same, as Mistral's,
with the undo in their records' ``reverted``.  As in Mistral, an unhandled error lets
the other branches finish first (``test_mistral_error_semantics.py``).  Inline parameters:
``test_inline_parameters.py``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action


class ErrorOrResult(Action):
    """Mistral's test action that returns a result or an error: ours raises the error
    with the error data, which ``task().result`` reads after the error, as Mistral's."""

    def execute(self, success_result: Any = None, error_result: Any = None) -> Any:
        if error_result is not None:
            raise exceptions.ActionFailed(f"error {error_result!r}", data=error_result)
        return success_result


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", {**ACTIONS, "test.error_or_result": ErrorOrResult})
    yield host
    host._session.close_workflows()


class Run:
    """How one execution of a workflow ``wf`` ended."""

    def __init__(self, host: Host, tmp_path: Path, text: str, **inputs: Any) -> None:
        tmp_path.mkdir(parents=True, exist_ok=True)
        name = f"conformance_{len(host.workbooks.list())}"
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n"
                        + textwrap.indent(textwrap.dedent(text), "  "))
        host.workbooks.create(path)
        self.error: exceptions.WorkflowFailed | None = None
        try:
            execution = host.executions.create(f"{name}.wf", inputs)
        except exceptions.WorkflowFailed as exc:
            self.error = exc
            execution = host.executions.list()[-1]
        self.state = execution.state
        self.output = host.executions.get(execution.id).output
        #: The tasks that started (a task no transition chose is SKIPPED or PENDING).
        self.tasks = {t.name: t.state for t in host.tasks.list(execution.id)
                      if t.state not in ("SKIPPED", "PENDING")}
        self.published = {t.name: t.published for t in host.tasks.list(execution.id)}
        self.results = {t.name: t.result for t in host.tasks.list(execution.id)}


#: A failed execution reads ERROR, as Mistral's (its undo: its record's ``reverted``).
FAILED = "ERROR"
#: A failed task reads ERROR, as Mistral's (its undo ran: its record's ``reverted``).
TASK_FAILED = "ERROR"
#: A completed task of a failed execution, undone: it reads SUCCESS, as Mistral's (its
#: undo: its record's ``reverted``).
UNDONE = "SUCCESS"


def test_a_condition_that_is_false_does_not_handle_the_error(host: Host, tmp_path: Path
                                                              ) -> None:
    """Ported from test_direct_workflow.py: test_condition_transition_not_triggering."""
    run = Run(host, tmp_path, """
        wf:
          input:
            - var: null
          tasks:
            task1:
              action: std.fail
              on-success: [task2]
              on-error:
                - task3: <% $.var != null %>
            task2:
              action: std.noop
            task3:
              action: std.noop
        """)
    assert run.state == FAILED and run.error is not None and run.error.task == "task1"
    assert run.tasks == {"task1": TASK_FAILED}  # task1 ERROR, then reverted; no other ran


def test_commands_after_succeed_are_never_processed(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow.py: test_on_closures (on-success comes first;
    what follows 'succeed', on-complete included, is dropped; task2 still runs)."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.echo output="Echo"
              on-success: [task2, succeed]
              on-complete: [task3, task4, fail, never_gets_here]
            task2:
              action: std.noop
            task3:
              action: std.noop
            task4:
              action: std.noop
            never_gets_here:
              action: std.noop
        """)
    assert run.state == "SUCCESS"
    assert run.tasks == {"task1": "SUCCESS", "task2": "SUCCESS"}


def test_one_line_transitions(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow.py: test_one_line_syntax_in_on_clauses."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.echo output=1
              on-success: task2
            task2:
              action: std.echo output=1
              on-complete: task3
            task3:
              action: std.fail
              on-error: task4
            task4:
              action: std.echo output=4
        """)
    assert run.state == "SUCCESS"
    assert run.tasks == {"task1": "SUCCESS", "task2": "SUCCESS", "task3": "ERROR",
                         "task4": "SUCCESS"}


OUTPUT_EXPRESSION = """
    wf:
      output:
        continue_flag: <% $.continue_flag %>
      task-defaults:
        on-error: [task2]
      tasks:
        task1:
          action: std.fail
          on-success: task3
        task2:
          action: std.noop
          publish:
            continue_flag: false{opt_out}
        task3:
          action: std.noop{opt_out}
    """


@pytest.mark.parametrize("opt_out", ["", "\n          on-error: []"])
def test_on_error_from_task_defaults_and_output(host: Host, tmp_path: Path,
                                                opt_out: str) -> None:
    """Ported from test_direct_workflow.py: test_output_expression.

    As in Mistral, the default 'on-error: [task2]' is not applied to task2 itself (it
    would loop); task2 and task3 opting out ('on-error: []') changes nothing here."""
    run = Run(host, tmp_path, OUTPUT_EXPRESSION.format(opt_out=opt_out))
    assert run.state == "SUCCESS"
    assert run.output == {"continue_flag": False}
    assert run.tasks == {"task1": "ERROR", "task2": "SUCCESS"}


def test_noop_on_error_handles_the_error(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow.py: test_single_fail_with_next_noop."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.fail
              on-error: [noop]
        """)
    assert run.state == "SUCCESS" and run.tasks == {"task1": "ERROR"}


def test_on_error_and_on_complete_of_one_failed_task(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow.py: test_triggered_by (its outcome: task3's
    error is handled by 'noop', its on-complete runs task4, the workflow succeeds)."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.noop
              on-success: task2
            task2:
              action: std.fail
              on-error: task3
            task3:
              action: std.fail
              on-error: noop
              on-success: task4
              on-complete: task4
            task4:
              action: std.noop
        """)
    assert run.state == "SUCCESS"
    assert run.tasks == {"task1": "SUCCESS", "task2": "ERROR", "task3": "ERROR",
                         "task4": "SUCCESS"}


def test_on_complete_does_not_handle_an_error(host: Host, tmp_path: Path) -> None:
    """Mistral's documented 'finally' (doc/source/user/wf_lang_v2.rst, "on-complete
    ... won't stop the exception from bubbling up"; an error is handled only by a
    command of an 'on-error' transition: engine/tasks.py): the on-complete task runs,
    then the workflow fails."""
    log = tmp_path / "log"
    run = Run(host, tmp_path, """
        wf:
          input: [log]
          tasks:
            task1:
              action: std.fail error_data="disk full"
              on-complete: [cleanup]
            cleanup:
              action: test.record
              input: {path: <% $.log %>, value: cleanup}
        """, log=str(log))
    assert run.state == FAILED and run.error is not None and run.error.task == "task1"
    assert "task 'task1' failed and no 'on-error' transition handled it: " \
           "std.fail was called: disk full" in str(run.error)
    assert log.read_text().splitlines() == ["do cleanup", "undo cleanup"]
    assert run.tasks == {"task1": TASK_FAILED, "cleanup": UNDONE}


def test_first_task_error(host: Host, tmp_path: Path) -> None:
    """Ported from test_error_handling.py: test_first_task_error (and test_action_error)."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.fail
              on-success: task2
            task2:
              action: std.noop
        """)
    assert run.state == FAILED and run.tasks == {"task1": TASK_FAILED}


def test_an_error_in_publish_is_not_handled_by_on_error(host: Host, tmp_path: Path) -> None:
    """Ported from test_error_handling.py: test_task_error_with_on_handlers (on-error
    answers an error of the action, not one of the task's own publish)."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.noop
              publish:
                my_var: <% invalid_yaql_function() %>
              on-success: [task2]
              on-error: [task3]
            task2:
              action: std.noop
            task3:
              action: std.noop
        """)
    assert run.state == FAILED and run.tasks == {"task1": TASK_FAILED}


def test_an_invalid_task_input_fails_the_workflow(host: Host, tmp_path: Path) -> None:
    """Ported from test_error_handling.py: test_invalid_task_input (task1 completed:
    ours reverts it)."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.noop
              on-success: task2
            task2:
              action: std.echo output=<% $.non_existing_function_AAA() %>
        """)
    assert run.state == FAILED and run.error is not None and run.error.task == "task2"
    assert run.tasks == {"task1": UNDONE, "task2": TASK_FAILED}


ERROR_RESULT = """
    wf:
      input: [success_result, error_result]
      tasks:
        task1:
          action: test.error_or_result
          input:
            success_result: <% $.success_result %>
            error_result: <% $.error_result %>
          publish:
            p_var: <% task(task1).result %>
          on-error:
            - task2: <% task(task1).result = 2 %>
            - task3: <% task(task1).result = 3 %>
        task2:
          action: std.noop
        task3:
          action: std.noop
    """


@pytest.mark.parametrize("error, expected", [
    (2, {"task1": "ERROR", "task2": "SUCCESS"}),
    (3, {"task1": "ERROR", "task3": "SUCCESS"}),
], ids=["test_error_result1", "test_error_result2"])
def test_conditions_on_the_error_choose_the_handler(host: Host, tmp_path: Path, error: int,
                                                   expected: dict[str, str]) -> None:
    """Ported from test_error_result.py: test_error_result1 and test_error_result2.
    The conditions compare the action's error data (a number), as Mistral's."""
    run = Run(host, tmp_path, ERROR_RESULT, success_result=None, error_result=error)
    assert run.state == "SUCCESS"
    assert run.tasks == expected
    assert run.published["task1"] == {}  # 'publish' is ignored after an error
    assert run.results["task1"] == error  # the task's result is its error data


def test_success_result_publishes(host: Host, tmp_path: Path) -> None:
    """Ported from test_error_result.py: test_success_result."""
    run = Run(host, tmp_path, ERROR_RESULT, success_result="success", error_result=None)
    assert run.state == "SUCCESS"
    assert run.tasks == {"task1": "SUCCESS"}
    assert run.published["task1"] == {"p_var": "success"}


def test_no_condition_matching_the_error_fails_the_workflow(host: Host, tmp_path: Path
                                                            ) -> None:
    """The workflow of test_error_result.py with an error neither condition expects:
    nothing handles it, so (as Mistral's all_errors_handled decides) it fails."""
    run = Run(host, tmp_path, ERROR_RESULT, success_result=None, error_result=4)
    assert run.state == FAILED and run.tasks == {"task1": TASK_FAILED}


def test_publish_on_error_and_output_on_error(host: Host, tmp_path: Path) -> None:
    """Ported from test_dataflow.py: test_publish_on_error ('publish-on-error' alone
    does not handle the error; 'output-on-error' is the output, over 'result')."""
    run = Run(host, tmp_path, """
        wf:
          output-on-error:
            out: <% $.hi %>
          tasks:
            task1:
              action: std.fail
              publish-on-error:
                hi: hello_from_error
                err: <% task(task1).result %>
        """)
    assert run.state == FAILED
    assert run.output == {"out": "hello_from_error", "result": "std.fail was called"}


def test_output_on_error_sees_what_completed_tasks_published(host: Host, tmp_path: Path
                                                              ) -> None:
    """Mistral evaluates output-on-error over the workflow's final context (inputs and
    every publish, data_flow.evaluate_workflow_output); with no output-on-error that
    context itself is the output, over 'result'."""
    text = """
        wf:
          input: [who]
          {clause}
          tasks:
            task1:
              action: std.echo output=1
              publish: {{one: <% task().result %>}}
              on-success: task2
            task2:
              action: std.fail error_data=<% $.who %>
        """
    run = Run(host, tmp_path, text.format(clause="output-on-error: {got: '<% [$.who, $.one] %>'}"),
              who="ann")
    assert run.output == {"got": ["ann", 1], "result": "std.fail was called: ann"}
    run = Run(host, tmp_path / "again", text.format(clause=""), who="bob")
    assert run.output == {"who": "bob", "one": 1, "result": "std.fail was called: bob"}


@pytest.mark.parametrize("join", ["", "join: all"], ids=["graph", "state-machine"])
def test_output_on_error_reads_the_final_context_not_the_declared_order(
        host: Host, tmp_path: Path, join: str) -> None:
    """Mistral's ``_fail_workflow`` evaluates output-on-error over the final context
    (``evaluate_workflow_final_context``: the outbound contexts of the task executions
    that completed and fired nothing, here the failed task's: what it received, with
    what it published on error), whatever order the tasks are declared in: ``x`` is
    what ``second`` published last, not ``first``'s older value."""
    run = Run(host, tmp_path, f"""
        wf:
          output-on-error:
            x: <% $.x %>
            y: <% $.y %>
          tasks:
            fails:
              {join}
              action: std.fail
              publish-on-error:
                y: 3
            second:
              action: std.noop
              publish:
                x: 2
              on-success: fails
            first:
              action: std.noop
              publish:
                x: 1
              on-success: second
        """)
    assert run.state == FAILED
    assert run.output == {"x": 2, "y": 3, "result": "std.fail was called"}


def test_output_on_error_that_cannot_be_evaluated(host: Host, tmp_path: Path) -> None:
    """Ported from test_dataflow.py: test_output_on_error_wb_yaql_failed, in part: the
    workflow fails with its own error; ours says in the output's 'result' (not in the
    error, which stays the task's) that output-on-error could not be evaluated."""
    run = Run(host, tmp_path, """
        wf:
          output-on-error:
            message: <% $.not_existing_variable.first() %>
          tasks:
            task1:
              action: std.fail
        """)
    assert run.state == FAILED and run.error is not None
    assert "std.fail was called" in str(run.error)
    assert set(run.output) == {"result"}
    assert run.output["result"].startswith(
        "std.fail was called (output-on-error could not be evaluated: ")


def test_join_after_an_error(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow.py: test_join_task_has_correct_incoming_context:
    the other branches finish after b3's unhandled error, the join b3 can no longer
    reach ends ERROR with what it published on error, and the workflow fails."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            b1:
              publish: {b1: 1}
              on-success: join_task
            join_task:
              join: all
              publish: {join_task: 2}
              publish-on-error: {join_task: 1}
            bs:
              publish: {bs: 1}
              on-success: [b2, b3]
            b2:
              publish: {b2: 1}
              on-success: join_task
            b3:
              action: std.fail
              publish-on-error: {b3: 1}
              on-success: join_task
        """)
    assert run.state == FAILED
    assert {k: run.output.get(k) for k in ("bs", "b3", "b1", "b2", "join_task")} == {
        "bs": 1, "b3": 1, "b1": 1, "b2": 1, "join_task": 1}


def test_an_unhandled_error_still_fails_the_workflow_after_a_resume(
        host: Host, tmp_path: Path) -> None:
    """The on-complete path paused, the execution resumed in a new engine: the error
    its first engine saw unhandled is read back from the task's persisted outcome."""
    log = tmp_path / "log"
    path = tmp_path / "paused.yaml"
    path.write_text(textwrap.dedent("""
        version: '2.0'
        name: paused
        workflows:
          wf:
            input: [log]
            tasks:
              task1:
                action: std.fail error_data="disk full"
                on-complete: [cleanup]
              cleanup:
                action: test.record
                input: {path: <% $.log %>, value: cleanup}
                pause-before: true
        """))
    host.workbooks.create(path)
    execution = host.executions.create("paused.wf", {"log": str(log)})
    assert execution.state == "PAUSED"
    with pytest.raises(exceptions.WorkflowFailed) as info:
        host.executions.resume(execution.id)
    assert info.value.task == "task1" and "disk full" in str(info.value)
    assert log.read_text().splitlines() == ["do cleanup", "undo cleanup"]


SUB_WORKFLOW = """
    wf:
      input: [handle]
      output:
        handled: <% $.handled %>
      tasks:
        outer:
          workflow: middle
          on-error:
            - handler: <% $.handle %>
        handler:
          action: std.noop
          publish:
            handled: <% task(outer).result %>
    middle:
      tasks:
        inner:
          workflow: failing
    failing:
      tasks:
        first:
          action: std.fail error_data="disk full"
          on-error:
            - never: false
        never:
          action: std.noop
    """


@pytest.mark.parametrize("handle", [True, False])
def test_a_failed_sub_workflow_fails_its_task(host: Host, tmp_path: Path, handle: bool
                                             ) -> None:
    """Mistral's sub-workflows (test_subworkflows.py: test_subworkflow_error: the
    sub-workflow ends ERROR and so does its parent): a sub-workflow an unhandled
    error failed fails the task that runs it, whose own transitions decide, here two
    levels up; ``task(outer).result`` is then the error, as Mistral's."""
    run = Run(host, tmp_path, SUB_WORKFLOW, handle=handle)
    if handle:
        assert run.state == "SUCCESS"
        assert run.tasks == {"outer/inner/first": "ERROR", "outer/inner": "ERROR",
                             "outer": "ERROR", "handler": "SUCCESS"}
        assert run.output == {"handled": "task 'inner' failed and no 'on-error' transition "
                              "handled it: task 'first' failed and no 'on-error' "
                              "transition handled it: std.fail was called: disk full"}
    else:
        assert run.state == FAILED and run.error is not None
        assert "std.fail was called: disk full" in str(run.error)
