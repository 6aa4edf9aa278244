"""The environment of pre-provisioned (deployed) servers, from a baremetal deployment.

Two shapes, chosen by the plan's templates:

``deployed-networks`` (THT Wallaby and later, 18.x)
    what ``overcloud network provision``, ``network vip provision`` and
    ``node provision`` generate: the networks and the VIP already exist
    (``network/deployed_networks.yaml``, ``network/ports/deployed_vip_ctlplane.yaml``),
    ``CtlplaneNetworkAttributes``, ``ControlPlaneVipData``, ``DeployedServerPortMap``
    and ``NodePortMap`` carry the addresses;
``port-map`` (THT Ussuri, 12.x)
    the deployed-server environment of its documentation (servers mapped to
    ``deployed-server/deployed-server.yaml``, as its
    ``environments/deployed-server-environment.yaml`` does): ``DeployedServerPortMap``
    holds the servers' and the VIP's control plane ports, Redis and OVN DB VIPs are
    no-op ports.

The earlier allocations are read back from the environment generated last time
(:func:`previous_allocations`), so an address once given is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tripleo_flow.core import baremetal

#: The plan file whose presence means the templates take deployed networks.
DEPLOYED_NETWORKS = "network/deployed_networks.yaml"
#: The name of the generated environment among the plan's user environments.
ENVIRONMENT_NAME = "deployed-servers-environment.yaml"
VIP_PORT = "control_virtual_ip"


def shape(plan_files: Sequence[str]) -> str:
    return "deployed-networks" if DEPLOYED_NETWORKS in plan_files else "port-map"


def _port(address: str, subnet: baremetal.Subnet) -> dict[str, Any]:
    return {"fixed_ips": [{"ip_address": address}], "subnets": [{"cidr": subnet.cidr}],
            "network": {"tags": [subnet.cidr]}}


def _counts(roles: Sequence[baremetal.Role]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for role in roles:
        values[f"{role.name}Count"] = role.count
        values[f"{role.name}HostnameFormat"] = role.hostname_format
    return values


def _common(roles: Sequence[baremetal.Role], hostname_map: Mapping[str, str],
            subnet: baremetal.Subnet) -> dict[str, Any]:
    return {**_counts(roles), "HostnameMap": dict(hostname_map),
            "ControlPlaneSubnetCidr": str(subnet.network.prefixlen),
            "ControlPlaneDefaultRoute": subnet.gateway_ip,
            "DnsServers": list(subnet.dns_nameservers)}


def generate(roles: Sequence[baremetal.Role], subnet: baremetal.Subnet, stack: str,
             plan_files: Sequence[str], previous: Mapping[str, Any] | None = None,
             ) -> dict[str, Any]:
    """The environment (``resource_registry`` and ``parameter_defaults``) for ``roles``
    on ``subnet``, keeping the addresses of ``previous`` (the last one generated)."""
    earlier, earlier_vip = previous_allocations(previous or {})
    hostname_map, addresses, vip = baremetal.allocate(roles, subnet, stack, earlier,
                                                      earlier_vip)
    ports = {f"{host}-ctlplane": _port(addresses[host], subnet)
             for host in hostname_map.values()}
    if shape(plan_files) == "port-map":
        return {
            "resource_registry": {
                # What the templates' environments/deployed-server-environment.yaml
                # maps (the servers exist: no Nova), then the ports of the port map.
                "OS::TripleO::Server": "deployed-server/deployed-server.yaml",
                "OS::TripleO::DeployedServer::Bootstrap": "OS::Heat::None",
                "OS::TripleO::DeployedServer::ControlPlanePort":
                    "deployed-server/deployed-neutron-port.yaml",
                "OS::TripleO::Network::Ports::ControlPlaneVipPort":
                    "deployed-server/deployed-neutron-port.yaml",
                "OS::TripleO::Network::Ports::RedisVipPort": "network/ports/noop.yaml",
                "OS::TripleO::Network::Ports::OVNDBsVipPort": "network/ports/noop.yaml",
            },
            "parameter_defaults": {
                **_common(roles, hostname_map, subnet), "EC2MetadataIp": subnet.gateway_ip,
                "DeployedServerPortMap": {VIP_PORT: _port(vip, subnet), **ports},
            },
        }
    prefix = subnet.network.prefixlen
    return {
        "resource_registry": {
            "OS::TripleO::DeployedServer::ControlPlanePort":
                "deployed-server/deployed-neutron-port.yaml",
            "OS::TripleO::Network::Ports::ControlPlaneVipPort":
                "network/ports/deployed_vip_ctlplane.yaml",
            "OS::TripleO::Network": "network/deployed_networks.yaml",
        },
        "parameter_defaults": {
            **_common(roles, hostname_map, subnet),
            "CtlplaneNetworkAttributes": {
                "network": {"dns_domain": subnet.dns_domain, "mtu": subnet.mtu,
                            "name": baremetal.CTLPLANE, "tags": [subnet.cidr]},
                "subnets": {"ctlplane-subnet": {
                    "cidr": subnet.cidr, "dns_nameservers": list(subnet.dns_nameservers),
                    "gateway_ip": subnet.gateway_ip, "host_routes": [],
                    "ip_version": subnet.network.version, "name": "ctlplane-subnet"}},
            },
            "DeployedNetworkEnvironment": {"net_attributes_map": {}, "net_cidr_map": {},
                                           "net_ip_version_map": {}},
            "ControlPlaneVipData": {
                "fixed_ips": [{"ip_address": vip}], "name": VIP_PORT,
                "network": {"tags": [subnet.cidr]},
                "subnets": [{"ip_version": subnet.network.version}]},
            "VipPortMap": {},
            "DeployedServerPortMap": ports,
            "NodePortMap": {
                host: {baremetal.CTLPLANE: {
                    "ip_address": addresses[host], "ip_address_uri": _uri(addresses[host]),
                    "ip_subnet": f"{addresses[host]}/{prefix}"}}
                for host in hostname_map.values()},
        },
    }


def _uri(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def previous_allocations(env: Mapping[str, Any]) -> tuple[dict[str, str], str | None]:
    """``(address by host name, VIP)`` of an environment :func:`generate` made."""
    params = env.get("parameter_defaults") if isinstance(env, Mapping) else None
    if not isinstance(params, Mapping):
        return {}, None
    addresses: dict[str, str] = {}
    vip = None
    port_map = params.get("DeployedServerPortMap")
    for name, port in (port_map.items() if isinstance(port_map, Mapping) else ()):
        try:
            address = str(port["fixed_ips"][0]["ip_address"])
        except (KeyError, IndexError, TypeError):
            continue
        if name == VIP_PORT:
            vip = address
        elif isinstance(name, str) and name.endswith("-ctlplane"):
            addresses[name[:-len("-ctlplane")]] = address
    vip_data = params.get("ControlPlaneVipData")
    if isinstance(vip_data, Mapping):
        try:
            vip = str(vip_data["fixed_ips"][0]["ip_address"])
        except (KeyError, IndexError, TypeError):
            pass
    return addresses, vip
