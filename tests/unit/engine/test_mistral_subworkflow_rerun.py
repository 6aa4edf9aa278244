"""Rerunning the failed task of a sub-workflow, ported from Mistral's engine tests
(issue 26).

The workflows and asserted outcomes of openstack/mistral
``mistral/tests/unit/engine/test_direct_workflow_rerun.py``: ``test_rerun_subflow``
(the parent's failed ``workflow:`` task rerun: a new child execution runs, the failed
one stays failed), ``test_rerun_subflow_task`` (the failed task of the child rerun: the
child and its parent go on, the task keeps its one child execution) and
``test_rerun_sub_workflow`` (three levels: the innermost task rerun, every execution
ends SUCCESS, no new execution).

Each runs three ways: the sub-workflow inline in the parent's compiled graph (its
tasks are listed as the parent's ``t2/s1``: that is the task execution rerun), a
child execution of its own (a ``timeout`` on the ``workflow:`` task) and on the state
machine (a transition back to t2 that never fires: a workflow that loops runs there,
and its ``workflow:`` tasks always run child executions).  Where ours
differs: a failed execution (ERROR, as Mistral's) was undone, and an inline
sub-workflow has no execution record of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.unit.engine.test_mistral_cancel import _install
from tests.unit.engine.test_mistral_task_rerun import _calls
from tripleo_flow import exceptions

WAYS = pytest.mark.parametrize("way", ["inline", "apart", "state-machine"])


@pytest.fixture
def host(tmp_path: Path) -> Any:
    made = Host(tmp_path / "data", ACTIONS)
    yield made
    made._session.close_workflows()


def _subflow(way: str) -> str:
    """Mistral's ``SUBFLOW_WORKBOOK``: t1 -> t2 (workflow sub) -> t3, sub's s1 failing
    once (Mistral's ``wf2_t1``)."""
    return f"""\
        wf:
          input: [c]
          tasks:
            t1:
              action: test.count counter=<% $.c + "1" %>
              on-success: [t2]
            t2:
              workflow: sub c=<% $.c %>
              {"timeout: 60" if way == "apart" else ""}
              on-success: [t3]
            t3:
              action: test.count counter=<% $.c + "3" %>
              {"on-success: [{t2: <% false %>}]" if way == "state-machine" else ""}
        sub:
          input: [c]
          output:
            result: <% task(s1).result %>
          tasks:
            s1:
              action: test.flaky counter=<% $.c + "2" %> failures=1
        """


def _failed(host: Any, workflow: str, inputs: dict[str, Any]) -> str:
    """Run ``workflow``, which fails; its execution's id (the top one)."""
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create(workflow, inputs)
    (ident,) = [e.id for e in host.executions.list() if e.parent_id is None]
    assert host.executions.get(ident).state == "ERROR"  # Mistral's ERROR
    return ident


def _counts(base: Path) -> tuple[int, int, int]:
    return tuple(_calls(Path(f"{base}{n}")) for n in "123")  # type: ignore[return-value]


def _children(host: Any, parent: str) -> list[Any]:
    return [e for e in host.executions.list() if e.parent_id == parent]


def _tasks(host: Any, ident: str) -> dict[str, str]:
    return {t.name: t.state for t in host.tasks.list(ident)}


@WAYS
def test_rerun_subflow(host: Any, tmp_path: Path, way: str) -> None:
    """The parent's failed ``workflow:`` task t2 rerun: its sub-workflow runs again (s1
    twice in all), t3 runs, the workflow succeeds; t1 is not run again.  Run apart, t2
    then has two child executions, the first failed, the second SUCCESS (Mistral's
    ``task_2_action_exs``: one ERROR, one SUCCESS)."""
    name = _install(host, tmp_path, _subflow(way))
    base = tmp_path / "c"
    ident = _failed(host, f"{name}.wf", {"c": str(base)})
    assert _counts(base) == (1, 1, 0)
    done = host.tasks.rerun(ident, "t2")
    assert (done.state, done.error) == ("SUCCESS", None)
    assert _counts(base) == (1, 2, 1)
    assert {"t1": "SUCCESS", "t2": "SUCCESS", "t3": "SUCCESS"}.items() <= \
        _tasks(host, ident).items()
    children = _children(host, ident)
    if way == "inline":
        assert children == []
        assert _tasks(host, ident)["t2/s1"] == "SUCCESS"
        return
    assert sorted(c.state for c in children) == ["ERROR", "SUCCESS"]
    assert {c.parent_task for c in children} == {"t2"}
    ok = next(c for c in children if c.state == "SUCCESS")
    assert _tasks(host, ok.id) == {"s1": "SUCCESS"}
    assert host.executions.get(ok.id).output == {"result": 2}


@WAYS
def test_rerun_subflow_task(host: Any, tmp_path: Path, way: str) -> None:
    """The child's failed task s1 rerun (inline: the parent's task execution
    ``t2/s1``): the child goes on in the same child execution, then its parent (t2
    completes, t3 runs) and both end SUCCESS; nothing else runs again."""
    name = _install(host, tmp_path, _subflow(way))
    base = tmp_path / "c"
    ident = _failed(host, f"{name}.wf", {"c": str(base)})
    if way == "inline":
        done = host.tasks.rerun(ident, "t2/s1")
        assert (done.state, done.error) == ("SUCCESS", None)
        assert _children(host, ident) == []
    else:
        (child,) = _children(host, ident)
        assert child.state == "ERROR"
        done = host.tasks.rerun(child.id, "s1")
        assert (done.id, done.state, done.error) == (child.id, "SUCCESS", None)
        (again,) = _children(host, ident)  # the same child, no new one
        assert (again.id, again.state) == (child.id, "SUCCESS")
        assert host.executions.get(child.id).output == {"result": 2}
    assert _counts(base) == (1, 2, 1)
    parent = host.executions.get(ident)
    assert (parent.state, parent.error, parent.failed_task) == ("SUCCESS", None, None)
    assert {"t1": "SUCCESS", "t2": "SUCCESS", "t3": "SUCCESS"}.items() <= \
        _tasks(host, ident).items()


@pytest.mark.parametrize("apart", [False, True], ids=["inline", "apart"])
def test_rerun_sub_workflow(host: Any, tmp_path: Path, apart: bool) -> None:
    """Three levels (wf1 -> wf2 -> wf3), wf3's task3 failing once: rerunning task3
    ends every execution SUCCESS, with no new execution (Mistral's: 3 workflow
    executions before and after)."""
    policy = "timeout: 60" if apart else ""
    name = _install(host, tmp_path, f"""\
        wf1:
          input: [c]
          tasks:
            task1:
              workflow: wf2 c=<% $.c %>
              {policy}
        wf2:
          input: [c]
          tasks:
            task2:
              workflow: wf3 c=<% $.c %>
              {policy}
        wf3:
          input: [c]
          tasks:
            task3:
              action: test.flaky counter=<% $.c %> failures=1
        """)
    counter = tmp_path / "c"
    top = _failed(host, f"{name}.wf1", {"c": str(counter)})
    executions = host.executions.list()
    if not apart:
        assert [e.id for e in executions] == [top]
        done = host.tasks.rerun(top, "task1/task2/task3")
    else:
        assert sorted(e.state for e in executions) == ["ERROR"] * 3
        (wf3,) = [e for e in executions if e.workflow.endswith(".wf3")]
        done = host.tasks.rerun(wf3.id, "task3")
    assert done.state == "SUCCESS"
    assert _calls(counter) == 2
    after = host.executions.list()
    assert sorted(e.id for e in after) == sorted(e.id for e in executions)
    assert {e.state for e in after} == {"SUCCESS"}


def test_a_child_task_is_rerun_only_while_its_parent_has_failed(host: Any,
                                                                tmp_path: Path) -> None:
    """Refused (409) when the parent has not failed: its parent already ran the task
    again (a new child), so the old child's task would go on alone; nothing changes."""
    name = _install(host, tmp_path, _subflow("apart"))
    base = tmp_path / "c"
    ident = _failed(host, f"{name}.wf", {"c": str(base)})
    (old,) = _children(host, ident)
    assert host.tasks.rerun(ident, "t2").state == "SUCCESS"
    with pytest.raises(exceptions.Conflict, match="which is SUCCESS"):
        host.tasks.rerun(old.id, "s1")
    assert host.executions.get(old.id).state == "ERROR"
    assert _counts(base) == (1, 2, 1)


def test_an_inline_sub_workflow_s_enter_atom_is_no_task(host: Any, tmp_path: Path) -> None:
    """The engine's own atoms of an inline sub-workflow are no task executions."""
    name = _install(host, tmp_path, _subflow("inline"))
    ident = _failed(host, f"{name}.wf", {"c": str(tmp_path / "c")})
    with pytest.raises(exceptions.NotFound, match="no task execution"):
        host.tasks.rerun(ident, "t2/__enter__")
    assert host.executions.get(ident).state == "ERROR"
