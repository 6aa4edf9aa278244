"""Conformance with Mistral's engine tests (issue 26): a ``with-items`` task whose
item fails, and its ``timeout``, while the execution runs.

Mistral's ``WithItemsTask.on_action_complete`` completes the task only once every
item's action execution was completed (``is_with_items_completed``), ERROR when one
failed (``_get_final_state``): an item that fails gives its place back and the next
items are still scheduled (``_has_more_iterations``, ``_schedule_actions``), for an
action a client completes and for an ordinary one alike.  Its ``TimeoutPolicy`` is one
scheduled check per task execution, counted from the task's start
(``before_task_start``, ``_fail_task_if_incomplete``), not one per item.  Each test
names the Mistral test (mistral/tests/unit/engine/...) or source it ports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_helpers import Host, until
from tests.unit.engine.test_mistral_async_actions import (
    _ended,
    _install,
    _start,
    _states,
    _waiting,
)
from tests.unit.engine.test_mistral_async_actions import host as host  # the fixture
from tests.unit.engine.test_mistral_stop_publish import ONE_AT_A_TIME, _held, _stopped

ASYNC_ITEMS = """
    workflows:
      wf:
        tasks:
          task1:
            action: std.async_noop
            with-items: i in [1, 2, 3]
            {concurrency}
            publish-on-error:
              state: <% task().state %>
              got: <% task().result %>
            on-error: [task2]
          task2:
            action: std.echo output="With-items failed"
    """


def _task(host: Host, execution_id: str, name: str) -> object:
    return {t.name: t for t in host.tasks.list(execution_id)}[name]


def test_an_item_completed_with_error_leaves_the_other_items_running(
        host: Host, tmp_path: Path) -> None:
    """test_with_items.py's WB_ACTION_CONTEXT (every item at once), one item completed
    with ERROR: the other action executions stay RUNNING and can be completed; the task
    completes ERROR once all were, then ``on-error`` runs (test_with_items_fail)."""
    execution_id = _start(host, tmp_path, ASYNC_ITEMS.format(concurrency=""))
    _waiting(host, execution_id, "task1", count=3)
    host.tasks.complete(execution_id, "task1", "ERROR", "boom", item=0)
    task1 = _waiting(host, execution_id, "task1", count=2)
    assert task1.state == "RUNNING"
    assert sorted(a["item"] for a in task1.waiting) == [1, 2]
    host.tasks.complete(execution_id, "task1", "SUCCESS", "two", item=1)
    _waiting(host, execution_id, "task1", count=1)
    assert "task2" not in _states(host, execution_id)
    host.tasks.complete(execution_id, "task1", "SUCCESS", "three", item=2)
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS"
    assert _states(host, execution_id) == {"task1": "ERROR", "task2": "SUCCESS"}
    task1 = _task(host, execution_id, "task1")
    assert "boom" in (task1.error or "")
    # data_flow.get_task_execution_result: each item's output, the failed one's too.
    assert task1.published == {"state": "ERROR", "got": ["boom", "two", "three"]}


def test_an_item_completed_with_error_still_starts_the_next_items(
        host: Host, tmp_path: Path) -> None:
    """test_with_items.py: test_with_items_concurrency_1 with an item failing
    (``_has_more_iterations``): with ``concurrency: 1`` the first item's ERROR starts
    the second item, and so on; the task completes ERROR after the third."""
    execution_id = _start(host, tmp_path, ASYNC_ITEMS.format(concurrency="concurrency: 1"))
    (action,) = _waiting(host, execution_id, "task1").waiting
    assert action["item"] == 0
    host.tasks.complete(execution_id, "task1", "ERROR", "boom")
    for index in (1, 2):
        (action,) = _waiting(host, execution_id, "task1").waiting
        assert action["item"] == index
        host.tasks.complete(execution_id, "task1", "SUCCESS", f"item {index}")
    assert _ended(host, execution_id).state == "SUCCESS"
    assert _states(host, execution_id) == {"task1": "ERROR", "task2": "SUCCESS"}
    actions = host._session.runner().store.async_actions.of_task(execution_id, "task1")
    assert [(a.item, a.state) for a in actions] == [(0, "ERROR"), (1, "SUCCESS"),
                                                   (2, "SUCCESS")]
    assert _task(host, execution_id, "task1").published == {
        "state": "ERROR", "got": ["boom", "item 1", "item 2"]}


@pytest.mark.parametrize("concurrency", [1, 2])
def test_with_items_concurrency_fail(host: Host, tmp_path: Path, concurrency: int) -> None:
    """Ported from test_with_items.py: test_with_items_concurrency_2_fail, its action
    failing for the first item only: Mistral runs every one of the 4 items (each
    completion schedules the next), then the task fails and task2 runs.  (Our
    differences: the failed task undoes what its items did, ``test.record``'s revert;
    and a failed item's output is its action's own message, ``boom 1``, where
    Mistral's executor wraps it as ``The action raised an exception [action=<the
    action object's repr>, action_ex_id=<its id>, msg='boom 1']``: an object's repr
    and an internal id, which nothing in a workbook can use.)"""
    log = tmp_path / "log"
    text = f"""
    workflows:
      wf:
        tasks:
          task1:
            with-items: i in [1, 2, 3, 4]
            action: test.record path="{log}" value=<% $.i %> fail=<% $.i = 1 %>
            concurrency: {concurrency}
            publish-on-error:
              got: <% task().result %>
            on-error: task2
          task2:
            action: std.echo output="With-items failed"
    """
    execution_id = _start(host, tmp_path, text)
    assert _ended(host, execution_id).state == "SUCCESS"
    # data_flow.get_task_execution_result: each item's output, the failed one's too.
    assert _task(host, execution_id, "task1").published == {"got": ["boom 1", 2, 3, 4]}
    lines = log.read_text().splitlines()
    assert sorted(line for line in lines if line.startswith("do ")) == ["do 2", "do 3",
                                                                         "do 4"]
    assert _states(host, execution_id) == {"task1": "ERROR", "task2": "SUCCESS"}
    assert _task(host, execution_id, "task2").result == "With-items failed"


def test_the_timeout_of_waiting_items_counts_from_the_task_s_start(
        host: Host, tmp_path: Path) -> None:
    """policies.py TimeoutPolicy.before_task_start: one deadline per task execution;
    an item started later (``concurrency: 1``) has the task's deadline, not its own."""
    execution_id = _start(host, tmp_path, ASYNC_ITEMS.format(
        concurrency="concurrency: 1\n            timeout: 60"))
    (first,) = _waiting(host, execution_id, "task1").waiting
    host.tasks.complete(execution_id, "task1", "SUCCESS", "one")
    (second,) = _waiting(host, execution_id, "task1").waiting
    assert second["item"] == 1 and second["deadline"] == first["deadline"]
    host.tasks.complete(execution_id, "task1", "SUCCESS", "two")
    (third,) = _waiting(host, execution_id, "task1").waiting
    assert third["deadline"] == first["deadline"]
    host.tasks.complete(execution_id, "task1", "SUCCESS", "three")
    assert _ended(host, execution_id).state == "SUCCESS"
    assert _task(host, execution_id, "task1").result == ["one", "two", "three"]


