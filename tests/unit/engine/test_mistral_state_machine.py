"""Conformance with Mistral's engine tests (issue 26): direct workflows as a state
machine (:mod:`tripleo_flow.engine.compile.state_machine`).

Each test runs, on the real engine with the executions database, the workflow of
the Mistral test its docstring names (mistral/tests/unit/engine/...) and asserts
its outcome.  The N-th execution of a task reads
``task[N]``.  Deliberate difference, kept from the compiled engine and named in
``test_an_impossible_join_fails_it_and_the_workflow``: a failed workflow reverts
what its completed task executions did (each still reads as Mistral's, with its
record's ``reverted``), once the other
branches went on to their end as Mistral's do: an unhandled error means the run is
wrong, and undoing what it did is what a deployment tool's user wants rather than
a half-run plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_conformance import FAILED, Run
from tripleo_flow import exceptions


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    host = Host(tmp_path / "data", ACTIONS)
    yield host
    host._session.close_workflows()


def _install(host: Host, tmp_path: Path, name: str, workflows: str) -> None:
    """Install workbook ``name`` with ``workflows`` (YAML under ``workflows:``)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"version: '2.0'\nname: {name}\nworkflows:\n{workflows}")
    host.workbooks.create(path)


def _runs(run: Run, task: str) -> list[str]:
    return [name for name in run.tasks if name == task or name.startswith(task + "[")]


def test_simple_cycle(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow_with_cycles.py: test_simple_cycle."""
    run = Run(host, tmp_path, """
        wf:
          input:
            - num_of_cycles
          output:
            abc: <% $.counter %>
          tasks:
            initialize:
              publish:
                counter: 0
              on-success:
                - increment
            increment:
              action: std.noop
              publish:
                counter: <% $.counter + 1 %>
              on-success:
                - increment: <% $.counter < $.num_of_cycles %>
        """, num_of_cycles=21)
    assert run.state == "SUCCESS"
    assert run.output == {"abc": 21}
    assert len(_runs(run, "increment")) == 21
    assert len(run.tasks) == 22
    assert set(run.tasks.values()) == {"SUCCESS"}
    assert run.published["increment[21]"] == {"counter": 21}


def test_complex_cycle(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow_with_cycles.py: test_complex_cycle."""
    run = Run(host, tmp_path, """
        wf:
          vars:
            cnt: 0
          output:
            cnt: <% $.cnt %>
          tasks:
            task1:
              on-complete:
                - task2
            task2:
              action: std.echo output=2
              publish:
                cnt: <% $.cnt + 1 %>
              on-success:
                - task3
            task3:
              action: std.echo output=3
              on-complete:
                - task4
            task4:
              action: std.echo output=4
              on-success:
                - task2: <% $.cnt < 2 %>
                - task5: <% $.cnt >= 2 %>
            task5:
              action: std.echo output=<% $.cnt %>
        """)
    assert run.state == "SUCCESS"
    assert run.output == {"cnt": 2}
    assert [len(_runs(run, t)) for t in ("task1", "task2", "task3", "task4", "task5")] == \
        [1, 2, 2, 2, 1]
    assert len(run.tasks) == 8
    assert run.results["task5"] == 2


def test_parallel_cycles(host: Host, tmp_path: Path) -> None:
    """Ported from test_direct_workflow_with_cycles.py: test_parallel_cycles (each
    branch loops on its own copy of 'cnt')."""
    run = Run(host, tmp_path, """
        wf:
          vars:
            cnt: 0
          output:
            cnt: <% $.cnt %>
          tasks:
            task1:
              on-complete:
                - task1_2
                - task2_2
            task1_2:
              action: std.echo output=2
              publish:
                cnt: <% $.cnt + 1 %>
              on-success:
                - task1_3
            task1_3:
              action: std.echo output=3
              on-success:
                - task1_2: <% $.cnt < 2 %>
            task2_2:
              action: std.echo output=2
              publish:
                cnt: <% $.cnt + 1 %>
              on-success:
                - task2_3
            task2_3:
              action: std.echo output=3
              on-success:
                - task2_2: <% $.cnt < 3 %>
        """)
    assert run.state == "SUCCESS"
    assert [len(_runs(run, t)) for t in ("task1", "task1_2", "task1_3", "task2_2",
                                         "task2_3")] == [1, 2, 2, 3, 3]
    assert len(run.tasks) == 11
    assert run.output["cnt"] in (2, 3)  # Mistral's test allows either


def test_a_task_reached_from_three_tasks_runs_three_times(host: Host, tmp_path: Path
                                                          ) -> None:
    """Mistral's direct workflow: a task execution per transition that fires (no join);
    each sees the context of the task that fired it."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            a:
              publish: {who: a}
              on-success: [last]
            b:
              publish: {who: b}
              on-success: [last]
            c:
              publish: {who: c}
              on-success: [last]
            last:
              action: std.echo output=<% $.who %>
        """)
    assert run.state == "SUCCESS"
    assert len(_runs(run, "last")) == 3
    assert sorted(run.results[name] for name in _runs(run, "last")) == ["a", "b", "c"]


