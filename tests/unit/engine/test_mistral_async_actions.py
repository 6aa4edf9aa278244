"""Conformance with Mistral's engine tests (issue 26): asynchronous actions.

``std.async_noop`` (and an ad-hoc action based on it) leaves its task RUNNING until a
client completes its action execution, as Mistral's ``on_action_complete`` /
``PUT /v2/action_executions/<id>``: here :meth:`complete_task` of the Python API
(the CLI and the HTTP API call it; their tests are in ``test_cli.py`` and
``tests/functional/http/test_async_completion.py``).  Each test names the Mistral test
whose workflow and assertions it ports (mistral/tests/unit/engine/...), run on the
real engine with the executions database.  Our deliberate difference, as everywhere:
a failed workflow reverts what its completed tasks did (it reads ERROR as Mistral's).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tripleo_flow import exceptions
from tripleo_flow.common import clock
from tripleo_flow.engine.store.executions import Execution, TaskRecord


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


def _install(host: Host, tmp_path: Path, text: str) -> str:
    """Install a workbook of workflow ``wf`` (and its ``actions:``); its full name."""
    name = f"async_{len(host.workbooks.list())}"
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"version: '2.0'\nname: {name}\n" + textwrap.dedent(text))
    host.workbooks.create(path)
    return f"{name}.wf"


def _start(host: Host, tmp_path: Path, text: str, **inputs: Any) -> str:
    return host.executions.create(_install(host, tmp_path, text), inputs, wait=False).id


def _waiting(host: Host, execution_id: str, task: str, count: int = 1,
             timeout: float = 30) -> TaskRecord:
    """Task execution ``task`` once it waits for ``count`` action executions."""
    deadline = clock.monotonic() + timeout
    while clock.monotonic() < deadline:
        found = {t.name: t for t in host.tasks.list(execution_id)}
        if task in found and len(found[task].waiting) == count:
            return found[task]
        clock.sleep(0.05)
    raise AssertionError(f"{task} does not wait for {count}: "
                         f"{host.tasks.list(execution_id)}")


def _ended(host: Host, execution_id: str, timeout: float = 30) -> Execution:
    deadline = clock.monotonic() + timeout
    while clock.monotonic() < deadline:
        execution = host.executions.get(execution_id)
        if execution.finished_at is not None:
            host._session.runner().wait_background(10)
            return host.executions.get(execution_id)
        clock.sleep(0.05)
    raise AssertionError(f"execution {execution_id} did not end: "
                         f"{host.executions.get(execution_id)}")


def _states(host: Host, execution_id: str) -> dict[str, str]:
    return {t.name: t.state for t in host.tasks.list(execution_id)}


ON_SUCCESS = """
    workflows:
      wf:
        output:
          got: <% $.got %>
        tasks:
          task1:
            action: std.async_noop
            publish:
              got: <% task().result %>
            on-success:
              - task2
          task2:
            action: std.echo output=<% $.got %>
    """


def test_the_task_waits_running_until_a_client_completes_it(host: Host,
                                                            tmp_path: Path) -> None:
    """Ported from test_default_engine.py: test_on_action_update's workflow (task1
    async, task2 on its success) and test_direct_workflow.py's async tests: the
    execution and task1 stay RUNNING with one RUNNING action execution, task2 does not
    start; once completed, task1 publishes the output and task2 runs."""
    execution_id = _start(host, tmp_path, ON_SUCCESS)
    task1 = _waiting(host, execution_id, "task1")
    clock.sleep(0.3)
    assert host.executions.get(execution_id).state == "RUNNING"
    assert _states(host, execution_id) == {"task1": "RUNNING"}
    assert task1.id and task1.started_at is not None
    (action,) = task1.waiting
    assert action["attempt"] == 1 and action["item"] is None
    done = host.tasks.complete(execution_id, "task1", "SUCCESS", {"answer": 42})
    assert (done.id, done.state, done.output) == (action["id"], "SUCCESS", {"answer": 42})
    assert done.task_id == task1.id
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS"
    assert execution.output == {"got": {"answer": 42}}
    tasks = {t.name: t for t in host.tasks.list(execution_id)}
    assert tasks["task1"].result == {"answer": 42} and tasks["task1"].waiting == []
    assert tasks["task2"].result == {"answer": 42}
    # Completed once: a second completion is refused (Mistral's test_retry_async_action).
    with pytest.raises(exceptions.Conflict, match="does not wait"):
        host.tasks.complete(execution_id, "task1", "SUCCESS", 1)


def test_the_task_is_named_by_its_id_too(host: Host, tmp_path: Path) -> None:
    execution_id = _start(host, tmp_path, ON_SUCCESS)
    task1 = _waiting(host, execution_id, "task1")
    assert task1.id is not None
    host.tasks.complete(execution_id, task1.id, "SUCCESS", "by id")
    assert _ended(host, execution_id).output == {"got": "by id"}


def test_an_error_completion_runs_on_error(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow.py: test_unexisting_join_task_does_not_stuck_wf_
    running (an async task completed with ``Result(error=...)`` is an ERROR task whose
    error the workflow reports) and Mistral's action execution controller (ERROR with
    an output: that output is the error)."""
    text = """
    workflows:
      wf:
        tasks:
          task1:
            action: std.async_noop
            publish-on-error:
              why: <% task().result %>
            on-error:
              - handle
          handle:
            action: std.echo output=<% $.why %>
    """
    execution_id = _start(host, tmp_path, text)
    _waiting(host, execution_id, "task1")
    host.tasks.complete(execution_id, "task1", "ERROR", "disk full")
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS"
    tasks = {t.name: t for t in host.tasks.list(execution_id)}
    assert tasks["task1"].state == "ERROR" and tasks["task1"].error == "disk full"
    assert tasks["handle"].result == "disk full"


