"""``task(NAME)`` of a task the current one does not require, as Mistral's (issue 26).

Mistral's ``task()`` reads any task execution of the workflow: the latest of that
name, or null if none ran (openstack/mistral ``mistral/tests/unit/engine/
test_yaql_functions.py`` ``test_task_function_returns_null``, there in the
workflow's ``output``; here also in a task's ``publish``, where a compiled (graph)
workflow once answered "unknown task" for a task outside the current one's
requirements).  A name no task of the workflow has is refused when the workbook is
loaded (``test_workbook_validator``).  The direct cases run on both engines
(``join: all`` on the reading task selects the state machine).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_helpers import Host
from tests.unit.engine.test_mistral_async_actions import (
    _ended,
    _install,
    _start,
    _states,
    _waiting,
)
from tests.unit.engine.test_mistral_async_actions import host as host  # the fixture
from tripleo_flow.common import clock

ENGINES = pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])


def _join(join: bool) -> str:
    return "join: all" if join else ""


@ENGINES
def test_task_function_returns_null_in_a_task(host: Host, tmp_path: Path,
                                             join: bool) -> None:
    """``test_task_function_returns_null``'s workflow with ``task2`` read by ``task3``
    (which does not require it): null, and ``= null`` is true; task2 never ran."""
    execution_id = _start(host, tmp_path, f"""
    workflows:
      wf:
        output:
          task2: <% $.task2 %>
          task2bool: <% $.task2bool %>
        tasks:
          task1:
            action: std.noop
            on-success:
              - task2: <% false %>
              - task3
          task2:
            action: std.noop
          task3:
            {_join(join)}
            action: std.noop
            publish:
              task2: <% task(task2) %>
              task2bool: <% task(task2) = null %>
    """)
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS", execution.state_info
    assert execution.output == {"task2": None, "task2bool": True}
    found = _states(host, execution_id)  # task2 never ran (our records show SKIPPED)
    assert (found["task1"], found["task3"], found.get("task2")) in (
        ("SUCCESS", "SUCCESS", None), ("SUCCESS", "SUCCESS", "SKIPPED"))


@ENGINES
def test_task_function_reads_a_sibling_that_runs(host: Host, tmp_path: Path,
                                                 join: bool) -> None:
    """A task reads the latest execution of a task on another branch: ``waiter``
    (an asynchronous action, RUNNING until completed) seen from ``reader``, which
    ``task1`` also started: its name, state and id, as Mistral gives them."""
    execution_id = _start(host, tmp_path, f"""
    workflows:
      wf:
        output:
          seen: <% $.seen %>
        tasks:
          task1:
            action: std.noop
            on-success:
              - waiter
              - reader
          waiter:
            action: std.async_noop
          reader:
            {_join(join)}
            action: std.noop
            publish:
              seen:
                name: <% task(waiter).name %>
                state: <% task(waiter).state %>
                id: <% task(waiter).id %>
    """)
    waiter = _waiting(host, execution_id, "waiter")
    wanted = {"task1": "SUCCESS", "waiter": "RUNNING", "reader": "SUCCESS"}
    for _ in range(1200):  # reader runs beside the waiting waiter
        if _states(host, execution_id) == wanted:
            break
        clock.sleep(0.05)
    assert _states(host, execution_id) == wanted
    host.tasks.complete(execution_id, "waiter", "SUCCESS", "done")
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS", execution.state_info
    assert execution.output == {"seen": {"name": "waiter", "state": "RUNNING",
                                         "id": waiter.id}}


def test_task_function_reverse_not_required(host: Host, tmp_path: Path) -> None:
    """A reverse workflow (always compiled to the graph): ``task3`` requires ``task1``
    only; ``task2`` (not required, so never run) reads null there, as Mistral's."""
    execution_id = host.executions.create(_install_reverse(host, tmp_path), {},
                                          wait=False, target="task3").id
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS", execution.state_info
    assert execution.output == {"other": None}


def _install_reverse(host: Host, tmp_path: Path) -> str:
    return _install(host, tmp_path, """
    workflows:
      wf:
        type: reverse
        output:
          other: <% $.other %>
        tasks:
          task1:
            action: std.noop
          task2:
            action: std.noop
          task3:
            action: std.noop
            requires: [task1]
            publish:
              other: <% task(task2) %>
    """)
