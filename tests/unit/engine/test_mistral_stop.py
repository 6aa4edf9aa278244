"""Stopping executions with ERROR or SUCCESS and Mistral's execution update, ported from
Mistral's engine tests (issue 26).

The cases of openstack/mistral ``mistral/tests/unit/engine/test_workflow_stop.py``
(``stop_workflow`` of a running execution with SUCCESS and with ERROR), the transitions
``mistral/workflow/states.py`` allows and ``Workflow.stop`` applies (SUCCESS of a PAUSED
or ended execution is refused; ERROR of one leaves it as it is: ``_fail_workflow``
returns), a stopped sub-workflow's end sent to its parent task
(``_send_result_to_parent_workflow``), and ``test_workflow_resume.py``'s
``test_resume_diff_env_vars`` (the env updated on resume, ``PUT /v2/executions`` with
``params.env``).  As in ``test_mistral_cancel``, the running task waits at a gate the
test opens instead of Mistral's ``wait-before``.

A stopped execution reads ERROR as Mistral's (its stored TaskFlow state is FAILURE).  A refused
transition is invalid input (400), as Mistral's ``set_state`` WorkflowException.  The
output a stop evaluates (``output`` / ``output-on-error``) and the sub-workflows a
stop lets run on: ``test_mistral_stop_outputs``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import ACTIONS, Host
from tests.pause_helpers import _effects, _tasks
from tests.pause_helpers import host as host  # the fixture
from tests.unit.engine.test_mistral_cancel import (
    SUB,
    _ended,
    _install,
    _start,
    _wf,
)
from tripleo_flow import exceptions

ENGINES = pytest.mark.parametrize("join", [False, True], ids=["graph", "state-machine"])
WHERE = pytest.mark.parametrize("where", ["here", "elsewhere"])


def _stop(host: Host, tmp_path: Path, ident: str, state: str, message: str | None,
          where: str = "here") -> Any:
    if where == "here":
        return host.executions.stop(ident, state, message)
    other = Host(tmp_path / "data", ACTIONS)
    try:
        return other.executions.stop(ident, state, message)
    finally:
        other._session.close_workflows()


@ENGINES
@WHERE
def test_stop_failed(host: Host, tmp_path: Path, join: bool, where: str) -> None:
    """Mistral's ``test_stop_failed``: a running execution stopped with SUCCESS and
    "Force stop" reads SUCCESS with that state_info; its running task1 ends SUCCESS,
    task2 never runs; it is never resumed, nor paused."""
    name = _install(host, tmp_path, _wf(join))
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    asked = _stop(host, tmp_path, ident, "SUCCESS", "Force stop", where)
    assert (asked.state, asked.state_info, asked.error) == ("SUCCESS", "Force stop", None)
    _ended(host, gate)
    done = host.executions.get(ident)
    assert (done.state, done.state_info, done.output) == ("SUCCESS", "Force stop", {})
    assert done.finished_at is not None
    tasks = _tasks(host, ident)
    assert tasks["task1"] == "SUCCESS" and tasks.get("task2", "PENDING") == "PENDING"
    assert _effects(log) == []
    assert host.executions.resume(ident).state == "SUCCESS"
    host._session.runner().wait_background(60)
    assert _effects(log) == [] and gate.calls == 1
    with pytest.raises(exceptions.Conflict, match="has already ended"):
        host.executions.pause(ident)


@ENGINES
@WHERE
def test_stop_succeeded(host: Host, tmp_path: Path, join: bool, where: str) -> None:
    """Mistral's ``test_stop_succeeded``: stopped with ERROR and "Failure" it reads
    ERROR with that state_info, its error and output
    ``{"result": "Failure"}``; task2 never runs."""
    name = _install(host, tmp_path, _wf(join))
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    asked = _stop(host, tmp_path, ident, "ERROR", "Failure", where)
    assert (asked.state, asked.state_info, asked.error) == ("ERROR", "Failure", "Failure")
    _ended(host, gate)
    done = host.executions.get(ident)
    assert (done.state, done.state_info, done.error, done.output) == (
        "ERROR", "Failure", "Failure", {"result": "Failure"})
    assert _tasks(host, ident).get("task2", "PENDING") == "PENDING"
    assert host.executions.resume(ident).state == "ERROR"
    host._session.runner().wait_background(60)
    assert _effects(log) == [] and gate.calls == 1


def test_stop_of_a_paused_execution(host: Host, tmp_path: Path) -> None:
    """PAUSED -> SUCCESS is no transition of Mistral's (refused, nothing changes);
    ERROR of a paused workflow does nothing (``_fail_workflow`` returns); resumed, it
    runs on to its end."""
    name = _install(host, tmp_path, _wf(False))
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    host.executions.pause(ident)
    with pytest.raises(exceptions.InvalidInput,
                       match="cannot be stopped with state SUCCESS"):
        host.executions.stop(ident, "SUCCESS", "no")
    assert host.executions.stop(ident, "ERROR", "no").state == "PAUSED"
    _ended(host, gate)
    assert host.executions.get(ident).state == "PAUSED"
    assert host.executions.resume(ident).state == "SUCCESS"
    assert _effects(log) == ["do task2"]


def test_stop_of_an_ended_execution(host: Host, tmp_path: Path) -> None:
    """An ended execution: SUCCESS refused, ERROR and CANCELLED leave it as it is."""
    name = _install(host, tmp_path, """\
        wf:
          tasks:
            task1:
              action: std.echo output="Echo"
        """)
    done = host.executions.create(f"{name}.wf", {})
    with pytest.raises(exceptions.InvalidInput, match="SUCCESS"):  # Mistral's 400
        host.executions.stop(done.id, "SUCCESS", "again")
    assert host.executions.stop(done.id, "ERROR", "late") == done
    assert host.executions.update(done.id, "CANCELLED", "late") == done
    assert host.executions.get(done.id) == done


@pytest.mark.parametrize("end", ["ERROR", "SUCCESS"])
def test_a_stopped_sub_workflow_ends_its_parent_task(host: Host, tmp_path: Path,
                                                     end: str) -> None:
    """A sub-workflow stopped with ERROR fails its parent's task with the message (its
    ``on-error`` runs), with SUCCESS completes it (``on-success`` runs), as Mistral's
    ``_send_result_to_parent_workflow``; its task2 never runs (its ``join`` makes
    it a child execution of its own: a simple sub-workflow runs inlined)."""
    handlers = """\
          on-success: [ok]
          on-error: [handled]
        ok:
          action: test.record path=<% $.log %> value="ok"
        handled:
          action: test.record path=<% $.log %> value=<% task(taskx).state_info %>
