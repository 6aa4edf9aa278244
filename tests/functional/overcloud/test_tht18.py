"""THT 18.0.0 deployed unmodified onto two pre-provisioned servers (ctlplane only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.functional.heat.conftest import OpenStack
from tests.functional.overcloud.conftest import Deployment

pytestmark = pytest.mark.functional


def test_the_deploy_succeeded_and_its_status_says_so(tht18_deployment: Deployment) -> None:
    assert tht18_deployment.result["deployment_status"] == "DEPLOY_SUCCESS"
    client = tht18_deployment.client()
    try:
        status = client.deployment_status(tht18_deployment.plan)
    finally:
        client.close()
    assert status["deployment_status"] == "DEPLOY_SUCCESS", status


def test_the_stack_outputs_are_the_real_templates_outputs(tht18_deployment: Deployment) -> None:
    saved = yaml.safe_load((tht18_deployment.work_dir / "outputs.yaml").read_text())
    outputs = saved["outputs"]
    # What THT really outputs, per role: the two servers, and nothing for the roles
    # with a count of 0.
    hostnames = {role: net_map.get("ctlplane")
                 for role, net_map in outputs["RoleNetHostnameMap"].items() if net_map}
    assert hostnames == {"Controller": ["controller-0.ctlplane.localdomain"],
                         "Compute": ["compute-0.ctlplane.localdomain"]}
    servers = {role: len(ids) for role, ids in outputs["ServerIdData"]["server_ids"].items()
               if ids}
    assert servers == {"Controller": 1, "Compute": 1}
    assert "deploy_steps_tasks" in outputs["RoleData"]["Controller"]
    assert outputs["AnsibleHostVarsMap"]["Controller"]["controller-0"]

def test_config_download_has_both_servers_on_their_ctlplane_ips(
        tht18_deployment: Deployment) -> None:
    cd = tht18_deployment.config_download
    inventory = yaml.safe_load((cd / "tripleo-ansible-inventory.yaml").read_text())
    hosts = {}
    for group in ("Controller", "Compute"):
        hosts.update(inventory[group]["hosts"])
    assert {name: host["ansible_host"] for name, host in hosts.items()} == {
        "controller-0": "192.168.24.10", "compute-0": "192.168.24.20"}
    assert (cd / "deploy_steps_playbook.yaml").is_file()


def test_the_dump_restores_and_the_stack_is_listed(tht18_deployment: Deployment,
                                                   heat_venv: Path) -> None:
    """The kept dump restores on a fresh Heat: ``openstack stack list`` shows the stack."""
    client = tht18_deployment.client()
    heat_dir = str(tht18_deployment.work_dir)
    osc = OpenStack(heat_venv, str(tht18_deployment.root / "clouds.yaml"))
    try:
        client.launch_heat(heat_dir, "native", restore_db=True)
        listed = json.loads(osc("stack", "list", "-f", "json"))
        assert [(s["Stack Name"], s["Stack Status"]) for s in listed] == [
            ("overcloud18", "CREATE_COMPLETE")]
    finally:
        client.kill_heat(heat_dir)
        client.close()