def test_full_join_parallel_published_vars_complex(host: Host, tmp_path: Path) -> None:
    """Ported from test_join.py: test_full_join_parallel_published_vars_complex: at a
    join each branch's own published value wins over another branch's old copy."""
    run = Run(host, tmp_path, """
        wf:
          output:
            var_a: <% $.var_a %>
            var_b: <% $.var_b %>
            var_c: <% $.var_c %>
            var_d: <% $.var_d %>
          tasks:
            init:
              publish: {var_a: 0, var_b: 0, var_c: 0}
              on-success: [branch1_0, branch2_0]
            branch1_0:
              publish: {var_c: 1}
              on-success: [branch1_1]
            branch2_0:
              publish: {var_a: 1}
              on-success: [done]
            branch1_1:
              publish: {var_b: 1}
              on-success: [done]
            done:
              join: all
              publish: {var_d: 1}
        """)
    assert run.state == "SUCCESS"
    assert run.output == {"var_a": 1, "var_b": 1, "var_c": 1, "var_d": 1}
    assert len(_runs(run, "done")) == 1


def test_partial_join(host: Host, tmp_path: Path) -> None:
    """Ported from test_join.py: test_partial_join ('join: 2' fires after two of its
    three inbound transitions)."""
    run = Run(host, tmp_path, """
        wf:
          output:
            result: <% $.result4 %>
          tasks:
            task1:
              action: std.echo output=1
              publish: {result1: <% task(task1).result %>}
              on-complete: [task4]
            task2:
              action: std.echo output=2
              publish: {result2: <% task(task2).result %>}
              on-complete: [task4]
            task3:
              action: std.fail
              on-success: [task4]
              on-error: [noop]
            task4:
              join: 2
              action: std.echo output="<% $.result1 %>,<% $.result2 %>"
              publish: {result4: <% task(task4).result %>}
        """)
    assert run.state == "SUCCESS"
    assert run.output == {"result": "1,2"}
    assert run.tasks == {"task1": "SUCCESS", "task2": "SUCCESS", "task3": "ERROR",
                         "task4": "SUCCESS"}
    assert run.published["task4"] == {"result4": "1,2"}


def test_discriminator(host: Host, tmp_path: Path) -> None:
    """Ported from test_join.py: test_discriminator ('join: one' runs once)."""
    run = Run(host, tmp_path, """
        wf:
          output:
            result: <% $.result4 %>
          tasks:
            task1:
              publish: {result1: 1}
              on-complete: [task4]
            task2:
              publish: {result2: 2}
              on-complete: [task4]
            task3:
              publish: {result3: 3}
              on-complete: [task4]
            task4:
              join: one
              action: std.echo
              input:
                output: <% [$.get(result1), $.get(result2), $.get(result3)] %>
              publish: {result4: <% task(task4).result %>}
        """)
    assert run.state == "SUCCESS"
    assert len(_runs(run, "task4")) == 1 and len(run.tasks) == 4
    assert 1 <= len([v for v in run.output["result"] if v is not None]) < 3