def test_an_error_completion_s_output_is_the_task_result(host: Host, tmp_path: Path
                                                        ) -> None:
    """Ported from test_error_result.py: test_async_error_result (an asynchronous
    action completed with error data: the ``on-error`` condition reads that data as
    ``task(task1).result``, and the workflow succeeds)."""
    text = """
    workflows:
      wf:
        tasks:
          task1:
            action: std.async_noop
            on-error:
              - task2: <% task(task1).result.code = 2 %>
              - task3: <% task(task1).result.code = 3 %>
          task2:
            action: std.noop
          task3:
            action: std.noop
    """
    execution_id = _start(host, tmp_path, text)
    _waiting(host, execution_id, "task1")
    host.tasks.complete(execution_id, "task1", "ERROR", {"code": 2})
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS"
    assert _states(host, execution_id) == {"task1": "ERROR", "task2": "SUCCESS"}
    tasks = {t.name: t for t in host.tasks.list(execution_id)}
    assert tasks["task1"].result == {"code": 2}


def test_an_unhandled_error_completion_fails_the_workflow(host: Host, tmp_path: Path) -> None:
    text = """
    workflows:
      wf:
        tasks:
          branch1:
            action: std.noop
          branch2:
            action: std.async_noop
            on-success: [never]
          never:
            action: std.noop
    """
    execution_id = _start(host, tmp_path, text)
    _waiting(host, execution_id, "branch2")
    # Without an output, the error is Mistral's 'Unknown error'.
    host.tasks.complete(execution_id, "branch2", "ERROR")
    execution = _ended(host, execution_id)
    assert execution.state == "ERROR"  # Mistral: ERROR
    assert execution.failed_task == "branch2" and "Unknown error" in (execution.error or "")
    assert "never" not in _states(host, execution_id)


TIMEOUT_WB = """
    workflows:
      wf:
        input:
          - timeout: 1
        tasks:
          task1:
            action: std.async_noop
            timeout: <% $.timeout %>
            on-error:
              - task2
          task2:
            action: std.echo output="Hi!"
            timeout: 3
    """


def test_timeout_policy(host: Host, tmp_path: Path) -> None:
    """Ported from test_policies.py: test_timeout_policy (TIMEOUT_WB, its timeout from
    an input as test_timeout_policy_from_var): no client completes task1 within its
    timeout, so it fails and its on-error task2 runs; a completion after that is
    refused."""
    started = clock.monotonic()
    execution_id = _start(host, tmp_path, TIMEOUT_WB)
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS"
    assert 1.0 <= clock.monotonic() - started < 10
    tasks = {t.name: t for t in host.tasks.list(execution_id)}
    assert tasks["task1"].state == "ERROR" and "timed out after 1 s" in (tasks["task1"].error
                                                                          or "")
    assert tasks["task2"].result == "Hi!"
    with pytest.raises(exceptions.Conflict, match="does not wait"):
        host.tasks.complete(execution_id, "task1", "SUCCESS", "too late")


