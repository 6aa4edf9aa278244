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

import json
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
    """One software deployment of a server, as its file on the host describes it.

    :param name: the deployment's name (its file name under ``<Role>/<server>/``).
    :param config: the software config (a script string, or a map for ``hiera``).
    :param group: the heat-config hook (``script``, ``hiera``, ``ansible``...).
    :param inputs: the inputs of the config Heat derived for the deployment, each a
        map with ``name``, ``description``, ``type`` and ``value`` (Heat's ``deploy_*``
        inputs included); a plain ``name -> value`` map is taken too.
    :param id: the derived config's id (it changes whenever the config or an input
        does, so a changed deployment runs again on the host); the name when empty.
    :param kind: one of :data:`KINDS`.
    :param config_name: the derived config's name.
    :param creation_time: the derived config's creation time, as Heat wrote it.
    """

    name: str
    config: Any
    group: str = "script"
    inputs: Any = field(default_factory=list)
    id: str = ""
    kind: str = "pre_deployments"
    options: Any = field(default_factory=dict)
    outputs: list[Any] = field(default_factory=list)
    config_name: str = ""
    creation_time: str = ""

    def input_list(self) -> list[Mapping[str, Any]]:
        """The inputs as a list of maps (a ``name -> value`` map converted)."""
        if isinstance(self.inputs, Mapping):
            return [{"name": k, "value": v} for k, v in self.inputs.items()]
        return [dict(i) for i in self.inputs or []]


def kind_of(physical_resource_id: str) -> str:
    """The host_vars list of a deployment, from its ``TripleODeployment`` resource's
    physical id (THT's post-deploy hooks are named ``...ExtraConfigPost...`` and
    ``...PostConfig...``, the pre-network ones ``...PreNetworkConfig...``)."""
    if any(marker in physical_resource_id for marker in _POST_MARKERS):
        return "post_deployments"
    if any(marker in physical_resource_id for marker in _PRE_NETWORK_MARKERS):
        return "pre_network"
    return "pre_deployments"


@dataclass(frozen=True)
class Found:
    """A ``TripleODeployment`` resource, resolved to its server's name.

    ``deployment`` is what the resource recorded: the software deployment's id, or
    ``<stack path>/<stack id>`` of a nested stack whose ``TripleOSoftwareDeployment``
    resource is the deployment (:func:`nested_stack_id`).
    """

    server: str
    server_id: str
    name: str
    deployment: str
    kind: str


def nested_stack_id(deployment: str) -> str | None:
    """The nested stack's id when a recorded deployment names a stack, else None."""
    return deployment.rsplit("/", 1)[-1] if "/" in deployment else None


def found_in(resources: Iterable[Mapping[str, Any]],
             server_names: Mapping[str, str]) -> list[Found]:
    """The deployments recorded by ``TripleODeployment`` resources (Heat's resource
    list with details), oldest first; those of servers not in ``server_names``
    (``server id -> name``: blacklisted servers) and those Heat never created (the
    recorded deployment is the resource's name: not triggered by this action) are
    left out."""
    chosen = [r for r in resources if r.get("resource_name") == RESOURCE_NAME]
    chosen.sort(key=lambda r: str(r.get("creation_time") or ""))
    found: list[Found] = []
    for resource in chosen:
        value = (resource.get("attributes") or {}).get("value") or {}
        deployment = str(value.get("deployment") or "")
        server_id = str(value.get("server") or "")
        server = server_names.get(server_id)
        if not deployment or deployment == "TripleOSoftwareDeployment" or server is None:
            continue
        name = str(value.get("name") or resource.get("parent_resource") or deployment)
        found.append(Found(server=server, server_id=server_id, name=name,
                           deployment=deployment,
                           kind=kind_of(str(resource.get("physical_resource_id") or ""))))
    return found


def _indent(text: str, width: int) -> str:
    """``text``'s lines indented by ``width`` spaces, empty ones left empty except the
    first (the way the reference's template indents a block)."""
    pad = " " * width
    lines = (text + "\n").splitlines()
    return pad + "\n".join([lines[0], *(pad + line if line else line for line in lines[1:])])


def _config_text(config: Any) -> str:
    """The config as the file shows it: a string that is JSON of something else than a
    string, or a structure, pretty-printed as JSON; other strings as they are."""
    try:
        data = json.loads(config)
    except (TypeError, ValueError):
        data = config
    return data if isinstance(data, str) else json.dumps(data, indent=2)


