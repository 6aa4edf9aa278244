"""Scaling down chosen servers: which role group members leave, and the parameters
that make Heat remove exactly those.

Pure.  A role's servers are the members of its ``OS::Heat::ResourceGroup`` (named
``"0"``, ``"1"``... by Heat); a member's host name is the role's
``{Role}HostnameFormat`` with ``%stackname%`` and ``%index%`` filled in, mapped
through ``HostnameMap`` when the map has that name (THT's ``server.yaml``).  So a
host name leads back to its member by the inverse map and the format, as
tripleo-ansible's baremetal provisioning finds the index of an unprovisioned
instance; the last deployment's ``AnsibleHostVarsMap`` output says which servers
the stack has (a host that is not there is refused, as tripleo-common's scale-down
refuses an instance not in the stack).  The primary role (tagged ``primary`` and
``controller``: THT takes the bootstrap server from it) must keep one server.

What is sent for each role losing servers, as tripleo-common's ``ScaleDownAction``:
``{Role}Count`` (the servers the stack has, less those leaving),
``{Role}RemovalPolicies`` (``[{resource_list: [member names]}]``) and
``{Role}RemovalPoliciesMode: append``.  The policies are kept in the plan, merged
with those of earlier scale-downs, so a later deploy never reuses a removed index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tripleo_flow import exceptions

#: The removal mode tripleo-common forces on a scale-down (``update`` can remove
#: servers nobody named).
REMOVAL_MODE = "append"
#: The scale-down playbook config-download writes; run on the leaving servers only.
PLAYBOOK = "scale_playbook.yaml"


@dataclass(frozen=True)
class Member:
    """One server of a role: its host name and its member name in the role's group."""

    hostname: str
    role: str
    resource: str


def _format_pattern(hostname_format: str, stack: str) -> re.Pattern[str]:
    parts = hostname_format.split("%index%")
    if len(parts) != 2:
        raise exceptions.InvalidInput(
            f"The hostname format {hostname_format!r} does not hold one %index%: the "
            "servers it names cannot be told apart.")
    escaped = [re.escape(p.replace("%stackname%", stack)) for p in parts]
    return re.compile(f"^{escaped[0]}(0|[1-9][0-9]*){escaped[1]}$")


def member_name(hostname: str, role: str, parameters: Mapping[str, Any], stack: str) -> str | None:
    """The group member of ``role`` that ``hostname`` is, or None when it cannot be.

    :param parameters: the effective parameters of the last deployment (its
        ``{Role}HostnameFormat`` and ``HostnameMap``).
    """
    hostname_format = parameters.get(f"{role}HostnameFormat")
    if not isinstance(hostname_format, str):
        return None
    pattern = _format_pattern(hostname_format, stack)
    mapped = parameters.get("HostnameMap") or {}
    generated = [name for name, host in mapped.items() if host == hostname]
    for name in generated or [hostname]:
        found = pattern.match(name)
        if found:
            return found.group(1)
    return None


def stack_servers(outputs: Mapping[str, Any]) -> dict[str, list[str]]:
    """The host names the stack has, by role (its ``AnsibleHostVarsMap`` output)."""
    host_vars = outputs.get("AnsibleHostVarsMap") or {}
    return {role: sorted(hosts) for role, hosts in host_vars.items() if hosts}


def select(hosts: Sequence[str], outputs: Mapping[str, Any],
           parameters: Mapping[str, Any], stack: str) -> list[Member]:
    """The members ``hosts`` are, in the order given (repeats dropped).

    :raises InvalidInput: no host is given, or a host's member cannot be told from
        the deployed parameters.
    :raises ServersNotInStack: a host is not a server of the stack (nothing changes).
    """
    wanted = list(dict.fromkeys(hosts))
    if not wanted:
        raise exceptions.InvalidInput("Name the servers to delete (their host names).")
    roles = {host: role for role, names in stack_servers(outputs).items() for host in names}
    missing = [h for h in wanted if h not in roles]
    if missing:
        raise exceptions.ServersNotInStack(stack, missing, sorted(roles))
    members = []
    for host in wanted:
        role = roles[host]
        resource = member_name(host, role, parameters, stack)
        if resource is None:
            raise exceptions.InvalidInput(
                f"Server {host!r} of role {role} matches neither the role's hostname "
                f"format {parameters.get(f'{role}HostnameFormat')!r} nor a HostnameMap "
                "entry of the last deployment: its group member is unknown, so it cannot "
                "be removed alone.")
        members.append(Member(host, role, resource))
    _check_primary_kept(members, outputs, stack)
    return members


