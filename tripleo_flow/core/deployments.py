"""Software deployments in config-download: how they are found and how they are run.

THT maps every ``OS::Heat::SoftwareDeployment`` / ``StructuredDeployment`` to
``config-download-software.yaml`` / ``config-download-structured.yaml``: the real
deployment targets a fake server, and an ``OS::Heat::Value`` named
``TripleODeployment`` beside it records ``{name, server, config, input_values,
deployment}``.  Deployments are therefore found by that resource name in the
nested stacks (as tripleo-common's ``Config.get_deployment_data`` does), never by
server id.

Each deployment becomes ``<Role>/<server>/<name>``: a YAML map ``{name: config}``
that ``deployments.yaml`` (a task file included by ``deploy_steps_playbook``)
templates on the host (Jinja delimiters ``"$$`` and ``$$"``, so Heat templates stay
valid YAML) and hands to the heat-config hook ``55-heat-config``.  The host's
``host_vars`` list the names under ``pre_network_<Role>``, ``pre_deployments_<Role>``
and ``post_deployments_<Role>``, which the playbook loops over.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The name of the Value resource the config-download stubs create.
RESOURCE_NAME = "TripleODeployment"
#: How deep tripleo-common looks for it in the nested stacks.
NESTED_DEPTH = 7
#: host_vars lists, by the deployment's place in the playbook.
KINDS = ("pre_network", "pre_deployments", "post_deployments")
_POST_MARKERS = ("ExtraConfigPost", "PostConfig")
_PRE_NETWORK_MARKERS = ("PreNetworkConfig",)
#: Where the heat-config hook reads and records deployments on a host.
_HEAT_CONFIG = "/var/lib/heat-config"
_STAGED = _HEAT_CONFIG + "/tripleo-config-download"
_DEPLOYED = _HEAT_CONFIG + "/deployed"
_HOOK = "/usr/libexec/os-refresh-config/configure.d/55-heat-config"


@dataclass(frozen=True)
class Deployment:
    """One software deployment of a server.

    :param name: the deployment's name (its file name under ``<Role>/<server>/``).
    :param config: the software config (a script string, or a map for ``hiera``).
    :param group: the heat-config hook (``script``, ``hiera``, ``ansible``...).
    :param inputs: input values by name.
    :param id: a stable id (names the files on the host); the name when empty.
    :param kind: one of :data:`KINDS`.
    """

    name: str
    config: Any
    group: str = "script"
    inputs: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""
    kind: str = "pre_deployments"
    options: Mapping[str, Any] = field(default_factory=dict)
    outputs: list[Any] = field(default_factory=list)


def kind_of(*names: str) -> str:
    """The host_vars list of a deployment whose resource or stack names are ``names``."""
    joined = " ".join(n for n in names if n)
    if any(marker in joined for marker in _POST_MARKERS):
        return "post_deployments"
    if any(marker in joined for marker in _PRE_NETWORK_MARKERS):
        return "pre_network"
    return "pre_deployments"


@dataclass(frozen=True)
class Found:
    """A ``TripleODeployment`` resource, resolved to its server's name."""

    server: str
    name: str
    config_id: str
    deployment_id: str
    inputs: Mapping[str, Any]
    kind: str


def found_in(resources: Iterable[Mapping[str, Any]],
             server_names: Mapping[str, str]) -> list[Found]:
    """The deployments recorded by ``TripleODeployment`` resources (Heat's resource
    list with details), oldest first; those of servers not in ``server_names``
    (``server id -> name``: blacklisted servers) and those Heat never created (no
    physical id: not triggered by this action) are left out."""
    chosen = [r for r in resources if r.get("resource_name") == RESOURCE_NAME]
    chosen.sort(key=lambda r: str(r.get("creation_time") or ""))
    found: list[Found] = []
    for resource in chosen:
        value = (resource.get("attributes") or {}).get("value") or {}
        deployment = str(value.get("deployment") or "").rsplit("/", 1)[-1]
        server = server_names.get(str(value.get("server") or ""))
        if not deployment or deployment == "TripleOSoftwareDeployment" or server is None:
            continue
        name = str(value.get("name") or resource.get("parent_resource") or deployment)
        found.append(Found(
            server=server, name=name, config_id=str(value.get("config") or ""),
            deployment_id=deployment, inputs=dict(value.get("input_values") or {}),
            kind=kind_of(str(resource.get("physical_resource_id") or ""),
                         str(resource.get("stack_name") or ""),
                         str(resource.get("parent_resource") or ""))))
    return found