def test_an_impossible_join_fails_it_and_the_workflow(host: Host, tmp_path: Path) -> None:
    """Ported from test_join.py: test_full_join_with_conditions: the task2 -> task3
    transition never fires, so the join fails and so does the workflow, once task4
    (ready when the join failed) has run, as Mistral's; ours then reverts (the
    deliberate difference of the module docstring)."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.echo output=1
              publish: {result1: <% task(task1).result %>}
              on-complete: [task3]
            task2:
              action: std.echo output=2
              publish: {result2: <% task(task2).result %>}
              on-complete:
                - task3: <% $.result2 = 11111 %>
                - task4: <% $.result2 = 2 %>
            task3:
              join: all
              action: std.echo output="<% $.result1 %>-<% $.result1 %>"
            task4:
              action: std.echo output=4
        """)
    assert run.state == FAILED
    # (the failed join reads ERROR with its error, the completed tasks SUCCESS, as
    # Mistral's; ours undid them: their records' ``reverted``)
    assert run.tasks == {"task1": "SUCCESS", "task2": "SUCCESS", "task3": "ERROR",
                         "task4": "SUCCESS"}
    assert run.error is not None and run.error.task == "task3"
    assert "join 'task3' can no longer fire" in str(run.error)


def test_an_impossible_join_with_on_error_is_handled(host: Host, tmp_path: Path) -> None:
    """A failed join's 'on-error' decides what follows, as for any failed task."""
    run = Run(host, tmp_path, """
        wf:
          output:
            handled: <% $.handled %>
          tasks:
            task1:
              on-success:
                - join_task: <% false %>
                - other
            other:
              on-success: [join_task]
            join_task:
              join: all
              on-error: [handler]
            handler:
              publish: {handled: true}
        """)
    assert run.state == "SUCCESS"
    assert run.output == {"handled": True}
    assert run.tasks["join_task"] == "ERROR"


def test_engine_commands_apply_in_list_order(host: Host, tmp_path: Path) -> None:
    """Ported from test_commands.py (test_fail) with a task listed before 'fail': it
    still starts (as Mistral), what follows 'fail' never does, and the task that took
    'fail' keeps its own state: it succeeded (ours then reverts it)."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            task1:
              action: std.echo output=1
              on-complete:
                - task2
                - fail
                - task3
            task2:
              action: std.echo output=2
            task3:
              action: std.echo output=3
            other:
              action: std.echo output=0
              on-success: [task1]
            start:
              on-success: [other, task1]
        """)
    assert run.state == FAILED
    assert "reached a 'fail' transition" in str(run.error)
    assert run.tasks["task2"] == "SUCCESS"  # undone (``reverted``): Mistral's SUCCESS
    assert "task3" not in run.tasks
    assert run.error is not None and run.error.task in ("task1", "task1[2]")


def test_pause_command_then_resume(host: Host, tmp_path: Path) -> None:
    """Ported from test_commands.py: test_pause: the task after 'pause' starts when the
    execution is resumed; in a loop the pause is taken at each iteration."""
    _install(host, tmp_path, "paused", """
  wf:
    input:
      - n: 0
    output:
      n: <% $.n %>
    tasks:
      start:
        on-success: [task1]
      task1:
        action: std.echo output=1
        publish: {n: <% $.n + 1 %>}
        on-complete:
          - pause
          - task1: <% $.n < 2 %>
          - task2: <% $.n >= 2 %>
      task2:
        action: std.echo output=2
""")
    execution = host.executions.create("paused.wf", {})
    assert execution.state == "PAUSED"
    assert [t.name for t in host.tasks.list(execution.id)] == ["start", "task1"]
    execution = host.executions.resume(execution.id)
    assert execution.state == "PAUSED"
    execution = host.executions.resume(execution.id)
    assert execution.state == "SUCCESS"
    assert execution.output == {"n": 2}
    assert [t.name for t in host.tasks.list(execution.id)] == \
        ["start", "task1", "task1[2]", "task2"]


