"""config-download's Ansible inventory, as TripleO writes it from the stack's outputs.

(THT 12.x's, as tripleo-common 12.1.0 writes it, is :func:`render_ussuri`'s.)

Pure: stack outputs and two values of the stack's environment in, the inventory
(a mapping ready to dump as ``tripleo-ansible-inventory.yaml``) out.

The shape is that of tripleo-common 15 and later (Wallaby to 18.0.0,
``generate_tripleo_ansible_inventory``): the plan's own inventory is built first,
then "merged" as one stack of a multi-stack inventory, so each group ``G`` of the
plan becomes ``<plan>_G`` and a top-level ``G`` has ``<plan>_G`` as its only child::

    Undercloud                 localhost; plan, plans, overcloud URLs, admin password
    <Role> -> <plan>_<Role>    hosts: ansible_host, deploy_server_id, <net>_ip,
                               <net>_hostname; vars: tripleo_role_name,
                               tripleo_role_networks, bootstrap_server_id, serial
    <plan> -> <plan>_allovercloud -> <plan>_<plan> -> <plan>_<Role>...
                               (<plan>_<plan> vars: <network>_vip, container_cli)
    allovercloud -> <plan>_allovercloud
    <service> -> <plan>_<service> -> <plan>_<Role>...   from EnabledServices, plus
                               ceph-ansible's names (mons, osds ...) for ceph services
    excluded_overcloud -> <plan>_excluded_overcloud      BlacklistedHostnames

Only what Heat's outputs say is used: tripleo-common adds data from Neutron's
ports (``canonical_hostname``, ``<net>_cidr`` ...) when it can reach Neutron, and
tripleo-flow's deployments have no Neutron, as tripleo-common on the same stack
without it.  The differential test
(``tests/functional/overcloud/test_tripleo_common_oracle.py``) holds this module
against tripleo-common on the real stacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The network Ansible connects over.
HOST_NETWORK = "ctlplane"
#: The services tripleo-common lists as the undercloud's.
UNDERCLOUD_SERVICES = ("tripleo_ironic_conductor",)
#: ceph-ansible's name for TripleO's ceph service groups (both are written).
CEPH_GROUPS = {"ceph_mon": "mons", "ceph_osd": "osds", "ceph_mgr": "mgrs",
               "ceph_rgw": "rgws", "ceph_mds": "mdss", "ceph_nfs": "nfss",
               "ceph_client": "clients", "ceph_rbdmirror": "rbdmirrors",
               "ceph_grafana": "grafana-server"}
#: The group of hosts the update and upgrade playbooks leave out.
EXCLUDED = "excluded_overcloud"
#: Where Ansible keeps its temporary files on the undercloud (ansible/ansible#41808).
REMOTE_TMP = "/tmp/ansible-${USER}"


class InventoryError(ValueError):
    """The outputs cannot make an inventory (a role with host names but no addresses,
    or absent from ``RoleNetIpMap``; a role named ``Undercloud``)."""


def short_name(fqdn: str, network: str = HOST_NETWORK) -> str:
    """A host's inventory name: its FQDN on ``network`` cut before ``.<network>.``,
    lower-cased (``overcloud-controller-0.ctlplane.localdomain`` ->
    ``overcloud-controller-0``)."""
    return fqdn.split(f".{network}.")[0].lower()


def _role_groups(outputs: Mapping[str, Any], ssh_user: str,
                 python: str | None) -> tuple[dict[str, Any], set[str]]:
    """Each role with servers: ``{hosts, vars}``; and every network those roles have."""
    ip_map = outputs.get("RoleNetIpMap") or {}
    server_data = outputs.get("ServerIdData") or {}
    bootstrap = server_data.get("bootstrap_server_id")
    ids_by_role = server_data.get("server_ids") or {}
    groups: dict[str, Any] = {}
    networks: set[str] = set()
    for role, names_by_net in (outputs.get("RoleNetHostnameMap") or {}).items():
        if not names_by_net:
            continue
        if not isinstance(ip_map.get(role), Mapping):  # tripleo-common fails too
            raise InventoryError(
                f"Role {role} has host names in the stack's RoleNetHostnameMap output but "
                "no entry in its RoleNetIpMap output: check the role's ports.")
        ips_by_net = ip_map[role]
        if HOST_NETWORK not in ips_by_net:
            continue  # tripleo-common warns and leaves the role out
        ips = ips_by_net[HOST_NETWORK]
        if not ips:
            raise InventoryError(
                f"Role {role} has host names but no address on the {HOST_NETWORK} network "
                "in the stack's RoleNetIpMap output: check the role's ports.")
        role_networks = sorted(str(net) for net in ips_by_net)
        networks.update(role_networks)
        ids = ids_by_role.get(role) if ids_by_role else None
        hosts: dict[str, Any] = {}
        for index, fqdn in enumerate(names_by_net.get(HOST_NETWORK) or []):
            host = hosts.setdefault(short_name(str(fqdn)), {})
            host.setdefault("ansible_host", ips[index])
            if ids:
                host.setdefault("deploy_server_id", ids[index])
            for net, addresses in ips_by_net.items():
                host.setdefault(f"{net}_ip", addresses[index])
            for net, names in names_by_net.items():
                host.setdefault(f"{net}_hostname", names[index])
        role_vars: dict[str, Any] = {
            "ansible_ssh_user": ssh_user, "bootstrap_server_id": bootstrap,
            "tripleo_role_name": role, "tripleo_role_networks": role_networks, "serial": 1}
        if python:
            role_vars["ansible_python_interpreter"] = python
        groups[role] = {"hosts": hosts, "vars": role_vars}
    return groups, networks


def _service_roles(outputs: Mapping[str, Any]) -> dict[str, list[str]]:
    """Service name -> the roles running it (sorted), from EnabledServices; ceph
    services also under ceph-ansible's group names."""
    by_service: dict[str, list[str]] = {}
    for role, services in (outputs.get("EnabledServices") or {}).items():
        for service in services or []:
            by_service.setdefault(str(service), []).append(str(role))
    by_service = {service: sorted(set(roles)) for service, roles in by_service.items()}
    for service, alias in CEPH_GROUPS.items():
        if service in by_service:
            by_service[alias] = by_service[service]
    return by_service


