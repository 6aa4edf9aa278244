"""Pre-provisioned servers from TripleO's baremetal deployment file.

The file is a list of roles, as ``openstack overcloud node provision`` takes it::

    - name: Controller
      count: 1
      hostname_format: '%stackname%-controller-%index%'
      instances:
        - hostname: controller-0
          managed: false
          networks:
            - {network: ctlplane, fixed_ip: 192.168.24.10}

For instances with ``managed: false`` (servers that are already installed and
reachable), tripleo-flow does what ``overcloud network provision``,
``network vip provision`` and ``node provision`` generate, without Neutron or
Ironic: addresses on the control plane (fixed ones kept, the others from the
subnet's allocation pool, an address once given kept across redeploys), the
control plane VIP, host names and role counts.  An instance's entries for other
networks (``{network: internal_api, fixed_ip, subnet}``) and its
``network_config`` are kept as given here and checked against the plan's
networks by :mod:`isolated_networks`.  :mod:`deployed_servers` turns the result
into the environment the templates take.

Pure: the control plane subnet and the earlier allocations are parameters.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tripleo_flow import exceptions

CTLPLANE = "ctlplane"
#: TripleO's default ``HostnameFormatDefault`` of a role not in roles_data.
DEFAULT_HOSTNAME_FORMAT = "%stackname%-{role}-%index%"
_ROLE_KEYS = frozenset({"name", "count", "hostname_format", "defaults", "instances",
                        "ansible_playbooks"})
_INSTANCE_KEYS = frozenset({"hostname", "name", "managed", "networks", "network_config",
                            "profile", "capabilities", "resource_class", "image", "nics",
                            "root_size_gb", "swap_size_mb", "traits", "config_drive",
                            "provisioned"})


@dataclasses.dataclass(frozen=True)
class Subnet:
    """The control plane subnet the servers' addresses come from (the undercloud's)."""

    cidr: str = "192.168.24.0/24"
    gateway_ip: str = "192.168.24.1"
    allocation_start: str = "192.168.24.5"
    allocation_end: str = "192.168.24.24"
    dns_nameservers: tuple[str, ...] = ("192.168.24.1",)
    dns_domain: str = "ctlplane.localdomain."
    mtu: int = 1500

    def __post_init__(self) -> None:
        try:
            network = ipaddress.ip_network(self.cidr)
            addresses = [ipaddress.ip_address(a) for a in
                         (self.gateway_ip, self.allocation_start, self.allocation_end,
                          *self.dns_nameservers)]
        except ValueError as exc:
            raise exceptions.InvalidInput(
                f"The control plane subnet is wrong: {exc}. Check the [ctlplane] options "
                "(cidr, gateway_ip, allocation_start, allocation_end, dns_nameservers).") from exc
        start, end = addresses[1], addresses[2]
        if not all(a in network for a in addresses[:3]) or int(start) > int(end):
            raise exceptions.InvalidInput(
                f"The control plane allocation pool {start}-{end} and gateway "
                f"{self.gateway_ip} must lie in {self.cidr}, the pool start before its end: "
                "check the [ctlplane] options.")

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(self.cidr)

    def pool(self) -> Iterable[str]:
        first = int(ipaddress.ip_address(self.allocation_start))
        last = int(ipaddress.ip_address(self.allocation_end))
        version = self.network.version
        for value in range(first, last + 1):
            yield str(ipaddress.ip_address(value) if version == 4
                      else ipaddress.IPv6Address(value))


@dataclasses.dataclass(frozen=True)
class NetworkRequest:
    """An instance's entry for an isolated network: its ``network`` (the name_lower
    of a network of network_data), an optional ``fixed_ip`` and ``subnet``."""

    network: str
    fixed_ip: str | None = None
    subnet: str | None = None


@dataclasses.dataclass(frozen=True)
class Instance:
    """One server of a role.  A managed one (``managed: true``, the default) is a node
    Ironic deploys (``node provision``); the node is chosen by ``node`` (a node name or
    UUID) or by ``resource_class``, ``profile`` and ``capabilities``."""

    hostname: str
    fixed_ip: str | None
    managed: bool = False
    node: str | None = None
    profile: str | None = None
    resource_class: str = "baremetal"
    capabilities: tuple[tuple[str, str], ...] = ()
    image: str | None = None
    #: The requests on networks other than the control plane, as listed.
    networks: tuple[NetworkRequest, ...] = ()
    #: ``network_config`` (the role's ``defaults`` under the instance's own).
    network_config: Mapping[str, Any] = dataclasses.field(default_factory=dict,
                                                          compare=False)


@dataclasses.dataclass(frozen=True)
class Role:
    name: str
    count: int
    hostname_format: str
    instances: tuple[Instance, ...]


def _bad(what: str) -> exceptions.InvalidInput:
    return exceptions.InvalidInput(
        f"The baremetal deployment file is wrong: {what}. It is a list of roles, each "
        "{name, count, hostname_format, defaults, instances: [{hostname, managed: false, "
        "networks: [{network, fixed_ip, subnet}], network_config}]} (TripleO's format).")


_NETWORK_KEYS = frozenset({"network", "fixed_ip", "subnet", "port", "vif"})


def _networks(instance: Mapping[str, Any], where: str, subnet: Subnet
              ) -> tuple[str | None, tuple[NetworkRequest, ...]]:
    """The control plane fixed IP and the requests on the other networks (checked
    against the plan's networks later, :mod:`isolated_networks`)."""
    networks = instance.get("networks") or []
    if not isinstance(networks, list):
        raise _bad(f"{where}: networks is not a list")
    found = None
    others: dict[str, NetworkRequest] = {}
    for net in networks:
        if not isinstance(net, Mapping) or not isinstance(net.get("network", CTLPLANE), str):
            raise _bad(f"{where}: each network is a mapping with a network name")
        unknown = sorted(set(net) - _NETWORK_KEYS)
        if unknown:
            raise _bad(f"{where}: a network has unknown keys {unknown}")
        name = net.get("network", CTLPLANE)
        address = None
        if net.get("fixed_ip") is not None:
            try:
                address = ipaddress.ip_address(str(net["fixed_ip"]))
            except ValueError:
                raise _bad(f"{where}: fixed_ip {net['fixed_ip']!r} is not an IP address")
        if name == CTLPLANE:
            if address is not None and address not in subnet.network:
                raise exceptions.InvalidInput(
                    f"{where}: fixed_ip {address} is not in the control plane subnet "
                    f"{subnet.cidr}.")
            found = str(address) if address is not None else found
            continue
        if name in others:
            raise _bad(f"{where}: network {name} is listed twice")
        subnet_name = net.get("subnet")
        if subnet_name is not None and (not isinstance(subnet_name, str) or not subnet_name):
            raise _bad(f"{where}: subnet {subnet_name!r} is not a name")
        others[name] = NetworkRequest(name, str(address) if address else None, subnet_name)
    return found, tuple(others.values())


def _text(value: Any, what: str, where: str) -> str | None:
    if value is not None and (not isinstance(value, str) or not value):
        raise _bad(f"{where}: {what} {value!r} is not a name")
    return value


def _instance(hostname: str, merged: Mapping[str, Any], managed: bool, where: str,
              subnet: Subnet) -> Instance:
    fixed_ip, networks = _networks(merged, where, subnet)
    network_config = merged.get("network_config") or {}
    if not isinstance(network_config, Mapping):
        raise _bad(f"{where}: network_config is not a mapping")
    if not managed:
        return Instance(hostname, fixed_ip, networks=networks,
                        network_config=dict(network_config))
    capabilities = merged.get("capabilities") or {}
    if not isinstance(capabilities, Mapping):
        raise _bad(f"{where}: capabilities is not a mapping")
    image = merged.get("image")
    if isinstance(image, Mapping):
        image = image.get("href")
    return Instance(
        hostname, fixed_ip, managed=True, node=_text(merged.get("name"), "name", where),
        profile=_text(merged.get("profile"), "profile", where),
        resource_class=_text(merged.get("resource_class"), "resource_class", where)
        or "baremetal",
        capabilities=tuple(sorted((str(k), str(v)) for k, v in capabilities.items())),
        image=_text(image, "image", where), networks=networks,
        network_config=dict(network_config))


def parse(data: Any, subnet: Subnet, formats: Mapping[str, str] | None = None,
          stack: str = "overcloud", max_servers: int = 1000) -> list[Role]:
    """Check a loaded baremetal deployment file; the roles with their instances.

    A managed instance without a hostname gets the role's ``hostname_format`` with
    ``stack`` and the first index whose name is not taken (as TripleO names them);
    a role's count beyond its listed instances adds managed instances of its
    ``defaults``.

    :param formats: each role's ``HostnameFormatDefault`` from roles_data, for roles
        whose entry has no ``hostname_format``.
    :param max_servers: the most servers all roles' counts may add up to.
    """
    if not isinstance(data, list) or not data:
        raise _bad("it is not a non-empty list")
    roles: list[Role] = []
    hostnames: set[str] = set()
    servers = 0
    for index, entry in enumerate(data):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) \
                or not entry["name"]:
            raise _bad(f"entry {index + 1} has no role name")
        name = entry["name"]
        unknown = sorted(set(entry) - _ROLE_KEYS)
        if unknown:
            raise _bad(f"role {name} has unknown keys {unknown}")
        if name in {r.name for r in roles}:
            raise _bad(f"role {name} is listed twice")
        instances_data = entry.get("instances") or []
        if not isinstance(instances_data, list):
            raise _bad(f"role {name}: instances is not a list")
        count = entry.get("count", len(instances_data))
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise _bad(f"role {name}: count {count!r} is not a number of servers")
        servers += count
        if servers > max_servers:
            raise exceptions.InvalidInput(
                f"The baremetal deployment file asks for more than {max_servers} servers "
                f"(role {name} reaches {servers}): lower the counts, or raise [limits] "
                "nodes_max.")
        if len(instances_data) > count:
            raise _bad(f"role {name} lists {len(instances_data)} instances for a count of "
                       f"{count}")
        default_format = (formats or {}).get(name) or DEFAULT_HOSTNAME_FORMAT.format(
            role=name.lower())
        hostname_format = entry.get("hostname_format") or default_format
        if not isinstance(hostname_format, str) or "%index%" not in hostname_format:
            raise _bad(f"role {name}: hostname_format must contain %index%")
        defaults = entry.get("defaults") or {}
        if not isinstance(defaults, Mapping):
            raise _bad(f"role {name}: defaults is not a mapping")
        listed = []
        for number, item in enumerate(instances_data):
            where = f"role {name}, instance {number + 1}"
            if not isinstance(item, Mapping):
                raise _bad(f"{where} is not a mapping")
            unknown = sorted(set(item) - _INSTANCE_KEYS)
            if unknown:
                raise _bad(f"{where} has unknown keys {unknown}")
            listed.append((where, {**defaults, **item}))
        if count > len(listed):
            if defaults.get("managed", True) is False:
                raise exceptions.InvalidInput(
                    f"Role {name} has a count of {count} but lists {len(listed)} instances: "
                    "each pre-provisioned server must be listed with its hostname.")
            listed += [(f"role {name}, server {n + 1}", dict(defaults))
                       for n in range(len(listed), count)]
        for where, merged in listed:
            hostname = merged.get("hostname")
            if hostname is not None and (not isinstance(hostname, str) or not hostname):
                raise _bad(f"{where}: hostname {hostname!r} is not a host name")
            if hostname in hostnames:
                raise _bad(f"host name {hostname} is used twice")
            if hostname:
                hostnames.add(hostname)
        instances = []
        next_index = 0
        for where, merged in listed:
            managed = merged.get("managed", True)
            if not isinstance(managed, bool):
                raise _bad(f"{where}: managed is true or false")
            hostname = merged.get("hostname")
            if not hostname:
                if not managed:
                    raise _bad(f"{where} has no hostname (a pre-provisioned server needs one)")
                while True:  # TripleO's names: the format's, skipping those taken
                    hostname = hostname_format.replace("%stackname%", stack).replace(
                        "%index%", str(next_index))
                    next_index += 1
                    if hostname not in hostnames:
                        break
                hostnames.add(hostname)
            instances.append(_instance(hostname, merged, managed, where, subnet))
        roles.append(Role(name, count, hostname_format, tuple(instances)))
    return roles