def test_partial_join_triggers_once(host: Host, tmp_path: Path) -> None:
    """Ported from test_join.py: test_partial_join_triggers_once ('join: 2' of four
    inbound transitions runs once, seeing at least two branches)."""
    run = Run(host, tmp_path, """
        wf:
          output:
            result: <% $.result5 %>
          tasks:
            task1:
              publish: {result1: 1}
              on-complete: [task5]
            task2:
              publish: {result2: 2}
              on-complete: [task5]
            task3:
              publish: {result3: 3}
              on-complete: [task5]
            task4:
              publish: {result4: 4}
              on-complete: [task5]
            task5:
              join: 2
              action: std.echo
              input:
                output: <% [$.get(result1), $.get(result2), $.get(result3), $.get(result4)] %>
              publish: {result5: <% task(task5).result %>}
        """)
    assert run.state == "SUCCESS"
    assert len(run.tasks) == 5 and len(_runs(run, "task5")) == 1
    assert len([v for v in run.output["result"] if v is not None]) >= 2


def test_join_after_join(host: Host, tmp_path: Path) -> None:
    """Ported from test_join.py: test_join_after_join."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            a: {on-success: [c]}
            b: {on-success: [c]}
            c: {join: all, on-success: [f]}
            d: {on-success: [f]}
            e: {on-success: [f]}
            f: {join: all}
        """)
    assert run.state == "SUCCESS"
    assert run.tasks == dict.fromkeys("abcdef", "SUCCESS")


def test_retry_and_with_items_inside_a_loop(host: Host, tmp_path: Path) -> None:
    """Each task execution of a loop runs its own retries and items."""
    counter = tmp_path / "calls"
    run = Run(host, tmp_path, """
        wf:
          input:
            - counter
            - n: 0
          output:
            n: <% $.n %>
            items: <% $.items %>
          tasks:
            start:
              on-success: [flaky]
            flaky:
              action: test.flaky
              input: {counter: <% $.counter %>, failures: 1}
              retry: {count: 2, delay: 0}
              on-success: [each]
            each:
              with-items: i in <% range($.n + 1) %>
              action: std.echo output=<% $.i %>
              publish:
                n: <% $.n + 1 %>
                items: <% task().result %>
              on-success:
                - flaky: <% $.n < 3 %>
        """, counter=str(counter))
    assert run.state == "SUCCESS"
    assert run.output == {"n": 3, "items": [0, 1, 2]}
    assert len(_runs(run, "flaky")) == 3
    assert counter.read_text() == "4"  # one failure, then three successes


def test_succeed_ends_a_loop_after_the_tasks_listed_before_it(host: Host, tmp_path: Path
                                                              ) -> None:
    """Ported from test_commands.py: test_succeed, in a loop: the workflow ends SUCCESS,
    a task listed before 'succeed' still runs, one after it never does."""
    run = Run(host, tmp_path, """
        wf:
          input:
            - n: 0
          output:
            n: <% $.n %>
          tasks:
            start:
              on-success: [count]
            count:
              publish: {n: <% $.n + 1 %>}
              on-success:
                - count: <% $.n < 3 %>
                - done: <% $.n >= 3 %>
                - succeed: <% $.n >= 3 %>
                - never: <% $.n >= 3 %>
            done:
              action: std.echo output="done"
            never:
              action: std.echo output="never"
        """)
    assert run.state == "SUCCESS"
    assert run.tasks == {"start": "SUCCESS", "count": "SUCCESS", "count[2]": "SUCCESS",
                         "count[3]": "SUCCESS", "done": "SUCCESS"}
    assert run.output == {"n": 3}


def test_an_unhandled_error_lets_the_other_branches_finish_then_reverts(
        host: Host, tmp_path: Path) -> None:
    """Mistral's engine (check_and_complete: a workflow ends once no task execution
    is incomplete) lets the looping branch go on to its end after 'broken' fails, then
    reports ERROR; ours does the same, then undoes what ran, newest first (the
    deliberate difference of the module docstring)."""
    log = tmp_path / "effects.log"
    run = Run(host, tmp_path, """
        wf:
          input:
            - log
            - n: 0
          tasks:
            start:
              on-success: [step, broken]
            step:
              action: test.record
              input: {path: <% $.log %>, value: step-<% $.n %>}
              publish: {n: <% $.n + 1 %>}
              on-success:
                - step: <% $.n < 20 %>
            broken:
              action: std.fail
        """, log=str(log))
    assert run.state == FAILED
    assert run.error is not None and run.error.task == "broken" and run.error.reverted
    assert "std.fail was called" in str(run.error)
    effects = log.read_text().splitlines()
    done = [f"step-{n}" for n in range(20)]  # the loop ran to its end
    assert effects == [f"do {v}" for v in done] + [f"undo {v}" for v in reversed(done)]
    assert run.tasks["broken"] == "ERROR"  # failed, its error kept (Mistral's ERROR)