def _overcloud_access(outputs: Mapping[str, Any],
                      environment: Mapping[str, Any]) -> dict[str, Any]:
    """The undercloud's variables to reach the overcloud: its admin password (as Heat's
    environment shows it), Keystone and Horizon URLs, those the stack has."""
    found = {"overcloud_admin_password":
             (environment.get("parameter_defaults") or {}).get("AdminPassword"),
             "overcloud_keystone_url": outputs.get("KeystoneURL"),
             "overcloud_horizon_url": ((outputs.get("EndpointMap") or {}).get(
                 "HorizonPublic") or {}).get("uri")}
    return {key: value for key, value in found.items() if value}


def _plan_vars(outputs: Mapping[str, Any], environment: Mapping[str, Any],
               networks: set[str]) -> dict[str, Any]:
    """The overcloud group's variables: each VIP on a network of the roles (and redis's),
    and the container CLI."""
    plan_vars = {f"{name}_vip": vip for name, vip in (outputs.get("VipMap") or {}).items()
                 if vip and (name in networks or name == "redis")}
    plan_vars["container_cli"] = (environment.get("parameter_defaults") or {}).get(
        "ContainerCli")
    return plan_vars


def _undercloud(plan: str, outputs: Mapping[str, Any], environment: Mapping[str, Any],
                python: str) -> dict[str, Any]:
    undercloud_vars: dict[str, Any] = {
        "ansible_host": "localhost", "ansible_connection": "local",
        "ansible_remote_tmp": REMOTE_TMP, "any_error_fatal": True, "max_fail_percentage": 0,
        "ansible_python_interpreter": python,
        "undercloud_service_list": list(UNDERCLOUD_SERVICES), "plan": plan,
        **_overcloud_access(outputs, environment), "plans": [plan]}
    return {"hosts": {"undercloud": {}}, "vars": undercloud_vars}


def plan_groups(plan: str, outputs: Mapping[str, Any], environment: Mapping[str, Any],
                ssh_user: str, python: str | None = None) -> dict[str, Any]:
    """The plan's own groups, before they are prefixed (the Undercloud left out):
    roles, the plan's group, ``allovercloud``, services and ``excluded_overcloud``."""
    groups, networks = _role_groups(outputs, ssh_user, python)
    roles = sorted(groups)
    if roles:
        groups[plan] = {"vars": _plan_vars(outputs, environment, networks),
                        "children": {r: {} for r in roles}}
        groups.setdefault("allovercloud", {"children": {plan: {}}})
    for service, service_roles in _service_roles(outputs).items():
        present = [r for r in service_roles if r in groups or r == "Undercloud"]
        if not present:
            continue
        group = groups.setdefault(service.lower(), {})
        group_vars = group.setdefault("vars", {})
        group.setdefault("children", {r: {} for r in present})
        group_vars.setdefault("ansible_ssh_user", ssh_user)
        if python:
            group_vars.setdefault("ansible_python_interpreter", python)
    excluded = groups.setdefault(EXCLUDED, {}).setdefault("hosts", {})
    for name in outputs.get("BlacklistedHostnames") or []:
        if name:
            excluded[name] = {}
    return groups