def test_timeout_policy_without_on_error_fails_the_workflow(host: Host,
                                                            tmp_path: Path) -> None:
    """Ported from test_policies.py: test_timeout_policy_success_after_timeout
    (TIMEOUT_WB2): the workflow fails and no other task execution is created."""
    text = """
    workflows:
      wf:
        tasks:
          task1:
            action: std.async_noop
            timeout: 1
    """
    execution_id = _start(host, tmp_path, text)
    execution = _ended(host, execution_id)
    assert execution.state == "ERROR" and execution.failed_task == "task1"
    assert "timed out" in (execution.error or "")
    clock.sleep(1)
    assert list(_states(host, execution_id)) == ["task1"]


def test_adhoc_async_action(host: Host, tmp_path: Path) -> None:
    """Ported from test_adhoc_actions.py: test_adhoc_async_action: an ad-hoc action
    based on std.async_noop waits too, and its output reshapes the completion's."""
    text = """
    actions:
      my_action:
        input:
          - my_param
        base: std.async_noop
        output: (((<% $ %>)))
    workflows:
      wf:
        tasks:
          task1:
            action: my_action my_param="asdfasdf"
    """
    execution_id = _start(host, tmp_path, text)
    _waiting(host, execution_id, "task1")
    host.tasks.complete(execution_id, "task1", "SUCCESS", "Hi!")
    assert _ended(host, execution_id).state == "SUCCESS"
    (task1,) = host.tasks.list(execution_id)
    assert task1.result == "(((Hi!)))"


def test_with_items_concurrency_1(host: Host, tmp_path: Path) -> None:
    """Ported from test_with_items.py: test_with_items_concurrency_1: one action
    execution RUNNING at a time; each completion starts the next; the result lists
    the outputs in item order."""
    text = """
    workflows:
      wf:
        input:
          - names: ["John", "Ivan", "Mistral"]
        tasks:
          task1:
            action: std.async_noop
            with-items: name in <% $.names %>
            concurrency: 1
    """
    execution_id = _start(host, tmp_path, text)
    for index, name in enumerate(["John", "Ivan", "Mistral"]):
        (action,) = _waiting(host, execution_id, "task1").waiting
        assert action["item"] == index
        host.tasks.complete(execution_id, "task1", "SUCCESS", name)
    assert _ended(host, execution_id).state == "SUCCESS"
    (task1,) = host.tasks.list(execution_id)
    assert task1.result == ["John", "Ivan", "Mistral"]


def test_with_items_every_item_at_once_needs_the_item(host: Host, tmp_path: Path) -> None:
    """Mistral's WB_ACTION_CONTEXT (test_with_items.py): with-items without
    concurrency starts every item's action at once; a completion names its item."""
    text = """
    workflows:
      wf:
        input:
          - items: [a, b]
        tasks:
          task1:
            action: std.async_noop
            with-items: item in <% $.items %>
    """
    execution_id = _start(host, tmp_path, text)
    task1 = _waiting(host, execution_id, "task1", count=2)
    assert sorted(a["item"] for a in task1.waiting) == [0, 1]
    with pytest.raises(exceptions.InvalidInput, match="say which one with item"):
        host.tasks.complete(execution_id, "task1", "SUCCESS", "x")
    with pytest.raises(exceptions.NotFound, match="no action execution for item 5"):
        host.tasks.complete(execution_id, "task1", "SUCCESS", "x", item=5)
    host.tasks.complete(execution_id, "task1", "SUCCESS", "second", item=1)
    _waiting(host, execution_id, "task1", count=1)
    host.tasks.complete(execution_id, "task1", "SUCCESS", "first", item=0)
    assert _ended(host, execution_id).state == "SUCCESS"
    assert host.tasks.list(execution_id)[0].result == ["first", "second"]


def test_retry_async_action(host: Host, tmp_path: Path) -> None:
    """Ported from test_policies.py: test_retry_async_action: an ERROR completion
    retries the task with a new action execution; completing the first again is
    refused; the second's SUCCESS ends the workflow."""
    text = """
    workflows:
      wf:
        tasks:
          async_task:
            action: std.async_noop
            retry:
              delay: 0
              count: 2
    """
    execution_id = _start(host, tmp_path, text)
    (first,) = _waiting(host, execution_id, "async_task").waiting
    host.tasks.complete(execution_id, "async_task", "ERROR", "mock")
    deadline = clock.monotonic() + 30
    while True:
        (second,) = _waiting(host, execution_id, "async_task").waiting
        if second["id"] != first["id"] or clock.monotonic() > deadline:
            break
        clock.sleep(0.05)
    assert second["attempt"] == 2 and second["id"] != first["id"]
    store = host._session.runner().store.async_actions
    with pytest.raises(exceptions.Conflict, match="is ERROR"):
        store.complete(first["id"], "ERROR", "mock")
    host.tasks.complete(execution_id, "async_task", "SUCCESS", "mock")
    assert _ended(host, execution_id).state == "SUCCESS"
    actions = store.of_task(execution_id, "async_task")
    assert [(a.attempt, a.state) for a in actions] == [(1, "ERROR"), (2, "SUCCESS")]


