"""``deploy --run-ansible``: the sample plan's playbook runs against localhost (real Ansible)."""

from __future__ import annotations

import re
import shutil
import stat
from pathlib import Path

import pytest

from tests.functional.heat.conftest import heat_processes, make_conf
from tripleo_flow import exceptions
from tripleo_flow.actions.ansible import find_ansible_playbook
from tripleo_flow.actions.base import Rerun
from tripleo_flow.actions.registry import ActionRegistry
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.heat.workdir import HeatDir

pytestmark = pytest.mark.functional


@pytest.fixture
def client(tmp_path: Path, heat_venv: Path) -> Client:
    find_ansible_playbook()  # fails (not skips) when the ansible extra is missing
    return Client(make_conf(tmp_path, heat_venv))


def test_deploy_runs_the_deploy_steps_playbook_locally(client: Client, tmp_path: Path) -> None:
    work = tmp_path / "work"
    client.plans.create("oc", sample=True)
    result = client.deployments.create("oc", work_dir=work, run_ansible=True,
                                       ansible_connection="local")
    assert result["deployment_status"] == "DEPLOY_SUCCESS"
    log = (work / "ansible.log").read_text()
    assert stat.S_IMODE((work / "ansible.log").stat().st_mode) == 0o600
    assert "Controller step 1" in log and "Compute step 1" in log, log
    for host in ("oc-controller-0", "oc-novacompute-0"):
        assert f"{host}" in log and "failed=0" in log, log
    assert "ansible_connection: local" in (work / "ansible-connection.yaml").read_text()
    assert heat_processes(HeatDir(work).conf_file) == []

    # deploy.run_ansible is Rerun.CALLER: a resumed task runs the playbook once more on
    # the same config-download project and inventory (TripleO's deploy steps are written
    # to be run again); the run is logged anew and changes no file of the project.
    project = work / "config-download"
    files = {p: p.read_bytes() for p in sorted(project.rglob("*"))
             if p.is_file() and ".git" not in p.parts}
    connection = (work / "ansible-connection.yaml").read_bytes()
    action = ActionRegistry.load().get("deploy.run_ansible")
    assert action.rerun is Rerun.CALLER
    inputs = {"plan": "oc", "work_dir": str(work), "config_download": {"path": str(project)},
              "ansible_connection": "local"}
    (work / "ansible.log").write_text("the first run's log\n")
    result = action(client._session.context).execute(**inputs)
    assert result["returncode"] == 0
    log = (work / "ansible.log").read_text()
    assert "the first run's log" not in log and "Controller step 1" in log, log
    assert log.count("failed=0") == 2, log  # both hosts, again
    assert (work / "ansible-connection.yaml").read_bytes() == connection
    assert {p: p.read_bytes() for p in sorted(project.rglob("*"))
            if p.is_file() and ".git" not in p.parts} == files


def test_deploy_workflow_runs_the_playbook_when_asked(client: Client, tmp_path: Path) -> None:
    work = tmp_path / "work"
    client.plans.create("oc", sample=True)
    execution = client.executions.create("deploy", {
        "plan": "oc", "work_dir": str(work), "run_ansible": True,
        "ansible_connection": "local"})
    assert execution.state == "SUCCESS", execution
    tasks = {t.name: t for t in client.tasks.list(execution.id)}
    assert "run_ansible" not in tasks and tasks["finish"].state == "SUCCESS", tasks
    # finish ran the steps after the stack as a sub-workflow: the playbook among them
    [child] = tasks["finish"].executions
    steps = {t.name: t.state for t in client.tasks.list(child)}
    assert steps["run_ansible"] == steps["finish"] == "SUCCESS", steps
    log = (work / "ansible.log").read_text()
    assert "Controller step 1" in log and "failed=0" in log, log
    assert client.deployments.status("oc")["deployment_status"] == "DEPLOY_SUCCESS"


def test_failing_playbook_fails_the_deployment_and_keeps_the_stack(client: Client,
                                                                   tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(sample_plan_dir(), templates)
    role = templates / "puppet" / "role.role.j2.yaml"
    text = role.read_text()
    assert "          debug:\n" in text
    role.write_text(text.replace("          debug:\n", "          fail:\n", 1))
    client.plans.create("oc", templates)
    work = tmp_path / "work"
    with pytest.raises(exceptions.AnsibleFailed) as failed:
        client.deployments.create("oc", work_dir=work, run_ansible=True, ansible_connection="local")
    assert "step 1" in str(failed.value) and "ansible.log" in str(failed.value)
    status = client.deployments.status("oc")
    assert status["deployment_status"] == "DEPLOY_FAILED"
    assert "ansible-playbook exit" in status["message"]
    assert status["stack_status"] == "CREATE_COMPLETE"
    assert "--config-download-only" in status["message"]
    # The stack is kept, and the project rendered from it with it: Ansible can be re-run.
    assert (work / "config-download" / "deploy_steps_playbook.yaml").is_file()
    assert (work / "outputs.yaml").is_file()
    log = (work / "ansible.log").read_text()  # kept for debugging
    # tripleo_dense's failure line (tripleo-ansible installed, as in CI), else Ansible's own
    assert re.search(r"\|\s+FATAL\s+\| Say which \w+ step runs", log) or "FAILED!" in log