def deployment_file(dep: Deployment, server_id: str) -> bytes:
    """The text of ``<Role>/<server>/<name>``: a YAML map ``{name: what the hook
    reads}`` written as tripleo-common writes it (the config as a block, each input's
    value as a string block, the options as Python shows a dict), so that it loads to
    the same data; the ``deploy_server_id`` input is the real server's id (the stub's
    is a fake server's)."""
    hiera = dep.group == "hiera"
    lines = [f"{dep.name}:", "  config:" if hiera else "  config: |",
             _indent(_config_text(dep.config), 4),
             f'  creation_time: "{dep.creation_time}"', f"  deployment_name: {dep.name}",
             f"  group: {dep.group}", f"  id: {dep.id or dep.name}", "  inputs:"]
    for item in dep.input_list():
        value = server_id if item.get("name") == "deploy_server_id" else item.get("value")
        lines += [f"    - name: {item.get('name')}",
                  f"      description: {item.get('description')}",
                  f"      type: {item.get('type')}", "      value: |-",
                  _indent(value if isinstance(value, str) else str(value), 8)]
    lines += [f"  name: {dep.config_name or dep.name}", f"  options: {dep.options}",
              "  outputs:"]
    for output in dep.outputs or []:
        lines += [f"    - name: {output.get('name')}",
                  f"      description: {output.get('description')}",
                  f"      type: {output.get('type')}"]
    return ("\n".join(lines) + "\n").encode("utf-8")


def host_lists(role: str, deployments: Iterable[Deployment],
               pre_network: bool = True) -> dict[str, list[str]]:
    """The ``pre_network_<Role>``, ``pre_deployments_<Role>`` and
    ``post_deployments_<Role>`` host variables (names in order, no repeats); without
    ``pre_network`` (Ussuri's), its deployments are ``pre_deployments``."""
    kinds = KINDS if pre_network else KINDS[1:]
    lists: dict[str, list[str]] = {f"{kind}_{role}": [] for kind in kinds}
    for dep in deployments:
        names = lists[f"{dep.kind if dep.kind in kinds else 'pre_deployments'}_{role}"]
        if dep.name not in names:
            names.append(dep.name)
    return lists


_SOURCE = "tripleo_role_name ~ '/' ~ ansible_facts['hostname'] | lower ~ '/' ~ item"
#: Ussuri's tasks read the host name from the injected fact variable.
_USSURI_SOURCE = "tripleo_role_name ~ '/' ~ ansible_hostname | lower ~ '/' ~ item"
_ITEM_FILE = "{{ item ~ '-' ~ deployment_uuid }}"
_CHECK_MODE = "ansible_check_mode|bool"
_NOT_CHECK_MODE = "not ansible_check_mode|bool"


def _become(task: dict[str, Any], become: bool) -> dict[str, Any]:
    return {**task, "become": True} if become else task


def _lookup(source: str, query: str) -> str:
    return f"{{{{ lookup('file', {source}) | from_yaml | json_query({query}) }}}}"


def _template(source: str, dest_dir: str, become: bool) -> dict[str, Any]:
    """Template the deployment file on the host (``"$$ ... $$"`` are its Jinja
    delimiters: Heat templates stay valid YAML)."""
    return _become({"name": "Template deployment file for {{ item }}",
                    "template": {"src": f"{{{{ {source} }}}}",
                                 "dest": f"{dest_dir}/{_ITEM_FILE}.rendered",
                                 "variable_start_string": '"$$',
                                 "variable_end_string": '$$"'}}, become)


def _slurp(dest_dir: str) -> dict[str, Any]:
    return {"name": "Slurp remote deployment file for {{ item }}",
            "slurp": {"src": f"{dest_dir}/{_ITEM_FILE}.rendered"},
            "register": "deployment_content"}


def _copy(dest_dir: str, become: bool) -> dict[str, Any]:
    return _become({"name": "Remote copy deployment file for {{ item }}",
                    "copy": {"content": "[ {{ deployment_content.content | b64decode | "
                                        "from_yaml | json_query(item_only) }} ]",
                             "dest": f"{dest_dir}/{_ITEM_FILE}"}}, become)