def test_progress_events_name_each_task_execution(host: Host, tmp_path: Path) -> None:
    """Listeners hear every task execution of a loop start and end, by its own name."""
    _install(host, tmp_path, "events", """
  wf:
    input:
      - n: 0
    tasks:
      start:
        on-success: [count]
      count:
        action: std.echo output=<% $.n %>
        publish: {n: <% $.n + 1 %>}
        on-success:
          - count: <% $.n < 2 %>
""")
    heard: list[tuple[str, str, object]] = []
    execution = host.executions.create("events.wf", {}, listeners=[
        lambda event: heard.append((event.task, event.event, event.result))])
    assert execution.state == "SUCCESS"
    assert [(task, event) for task, event, _ in heard] == [
        ("start", "started"), ("start", "succeeded"), ("count", "started"),
        ("count", "succeeded"), ("count[2]", "started"), ("count[2]", "succeeded")]
    assert [result for task, event, result in heard if event == "succeeded"] == \
        [None, 0, 1]


def test_pause_before_inside_a_loop(host: Host, tmp_path: Path) -> None:
    """'pause-before' on a task execution of a loop pauses the execution once, where
    its condition holds; resumed, that task execution starts and the loop goes on."""
    _install(host, tmp_path, "gate", """
  wf:
    input:
      - n: 0
    output:
      n: <% $.n %>
    tasks:
      start:
        on-success: [count]
      count:
        pause-before: <% $.n = 1 %>
        action: std.echo output=<% $.n %>
        publish: {n: <% $.n + 1 %>}
        on-success:
          - count: <% $.n < 3 %>
""")
    execution = host.executions.create("gate.wf", {})
    assert execution.state == "PAUSED"
    assert [(t.name, t.state) for t in host.tasks.list(execution.id)] == [
        ("start", "SUCCESS"), ("count", "SUCCESS"), ("count[2]", "PENDING")]
    done = host.executions.resume(execution.id)
    assert done.state == "SUCCESS" and done.output == {"n": 3}
    assert [t.name for t in host.tasks.list(execution.id)] == [
        "start", "count", "count[2]", "count[3]"]


def test_globals_published_in_a_loop_are_the_latest(host: Host, tmp_path: Path) -> None:
    """A value a loop publishes to the global scope reads as its latest value, with
    global() and as $.name (the workflow's output too)."""
    run = Run(host, tmp_path, """
        wf:
          input:
            - n: 0
          output:
            total: <% $.total %>
            seen: <% global(total) %>
          tasks:
            start:
              on-success: [count]
            count:
              publish: {n: <% $.n + 1 %>}
              on-success:
                publish:
                  global: {total: <% $.n + 1 %>}  # over the inbound context
                next:
                  - count: <% $.n < 3 %>
        """)
    assert run.state == "SUCCESS"
    assert run.output == {"total": 3, "seen": 3}


def test_a_join_failed_by_a_branch_keeps_that_branchs_error_kind(host: Host,
                                                                   tmp_path: Path) -> None:
    """Two branches joined: one fails with an error of its own kind (std.fail's
    ActionFailed), so the join can no longer fire (JoinFailed).  The workflow's error
    names both, as Mistral's state_info does, and keeps the branch's kind and next
    steps (the join's failure is its consequence): a deploy's Heat launch beside its
    plan check fails as the launch failed, with its exit code and hints."""
    run = Run(host, tmp_path, """
        wf:
          tasks:
            start:
              on-success: [broken, fine]
            broken:
              action: std.fail error_data="no such thing"
              on-success: [joined]
            fine:
              action: std.noop
              on-success: [joined]
            joined:
              join: all
              action: std.noop
        """)
    assert run.state == FAILED
    cause = run.error.__cause__ if run.error is not None else None
    assert isinstance(cause, exceptions.ActionFailed), (type(cause), cause)
    assert "join 'joined' can no longer fire" in str(cause) and "broken" in str(cause)
