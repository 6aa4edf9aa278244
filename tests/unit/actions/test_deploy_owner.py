"""A plan left DEPLOYING by a crashed run: shown as such, and a new deployment is allowed.

Real processes, real local plan store: a child records DEPLOYING and dies with
``os._exit`` (no revert runs), as a killed ``tripleo-flow deploy`` would.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tripleo_flow import config, exceptions
from tripleo_flow.actions.deploy import StartDeployment
from tripleo_flow.client import Client
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.plan import PlanRepository
from tripleo_flow.workspace import owner

ROOT = Path(__file__).resolve().parents[3]
CRASH = """
import os, sys
from tripleo_flow.actions.base import ActionContext
from tripleo_flow.actions.deploy import StartDeployment
from tripleo_flow.plans.local import LocalStore
from tripleo_flow.plans.lock import PlanLocks
from tripleo_flow import config
ctx = ActionContext(store=LocalStore(sys.argv[1]), locks=PlanLocks("file://" + sys.argv[2], 5),
                    conf=config.load([]))
StartDeployment(ctx).execute(plan="oc", work_dir=sys.argv[3], heat_type="native")
os._exit(9)
"""


@pytest.fixture
def client(tmp_path: Path) -> Client:
    conf = config.new_conf()
    conf([], project="tripleo-flow", default_config_files=[], default_config_dirs=[])
    conf.set_override("data_dir", str(tmp_path / "data"))
    api = Client(conf, store=LocalStore(tmp_path / "plans"))
    api.plans.create("oc", sample=True)
    return api


def _exited_pid() -> int:
    """The pid of a process that ended (``true``: a Python child took 100 ms)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_liveness_of_owners() -> None:
    me = owner.current()
    assert owner.liveness(me) == owner.RUNNING
    assert owner.liveness({**me, "started": (me["started"] or 0) + 1}) == owner.GONE  # reused pid
    assert owner.liveness({**me, "pid": _exited_pid()}) == owner.GONE
    assert owner.liveness({**me, "host": socket.gethostname() + "-other"}) == owner.UNKNOWN
    assert owner.liveness(None) == owner.UNKNOWN
    assert owner.describe(me) == f"pid {os.getpid()} on {socket.gethostname()}"


def test_crashed_deploy_is_shown_and_a_new_deploy_is_allowed(
        client: Client, tmp_path: Path) -> None:
    work = tmp_path / "work"
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH, str(tmp_path / "plans"), str(tmp_path / "locks"),
         str(work)], env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, check=False)
    assert crashed.returncode == 9, crashed.stderr

    status = client.deployments.status("oc")
    assert status["deployment_status"] == "DEPLOY_INTERRUPTED"
    assert status["process"].endswith("(gone)") and "pid " in status["process"]
    assert "deploy again" in status["message"]

    StartDeployment(client._session.context).execute(plan="oc", work_dir=str(work),
                                                     heat_type="native")
    record = PlanRepository(client._session.store).deployment_status("oc")
    assert record is not None and record["owner"]["pid"] == os.getpid()
    status = client.deployments.status("oc")
    assert status["process"].endswith("(running)")

    # Now this live process owns it: another deployment is refused, naming it.
    with pytest.raises(exceptions.DeploymentRunning) as refused:
        StartDeployment(client._session.context).execute(plan="oc", work_dir=str(work),
                                                         heat_type="native")
    assert f"pid {os.getpid()}" in str(refused.value)
    assert "deployment status --plan oc" in str(refused.value)


def test_deploying_record_of_another_host_still_blocks(client: Client, tmp_path: Path) -> None:
    repo = PlanRepository(client._session.store)
    repo.set_deployment_status("oc", {"deployment_status": "DEPLOYING", "message": "",
                                      "owner": {"host": "elsewhere", "pid": 1, "started": 1}})
    assert client.deployments.status("oc")["process"] == "pid 1 on elsewhere (unknown)"
    with pytest.raises(exceptions.DeploymentRunning, match="pid 1 on elsewhere"):
        StartDeployment(client._session.context).execute(plan="oc", work_dir=str(tmp_path / "w"),
                                                         heat_type="native")




def test_a_deploy_naming_no_heat_type_uses_the_one_its_work_dir_was_deployed_with(
        client: Client, tmp_path: Path) -> None:
    """The deployment status' heat type counts for its own work dir only (a heat-dir
    whose dump records its type: tests/unit/heat/test_heat_type_resolution.py)."""
    repo = PlanRepository(client._session.store)
    work = str(tmp_path / "work")
    repo.set_deployment_status("oc", {"deployment_status": "DEPLOY_SUCCESS", "message": "",
                                      "work_dir": work, "heat_type": "processes"})
    started = StartDeployment(client._session.context).execute(plan="oc", work_dir=work,
                                                               heat_type=None)
    assert started["heat_type"] == "processes"
    assert (repo.deployment_status("oc") or {})["heat_type"] == "processes"

    repo.set_deployment_status("oc", {"deployment_status": "DEPLOY_SUCCESS", "message": "",
                                      "work_dir": work, "heat_type": "processes"})
    elsewhere = StartDeployment(client._session.context).execute(plan="oc",
                                                                 work_dir=work + "-other",
                                                                 heat_type=None)
    assert elsewhere["heat_type"] == client.conf.heat.heat_type
