"""Check roles (``roles_data.yaml``) and networks (``network_data.yaml``).

The rules follow what TripleO relies on:

* role names are unique (also once lower-cased: rendered file names use the
  lower-case name) and usable in Heat resource and parameter names;
* the primary role is the one tagged both ``primary`` and ``controller``, or
  the first role when none is tagged; TripleO ignores a ``primary`` tag
  without ``controller`` when there are several roles, so that is an error
  here, as are two roles tagged ``primary``;
* role keys have the types tripleo-common checks (``CountDefault`` an int,
  ``ServicesDefault`` a list of service names, ...);
* network names and ``name_lower`` are unique, subnets are valid CIDRs,
  allocation pools and gateways lie inside their subnet, VLAN ids are 1-4094.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any

from tripleo_flow import exceptions

#: Role names end up in Heat resource names, parameter names and file names.
ROLE_NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
#: Network names are used the same way; name_lower also in file names.
NETWORK_NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
NAME_LOWER_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")

_STR = (str,)
#: key -> (accepted types, description) for optional role keys.
ROLE_SCHEMA: dict[str, tuple[tuple[type, ...], str]] = {
    "description": (_STR, "a string"),
    "CountDefault": ((int,), "an integer >= 0"),
    "HostnameFormatDefault": (_STR, "a string"),
    "ServicesDefault": ((list,), "a list of service names"),
    "tags": ((list,), "a list of strings"),
    "networks": ((list, dict), "a list or a mapping of network names"),
    "networks_skip_config": ((list,), "a list of network names"),
    "default_route_networks": ((list,), "a list of network names"),
    "upgrade_batch_size": ((int,), "an integer"),
    "update_serial": ((int,), "an integer"),
    "deploy_serial": ((int,), "an integer"),
    "disable_constraints": ((bool,), "true or false"),
    "uses_deprecated_params": ((bool,), "true or false"),
    "deprecated_nic_config_name": (_STR, "a file name"),
    "RoleParametersDefault": ((dict,), "a mapping"),
    "ImageDefault": (_STR, "a string"),
    "FlavorDefault": (_STR, "a string"),
}


def _type_ok(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in types:
        return False  # YAML true is not a count
    return isinstance(value, types)


def _roles_error(message: str) -> exceptions.InvalidRoles:
    return exceptions.InvalidRoles(f"{message} Fix roles_data.yaml and try again.")


def primary_role(roles: list[dict[str, Any]]) -> dict[str, Any]:
    """The role TripleO treats as primary (see the module docstring)."""
    for role in roles:
        tags = role.get("tags") or []
        if "primary" in tags and "controller" in tags:
            return role
    if len(roles) == 1:
        return roles[0]
    for role in roles:
        if "primary" in (role.get("tags") or []):
            return role
    return roles[0]


def _check_role(index: int, role: Any, max_count: int | None = None) -> str:
    if not isinstance(role, Mapping):
        raise _roles_error(f"Role entry {index} is not a mapping.")
    name = role.get("name")
    if not isinstance(name, str) or not name:
        raise _roles_error(f"Role entry {index} has no 'name'.")
    if not ROLE_NAME_PATTERN.match(name):
        raise _roles_error(
            f"Role {name!r}: the name must start with a letter and hold only letters, "
            f"digits and '_' (pattern {ROLE_NAME_PATTERN.pattern})."
        )
    for key, (types, what) in ROLE_SCHEMA.items():
        if key in role and not _type_ok(role[key], types):
            raise _roles_error(
                f"Role {name!r}: {key} must be {what}, not {type(role[key]).__name__}."
            )
    if role.get("CountDefault", 0) < 0:
        raise _roles_error(f"Role {name!r}: CountDefault must be an integer >= 0.")
    if max_count is not None and role.get("CountDefault", 0) > max_count:
        raise _roles_error(
            f"Role {name!r}: CountDefault {role['CountDefault']} asks for more servers than "
            f"[limits] nodes_max ({max_count}) allows. Set a smaller count (or raise "
            "[limits] nodes_max in the configuration).")
    for key in ("ServicesDefault", "tags", "networks_skip_config", "default_route_networks"):
        for item in role.get(key) or []:
            if not isinstance(item, str):
                raise _roles_error(f"Role {name!r}: {key} entry {item!r} is not a string.")
    services = role.get("ServicesDefault") or []
    duplicates = sorted({s for s in services if services.count(s) > 1})
    if duplicates:
        raise _roles_error(f"Role {name!r}: ServicesDefault lists {', '.join(duplicates)} twice.")
    return name


def _count(value: Any) -> float | None:
    """A count as Heat would read it (an int, a float or a number's text); None for
    anything else (Heat refuses it by type)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str) and len(value) <= 64:
        try:
            return float(value)
        except ValueError:
            return None
    return None


