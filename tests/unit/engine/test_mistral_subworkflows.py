"""Conformance with Mistral's engine tests (issue 26): sub-workflows as executions of
their own (:mod:`tripleo_flow.engine.compile.subworkflow`).

Each test runs, on the real engine with the executions database, the workflow of the
Mistral test its docstring names (mistral/tests/unit/engine/...) with its inputs, and
asserts its outcome: ``with-items``, ``retry`` and ``timeout`` apply to a
``workflow:`` task as to an action task, each item and each attempt being one child
execution linked to its parent's task (``parent_id``, ``parent_task``); a workflow
that loops can be a sub-workflow, a looping workflow can call one, and a workflow can
call itself.  Deliberate difference kept: a failed workflow reverts what its completed
tasks did (it reads ERROR as Mistral's; its undo: ``reverted``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tripleo_flow import exceptions

FAILED = "ERROR"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


class Run:
    """How one execution of workflow ``wf`` ended, and its child executions."""

    def __init__(self, host: Host, tmp_path: Path, text: str, **inputs: Any) -> None:
        name = f"subwf_{len(host.workbooks.list())}"
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n"
                        + textwrap.indent(textwrap.dedent(text), "  "))
        host.workbooks.create(path)
        self.error: exceptions.WorkflowFailed | None = None
        try:
            execution = host.executions.create(f"{name}.wf", inputs)
        except exceptions.WorkflowFailed as exc:
            self.error = exc
            execution = next(e for e in reversed(host.executions.list())
                             if e.parent_id is None)
        self.id = execution.id
        execution = host.executions.get(execution.id)
        self.state = execution.state
        self.output = execution.output
        self.tasks = {t.name: t for t in host.tasks.list(execution.id)}
        self.children = [e for e in host.executions.list() if e.parent_id == execution.id]


def test_with_items_over_a_sub_workflow_keeps_item_order(host: Host, tmp_path: Path) -> None:
    """Ported from test_with_items.py: test_with_items_subflow_concurrency_gt_list_length
    and test_subworkflows.py's with-items case: one child execution per item, the
    task's result the children's outputs in item order."""
    run = Run(host, tmp_path, """
        sub:
          input: [name, delay]
          output:
            greeting: <% $.greeting %>
          tasks:
            wait:
              action: std.sleep seconds=<% $.delay %>
              publish:
                greeting: <% 'Hello, ' + $.name %>
        wf:
          input: [names]
          output:
            result: <% $.result %>
          tasks:
            task1:
              with-items: name in <% $.names %>
              concurrency: 3
              workflow: sub
              input:
                name: <% $.name %>
                delay: <% 0.3 - 0.1 * $.names.indexOf($.name) %>
              publish:
                result: <% task().result.greeting %>
        """, names=["John", "Ivan", "Mistral"])
    assert run.state == "SUCCESS", run.error
    assert run.output == {"result": ["Hello, John", "Hello, Ivan", "Hello, Mistral"]}
    assert len(run.children) == 3
    assert {c.parent_task for c in run.children} == {"task1"}
    assert {c.state for c in run.children} == {"SUCCESS"}
    # Listed with their task, in item order (each child's input names its item).
    by_id = {c.id: c for c in run.children}
    assert [by_id[i].input["name"] for i in run.tasks["task1"].executions] == [
        "John", "Ivan", "Mistral"]


def _overlap(children: list[Any]) -> int:
    """The most child executions that ran at once."""
    marks = sorted([(c.created_at, 1) for c in children]
                   + [(c.finished_at, -1) for c in children])
    most = running = 0
    for _at, step in marks:
        running += step
        most = max(most, running)
    return most


def test_with_items_concurrency_bounds_the_child_executions(host: Host,
                                                            tmp_path: Path) -> None:
    """Ported from test_with_items.py: test_with_items_concurrency_2 (over a
    sub-workflow): never more than ``concurrency`` child executions at once."""
    run = Run(host, tmp_path, """
        sub:
          input: [value]
          output: <% $.value * 10 %>
          tasks:
            wait:
              action: std.sleep
              input:
                seconds: 0.2
        wf:
          output:
            result: <% $.result %>
          tasks:
            task1:
              with-items: value in <% range(6) %>
              concurrency: 2
              workflow: sub
              input:
                value: <% $.value %>
              publish:
                result: <% task().result %>
        """)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"result": [0, 10, 20, 30, 40, 50]}
    assert len(run.children) == 6
    assert _overlap(run.children) == 2


def test_retry_starts_a_new_child_execution_per_attempt(host: Host, tmp_path: Path) -> None:
    """Ported from test_policies.py: test_retry_policy_subworkflow_force_fail (count 2:
    three child executions, each failed; the task and the workflow fail)."""
    run = Run(host, tmp_path, """
        sub:
          tasks:
            fail:
              action: std.fail
        wf:
          tasks:
            task1:
              workflow: sub
              retry:
                count: 2
                delay: 0
        """)
    assert run.state == FAILED and run.error is not None and run.error.task == "task1"
    assert len(run.children) == 3
    assert {c.state for c in run.children} == {FAILED}
    assert sorted(c.id for c in run.children) == sorted({c.id for c in run.children})


def test_one_line_retry_until_the_sub_workflow_succeeds(host: Host, tmp_path: Path) -> None:
    """The one-line ``retry: count=N delay=S`` over a sub-workflow that fails twice
    (test_policies.py's retry cases, with a real counter): three child executions, the
    last one's output is the task's result."""
    counter = tmp_path / "counter"
    run = Run(host, tmp_path, """
        sub:
          input: [counter]
          output:
            calls: <% $.calls %>
          tasks:
            flaky:
              action: test.flaky counter=<% $.counter %> failures=2
              publish:
                calls: <% task().result %>
        wf:
          input: [counter]
          output:
            calls: <% $.calls %>
          tasks:
            task1:
              workflow: sub counter=<% $.counter %>
              retry: count=3 delay=0
              publish:
                calls: <% task().result.calls %>
        """, counter=str(counter))
    assert run.state == "SUCCESS", run.error
    assert run.output == {"calls": 3}
    assert [c.state for c in sorted(run.children, key=lambda c: c.created_at or 0)] == [
        FAILED, FAILED, "SUCCESS"]


def test_timeout_fails_a_slow_sub_workflow(host: Host, tmp_path: Path) -> None:
    """Ported from test_policies.py: test_timeout_policy (its task here a sub-workflow
    that sleeps): the task fails at its timeout, and on-error handles it."""
    run = Run(host, tmp_path, """
        sub:
          tasks:
            slow:
              action: std.sleep seconds=3
        wf:
          output:
            handled: <% $.handled %>
          tasks:
            task1:
              workflow: sub
              timeout: 0.5
              on-error: [handle]
            handle:
              action: std.noop
              publish:
                handled: true
        """)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"handled": True}
    assert run.tasks["task1"].state == "ERROR"
    assert "timed out after 0.5 s" in (run.tasks["task1"].error or "")
    assert run.tasks["task1"].finished_at - run.tasks["task1"].started_at < 2.5


def test_a_sub_workflow_that_loops(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow_with_cycles.py: test_simple_cycle, called as a
    sub-workflow (Mistral runs any workflow as a sub-workflow)."""
    run = Run(host, tmp_path, """
        cycle:
          input: [num_of_cycles]
          output:
            abc: <% $.counter %>
          tasks:
            initialize:
              publish:
                counter: 0
              on-success: [increment]
            increment:
              action: std.noop
              publish:
                counter: <% $.counter + 1 %>
              on-success:
                - increment: <% $.counter < $.num_of_cycles %>
        wf:
          output:
            abc: <% $.abc %>
          tasks:
            task1:
              workflow: cycle num_of_cycles=5
              publish:
                abc: <% task().result.abc %>
        """)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"abc": 5}
    assert len(run.children) == 1 and run.children[0].parent_task == "task1"