def test_parallel_async_branches_join(host: Host, tmp_path: Path) -> None:
    """Two branches wait at once on a pool of one worker (no thread is held while a
    task waits), the join runs once both are completed, with both published values
    (test_join.py's async_noop joins)."""
    text = """
    workflows:
      wf:
        output:
          both: <% [$.a, $.b] %>
        tasks:
          left:
            action: std.async_noop
            publish:
              a: <% task().result %>
            on-success: [together]
          right:
            action: std.async_noop
            publish:
              b: <% task().result %>
            on-success: [together]
          together:
            join: all
            action: std.noop
    """
    # One worker thread: were it held by a waiting task, the other could never start.
    host.conf.set_override("executor_threads", 1, group="workflows")
    execution_id = _start(host, tmp_path, text)
    _waiting(host, execution_id, "left")
    _waiting(host, execution_id, "right")
    host.tasks.complete(execution_id, "right", "SUCCESS", "R")
    clock.sleep(0.3)
    assert "together" not in _states(host, execution_id)
    host.tasks.complete(execution_id, "left", "SUCCESS", "L")
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS" and execution.output == {"both": ["L", "R"]}


def test_a_reverse_workflow_waits_in_its_task(host: Host, tmp_path: Path) -> None:
    """A compiled graph (reverse workflow) waits in the task's thread, the same way."""
    text = """
    workflows:
      wf:
        type: reverse
        tasks:
          approve:
            action: std.async_noop
          deploy:
            action: std.echo output=<% task(approve).result %>
            requires: [approve]
    """
    name = _install(host, tmp_path, text)
    execution_id = host.executions.create(name, {}, wait=False, target="deploy").id
    _waiting(host, execution_id, "approve")
    host.tasks.complete(execution_id, "approve", "SUCCESS", "approved")
    assert _ended(host, execution_id).state == "SUCCESS"
    assert {t.name: t.result for t in host.tasks.list(execution_id)}["deploy"] == \
        "approved"


def test_bad_completions_are_refused_and_change_nothing(host: Host, tmp_path: Path) -> None:
    execution_id = _start(host, tmp_path, ON_SUCCESS)
    _waiting(host, execution_id, "task1")
    with pytest.raises(exceptions.ExecutionNotFound):
        host.tasks.complete("no-such-execution", "task1", "SUCCESS", 1)
    with pytest.raises(exceptions.NotFound, match="has no task execution 'nope'"):
        host.tasks.complete(execution_id, "nope", "SUCCESS", 1)
    with pytest.raises(exceptions.InvalidInput, match="SUCCESS or ERROR"):
        host.tasks.complete(execution_id, "task1", "CANCELLED", 1)
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    with pytest.raises(exceptions.InvalidInput, match="output"):
        host.tasks.complete(execution_id, "task1", "SUCCESS", deep)
    with pytest.raises(exceptions.InvalidInput, match="item"):
        host.tasks.complete(execution_id, "task1", "SUCCESS", 1, item=-1)
    assert _waiting(host, execution_id, "task1").waiting
    host.tasks.complete(execution_id, "task1", "SUCCESS", "fine")
    assert _ended(host, execution_id).state == "SUCCESS"
    # task2 (std.echo) never waited: not a task a client completes.
    with pytest.raises(exceptions.Conflict, match="not asynchronous"):
        host.tasks.complete(execution_id, "task2", "SUCCESS", 1)


