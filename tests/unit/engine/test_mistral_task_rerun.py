"""Rerunning a failed task, ported from Mistral's engine tests (issue 26).

The workflows and asserted outcomes of openstack/mistral
``mistral/tests/unit/engine/test_direct_workflow_rerun.py`` (``test_rerun``,
``test_rerun_diff_env_vars``, ``test_rerun_from_prev_step``, ``test_rerun_with_items``
with and without reset, ``test_rerun_on_join_task``) and
``test_reverse_workflow_rerun.py`` (``test_rerun``), and the refusals of its
``PUT /v2/tasks/<id>`` (``mistral/api/controllers/v2/task.py``).  Mistral mocks
``std.echo`` to fail once; here the failing task is ``test.flaky``, which fails its
first call(s) and counts every call in a file, so a test sees which task ran again.

Both engines: a ``join`` (or a task several tasks lead to) runs a direct workflow on
the state machine, without one it is a compiled TaskFlow graph.

Where ours differs: the failed execution (ERROR, as Mistral's) was undone; ours undoes
the completed tasks of a failed execution, so an execution whose completed task has a
real ``revert`` is refused (:mod:`tripleo_flow.engine.compile.task_reruns`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_cancel import _install
from tripleo_flow import exceptions

ENGINES = pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])


@pytest.fixture
def host(tmp_path: Path) -> Any:
    made = Host(tmp_path / "data", ACTIONS)
    yield made
    made._session.close_workflows()


def _failed(host: Host, workflow: str, inputs: dict[str, Any],
            env: dict[str, Any] | None = None) -> str:
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create(workflow, inputs, env=env)
    (ident,) = [e.id for e in host.executions.list()]
    assert host.executions.get(ident).state == "ERROR"  # Mistral's ERROR
    return ident


def _calls(path: Path) -> int:
    return int(path.read_text()) if path.exists() else 0


def _results(host: Host, ident: str) -> dict[str, tuple[str, Any]]:
    return {t.name: (t.state, t.result) for t in host.tasks.list(ident)}


def _results_errors(host: Host, ident: str) -> dict[str, str | None]:
    return {t.name: t.error for t in host.tasks.list(ident)}


def _simple(join: bool) -> str:
    """Mistral's ``SIMPLE_WORKBOOK``: t1 -> t2 -> t3, t2 failing once."""
    return f"""\
        wf:
          input: [c1, c2, c3]
          tasks:
            t1:
              action: test.count counter=<% $.c1 %>
              on-success: [t2]
            t2:
              action: test.flaky counter=<% $.c2 %> failures=1
              on-success: [t3]
            t3:
              {"join: all" if join else ""}
              action: test.count counter=<% $.c3 %>
        """


@ENGINES
def test_rerun(host: Host, tmp_path: Path, join: bool) -> None:
    """Mistral's ``test_rerun``: t2 failed, t1 succeeded; rerun t2 and the workflow
    succeeds, t1 not run again, t2 run twice, t3 once; its error is cleared."""
    name = _install(host, tmp_path, _simple(join))
    c1, c2, c3 = (tmp_path / n for n in ("c1", "c2", "c3"))
    ident = _failed(host, f"{name}.wf", {"c1": str(c1), "c2": str(c2), "c3": str(c3)})
    failed = host.executions.get(ident)
    assert (failed.failed_task, failed.error) == ("t2", "flaky call 1")
    done = host.tasks.rerun(ident, "t2")
    assert (done.state, done.error, done.failed_task) == ("SUCCESS", None, None)
    assert (_calls(c1), _calls(c2), _calls(c3)) == (1, 2, 1)
    assert _results(host, ident) == {"t1": ("SUCCESS", 1), "t2": ("SUCCESS", 2),
                                     "t3": ("SUCCESS", 1)}


def test_rerun_by_task_id_in_the_background(host: Host, tmp_path: Path) -> None:
    """The task named by its id (Mistral's ``PUT /v2/tasks/<id>``), not waited for."""
    name = _install(host, tmp_path, _simple(False))
    paths = {n: str(tmp_path / n) for n in ("c1", "c2", "c3")}
    ident = _failed(host, f"{name}.wf", paths)
    task_id = next(t.id for t in host.tasks.list(ident) if t.name == "t2")
    host.tasks.rerun(ident, task_id, wait=False)
    host._session.runner().wait_background(60)
    assert host.executions.get(ident).state == "SUCCESS"


def test_rerun_reverse_workflow(host: Host, tmp_path: Path) -> None:
    """``test_reverse_workflow_rerun``'s ``test_rerun``: t1 <- t2 <- t3 (requires),
    target t3; t2 failed, rerun it: t3 runs, t1 does not run again."""
    name = _install(host, tmp_path, """\
        wf:
          type: reverse
          input: [c1, c2, c3]
          tasks:
            t1:
              action: test.count counter=<% $.c1 %>
            t2:
              action: test.flaky counter=<% $.c2 %> failures=1
              requires: [t1]
            t3:
              action: test.count counter=<% $.c3 %>
              requires: [t2]
        """)
    c1, c2, c3 = (tmp_path / n for n in ("c1", "c2", "c3"))
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create(f"{name}.wf", {"c1": str(c1), "c2": str(c2), "c3": str(c3)},
                               target="t3")
    (ident,) = [e.id for e in host.executions.list()]
    assert host.tasks.rerun(ident, "t2").state == "SUCCESS"
    assert (_calls(c1), _calls(c2), _calls(c3)) == (1, 2, 1)


