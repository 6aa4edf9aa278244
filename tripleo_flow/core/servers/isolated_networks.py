"""Addresses on the isolated networks of a plan for pre-provisioned servers.

What ``overcloud network provision`` and ``network vip provision`` leave in Neutron,
and ``node provision`` turns into ``NodePortMap`` / ``VipPortMap``, computed here
without Neutron: each server of a role gets an address on every enabled network of
the plan's ``network_data`` its role lists (``roles_data`` ``networks``), from the
chosen subnet's allocation pools; each network with ``vip: true`` gets a VIP
(``vip_data``'s ``ip_address`` if it gives one).  Fixed IPs are kept (inside the
subnet, not taken twice), an address once given is kept across redeploys
(``previous``), and a host no longer listed frees its addresses.

Pure: the plan's data files come in as loaded YAML.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.core.servers import baremetal

#: A network's addresses: host name (or :data:`VIP`) -> address.
VIP = "(VIP)"


@dataclasses.dataclass(frozen=True)
class Subnet:
    name: str
    cidr: str
    gateway_ip: str | None
    pools: tuple[tuple[str, str], ...]
    routes: tuple[Any, ...] = ()
    vlan: int | None = None

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(self.cidr, strict=False)

    def addresses(self) -> Iterator[str]:
        """The pool addresses in order (the whole subnet's hosts without pools)."""
        net = self.network
        if not self.pools:
            yield from (str(a) for a in net.hosts())
            return
        for start, end in self.pools:
            for value in range(int(ipaddress.ip_address(start)),
                               int(ipaddress.ip_address(end)) + 1):
                yield str(ipaddress.ip_address(value))


@dataclasses.dataclass(frozen=True)
class Network:
    name: str          #: ``name`` (CamelCase, for template and resource names)
    name_lower: str    #: the name hosts and ports use
    index: int         #: its place among the enabled networks
    mtu: int
    dns_domain: str
    vip: bool
    ipv6: bool
    subnets: tuple[Subnet, ...]

    def subnet(self, name: str | None, where: str) -> Subnet:
        if name is None:
            return self.subnets[0]
        for subnet in self.subnets:
            if subnet.name == name:
                return subnet
        raise exceptions.InvalidInput(
            f"{where}: network {self.name_lower} has no subnet {name!r} (it has "
            f"{', '.join(s.name for s in self.subnets)}).")


def _subnet(name: str, data: Mapping[str, Any], ipv6: bool, where: str) -> Subnet:
    key, pools_key, gateway_key, routes_key = (
        ("ipv6_subnet", "ipv6_allocation_pools", "gateway_ipv6", "routes_ipv6") if ipv6
        else ("ip_subnet", "allocation_pools", "gateway_ip", "routes"))
    cidr = data.get(key)
    if not isinstance(cidr, str):
        raise exceptions.InvalidInput(
            f"Network data: {where}, subnet {name} has no {key}: give it one in "
            "network_data.yaml.")
    pools = tuple((str(p["start"]), str(p["end"])) for p in data.get(pools_key) or ())
    gateway = data.get(gateway_key)
    vlan = data.get("vlan")
    return Subnet(name, cidr, str(gateway) if gateway else None, pools,
                  tuple(data.get(routes_key) or ()), vlan if isinstance(vlan, int) else None)


def networks_of(network_data: Sequence[Mapping[str, Any]]) -> list[Network]:
    """The enabled networks of a network_data list (checked before by
    :func:`tripleo_flow.core.plan.roles.validate_networks`).  A network without ``subnets``
    is its own single subnet (``<name_lower>_subnet``, the older format)."""
    result: list[Network] = []
    for data in network_data:
        if data.get("enabled") is False:
            continue
        name = str(data["name"])
        lower = str(data.get("name_lower") or name.lower())
        ipv6 = bool(data.get("ipv6"))
        subnets_data = data.get("subnets") or {f"{lower}_subnet": data}
        subnets = tuple(_subnet(str(sub), body, ipv6, f"network {name}")
                        for sub, body in subnets_data.items())
        result.append(Network(
            name, lower, len(result), int(data.get("mtu") or 1500),
            str(data.get("dns_domain") or f"{lower}.localdomain."),
            bool(data.get("vip")), ipv6, subnets))
    return result


def role_networks(roles_data: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str | None]]:
    """Each role's networks (network ``name`` -> the subnet roles_data names, if any);
    ``networks`` is a list of names or a mapping of name -> ``{subnet}``."""
    result: dict[str, dict[str, str | None]] = {}
    for role in roles_data:
        nets = role.get("networks") or []
        if not isinstance(nets, (list, Mapping)):
            raise exceptions.InvalidInput(
                f"Role {role.get('name')!r} of roles_data: networks is neither a list of "
                "network names nor a mapping of them. Fix roles_data.yaml.")
        if isinstance(nets, Mapping):
            result[str(role["name"])] = {
                str(k): (v.get("subnet") if isinstance(v, Mapping) else None)
                for k, v in nets.items()}
        else:
            result[str(role["name"])] = {str(n): None for n in nets}
    return result


