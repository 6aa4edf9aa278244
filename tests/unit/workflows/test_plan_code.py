"""Actions that run plan code (``runs_plan_code``) are refused in executions an HTTP API
user started, unless ``[api] allow_plan_code``; the mark lives with the execution."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engine_helpers import Host
from tripleo_flow import exceptions
from tripleo_flow.actions.ansible import CheckAnsible, RunAnsible
from tripleo_flow.actions.base import Action
from tripleo_flow.engine.store.executions import ORIGIN_API

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def host(tmp_path: Path) -> Any:
    host = Host(tmp_path / "data")
    host.install("plan_code")
    yield host
    host.close_workflows()


def lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_ansible_actions_declare_they_run_plan_code() -> None:
    assert RunAnsible.runs_plan_code and CheckAnsible.runs_plan_code
    assert not Action.runs_plan_code


def test_a_local_execution_runs_plan_code(host: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    execution = host.run_workflow("guarded", {"log": str(log)})
    assert execution.state == "SUCCESS"
    assert lines(log) == ["do before", "do code", "do after"]


def test_an_api_execution_is_refused_before_the_action_runs(host: Any, tmp_path: Path) -> None:
    log = tmp_path / "log"
    with pytest.raises(exceptions.WorkflowFailed) as failed:
        host.run_workflow("guarded", {"log": str(log)}, api_user=True)
    message = str(failed.value)
    assert "'code'" in message and "test.plan_code" in message
    assert "[api] allow_plan_code" in message
    # Not run, not retried, not handled by on-error; the earlier task undone.
    assert lines(log) == ["do before", "undo before"]
    record = host.list_executions("guarded")[-1]
    assert record.state == "ERROR" and record.failed_task == "code"


def test_the_server_option_allows_plan_code(host: Any, tmp_path: Path) -> None:
    host.conf.set_override("allow_plan_code", True, group="api")
    log = tmp_path / "log"
    execution = host.run_workflow("guarded", {"log": str(log)}, api_user=True)
    assert execution.state == "SUCCESS"
    assert lines(log) == ["do before", "do code", "do after"]


def _resume_elsewhere(data_dir: Path, execution_id: str, allow: bool) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.engine_helpers", "resume", str(data_dir), execution_id,
         "true" if allow else "false"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("origin", [ORIGIN_API, None])
def test_the_mark_holds_when_another_process_resumes(host: Any, tmp_path: Path,
                                                     origin: str | None) -> None:
    log = tmp_path / "log"
    fd = host._runner().start("guarded", {"log": str(log)}, origin=origin)
    host.close_workflows()
    ended = _resume_elsewhere(tmp_path / "data", fd.uuid, allow=False)
    if origin == ORIGIN_API:
        assert "allow_plan_code" in ended["failed"], ended
        assert lines(log) == ["do before", "undo before"]
    else:
        assert ended == {"state": "SUCCESS"}
        assert lines(log) == ["do before", "do code", "do after"]


def test_paths_imply_an_api_user(host: Any, tmp_path: Path) -> None:
    from tripleo_flow.api.paths import ServerPaths

    log = tmp_path / "log"
    paths = ServerPaths.for_data_dir(tmp_path / "server")
    with pytest.raises(exceptions.WorkflowFailed, match="allow_plan_code"):
        host.run_workflow("guarded", {"log": str(log)}, paths=paths)
    assert "do code" not in lines(log)