def test_rerun_diff_env_vars(host: Host, tmp_path: Path) -> None:
    """Mistral's ``test_rerun_diff_env_vars``: t10 -> t21 -> t22 -> t30 (join: all, also
    reached from t10); t21 failed, so the join failed too.  Rerun t21 with an updated
    env: it is merged into the execution's env, t22 and t30 read the new values."""
    name = _install(host, tmp_path, """\
        wf:
          tasks:
            t10:
              action: std.echo output="Task 10"
              on-success: [t21, t30]
            t21:
              action: test.flaky counter=<% env().counter %> failures=1
              on-success: [t22]
            t22:
              action: std.echo output=<% env().var2 %>
              on-success: [t30]
            t30:
              join: all
              action: std.echo output=<% env().var3 %>
        """)
    counter = str(tmp_path / "c21")
    env = {"counter": counter, "var2": "mirror mirror", "var3": "heigh-ho heigh-ho"}
    ident = _failed(host, f"{name}.wf", {}, env=env)
    assert host.executions.get(ident).env == env
    updated = {"var2": "Task 22", "var3": "Task 30"}
    done = host.tasks.rerun(ident, "t21", env=updated)
    assert done.state == "SUCCESS"
    assert done.env == {**env, **updated}
    assert _results(host, ident) == {
        "t10": ("SUCCESS", "Task 10"), "t21": ("SUCCESS", 2),
        "t22": ("SUCCESS", "Task 22"), "t30": ("SUCCESS", "Task 30")}


def test_rerun_on_join_task(host: Host, tmp_path: Path) -> None:
    """Mistral's ``test_rerun_on_join_task`` (``JOIN_WORKBOOK``): t1 and t2 lead to t3
    (join: all); t2 failed, so did the join (ours fails a join that can no longer
    fire, as Mistral's); the join itself is not rerun (400): rerun t2 and the join
    waits again, then fires; t1 not run again."""
    name = _install(host, tmp_path, """\
        wf:
          input: [c1, c2]
          tasks:
            t1:
              action: test.count counter=<% $.c1 %>
              on-success: [t3]
            t2:
              action: test.flaky counter=<% $.c2 %> failures=1
              on-success: [t3]
            t3:
              join: all
              action: std.echo output="Task 3"
        """)
    c1, c2 = tmp_path / "c1", tmp_path / "c2"
    ident = _failed(host, f"{name}.wf", {"c1": str(c1), "c2": str(c2)})
    assert "join 't3' can no longer fire" in (_results_errors(host, ident)["t3"] or "")
    with pytest.raises(exceptions.InvalidInput, match="rerun that task"):
        host.tasks.rerun(ident, "t3")  # the join failed for t2: t2 is what reruns
    assert host.tasks.rerun(ident, "t2").state == "SUCCESS"
    assert (_calls(c1), _calls(c2)) == (1, 2)
    assert _results(host, ident)["t3"] == ("SUCCESS", "Task 3")


def _with_items(join: bool) -> str:
    """Mistral's ``WITH_ITEMS_WORKBOOK``: t1 over 3 items (items 0 and 2 fail once)."""
    return f"""\
        wf:
          input: [counters, failures]
          tasks:
            t1:
              with-items: [c in <% $.counters %>, n in <% $.failures %>]
              action: test.flaky counter=<% $.c %> failures=<% $.n %>
              publish:
                v1: <% task().result %>
              on-success: [t2]
            t2:
              {"join: all" if join else ""}
              action: std.echo output=<% $.v1 %>
        """


@ENGINES
@pytest.mark.parametrize("reset", [False, True], ids=["no-reset", "reset"])
def test_rerun_with_items(host: Host, tmp_path: Path, join: bool, reset: bool) -> None:
    """Mistral's ``test_rerun_with_items`` (reset false: only the failed items 0 and 2
    run again, item 1 keeps its result) and ``test_rerun_with_items_reset`` (every
    item runs again)."""
    name = _install(host, tmp_path, _with_items(join))
    counters = [tmp_path / f"c{i}" for i in range(3)]
    ident = _failed(host, f"{name}.wf", {"counters": [str(c) for c in counters],
                                         "failures": [1, 0, 1]})
    assert [_calls(c) for c in counters] == [1, 1, 1]
    done = host.tasks.rerun(ident, "t1", reset=reset)
    assert done.state == "SUCCESS"
    expected = [2, 2, 2] if reset else [2, 1, 2]
    assert [_calls(c) for c in counters] == expected
    assert done.output["v1"] == expected
    assert _results(host, ident)["t2"] == ("SUCCESS", expected)


