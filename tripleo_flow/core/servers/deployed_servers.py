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

from tripleo_flow import exceptions
from tripleo_flow.core.servers import baremetal, isolated_networks

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


#: ``network_config`` keys of a baremetal deployment file -> the parameter the
#: templates take (``{role}`` for a role's own), as TripleO's provisioning maps them.
NETWORK_CONFIG_PARAMETERS = {
    "template": "{role}NetworkConfigTemplate",
    "network_config_update": "{role}NetworkConfigUpdate",
    "net_config_data_lookup": "NetConfigDataLookup",
    "dns_search_domains": "DnsSearchDomains",
    "physical_bridge_name": "NeutronPhysicalBridge",
    "public_interface_name": "NeutronPublicInterface",
    "bond_interface_ovs_options": "BondInterfaceOvsOptions",
    "num_dpdk_interface_rx_queues": "NumDpdkInterfaceRxQueues",
}
#: The type each ``network_config`` value must have.
_NETWORK_CONFIG_TYPES: dict[str, tuple[type, ...]] = {
    "template": (str,), "network_config_update": (bool,), "net_config_data_lookup": (dict,),
    "dns_search_domains": (str, list), "physical_bridge_name": (str,),
    "public_interface_name": (str,), "bond_interface_ovs_options": (str,),
    "num_dpdk_interface_rx_queues": (int,)}
#: Keys TripleO reads from roles_data, not from the deployment file's parameters.
_ROLES_DATA_KEYS = {"default_route_network": "default_route_networks",
                    "networks_skip_config": "networks_skip_config"}


def _template(value: Any, where: str) -> str:
    parts = str(value).split("/")
    if not isinstance(value, str) or not value or value.startswith(("/", "~")) \
            or ".." in parts:
        raise exceptions.InvalidInput(
            f"{where}: network_config template {value!r} must be a path relative to the "
            "templates (for example templates/net_config_bridge.j2), without '..'.")
    return value


def network_config_parameters(roles: Sequence[baremetal.Role]) -> dict[str, Any]:
    """The parameters of the roles' ``network_config``: a role's own ones
    (``<Role>NetworkConfigTemplate``...) and the shared ones, which must agree.

    :raises InvalidInput: for an unknown key, a template path outside the templates,
        instances of one role or roles asking for different shared values.
    """
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for role in roles:
        for inst in role.instances:
            where = f"Role {role.name}, host {inst.hostname}"
            for key, value in inst.network_config.items():
                if key in _ROLES_DATA_KEYS:
                    raise exceptions.InvalidInput(
                        f"{where}: network_config {key} is the role's "
                        f"{_ROLES_DATA_KEYS[key]} in roles_data.yaml: set it there.")
                if key not in NETWORK_CONFIG_PARAMETERS:
                    raise exceptions.InvalidInput(
                        f"{where}: unknown network_config key {key!r} (known: "
                        f"{', '.join(sorted(NETWORK_CONFIG_PARAMETERS))}).")
                wanted = _NETWORK_CONFIG_TYPES[key]
                if not isinstance(value, wanted) or (isinstance(value, bool)
                                                     and bool not in wanted):
                    raise exceptions.InvalidInput(
                        f"{where}: network_config {key} {value!r} is not "
                        f"{' or '.join(t.__name__ for t in wanted)}.")
                if key == "template":
                    value = _template(value, where)
                pattern = NETWORK_CONFIG_PARAMETERS[key]
                param = pattern.format(role=role.name)
                scope = "the role" if "{role}" in pattern else "all roles"
                if param in values and values[param] != value:
                    raise exceptions.InvalidInput(
                        f"{where}: network_config {key} {value!r} differs from "
                        f"{values[param]!r} of {origin[param]}; the templates take one "
                        f"{param} for {scope}.")
                values[param] = value
                origin[param] = where
    return values


