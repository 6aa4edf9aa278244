"""Resume cases of Mistral's ``mistral/tests/unit/engine/test_workflow_resume.py``
(issue 26), their workflows verbatim (``pause`` in a transition list pauses the
workflow once the task completes; resumed, the other targets run).  Both engines:
the compiled graph where the workflow compiles there, and the state machine (a
``join`` on a task that has one inbound task makes the workflow run there).

Not ported: ``test_resume_different_task_states`` (``std.mistral_http`` to an outside
host), ``test_resume_fails`` (a mocked database lock), ``test_resume_reverse`` (a
reverse workflow paused from outside while ``wait-after`` runs: the pause cases of
tests/functional/engine/test_pause_requests.py cover a pause asked from outside).
"""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path

import pytest

from tests.engine_helpers import Host
from tests.pause_helpers import _tasks
from tests.pause_helpers import host as host  # the fixture

ENGINES = pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])

RESUME_WORKBOOK = """\
    wf1:
      type: direct

      tasks:
        task1:
          action: std.echo output="Hi!"
          on-complete:
            - task2
            - pause

        task2:
          {join}
          action: std.echo output="Task 2"
    """

WORKBOOK_TWO_BRANCHES = """\
    wf1:
      type: direct

      tasks:
        task1:
          action: std.echo output="Hi!"
          on-complete:
            - task2
            - task3
            - pause

        task2:
          {join}
          action: std.echo output="Task 2"

        task3:
          action: std.echo output="Task 3"
    """

WORKBOOK_TWO_START_TASKS = """\
    wf1:
      type: direct

      tasks:
        task1:
          action: std.echo output="Hi!"
          on-complete:
            - task3
            - pause

        task2:
          action: std.echo output="Task 2"
          on-complete:
            - pause

        task3:
          {join}
          action: std.echo output="Task 3"
    """


def _install(host: Host, tmp_path: Path, text: str, join: bool) -> str:
    name = "r" + uuid.uuid4().hex[:8]
    path = tmp_path / f"{name}.yaml"
    body = textwrap.dedent(text).replace("{join}", "join: all" if join else "")
    path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n"
                    + textwrap.indent(body, "  "))
    host.workbooks.create(path)
    return name


def _ran(host: Host, ident: str) -> set[str]:
    return {name for name, state in _tasks(host, ident).items() if state != "PENDING"}


@ENGINES
def test_resume_direct(host: Host, tmp_path: Path, join: bool) -> None:
    """PAUSED once task1 completed, with two task executions: task2, listed before
    ``pause``, was started (Mistral's dispatcher runs the task commands listed before
    a state change: task2's action runs though its workflow is paused); resumed,
    SUCCESS with the same two (task2 does not run again); a second resume returns it
    unchanged.  (Both engines: such a workflow runs on the state machine; a graph
    paused before task2 started.)"""
    name = _install(host, tmp_path, RESUME_WORKBOOK, join)
    paused = host.executions.create(f"{name}.wf1", {})
    assert paused.state == "PAUSED"
    assert _tasks(host, paused.id) == {"task1": "SUCCESS", "task2": "SUCCESS"}
    done = host.executions.resume(paused.id)
    assert done.state == "SUCCESS"
    assert _tasks(host, paused.id) == {"task1": "SUCCESS", "task2": "SUCCESS"}
    assert host.executions.resume(paused.id).state == "SUCCESS"  # unchanged, no error


@ENGINES
def test_resume_two_branches(host: Host, tmp_path: Path, join: bool) -> None:
    name = _install(host, tmp_path, WORKBOOK_TWO_BRANCHES, join)
    paused = host.executions.create(f"{name}.wf1", {})
    assert paused.state == "PAUSED"
    done = host.executions.resume(paused.id)
    assert done.state == "SUCCESS"
    assert _ran(host, paused.id) == {"task1", "task2", "task3"}
    again = host.executions.resume(paused.id)  # ended: unchanged, as Mistral's
    assert (again.state, _ran(host, paused.id)) == ("SUCCESS", {"task1", "task2", "task3"})


@ENGINES
def test_resume_two_start_tasks(host: Host, tmp_path: Path, join: bool) -> None:
    name = _install(host, tmp_path, WORKBOOK_TWO_START_TASKS, join)
    paused = host.executions.create(f"{name}.wf1", {})
    assert paused.state == "PAUSED"
    assert {"task1", "task2"} <= _ran(host, paused.id)
    done = host.executions.resume(paused.id)
    assert done.state == "SUCCESS"
    assert _ran(host, paused.id) == {"task1", "task2", "task3"}
    again = host.executions.resume(paused.id)  # ended: unchanged, as Mistral's
    assert (again.state, _ran(host, paused.id)) == ("SUCCESS", {"task1", "task2", "task3"})
