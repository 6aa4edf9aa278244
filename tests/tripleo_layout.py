"""What TripleO's config-download writes for a stack: the files, as a spec for tests.

Written rule by rule from tripleo-common's ``Config.write_config``
(``tripleo_common/utils/config.py`` of 18.0.0, its last release) and, for
``NetworkConfig``, of 12.1.0 (Ussuri: ``HostnameNetworkConfigMap``), independently
of tripleo_flow's renderer, so a test can hold the renderer's output against it:

- ``deployments.yaml`` and ``templates/heat-config.j2`` (copied templates);
- per RoleData role: ``<Role>/<key>.yaml`` for each key but the external tasks
  (``step_config.pp`` and ``param_config.json`` for those two), and per-step files
  of ``deploy_steps_tasks``, ``update_tasks``, ``upgrade_tasks`` (6 steps) and
  ``post_update_tasks`` (4);
- per RoleConfig key: the key, ``.yaml`` added when it has no extension; the
  external tasks also ``<key>_step0..5.yaml``;
- ``group_vars/<Role>`` for each role that has servers, ``host_vars/<server>`` for
  each server, ``<Role>/<server>/<deployment>`` for each software deployment;
- ``<Role>/<server>/NetworkConfig`` and ``<Role>/NetworkConfig`` for each server
  whose network software config is not empty.

For THT 12.x (Ussuri: the ``HostnameNetworkConfigMap`` output), tripleo-common 12.1.0's
rules: per-step files of ``deploy_steps_tasks`` and ``upgrade_tasks`` only, only
``external_deploy_tasks`` left out of the roles' files and no external per-step
files, and ``ansible_group_vars`` merged into ``group_vars/<Role>`` (no file).
The differential tests (tests/functional/overcloud/test_tripleo_common_oracle.py)
hold the whole projects against tripleo-common itself.

Beside them python-tripleoclient writes ``tripleo-ansible-inventory.yaml`` and an
``ansible.cfg`` in the project (:data:`CLIENT_FILES`); tripleo_flow adds
``global_vars.yaml`` (:data:`OUR_FILES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PER_STEP = {"deploy_steps_tasks": 6, "update_tasks": 6, "upgrade_tasks": 6,
            "post_update_tasks": 4}
EXTERNAL = ("external_deploy_tasks", "external_deploy_steps_tasks")
USSURI_PER_STEP = {"deploy_steps_tasks": 6, "upgrade_tasks": 6}
USSURI_EXTERNAL = ("external_deploy_tasks",)
CLIENT_FILES = frozenset({"tripleo-ansible-inventory.yaml", "ansible.cfg"})
OUR_FILES = frozenset({"global_vars.yaml"})


def _role_files(role: str, data: Mapping[str, Any], ussuri: bool) -> set[str]:
    files: set[str] = set()
    per_step = USSURI_PER_STEP if ussuri else PER_STEP
    for key in data:
        if key in (USSURI_EXTERNAL if ussuri else EXTERNAL) or (
                ussuri and key == "ansible_group_vars"):
            continue
        if key == "step_config":
            files.add(f"{role}/step_config.pp")
        elif key == "param_config":
            files.add(f"{role}/param_config.json")
        else:
            files.add(f"{role}/{key}.yaml")
            files.update(f"{role}/{key}_step{n}.yaml" for n in range(per_step.get(key, 0)))
    return files


def servers(outputs: Mapping[str, Any]) -> dict[str, str]:
    """Server short name -> role, as tripleo-common's ``get_server_names``: the
    ctlplane names of RoleNetHostnameMap cut at ``.ctlplane.``, lower-cased, for
    the roles ServerIdData has ids for."""
    ids = (outputs.get("ServerIdData") or {}).get("server_ids") or {}
    found: dict[str, str] = {}
    for role, by_net in (outputs.get("RoleNetHostnameMap") or {}).items():
        names = (by_net or {}).get("ctlplane") or []
        for index, name in enumerate(names):
            if index < len(ids.get(role) or []):
                found[name.split(".ctlplane.")[0].lower()] = role
    return found


def tripleo_files(saved: Mapping[str, Any]) -> set[str]:
    """The files TripleO writes for a deploy's saved ``outputs.yaml`` (outputs,
    deployments by server, network configs by software config id)."""
    outputs = saved["outputs"]
    ussuri = "HostnameNetworkConfigMap" in outputs
    files = {"deployments.yaml", "templates/heat-config.j2"}
    for role, data in (outputs.get("RoleData") or {}).items():
        files |= _role_files(role, data or {}, ussuri)
    for key in outputs.get("RoleConfig") or {}:
        if key in EXTERNAL and not ussuri:
            files.update(f"{key}_step{n}.yaml" for n in range(6))
        files.add(key if "." in key else f"{key}.yaml")
    by_server = servers(outputs)
    files.update(f"group_vars/{role}" for role in set(by_server.values()))
    files.update(f"host_vars/{server}" for server in by_server)
    for server, deployments in (saved.get("deployments") or {}).items():
        files.update(f"{by_server[server]}/{server}/{d['name']}" for d in deployments)
    configs = saved.get("network_configs") or {}
    for host, config_id in (outputs.get("HostnameNetworkConfigMap") or {}).items():
        server = str(host).split(".")[0].lower()
        if server in by_server and configs.get(config_id):
            files.add(f"{by_server[server]}/{server}/NetworkConfig")
            files.add(f"{by_server[server]}/NetworkConfig")
    return files
