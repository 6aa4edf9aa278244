"""config-download: the Ansible project of a deployed stack, in TripleO's layout.

Pure: takes the stack outputs and the servers' software deployments, returns
``{relative path: bytes}``.  Nothing here reads or writes files.  Layout::

    tripleo-ansible-inventory.yaml   TripleO's inventory (core/deploy/inventory.py): the
                                     Undercloud, ``<plan>_<Role>`` groups (hosts at their
                                     ctlplane IP), the plan's, allovercloud, a group per
                                     service, excluded_overcloud
    ansible.cfg                      the SSH user and key, the inventory
    global_vars.yaml                 deploy_steps_max and the plan's name (RoleConfig's
                                     ``global_vars`` replaces it, as THT's does)
    deployments.yaml                 the task file that runs one software deployment
    templates/heat-config.j2         the heat-config wrapper template
    <key>[.yaml]                     one per RoleConfig key; ``.yaml`` only when the key
                                     has no extension (``deploy-artifacts.sh`` stays)
    external_deploy_steps_tasks_step0..5.yaml   RoleConfig's external tasks by step
    group_vars/<Role>                RoleGroupVars (roles with servers only)
    host_vars/<server>               pre_network/pre/post deployment lists +
                                     AnsibleHostVarsMap
    <Role>/<key>.yaml                every RoleData key (step_config.pp, param_config.json);
                                     deploy_steps, update, upgrade tasks also split per
                                     step (post_update_tasks: 4 steps)
    <Role>/<server>/<deployment>     each software deployment of the server
    <Role>/NetworkConfig             the os-net-config script (Ussuri to Yoga outputs;
    <Role>/<server>/NetworkConfig    per server for Ussuri): see core/deploy/network_config.py

The layout is tripleo-common's ``tripleo_common/utils/config.py`` (``write_config``)
and ``inventory.py`` (:mod:`~tripleo_flow.core.deploy.inventory`), of the release of the
templates' series (:func:`series_of`): 18.0.0's rules, or for THT 12.x (Ussuri)
12.1.0's (:data:`USSURI`: fewer per-step files, ``ansible_group_vars`` merged into
``group_vars``, no ``pre_network`` list, its ``deployments.yaml`` and inventory).
The differential tests hold the projects of the real stacks against tripleo-common.

The cost is linear in the number of servers: each server's files are built
once from dictionaries keyed by role and by server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from tripleo_flow import exceptions
from tripleo_flow.core.deploy import inventory, network_config
from tripleo_flow.core.deploy.deployments import (
    Deployment,
    deployment_file,
    deployments_tasks,
    host_lists,
)

INVENTORY = "tripleo-ansible-inventory.yaml"
GLOBAL_VARS = "global_vars.yaml"
ANSIBLE_CFG = "ansible.cfg"
DEPLOYMENTS_TASKS = "deployments.yaml"
HEAT_CONFIG_TEMPLATE = "templates/heat-config.j2"
#: Steps of deploy_steps_tasks (TripleO's deploy_steps_max is 6: steps 0..5).
DEPLOY_STEPS_MAX = 6
#: RoleData task lists written per step too, with their number of steps (tripleo-common's
#: PER_STEP_TASKS); a task without a step condition goes to every step.
PER_STEP_TASKS = {"deploy_steps_tasks": 6, "update_tasks": 6, "upgrade_tasks": 6,
                  "post_update_tasks": 4}
#: External tasks: RoleConfig keys written as top-level ``<key>_step0..5.yaml``;
#: their RoleData copies (per role) are not written.
EXTERNAL_TASKS = ("external_deploy_tasks", "external_deploy_steps_tasks")
#: The network whose addresses Ansible connects to, and the default SSH user.
HOST_NETWORK = "ctlplane"
SSH_USER = "tripleo-admin"
#: What the inventory reads of the stack's environment (``parameter_defaults``).
ENVIRONMENT_KEYS = ("AdminPassword", "ContainerCli")

_STEP = re.compile(r"\(?step(?:\|int)?\)?==(\d+)")

_USSURI_STEP = re.compile(r"\(?step(\|int)?\)? == ([0-9]+)$")


@dataclass(frozen=True)
class Series:
    """What the project's layout takes from the tripleo-common release of a THT series.

    :param name: the tripleo-common release whose rules these are.
    :param per_step: RoleData task lists also written per step, with their step count.
    :param external: RoleData keys not written per role (RoleConfig holds them).
    :param split_external: RoleConfig's external tasks also written per step.
    :param group_vars_key: a RoleData key merged into the role's group_vars.
    :param pre_network: host_vars list ``pre_network_<Role>`` (else those deployments are
        ``pre_deployments``).
    :param ussuri: Ussuri's step matching, inventory and ``deployments.yaml``.
    """

    name: str
    per_step: Mapping[str, int]
    external: tuple[str, ...]
    split_external: bool
    group_vars_key: str | None
    pre_network: bool
    ussuri: bool = False


#: tripleo-common 18.0.0 (THT 17 and 18; its rules hold since Wallaby).
CURRENT = Series("18.0.0", PER_STEP_TASKS, EXTERNAL_TASKS, True, None, True)
#: tripleo-common 12.1.0 (THT 12.x, Ussuri).
USSURI = Series("12.1.0", {"upgrade_tasks": DEPLOY_STEPS_MAX,
                           "deploy_steps_tasks": DEPLOY_STEPS_MAX},
                ("external_deploy_tasks",), False, "ansible_group_vars", False, ussuri=True)


def series_of(outputs: Mapping[str, Any]) -> Series:
    """The series of a stack's outputs: Ussuri's THT alone has the
    ``HostnameNetworkConfigMap`` output (see :mod:`network_config`)."""
    return USSURI if network_config.HOSTNAME_MAP in outputs else CURRENT


try:  # the C dumper is ~10x faster; fall back to the pure one
    _Dumper: type[yaml.SafeDumper] = yaml.CSafeDumper  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - libyaml missing
    _Dumper = yaml.SafeDumper


@dataclass(frozen=True)
class Server:
    """One server of the stack: its host name, Heat id, role and ctlplane address, and
    its addresses on the other (isolated) networks, ``(network, address)``."""

    name: str
    server_id: str
    role: str
    address: str = ""
    networks: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Connection:
    """How Ansible reaches the hosts: SSH user and private key file (None: Ansible's own)."""

    ssh_user: str = SSH_USER
    private_key: str | None = None


def dump(obj: Any) -> bytes:
    """YAML in block style, keys in order given (deterministic for git diffs)."""
    return yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=True,
                     allow_unicode=True).encode("utf-8")


