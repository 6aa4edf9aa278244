"""After the stack: its outputs (with the servers' deployments and network configs)
saved in the work dir, and the config-download Ansible project rendered from them and
committed (git, one commit per run)."""

from __future__ import annotations

import contextlib
import logging
import shutil
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.actions.deploy import (
    CONFIG_DIR,
    ENVIRONMENT_FILE,
    OUTPUTS_FILE,
    pointer,
    read_pointer,
    timestamp,
)
from tripleo_flow.actions.deploy_heat import heat_database, live_heat
from tripleo_flow.actions.deploy_stack import load_request
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.deploy import config_download, network_config
from tripleo_flow.core.deploy import deployments as core_deployments
from tripleo_flow.core.plan import stack_request as requests
from tripleo_flow.engine.lang.action import InputPath, WorkDir
from tripleo_flow.heat import client as heat_client
from tripleo_flow.heat import db_listing
from tripleo_flow.heat.database import HeatDatabase
from tripleo_flow.workspace import files as private_files
from tripleo_flow.workspace import git as git_dir

LOG = logging.getLogger(__name__)


def _stubs(client: heat_client.HeatClient, database: Callable[[], HeatDatabase | None],
           plan: str, stack_id: str) -> list[dict[str, Any]]:
    """The stack's ``TripleODeployment`` resources with details: read from the database
    of a Heat we launched (``database()``; :mod:`~tripleo_flow.heat.db_listing`: one
    query, where Heat's listing loads every nested stack in one engine for seconds),
    else listed by Heat (``installed``, a tree that reading leaves to Heat, or a
    database that cannot be read)."""
    try:
        db = database()
        found = None if db is None else db_listing.resources_named(
            db, stack_id, core_deployments.RESOURCE_NAME, core_deployments.NESTED_DEPTH)
    except exceptions.TripleoFlowError as exc:
        LOG.warning("Listing the deployments through Heat's API: %s", exc)
        found = None
    if found is not None:
        return found
    return client.resources(plan, stack_id, core_deployments.NESTED_DEPTH, with_detail=True,
                            resource_name=core_deployments.RESOURCE_NAME)


