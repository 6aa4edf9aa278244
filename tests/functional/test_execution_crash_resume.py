"""kill -9 at every task boundary, resume, and check no side effect happened twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tripleo_flow import exceptions
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.plans.plan import PlanRepository

TASKS = ["t1", "t2", "t3", "t4"]
ROOT = Path(__file__).resolve().parents[2]


def _run_until_killed(data_dir: Path, log: Path, event: str, nth: int,
                      workflow: str = "engine_demo.crash_sample") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "run", str(data_dir),
         workflow, json.dumps({"log": str(log)}), event, str(nth)],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    return json.loads(done.stdout.splitlines()[-1])["killed_after"]


@pytest.mark.parametrize("event", ["started", "succeeded"])
@pytest.mark.parametrize("nth", [1, 2, 3, 4])
def test_kill_at_task_boundary_then_resume(tmp_path: Path, event: str, nth: int) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "effects.log"
    Host(data_dir).install("engine_demo")
    killed_at = _run_until_killed(data_dir, log, event, nth)
    assert killed_at == TASKS[nth - 1]
    host = Host(data_dir)
    try:
        [execution] = host.executions.list()
        assert execution.state == "INTERRUPTED"
        before = log.read_text().splitlines() if log.exists() else []
        done = {t.name for t in host.tasks.list(execution.id) if t.state == "SUCCESS"}
        expected_done = set(TASKS[:nth]) if event == "succeeded" else set(TASKS[:nth - 1])
        assert done == expected_done
        resumed = host.executions.resume(execution.id)
        assert resumed.state == "SUCCESS"
        effects = log.read_text().splitlines()
        assert effects == [f"do {t}" for t in TASKS]  # each side effect exactly once
        assert effects[:len(before)] == before
        assert [t.state for t in host.tasks.list(execution.id)] == ["SUCCESS"] * 4
    finally:
        host._session.close_workflows()


def test_killed_before_its_first_task_reads_interrupted_and_resumes(tmp_path: Path) -> None:
    """It was PENDING for good (and its event stream never ended) (issue 29)."""
    data_dir, log = tmp_path / "data", tmp_path / "effects.log"
    Host(data_dir).install("engine_demo")
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "record-then-die", str(data_dir),
         "engine_demo.crash_sample", json.dumps({"log": str(log)})],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    recorded = json.loads(done.stdout.splitlines()[-1])["recorded"]
    host = Host(data_dir)
    try:
        [execution] = host.executions.list()
        assert (execution.id, execution.state) == (recorded, "INTERRUPTED")
        assert not log.exists()  # no task ran
        assert host.executions.resume(recorded).state == "SUCCESS"
        assert log.read_text().splitlines() == [f"do {t}" for t in TASKS]
    finally:
        host._session.close_workflows()


def test_a_secret_handed_between_tasks_is_not_persisted_and_a_resume_says_so(
        tmp_path: Path) -> None:
    """The live run hands the secret over; the database keeps a mask; a run resumed
    past the task that produced it stops instead of using the mask."""
    from tests.engine_helpers import Secret
    from tripleo_flow import exceptions

    data_dir, log = tmp_path / "data", tmp_path / "effects.log"
    Host(data_dir).install("secret_handoff")
    host = Host(data_dir)
    try:
        done = host.executions.create("handoff", {"log": str(log)})
        assert done.state == "SUCCESS"
        assert log.read_text() == f"do {Secret.VALUE}\n"
        assert done.output == {"used": "<secret>"}
        published = {t.name: t.published for t in host.tasks.list(done.id)}
        assert published == {"get": {"pw": "<secret>"}, "use": {"used": "<secret>"}}
    finally:
        host._session.close_workflows()
    log.unlink()

    killed_at = _run_until_killed(data_dir, log, "succeeded", 1, "secret_handoff.handoff")
    assert killed_at == "get"
    host = Host(data_dir)
    try:
        interrupted = [e for e in host.executions.list() if e.state == "INTERRUPTED"]
        assert len(interrupted) == 1
        with pytest.raises(exceptions.WorkflowFailed, match="does not keep"):
            host.executions.resume(interrupted[0].id)
    finally:
        host._session.close_workflows()
    assert not log.exists()  # the task never ran with the mask
    database = b"".join(f.read_bytes() for f in data_dir.glob("executions.sqlite*"))
    assert Secret.VALUE.encode() not in database



@pytest.mark.parametrize("safe", [True, False])
def test_safe_rerun_false_task_interrupted_is_not_run_again(tmp_path: Path, safe: bool) -> None:
    """``safe-rerun: false`` (Mistral): a task whose action a crash interrupted fails
    when the execution resumes instead of running again; ``true`` runs it again."""
    from tripleo_flow import exceptions

    data_dir, log, marker = tmp_path / "data", tmp_path / "effects.log", tmp_path / "marker"
    Host(data_dir).install("mistral_dsl")
    inputs = {"log": str(log), "marker": str(marker), "safe": safe}
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "run", str(data_dir),
         "mistral_dsl.rerun_sample", json.dumps(inputs), "never", "1"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    assert marker.exists()  # t2's action was running
    host = Host(data_dir)
    try:
        [execution] = host.executions.list()
        if safe:
            assert host.executions.resume(execution.id).state == "SUCCESS"
            assert log.read_text().splitlines() == ["do t1"]
            return
        with pytest.raises(exceptions.WorkflowFailed) as info:
            host.executions.resume(execution.id)
        assert info.value.task == "t2"
        assert "marked 'safe-rerun: false': it is not run again" in str(info.value)
        assert log.read_text().splitlines() == ["do t1", "undo t1"]
    finally:
        host._session.close_workflows()


def test_a_change_killed_before_its_result_was_saved_is_still_undone(tmp_path: Path) -> None:
    """Killed after ``parameters.update`` changed the plan but before the task's result
    (its undo record) was saved: the resumed execution runs the task again, which finds
    the values set already.  A later task fails, and the revert must put back the
    values of before the first run: the re-run took its undo record from the journal
    the first run kept (not from the changed plan)."""
    from tests.plan_trees import basic_tree, write_tree
    from tripleo_flow.engine.store.undo_journal import ExecutionUndoJournal

    data_dir = tmp_path / "data"
    host = Host(data_dir)
    host.install("undo_demo")
    context = host._session.context
    for name, inputs in (
            ("plan.create", {"plan": "p1", "templates": str(write_tree(tmp_path / "t",
                                                                         basic_tree()))}),
            ("plan.publish", {"plan": "p1"}),
            ("parameters.update", {"plan": "p1", "parameters": {"A": 1}})):
        ActionRegistry.load().get(name)(context).execute(**inputs)
    host._session.close_workflows()

    def values() -> dict[str, Any]:
        env = PlanRepository(context.store).environment("p1")
        return dict(env.get("parameter_defaults") or {})

    assert values() == {"A": 1}
    marker = tmp_path / "crashed"
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "run", str(data_dir),
         "undo_demo.change_then_fail", json.dumps({"plan": "p1", "marker": str(marker)}),
         "never", "1"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    assert marker.exists() and values() == {"A": 2, "B": "new"}  # changed, then killed

    host = Host(data_dir)
    try:
        [execution] = host.executions.list()
        assert execution.state == "INTERRUPTED"
        journal = ExecutionUndoJournal(host._session.runner().store.backend.engine, execution.id)
        assert journal.entries() == [("set_parameters", "1/-/")]  # kept before the change
        with pytest.raises(exceptions.WorkflowFailed, match="a later task failed"):
            host.executions.resume(execution.id)
        assert values() == {"A": 1}  # B removed, A put back: the state before the first run
        assert host.executions.get(execution.id).state == "ERROR"
        assert journal.entries() == []  # the execution ended: its journal is gone
    finally:
        host._session.close_workflows()


LOOP = """
version: '2.0'
name: loop_demo
workflows:
  poll:
    input:
      - log
      - n: 0
    output:
      n: <% $.n %>
    tasks:
      start:
        on-success: [poll]
      poll:
        action: test.record
        input:
          path: <% $.log %>
          value: poll-<% $.n %>
          once: true
        publish:
          n: <% $.n + 1 %>
        on-success:
          - poll: <% $.n < 4 %>
