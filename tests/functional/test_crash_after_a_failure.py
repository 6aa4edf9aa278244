"""kill -9 right after one task failed while another still ran, then resume (issue 26).

Mistral never runs a failed task execution again unless asked to (``rerun``): the
error stays, the other branches finish, and the workflow then fails.  A process
killed between the failure and the workflow's end must not change that: the
resumed execution keeps the task failed (its action is not called again, here one
that would succeed on a second call), runs what was left of the other branch
once, and fails with the task's own error.  Each run happens in a real process
that SIGKILLs itself when the failure is reported; both engines: the compiled
TaskFlow graph and the state machine (a ``join`` makes the workflow run there).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.engine_helpers import Host
from tripleo_flow import exceptions

ROOT = Path(__file__).resolve().parents[2]


def _workbook(machine: bool) -> str:
    return textwrap.dedent(f"""\
        version: '2.0'
        name: crashing
        workflows:
          branches:
            input: [log, counter]
            tasks:
              bad:
                action: test.flaky counter=<% $.counter %> failures=1
              slow:
                action: std.sleep seconds=3
                on-success: [after]
              after:
                {"join: all" if machine else ""}
                action: test.record path=<% $.log %> value="after"
        """)


@pytest.mark.parametrize("machine", [False, True], ids=["graph", "state-machine"])
def test_a_task_that_failed_before_a_kill_is_not_run_again(tmp_path: Path,
                                                          machine: bool) -> None:
    data_dir, log, counter = tmp_path / "data", tmp_path / "effects.log", tmp_path / "calls"
    (tmp_path / "crashing.yaml").write_text(_workbook(machine))
    Host(data_dir).workbooks.create(tmp_path / "crashing.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "run", str(data_dir),
         "crashing.branches", json.dumps({"log": str(log), "counter": str(counter)}),
         "failed", "1"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    assert json.loads(done.stdout.splitlines()[-1])["killed_after"] == "bad"
    host = Host(data_dir)
    try:
        [execution] = host.executions.list()
        assert execution.state == "INTERRUPTED"
        tasks = {t.name: t.state for t in host.tasks.list(execution.id)}
        assert tasks["bad"] == "ERROR", tasks  # as Mistral's, on both engines
        assert tasks.get("slow") != "SUCCESS"  # killed while it slept
        assert counter.read_text() == "1" and not log.exists()
        with pytest.raises(exceptions.WorkflowFailed) as failed:
            host.executions.resume(execution.id)
        assert counter.read_text() == "1"  # the failed task's action was not called again
        assert "flaky call 1" in str(failed.value)
        # The other branch ran to its end once (then, ours, its effect was undone).
        assert log.read_text().splitlines() == ["do after", "undo after"]
        ended = host.executions.get(execution.id)
        assert (ended.state, ended.failed_task) == ("ERROR", "bad")
        assert "flaky call 1" in (ended.error or "")
    finally:
        host._session.close_workflows()


def _missing_plan_workbook(machine: bool) -> str:
    return _workbook(machine).replace(
        "action: test.flaky counter=<% $.counter %> failures=1",
        "action: test.missing_plan plan=\"nowhere\"").replace("name: crashing", "name: planless")


@pytest.mark.parametrize("machine", [False, True], ids=["graph", "state-machine"])
def test_a_resumed_execution_reports_the_error_as_the_first_process(tmp_path: Path,
                                                                    machine: bool) -> None:
    """The task's error is a missing plan (a not-found error whose next step creates
    it): the execution killed after it failed and resumed here fails with that error,
    its kind and next steps as a run that was never killed reports them."""
    (tmp_path / "planless.yaml").write_text(_missing_plan_workbook(machine))
    inputs = {"log": str(tmp_path / "effects.log"), "counter": str(tmp_path / "calls")}
    whole = Host(tmp_path / "whole")
    whole.workbooks.create(tmp_path / "planless.yaml")
    try:
        with pytest.raises(exceptions.WorkflowFailed) as run:
            whole.executions.create("planless.branches", inputs)
        first = run.value.__cause__
        assert isinstance(first, exceptions.PlanNotFound)
        [reference] = whole.executions.list()
    finally:
        whole._session.close_workflows()
    data_dir = tmp_path / "data"
    Host(data_dir).workbooks.create(tmp_path / "planless.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "run", str(data_dir),
         "planless.branches", json.dumps(inputs), "failed", "1"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    host = Host(data_dir)
    try:
        [execution] = host.executions.list()
        with pytest.raises(exceptions.WorkflowFailed) as resumed:
            host.executions.resume(execution.id)
        cause = resumed.value.__cause__
        assert isinstance(cause, exceptions.NotFound)
        assert str(resumed.value) == str(run.value)
        assert str(cause) == str(first)
        assert cause.render(exceptions.API) == first.render(exceptions.API)
        ended = host.executions.get(execution.id)
        assert (ended.error, ended.error_api, ended.hints, ended.failed_task) == (
            reference.error, reference.error_api, reference.hints, reference.failed_task)
        assert ended.hints == [{"command": "tripleo-flow plan create nowhere --templates DIR",
                                "request": "POST /v1/plans?name=nowhere"}]
    finally:
        host._session.close_workflows()