def _check_mode_block(source: str, ussuri: bool) -> dict[str, Any]:
    """Check mode of a ``hiera`` deployment: run it against check-mode copies of the
    hieradata and the deployed records, and show the hieradata it would change."""
    check = f"{_HEAT_CONFIG}/check-mode"
    hieradata = "/etc/puppet/check-mode/hieradata"
    found = "hieradata_files" if ussuri else "check_hieradata_files"
    directories = [
        _become({"name": f"Create {what} check-mode directory",
                 "file": {"path": path, "state": "directory"}, "check_mode": False}, not ussuri)
        for what, path in (("hiera", hieradata), ("deployed", check),
                           ("tripleo-config-download", f"{_STAGED}/check-mode"))]
    template = _template(source, f"{check}/tripleo-config-download", not ussuri)
    slurp = _slurp(f"{check}/tripleo-config-download")
    copy = _copy(f"{check}/tripleo-config-download", not ussuri)
    if not ussuri:
        copy["when"] = ["deployment_content is defined"]
    tasks = [
        *directories, template, slurp, copy,
        {"name": "Run hiera deployment for check mode",
         "shell": f"rm -f {check}/{{{{ deployment_uuid }}}}.json\n{_HOOK}\n"
                  f"exit $(jq .deploy_status_code {check}/{{{{ deployment_uuid }}}}.notify.json)\n",
         "args": {"warn": False}, "become": True,
         "environment": {"HEAT_SHELL_CONFIG": f"{_STAGED}/check-mode/{_ITEM_FILE}",
                         "HEAT_PUPPET_HIERA_DATADIR": hieradata,
                         "HEAT_HIERA_CONFIG": "/etc/puppet/check-mode/hiera.yaml",
                         "HEAT_CONFIG_DEPLOYED": check},
         "check_mode": False, "ignore_errors": True},
        {"name": "List hieradata files for check mode", "find": {"path": hieradata},
         "register": found, "check_mode": False},
        {"name": "diff hieradata changes for check mode",
         "command": "diff -uN {{ hieradata_item.path | regex_replace('check-mode', '') }} "
                    "{{ hieradata_item.path }}",
         "with_items": f"{{{{ {found}.files }}}}", "check_mode": False,
         "register": "diff_results", "changed_when": "diff_results.rc == 1",
         "loop_control": {"loop_var": "hieradata_item", "label": "{{ hieradata_item.path }}"},
         "failed_when": False, "when": "ansible_diff_mode|bool"},
        {"name": "diff hieradata changes for check mode",
         "debug": {"var": "item.stdout_lines"}, "with_items": "{{ diff_results.results }}",
         "changed_when": "item.rc == 1",
         "loop_control": {"label": "{{ item._ansible_item_label }}"},
         "when": "ansible_diff_mode|bool"},
        {"name": "hiera.yaml changes for check mode",
         "command": "diff -uN /etc/puppet/hiera.yaml /etc/puppet/check-mode/hiera.yaml",
         "check_mode": False, "register": "diff_results", "changed_when": "diff_results.rc == 1",
         "failed_when": False},
        {"name": "diff hiera.yaml changes for check mode",
         "debug": {"var": "diff_results.stdout_lines"}, "changed_when": "diff_results.rc == 1",
         "when": "ansible_diff_mode|bool"},
    ]
    return {"name": "Hiera check and diff mode", "block": tasks, "ignore_errors": True,
            "when": ["deployment_group == 'hiera'", _CHECK_MODE]}