def test_rerun_with_items_that_undo(host: Host, tmp_path: Path) -> None:
    """Without reset, items whose action undoes something (undone as the task failed)
    run again with the failed ones: nothing of them was kept."""
    log = tmp_path / "log"
    name = _install(host, tmp_path, """\
        wf:
          input: [log, fails]
          tasks:
            t1:
              with-items: f in <% $.fails %>
              concurrency: 1
              action: test.record path=<% $.log %> value="item" fail=<% $.f %>
        """)
    ident = _failed(host, f"{name}.wf", {"log": str(log), "fails": [False, True]})
    assert log.read_text().splitlines() == ["do item", "undo item"]
    # The second item fails again: the first ran again (it was undone), then undone.
    with pytest.raises(exceptions.WorkflowFailed):
        host.tasks.rerun(ident, "t1", reset=False)
    assert log.read_text().splitlines() == ["do item", "undo item"] * 2


def test_rerun_from_prev_step(host: Host, tmp_path: Path) -> None:
    """Mistral's ``test_rerun_from_prev_step``: a task that succeeded cannot be rerun
    (400); nothing changes."""
    name = _install(host, tmp_path, _simple(False))
    paths = {n: str(tmp_path / n) for n in ("c1", "c2", "c3")}
    ident = _failed(host, f"{name}.wf", paths)
    with pytest.raises(exceptions.InvalidInput, match="only a failed task can be rerun"):
        host.tasks.rerun(ident, "t1")
    assert host.executions.get(ident).state == "ERROR"
    assert _calls(tmp_path / "c1") == 1


def test_refusals(host: Host, tmp_path: Path) -> None:
    """Mistral's refusals: reset false of a task without with-items (400), a task of an
    execution that did not fail (409), an unknown task (404)."""
    name = _install(host, tmp_path, _simple(False))
    paths = {n: str(tmp_path / n) for n in ("c1", "c2", "c3")}
    ident = _failed(host, f"{name}.wf", paths)
    with pytest.raises(exceptions.InvalidInput, match="only a with-items task"):
        host.tasks.rerun(ident, "t2", reset=False)
    with pytest.raises(exceptions.NotFound, match="no task execution 'nope'"):
        host.tasks.rerun(ident, "nope")
    with pytest.raises(exceptions.InvalidInput, match="env must be a JSON object"):
        host.tasks.rerun(ident, "t2", env=["x"])  # type: ignore[arg-type]
    assert host.executions.get(ident).state == "ERROR"
    assert host.tasks.rerun(ident, "t2").state == "SUCCESS"
    with pytest.raises(exceptions.Conflict, match="is SUCCESS: only a task of a failed"):
        host.tasks.rerun(ident, "t2")
    assert _calls(tmp_path / "c2") == 2


def test_refused_when_a_completed_task_was_undone(host: Host, tmp_path: Path) -> None:
    """Ours: t1's action reverts (``test.record`` writes, its undo unwrites), so when
    t2 failed t1 was undone; rerunning t2 would go on as if t1's change were there.
    Refused (400), nothing changed; TripleO's shipped workbooks are made of such
    actions (their failures keep undoing what they did)."""
    log = tmp_path / "log"
    name = _install(host, tmp_path, """\
        wf:
          input: [log, c2]
          tasks:
            t1:
              action: test.record path=<% $.log %> value="t1"
              on-success: [t2]
            t2:
              action: test.flaky counter=<% $.c2 %> failures=1
        """)
    ident = _failed(host, f"{name}.wf", {"log": str(log), "c2": str(tmp_path / "c2")})
    assert log.read_text().splitlines() == ["do t1", "undo t1"]
    with pytest.raises(exceptions.InvalidInput, match=r"task\(s\) t1 were undone"):
        host.tasks.rerun(ident, "t2")
    assert host.executions.get(ident).state == "ERROR"
    assert log.read_text().splitlines() == ["do t1", "undo t1"]
    assert _calls(tmp_path / "c2") == 1


@ENGINES
def test_rerun_of_a_task_whose_on_complete_ran(host: Host, tmp_path: Path, join: bool) -> None:
    """t1 failed and its on-complete ran t2 (the workflow still fails, as Mistral's).
    On the compiled graph, t1's rerun runs t2 again after it, as Mistral's; on the state
    machine (t2 already ran from t1's failed execution) ours refuses it (400)."""
    name = _install(host, tmp_path, f"""\
        wf:
          input: [c1, c2]
          tasks:
            t1:
              action: test.flaky counter=<% $.c1 %> failures=1
              on-complete: [t2]
            t2:
              {"join: all" if join else ""}
              action: test.count counter=<% $.c2 %>
        """)
    c1, c2 = tmp_path / "c1", tmp_path / "c2"
    ident = _failed(host, f"{name}.wf", {"c1": str(c1), "c2": str(c2)})
    assert (_calls(c1), _calls(c2)) == (1, 1)
    if join:
        with pytest.raises(exceptions.InvalidInput, match="on-complete transitions ran"):
            host.tasks.rerun(ident, "t1")
        assert host.executions.get(ident).state == "ERROR"
        assert (_calls(c1), _calls(c2)) == (1, 1)
        return
    assert host.tasks.rerun(ident, "t1").state == "SUCCESS"
    assert (_calls(c1), _calls(c2)) == (2, 2)
