"""Run the deployment's config-download playbook with ansible-playbook.

The output goes to ``<work-dir>/ansible.log`` (0600); Ansible's own state to
``<work-dir>/ansible-home``.  With a connection given (``local`` for the
sample plan), ``<work-dir>/ansible-connection.yaml`` is a second inventory that
points every host at it (and, with ``ssh_user``, logs in as that user); the
``-e`` variables of a run go to ansible-playbook in ``<work-dir>/ansible-extra-vars.json``
(0600), never on its command line; a run's verbosity is ansible-playbook's ``-v...``
(tripleoclient gives its own ``-v`` level).  ansible-playbook leads a process group tethered to
this process (``<work-dir>/ansible.pgid`` while it runs): killed with it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.common import crashpoints, safe_yaml
from tripleo_flow.core.deploy import ansible, run_options, scale, update
from tripleo_flow.core.deploy import config_download as layout
from tripleo_flow.core.deploy.inventory import EXCLUDED
from tripleo_flow.engine.lang.action import InputPath, WorkDir
from tripleo_flow.workspace import files as private_files
from tripleo_flow.workspace import tethered

LOG_FILE = "ansible.log"
CONNECTION_INVENTORY = "ansible-connection.yaml"
#: The ``-e/--extra-vars`` of a run, handed to ansible-playbook as ``--extra-vars @FILE``.
EXTRA_VARS = "ansible-extra-vars.json"
#: The process group of the ansible-playbook running now (:mod:`~tripleo_flow.workspace.tethered`).
PGID_FILE = "ansible.pgid"
ANSIBLE_HOME = "ansible-home"
FACT_CACHE = "ansible-facts"
ANSIBLE_PLAYBOOK = "ansible-playbook"
TAIL_LINES = 8
#: ansible-playbook's exit status when some hosts were unreachable (and nothing failed).
UNREACHABLE = 4
LOG = logging.getLogger(__name__)


def find_ansible_playbook(venv: str | None = None) -> str:
    """ansible-playbook of the Ansible virtualenv ``venv`` when given; else the one of
    this Python's environment, else the one on PATH."""
    if venv:
        inside = Path(venv) / "bin" / ANSIBLE_PLAYBOOK
        if not (inside.is_file() and os.access(inside, os.X_OK)):
            raise exceptions.AnsibleNotInstalled(ANSIBLE_PLAYBOOK, venv)
        return str(inside)
    beside = Path(sys.executable).parent / ANSIBLE_PLAYBOOK
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(ANSIBLE_PLAYBOOK)
    if found is None:
        raise exceptions.AnsibleNotInstalled(ANSIBLE_PLAYBOOK)
    return found


def content_paths(venv: str | None) -> dict[str, str]:
    """Ansible's path settings for the tripleo-ansible content of ``venv`` (none without
    a virtualenv, or when it holds no tripleo-ansible)."""
    if not venv:
        return {}
    share = Path(venv) / ansible.TRIPLEO_ANSIBLE_SHARE
    present = [sub for sub in ansible.TRIPLEO_ANSIBLE_PATHS.values() if (share / sub).is_dir()]
    return ansible.tripleo_ansible_paths(str(share), present)


def _venv(context: Any) -> str | None:
    return context.conf.ansible.venv  # type: ignore[no-any-return]


class CheckAnsible(Action):
    """Check that ansible-playbook is installed, before a workflow that will run it starts.

    Marked as running plan code, like :class:`RunAnsible`, so a workflow that puts it
    first is refused where plan code may not run before it changes anything.
    """

    rerun = Rerun.READS

    runs_plan_code = True

    def execute(self) -> dict[str, str]:
        return {"ansible_playbook": find_ansible_playbook(_venv(self.context))}


