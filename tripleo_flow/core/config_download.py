"""config-download: the Ansible project of a deployed stack, in TripleO's layout.

Pure: takes the stack outputs and the servers' software deployments, returns
``{relative path: bytes}``.  Nothing here reads or writes files.  Layout::

    tripleo-ansible-inventory.yaml   a group per role, allovercloud, overcloud,
                                     the plan's group and a group per service
    global_vars.yaml                 deploy_steps_max and the plan's name
    <playbook>.yaml                  one per RoleConfig key (deploy_steps_playbook ...)
    group_vars/<Role>                RoleGroupVars + the role's name and services
    host_vars/<server>               AnsibleHostVarsMap + the server's id and deployments
    <Role>/<key>.yaml                every ``*_tasks`` list of RoleData; deploy_steps_tasks
                                     is split into deploy_steps_tasks_step0..5.yaml
    <Role>/<server>/<deployment>     each software deployment of the server (config + inputs)

The cost is linear in the number of servers: each server's files are built
once from dictionaries keyed by role and by server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from tripleo_flow import exceptions

INVENTORY = "tripleo-ansible-inventory.yaml"
GLOBAL_VARS = "global_vars.yaml"
#: Steps of deploy_steps_tasks (TripleO's deploy_steps_max is 6: steps 0..5).
DEPLOY_STEPS_MAX = 6
STEP_TASKS = ("deploy_steps_tasks", "external_deploy_tasks")
SERVICE_PREFIX = "OS::TripleO::Services::"

_STEP = re.compile(r"step\s*\|\s*int\s*==\s*(\d+)")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])")

try:  # the C dumper is ~10x faster; fall back to the pure one
    _Dumper: type[yaml.SafeDumper] = yaml.CSafeDumper  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - libyaml missing
    _Dumper = yaml.SafeDumper


@dataclass(frozen=True)
class Server:
    """One server of the stack: its host name, Heat id and role."""

    name: str
    server_id: str
    role: str


@dataclass(frozen=True)
class Deployment:
    """One software deployment of a server: its name, config, group and inputs."""

    name: str
    config: Any
    group: str = "script"
    inputs: Mapping[str, Any] = field(default_factory=dict)


def dump(obj: Any) -> bytes:
    """YAML in block style, keys in order given (deterministic for git diffs)."""
    return yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=True,
                     allow_unicode=True).encode("utf-8")


def service_group(service: str) -> str:
    """The inventory group of a service: ``OS::TripleO::Services::NovaApi`` -> ``nova_api``."""
    name = service[len(SERVICE_PREFIX):] if service.startswith(SERVICE_PREFIX) else service
    return _CAMEL.sub("_", name.replace("::", "_")).lower()


def servers_from_outputs(outputs: Mapping[str, Any]) -> list[Server]:
    """The servers of each role, from HostnameData and ServerIdData (same order)."""
    hostnames = outputs.get("HostnameData") or {}
    ids = (outputs.get("ServerIdData") or {}).get("server_ids") or {}
    servers: list[Server] = []
    for role in role_names(outputs):
        names = list(hostnames.get(role) or [])
        role_ids = list(ids.get(role) or [])
        if len(names) != len(role_ids):
            raise exceptions.InvalidInput(
                f"Stack outputs disagree on role {role!r}: {len(names)} host names in "
                f"HostnameData, {len(role_ids)} ids in ServerIdData. Check the role template.")
        servers.extend(Server(n, i, role) for n, i in zip(names, role_ids, strict=True))
    return servers


def role_names(outputs: Mapping[str, Any]) -> list[str]:
    """Roles in RoleNames order (or RoleData's when RoleNames is absent)."""
    names = outputs.get("RoleNames")
    if names is None:
        names = list((outputs.get("RoleData") or {}).keys())
    return [str(n) for n in names]


def step_of(task: Mapping[str, Any]) -> int | None:
    """The step a task is limited to by ``when: step|int == N`` (None: every step)."""
    when = task.get("when")
    conditions = when if isinstance(when, list) else [when]
    for condition in conditions:
        if isinstance(condition, str):
            match = _STEP.search(condition)
            if match:
                return int(match.group(1))
    return None


def split_steps(tasks: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Tasks per step 0..5: a task with a step condition goes to its step, others to all."""
    per_step: list[list[Mapping[str, Any]]] = [[] for _ in range(DEPLOY_STEPS_MAX)]
    for task in tasks:
        step = step_of(task)
        if step is None:
            for bucket in per_step:
                bucket.append(task)
        elif 0 <= step < DEPLOY_STEPS_MAX:
            per_step[step].append(task)
    return per_step


def _role_files(role: str, data: Mapping[str, Any]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for key, value in data.items():
        if not key.endswith("_tasks"):
            continue
        tasks = list(value or [])
        files[f"{role}/{key}.yaml"] = dump(tasks)
        if key in STEP_TASKS:
            for step, step_tasks in enumerate(split_steps(tasks)):
                files[f"{role}/{key}_step{step}.yaml"] = dump(step_tasks)
    return files


def _inventory(plan: str, roles: list[str], role_data: Mapping[str, Any],
               by_role: Mapping[str, list[Server]],
               host_vars: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    inventory: dict[str, Any] = {}
    services: dict[str, list[str]] = {}
    for role in roles:
        hosts = {}
        for server in by_role.get(role, []):
            vars_ = host_vars.get(server.name, {})
            hosts[server.name] = {"ansible_host": vars_.get("ansible_host", server.name)}
        inventory[role] = {"hosts": hosts, "vars": {"tripleo_role_name": role}}
        for service in (role_data.get(role) or {}).get("service_names") or []:
            services.setdefault(service_group(str(service)), []).append(role)
    inventory["allovercloud"] = {"children": {role: {} for role in roles}}
    inventory["overcloud"] = {"children": {"allovercloud": {}}}
    if plan not in inventory:
        inventory[plan] = {"children": {"allovercloud": {}}}
    for group, members in sorted(services.items()):
        if group in inventory:
            group = f"{group}_service"
        inventory[group] = {"children": {role: {} for role in members}}
    return inventory


def render(plan: str, outputs: Mapping[str, Any],
           deployments: Mapping[str, Iterable[Deployment]] | None = None) -> dict[str, bytes]:
    """The Ansible project of a stack, ``{relative path: bytes}``.

    :param plan: the plan (stack) name; it names an inventory group.
    :param outputs: stack outputs, ``output_key -> value`` (RoleNames, RoleData,
        RoleConfig, RoleGroupVars, AnsibleHostVarsMap, HostnameData, ServerIdData).
    :param deployments: each server's software deployments, by server name.
    :raises InvalidInput: when outputs disagree (a role without ids, a
        deployment for an unknown server).
    """
    deployments = deployments or {}
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
    }
    for name, playbook in (outputs.get("RoleConfig") or {}).items():
        files[f"{name}.yaml"] = playbook if isinstance(playbook, bytes) else (
            playbook.encode() if isinstance(playbook, str) else dump(playbook))

    host_vars: dict[str, dict[str, Any]] = {}
    for role in roles:
        data = role_data.get(role) or {}
        files.update(_role_files(role, data))
        role_vars = dict(group_vars.get(role) or {})
        role_vars.setdefault("tripleo_role_name", role)
        role_vars.setdefault("service_names", list(data.get("service_names") or []))
        files[f"group_vars/{role}"] = dump(role_vars)
        role_hosts = host_vars_map.get(role) or {}
        members = by_role.get(role, [])
        for index, server in enumerate(members):
            own = dict(role_hosts.get(server.name) or {})
            own.setdefault("deploy_server_id", server.server_id)
            own["bootstrap_server_id"] = members[0].server_id
            own["deploy_index"] = index
            server_deployments = list(deployments.get(server.name) or [])
            own["deployments"] = [d.name for d in server_deployments]
            host_vars[server.name] = own
            files[f"host_vars/{server.name}"] = dump(own)
            for dep in server_deployments:
                files[f"{role}/{server.name}/{dep.name}"] = dump({
                    "name": dep.name, "group": dep.group, "config": dep.config,
                    "inputs": dict(dep.inputs)})
    files[INVENTORY] = dump(_inventory(plan, roles, role_data, by_role, host_vars))
    return files
