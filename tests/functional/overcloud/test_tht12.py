"""THT 12.1.0 (Ussuri) deployed unmodified onto two pre-provisioned servers, ctlplane only."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.functional.overcloud import playbooks
from tests.functional.overcloud.conftest import Deployment

pytestmark = pytest.mark.functional


def test_the_deploy_succeeded_with_the_ussuri_port_map(tht12_deployment: Deployment) -> None:
    assert tht12_deployment.result["deployment_status"] == "DEPLOY_SUCCESS"
    client = tht12_deployment.client()
    try:
        assert client.deployments.status(tht12_deployment.plan)["deployment_status"] == \
            "DEPLOY_SUCCESS"
        env = yaml.safe_load(client._session.store.get_object(
            tht12_deployment.plan, "deployed-servers-environment.yaml"))
    finally:
        client.close()
    # 12.1.0 has no deployed networks: the VIP is a port of the port map.
    ports = env["parameter_defaults"]["DeployedServerPortMap"]
    assert ports["control_virtual_ip"]["fixed_ips"] == [{"ip_address": "192.168.24.5"}]
    assert "CtlplaneNetworkAttributes" not in env["parameter_defaults"]


def test_config_download_has_both_servers(tht12_deployment: Deployment) -> None:
    cd = tht12_deployment.config_download
    inventory = yaml.safe_load((cd / "tripleo-ansible-inventory.yaml").read_text())
    hosts = {}
    for group in ("Controller", "Compute"):
        hosts.update(inventory[group]["hosts"])  # Ussuri's inventory: no plan prefix
    assert {name: host["ansible_host"] for name, host in hosts.items()} == {
        "controller-0": "192.168.24.10", "compute-0": "192.168.24.20"}
    assert (cd / "deploy_steps_playbook.yaml").is_file()


def test_config_download_writes_the_controllers_network_config(
        tht12_deployment: Deployment) -> None:
    """Ussuri's HostnameNetworkConfigMap: the controller's ``Net::SoftwareConfig`` is
    net-config-bridge.yaml (an os-net-config script, per server and per role), the
    compute's net-config-noop.yaml (an empty config: no file), as tripleo-common 12.1.0."""
    cd = tht12_deployment.config_download
    script = (cd / "Controller" / "controller-0" / "NetworkConfig").read_text()
    assert "os-net-config" in script and "ovs_bridge" in script
    assert (cd / "Controller" / "NetworkConfig").read_text() == script
    assert not list(cd.glob("Compute/**/NetworkConfig"))


def test_every_playbook_passes_ansible_syntax_check_with_tripleo_ansible(
        tht12_deployment: Deployment, ansible_venv: Path, tmp_path: Path) -> None:
    """As for 18.0.0: every top-level playbook loads with tripleo-ansible."""
    project = tht12_deployment.config_download
    names = playbooks.playbooks(project)
    assert {"deploy_steps_playbook.yaml", "update_steps_playbook.yaml",
            "upgrade_steps_playbook.yaml"} <= set(names)
    failed = playbooks.failures(project, ansible_venv, tmp_path / "home")
    assert failed == {}, failed
