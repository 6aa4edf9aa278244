"""Table-driven tests of tripleo_flow.core.plan.roles."""

from __future__ import annotations

from typing import Any

import pytest

from tripleo_flow import exceptions
from tripleo_flow.core.plan import roles as core_roles

CONTROLLER = {"name": "Controller", "tags": ["primary", "controller"], "CountDefault": 1,
              "ServicesDefault": ["OS::TripleO::Services::Keystone"]}
COMPUTE = {"name": "Compute", "CountDefault": 1, "ServicesDefault": []}


def role(**overrides: Any) -> dict[str, Any]:
    return {**COMPUTE, **overrides}


@pytest.mark.parametrize(
    "roles",
    [
        [CONTROLLER],
        [CONTROLLER, COMPUTE],
        [COMPUTE, CONTROLLER],
        # no primary tag: TripleO takes the first role
        [role(name="A"), role(name="B")],
        # a lone role may carry 'primary' alone (UndercloudMinion does)
        [role(name="Minion", tags=["primary"])],
        [role(networks={"InternalApi": {"subnet": "internal_api_subnet"}})],
        [role(networks=["InternalApi"], HostnameFormatDefault="%stackname%-x-%index%",
              description="text", upgrade_batch_size=1, update_serial=25,
              disable_constraints=False, RoleParametersDefault={"a": 1})],
    ],
)
def test_valid_roles(roles: list[dict[str, Any]]) -> None:
    core_roles.validate_roles(roles)


@pytest.mark.parametrize(
    ("roles", "fragments"),
    [
        ([], ["no roles"]),
        ([CONTROLLER, "Compute"], ["entry 2", "not a mapping"]),
        ([{"CountDefault": 1}], ["entry 1", "no 'name'"]),
        ([role(name="Comp-ute")], ["'Comp-ute'", "pattern"]),
        ([role(name="1Compute")], ["'1Compute'"]),
        ([CONTROLLER, COMPUTE, COMPUTE], ["'Compute'", "twice"]),
        ([CONTROLLER, role(name="compute"), COMPUTE], ["'compute'", "'Compute'", "unique"]),
        ([role(CountDefault="3")], ["'Compute'", "CountDefault", "integer"]),
        ([role(CountDefault=True)], ["CountDefault"]),
        ([role(CountDefault=-1)], ["CountDefault", ">= 0"]),
        ([role(ServicesDefault="OS::TripleO::Services::Kernel")], ["ServicesDefault", "list"]),
        ([role(ServicesDefault=["a", 3])], ["ServicesDefault", "3"]),
        ([role(ServicesDefault=["a", "b", "a"])], ["ServicesDefault", "a twice"]),
        ([role(tags="primary")], ["tags"]),
        ([role(networks="InternalApi")], ["networks"]),
        ([role(HostnameFormatDefault=3)], ["HostnameFormatDefault"]),
        ([CONTROLLER, role(tags=["primary", "controller"])], ["'Controller'", "'Compute'",
                                                              "primary"]),
        ([role(name="Ctl", tags=["primary"]), COMPUTE], ["'Ctl'", "controller"]),
    ],
)
def test_invalid_roles(roles: list[Any], fragments: list[str]) -> None:
    with pytest.raises(exceptions.InvalidRoles) as info:
        core_roles.validate_roles(roles)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert "roles_data.yaml" in str(info.value)


def test_require_primary_tag() -> None:
    core_roles.validate_roles([COMPUTE])
    with pytest.raises(exceptions.InvalidRoles, match="tagged 'primary'"):
        core_roles.validate_roles([COMPUTE], require_primary_tag=True)


@pytest.mark.parametrize(
    ("roles", "primary"),
    [
        ([CONTROLLER, COMPUTE], "Controller"),
        ([COMPUTE, CONTROLLER], "Controller"),
        ([role(name="A"), role(name="B")], "A"),
        ([role(name="Minion", tags=["primary"])], "Minion"),
    ],
)
def test_primary_role(roles: list[dict[str, Any]], primary: str) -> None:
    assert core_roles.primary_role(roles)["name"] == primary


INTERNAL = {"name": "InternalApi", "name_lower": "internal_api", "vlan": 20,
            "ip_subnet": "172.16.2.0/24",
            "allocation_pools": [{"start": "172.16.2.4", "end": "172.16.2.250"}],
            "ipv6_subnet": "fd00:fd00:fd00:2000::/64",
            "ipv6_allocation_pools": [{"start": "fd00:fd00:fd00:2000::10",
                                       "end": "fd00:fd00:fd00:2000:ffff:ffff:ffff:fffe"}],
            "mtu": 1500}


def net(**overrides: Any) -> dict[str, Any]:
    return {**INTERNAL, **overrides}