def primary_role(outputs: Mapping[str, Any]) -> str | None:
    """The role THT's templates take the bootstrap server from (``primary`` and
    ``controller`` in its ``RoleTags``), or None."""
    for role, tags in (outputs.get("RoleTags") or {}).items():
        if isinstance(tags, list) and "primary" in tags and "controller" in tags:
            return str(role)
    return None


def _check_primary_kept(members: Sequence[Member], outputs: Mapping[str, Any],
                        stack: str) -> None:
    role = primary_role(outputs)
    servers = stack_servers(outputs).get(role or "", [])
    leaving = {m.hostname for m in members if m.role == role}
    if servers and leaving >= set(servers):
        raise exceptions.InvalidInput(
            f"Deleting {', '.join(sorted(leaving))} would leave role {role} of stack "
            f"{stack!r} with no server, and the stack takes its bootstrap server from "
            "that role: keep one (delete fewer); nothing was changed.")


def removal_list(policies: Any) -> list[str]:
    """The member names of a ``{Role}RemovalPolicies`` value (every ``resource_list``)."""
    names: list[str] = []
    for policy in policies or []:
        if isinstance(policy, Mapping):
            names.extend(str(n) for n in policy.get("resource_list") or [])
    return names


def _ordered(names: Iterable[str]) -> list[str]:
    unique = set(names)
    return sorted(unique, key=lambda n: (0, int(n), "") if n.isdigit() else (1, 0, n))


def removal_parameters(members: Sequence[Member], outputs: Mapping[str, Any],
                       parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that remove ``members``: per role losing servers, its count,
    its removal policies (merged with the earlier ones) and their mode."""
    servers = stack_servers(outputs)
    values: dict[str, Any] = {}
    for role in dict.fromkeys(m.role for m in members):
        leaving = [m for m in members if m.role == role]
        earlier = removal_list(parameters.get(f"{role}RemovalPolicies"))
        values[f"{role}Count"] = len(servers.get(role, [])) - len(leaving)
        values[f"{role}RemovalPolicies"] = [
            {"resource_list": _ordered([*earlier, *(m.resource for m in leaving)])}]
        values[f"{role}RemovalPoliciesMode"] = REMOVAL_MODE
    return values


def unprovisioned_hosts(roles: Any) -> list[str]:
    """The host names a baremetal deployment file marks ``provisioned: false`` (the
    servers to delete, as TripleO's ``node delete --baremetal-deployment`` takes them).

    :raises InvalidInput: the file is not a list of roles, or such an instance has
        no host name.
    """
    if not isinstance(roles, list):
        raise exceptions.InvalidInput(
            "A baremetal deployment file is a list of roles (name, count, instances).")
    hosts = []
    for role in roles:
        instances = role.get("instances") if isinstance(role, Mapping) else None
        for instance in instances if isinstance(instances, list) else []:
            if not isinstance(instance, Mapping) or instance.get("provisioned", True) is not False:
                continue
            host = instance.get("hostname") or instance.get("name")
            if not isinstance(host, str) or not host:
                raise exceptions.InvalidInput(
                    f"An instance of role {role.get('name')!r} is marked provisioned: false "
                    "but has no hostname: name the server to delete.")
            hosts.append(host)
    return hosts


def ansible_limit(members: Sequence[Member]) -> str:
    """The ``--limit`` of the scale-down playbook: the leaving servers only."""
    return ":".join(m.hostname for m in members)