def test_a_loop_that_calls_a_sub_workflow(host: Host, tmp_path: Path) -> None:
    """A polling loop whose body is a sub-workflow (tripleo-common's Train workbooks
    poll so): one child execution per iteration, each linked to its task execution."""
    run = Run(host, tmp_path, """
        add:
          input: [value]
          output:
            value: <% $.value + 1 %>
          tasks:
            noop:
              action: std.noop
        wf:
          input: [times]
          output:
            counter: <% $.counter %>
          tasks:
            init:
              publish:
                counter: 0
              on-success: [step]
            step:
              workflow: add value=<% $.counter %>
              publish:
                counter: <% task().result.value %>
              on-success:
                - step: <% $.counter < $.times %>
        """, times=4)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"counter": 4}
    assert sorted(c.parent_task for c in run.children) == [
        "step", "step[2]", "step[3]", "step[4]"]


def test_a_recursive_sub_workflow_with_a_stop_condition(host: Host, tmp_path: Path) -> None:
    """A workflow that calls itself until its condition stops it (Mistral allows it;
    test_subworkflows.py's nested cases): factorial of 5 over five nested executions."""
    run = Run(host, tmp_path, """
        wf:
          input: [n]
          output:
            value: <% $.value %>
          tasks:
            check:
              action: std.noop
              on-success:
                - stop: <% $.n <= 1 %>
                - recurse: <% $.n > 1 %>
            stop:
              publish:
                value: 1
            recurse:
              workflow: wf n=<% $.n - 1 %>
              publish:
                value: <% $.n * task().result.value %>
        """, n=5)
    assert run.state == "SUCCESS", run.error
    assert run.output == {"value": 120}
    assert len(run.children) == 1  # its child has one child, and so on
    everything = host.executions.list()
    assert len(everything) == 5


