"""The steps after the stack, ``tripleo.deploy.config_download_deploy``, on a real native
heat-all with the sample plan.

Both deploy workflows run them as their task ``finish``, a child execution of the
deploy.  Like every shipped workflow they can also be started alone (over the HTTP
API too), with the Heat and the stack request as inputs: the Heat they reach is the
one running for the work dir, whatever endpoint the ``heat`` input names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.heat.conftest import heat_processes, make_conf
from tripleo_flow.client import Client
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional


@pytest.fixture
def client(tmp_path: Path, heat_venv: Path) -> Client:
    return Client(make_conf(tmp_path, heat_venv), store=LocalStore(tmp_path / "plans"))


def test_the_steps_after_the_stack_run_alone_reach_the_work_dir_s_own_heat(
        client: Client, tmp_path: Path) -> None:
    work = tmp_path / "work"
    client.plans.create("oc", sample=True)
    client.deployments.create("oc", work_dir=work)
    [deploy] = [e for e in client.executions.list() if e.workflow == "tripleo.deploy.deploy"]
    tasks = {t.name: t for t in client.tasks.list(deploy.id)}
    [child_id] = tasks["finish"].executions
    child = client.executions.get(child_id)
    assert (child.workflow, child.state, child.parent_id, child.parent_task) == (
        "tripleo.deploy.config_download_deploy", "SUCCESS", deploy.id, "finish")
    request = tasks["check_plan"].published["stack_request"]
    try:
        client.heat.launch(str(work), "native", restore_db=True)
        execution = client.executions.create("tripleo.deploy.config_download_deploy", {
            "plan": "oc", "work_dir": str(work), "heat_type": "native",
            "heat": {"endpoint": "http://127.0.0.1:9/v1/admin", "heat_type": "native"},
            "stack_request": request})
        assert execution.state == "SUCCESS", execution
        assert client.deployments.status("oc")["deployment_status"] == "DEPLOY_SUCCESS"
    finally:
        client.heat.kill(str(work))
    assert heat_processes(HeatDir(work).conf_file) == []