def _run_tasks(status: str, ussuri: bool) -> list[dict[str, Any]]:
    """Run the hook and show its output: always asynchronously (18.x), or (Ussuri)
    synchronously unless ``async_deployment`` is set or it is the NetworkDeployment."""
    environment = {"HEAT_SHELL_CONFIG": f"{_STAGED}/{_ITEM_FILE}"}

    def run(name: str, register: str) -> dict[str, Any]:
        return {"name": name, "shell": f"{_HOOK}\n{status}", "become": True,
                "environment": environment, "register": register, "ignore_errors": True}

    def output(kind: str, register: str, when: str) -> dict[str, Any]:
        if ussuri:
            msg = [{"stderr": f"{{{{ {register}.stderr.split('\n') }}}}"},
                   {"status_code": f"{{{{ {register}.rc }}}}"}]
            failed = f"{register}.rc != 0"
        else:
            msg = [{"stderr": f"{{{{ {register}.stderr_lines | default(['Timed out']) }}}}"},
                   {"status_code": f"{{{{ {register}.rc | default(-1) }}}}"}]
            failed = f"{register}.rc | default(-1) != 0"
        return {"name": f"Output for {kind} deployment {{{{ item }}}}", "debug": {"msg": msg},
                "tags": ["output"], "failed_when": failed, "when": when}

    async_run = {**run("Run async deployment {{ item }}", "deployment_async_result"),
                 "async": f"{{{{ async_timeout | default({300 if ussuri else 1800}) }}}}",
                 "poll": "{{ async_poll | default(3) }}"}
    if not ussuri:
        return [async_run, output("async", "deployment_async_result", _NOT_CHECK_MODE)]
    use_async = "use_async_deployment|bool"
    return [
        {"name": "Set fact for async_deployment", "set_fact": {
            "use_async_deployment": "{{ (async_deployment | default(False)) or "
                                    "(item == 'NetworkDeployment') }}"}},
        {**run("Run deployment {{ item }}", "deployment_sync_result"),
         "when": f"not {use_async}"},
        {**async_run, "when": use_async},
        output("sync", "deployment_sync_result", f"{_NOT_CHECK_MODE} and not {use_async}"),
        output("async", "deployment_async_result", f"{_NOT_CHECK_MODE} and {use_async}"),
    ]


def deployments_tasks(ussuri: bool = False) -> list[dict[str, Any]]:
    """The tasks of ``deployments.yaml``, the data of tripleo-common's file (18.0.0's, or
    with ``ussuri`` 12.1.0's; the differential tests hold them equal): run the deployment
    named ``item`` on the host with the heat-config hook, once (a deployment already
    recorded as succeeded is skipped unless ``force``), failing when the hook reports a
    non-zero status; in check mode, say whether it would run (and diff a ``hiera`` one's
    data)."""
    source = _USSURI_SOURCE if ussuri else _SOURCE
    marker = f"{_DEPLOYED}/{{{{ deployment_uuid }}}}"
    status = f"exit $(jq .deploy_status_code {marker}.notify.json)\n"
    slurp, copy = _slurp(_STAGED), _copy(_STAGED, not ussuri)
    if not ussuri:
        slurp["when"] = copy["when"] = [_NOT_CHECK_MODE]
    return [
        {"name": "Quote the JSON queries to escape invalid characters",
         "set_fact": {"item_id": '"{{ item }}".id', "item_group": '"{{ item }}".group',
                      "item_only": '"{{ item }}"'}},
        {"name": "Lookup deployment UUID",
         "set_fact": {"deployment_uuid": _lookup(source, "item_id")}},
        {"name": "Lookup deployment group",
         "set_fact": {"deployment_group": _lookup(source, "item_group")}},
        _check_mode_block(source, ussuri),
        _template(source, _STAGED, not ussuri), slurp, copy,
        {"name": "Check if deployed file exists for {{ item }}",
         "stat": {"path": f"{marker}.json"}, "register": "deployed_file_stat"},
        {"name": "Check previous deployment rc for {{ item }}", "shell": status,
         "register": "previous_deployment_result", "ignore_errors": True, "failed_when": False,
         "when": "deployed_file_stat.stat.exists" if ussuri else [
             "deployed_file_stat is defined", "deployed_file_stat.stat.exists"]},
        {"name": "Remove deployed file for {{ item }} when previous deployment failed",
         "file": {"path": f"{marker}.json", "state": "absent"}, "become": True,
         "when": [_NOT_CHECK_MODE, "deployed_file_stat.stat.exists",
                  "previous_deployment_result.rc != 0"]},
        {"name": "Force remove deployed file for {{ item }}",
         "file": {"path": f"{marker}.json", "state": "absent"}, "become": True,
         "when": "(force | bool)"},
        *_run_tasks(status, ussuri),
        {"name": "Check-mode for Run deployment {{ item }} (changed status indicates "
                 "deployment would run)",
         "stat": {"path": f"{marker}.json"}, "become": True, "register": "deploy_exists",
         "changed_when": "not deploy_exists.stat.exists", "when": _CHECK_MODE,
         "ignore_errors": True},
    ]


__all__ = ["KINDS", "NESTED_DEPTH", "RESOURCE_NAME", "Deployment", "Found", "deployment_file",
           "deployments_tasks", "found_in", "host_lists", "kind_of", "nested_stack_id"]