def _host_names(outputs: Mapping[str, Any], role: str) -> list[str]:
    """A role's short host names: RoleNetHostnameMap's ctlplane FQDNs cut at
    ``.ctlplane.`` and lower-cased (as tripleo-common), else HostnameData's."""
    by_net = (outputs.get("RoleNetHostnameMap") or {}).get(role)
    if by_net:
        return [inventory.short_name(str(n)) for n in by_net.get(HOST_NETWORK) or []]
    return [str(n) for n in (outputs.get("HostnameData") or {}).get(role) or []]


def servers_from_outputs(outputs: Mapping[str, Any]) -> list[Server]:
    """The servers of each role: names from RoleNetHostnameMap (or HostnameData), ids
    from ServerIdData and addresses from RoleNetIpMap's ctlplane list (same order)."""
    ids = (outputs.get("ServerIdData") or {}).get("server_ids") or {}
    ip_map = outputs.get("RoleNetIpMap") or {}
    servers: list[Server] = []
    for role in role_names(outputs):
        names = _host_names(outputs, role)
        role_ids = list(ids.get(role) or [])
        if len(names) != len(role_ids):
            raise exceptions.InvalidInput(
                f"Stack outputs disagree on role {role!r}: {len(names)} host names in "
                f"RoleNetHostnameMap/HostnameData, {len(role_ids)} ids in ServerIdData. "
                "Check the role template.")
        role_ips = ip_map.get(role) or {}
        ips = list(role_ips.get(HOST_NETWORK) or [])
        ips += [""] * (len(names) - len(ips))
        others = sorted((str(net), list(addresses)) for net, addresses in role_ips.items()
                        if net != HOST_NETWORK and isinstance(addresses, list))
        for index, (n, i, a) in enumerate(zip(names, role_ids, ips[:len(names)],
                                              strict=True)):
            nets = tuple((net, str(addresses[index])) for net, addresses in others
                         if index < len(addresses) and addresses[index])
            servers.append(Server(n, str(i), role, str(a), nets))
    return servers