@dataclasses.dataclass(frozen=True)
class Allocation:
    """Addresses by network ``name_lower``: ``hosts[net][host]`` is ``(address,
    subnet)``; ``vips[net]`` likewise for the network's VIP."""

    hosts: dict[str, dict[str, tuple[str, Subnet]]]
    vips: dict[str, tuple[str, Subnet]]


def _check_fixed(address: str, subnet: Subnet, net: Network, where: str) -> str:
    if ipaddress.ip_address(address) not in subnet.network:
        raise exceptions.InvalidInput(
            f"{where}: fixed_ip {address} is not in subnet {subnet.name} ({subnet.cidr}) of "
            f"network {net.name_lower}.")
    if address == subnet.gateway_ip:
        raise exceptions.InvalidInput(
            f"{where}: fixed_ip {address} is the gateway of network {net.name_lower}.")
    return address


def allocate(roles: Sequence[baremetal.Role], network_data: Sequence[Mapping[str, Any]],
             roles_data: Sequence[Mapping[str, Any]],
             vip_data: Sequence[Mapping[str, Any]] = (),
             previous: Mapping[str, Mapping[str, str]] | None = None,
             previous_vips: Mapping[str, str] | None = None) -> Allocation:
    """The addresses of ``roles``' servers and of the VIPs on the isolated networks.

    :param previous: the addresses given last time, ``{network: {host: address}}``.
    :param previous_vips: the VIPs given last time, ``{network: address}``.
    :raises InvalidInput: for a network or subnet the plan lacks, a fixed IP outside
        its subnet or given twice, or a pool with no address left (naming network,
        subnet, role and host).
    """
    networks = networks_of(network_data)
    by_lower = {n.name_lower: n for n in networks}
    by_name = {n.name: n for n in networks}
    wanted = role_networks(roles_data)
    previous = previous or {}
    previous_vips = previous_vips or {}
    # (network, subnet, host or VIP, role, fixed address or None), in file order
    requests: list[tuple[Network, Subnet, str, str, str | None]] = []
    for role in roles:
        names = wanted.get(role.name, {})
        # roles_data may list networks the plan has not (enabled): TripleO skips them
        role_nets = [(by_name[n], names[n]) for n in names if n in by_name]
        for inst in role.instances:
            where = f"Role {role.name}, host {inst.hostname}"
            asked = {r.network: r for r in inst.networks}
            for name in asked:
                if name not in by_lower:
                    raise exceptions.InvalidInput(
                        f"{where} asks for network {name!r}, which the plan's network_data "
                        f"has not (enabled): {', '.join(sorted(by_lower)) or 'none'}. Fix "
                        "the baremetal deployment file or the plan's network_data.yaml.")
                if by_lower[name].name not in names:
                    raise exceptions.InvalidInput(
                        f"{where} asks for network {name!r}, which role {role.name} does "
                        "not use (roles_data networks): remove it from the baremetal "
                        "deployment file or add it to the role.")
            for net, role_subnet in role_nets:
                request = asked.get(net.name_lower)
                subnet = net.subnet(request.subnet if request and request.subnet
                                    else role_subnet, where)
                fixed = request.fixed_ip if request else None
                if fixed is not None:
                    fixed = _check_fixed(fixed, subnet, net, where)
                requests.append((net, subnet, inst.hostname, role.name, fixed))
    vips: list[tuple[Network, Subnet, str | None]] = []
    listed = {}
    for number, entry in enumerate(vip_data, start=1):
        name = str(entry.get("network"))
        if name == baremetal.CTLPLANE:
            continue
        if name not in by_lower:
            raise exceptions.InvalidInput(
                f"VIP entry {number} of vip_data is on network {name!r}, which the plan's "
                "network_data has not (enabled). Fix vip_data.yaml.")
        listed[name] = entry
    used = {net.name_lower for net, *_ in requests}
    for net in networks:
        if not net.vip or net.name_lower not in used | set(listed):
            continue
        entry = listed.get(net.name_lower, {})
        subnet = net.subnet(entry.get("subnet"), f"The VIP of network {net.name_lower}")
        fixed = entry.get("ip_address")
        if fixed is not None:
            fixed = _check_fixed(str(fixed), subnet, net,
                                 f"The VIP of network {net.name_lower}")
        vips.append((net, subnet, fixed))
    return _assign(requests, vips, previous, previous_vips)


