"""Isolated networks of pre-provisioned servers: addresses, VIPs, the environment."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.core.servers import baremetal, deployed_servers, isolated_networks

SUBNET = baremetal.Subnet()
FILES = [deployed_servers.DEPLOYED_NETWORKS]

NETWORKS: list[dict[str, Any]] = [
    {"name": "InternalApi", "name_lower": "internal_api", "vip": True, "mtu": 1400,
     "subnets": {"internal_api_subnet": {
         "ip_subnet": "172.16.2.0/24", "vlan": 20,
         "allocation_pools": [{"start": "172.16.2.4", "end": "172.16.2.7"}]}}},
    {"name": "Tenant", "name_lower": "tenant", "vip": False,
     "subnets": {"tenant_subnet": {
         "ip_subnet": "172.16.0.0/24", "gateway_ip": "172.16.0.4",
         "allocation_pools": [{"start": "172.16.0.4", "end": "172.16.0.9"}]},
         "tenant_leaf1": {"ip_subnet": "172.16.10.0/24",
                          "allocation_pools": [{"start": "172.16.10.4",
                                                "end": "172.16.10.9"}]}}},
    {"name": "Storage", "name_lower": "storage", "vip": True, "ipv6": True,
     "subnets": {"storage_subnet": {
         "ipv6_subnet": "fd00:fd00:fd00:3000::/64",
         "ipv6_allocation_pools": [{"start": "fd00:fd00:fd00:3000::10",
                                    "end": "fd00:fd00:fd00:3000::20"}]}}},
    {"name": "Unused", "enabled": False,
     "subnets": {"unused_subnet": {"ip_subnet": "10.9.0.0/24"}}},
]
ROLES_DATA: list[dict[str, Any]] = [
    {"name": "Controller",
     "networks": {"InternalApi": {"subnet": "internal_api_subnet"},
                  "Tenant": {"subnet": "tenant_subnet"},
                  "Storage": {"subnet": "storage_subnet"}, "Unused": {}}},
    {"name": "Compute", "networks": ["InternalApi", "Tenant"]},
    {"name": "CephStorage", "networks": ["Storage"]},
]
VIPS = [{"network": "ctlplane"}, {"network": "internal_api"},
        {"network": "storage", "ip_address": "fd00:fd00:fd00:3000::20"}]


def _servers(*computes: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": "Controller", "count": 1,
         "defaults": {"network_config": {"template": "templates/a.j2",
                                         "physical_bridge_name": "br-ex"}},
         "instances": [{"hostname": "ctl-0", "managed": False, "networks": [
             {"network": "ctlplane", "fixed_ip": "192.168.24.10"},
             {"network": "internal_api", "fixed_ip": "172.16.2.6"}]}]},
        {"name": "Compute", "count": len(computes), "instances": list(computes)},
    ]


def _compute(name: str, **networks: Any) -> dict[str, Any]:
    return {"hostname": name, "managed": False,
            "networks": [{"network": k, **v} for k, v in networks.items()]}


def _generate(data: Any, previous: dict[str, Any] | None = None,
              networks: list[dict[str, Any]] | None = None,
              vips: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    roles = baremetal.parse(data, SUBNET)
    return deployed_servers.generate(roles, SUBNET, "oc", FILES, previous,
                                     network_data=NETWORKS if networks is None else networks,
                                     roles_data=ROLES_DATA,
                                     vip_data=VIPS if vips is None else vips)


def _ips(env: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {host: {net: port["ip_address"] for net, port in nets.items()}
            for host, nets in env["parameter_defaults"]["NodePortMap"].items()}


def test_hosts_get_the_pool_addresses_of_their_roles_networks() -> None:
    env = _generate(_servers(_compute("cmp-0"), _compute("cmp-1")))
    # The VIPs first (internal_api's from its pool, storage's fixed), then the hosts
    # in file order; fixed IPs (172.16.2.6) and gateways (172.16.0.4) are skipped.
    assert _ips(env) == {
        "ctl-0": {"ctlplane": "192.168.24.10", "internal_api": "172.16.2.6",
                  "tenant": "172.16.0.5", "storage": "fd00:fd00:fd00:3000::10"},
        "cmp-0": {"ctlplane": "192.168.24.6", "internal_api": "172.16.2.5",
                  "tenant": "172.16.0.6"},
        "cmp-1": {"ctlplane": "192.168.24.7", "internal_api": "172.16.2.7",
                  "tenant": "172.16.0.7"},
    }
    params = env["parameter_defaults"]
    assert params["NodePortMap"]["ctl-0"]["storage"] == {
        "ip_address": "fd00:fd00:fd00:3000::10",
        "ip_address_uri": "[fd00:fd00:fd00:3000::10]",
        "ip_subnet": "fd00:fd00:fd00:3000::10/64"}
    assert params["VipPortMap"] == {
        "internal_api": {"ip_address": "172.16.2.4", "ip_address_uri": "172.16.2.4",
                         "ip_subnet": "172.16.2.4/24"},
        "storage": {"ip_address": "fd00:fd00:fd00:3000::20",
                    "ip_address_uri": "[fd00:fd00:fd00:3000::20]",
                    "ip_subnet": "fd00:fd00:fd00:3000::20/64"}}


def test_the_environment_has_the_deployed_networks_and_ports() -> None:
    env = _generate(_servers(_compute("cmp-0")))
    registry = env["resource_registry"]
    ports = {k: v for k, v in registry.items() if "::Ports::" in k and "ControlPlane" not in k}
    assert ports == {
        "OS::TripleO::Network::Ports::InternalApiVipPort":
            "network/ports/deployed_vip_internal_api.yaml",
        "OS::TripleO::Network::Ports::StorageVipPort": "network/ports/deployed_vip_storage.yaml",
        "OS::TripleO::Controller::Ports::InternalApiPort":
            "network/ports/deployed_internal_api.yaml",
        "OS::TripleO::Controller::Ports::TenantPort": "network/ports/deployed_tenant.yaml",
        "OS::TripleO::Controller::Ports::StoragePort": "network/ports/deployed_storage.yaml",
        "OS::TripleO::Compute::Ports::InternalApiPort": "network/ports/deployed_internal_api.yaml",
        "OS::TripleO::Compute::Ports::TenantPort": "network/ports/deployed_tenant.yaml",
        # a role of roles_data with no servers still gets its ports mapped
        "OS::TripleO::CephStorage::Ports::StoragePort": "network/ports/deployed_storage.yaml",
    }
    deployed = env["parameter_defaults"]["DeployedNetworkEnvironment"]
    assert deployed["net_cidr_map"] == {"internal_api": ["172.16.2.0/24"],
                                        "tenant": ["172.16.0.0/24", "172.16.10.0/24"],
                                        "storage": ["fd00:fd00:fd00:3000::/64"]}
    assert deployed["net_ip_version_map"] == {"internal_api": 4, "tenant": 4, "storage": 6}
    assert deployed["net_attributes_map"]["internal_api"] == {
        "network": {"dns_domain": "internal_api.localdomain.", "mtu": 1400,
                    "name": "internal_api",
                    "tags": ["tripleo_network_name=InternalApi", "tripleo_net_idx=0",
                             "tripleo_vip=true"]},
        "subnets": {"internal_api_subnet": {
            "cidr": "172.16.2.0/24", "gateway_ip": None, "host_routes": [],
            "ip_version": 4, "dns_nameservers": [], "name": "internal_api_subnet",
            "tags": ["tripleo_vlan_id=20"]}}}
    params = env["parameter_defaults"]
    assert params["ControllerNetworkConfigTemplate"] == "templates/a.j2"
    assert params["NeutronPhysicalBridge"] == "br-ex"


def test_addresses_are_kept_across_redeploys_and_freed_with_their_host() -> None:
    first = _generate(_servers(_compute("cmp-0"), _compute("cmp-1")))
    # The same file again: the same environment.
    assert _generate(_servers(_compute("cmp-0"), _compute("cmp-1")), first) == first
    # cmp-0 leaves; cmp-2 comes and takes the freed addresses, cmp-1 keeps its own,
    # even with the network list reordered.
    networks = [NETWORKS[1], NETWORKS[0], NETWORKS[2]]
    second = _generate(_servers(_compute("cmp-1"), _compute("cmp-2")), first, networks)
    assert _ips(second)["cmp-1"] == _ips(first)["cmp-1"]
    assert _ips(second)["cmp-2"]["internal_api"] == _ips(first)["cmp-0"]["internal_api"]
    assert _ips(second)["cmp-2"]["tenant"] == _ips(first)["cmp-0"]["tenant"]
    assert second["parameter_defaults"]["VipPortMap"] == \
        first["parameter_defaults"]["VipPortMap"]


def test_a_subnet_can_be_chosen_per_instance() -> None:
    env = _generate(_servers(_compute("cmp-0", tenant={"subnet": "tenant_leaf1"}),
                             _compute("cmp-1", tenant={"fixed_ip": "172.16.10.9",
                                                       "subnet": "tenant_leaf1"})))
    assert _ips(env)["cmp-0"]["tenant"] == "172.16.10.4"
    assert _ips(env)["cmp-1"]["tenant"] == "172.16.10.9"
    assert env["parameter_defaults"]["NodePortMap"]["cmp-0"]["tenant"]["ip_subnet"] == \
        "172.16.10.4/24"


def test_an_exhausted_pool_names_the_network_the_role_and_the_host() -> None:
    # internal_api has 4 addresses: the VIP, ctl-0's fixed one, cmp-0, cmp-1; cmp-2
    # finds none.
    data = _servers(_compute("cmp-0"), _compute("cmp-1"), _compute("cmp-2"))
    with pytest.raises(exceptions.InvalidInput,
                       match=r"Network internal_api \(subnet internal_api_subnet, pools "
                             r"172\.16\.2\.4-172\.16\.2\.7\) has no address left for host "
                             r"cmp-2 of role Compute: widen its allocation_pools"):
        _generate(data)


@pytest.mark.parametrize(("computes", "vips", "message"), [
    ([_compute("cmp-0", internal_api={"fixed_ip": "172.16.9.9"})], None,
     r"Role Compute, host cmp-0: fixed_ip 172\.16\.9\.9 is not in subnet "
     r"internal_api_subnet \(172\.16\.2\.0/24\)"),
    ([_compute("cmp-0", internal_api={"fixed_ip": "172.16.2.6"})], None,
     r"host ctl-0 and host cmp-0 both have the fixed IP 172\.16\.2\.6 on network "
     "internal_api"),
    ([_compute("cmp-0", tenant={"fixed_ip": "172.16.0.4"})], None,
     r"fixed_ip 172\.16\.0\.4 is the gateway of network tenant"),
    ([_compute("cmp-0", storage={})], None,
     "asks for network 'storage', which role Compute does not use"),
    ([_compute("cmp-0", unused={})], None,
     "asks for network 'unused', which the plan's network_data has not"),
    ([_compute("cmp-0", tenant={"subnet": "nope"})], None,
     "network tenant has no subnet 'nope'"),
    ([_compute("cmp-0")], [{"network": "internal_api", "ip_address": "172.16.2.6"}],
     r"the VIP of network internal_api and host ctl-0 both have the fixed IP"),
    ([_compute("cmp-0")], [{"network": "external"}],
     "VIP entry 1 of vip_data is on network 'external'"),
])
def test_bad_requests_are_refused_with_what_is_wrong(
        computes: list[dict[str, Any]], vips: list[dict[str, Any]] | None,
        message: str) -> None:
    with pytest.raises(exceptions.InvalidInput, match=message):
        _generate(_servers(*copy.deepcopy(computes)), vips=vips)


@pytest.mark.parametrize(("network_config", "message"), [
    ({"template": "/etc/passwd"}, "must be a path relative to the templates"),
    ({"template": "templates/../../x.j2"}, "without '..'"),
    ({"default_route_network": ["External"]}, "default_route_networks in roles_data"),
    ({"bogus": 1}, "unknown network_config key 'bogus'"),
    ({"network_config_update": "yes"}, "network_config_update 'yes' is not bool"),
    ({"num_dpdk_interface_rx_queues": True}, "num_dpdk_interface_rx_queues True is not int"),
    ({"net_config_data_lookup": ["x"]}, r"net_config_data_lookup \['x'\] is not dict"),
    ({"physical_bridge_name": "br-other"},
     r"physical_bridge_name 'br-other' differs from 'br-ex' of Role Controller, host "
     "ctl-0; the templates take one NeutronPhysicalBridge for all roles"),
])
def test_bad_network_config_is_refused(network_config: dict[str, Any], message: str) -> None:
    data = _servers(_compute("cmp-0"))
    data[1]["instances"][0]["network_config"] = network_config
    with pytest.raises(exceptions.InvalidInput, match=message):
        _generate(data)


def test_the_ussuri_shape_refuses_isolated_networks() -> None:
    roles = baremetal.parse(_servers(_compute("cmp-0")), SUBNET)
    with pytest.raises(exceptions.InvalidInput, match="ctl-0 ask for isolated networks"):
        deployed_servers.generate(roles, SUBNET, "oc", ["overcloud.yaml"])


def test_a_network_without_subnets_is_its_own_subnet() -> None:
    (net,) = isolated_networks.networks_of([
        {"name": "Management", "ip_subnet": "10.0.1.0/24", "gateway_ip": "10.0.1.1"}])
    assert (net.name_lower, net.subnets[0].name, net.subnets[0].cidr) == (
        "management", "management_subnet", "10.0.1.0/24")
    # no pools: the subnet's hosts, the gateway skipped
    assert list(net.subnets[0].addresses())[:2] == ["10.0.1.1", "10.0.1.2"]


def test_roles_data_with_networks_of_a_wrong_type_is_refused() -> None:
    with pytest.raises(exceptions.InvalidInput, match="Role 'X' of roles_data: networks"):
        isolated_networks.role_networks([{"name": "X", "networks": "InternalApi"}])