def generate(roles: Sequence[baremetal.Role], subnet: baremetal.Subnet, stack: str,
             plan_files: Sequence[str], previous: Mapping[str, Any] | None = None,
             network_data: Sequence[Mapping[str, Any]] = (),
             roles_data: Sequence[Mapping[str, Any]] = (),
             vip_data: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The environment (``resource_registry`` and ``parameter_defaults``) for ``roles``
    on ``subnet``, keeping the addresses of ``previous`` (the last one generated).

    With the deployed-networks shape, the servers also get addresses on the
    isolated networks of ``network_data`` their role uses (``roles_data``), and the
    networks with ``vip: true`` a VIP (``vip_data``)."""
    earlier, earlier_vip = previous_allocations(previous or {})
    hostname_map, addresses, vip = baremetal.allocate(roles, subnet, stack, earlier,
                                                      earlier_vip)
    ports = {f"{host}-ctlplane": _port(addresses[host], subnet)
             for host in hostname_map.values()}
    if shape(plan_files) == "port-map":
        asking = sorted(i.hostname for r in roles for i in r.instances if i.networks)
        if asking:
            raise exceptions.InvalidInput(
                f"Hosts {', '.join(asking)} ask for isolated networks, which tripleo-flow "
                "provisions only for templates with deployed networks "
                f"({DEPLOYED_NETWORKS}, THT Wallaby and later): list only the ctlplane.")
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
    isolated = isolated_networks.allocate(
        roles, network_data, roles_data, vip_data, *previous_isolated(previous or {}))
    networks = isolated_networks.networks_of(network_data)
    node_ports: dict[str, dict[str, Any]] = {
        host: {baremetal.CTLPLANE: _address(addresses[host], prefix)}
        for host in hostname_map.values()}
    for net_name, held in isolated.hosts.items():
        for host, (address, net_subnet) in held.items():
            node_ports[host][net_name] = _address(address, net_subnet.network.prefixlen)
    registry = {
        "OS::TripleO::DeployedServer::ControlPlanePort":
            "deployed-server/deployed-neutron-port.yaml",
        "OS::TripleO::Network::Ports::ControlPlaneVipPort":
            "network/ports/deployed_vip_ctlplane.yaml",
        "OS::TripleO::Network": "network/deployed_networks.yaml",
    }
    wanted = isolated_networks.role_networks(roles_data)
    for net in networks:
        if net.name_lower in isolated.vips:
            registry[f"OS::TripleO::Network::Ports::{net.name}VipPort"] = \
                f"network/ports/deployed_vip_{net.name_lower}.yaml"
        for role_name in sorted(set(wanted) | {r.name for r in roles}):
            if net.name in wanted.get(role_name, {}):
                registry[f"OS::TripleO::{role_name}::Ports::{net.name}Port"] = \
                    f"network/ports/deployed_{net.name_lower}.yaml"
    return {
        "resource_registry": registry,
        "parameter_defaults": {
            **_common(roles, hostname_map, subnet),
            **network_config_parameters(roles),
            "CtlplaneNetworkAttributes": {
                "network": {"dns_domain": subnet.dns_domain, "mtu": subnet.mtu,
                            "name": baremetal.CTLPLANE, "tags": [subnet.cidr]},
                "subnets": {"ctlplane-subnet": {
                    "cidr": subnet.cidr, "dns_nameservers": list(subnet.dns_nameservers),
                    "gateway_ip": subnet.gateway_ip, "host_routes": [],
                    "ip_version": subnet.network.version, "name": "ctlplane-subnet"}},
            },
            "DeployedNetworkEnvironment": _network_environment(networks),
            "ControlPlaneVipData": {
                "fixed_ips": [{"ip_address": vip}], "name": VIP_PORT,
                "network": {"tags": [subnet.cidr]},
                "subnets": [{"ip_version": subnet.network.version}]},
            "VipPortMap": {net: _address(address, net_subnet.network.prefixlen)
                           for net, (address, net_subnet) in isolated.vips.items()},
            "DeployedServerPortMap": ports,
            "NodePortMap": node_ports,
        },
    }


def _address(address: str, prefix: int) -> dict[str, str]:
    return {"ip_address": address, "ip_address_uri": _uri(address),
            "ip_subnet": f"{address}/{prefix}"}


def _network_environment(networks: Sequence[isolated_networks.Network]) -> dict[str, Any]:
    """``DeployedNetworkEnvironment``: what the deployed networks' attributes are in
    Neutron after ``overcloud network provision``."""
    attributes: dict[str, Any] = {}
    for net in networks:
        attributes[net.name_lower] = {
            "network": {"dns_domain": net.dns_domain, "mtu": net.mtu, "name": net.name_lower,
                        "tags": [f"tripleo_network_name={net.name}",
                                 f"tripleo_net_idx={net.index}",
                                 f"tripleo_vip={str(net.vip).lower()}"]},
            "subnets": {sub.name: {
                "cidr": sub.cidr, "gateway_ip": sub.gateway_ip,
                "host_routes": list(sub.routes), "ip_version": 6 if net.ipv6 else 4,
                "dns_nameservers": [], "name": sub.name,
                "tags": [f"tripleo_vlan_id={sub.vlan}"] if sub.vlan else []}
                for sub in net.subnets},
        }
    return {"net_attributes_map": attributes,
            "net_cidr_map": {net.name_lower: [sub.cidr for sub in net.subnets]
                             for net in networks},
            "net_ip_version_map": {net.name_lower: 6 if net.ipv6 else 4 for net in networks}}


def previous_isolated(env: Mapping[str, Any]
                      ) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """``({network: {host: address}}, {network: VIP})`` of the isolated networks in an
    environment :func:`generate` made (its ``NodePortMap`` and ``VipPortMap``)."""
    params = env.get("parameter_defaults") if isinstance(env, Mapping) else None
    hosts: dict[str, dict[str, str]] = {}
    vips: dict[str, str] = {}
    if not isinstance(params, Mapping):
        return hosts, vips
    node_ports = params.get("NodePortMap")
    for host, nets in (node_ports.items() if isinstance(node_ports, Mapping) else ()):
        for net, port in (nets.items() if isinstance(nets, Mapping) else ()):
            if net != baremetal.CTLPLANE and isinstance(port, Mapping) \
                    and isinstance(port.get("ip_address"), str):
                hosts.setdefault(str(net), {})[str(host)] = port["ip_address"]
    vip_ports = params.get("VipPortMap")
    for net, port in (vip_ports.items() if isinstance(vip_ports, Mapping) else ()):
        if isinstance(port, Mapping) and isinstance(port.get("ip_address"), str):
            vips[str(net)] = port["ip_address"]
    return hosts, vips


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