def test_the_output_is_masked_as_other_records(host: Host, tmp_path: Path) -> None:
    """The executions database keeps no secret (engine/store/redaction.py): the output is
    masked before it is stored, and the workflow gets what was stored, as a resumed
    execution does (a task that needs the masked value stops with SecretNotPersisted)."""
    text = """
    workflows:
      wf:
        output:
          user: <% $.got.user %>
        tasks:
          task1:
            action: std.async_noop
            publish:
              got: <% task().result %>
            on-success: [task2]
          task2:
            action: std.echo output=<% $.got %>
    """
    alone = text.split("            on-success: [task2]")[0]
    execution_id = _start(host, tmp_path, alone)
    _waiting(host, execution_id, "task1")
    done = host.tasks.complete(execution_id, "task1", "SUCCESS",
                               {"admin_password": "hunter2-secret", "user": "admin"})
    assert done.output == {"admin_password": "<secret>", "user": "admin"}
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS" and execution.output == {"user": "admin"}
    tasks = {t.name: t for t in host.tasks.list(execution_id)}
    assert tasks["task1"].result["admin_password"] == "<secret>"
    execution_id = _start(host, tmp_path, text)
    _waiting(host, execution_id, "task1")
    host.tasks.complete(execution_id, "task1", "SUCCESS", {"admin_password": "hunter2-secret"})
    execution = _ended(host, execution_id)
    assert execution.failed_task == "task2" and "held a secret" in (execution.error or "")
    for stored in (tmp_path / "data").glob("executions.sqlite*"):
        assert b"hunter2-secret" not in stored.read_bytes()


def _until_paused(host: Host, execution_id: str) -> None:
    """Once ``execution_id`` is PAUSED and its engine stopped."""
    deadline = clock.monotonic() + 30
    while host.executions.get(execution_id).state != "PAUSED":
        assert clock.monotonic() < deadline
        clock.sleep(0.05)
    host._session.runner().wait_background(10)


def _paused_while_waiting(host: Host, tmp_path: Path, transition: str, then: str) -> str:
    """An execution of a workflow whose task ``wait`` waits for a client (its
    ``transition`` leads to task ``then``) while another branch's ``pause`` command
    paused it: its id, once PAUSED."""
    text = f"""
    workflows:
      wf:
        tasks:
          wait:
            action: std.async_noop
            {transition}: [{then}]
          stop:
            action: std.noop
            on-success: [pause]
          {then}:
            action: std.echo output=<% task(wait).result %>
    """
    execution_id = _start(host, tmp_path, text)
    _until_paused(host, execution_id)
    _waiting(host, execution_id, "wait")
    return execution_id


def test_pause_while_waiting_then_complete_then_resume(host: Host, tmp_path: Path) -> None:
    """A pause (another branch's ``pause`` command) leaves the waiting task RUNNING
    and completable.  Completed while PAUSED, it reads SUCCESS at once with its result,
    the execution stays PAUSED and nothing after it starts (Mistral's on_action_complete
    of a paused workflow: the task completes, its transitions wait for the resume); the
    resumed execution goes on with the completion."""
    execution_id = _paused_while_waiting(host, tmp_path, "on-success", "after")
    assert _waiting(host, execution_id, "wait").state == "RUNNING"
    host.tasks.complete(execution_id, "wait", "SUCCESS", "done")
    assert host.executions.get(execution_id).state == "PAUSED"  # a pause holds
    tasks = {t.name: t for t in host.tasks.list(execution_id)}
    assert {n: t.state for n, t in tasks.items()} == {"wait": "SUCCESS", "stop": "SUCCESS"}
    assert tasks["wait"].result == "done" and tasks["wait"].waiting == []
    with pytest.raises(exceptions.Conflict, match="does not wait"):
        host.tasks.complete(execution_id, "wait", "SUCCESS", "again")
    execution = host.executions.resume(execution_id)
    assert execution.state == "SUCCESS"
    assert _states(host, execution_id) == dict.fromkeys(["wait", "stop", "after"], "SUCCESS")
    assert {t.name: t.result for t in host.tasks.list(execution_id)}["after"] == "done"


def test_pause_while_waiting_then_fail_it_then_resume(host: Host, tmp_path: Path) -> None:
    """Completed in ERROR while PAUSED: the task reads ERROR at once with the client's
    error, the execution stays PAUSED (a paused workflow does not fail), its
    ``on-error`` target waits for the resume, then runs (Mistral's task whose action
    fails while its workflow is paused)."""
    execution_id = _paused_while_waiting(host, tmp_path, "on-error", "handled")
    host.tasks.complete(execution_id, "wait", "ERROR", "disk full")
    assert host.executions.get(execution_id).state == "PAUSED"
    tasks = {t.name: t for t in host.tasks.list(execution_id)}
    assert {n: t.state for n, t in tasks.items()} == {"wait": "ERROR", "stop": "SUCCESS"}
    assert tasks["wait"].error == "disk full"
    execution = host.executions.resume(execution_id)
    assert execution.state == "SUCCESS"
    assert _states(host, execution_id) == {"wait": "ERROR", "stop": "SUCCESS",
                                           "handled": "SUCCESS"}