def deployment_file(dep: Deployment, server_id: str) -> dict[str, Any]:
    """The content of ``<Role>/<server>/<name>``: ``{name: what the hook reads}``;
    the ``deploy_server_id`` input is the real server's id (the stub's is fake)."""
    inputs = [{"name": k, "value": v} for k, v in sorted(dep.inputs.items())
              if k != "deploy_server_id"]
    inputs.append({"name": "deploy_server_id", "value": server_id})
    return {dep.name: {"id": dep.id or dep.name, "name": dep.name, "deployment_name": dep.name,
                       "group": dep.group, "config": dep.config, "inputs": inputs,
                       "options": dict(dep.options), "outputs": list(dep.outputs)}}


def host_lists(role: str, deployments: Iterable[Deployment]) -> dict[str, list[str]]:
    """The ``pre_network_<Role>``, ``pre_deployments_<Role>`` and
    ``post_deployments_<Role>`` host variables (names in order, no repeats)."""
    lists: dict[str, list[str]] = {f"{kind}_{role}": [] for kind in KINDS}
    for dep in deployments:
        names = lists[f"{dep.kind if dep.kind in KINDS else 'pre_deployments'}_{role}"]
        if dep.name not in names:
            names.append(dep.name)
    return lists


def _file_expr() -> str:
    return "tripleo_role_name ~ '/' ~ ansible_facts['hostname'] | lower ~ '/' ~ item"


def deployments_tasks() -> list[dict[str, Any]]:
    """The tasks of ``deployments.yaml``: run the deployment named ``item`` on the host
    with the heat-config hook, once (a deployment already recorded as succeeded is
    skipped unless ``force``), failing when the hook reports a non-zero status."""
    source = _file_expr()
    staged = f"{_STAGED}/{{{{ item ~ '-' ~ deployment_uuid }}}}"
    marker = f"{_DEPLOYED}/{{{{ deployment_uuid }}}}"
    status = f"exit $(jq .deploy_status_code {marker}.notify.json)"
    not_check = "not ansible_check_mode | bool"
    read = f"{{{{ (lookup('file', {source}) | from_yaml)[item] }}}}"
    return [
        {"name": "Read deployment {{ item }}", "set_fact": {"deployment_data": read}},
        {"name": "Deployment id and group of {{ item }}",
         "set_fact": {"deployment_uuid": "{{ deployment_data.id }}",
                      "deployment_group": "{{ deployment_data.group }}"}},
        {"name": "Template deployment file for {{ item }}", "become": True,
         "template": {"src": f"{{{{ {source} }}}}", "dest": f"{staged}.rendered",
                      "variable_start_string": '"$$', "variable_end_string": '$$"'}},
        {"name": "Read the rendered deployment {{ item }}", "become": True,
         "slurp": {"src": f"{staged}.rendered"}, "register": "deployment_content",
         "when": [not_check]},
        {"name": "Write the hook's input for {{ item }}", "become": True,
         "copy": {"content": "{{ [(deployment_content.content | b64decode | from_yaml)[item]]"
                             " | to_json }}",
                  "dest": staged},
         "when": [not_check]},
        {"name": "Check if {{ item }} was deployed", "become": True,
         "stat": {"path": f"{marker}.json"}, "register": "deployed_file_stat"},
        {"name": "Previous status of {{ item }}", "become": True,
         "shell": status, "register": "previous_deployment_result", "failed_when": False,
         "when": ["deployed_file_stat.stat.exists"]},
        {"name": "Forget {{ item }} when it failed before or when forced", "become": True,
         "file": {"path": f"{marker}.json", "state": "absent"},
         "when": [not_check, "deployed_file_stat.stat.exists",
                  "(force | default(false) | bool) or previous_deployment_result.rc != 0"]},
        {"name": "Run deployment {{ item }}", "become": True,
         "shell": f"{_HOOK}\n{status}\n",
         "environment": {"HEAT_SHELL_CONFIG": staged},
         "register": "deployment_async_result", "ignore_errors": True,
         "async": "{{ async_timeout | default(1800) }}",
         "poll": "{{ async_poll | default(3) }}", "when": [not_check]},
        {"name": "Output of deployment {{ item }}",
         "debug": {"msg": [
             {"stderr": "{{ deployment_async_result.stderr_lines | default(['Timed out']) }}"},
             {"status_code": "{{ deployment_async_result.rc | default(-1) }}"}]},
         "tags": ["output"], "when": [not_check],
         "failed_when": "deployment_async_result.rc | default(-1) != 0"},
        {"name": "Check mode: would {{ item }} run (changed means yes)", "become": True,
         "stat": {"path": f"{marker}.json"}, "register": "deploy_exists",
         "changed_when": "not deploy_exists.stat.exists",
         "when": ["ansible_check_mode | bool"]},
    ]


__all__ = ["KINDS", "NESTED_DEPTH", "RESOURCE_NAME", "Deployment", "Found", "deployment_file",
           "deployments_tasks", "found_in", "host_lists", "kind_of"]
