"""Running config-download with ansible-playbook: inventory overlay and command (pure).

Nothing here runs a process: :func:`playbook_command` builds the argument list
and :func:`connection_inventory` the extra inventory that points every host of
the project's inventory at one connection plugin (``local`` runs the sample
plan's playbooks on this machine).
"""

from __future__ import annotations

import re
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


def connection_inventory(inventory: Mapping[str, Any], connection: str | None,
                         python: str | None = None,
                         ssh_user: str | None = None) -> dict[str, Any]:
    """An inventory giving each host of ``inventory`` ``ansible_connection`` when given
    (and, for ``local``, ``ansible_python_interpreter`` so modules run with ``python``),
    and ``ssh_user`` as its ``ansible_ssh_user``/``ansible_user`` when given (host
    variables, so they win over the group variables of config-download's inventory)."""
    values: dict[str, Any] = {}
    if connection:
        values["ansible_connection"] = connection
    if connection == "local" and python:
        values["ansible_python_interpreter"] = python
    if ssh_user:
        values.update(ansible_ssh_user=ssh_user, ansible_user=ssh_user)
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


#: The SSH options tripleoclient gives Ansible for the overcloud (known hosts not kept,
#: shared connections kept 30 minutes, keep-alives, key authentication only).
SSH_ARGS = ("-o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no "
            "-o ControlMaster=auto -o ControlPersist=30m -o ServerAliveInterval=64 "
            "-o ServerAliveCountMax=1024 -o Compression=no -o TCPKeepAlive=yes "
            "-o VerifyHostKeyDNS=no -o ForwardX11=no -o ForwardAgent=yes "
            "-o PreferredAuthentications=publickey -T")
#: tripleoclient's output and profiling callbacks (tripleo-ansible's).
STDOUT_CALLBACK = "tripleo_dense"
CALLBACKS = ("tripleo_dense", "tripleo_profile_tasks", "tripleo_states")
#: What tripleoclient's deploy sets over the caller's environment (config_download's
#: extra environment): every task as root.
DEPLOY_FORCED = {"ANSIBLE_BECOME": "True"}
#: Tags a deploy skips unless in-flight validations are asked for.
VALIDATION_TAG = "opendev-validation"


def deploy_settings(plan: str, ssh_user: str, private_key: str | None, fact_cache: str,
                    cpu_count: int, forks: int | None = None,
                    callbacks: bool = True) -> dict[str, str]:
    """The environment tripleoclient's ``overcloud deploy`` runs config-download's
    playbook with (python-tripleoclient ``utils.run_ansible_playbook``, called by
    ``workflows/deployment.config_download``), setting by setting:

    - ``ANSIBLE_SSH_ARGS`` :data:`SSH_ARGS`; ``ANSIBLE_TRANSPORT`` smart; ``ANSIBLE_TIMEOUT``
      600 (config_download's connection timeout); ``ANSIBLE_SSH_RETRIES`` 3;
      ``ANSIBLE_PIPELINING`` and ``ANSIBLE_SCP_IF_SSH`` on;
    - ``ANSIBLE_REMOTE_USER`` the overcloud SSH user, ``ANSIBLE_PRIVATE_KEY_FILE`` its key;
    - ``ANSIBLE_FORKS`` ``min(4 x CPUs, 100)`` unless given;
    - facts: ``ANSIBLE_GATHERING`` smart, ``ANSIBLE_GATHER_SUBSET`` ``!all,min``,
      ``ANSIBLE_GATHER_TIMEOUT`` 45, ``ANSIBLE_INJECT_FACT_VARS`` off, kept between runs in
      a JSON file cache (ansible-runner's ``fact_cache``) for 7200 s;
    - ``ANSIBLE_VARS_PLUGIN_STAGE`` all, ``ANSIBLE_DISPLAY_FAILED_STDERR`` on,
      ``ANSIBLE_INTERNAL_POLL_INTERVAL`` 0.01 (the ansible.cfg it writes);
    - the ``tripleo_dense`` output and the profiling/state callbacks, when tripleo-ansible
      is installed (``callbacks``); ``TRIPLEO_PLAN_NAME`` the plan.

    These are defaults: the caller's own environment overrides them, as tripleoclient
    lets it (``env.update(os.environ)``); then :data:`DEPLOY_FORCED` applies.
    """
    settings = {
        "ANSIBLE_SSH_ARGS": SSH_ARGS, "ANSIBLE_DISPLAY_FAILED_STDERR": "True",
        "ANSIBLE_FORKS": str(forks or min(cpu_count * 4, 100)), "ANSIBLE_TIMEOUT": "600",
        "ANSIBLE_GATHER_TIMEOUT": "45", "ANSIBLE_SSH_RETRIES": "3",
        "ANSIBLE_PIPELINING": "True", "ANSIBLE_SCP_IF_SSH": "True",
        "ANSIBLE_REMOTE_USER": ssh_user, "ANSIBLE_TRANSPORT": "smart",
        "ANSIBLE_CACHE_PLUGIN": "jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": fact_cache,
        "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "7200", "ANSIBLE_INJECT_FACT_VARS": "False",
        "ANSIBLE_VARS_PLUGIN_STAGE": "all", "ANSIBLE_GATHER_SUBSET": "!all,min",
        "ANSIBLE_GATHERING": "smart", "ANSIBLE_INTERNAL_POLL_INTERVAL": "0.01",
        "TRIPLEO_PLAN_NAME": plan}
    if private_key:
        settings["ANSIBLE_PRIVATE_KEY_FILE"] = private_key
    if callbacks:
        settings["ANSIBLE_STDOUT_CALLBACK"] = STDOUT_CALLBACK
        settings["ANSIBLE_CALLBACKS_ENABLED"] = ",".join(CALLBACKS)
    return settings