"""
    call = "          workflow: subwf log=<% $.log %> gate=<% $.gate %>\n"
    name = _install(host, tmp_path, SUB.replace(call, call + handlers))
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    (child,) = [e.id for e in host.executions.list() if e.parent_id == ident]
    host.executions.stop(child, end, "Stopped by user")
    _ended(host, gate)
    assert host.executions.get(child).state == end
    top = host.executions.follow(ident, timeout=60)
    assert top.state == "SUCCESS"
    if end == "ERROR":
        assert _tasks(host, ident) == {"taskx": "ERROR", "handled": "SUCCESS"}
        (effect,) = _effects(log)
        assert "Stopped by user" in effect
    else:
        assert _tasks(host, ident) == {"taskx": "SUCCESS", "ok": "SUCCESS"}
        assert _effects(log) == ["do ok"]


def test_update_runs_the_operation_its_state_names(host: Host, tmp_path: Path) -> None:
    """Mistral's ``PUT /v2/executions``: PAUSED pauses, RUNNING resumes, and what it
    refuses (no state nor env, an unknown state, env with another state than RUNNING,
    a state_info that is not text) changes nothing."""
    name = _install(host, tmp_path, _wf(False))
    log = tmp_path / "log"
    ident, gate = _start(host, tmp_path, f"{name}.wf", log=str(log))
    bad: list[dict[str, Any]] = [
        {}, {"state": "SKIPPED"}, {"state": "FAILURE"}, {"state": 3},
        {"state": "PAUSED", "env": {"a": 1}}, {"state": "ERROR", "state_info": ["x"]},
        {"env": "text"}]
    for asked in bad:
        with pytest.raises(exceptions.InvalidInput):
            host.executions.update(ident, **asked)
    assert host.executions.get(ident).state == "RUNNING"
    with pytest.raises(exceptions.Conflict, match="only a paused or failed execution"):
        host.executions.update(ident, env={"a": 1})
    assert host.executions.update(ident, "PAUSED").state == "PAUSED"
    _ended(host, gate)
    host.executions.update(ident, "RUNNING")  # in the background
    assert host.executions.follow(ident, timeout=60).state == "SUCCESS"
    assert _effects(log) == ["do task2"]


def test_resume_diff_env_vars(host: Host, tmp_path: Path) -> None:
    """Mistral's ``test_resume_diff_env_vars``: paused before task2 (``pause-before``),
    the execution's env is updated on resume; task2 and task3 read the new values.
    The update merges into the old env (Mistral's ``merge_dicts``)."""
    name = _install(host, tmp_path, """\
        wf1:
          tasks:
            task1: {action: std.echo output="Hi!", on-complete: [task2]}
            task2:
              {action: std.echo output=<% env().var1 %>, pause-before: true,
               on-complete: [task3]}
            task3: {action: std.echo output=<% env().var2 %>}
        """)
    env = {"var1": "fee fi fo fum", "var2": "foobar", "kept": {"a": 1, "b": 2}}
    ident = host.executions.create(f"{name}.wf1", {}, env=env).id
    assert host.executions.get(ident).state == "PAUSED"
    updated = {"var1": "Task 2", "var2": "Task 3", "kept": {"b": 3}}
    host.executions.update(ident, "RUNNING", env=updated)
    done = host.executions.follow(ident, timeout=60)
    assert done.state == "SUCCESS"
    assert done.env == {"var1": "Task 2", "var2": "Task 3", "kept": {"a": 1, "b": 3}}
    results = {t.name: t.result for t in host.tasks.list(ident)}
    assert (results["task2"], results["task3"]) == ("Task 2", "Task 3")


def test_env_update_of_a_failed_execution(host: Host, tmp_path: Path) -> None:
    """Mistral's ``update_workflow_execution_env``: the env of an ERROR execution may be
    updated (merged into the old one, before a rerun), not that of one that succeeded
    or was cancelled (refused, nothing changes)."""
    name = _install(host, tmp_path, """\
        wf:
          input: [fail]
          tasks:
            task1:
              action: std.echo output=1
              on-complete:
                - task2: <% $.fail %>
            task2:
              action: std.fail
        """)
    with pytest.raises(exceptions.WorkflowFailed):
        host.executions.create(f"{name}.wf", {"fail": True}, env={"a": 1, "b": {"c": 1}})
    (failed,) = [e for e in host.executions.list() if e.state != "SUCCESS"]
    assert failed.state == "ERROR"
    shown = host.executions.update(failed.id, env={"b": {"d": 2}})
    assert shown.state == failed.state
    assert host.executions.get(failed.id).env == {"a": 1, "b": {"c": 1, "d": 2}}
    done = host.executions.create(f"{name}.wf", {"fail": False}, env={"a": 1})
    assert done.state == "SUCCESS"
    with pytest.raises(exceptions.Conflict, match="paused or failed"):
        host.executions.update(done.id, env={"a": 2})
    assert host.executions.get(done.id).env == {"a": 1}


def test_description_update(host: Host, tmp_path: Path) -> None:
    """Mistral's execution ``description``: updated apart from the state, in any state
    (here an ended execution), kept and shown; with a state, too long or not text it
    is refused and nothing changes."""
    name = _install(host, tmp_path, """\
        wf:
          tasks:
            task1:
              action: std.echo output="Echo"
        """)
    done = host.executions.create(f"{name}.wf", {})
    assert done.description is None
    for asked in ({"state": "ERROR", "description": "d"}, {"description": 3},
                  {"description": "d" * 256}):
        with pytest.raises(exceptions.InvalidInput, match="description"):
            host.executions.update(done.id, **asked)
    assert host.executions.get(done.id) == done
    shown = host.executions.update(done.id, description="first run")
    assert (shown.state, shown.description) == ("SUCCESS", "first run")
    assert host.executions.get(done.id).description == "first run"
    assert host.executions.update(done.id, description="d" * 255).description == "d" * 255