def _assign(requests: list[tuple[Network, Subnet, str, str, str | None]],
            vips: list[tuple[Network, Subnet, str | None]],
            previous: Mapping[str, Mapping[str, str]],
            previous_vips: Mapping[str, str]) -> Allocation:
    taken: dict[tuple[str, str], str] = {}  # (network, address) -> holder

    def take(net: Network, address: str, holder: str) -> None:
        key = (net.name_lower, address)
        if key in taken:
            raise exceptions.InvalidInput(
                f"{taken[key]} and {holder} both have the fixed IP {address} on network "
                f"{net.name_lower}.")
        taken[key] = holder

    hosts: dict[str, dict[str, tuple[str, Subnet]]] = {}
    vip_result: dict[str, tuple[str, Subnet]] = {}
    for net, subnet, fixed in vips:
        if fixed is not None:
            take(net, fixed, f"the VIP of network {net.name_lower}")
            vip_result[net.name_lower] = (fixed, subnet)
    for net, subnet, host, _role, fixed in requests:
        if fixed is not None:
            take(net, fixed, f"host {host}")
            hosts.setdefault(net.name_lower, {})[host] = (fixed, subnet)

    def keep(net: Network, subnet: Subnet, address: str | None, holder: str) -> bool:
        if address is None or (net.name_lower, address) in taken \
                or address == subnet.gateway_ip:
            return False
        try:
            inside = ipaddress.ip_address(address) in subnet.network
        except ValueError:
            return False
        if inside:
            taken[(net.name_lower, address)] = holder
        return inside

    for net, subnet, fixed in vips:
        old = previous_vips.get(net.name_lower)
        if fixed is None and keep(net, subnet, old, "VIP") and old is not None:
            vip_result[net.name_lower] = (old, subnet)
    for net, subnet, host, _role, fixed in requests:
        old = previous.get(net.name_lower, {}).get(host)
        if fixed is None and keep(net, subnet, old, host) and old is not None:
            hosts.setdefault(net.name_lower, {})[host] = (old, subnet)
    # Addresses still held last time by a VIP or host that keeps them are taken
    # above; the others are free.  New ones: VIPs first, then hosts in file order.
    for net, subnet, _fixed in vips:
        if net.name_lower not in vip_result:
            vip_result[net.name_lower] = (
                _next_free(net, subnet, taken, f"the VIP of network {net.name_lower}",
                           None), subnet)
    for net, subnet, host, role, _fixed in requests:
        if host not in hosts.get(net.name_lower, {}):
            hosts.setdefault(net.name_lower, {})[host] = (
                _next_free(net, subnet, taken, f"host {host}", role), subnet)
    return Allocation(hosts, vip_result)


def _next_free(net: Network, subnet: Subnet, taken: dict[tuple[str, str], str],
               holder: str, role: str | None) -> str:
    for address in subnet.addresses():
        if (net.name_lower, address) not in taken and address != subnet.gateway_ip:
            taken[(net.name_lower, address)] = holder
            return address
    pools = ", ".join(f"{a}-{b}" for a, b in subnet.pools) or subnet.cidr
    whose = f" of role {role}" if role else ""
    raise exceptions.InvalidInput(
        f"Network {net.name_lower} (subnet {subnet.name}, pools {pools}) has no address "
        f"left for {holder}{whose}: widen its allocation_pools in network_data.yaml or "
        "give fixed IPs.")