def check_counts(values: Mapping[str, Any], role_names: Iterable[str], max_count: int) -> None:
    """Refuse a role count (``<Role>Count`` in ``values``) above ``max_count``.

    :raises InvalidParameter: naming the parameter and ``[limits] nodes_max``.
    """
    for role in role_names:
        name = f"{role}Count"
        count = _count(values.get(name))
        if count is not None and not count <= max_count:  # NaN too
            value = values[name]
            shown = (f"(a number of about {value.bit_length() * 3 // 10 + 1} digits)"
                     if isinstance(value, int) and value.bit_length() > 100
                     else str(value)[:40])
            raise exceptions.InvalidParameter(
                f"{name}={shown} asks for more servers than [limits] nodes_max "
                f"({max_count}) allows. Set a smaller count (or raise [limits] nodes_max in "
                "the configuration).")


def validate_roles(roles: list[dict[str, Any]], *, require_primary_tag: bool = False,
                   max_count: int | None = None) -> None:
    """Check a roles list.

    :param require_primary_tag: also demand that one role is tagged ``primary``
        (TripleO otherwise takes the first role as primary).
    :param max_count: the largest CountDefault (``[limits] nodes_max``; None: no limit).
    :raises InvalidRoles: naming the role and key at fault.
    """
    if not isinstance(roles, list) or not roles:
        raise _roles_error("There are no roles: a plan needs at least one.")
    seen: dict[str, str] = {}
    for index, role in enumerate(roles, start=1):
        name = _check_role(index, role, max_count)
        lower = name.lower()
        if lower in seen:
            same = "twice" if seen[lower] == name else f"as {seen[lower]!r} and {name!r}"
            raise _roles_error(
                f"Role {name!r} is defined {same}: role names must be unique "
                "(ignoring case, as rendered file names are lower case)."
            )
        seen[lower] = name
    tagged = [role["name"] for role in roles if "primary" in (role.get("tags") or [])]
    if len(tagged) > 1:
        raise _roles_error(
            f"Roles {', '.join(map(repr, tagged))} are all tagged 'primary': "
            "only one role may be."
        )
    if tagged and len(roles) > 1:
        role = next(r for r in roles if r["name"] == tagged[0])
        if "controller" not in (role.get("tags") or []):
            raise _roles_error(
                f"Role {tagged[0]!r} is tagged 'primary' but not 'controller': TripleO "
                "only takes a role tagged both as primary. Add the 'controller' tag."
            )
    if require_primary_tag and not tagged:
        raise _roles_error("No role is tagged 'primary': tag the controller role "
                           "with 'primary' and 'controller'.")


# -- networks ----------------------------------------------------------------


def _networks_error(message: str) -> exceptions.InvalidNetworks:
    return exceptions.InvalidNetworks(f"{message} Fix network_data.yaml and try again.")


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(where: str, key: str, value: Any) -> IPAddress:
    try:
        return ipaddress.ip_address(str(value))
    except ValueError as exc:
        raise _networks_error(f"{where}: {key} {value!r} is not an IP address.") from exc


