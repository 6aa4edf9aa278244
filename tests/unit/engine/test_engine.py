"""Workbook semantics on the real TaskFlow engine with SQLite persistence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tests.virtual_clock import VirtualClock
from tripleo_flow import exceptions


@pytest.fixture
def host(tmp_path: Path) -> Any:
    host = Host(tmp_path / "data")
    host.install("engine_demo")
    yield host
    host._session.close_workflows()


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "side-effects.log"


def lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_linear_success_publishes_and_outputs(host: Any, log: Path) -> None:
    execution = host.executions.create("linear", {"log": str(log)})
    assert execution.state == "SUCCESS"
    assert execution.output == {"last": "c"}
    assert lines(log) == ["do a", "do b", "do c"]
    tasks = {t.name: t for t in host.tasks.list(execution.id)}
    assert [t.state for t in tasks.values()] == ["SUCCESS"] * 3
    assert tasks["b"].published == {"last": "b"}


@pytest.mark.parametrize("fail_at, expected", [
    ("a", []),
    ("b", ["do a", "undo a"]),
    ("c", ["do a", "do b", "undo b", "undo a"]),
])
def test_failure_reverts_completed_tasks_in_reverse_order(host: Any, log: Path, fail_at: str,
                                                          expected: list[str]) -> None:
    with pytest.raises(exceptions.WorkflowFailed) as info:
        host.executions.create("linear", {"log": str(log), "fail_at": fail_at})
    assert lines(log) == expected
    assert info.value.task == fail_at
    assert info.value.reverted is True
    assert f"boom {fail_at}" in str(info.value)
    execution = host.executions.list()[-1]
    # Mistral's ERROR; that its completed tasks were undone is ``reverted``
    assert (execution.state, execution.reverted) == ("ERROR", True)
    assert execution.failed_task == fail_at
    with pytest.raises(exceptions.Conflict, match=r"has already ended \(ERROR\)"):
        host._session.runner().resumable(execution.id)  # nothing to resume


def test_a_revert_gets_the_inputs_the_action_was_given(host: Any, log: Path) -> None:
    """Inputs are kept with the outcome: evaluating them again (``random()`` here, a
    context that moved on in general) would undo something else."""
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create("revert_inputs", {"log": str(log)})
    done = [line.split(" ", 1)[1] for line in lines(log) if line.startswith("do ")]
    undone = [line.split(" ", 1)[1] for line in lines(log) if line.startswith("undo ")]
    assert len(done) == 3 and len(set(done)) == 3
    # ``draw`` ran first and is undone last; the two items of ``many`` run at once (as
    # Mistral runs a with-items without concurrency), so their order is the scheduler's.
    assert undone[-1] == done[0] and sorted(undone[:-1]) == sorted(done[1:])
    assert len(undone) == 3
    execution = host.executions.list()[-1]
    tasks = {t.name: t for t in host.tasks.list(execution.id)}
    assert (tasks["draw"].state, tasks["draw"].reverted) == ("SUCCESS", True)  # Mistral's


def test_handled_error_goes_on_error_path(host: Any, log: Path) -> None:
    execution = host.executions.create("handled", {"log": str(log)})
    assert execution.state == "SUCCESS"
    assert execution.output == {"status": "recovered from disk full"}  # the error data
    assert lines(log) == ["do a", "do cleanup"]
    states = {t.name: t.state for t in host.tasks.list(execution.id)}
    assert states == {"a": "SUCCESS", "broken": "ERROR", "cleanup": "SUCCESS",
                      "not_here": "SKIPPED"}


def test_conditions_and_joins(host: Any, log: Path) -> None:
    """A task no transition reached has no execution (Mistral's state machine)."""
    execution = host.executions.create("branches", {"log": str(log), "size": 5})
    assert sorted(lines(log)) == ["do always", "do big", "do join_all", "do join_any"]
    assert {t.name for t in host.tasks.list(execution.id)} == {
        "check", "big", "always", "join_all", "join_any"}


def test_a_join_that_can_no_longer_fire_fails_the_workflow(host: Any, log: Path) -> None:
    """size 1: 'big' never runs, so 'join_all' can never fire: it fails, and with no
    'on-error' the workflow fails (as in Mistral) and reverts what ran (ours)."""
    with pytest.raises(exceptions.WorkflowFailed) as info:
        host.executions.create("branches", {"log": str(log), "size": 1})
    assert info.value.task == "join_all"
    assert "join 'join_all' can no longer fire: failed by tasks ['big']" in str(info.value)
    done = [line[3:] for line in lines(log) if line.startswith("do ")]
    assert {"small", "always"} <= set(done) and "big" not in done
    assert sorted(line[5:] for line in lines(log) if line.startswith("undo ")) == sorted(done)


def test_retry_until_success(host: Any, tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    execution = host.executions.create("retried", {"counter": str(counter), "failures": 2})
    assert execution.output == {"calls": 3}


def test_retry_gives_up_after_count(host: Any, tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    with pytest.raises(exceptions.WorkflowFailed) as info:
        host.executions.create("retried", {"counter": str(counter), "failures": 10})
    assert counter.read_text() == "4"  # 1 try + 3 retries
    assert "flaky call 4" in str(info.value)


def test_retry_continue_on_repeats_while_condition_holds(host: Any, tmp_path: Path) -> None:
    execution = host.executions.create("polling", {"counter": str(tmp_path / "calls")})
    assert execution.output == {"calls": 3}


@pytest.mark.parametrize("width", [1, 3])
def test_with_items_runs_each_item(host: Any, log: Path, width: int) -> None:
    execution = host.executions.create("items", {"log": str(log), "width": width})
    assert execution.output == {"done": ["x", "y", "z"]}
    assert sorted(lines(log)) == ["do first", "do x", "do y", "do z"]


def test_with_items_failure_undoes_done_items_then_earlier_tasks(host: Any, log: Path) -> None:
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create("items", {"log": str(log), "fail_on": "z"})
    assert lines(log) == ["do first", "do x", "do y", "undo y", "undo x", "undo first"]


def test_reverse_workflow_runs_requirements_of_target(host: Any, log: Path) -> None:
    host.executions.create("reverse_build", {"log": str(log)}, target="compile")
    assert lines(log) == ["do fetch", "do compile"]
    log.unlink()
    host.executions.create("reverse_build", {"log": str(log)})
    assert set(lines(log)) == {"do fetch", "do compile", "do test", "do docs"}
    assert lines(log).index("do fetch") < lines(log).index("do compile") < \
        lines(log).index("do test")


def test_subworkflow_output_is_the_task_result(host: Any, log: Path) -> None:
    execution = host.executions.create("parent", {"log": str(log)})
    assert execution.output == {"got": "HI"}
    assert lines(log) == ["do before", "do inner-hi"]


def test_subworkflow_failure_reverts_parent_tasks(host: Any, log: Path) -> None:
    with pytest.raises(exceptions.WorkflowFailed) as info:
        host.executions.create("parent", {"log": str(log), "fail_child": True})
    assert lines(log) == ["do before", "undo before"]
    assert info.value.task == "call/inner"


@pytest.mark.parametrize("mode, expected", [
    ("fail", ["do a", "undo a"]),
    ("succeed", ["do a"]),
    ("other", ["do a", "do b"]),
])
def test_fail_and_succeed_commands(host: Any, log: Path, mode: str,
                                   expected: list[str]) -> None:
    if mode == "fail":
        with pytest.raises(exceptions.WorkflowFailed, match="'fail' transition"):
            host.executions.create("commands", {"log": str(log), "mode": mode})
    else:
        assert host.executions.create("commands", {"log": str(log),
                                                   "mode": mode}).state == "SUCCESS"
    assert lines(log) == expected


def test_succeed_ends_the_whole_workflow_in_every_branch(host: Any, log: Path) -> None:
    # Mistral's succeed ends the workflow: the slow branch's next task never starts.
    execution = host.executions.create("ends_everywhere", {"log": str(log)})
    assert execution.state == "SUCCESS"
    assert execution.output == {"said": "quick"}
    assert lines(log) == ["do quick"]
    states = {t.name: t.state for t in host.tasks.list(execution.id)}
    assert states["quick"] == states["slow"] == "SUCCESS"
    assert states["after_slow"] != "ERROR"  # it never ran: the log above has no after-slow


def test_succeed_in_a_subworkflow_ends_only_that_one(host: Any, log: Path) -> None:
    execution = host.executions.create("ends_child_only", {"log": str(log)})
    assert execution.state == "SUCCESS"
    assert lines(log) == ["do first", "do after-call"]


@pytest.mark.real_clock
def test_timeout_fails_the_task(host: Any) -> None:
    """On the real clock (the one engine test that waits a timeout out): the action
    sleeps 1 s, its task's 0.2 s timeout fails it."""
    with pytest.raises(exceptions.WorkflowFailed, match="timed out after 0.2 s"):
        host.executions.create("slow", {})


def test_a_timeout_is_waited_on_the_engine_s_clock(host: Any,
                                                    virtual_clock: VirtualClock) -> None:
    """The same run on the virtual clock: the timeout fires as on the real one, its
    seconds skipped rather than waited (the engine waits through its clock)."""
    with pytest.raises(exceptions.WorkflowFailed, match="timed out after 0.2 s"):
        host.executions.create("slow", {})
    assert virtual_clock.skipped > 0


@pytest.mark.parametrize("inputs, message", [
    ({}, "needs input 'log'"),
    ({"log": "x", "colour": 1}, "has no input 'colour'"),
])
def test_bad_inputs_are_refused_before_running(host: Any, inputs: dict[str, Any],
                                               message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        host.executions.create("linear", inputs)
    assert host.executions.list() == []


def test_a_missing_input_names_how_to_pass_it_in_each_interface(host: Any) -> None:
    with pytest.raises(exceptions.InvalidInput) as refused:
        host.executions.create("linear", {})
    name = refused.value.render(exceptions.API).split("'")[1]  # the workflow's full name
    assert refused.value.render(exceptions.CLI).endswith(
        f"Pass it with: tripleo-flow workflow run {name} --input log=VALUE.")
    assert refused.value.render(exceptions.API).endswith(
        f'Pass it with: POST /v1/workflows/{name}/executions with {{"input": {{"log": VALUE}}}}.')
    assert "--input" not in refused.value.render(exceptions.API)


def test_unknown_workflow(host: Any) -> None:
    with pytest.raises(exceptions.WorkflowNotFound, match="tripleo-flow workflow list"):
        host.executions.create("nope", {})


def test_listeners_receive_progress_events(host: Any, log: Path) -> None:
    events: list[Any] = []
    host.executions.create("handled", {"log": str(log)}, listeners=[events.append])
    seen = [(e.task, e.event) for e in events]
    assert ("a", "started") in seen and ("a", "succeeded") in seen
    assert ("broken", "failed") in seen
    assert ("not_here", "skipped") in seen
    assert seen.index(("a", "succeeded")) < seen.index(("broken", "started"))


def test_listeners_see_reverts(host: Any, log: Path) -> None:
    events: list[Any] = []
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create("linear", {"log": str(log), "fail_at": "b"},
                               listeners=[events.append])
    seen = [(e.task, e.event) for e in events]
    assert ("b", "failed") in seen and ("a", "reverted") in seen


def test_run_without_waiting(host: Any, log: Path) -> None:
    execution = host.executions.create("linear", {"log": str(log)}, wait=False)
    assert execution.state in ("PENDING", "RUNNING", "SUCCESS")
    host._session.runner().wait_background(30)
    assert host.executions.get(execution.id).state == "SUCCESS"


def test_executions_survive_reopening(host: Any, log: Path, tmp_path: Path) -> None:
    done = host.executions.create("linear", {"log": str(log)})
    host._session.close_workflows()
    again = Host(tmp_path / "data")
    try:
        record = again.executions.get(done.id)
        assert (record.workflow, record.state, record.input) == (
            "engine_demo.linear", "SUCCESS", {"log": str(log)})
        assert [t.name for t in again.tasks.list(done.id)] == ["a", "b", "c"]
        assert (tmp_path / "data" / "executions.sqlite").exists()
    finally:
        again._session.close_workflows()


def test_resume_of_finished_execution_returns_it_unchanged(host: Any, log: Path) -> None:
    """Mistral's resume of an ended workflow returns it as it is (issue 26)."""
    done = host.executions.create("linear", {"log": str(log)})
    ran = log.read_text()
    again = host.executions.resume(done.id)
    assert (again.id, again.state, again.output) == (done.id, done.state, done.output)
    assert log.read_text() == ran  # no task ran again


def test_unknown_execution(host: Any) -> None:
    with pytest.raises(exceptions.ExecutionNotFound):
        host.executions.get("0b7a8f7e-0000-4000-8000-000000000000")


def test_workflow_show_dot(host: Any) -> None:
    dot = host.workflows.dot("handled")
    assert dot.startswith('digraph "engine_demo.handled"')
    assert '"broken" -> "cleanup" [label="on-error"' in dot
