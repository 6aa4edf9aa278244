"""Whole deployments of the shipped sample plan on a real native heat-all, and rollback."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.functional.heat.conftest import check_create_progress, heat_processes, make_conf
from tripleo_flow import exceptions
from tripleo_flow.client import Client
from tripleo_flow.client.plans import sample_plan_dir
from tripleo_flow.core.deploy.progress import StackProgress
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.plans.local import LocalStore

pytestmark = pytest.mark.functional

FAILING_RESOURCE = """
  BrokenOnPurpose:
    type: OS::Heat::TestResource
    properties:
      fail: true
      value: injected failure
"""


@pytest.fixture
def local_client(tmp_path: Path, heat_venv: Path) -> Client:
    return Client(make_conf(tmp_path, heat_venv), store=LocalStore(tmp_path / "plans"))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _commits(repo: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "log", "--format=%H"], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def _assert_heat_gone(work: Path) -> None:
    heat = HeatDir(work)
    assert heat_processes(heat.conf_file) == []
    assert heat.read_run() is None
    assert heat.dump_file.exists() and heat.dump_file.stat().st_size > 0


def test_deploy_sample_plan_then_update_then_refuse_fsid_change(
        local_client: Client, tmp_path: Path) -> None:
    client = local_client
    work = tmp_path / "work"
    client.plans.create("oc", sample=True)
    client.parameters.set("oc", {"CephClusterFSID": "fsid-1"})

    reports: list[StackProgress] = []
    result = client.deployments.create("oc", heat_type="native", work_dir=work,
                                       progress=reports.append)
    assert result["deployment_status"] == "DEPLOY_SUCCESS"
    assert client.deployments.status("oc")["deployment_status"] == "DEPLOY_SUCCESS"
    check_create_progress(reports)
    assert client.deployments.failures("oc") == []
    _assert_heat_gone(work)

    cd = work / "config-download"
    for path in ("tripleo-ansible-inventory.yaml", "deploy_steps_playbook.yaml",
                 "global_vars.yaml", "group_vars/Controller", "group_vars/Compute",
                 "host_vars/oc-controller-0", "host_vars/oc-novacompute-0",
                 "Controller/deploy_steps_tasks_step1.yaml",
                 "Controller/oc-controller-0/ControllerDeployment",
                 "Compute/oc-novacompute-0/ComputeDeployment"):
        assert (cd / path).is_file(), path
        assert _mode(cd / path) == 0o600, path
    assert _mode(cd) == 0o700 and _mode(cd / "Controller" / "oc-controller-0") == 0o700
    inventory = yaml.safe_load((cd / "tripleo-ansible-inventory.yaml").read_text())
    assert list(inventory["oc_Controller"]["hosts"]) == ["oc-controller-0"]
    assert set(inventory["oc_oc"]["children"]) == {"oc_Controller", "oc_Compute"}
    assert inventory["allovercloud"]["children"] == {"oc_allovercloud": {}}
    assert inventory["oc_nova_compute"]["children"] == {"oc_Compute": {}}
    assert inventory["oc_mysql"]["children"] == {"oc_Controller": {}}
    step1 = yaml.safe_load((cd / "Controller/deploy_steps_tasks_step1.yaml").read_text())
    assert [t["name"] for t in step1] == ["Say which Controller step runs"]
    deployment = yaml.safe_load((cd / "Compute/oc-novacompute-0/ComputeDeployment").read_text())
    deployment = deployment["ComputeDeployment"]  # TripleO's {name: what the hook reads}
    inputs = {i["name"]: i["value"] for i in deployment["inputs"]}
    assert inputs["hostname"] == "oc-novacompute-0"
    assert deployment["config"]["datafiles"]["role"]["tripleo_role_name"] == "Compute"
    assert len(_commits(cd)) == 1
    for name in ("outputs.yaml", "environment.yaml"):
        assert _mode(work / name) == 0o600
    saved = yaml.safe_load((work / "environment.yaml").read_text())
    assert saved["parameters"]["CephClusterFSID"] == "fsid-1"

    # An update restores Heat from the dump and adds one commit.
    client.parameters.set("oc", {"ComputeCount": 2})
    reports = []
    client.deployments.create("oc", heat_type="native", work_dir=work, progress=reports.append)
    updating = [r.fraction() for r in reports]
    assert updating == sorted(updating) and updating[-1] == 1.0
    assert reports[-1].status == "UPDATE_COMPLETE"
    assert len(_commits(cd)) == 2
    assert (cd / "host_vars/oc-novacompute-1").is_file()
    _assert_heat_gone(work)
    dump_before = HeatDir(work).dump_file.read_bytes()

    # A changed CephClusterFSID is refused before Heat starts; nothing changes.
    client.parameters.set("oc", {"CephClusterFSID": "fsid-2"})
    with pytest.raises(exceptions.InvalidInput) as refused:
        client.deployments.create("oc", heat_type="native", work_dir=work)
    assert "CephClusterFSID" in str(refused.value)
    status = client.deployments.status("oc")
    assert status["deployment_status"] == "DEPLOY_FAILED"
    assert "CephClusterFSID" in status["message"]
    assert len(_commits(cd)) == 2
    assert HeatDir(work).dump_file.read_bytes() == dump_before
    assert heat_processes(HeatDir(work).conf_file) == []


def test_failed_resource_rolls_back(local_client: Client, tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(sample_plan_dir(), templates)
    root = templates / "overcloud.j2.yaml"
    text = root.read_text()
    root.write_text(text.replace("\noutputs:\n", FAILING_RESOURCE + "\noutputs:\n", 1))
    client = local_client
    client.plans.create("broken", templates)
    work = tmp_path / "work"

    with pytest.raises(exceptions.StackFailed) as failed:
        client.deployments.create("broken", heat_type="native", work_dir=work)
    assert "BrokenOnPurpose" in str(failed.value)

    status = client.deployments.status("broken")
    assert status["deployment_status"] == "DEPLOY_FAILED"
    assert "CREATE_FAILED" in status["message"]
    failures = client.deployments.failures("broken")
    assert any(f["resource"] == "BrokenOnPurpose" and "injected failure" in f["reason"]
               or f["resource"] == "BrokenOnPurpose" for f in failures)
    _assert_heat_gone(work)  # killed, database dumped and kept for debugging
    assert not (work / "config-download").exists()
    assert not (work / "outputs.yaml").exists()
    assert not (work / "environment.yaml").exists()