def ssh_login(inventory: Mapping[str, Any], default_user: str) -> tuple[str, str | None]:
    """The SSH user and private key file the inventory's groups name (config-download
    names them on every role group), else ``default_user`` and no key."""
    for group in inventory.values():
        group_vars = (group or {}).get("vars") or {} if isinstance(group, Mapping) else {}
        if group_vars.get("ansible_ssh_user"):
            key = group_vars.get("ansible_ssh_private_key_file")
            return str(group_vars["ansible_ssh_user"]), str(key) if key else None
    return default_user, None


def deploy_selection(tags: str | None, skip_tags: str | None, limit: str | None,
                     excluded_hosts: Sequence[str] = (),
                     in_flight_validations: bool = False) -> list[str]:
    """``--tags``, ``--skip-tags`` and ``--limit`` as tripleoclient's deploy gives them:
    :data:`VALIDATION_TAG` skipped first (unless in-flight validations run), and with no
    limit given, every excluded host (``BlacklistedHostnames``) left out (``!host:...``)."""
    if not in_flight_validations:
        skip_tags = f"{VALIDATION_TAG},{skip_tags}" if skip_tags else VALIDATION_TAG
    if not limit and any(excluded_hosts):
        limit = ":".join(f"!{host}" for host in excluded_hosts if host)
    return selection_args(tags, skip_tags, limit)


#: What marks a failure in ansible-playbook's output, with the default callback
#: (``fatal: [host]: FAILED!``) or tripleo_dense (``| FATAL |``, state padded), whose
#: summaries after a failure would otherwise hide it.
FAILURE = re.compile(r"\|\s+(FATAL|UNREACHABLE)\s+\||^(fatal|failed): \[|UNREACHABLE!|^ERROR!")


def failure_lines(output: str, count: int) -> list[str]:
    """The lines of an ansible-playbook output that say what failed (the last ``count``
    of them), else its last ``count`` non-empty lines."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    failed = [line for line in lines if FAILURE.search(line)]
    return (failed or lines)[-count:]


def environment(base: Mapping[str, str], ansible_home: str,
                paths: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment: Ansible's state kept in ``ansible_home``, no colour, and
    the content ``paths`` (:func:`tripleo_ansible_paths`) when given."""
    return {**base, **(paths or {}), "ANSIBLE_HOME": ansible_home,
            "ANSIBLE_LOCAL_TEMP": f"{ansible_home}/tmp",
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
            "ANSIBLE_RETRY_FILES_ENABLED": "0", "ANSIBLE_HOST_KEY_CHECKING": "0"}


__all__ = ["CALLBACKS", "DEFAULT_PLAYBOOK", "DEPLOY_FORCED", "SSH_ARGS", "STDOUT_CALLBACK",
           "TRIPLEO_ANSIBLE_PATHS", "TRIPLEO_ANSIBLE_SHARE", "VALIDATION_TAG",
           "FAILURE", "connection_inventory", "deploy_selection", "deploy_settings",
           "environment", "failure_lines",
           "inventory_hosts", "playbook_command", "selection_args", "ssh_login",
           "tripleo_ansible_paths"]