def default_names(role: Role, stack: str) -> list[str]:
    """The names Heat gives the role's servers (``HostnameMap`` keys), in index order."""
    base = role.hostname_format.replace("%stackname%", stack)
    return [base.replace("%index%", str(i)) for i in range(role.count)]


def allocate(roles: Sequence[Role], subnet: Subnet, stack: str,
             previous: Mapping[str, str] | None = None,
             previous_vip: str | None = None) -> tuple[dict[str, str], dict[str, str], str]:
    """Control plane addresses: ``(hostname map, address by host name, VIP)``.

    Fixed IPs are kept; a host that had an address (``previous``) keeps it; the
    VIP keeps ``previous_vip``; the others take the first free addresses of the
    pool, the VIP first.  A host no longer listed frees its address.
    """
    previous = dict(previous or {})
    hostname_map: dict[str, str] = {}
    for role in roles:
        hostname_map.update(zip(default_names(role, stack), (i.hostname for i in role.instances),
                                strict=True))
    instances = [i for role in roles for i in role.instances]
    taken: dict[str, str] = {}
    for inst in instances:
        if inst.fixed_ip is None:
            continue
        if inst.fixed_ip in taken:
            raise exceptions.InvalidInput(
                f"Hosts {taken[inst.fixed_ip]} and {inst.hostname} both have the fixed IP "
                f"{inst.fixed_ip}.")
        taken[inst.fixed_ip] = inst.hostname
    reserved = {subnet.gateway_ip}
    addresses = {i.hostname: i.fixed_ip for i in instances if i.fixed_ip}
    for inst in instances:
        kept = previous.get(inst.hostname)
        if inst.fixed_ip is None and kept and kept not in taken and kept not in reserved \
                and ipaddress.ip_address(kept) in subnet.network:
            addresses[inst.hostname] = kept
            taken[kept] = inst.hostname
    free = (a for a in subnet.pool() if a not in taken and a not in reserved)

    def next_free(what: str) -> str:
        for address in free:
            if address != previous_vip and address not in taken:
                return address
        raise exceptions.InvalidInput(
            f"The control plane allocation pool {subnet.allocation_start}-"
            f"{subnet.allocation_end} of {subnet.cidr} has no address left for {what}: "
            "widen it ([ctlplane] allocation_start/allocation_end) or give fixed IPs.")

    if previous_vip and previous_vip not in taken and \
            ipaddress.ip_address(previous_vip) in subnet.network:
        vip = previous_vip
    else:
        vip = next_free("the control plane VIP")
    taken[vip] = "the control plane VIP"
    for inst in instances:
        if inst.hostname not in addresses:
            addresses[inst.hostname] = next_free(inst.hostname)
            taken[addresses[inst.hostname]] = inst.hostname
    return hostname_map, addresses, vip