def test_a_failed_parent_undoes_its_completed_child_executions(host: Host,
                                                              tmp_path: Path) -> None:
    """Our deliberate difference (Mistral never reverts): an unhandled failure after
    with-items over a sub-workflow undoes each child's recorded change, newest first."""
    store = tmp_path / "records"
    store.mkdir()
    run = Run(host, tmp_path, """
        sub:
          input: [path, value]
          tasks:
            write:
              action: test.record path=<% $.path %> value=<% $.value %>
        wf:
          input: [path]
          tasks:
            task1:
              with-items: value in <% ['a', 'b'] %>
              concurrency: 1  # one child after the other: a known order to undo
              workflow: sub
              input:
                path: <% $.path %>
                value: <% $.value %>
              retry: count=1
              on-success: [boom]
            boom:
              action: std.fail
        """, path=str(store / "log"))
    assert run.state == FAILED
    assert sorted(c.state for c in run.children) == [FAILED, FAILED]
    assert (store / "log").read_text().split("\n")[:-1] == [
        "do a", "do b", "undo b", "undo a"]


def test_a_signal_during_a_child_execution_stops_the_parent(host: Host,
                                                           tmp_path: Path) -> None:
    """Ctrl-C while a child execution runs stops it and its parent (whose on-error does
    not run: stopping is not an error a workbook handles); both revert."""
    import signal

    from tripleo_flow.engine.compile.interrupt import StopRequest

    log = tmp_path / "log"
    (tmp_path / "sig.yaml").write_text(textwrap.dedent("""
        version: '2.0'
        name: sig
        workflows:
          sub:
            input: [log]
            tasks:
              one:
                action: test.record path=<% $.log %> value='one'
                on-success: [two]
              two:
                action: test.record path=<% $.log %> value='two'
          wf:
            input: [log]
            tasks:
              task1:
                workflow: sub log=<% $.log %>
                retry: count=2
                on-error: [handler]
              handler:
                action: test.record path=<% $.log %> value='handler'
        """))
    host.workbooks.create(tmp_path / "sig.yaml")
    stop = StopRequest("Run of sig.wf")

    def press(event: Any) -> None:
        if event.task == "task1/one" and event.event == "succeeded":
            stop.received = signal.SIGINT

    with pytest.raises(exceptions.WorkflowFailed, match="interrupted by SIGINT"):
        host._session.runner().run("sig.wf", {"log": str(log)}, listeners=[press], stop=stop)
    assert log.read_text().split("\n")[:-1] == ["do one", "undo one"]
    [parent] = [e for e in host.executions.list() if e.parent_id is None]
    [child] = [e for e in host.executions.list() if e.parent_id == parent.id]
    assert (parent.state, child.state) == (FAILED, FAILED)
