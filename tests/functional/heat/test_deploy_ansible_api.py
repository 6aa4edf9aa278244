"""``deploy`` with ``run_ansible`` over the HTTP API: the plan's playbook would run on the
server, so it is refused before anything changes unless ``[api] allow_plan_code``; the CLI
keeps running it (real in-process API server, real heat-all, real Ansible)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.functional.heat.conftest import heat_processes
from tests.functional.http.conftest import Api, finished, running_api
from tests.functional.mariadb import free_port
from tripleo_flow.actions.ansible import find_ansible_playbook
from tripleo_flow.cli.main import main
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional

DEPLOY_INPUT = {"plan": "oc", "heat_type": "native", "work_dir": "oc", "run_ansible": True,
                "ansible_connection": "local"}


def _overrides(heat_venv: Path, tmp_path: Path, **api: Any) -> dict[str, dict[str, Any]]:
    # A Heat port of its own: the default one may be held by another Heat on this machine.
    return {"heat": {"venv": str(heat_venv), "api_port": free_port(), "api_timeout": 180.0,
                     "clouds_yaml": str(tmp_path / "clouds.yaml")}, "api": api}


def _deploy(api: Api, timeout: float) -> dict[str, Any]:
    created = api("POST", "/v1/plans", params={"name": "oc", "sample": "true"})
    assert created.status_code == 201, created.text
    started = api("POST", "/v1/workflows/deploy/executions", json={"input": DEPLOY_INPUT})
    assert started.status_code == 202, started.text
    return finished(api, started.json()["id"], timeout)


def _ran(api: Api, execution_id: str) -> dict[str, str]:
    tasks = api("GET", f"/v1/executions/{execution_id}/tasks").json()
    return {t["name"]: t["state"] for t in tasks}


def test_http_deploy_running_the_playbook_is_refused_before_heat(
        tmp_path: Path, heat_venv: Path) -> None:
    with running_api(tmp_path, _overrides(heat_venv, tmp_path)) as api:
        created = api("POST", "/v1/plans", params={"name": "oc", "sample": "true"})
        assert created.status_code == 201, created.text
        parameters = api.client.parameters.get("oc")
        history = api.client.plans.history("oc")
        started = api("POST", "/v1/workflows/deploy/executions", json={"input": DEPLOY_INPUT})
        assert started.status_code == 202, started.text
        execution = finished(api, started.json()["id"])
        assert execution["state"] == "ERROR", execution
        assert execution["failed_task"] == "check_ansible", execution
        for words in ("'check_ansible'", "ansible.check", "[api] allow_plan_code = true",
                      "started over the HTTP API"):
            assert words in execution["error"], execution["error"]
        ran = _ran(api, execution["id"])
        # The deployment was never started.  (The branches not taken, deployed_servers
        # without a baremetal deployment file, set_environments without user
        # environments and the validations without run_validations, are only walked
        # back by the revert; the plan history below shows they changed nothing.)
        skipped = {"deployed_servers", "set_environments", "select_validations",
                   "validate_each", "check_validations"}
        assert {name for name, state in ran.items()
                if state != "PENDING" and name not in skipped} == {
            "begin", "validated", "servers_ready", "environments_ready",
            "check_ansible"}, ran
        for name in skipped:  # not reached: no task execution (the state machine)
            assert ran.get(name, "PENDING") in ("PENDING", "IGNORE", "REVERTED"), ran
        work = Path(api.client.data_dir) / "work" / "oc"
        assert not HeatDir(work).conf_file.exists()  # no Heat launched, so no stack
        assert heat_processes(HeatDir(work).conf_file) == []
        status = api("GET", "/v1/plans/oc/deployment").json()
        assert status["deployment_status"] == "NONE", status
        assert api.client.parameters.get("oc") == parameters
        assert api.client.plans.history("oc") == history


def test_http_deploy_runs_the_playbook_when_the_server_allows_plan_code(
        tmp_path: Path, heat_venv: Path) -> None:
    find_ansible_playbook()  # fails (not skips) when the ansible extra is missing
    with running_api(tmp_path, _overrides(heat_venv, tmp_path, allow_plan_code=True)) as api:
        execution = _deploy(api, timeout=1200)
        assert execution["state"] == "SUCCESS", execution
        ran = _ran(api, execution["id"])
        assert ran["check_ansible"] == ran["finish"] == "SUCCESS", ran
        # finish ran the steps after the stack as a sub-workflow: the playbook among them
        [child] = [e for e in api("GET", "/v1/executions").json()
                   if e.get("parent_id") == execution["id"]]
        assert _ran(api, child["id"])["run_ansible"] == "SUCCESS"
        work = Path(api.client.data_dir) / "work" / "oc"
        log = (work / "ansible.log").read_text()
        assert "Controller step 1" in log and "failed=0" in log, log
        status = api("GET", "/v1/plans/oc/deployment").json()
        assert status["deployment_status"] == "DEPLOY_SUCCESS", status
        assert heat_processes(HeatDir(work).conf_file) == []


def test_cli_deploy_still_runs_the_playbook_locally(
        tmp_path: Path, heat_venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    find_ansible_playbook()
    conf_file = tmp_path / "tripleo-flow.conf"
    conf_file.write_text(f"[DEFAULT]\ndata_dir = {tmp_path / 'data'}\n"
                         f"[heat]\nvenv = {heat_venv}\napi_port = {free_port()}\n"
                         f"clouds_yaml = {tmp_path / 'clouds.yaml'}\napi_timeout = 180\n")
    conf = ["--config-file", str(conf_file)]
    assert main([*conf, "plan", "create", "oc", "--sample"]) == 0
    work = tmp_path / "work"
    capsys.readouterr()
    assert main([*conf, "deploy", "--plan", "oc", "--work-dir", str(work), "--run-ansible",
                 "--ansible-connection", "local", "-f", "value",
                 "-c", "deployment_status"]) == 0
    assert capsys.readouterr().out.strip() == "DEPLOY_SUCCESS"
    assert "Controller step 1" in (work / "ansible.log").read_text()