def role_names(outputs: Mapping[str, Any]) -> list[str]:
    """Roles in RoleNames order (or RoleData's when RoleNames is absent)."""
    names = outputs.get("RoleNames")
    if names is None:
        names = list((outputs.get("RoleData") or {}).keys())
    return [str(n) for n in names]


def steps_of(task: Mapping[str, Any], ussuri: bool = False) -> set[int] | None:
    """The steps a task is limited to by ``when: step|int == N`` conditions (None: every
    step); spaces and ``|int`` are optional, as tripleo-common reads them.  Ussuri's
    reads each condition alone, which must end with ``step|int == N`` (spaced so), and
    the first that does decides."""
    when = task.get("when")
    conditions = when if isinstance(when, list) else [when]
    if ussuri:
        if when is None:
            return None
        for condition in conditions:
            match = _USSURI_STEP.search(str(condition))
            if match:
                return {int(match.group(2))}
        return None
    flat = "".join(re.sub(r"\s+", "", c) for c in conditions if isinstance(c, str))
    found = {int(n) for n in _STEP.findall(flat)}
    return found or None


def split_steps(tasks: Iterable[Mapping[str, Any]], count: int = DEPLOY_STEPS_MAX,
                ussuri: bool = False) -> list[list[Mapping[str, Any]]]:
    """Tasks per step 0..count-1: a task with step conditions goes to each of its
    steps, others to all."""
    per_step: list[list[Mapping[str, Any]]] = [[] for _ in range(count)]
    for task in tasks:
        steps = steps_of(task, ussuri)
        for step, bucket in enumerate(per_step):
            if steps is None or step in steps:
                bucket.append(task)
    return per_step


def config_file_name(key: str) -> str:
    """A RoleConfig key's file: ``.yaml`` is added only to names without an extension."""
    return key if "." in key else f"{key}.yaml"


