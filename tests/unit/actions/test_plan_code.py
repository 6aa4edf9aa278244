"""Actions that run plan code (``runs_plan_code``) are refused in executions an HTTP API
user started, unless ``[api] allow_plan_code``; the mark lives with the execution."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tripleo_flow import exceptions
from tripleo_flow.actions.ansible import CheckAnsible, RunAnsible
from tripleo_flow.actions.base import Action


@pytest.fixture
def host(tmp_path: Path) -> Any:
    host = Host(tmp_path / "data")
    host.install("plan_code")
    yield host
    host._session.close_workflows()


def lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_ansible_actions_declare_they_run_plan_code() -> None:
    assert RunAnsible.runs_plan_code and CheckAnsible.runs_plan_code
    assert not Action.runs_plan_code


def test_a_local_execution_runs_plan_code(host: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    execution = host.executions.create("guarded", {"log": str(log)})
    assert execution.state == "SUCCESS"
    assert lines(log) == ["do before", "do code", "do after"]


def test_an_api_execution_is_refused_before_the_action_runs(host: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        host.executions.create("guarded", {"log": str(log)}, api_user=True)
    message = str(failed.value)
    assert "'code'" in message and "test.plan_code" in message
    assert "[api] allow_plan_code" in message
    # Not run, not retried, not handled by on-error; the earlier task undone.
    assert lines(log) == ["do before", "undo before"]
    record = host.executions.list("guarded")[-1]
    assert record.state == "ERROR" and record.failed_task == "code"


def test_the_server_option_allows_plan_code(host: Any, tmp_path: Path) -> None:
    host.conf.set_override("allow_plan_code", True, group="api")
    log = tmp_path / "log"
    execution = host.executions.create("guarded", {"log": str(log)}, api_user=True)
    assert execution.state == "SUCCESS"
    assert lines(log) == ["do before", "do code", "do after"]


def test_paths_imply_an_api_user(host: Any, tmp_path: Path) -> None:
    from tripleo_flow.client.paths import ServerPaths

    log = tmp_path / "log"
    paths = ServerPaths.for_data_dir(tmp_path / "server")
    with pytest.raises(exceptions.WorkflowFailed, match="allow_plan_code"):
        host.executions.create("guarded", {"log": str(log)}, paths=paths)
    assert "do code" not in lines(log)