@pytest.mark.parametrize("concurrency", [None, 1])
def test_pause_while_items_wait_then_complete_them(host: Host, tmp_path: Path,
                                                   concurrency: int | None) -> None:
    """A ``with-items`` task whose items wait for clients, its execution PAUSED: once
    every started item is completed it reads SUCCESS while the execution stays PAUSED.
    With a ``concurrency`` (an item not started yet), a completion starts no new action
    while the execution is paused: the task waits for the resume, which starts it."""
    width = f"concurrency: {concurrency}" if concurrency else ""
    execution_id = _start(host, tmp_path, f"""
    workflows:
      wf:
        tasks:
          wait:
            with-items: i in [1, 2]
            {width}
            action: std.async_noop
            on-success: [after]
          stop:
            action: std.noop
            on-success: [pause]
          after:
            action: std.echo output=<% task(wait).result %>
    """)
    _until_paused(host, execution_id)
    _waiting(host, execution_id, "wait", count=concurrency or 2)
    host.tasks.complete(execution_id, "wait", "SUCCESS", "one", item=0)
    assert host.executions.get(execution_id).state == "PAUSED"
    assert _states(host, execution_id)["wait"] == "RUNNING"
    store = host._session.runner().store.async_actions
    if concurrency:
        assert [a.item for a in store.of_task(execution_id, "wait")] == [0]  # none started
        host.executions.resume(execution_id, wait=False)
        _waiting(host, execution_id, "wait")
    else:
        assert _waiting(host, execution_id, "wait").waiting[0]["item"] == 1
    host.tasks.complete(execution_id, "wait", "SUCCESS", "two", item=1)
    if not concurrency:
        assert host.executions.get(execution_id).state == "PAUSED"
        assert _states(host, execution_id) == {"wait": "SUCCESS", "stop": "SUCCESS"}
        host.executions.resume(execution_id)
    execution = _ended(host, execution_id)
    assert execution.state == "SUCCESS"
    results = {t.name: t.result for t in host.tasks.list(execution_id)}
    assert results["wait"] == results["after"] == ["one", "two"]


def test_pause_while_waiting_then_fail_a_retried_task(host: Host, tmp_path: Path) -> None:
    """A task with a ``retry`` completed in ERROR while its execution is PAUSED starts
    no new attempt (no action) while paused: it waits for the resume, whose retry
    starts the next attempt's action."""
    execution_id = _start(host, tmp_path, """
    workflows:
      wf:
        tasks:
          wait:
            action: std.async_noop
            retry: {count: 1}
          stop:
            action: std.noop
            on-success: [pause]
    """)
    _until_paused(host, execution_id)
    _waiting(host, execution_id, "wait")
    host.tasks.complete(execution_id, "wait", "ERROR", "try again")
    assert host.executions.get(execution_id).state == "PAUSED"
    store = host._session.runner().store.async_actions
    assert [a.attempt for a in store.of_task(execution_id, "wait")] == [1]
    host.executions.resume(execution_id, wait=False)
    assert _waiting(host, execution_id, "wait").waiting[0]["attempt"] == 2
    host.tasks.complete(execution_id, "wait", "SUCCESS", "ok")
    assert _ended(host, execution_id).state == "SUCCESS"


def test_an_ended_execution_cancels_what_still_waits(host: Host, tmp_path: Path) -> None:
    """A branch fails while another waits: the waiting task stops (its action
    execution CANCELLED, a late completion refused) and the workflow fails."""
    text = """
    workflows:
      wf:
        tasks:
          wait:
            action: std.async_noop
          boom:
            action: std.sleep seconds=1
            on-success: [fail]
    """
    execution_id = _start(host, tmp_path, text)
    execution = _ended(host, execution_id)
    assert execution.state == "ERROR"
    actions = host._session.runner().store.async_actions.of_task(execution_id, "wait")
    assert [a.state for a in actions] == ["CANCELLED"]
    with pytest.raises(exceptions.Conflict, match="CANCELLED"):
        host.tasks.complete(execution_id, "wait", "SUCCESS", 1)
    assert json.dumps(actions[0].output).startswith('"cancelled')
