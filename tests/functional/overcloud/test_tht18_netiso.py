"""THT 18.0.0 with network isolation onto two pre-provisioned servers: the isolated
networks' addresses and VIPs tripleo-flow allocates without Neutron."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
import yaml

from tests.functional.overcloud.conftest import (
    NETISO_CONTROLLER_INTERNAL_API,
    NETISO_TEMPLATE,
    Deployment,
)

pytestmark = pytest.mark.functional

#: THT 18.0.0's roles_data: the isolated networks of the two roles deployed.
ROLE_NETWORKS = {"controller-0": {"external", "internal_api", "storage", "storage_mgmt",
                                  "tenant"},
                 "compute-0": {"internal_api", "storage", "tenant"}}


def _environment(deployment: Deployment) -> dict[str, Any]:
    client = deployment.client()
    try:
        return yaml.safe_load(client.store.get_object(
            deployment.plan, "deployed-servers-environment.yaml"))
    finally:
        client.close()


def test_the_isolated_networks_deploy_succeeded(tht18_netiso_deployment: Deployment) -> None:
    assert tht18_netiso_deployment.result["deployment_status"] == "DEPLOY_SUCCESS"


def test_every_server_has_an_address_on_each_network_of_its_role(
        tht18_netiso_deployment: Deployment) -> None:
    params = _environment(tht18_netiso_deployment)["parameter_defaults"]
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


def test_the_stack_uses_the_allocated_addresses(tht18_netiso_deployment: Deployment) -> None:
    """The real templates' outputs carry the addresses of the generated environment."""
    params = _environment(tht18_netiso_deployment)["parameter_defaults"]
    outputs = yaml.safe_load(
        (tht18_netiso_deployment.work_dir / "outputs.yaml").read_text())["outputs"]
    ip_map = outputs["RoleNetIpMap"]
    assert ip_map["Controller"]["internal_api"] == [NETISO_CONTROLLER_INTERNAL_API]
    assert ip_map["Compute"]["tenant"] == [
        params["NodePortMap"]["compute-0"]["tenant"]["ip_address"]]
    assert "storage_mgmt" not in {k for k, v in ip_map["Compute"].items() if v}
    vips = outputs["VipMap"]
    assert vips["internal_api"] == params["VipPortMap"]["internal_api"]["ip_address"]


def test_config_download_shows_the_isolated_addresses(
        tht18_netiso_deployment: Deployment) -> None:
    params = _environment(tht18_netiso_deployment)["parameter_defaults"]
    cd = tht18_netiso_deployment.config_download
    inventory = yaml.safe_load((cd / "tripleo-ansible-inventory.yaml").read_text())
    controller = inventory["Controller"]["hosts"]["controller-0"]
    compute = inventory["Compute"]["hosts"]["compute-0"]
    assert controller["internal_api_ip"] == NETISO_CONTROLLER_INTERNAL_API
    assert controller["external_ip"] == params["NodePortMap"]["controller-0"]["external"][
        "ip_address"]
    assert compute["storage_ip"] == params["NodePortMap"]["compute-0"]["storage"][
        "ip_address"]
    assert "external_ip" not in compute
    group_vars = yaml.safe_load((cd / "group_vars" / "Controller").read_text())
    assert group_vars["tripleo_network_config_template"] == NETISO_TEMPLATE