class RunAnsible(Action):
    """Run a config-download playbook with ansible-playbook as tripleoclient's deploy
    does (:func:`~tripleo_flow.core.deploy.ansible.deploy_settings`: SSH options, become, forks,
    fact gathering and cache, the tripleo_dense output; ``opendev-validation`` skipped,
    excluded hosts left out); fail with its output's tail (with ``ignore_unreachable``,
    unreachable hosts alone do not fail it, as tripleoclient's scale-down run).

    No revert: what the playbook changed on the hosts cannot be undone here (its
    output stays in ansible.log for debugging).
    """

    rerun = Rerun.CALLER
    #: Whether the workflow reverts its completed tasks after a failed run (a deploy
    #: does; a lifecycle run has nothing before it to revert).
    failure_reverts = True
    #: The playbook comes from the plan's templates; with a local connection (or
    #: ``delegate_to: localhost``, a lookup) its tasks run on this machine.
    runs_plan_code = True

    def execute(self, plan: str, work_dir: WorkDir, config_download: dict[str, Any],
                ansible_connection: str | None = None,
                playbook: InputPath = ansible.DEFAULT_PLAYBOOK,
                ansible_tags: str | None = None, ansible_skip_tags: str | None = None,
                ansible_limit: str | None = None,
                ignore_unreachable: bool = False, ansible_forks: int | None = None,
                extra_vars: dict[str, Any] | None = None, ssh_user: str | None = None,
                static_inventory: InputPath | None = None,
                ansible_verbosity: int | None = None) -> dict[str, Any]:
        crashpoints.reached(f"ansible.run:{playbook}")
        forks = run_options.check_forks(ansible_forks)
        verbosity = run_options.check_verbosity(ansible_verbosity)
        variables = run_options.check_extra_vars(extra_vars)
        ssh_user = run_options.check_ssh_user(ssh_user)
        venv = _venv(self.context)
        command_path = find_ansible_playbook(venv)
        work = Path(work_dir)
        project = Path(config_download["path"])
        path = Path(static_inventory) if static_inventory else project / layout.INVENTORY
        inventory = safe_yaml.load_yaml(path.read_bytes(), str(path)) or {}
        inventories = [str(path)]
        if ansible_connection or ssh_user:
            overlay = ansible.connection_inventory(inventory, ansible_connection,
                                                   sys.executable, ssh_user)
            private_files.write_private(work / CONNECTION_INVENTORY, layout.dump(overlay))
            inventories.append(str(work / CONNECTION_INVENTORY))
        selection = []
        if variables:
            private_files.write_private(work / EXTRA_VARS,
                                        json.dumps(variables, sort_keys=True).encode())
            selection = ["--extra-vars", f"@{work / EXTRA_VARS}"]
        else:  # not an earlier run's
            (work / EXTRA_VARS).unlink(missing_ok=True)
        home = work / ANSIBLE_HOME
        facts = work / FACT_CACHE
        private_files.make_dirs(home)
        private_files.make_dirs(facts)
        log = work / LOG_FILE
        excluded = (inventory.get(f"{plan}_{EXCLUDED}") or {}).get("hosts") or {}
        command = ansible.playbook_command(
            command_path, playbook, inventories,
            [*run_options.verbosity_args(verbosity),
             *ansible.deploy_selection(ansible_tags, ansible_skip_tags, ansible_limit,
                                       sorted(excluded)), *selection])
        paths = content_paths(venv)
        callbacks = Path(paths.get("ANSIBLE_CALLBACK_PLUGINS", "/nonexistent"))
        user, key = ansible.ssh_login(inventory, layout.SSH_USER)
        settings = ansible.deploy_settings(
            plan, ssh_user or user, key, str(facts), os.cpu_count() or 1, forks,
            callbacks=(callbacks / f"{ansible.STDOUT_CALLBACK}.py").is_file())
        env = ansible.environment({**settings, **os.environ}, str(home), paths)
        if ansible_connection != "local":  # a local run is the caller's, who may lack sudo
            env.update(ansible.DEPLOY_FORCED)
        if forks:  # asked for in this run: over the caller's environment too
            env["ANSIBLE_FORKS"] = str(forks)
        # Tethered: killed with this process (a resumed run never runs beside it).
        returncode = tethered.run_in_group(command, project, log, env, work / PGID_FILE)
        if returncode == UNREACHABLE and ignore_unreachable:
            LOG.warning("Some hosts of %s were unreachable (see %s); going on, as asked.",
                        playbook, log)
        elif returncode != 0:
            tail = " | ".join(ansible.failure_lines(log.read_text(errors="replace"),
                                                    TAIL_LINES))
            raise exceptions.AnsibleFailed(plan, playbook, returncode, str(log), tail,
                                           reverted=self.failure_reverts)
        return {"playbook": playbook, "log": str(log), "returncode": returncode,
                "command": command, "forks": env["ANSIBLE_FORKS"]}