class SaveStackOutputs(Action):
    """Save the stack outputs, the servers' deployments and network configs (the software
    configs the outputs name, :mod:`~tripleo_flow.core.deploy.network_config`) and the
    environment in the work dir.

    The result points at ``outputs.yaml`` (they hold passwords) and names the
    private copies of the files it replaced.  No revert: saved, the outputs describe
    the finished stack, which is kept (a failure while saving them replaced nothing:
    each file is written atomically).
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, work_dir: WorkDir, heat: dict[str, Any],
                stack_request: dict[str, Any]) -> dict[str, Any]:
        stack_request = load_request(stack_request, work_dir)
        client = live_heat(self.context, plan, work_dir, heat, need_stack=True)
        stack = client.existing_stack(plan)  # with its outputs resolved: read once
        outputs = heat_client.outputs_of(stack)
        # The two slowest reads (the nested stacks' deployment stubs, several seconds
        # on THT; the environment) go on while the servers' deployments are read.
        with ThreadPoolExecutor(2, thread_name_prefix="save-outputs") as reads:
            stubs_read = reads.submit(
                _stubs, client, lambda: heat_database(self.context, work_dir, heat), plan,
                stack["id"])
            environment_read = reads.submit(client.environment, plan, stack["id"])
            configs: dict[str, dict[str, Any]] = {}

            def config(cid: str) -> dict[str, Any]:
                if cid not in configs:
                    configs[cid] = client.software_config(cid)
                return configs[cid]

            def record(name: str, kind: str, config_id: str) -> dict[str, Any]:
                derived = config(config_id)  # the config Heat derived for the deployment
                return {"name": name, "kind": kind, "id": derived.get("id") or config_id,
                        "config_name": derived.get("name") or "",
                        "creation_time": derived.get("creation_time") or "",
                        "config": derived.get("config"),
                        "group": derived.get("group", "script"),
                        "options": derived.get("options"),
                        "inputs": derived.get("inputs") or [],
                        "outputs": [{k: o.get(k) for k in ("name", "description", "type")}
                                    for o in derived.get("outputs") or []]}

            servers = config_download.servers_from_outputs(outputs)
            deployments: dict[str, list[dict[str, Any]]] = {}
            for server in servers:  # deployments on real servers (the sample plan's)
                deployments[server.name] = [
                    record(config(dep["config_id"]).get("name") or dep["id"],
                           "pre_deployments", dep["config_id"])
                    for dep in client.deployments(server.server_id)]
            stubs = stubs_read.result()
            defaults = environment_read.result().get("parameter_defaults") or {}
        for found in core_deployments.found_in(stubs, {s.server_id: s.name for s in servers}):
            deployment_id = found.deployment
            nested = core_deployments.nested_stack_id(found.deployment)
            if nested:  # the deployment is a nested stack's TripleOSoftwareDeployment
                deployment_id = str(client.resource(nested, "TripleOSoftwareDeployment")
                                    .get("physical_resource_id") or "")
            if not deployment_id:
                continue  # not created by this stack action (as tripleo-common skips it)
            deployed = client.software_deployment(deployment_id)
            deployments[found.server].append(record(found.name, found.kind,
                                                    str(deployed["config_id"])))
        stack_environment = {"parameter_defaults": {
            key: defaults[key] for key in config_download.ENVIRONMENT_KEYS if key in defaults}}
        network_configs = {cid: config(cid).get("config")
                           for cid in network_config.config_ids(outputs)}
        environment = {"parameters": requests.effective_parameters(stack_request),
                       "environment_files": stack_request["environment_files"]}
        saved = {OUTPUTS_FILE: safe_yaml.dump_yaml({"outputs": outputs,
                                                  "deployments": deployments,
                                                  "stack_environment": stack_environment,
                                                  "network_configs": network_configs}),
                 ENVIRONMENT_FILE: safe_yaml.dump_yaml(environment)}
        backup = private_files.write(Path(work_dir), saved, self.context.undo_record)
        return {**pointer(Path(work_dir) / OUTPUTS_FILE, saved[OUTPUTS_FILE]),
                "servers": sorted(deployments), "backup": backup}


def _connection(conf: Any, ssh_user: str | None,
                ssh_key: str | None) -> config_download.Connection:
    """The SSH user and key of the inventory: the deploy's, else ``[ansible]``'s."""
    user = ssh_user or conf.ansible.ssh_user
    key = ssh_key or conf.ansible.ssh_private_key
    if user is not None and (not user.strip() or any(c.isspace() for c in user)):
        raise exceptions.InvalidInput(
            f"The overcloud SSH user {user[:100]!r} is not a user name: give one without "
            "spaces, such as tripleo-admin.")
    if key:
        path = Path(key).expanduser()
        if not path.is_file():
            raise exceptions.InvalidInput(
                f"The overcloud SSH key {key[:200]!r} is not a file: give the path of the "
                "private key Ansible logs in to the servers with.")
        key = str(path.absolute())
    return config_download.Connection(user or config_download.SSH_USER, key or None)


class WriteConfigDownload(Action):
    """Render the Ansible project into <work-dir>/config-download and commit it (git).

    Its inventory and ``ansible.cfg`` name the SSH user and private key file given
    (``overcloud_ssh_user``, ``overcloud_ssh_key``), else ``[ansible] ssh_user`` and
    ``ssh_private_key``; the key's path only, never its content.
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, work_dir: WorkDir, stack_outputs: dict[str, Any],
                overcloud_ssh_user: str | None = None,
                overcloud_ssh_key: InputPath | None = None) -> dict[str, Any]:
        connection = _connection(self.context.conf, overcloud_ssh_user, overcloud_ssh_key)
        if "file" in stack_outputs:  # a pointer to outputs.yaml (older results held them)
            stack_outputs = safe_yaml.load_yaml(read_pointer(stack_outputs), OUTPUTS_FILE)
        deployments = {server: [config_download.Deployment(**d) for d in deps]
                       for server, deps in stack_outputs["deployments"].items()}
        files = config_download.render(plan, stack_outputs["outputs"], deployments,
                                       connection=connection,
                                       network_configs=stack_outputs.get("network_configs"),
                                       environment=stack_outputs.get("stack_environment"),
                                       python=sys.executable)
        repo = git_dir.GitDir(Path(work_dir) / CONFIG_DIR)
        if repo.path.exists() and not repo.path.is_dir():
            raise exceptions.InvalidInput(
                f"{repo.path} is not a directory, so config-download cannot be written "
                "there: move it away and re-run.")
        previous = repo.head()
        repo.replace_files(files)
        commit = repo.commit(f"Deployment of plan {plan} at {timestamp()}")
        return {"path": str(repo.path), "files": len(files), "commit": commit,
                "previous": previous}

    def revert(self, work_dir: str, result: Any = None, **kwargs: Any) -> None:
        """Keep a finished commit (it matches the kept stack: a later step failed);
        remove what a failed rendering left: back to the last commit, or no directory."""
        repo = git_dir.GitDir(Path(work_dir) / CONFIG_DIR)
        if isinstance(result, dict) or not repo.path.is_dir():
            return  # kept, or never ours (not a directory: refused before writing)
        previous = repo.head()
        if previous is None:
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(repo.path)
        else:
            repo.reset(previous)
