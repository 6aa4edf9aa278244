"""THT 18.0.0 switched to network isolation by the redeploy (``tht18_redeployment``:
plan update with THT's sample network and VIP data, and one more compute) on three
pre-provisioned servers: the isolated networks' addresses and VIPs tripleo-flow
allocates without Neutron, for the servers already deployed and the added one."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
import yaml

from tests.functional.overcloud.conftest import (
    NETISO_CONTROLLER_INTERNAL_API,
    NETISO_TEMPLATE,
    Deployment,
    Redeployment,
)

pytestmark = pytest.mark.functional

#: THT 18.0.0's roles_data: the isolated networks of the two roles deployed.
ROLE_NETWORKS = {"controller-0": {"external", "internal_api", "storage", "storage_mgmt",
                                  "tenant"},
                 "compute-0": {"internal_api", "storage", "tenant"},
                 "compute-1": {"internal_api", "storage", "tenant"}}


def _environment(deployment: Deployment) -> dict[str, Any]:
    client = deployment.client()
    try:
        return yaml.safe_load(client._session.store.get_object(
            deployment.plan, "deployed-servers-environment.yaml"))
    finally:
        client.close()


def test_the_isolated_networks_redeploy_succeeded(tht18_redeployment: Redeployment) -> None:
    assert tht18_redeployment.after.result["deployment_status"] == "DEPLOY_SUCCESS"


def test_every_server_has_an_address_on_each_network_of_its_role(
        tht18_redeployment: Redeployment) -> None:
    deployment = tht18_redeployment.after
    params = _environment(deployment)["parameter_defaults"]
    cidrs = params["DeployedNetworkEnvironment"]["net_cidr_map"]
    assert set(cidrs) == {"external", "internal_api", "storage", "storage_mgmt", "tenant"}
    seen = set()
    for host, networks in ROLE_NETWORKS.items():
        ports = params["NodePortMap"][host]
        assert set(ports) == networks | {"ctlplane"}
        for net in networks:
            address = ports[net]["ip_address"]
            assert ipaddress.ip_address(address) in ipaddress.ip_network(cidrs[net][0])
            assert (net, address) not in seen
            seen.add((net, address))
    assert params["NodePortMap"]["controller-0"]["internal_api"]["ip_address"] == \
        NETISO_CONTROLLER_INTERNAL_API
    assert set(params["VipPortMap"]) == {"external", "internal_api", "storage",
                                         "storage_mgmt"}
    assert params["ControllerNetworkConfigTemplate"] == NETISO_TEMPLATE


def test_the_stack_uses_the_allocated_addresses(tht18_redeployment: Redeployment) -> None:
    """The real templates' outputs carry the addresses of the generated environment."""
    deployment = tht18_redeployment.after
    params = _environment(deployment)["parameter_defaults"]
    outputs = yaml.safe_load((deployment.work_dir / "outputs.yaml").read_text())["outputs"]
    ip_map = outputs["RoleNetIpMap"]
    assert ip_map["Controller"]["internal_api"] == [NETISO_CONTROLLER_INTERNAL_API]
    assert ip_map["Compute"]["tenant"] == [
        params["NodePortMap"][host]["tenant"]["ip_address"]
        for host in ("compute-0", "compute-1")]
    assert "storage_mgmt" not in {k for k, v in ip_map["Compute"].items() if v}
    vips = outputs["VipMap"]
    assert vips["internal_api"] == params["VipPortMap"]["internal_api"]["ip_address"]


def test_config_download_shows_the_isolated_addresses(
        tht18_redeployment: Redeployment) -> None:
    deployment = tht18_redeployment.after
    params = _environment(deployment)["parameter_defaults"]
    cd = deployment.config_download
    inventory = yaml.safe_load((cd / "tripleo-ansible-inventory.yaml").read_text())
    controller = inventory[f"{deployment.plan}_Controller"]["hosts"]["controller-0"]
    compute = inventory[f"{deployment.plan}_Compute"]["hosts"]["compute-0"]
    added = inventory[f"{deployment.plan}_Compute"]["hosts"]["compute-1"]
    assert controller["internal_api_ip"] == NETISO_CONTROLLER_INTERNAL_API
    assert controller["external_ip"] == params["NodePortMap"]["controller-0"]["external"][
        "ip_address"]
    assert compute["storage_ip"] == params["NodePortMap"]["compute-0"]["storage"][
        "ip_address"]
    assert added["tenant_ip"] == params["NodePortMap"]["compute-1"]["tenant"]["ip_address"]
    assert "external_ip" not in compute and "external_ip" not in added
    group_vars = yaml.safe_load((cd / "group_vars" / "Controller").read_text())
    assert group_vars["tripleo_network_config_template"] == NETISO_TEMPLATE
