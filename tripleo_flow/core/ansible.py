"""Running config-download with ansible-playbook: inventory overlay and command (pure).

Nothing here runs a process: :func:`playbook_command` builds the argument list
and :func:`connection_inventory` the extra inventory that points every host of
the project's inventory at one connection plugin (``local`` runs the sample
plan's playbooks on this machine).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

#: The playbook a deployment runs by default (one of RoleConfig's keys).
DEFAULT_PLAYBOOK = "deploy_steps_playbook.yaml"
#: Where tripleo-ansible installs its content, under its virtualenv.
TRIPLEO_ANSIBLE_SHARE = "share/ansible"
#: Ansible's path settings and the tripleo-ansible directory each points at.
TRIPLEO_ANSIBLE_PATHS = {
    "ANSIBLE_ROLES_PATH": "roles",
    "ANSIBLE_LIBRARY": "plugins/modules",
    "ANSIBLE_MODULE_UTILS": "plugins/module_utils",
    "ANSIBLE_ACTION_PLUGINS": "plugins/action",
    "ANSIBLE_FILTER_PLUGINS": "plugins/filter",
    "ANSIBLE_CALLBACK_PLUGINS": "plugins/callback",
    "ANSIBLE_STRATEGY_PLUGINS": "plugins/strategy",
}


def inventory_hosts(inventory: Mapping[str, Any]) -> list[str]:
    """Every host named in a YAML inventory (any group, children included), sorted."""
    hosts: set[str] = set()

    def walk(group: Any) -> None:
        if not isinstance(group, Mapping):
            return
        hosts.update(group.get("hosts") or {})
        for child in (group.get("children") or {}).values():
            walk(child)

    for group in inventory.values():
        walk(group)
    return sorted(hosts)


def connection_inventory(inventory: Mapping[str, Any], connection: str,
                         python: str | None = None) -> dict[str, Any]:
    """An inventory giving each host of ``inventory`` ``ansible_connection``
    (and, for ``local``, ``ansible_python_interpreter`` so modules run with ``python``)."""
    values: dict[str, Any] = {"ansible_connection": connection}
    if connection == "local" and python:
        values["ansible_python_interpreter"] = python
    return {"all": {"hosts": {host: dict(values) for host in inventory_hosts(inventory)}}}


def playbook_command(ansible_playbook: str, playbook: str, inventories: Sequence[str],
                     extra_args: Sequence[str] = ()) -> list[str]:
    """The ``ansible-playbook`` argument list (never a shell string)."""
    command = [ansible_playbook]
    for inventory in inventories:
        command += ["--inventory", inventory]
    return [*command, *extra_args, playbook]


def tripleo_ansible_paths(share: str, present: Collection[str]) -> dict[str, str]:
    """The Ansible path settings for the tripleo-ansible content installed in ``share``
    (``<venv>/share/ansible``), for those of its directories ``present`` names."""
    return {variable: f"{share}/{sub}" for variable, sub in TRIPLEO_ANSIBLE_PATHS.items()
            if sub in present}


def selection_args(tags: str | None = None, skip_tags: str | None = None,
                   limit: str | None = None) -> list[str]:
    """``--tags``, ``--skip-tags`` and ``--limit`` for what is given (comma-separated
    lists and host patterns, as ``ansible-playbook`` takes them)."""
    args: list[str] = []
    for flag, value in (("--tags", tags), ("--skip-tags", skip_tags), ("--limit", limit)):
        if value:
            args += [flag, value]
    return args


def environment(base: Mapping[str, str], ansible_home: str,
                paths: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment: Ansible's state kept in ``ansible_home``, no colour, and
    the content ``paths`` (:func:`tripleo_ansible_paths`) when given."""
    return {**base, **(paths or {}), "ANSIBLE_HOME": ansible_home,
            "ANSIBLE_LOCAL_TEMP": f"{ansible_home}/tmp",
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
            "ANSIBLE_RETRY_FILES_ENABLED": "0", "ANSIBLE_HOST_KEY_CHECKING": "0"}


__all__ = ["DEFAULT_PLAYBOOK", "TRIPLEO_ANSIBLE_PATHS", "TRIPLEO_ANSIBLE_SHARE",
           "connection_inventory", "environment", "inventory_hosts", "playbook_command",
           "selection_args", "tripleo_ansible_paths"]