"""


@pytest.mark.parametrize("event", ["started", "succeeded"])
def test_kill_in_a_loop_then_resume(tmp_path: Path, event: str) -> None:
    """A loop (Mistral's state machine, issue 26) killed with kill -9 during its third
    task execution resumes from the last completed one: every side effect once."""
    data_dir, log = tmp_path / "data", tmp_path / "effects.log"
    (tmp_path / "loop_demo.yaml").write_text(LOOP)
    host = Host(data_dir)
    host.workbooks.create(tmp_path / "loop_demo.yaml")
    host._session.close_workflows()
    killed_at = _run_until_killed(data_dir, log, event, 3, workflow="loop_demo.poll")
    assert killed_at == "poll[2]"
    host = Host(data_dir)
    try:
        [execution] = host.executions.list()
        assert execution.state == "INTERRUPTED"
        done = [t.name for t in host.tasks.list(execution.id) if t.state == "SUCCESS"]
        assert done == (["start", "poll", "poll[2]"] if event == "succeeded"
                        else ["start", "poll"])
        resumed = host.executions.resume(execution.id)
        assert resumed.state == "SUCCESS"
        assert resumed.output == {"n": 4}
        assert log.read_text().splitlines() == [f"do poll-{i}" for i in range(4)]
        assert [t.name for t in host.tasks.list(execution.id)] == \
            ["start", "poll", "poll[2]", "poll[3]", "poll[4]"]
    finally:
        host._session.close_workflows()


SUB_EFFECTS = ["do first", "do a", "do a-after", "do b", "do b-after", "do c", "do c-after",
               "do last"]
SUB_EVENTS = ["first", "each/write", "each/after", "each/write", "each/after", "each/write",
              "each/after", "each", "last"]


@pytest.mark.parametrize("nth", [2, 3, 4, 5, 7, 8])
def test_kill_mid_with_items_over_sub_workflows_then_resume(tmp_path: Path, nth: int) -> None:
    """with-items over a sub-workflow (one child execution per item): killed after the
    nth task succeeded, in the parent or in a child; the resumed parent reuses the
    completed children (their effects are not run again), resumes the interrupted one
    and starts the rest: every side effect happens once."""
    data_dir, log = tmp_path / "data", tmp_path / "effects.log"
    Host(data_dir).install("subworkflow_items")
    killed_at = _run_until_killed(data_dir, log, "succeeded", nth, "subworkflow_items.items")
    assert killed_at == SUB_EVENTS[nth - 1]
    host = Host(data_dir)
    try:
        [parent] = [e for e in host.executions.list() if e.parent_id is None]
        assert parent.state == "INTERRUPTED"
        before = log.read_text().splitlines()
        assert before == SUB_EFFECTS[:min(nth, 7)]  # the 8th event: "each" itself
        resumed = host.executions.resume(parent.id)
        assert resumed.state == "SUCCESS"
        assert log.read_text().splitlines() == SUB_EFFECTS  # each side effect once
        children = [e for e in host.executions.list() if e.parent_id == parent.id]
        assert len(children) == 3
        assert {(c.parent_task, c.state) for c in children} == {("each", "SUCCESS")}
    finally:
        host._session.close_workflows()
