"""The error of a workflow several tasks failed keeps their kind and next steps
(issue 26).

Mistral fails the workflow once its branches ended and names every unhandled
error in its state info (mistral/engine/workflows.py ``_build_fail_info_message``,
as test_error_handling.py's workflows with two failing branches show).  Ours
names them too; the error is of the kind they share (two missing plans: a
not-found error, the CLI's exit 3) and carries each one's next step, in the
record and the raised error alike, on both engines.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host
from tripleo_flow import exceptions

WORKBOOK = """\
    version: '2.0'
    name: kinds
    workflows:
      wf:
        tasks:
          one:
            action: test.missing_plan plan="one"
          two:
            action: test.missing_plan plan="two"
          {extra}
"""
#: A join: the workflow runs on the state machine.
MACHINE = ("go:\n        on-success: [joined]\n      joined:\n        join: all\n"
           "        action: std.noop")


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


@pytest.mark.parametrize("machine", [False, True], ids=["graph", "state-machine"])
def test_several_failed_tasks_keep_their_kind_and_next_steps(host: Host, tmp_path: Path,
                                                             machine: bool) -> None:
    path = tmp_path / "kinds.yaml"
    path.write_text(textwrap.dedent(WORKBOOK).format(extra=MACHINE if machine else ""))
    host.workbooks.create(path)
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        host.executions.create("kinds.wf", {})
    cause = failed.value.__cause__
    assert isinstance(cause, exceptions.NotFound), repr(cause)
    assert exceptions.exit_code(cause) == 3
    assert "'one'" in str(cause) and "'two'" in str(cause)
    steps = [{"command": f"tripleo-flow plan create {name} --templates DIR",
              "request": f"POST /v1/plans?name={name}"} for name in ("one", "two")]
    [record] = host.executions.list()
    assert sorted(record.hints or [], key=str) == steps
    assert record.error == str(cause)
    assert "POST /v1/plans?name=one" in (record.error_api or "")
    assert "POST /v1/plans?name=two" in (record.error_api or "")


def test_errors_of_different_kinds_are_a_task_failure_with_both_next_steps(
        host: Host, tmp_path: Path) -> None:
    path = tmp_path / "kinds.yaml"
    path.write_text(textwrap.dedent(WORKBOOK).format(extra="").replace(
        'action: test.missing_plan plan="two"', "action: std.fail"))
    host.workbooks.create(path)
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        host.executions.create("kinds.wf", {})
    cause = failed.value.__cause__
    assert type(cause) is exceptions.TaskFailed
    [record] = host.executions.list()
    assert record.hints == [{"command": "tripleo-flow plan create one --templates DIR",
                             "request": "POST /v1/plans?name=one"}]


@pytest.mark.parametrize("machine", [False, True], ids=["graph", "state-machine"])
def test_a_failed_task_reads_its_next_steps_in_each_interfaces_words(
        host: Host, tmp_path: Path, machine: bool) -> None:
    """The task that failed names the CLI command to the CLI and the API request to
    the HTTP API (its tasks route and event stream), as its execution does (issue 30:
    the GUI's failed-deploy view named the CLI command in the task's error)."""
    from tripleo_flow.http import media

    path = tmp_path / "one.yaml"
    path.write_text(textwrap.dedent("""\
        version: '2.0'
        name: one
        workflows:
          wf:
            tasks:
              one:
                action: test.missing_plan plan="one"
              {extra}
        """).format(extra=MACHINE if machine else ""))
    host.workbooks.create(path)
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create("one.wf", {})
    [record] = host.executions.list()
    task = {t.name: t for t in host.tasks.list(record.id)}["one"]
    assert "tripleo-flow plan create one --templates DIR" in (task.error or "")
    assert "POST /v1/plans?name=one" not in (task.error or "")
    shown = media.task(task)
    assert "POST /v1/plans?name=one" in shown["error"]
    assert "tripleo-flow plan create" not in shown["error"]
    assert "error_api" not in shown
    assert shown["error"] == record.error_api  # the execution's own words, the same