def render(plan: str, outputs: Mapping[str, Any], environment: Mapping[str, Any],
           ssh_user: str, python: str, role_python: str | None = None) -> dict[str, Any]:
    """The whole inventory of one plan, its groups prefixed with ``<plan>_``.

    :param environment: the stack's environment as Heat keeps it; only
        ``parameter_defaults``' ``AdminPassword`` (the undercloud's
        ``overcloud_admin_password``) and ``ContainerCli`` are read.
    :param python: the undercloud's ``ansible_python_interpreter``.
    :param role_python: the overcloud hosts' interpreter, when one is imposed.
    :raises InventoryError: a role with host names but no ctlplane address, or none
        in ``RoleNetIpMap``; a role named ``Undercloud`` with servers.
    """
    groups = plan_groups(plan, outputs, environment, ssh_user, role_python)
    if "Undercloud" in groups:
        # tripleo-common 18.0.0 merges such a role into the undercloud's own group: its
        # hosts and their addresses lost, the local connection gone.
        raise InventoryError(
            "The stack has a role named Undercloud with servers: its inventory group would "
            "be the undercloud's own; rename the role.")
    inventory: dict[str, Any] = {"Undercloud": _undercloud(plan, outputs, environment, python)}
    for key, group in groups.items():
        prefixed = f"{plan}_{key}"
        if key != plan:
            inventory.setdefault(key, {"children": {}})["children"][prefixed] = {}
        if "children" in group:
            inventory[prefixed] = {"children": {f"{plan}_{child}": {}
                                                for child in sorted(group["children"])}}
            if "vars" in group:
                inventory[prefixed]["vars"] = group["vars"]
            if key == "allovercloud":
                inventory[plan] = {"children": {prefixed: {}}}
        else:
            inventory[prefixed] = group
    return inventory


#: The undercloud services tripleo-common 12.1.0 (Ussuri) lists.
USSURI_UNDERCLOUD_SERVICES = ("tripleo_nova_compute", "tripleo_heat_engine",
                              "tripleo_ironic_conductor", "tripleo_swift_container_server",
                              "tripleo_swift_object_server", "tripleo_mistral_engine")
#: Ussuri's group of every role, whatever the plan's name.
USSURI_OVERCLOUD = "overcloud"


def render_ussuri(plan: str, outputs: Mapping[str, Any], environment: Mapping[str, Any],
                  ssh_user: str, python: str) -> dict[str, Any]:
    """The inventory as tripleo-common 12.1.0 (Ussuri, THT 12.x) writes it: one plan, no
    prefixes, the roles under a group named ``overcloud``, no ``allovercloud`` nor
    ``excluded_overcloud``; the undercloud's Keystone and Swift settings (none: there is
    no Keystone) named as its Mistral action names them.  The undercloud is reached
    with a local connection (Ussuri's Mistral ran Ansible in a container and reached the
    undercloud over SSH; tripleo-flow runs on the undercloud itself)."""
    undercloud_vars: dict[str, Any] = {
        "ansible_host": "localhost", "ansible_python_interpreter": python,
        "ansible_connection": "local", "ansible_remote_tmp": REMOTE_TMP,
        "auth_url": None, "cacert": None, "os_auth_token": None, "plan": plan,
        "project_name": None, "username": None, "undercloud_swift_url": None,
        "undercloud_service_list": list(USSURI_UNDERCLOUD_SERVICES),
        **_overcloud_access(outputs, environment)}
    inventory: dict[str, Any] = {"Undercloud": {"hosts": {"undercloud": {}},
                                                "vars": undercloud_vars}}
    groups, networks = _role_groups(outputs, ssh_user, None)
    inventory.update(groups)
    if groups:
        inventory[USSURI_OVERCLOUD] = {"children": {r: {} for r in sorted(groups)},
                                       "vars": _plan_vars(outputs, environment, networks)}
    for service, service_roles in _service_roles(outputs).items():
        present = [r for r in service_roles if r in inventory]
        if present:
            inventory[service.lower()] = {"children": {r: {} for r in present},
                                          "vars": {"ansible_ssh_user": ssh_user}}
    return inventory


__all__ = ["CEPH_GROUPS", "EXCLUDED", "HOST_NETWORK", "InventoryError", "plan_groups", "render",
           "render_ussuri", "short_name"]