#: ``task1`` runs four items of 0.4 s one at a time within ``timeout: 1``.
SLOW_ITEMS = """
    workflows:
      wf:
        tasks:
          task1:
            with-items: i in [1, 2, 3, 4]
            {run}
            concurrency: 1
            timeout: 1
            on-error: task2
          task2:
            action: std.echo output="With-items failed"
      nap:
        tasks:
          sleep:
            action: std.sleep
            input:
              seconds: 0.4
    """


@pytest.mark.parametrize("run", ["action: std.sleep seconds=<% 0.4 %>", "workflow: nap"])
def test_the_timeout_of_ordinary_items_counts_from_the_task_s_start(
        host: Host, tmp_path: Path, run: str) -> None:
    """policies.py TimeoutPolicy (a task policy, for a ``workflow:`` task too): four
    items of 0.4 s one at a time take longer than the task's ``timeout: 1`` although
    each takes less: the task fails (timed out), its ``on-error`` runs."""
    execution_id = _start(host, tmp_path, SLOW_ITEMS.format(run=run))
    assert _ended(host, execution_id).state == "SUCCESS"
    assert _states(host, execution_id) == {"task1": "ERROR", "task2": "SUCCESS"}
    assert "timed out after 1 s" in (_task(host, execution_id, "task1").error or "")