@pytest.mark.parametrize(
    "networks",
    [
        [],
        [INTERNAL],
        [INTERNAL, {"name": "Storage"}],
        [net(enabled=False), {"name": "Tenant", "enabled": True}],
        [net(gateway_ip="172.16.2.1", gateway_ipv6="fd00:fd00:fd00:2000::1")],
        # network data v2: subnets, IPv6 under ip_subnet too
        [{"name": "Storage", "subnets": {
            "storage_subnet": {"ip_subnet": "172.16.1.0/24", "vlan": 30,
                               "allocation_pools": [{"start": "172.16.1.4",
                                                     "end": "172.16.1.250"}]},
            "storage_leaf1": {"ip_subnet": "fd00:1::/64", "gateway_ip": "fd00:1::1"}}}],
    ],
)
def test_valid_networks(networks: list[dict[str, Any]]) -> None:
    core_roles.validate_networks(networks)


@pytest.mark.parametrize(
    ("networks", "fragments"),
    [
        ({"name": "x"}, ["list"]),
        (["InternalApi"], ["entry 1", "not a mapping"]),
        ([{"vlan": 1}], ["entry 1", "name"]),
        ([net(name="Internal Api")], ["'Internal Api'"]),
        ([INTERNAL, INTERNAL], ["'InternalApi'", "twice"]),
        ([INTERNAL, {"name": "Other", "name_lower": "internal_api"}],
         ["'InternalApi'", "'Other'", "internal_api"]),
        ([{"name": "Storage"}, {"name": "STORAGE"}], ["'storage'"]),
        ([net(name_lower="Internal-Api")], ["name_lower"]),
        ([net(ip_subnet="172.16.2.0/33")], ["ip_subnet", "172.16.2.0/33"]),
        ([net(ip_subnet="banana")], ["ip_subnet", "CIDR"]),
        ([net(ipv6_subnet="fd00::/129")], ["ipv6_subnet"]),
        ([net(allocation_pools=[{"start": "172.16.2.4"}])], ["allocation_pools", "'end'"]),
        ([net(allocation_pools={"start": "1", "end": "2"})], ["allocation_pools", "list"]),
        ([net(allocation_pools=[{"start": "172.16.2.9", "end": "172.16.2.4"}])], ["empty"]),
        ([net(allocation_pools=[{"start": "172.16.3.4", "end": "172.16.3.9"}])],
         ["outside 172.16.2.0/24"]),
        ([net(allocation_pools=[{"start": "172.16.2.4", "end": "x"}])], ["not an IP address"]),
        ([net(ipv6_allocation_pools=[{"start": "fd00::1", "end": "fd00::9"}])],
         ["ipv6_allocation_pools", "outside"]),
        ([net(gateway_ip="10.0.0.1")], ["gateway_ip", "outside"]),
        ([net(vlan=0)], ["vlan", "1 to 4094"]),
        ([net(vlan=4095)], ["vlan"]),
        ([net(vlan="20")], ["vlan"]),
        ([net(mtu=10)], ["mtu"]),
        ([net(enabled="yes")], ["enabled"]),
        ([{"name": "S", "subnets": ["a"]}], ["subnets", "mapping"]),
        ([{"name": "S", "subnets": {"leaf1": {"ip_subnet": "10.0.0.0/24", "vlan": 5000}}}],
         ["'S'", "'leaf1'", "vlan"]),
    ],
)
def test_invalid_networks(networks: Any, fragments: list[str]) -> None:
    with pytest.raises(exceptions.InvalidNetworks) as info:
        core_roles.validate_networks(networks)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert "network_data.yaml" in str(info.value)


@pytest.mark.parametrize("value, refused", [
    (1000, False), ("1000", False), (0, False), ("abc", False), (True, False), (None, False),
    (1001, True), ("1001", True), ("1e20", True), (1e20, True), (10 ** 400, True),
    (float("nan"), True), ("inf", True),
])
def test_role_counts_are_bounded_by_nodes_max(value: object, refused: bool) -> None:
    values = {"ComputeCount": value, "DockerPuppetProcessCount": 10 ** 9}  # not a role
    if not refused:
        core_roles.check_counts(values, ["Controller", "Compute"], 1000)
        return
    with pytest.raises(exceptions.InvalidParameter, match=r"\[limits\] nodes_max \(1000\)"):
        core_roles.check_counts(values, ["Controller", "Compute"], 1000)


def test_a_count_default_over_the_limit_is_refused() -> None:
    listed = [{"name": "Controller", "CountDefault": 10 ** 20}]
    core_roles.validate_roles(listed)  # no limit given
    with pytest.raises(exceptions.InvalidRoles, match=r"CountDefault .*\[limits\] nodes_max"):
        core_roles.validate_roles(listed, max_count=1000)