def _cidr(where: str, key: str, value: Any) -> IPNetwork | None:
    if value is None:
        return None
    try:
        return ipaddress.ip_network(str(value), strict=False)
    except ValueError as exc:
        raise _networks_error(f"{where}: {key} {value!r} is not a valid CIDR.") from exc


def _check_pools(where: str, key: str, pools: Any, subnet: IPNetwork | None) -> None:
    if pools is None:
        return
    if not isinstance(pools, list):
        raise _networks_error(f"{where}: {key} must be a list of {{start, end}}.")
    for pool in pools:
        if not isinstance(pool, Mapping) or "start" not in pool or "end" not in pool:
            raise _networks_error(f"{where}: {key} entry {pool!r} needs 'start' and 'end'.")
        start = _address(where, f"{key} start", pool["start"])
        end = _address(where, f"{key} end", pool["end"])
        if start.version != end.version or int(start) > int(end):
            raise _networks_error(f"{where}: {key} range {start} - {end} is empty or mixed.")
        if subnet is not None and (start not in subnet or end not in subnet):
            raise _networks_error(f"{where}: {key} range {start} - {end} is outside {subnet}.")


def _check_gateway(where: str, key: str, value: Any, subnet: IPNetwork | None) -> None:
    if value is None:
        return
    address = _address(where, key, value)
    if subnet is not None and address not in subnet:
        raise _networks_error(f"{where}: {key} {address} is outside {subnet}.")


def _check_subnet(where: str, data: Mapping[str, Any]) -> None:
    """Check the addressing keys of a network or of one of its subnets."""
    subnet = _cidr(where, "ip_subnet", data.get("ip_subnet"))
    subnet6 = _cidr(where, "ipv6_subnet", data.get("ipv6_subnet"))
    _check_pools(where, "allocation_pools", data.get("allocation_pools"), subnet)
    _check_pools(where, "ipv6_allocation_pools", data.get("ipv6_allocation_pools"), subnet6)
    _check_gateway(where, "gateway_ip", data.get("gateway_ip"), subnet)
    _check_gateway(where, "gateway_ipv6", data.get("gateway_ipv6"), subnet6)
    vlan = data.get("vlan")
    if vlan is not None and (
        isinstance(vlan, bool) or not isinstance(vlan, int) or not 1 <= vlan <= 4094
    ):
        raise _networks_error(f"{where}: vlan {vlan!r} must be an integer from 1 to 4094.")


def _check_network(index: int, network: Any) -> tuple[str, str]:
    if not isinstance(network, Mapping):
        raise _networks_error(f"Network entry {index} is not a mapping.")
    name = network.get("name")
    if not isinstance(name, str) or not NETWORK_NAME_PATTERN.match(name):
        raise _networks_error(
            f"Network entry {index}: name {name!r} must start with a letter and hold only "
            f"letters, digits and '_'."
        )
    where = f"Network {name!r}"
    lower = network.get("name_lower") or name.lower()
    if not isinstance(lower, str) or not NAME_LOWER_PATTERN.match(lower):
        raise _networks_error(
            f"{where}: name_lower {lower!r} must be lower case letters, digits and '_'."
        )
    if "enabled" in network and not isinstance(network["enabled"], bool):
        raise _networks_error(f"{where}: enabled must be true or false.")
    mtu = network.get("mtu")
    if mtu is not None and (isinstance(mtu, bool) or not isinstance(mtu, int) or mtu < 68):
        raise _networks_error(f"{where}: mtu {mtu!r} must be an integer >= 68.")
    _check_subnet(where, network)
    subnets = network.get("subnets")
    if subnets is not None:
        if not isinstance(subnets, Mapping):
            raise _networks_error(f"{where}: subnets must be a mapping of name -> subnet.")
        for subnet_name, subnet in subnets.items():
            if not isinstance(subnet, Mapping):
                raise _networks_error(f"{where}: subnet {subnet_name!r} is not a mapping.")
            _check_subnet(f"{where}, subnet {subnet_name!r}", subnet)
    return name, lower