def test_after_a_stop_the_next_items_have_the_task_s_deadline(
        host: Host, tmp_path: Path) -> None:
    """The items a stopped execution's task starts as its running ones are completed
    (stopped_items) are due by the task's deadline too, as Mistral's TimeoutPolicy."""
    ident, _before = _stopped(host, tmp_path, "SUCCESS", "got: <% task().result %>",
                              items=ONE_AT_A_TIME + "timeout: 60\n            ")
    (first,) = _held(host, ident).waiting
    host.tasks.complete(ident, "held", "SUCCESS", "first")
    (second,) = _held(host, ident).waiting
    assert second["item"] == 1 and second["deadline"] == first["deadline"]


def test_a_reverse_workflow_s_items_go_on_after_one_failed(host: Host, tmp_path: Path) -> None:
    """The same in a compiled graph (a reverse workflow's task waits in its thread):
    with ``concurrency: 1`` the first item's ERROR starts the second, which is still
    completed; then the task and the workflow fail."""
    text = """
    workflows:
      wf:
        type: reverse
        tasks:
          deploy:
            requires: [approve]
            action: std.echo output="deployed"
          approve:
            with-items: i in [1, 2]
            concurrency: 1
            action: std.async_noop
    """
    name = _install(host, tmp_path, text)
    execution_id = host.executions.create(name, {}, wait=False, target="deploy").id
    (first,) = _waiting(host, execution_id, "approve").waiting
    assert first["item"] == 0
    host.tasks.complete(execution_id, "approve", "ERROR", "refused")
    until("the second item waits", lambda: [a["item"] for a in _task(
        host, execution_id, "approve").waiting] == [1])
    host.tasks.complete(execution_id, "approve", "SUCCESS", "approved")
    execution = _ended(host, execution_id)
    assert execution.state == "ERROR" and "refused" in (execution.error or "")
    states = _states(host, execution_id)
    assert states["approve"] == "ERROR" and states.get("deploy") != "SUCCESS"




def test_a_failed_with_items_task_names_its_failed_item(host: Host, tmp_path: Path) -> None:
    """Deliberately different wording: Mistral's failed with-items task reads "One or
    more actions had failed." (``WithItemsTask._get_with_items_state_info``); ours
    names how many items there were and the first failure with its own error, which
    is what an operator reading ``execution show`` needs to act on."""
    execution_id = _start(host, tmp_path, """\
        workflows:
          wf:
            tasks:
              task1:
                with-items: x in [1, 2, 3]
                action: std.fail error_data=<% $.x %>
        """)
    ended = _ended(host, execution_id)
    assert ended.state == "ERROR"
    record = next(t for t in host.tasks.list(execution_id) if t.name == "task1")
    assert record.state == "ERROR"
    assert "task 'task1', one of 3 items failed: " in (record.error or "")
    assert "One or more actions had failed" not in (record.error or "")



@pytest.mark.parametrize("action", ["std.async_noop", "std.fail"])
def test_a_failed_with_items_task_keeps_when_it_started_and_ended(
        host: Host, tmp_path: Path, action: str) -> None:
    """Mistral's task execution keeps its ``created_at`` and ``updated_at`` whatever its
    end: a with-items task whose error ended the execution shows when it started (as
    it did while RUNNING, for the one a client completes) and when it ended, on the
    state machine (an asynchronous action) and on TaskFlow's graph alike."""
    execution_id = _start(host, tmp_path, f"""
    workflows:
      wf:
        tasks:
          task1:
            action: {action}
            with-items: i in [1, 2]
    """)
    running = None
    if action == "std.async_noop":
        running = _waiting(host, execution_id, "task1", count=2)
        assert running.started_at is not None
        for item in range(2):
            host.tasks.complete(execution_id, "task1", "ERROR", f"boom {item}", item=item)
    execution = _ended(host, execution_id)
    assert execution.state == "ERROR"
    task1 = _task(host, execution_id, "task1")
    assert task1.state == "ERROR" and "items failed" in (task1.error or "")
    assert task1.started_at is not None, task1
    if running is not None:
        assert task1.started_at == running.started_at
    assert task1.finished_at is not None and task1.finished_at >= task1.started_at
    assert execution.finished_at is None or task1.finished_at <= execution.finished_at