def _text(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return value.encode() if isinstance(value, str) else dump(value)


def _role_files(role: str, data: Mapping[str, Any], series: Series) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for key, value in data.items():
        if key in series.external or key == series.group_vars_key:
            continue
        if key == "step_config":
            files[f"{role}/step_config.pp"] = _text(value or "")
            continue
        if key == "param_config":
            files[f"{role}/param_config.json"] = yaml.safe_dump(
                value, default_flow_style=True, width=1 << 30).encode()
            continue
        files[f"{role}/{key}.yaml"] = dump(value)
        if key in series.per_step:
            split = split_steps(list(value or []), series.per_step[key], series.ussuri)
            for step, step_tasks in enumerate(split):
                files[f"{role}/{key}_step{step}.yaml"] = dump(step_tasks)
    return files


def _role_config_files(role_config: Mapping[str, Any], series: Series) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for key, value in role_config.items():
        if key in EXTERNAL_TASKS and series.split_external:
            for step, step_tasks in enumerate(split_steps(list(value or []))):
                files[f"{key}_step{step}.yaml"] = dump(step_tasks)
        files[config_file_name(key)] = _text(value)
    return files


def _inventory(plan: str, outputs: Mapping[str, Any], environment: Mapping[str, Any],
               connection: Connection, python: str, series: Series) -> dict[str, Any]:
    """TripleO's inventory (:mod:`~tripleo_flow.core.deploy.inventory`); with an SSH key, each
    group that names the SSH user also names the key (tripleo-common leaves the key to
    ``ansible.cfg``, which a run outside the project's directory does not read)."""
    try:
        make = inventory.render_ussuri if series.ussuri else inventory.render
        rendered = make(plan, outputs, environment, connection.ssh_user, python)
    except inventory.InventoryError as exc:
        raise exceptions.InvalidInput(str(exc)) from exc
    if connection.private_key:
        for group in rendered.values():
            group_vars = group.get("vars")
            if group_vars and "ansible_ssh_user" in group_vars:
                group_vars["ansible_ssh_private_key_file"] = connection.private_key
    return rendered


def ansible_cfg(connection: Connection) -> bytes:
    """The project's ``ansible.cfg``: its inventory, the SSH user and key."""
    lines = ["[defaults]", f"inventory = {INVENTORY}", f"remote_user = {connection.ssh_user}",
             "retry_files_enabled = False", "host_key_checking = False"]
    if connection.private_key:
        lines.append(f"private_key_file = {connection.private_key}")
    lines += ["", "[ssh_connection]", "pipelining = True", ""]
    return "\n".join(lines).encode()


def render(plan: str, outputs: Mapping[str, Any],
           deployments: Mapping[str, Iterable[Deployment]] | None = None,
           connection: Connection | None = None,
           network_configs: Mapping[str, Any] | None = None,
           environment: Mapping[str, Any] | None = None,
           python: str = "python3") -> dict[str, bytes]:
    """The Ansible project of a stack, ``{relative path: bytes}``.

    :param plan: the plan (stack) name; it names an inventory group.
    :param outputs: stack outputs, ``output_key -> value`` (RoleData, RoleConfig,
        RoleGroupVars, AnsibleHostVarsMap, RoleNetHostnameMap or HostnameData,
        RoleNetIpMap, ServerIdData; RoleNames is optional).
    :param deployments: each server's software deployments, by server name.
    :param connection: the SSH user and key the inventory names.
    :param network_configs: the ``config`` of each software config id that
        :func:`network_config.config_ids` names (the servers' os-net-config).
    :param environment: the stack's environment, :data:`ENVIRONMENT_KEYS` of its
        ``parameter_defaults`` (the inventory's admin password and container CLI).
    :param python: the undercloud's Python, for the inventory.
    :raises InvalidInput: when outputs disagree (a role without ids, a
        deployment for an unknown server).
    """
    deployments = deployments or {}
    connection = connection or Connection()
    series = series_of(outputs)
    roles = role_names(outputs)
    role_data: Mapping[str, Any] = outputs.get("RoleData") or {}
    group_vars: Mapping[str, Any] = outputs.get("RoleGroupVars") or {}
    host_vars_map: Mapping[str, Any] = outputs.get("AnsibleHostVarsMap") or {}
    servers = servers_from_outputs(outputs)
    by_role: dict[str, list[Server]] = {}
    for server in servers:
        by_role.setdefault(server.role, []).append(server)
    unknown = sorted(set(deployments) - {s.name for s in servers})
    if unknown:
        raise exceptions.InvalidInput(
            f"Deployments name servers the stack does not have: {', '.join(unknown)}.")
    files: dict[str, bytes] = {
        GLOBAL_VARS: dump({"deploy_steps_max": DEPLOY_STEPS_MAX, "plan": plan}),
        ANSIBLE_CFG: ansible_cfg(connection),
        DEPLOYMENTS_TASKS: dump(deployments_tasks(series.ussuri)),
        HEAT_CONFIG_TEMPLATE: b"[{{ deployment }}]\n",
    }
    files.update(_role_config_files(outputs.get("RoleConfig") or {}, series))
    for role in roles:
        data = role_data.get(role) or {}
        files.update(_role_files(role, data, series))
        members = by_role.get(role, [])
        if members:  # as tripleo-common: RoleGroupVars of the roles that have servers
            role_vars = dict(group_vars.get(role) or {})
            if series.group_vars_key:  # Ussuri: the role's own Ansible variables too
                role_vars.update(data.get(series.group_vars_key) or {})
            files[f"group_vars/{role}"] = dump(role_vars)
        role_hosts = host_vars_map.get(role) or {}
        for server in members:
            server_deployments = list(deployments.get(server.name) or [])
            own: dict[str, Any] = host_lists(role, server_deployments, series.pre_network)
            own.update(role_hosts.get(server.name) or {})
            files[f"host_vars/{server.name}"] = dump(own)
            for dep in server_deployments:
                files[f"{role}/{server.name}/{dep.name}"] = deployment_file(
                    dep, server.server_id)
    files.update(network_config.files(outputs, network_configs or {},
                                      [(s.name, s.role) for s in servers]))
    files[INVENTORY] = dump(_inventory(plan, outputs, environment or {}, connection, python,
                                       series))
    return files