def validate_networks(networks: list[dict[str, Any]]) -> None:
    """Check a networks list (an empty list is valid: no isolated networks).

    :raises InvalidNetworks: naming the network and key at fault.
    """
    if not isinstance(networks, list):
        raise _networks_error("Network data must be a list of networks.")
    names: set[str] = set()
    lowers: dict[str, str] = {}
    for index, network in enumerate(networks, start=1):
        name, lower = _check_network(index, network)
        if name in names:
            raise _networks_error(f"Network {name!r} is defined twice.")
        if lower in lowers:
            raise _networks_error(
                f"Networks {lowers[lower]!r} and {name!r} share name_lower {lower!r}."
            )
        names.add(name)
        lowers[lower] = name


# -- VIPs and the data files of a plan ----------------------------------------

#: The data files ``-r``, ``-n`` and ``--vip-file`` replace.
ROLES_DATA = "roles_data.yaml"
NETWORK_DATA = "network_data.yaml"
VIP_DATA = "vip_data.yaml"
#: Trees of THT 18.x ship these in place of network_data.yaml / vip_data.yaml.
DEFAULT_DATA_FILES = {NETWORK_DATA: "network_data_default.yaml",
                      VIP_DATA: "vip_data_default.yaml"}
_VIP_KEYS = {"network": _STR, "name": _STR, "dns_name": _STR, "subnet": _STR,
             "ip_address": _STR}


def validate_vips(vips: Any) -> None:
    """Check a VIP list (``vip_data.yaml``: ``[{network, ip_address?, name?, ...}]``).

    :raises InvalidNetworks: naming the entry and key at fault.
    """
    def error(message: str) -> exceptions.InvalidNetworks:
        return exceptions.InvalidNetworks(f"{message} Fix vip_data.yaml and try again.")

    if not isinstance(vips, list):
        raise error("VIP data must be a list of {network: NAME, ...}.")
    for index, vip in enumerate(vips, start=1):
        if not isinstance(vip, Mapping) or not isinstance(vip.get("network"), str):
            raise error(f"VIP entry {index} needs 'network' (a network name).")
        for key, value in vip.items():
            if key not in _VIP_KEYS:
                raise error(f"VIP entry {index}: unknown key {key!r} (known: "
                            f"{', '.join(sorted(_VIP_KEYS))}).")
            if not isinstance(value, _VIP_KEYS[key]):
                raise error(f"VIP entry {index}: {key} must be a string.")
        if "ip_address" in vip:
            try:
                ipaddress.ip_address(vip["ip_address"])
            except ValueError:
                raise error(f"VIP entry {index}: ip_address {vip['ip_address']!r} is not an "
                            "IP address.") from None


def with_data_files(files: Mapping[str, bytes],
                    given: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
    """``files`` of a template tree with its data files settled: each of ``given``
    (roles, network or VIP data, by plan name) replaces the tree's, and a tree that
    ships ``network_data_default.yaml`` / ``vip_data_default.yaml`` but no
    ``network_data.yaml`` / ``vip_data.yaml`` (THT 18.x) uses them.

    :raises InvalidInput: for a name that is none of the three data files.
    """
    result = dict(files)
    for target, default in DEFAULT_DATA_FILES.items():
        if target not in result and default in result:
            result[target] = result[default]
    for name, data in (given or {}).items():
        if name not in (ROLES_DATA, NETWORK_DATA, VIP_DATA):
            raise exceptions.InvalidInput(
                f"{name!r} is not a data file a plan takes from the command line; give "
                f"{ROLES_DATA}, {NETWORK_DATA} or {VIP_DATA}.")
        result[name] = data
    return result