#: The journal entry of a lifecycle playbook that finished (its result).
_FINISHED = "finished"


class _NotFinished(Exception):
    """No finished run of this playbook in the execution's journal."""


def _not_finished() -> dict[str, Any]:
    raise _NotFinished


class RunUpdatePlaybook(RunAnsible):
    """Run one playbook of a minor update or major upgrade of config-download (``update
    run``, ``upgrade run``, ``external-update run``, ``external-upgrade run``: a file name
    of the project, such as ``update_steps_playbook.yaml``) on the hosts of
    ``ansible_limit`` only when given (the workflows require one where tripleoclient
    does).  A failure reverts nothing, and says so: the hosts keep what ran.

    Its result is kept in the execution's journal once the playbook finished: a resumed
    execution (killed while a later playbook of the run waited or ran) does not run it
    again, but gets that result back; one killed while it ran runs it again.
    """

    failure_reverts = False

    def execute(self, plan: str, work_dir: WorkDir,  # type: ignore[override]
                config_download: dict[str, Any], playbook: str,
                ansible_limit: str | None = None,
                ansible_connection: str | None = None, ansible_tags: str | None = None,
                ansible_skip_tags: str | None = None, ansible_forks: int | None = None,
                extra_vars: dict[str, Any] | None = None, ssh_user: str | None = None,
                static_inventory: InputPath | None = None,
                ansible_verbosity: int | None = None) -> dict[str, Any]:
        [name] = update.playbooks([playbook])
        try:
            finished: dict[str, Any] = self.context.once(_not_finished, _FINISHED)
            LOG.info("%s finished before this execution was resumed: not run again.", name)
            return finished
        except _NotFinished:
            pass
        done = super().execute(plan, work_dir, config_download, ansible_connection,
                               playbook=name, ansible_tags=ansible_tags,
                               ansible_skip_tags=ansible_skip_tags,
                               ansible_limit=update.parse_limit(ansible_limit,
                                                                required=False),
                               ansible_forks=ansible_forks, extra_vars=extra_vars,
                               ssh_user=ssh_user, static_inventory=static_inventory,
                               ansible_verbosity=ansible_verbosity)
        return self.context.once(lambda: done, _FINISHED)


class RunScalePlaybook(RunAnsible):
    """Run config-download's scale-down playbook on the leaving servers only (``limit``),
    as tripleoclient's ``overcloud node delete``: unreachable servers (already gone) do
    not fail it."""

    def execute(self, plan: str, work_dir: WorkDir,  # type: ignore[override]
                config_download: dict[str, Any], ansible_limit: str,
                ansible_connection: str | None = None) -> dict[str, Any]:
        if not ansible_limit:
            raise exceptions.InvalidInput("The scale-down playbook runs on the leaving "
                                          "servers only: name them (limit).")
        return super().execute(plan, work_dir, config_download, ansible_connection,
                               playbook=scale.PLAYBOOK, ansible_limit=ansible_limit,
                               ignore_unreachable=True)
