"""Deployment actions: status, plan check, ephemeral Heat, stack, outputs, config-download.

Work dir layout (directories 0700, files 0600)::

    heat-launcher/       the ephemeral Heat (heat-db-dump.sql after each run)
    stack-request.json   the stack request of the current run (templates, parameters)
    outputs.yaml         the stack outputs, the servers' software deployments and
                         their network configs (software config id -> config)
    environment.yaml     the parameter values and environment files deployed
    config-download/     the Ansible project, a git repository (one commit per run)

These files hold every password; the results of the actions (persisted in the
executions database) point at them (path and sha256) instead of holding their
content, so a resumed deployment reads them back from the work dir.

A finished stack is never thrown away: once the stack is CREATE_COMPLETE or
UPDATE_COMPLETE, a later failure (outputs, config-download, Ansible) keeps the
stack's dump, its outputs and the config-download commit, and the status says
how to re-run only what follows the stack (``deploy --config-download-only``).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

from tripleo_flow import config, exceptions
from tripleo_flow.actions.base import Action, ActionContext, Rerun
from tripleo_flow.actions.paths import InputPath, WorkDir
from tripleo_flow.core import config_download, names, network_config, planenv, progress, rendering
from tripleo_flow.core import deployments as core_deployments
from tripleo_flow.core import stack_request as requests
from tripleo_flow.heat import make_launcher
from tripleo_flow.heat.client import HeatClient
from tripleo_flow.heat.workdir import HeatDir
from tripleo_flow.plans.plan import PlanRepository
from tripleo_flow.workspace import files as private_files
from tripleo_flow.workspace import git as git_dir
from tripleo_flow.workspace import owner

LOG = logging.getLogger(__name__)
OUTPUTS_FILE = "outputs.yaml"
ENVIRONMENT_FILE = "environment.yaml"
REQUEST_FILE = "stack-request.json"
CONFIG_DIR = "config-download"
PRE_DEPLOY_DUMP = "heat-db-dump.pre-deploy.sql"
FAILED_DUMP = "heat-db-dump.failed.sql"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _pointer(path: Path, data: bytes) -> dict[str, str]:
    """What a result keeps of a work-dir file that holds secrets: where it is, its digest."""
    return {"file": str(path), "sha256": hashlib.sha256(data).hexdigest()}


def _read(pointer: dict[str, Any]) -> bytes:
    """The content of a :func:`_pointer` file, checked against its digest."""
    path = Path(pointer["file"])
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    if hashlib.sha256(data).hexdigest() != pointer["sha256"]:
        raise exceptions.InvalidInput(
            f"{path} is missing or changed since this deployment wrote it; "
            "deploy again instead of resuming.")
    return data


def load_request(stack_request: dict[str, Any]) -> dict[str, Any]:
    """The stack request a :class:`CheckPlan` result points at (or holds, when older)."""
    if "file" not in stack_request:
        return stack_request
    return dict(json.loads(_read(stack_request)))


def _reason(flow_failures: Any) -> tuple[str, list[dict[str, str]]]:
    """The message and the failed resources of the first failure of a flow.

    A workbook task wraps the action's error (``TaskFailed`` from it): the failed
    resources are looked for along the chain of causes.
    """
    for atom, failure in (flow_failures or {}).items():
        error = getattr(failure, "exception", None)
        failures: list[dict[str, str]] = []
        while error is not None and not failures:
            failures = list(getattr(error, "failures", []) or [])
            error = error.__cause__
        return f"{atom}: {failure.exception_str}", failures
    return "deployment reverted", []


def _record_stack_status(store: Any, plan: str, status: str) -> None:
    """Add the finished stack's status to the running deployment's status record."""
    repo = PlanRepository(store)
    record = repo.deployment_status(plan) or {}
    repo.set_deployment_status(plan, {**record, "stack_status": status})


def live_heat(context: ActionContext, plan: str, work_dir: str,
              heat: dict[str, Any], need_stack: bool = False) -> HeatClient:
    """A client of the Heat this deployment launched.

    When that Heat is gone because the process that launched it is (a resumed
    execution after a ``kill -9``: the ephemeral Heat dies with its owner), it is
    launched again here on the database the killed run left (the stack as far as
    it got; Heat marks what was in progress FAILED), owned by this process, which
    also takes the plan's DEPLOYING record over.  With ``need_stack`` (the stack had
    finished), a Heat whose database did not outlive it (a pod's) is an error.
    """
    conf = context.conf if context.conf is not None else config.new_conf()
    launcher = make_launcher(conf, str(heat.get("heat_type") or "native"), work_dir)
    if launcher.status().running:
        return HeatClient(heat["endpoint"])
    LOG.warning("The Heat of %s is gone with the process that launched it; launching it "
                "again on the database it left to continue the deployment.", work_dir)
    endpoint = launcher.launch(owned_by="deploy", adopt=True)
    repo = PlanRepository(context.store)
    record = repo.deployment_status(plan) or {}
    if record.get("deployment_status") == "DEPLOYING":
        repo.set_deployment_status(plan, {**record, "owner": owner.current()})
    if not endpoint.adopted and need_stack:
        raise exceptions.HeatError(
            f"The Heat of {work_dir} died with the process that launched it and its "
            "database did not outlive it, so the stack this deployment finished is lost "
            "with it;", hints=[exceptions.Hint(
                "deploy again", f"deploy --plan {plan}",
                "POST /v1/workflows/tripleo.deploy.deploy/executions")])
    return HeatClient(endpoint.endpoint)


class _Follower:
    """Called by :meth:`HeatClient.wait` on each poll: logs and reports progress."""

    def __init__(self, client: HeatClient, plan: str, context: ActionContext) -> None:
        self.client, self.plan, self.context = client, plan, context
        self.seen: set[str] = set()
        self.last: tuple[str, int, int] | None = None

    def __call__(self, stack: dict[str, Any]) -> None:
        self.context.check_stop()  # Ctrl-C: this task fails, the deployment reverts
        status = str(stack.get("stack_status"))
        try:
            resources = self.client.resources(self.plan, stack["id"])
            listed = self.client.events(self.plan, stack["id"])
        except exceptions.HeatError as exc:
            # Listing nested resources while Heat writes them can fail for a moment
            # (e.g. 404 "ResourcePropertiesData ... not found"): progress is only
            # informative, the stack's own status decides, so skip this look.
            LOG.debug("Stack %s: no progress this time (%s)", self.plan, exc)
            return
        complete, total = progress.count_resources(resources)
        events = progress.new_events(listed, self.seen)
        report = progress.StackProgress(self.plan, status, complete, total, tuple(events))
        if (status, complete, total) != self.last:
            self.last = (status, complete, total)
            LOG.info("%s", report.line())
        for line in events:
            LOG.debug("%s", line)
        self.context.report(report)


class StartDeployment(Action):
    """Record the plan's deployment status DEPLOYING (refused while one runs).

    The record names this process (host, pid, start time): a DEPLOYING record
    whose process is gone (a crashed run) no longer blocks a new deployment.

    Run again while the process that recorded DEPLOYING lives, it refuses
    (DeploymentRunning); once that process is gone it records DEPLOYING again.
    """

    rerun = Rerun.REFUSES
    default_provides = names.DEPLOY_STARTED

    def execute(self, plan: str, work_dir: WorkDir, heat_type: str) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        if repo.journal(plan) is not None:  # a mixed tree must not reach Heat
            raise exceptions.PlanUpdateUnfinished(plan)
        previous = repo.deployment_status(plan)
        if previous and previous.get("deployment_status") == "DEPLOYING":
            recorded = previous.get("owner")
            if owner.liveness(recorded) != owner.GONE:
                raise exceptions.DeploymentRunning(plan, owner.describe(recorded))
            LOG.warning("Plan %s was left DEPLOYING by %s, which is gone; deploying again.",
                        plan, owner.describe(recorded))
        repo.set_deployment_status(plan, {
            "deployment_status": "DEPLOYING", "updated_at": _now(), "work_dir": work_dir,
            "heat_type": heat_type, "message": "", "failures": [],
            "owner": owner.current()})
        return {"previous": previous}

    def revert(self, plan: str, work_dir: str, heat_type: str, result: Any = None,
               flow_failures: Any = None, **kwargs: Any) -> None:
        """Record DEPLOY_FAILED with the failing task's reason (and failed resources)."""
        if not isinstance(result, dict):
            return
        reason, failures = _reason(flow_failures)
        repo = PlanRepository(self.context.store)
        status = {"deployment_status": "DEPLOY_FAILED", "updated_at": _now(),
                  "work_dir": work_dir, "heat_type": heat_type, "message": reason,
                  "failures": failures}
        kept = (repo.deployment_status(plan) or {}).get("stack_status")
        if kept:  # recorded by DeployStack when this run's stack finished
            status["stack_status"] = kept
            status["message"] = (
                f"{reason}. The stack is {kept} and was kept with its outputs: re-run only "
                f"the steps after it with: tripleo-flow deploy --plan {plan} "
                "--config-download-only")
        repo.set_deployment_status(plan, status)


class CheckPlan(Action):
    """Render a plan, compute its container image and deploy parameters, check that every
    parameter of its stack tree has a value, and save the stack request in the work dir.

    The result points at ``stack-request.json`` (path and sha256): the request
    holds every password.
    """

    rerun = Rerun.CONVERGES
    default_provides = names.STACK_REQUEST

    def execute(self, plan: str, work_dir: WorkDir) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        files = dict(repo.read_all(plan))
        files.update(rendering.render_plan(
            files, max_size=self.context.limit("render_max_size")))
        # The stack exists when the work dir holds a Heat dump (the launch restores it).
        action = "UPDATE" if HeatDir(work_dir).dump_file.exists() else "CREATE"
        checked = requests.deploy_request(plan, files, repo.environment(plan),
                                          int(time.time()), action)
        for warning in [*checked.images.warnings, *checked.risky]:
            LOG.warning("%s", warning)
        if checked.missing:
            raise exceptions.MissingParameters(plan, [str(m) for m in checked.missing])
        request = checked.request
        last = Path(work_dir) / ENVIRONMENT_FILE
        last_env = planenv.load_yaml(last.read_bytes(), str(last)) if last.exists() else None
        for warning in requests.check_against_last(request, last_env):
            LOG.warning("%s", warning)
        data = json.dumps(request, sort_keys=True).encode()
        backup = private_files.write(Path(work_dir), {REQUEST_FILE: data})
        return {**_pointer(Path(work_dir) / REQUEST_FILE, data), "backup": backup}

    def revert(self, plan: str, work_dir: str, result: Any = None, **kwargs: Any) -> None:
        """Put back the request of the stack the work dir keeps (or remove this one),
        unless this run's stack finished: then it describes the kept stack."""
        if not isinstance(result, dict) or "file" not in result:
            return
        if (PlanRepository(self.context.store).deployment_status(plan) or {}).get(
                "stack_status"):
            return
        if "backup" in result:
            private_files.restore(Path(work_dir), result["backup"])
        else:  # a result recorded before requests were backed up
            with contextlib.suppress(FileNotFoundError):
                Path(result["file"]).unlink()


class LaunchDeploymentHeat(Action):
    """Launch the work dir's ephemeral Heat (restored from the last dump for an update)."""

    rerun = Rerun.CONVERGES
    default_provides = names.HEAT

    def _launcher(self, work_dir: str, heat_type: str) -> Any:
        conf = self.context.conf if self.context.conf is not None else config.new_conf()
        return make_launcher(conf, heat_type, work_dir)

    def execute(self, work_dir: WorkDir, heat_type: str) -> dict[str, Any]:
        work = HeatDir(work_dir)
        restore = work.dump_file.exists()
        if restore:
            shutil.copy2(work.dump_file, work.root / PRE_DEPLOY_DUMP)
        # Owned by this deploy: Heat dies with it, and the next deploy cleans up after it.
        endpoint = self._launcher(work_dir, heat_type).launch(
            restore_db=restore, owned_by="deploy").as_dict()
        return {**endpoint, "restored": restore}

    def revert(self, work_dir: str, heat_type: str, result: Any = None,
               **kwargs: Any) -> None:
        """Stop Heat, dumping its database. When the stack did not finish, for an update
        that dump goes to heat-db-dump.failed.sql (kept for debugging) and the pre-update
        dump stays the current one; a finished stack (see :class:`DeployStack`) had the
        pre-update dump removed, so its own dump stays the current one."""
        work = HeatDir(work_dir)
        self._launcher(work_dir, heat_type).kill(dump=True)
        before = work.root / PRE_DEPLOY_DUMP
        if before.exists():
            if work.dump_file.exists():
                os.replace(work.dump_file, work.root / FAILED_DUMP)
            os.replace(before, work.dump_file)


class DeployStack(Action):
    """Create or update the plan's stack and follow it to COMPLETE or FAILED."""

    rerun = Rerun.CONVERGES
    default_provides = names.STACK

    def execute(self, plan: str, work_dir: WorkDir, stack_request: dict[str, Any],
                heat: dict[str, Any]) -> dict[str, Any]:
        stack_request = load_request(stack_request)
        client = live_heat(self.context, plan, work_dir, heat)
        existing = client.find_stack(plan)
        follow = _Follower(client, plan, self.context)
        # Run again after a kill (a resumed execution), the stack may be IN_PROGRESS with
        # nothing driving it: the update below takes it over (convergence steals the
        # dead engine's resource locks and retries them).
        action = "CREATE" if existing is None else "UPDATE"
        stack_request = requests.set_stack_action(stack_request, action)
        if existing is None:
            client.create_stack(stack_request)
        else:
            progress.new_events(client.events(plan, existing["id"]), follow.seen)  # old ones
            client.update_stack(plan, existing["id"], stack_request)
        stack = client.wait(plan, follow)
        status = str(stack["stack_status"])
        if status != f"{action}_COMPLETE":
            failures = client.failed_resources(plan, stack["id"])
            raise exceptions.StackFailed(plan, status,
                                         str(stack.get("stack_status_reason", "")), failures)
        self._keep(plan, work_dir, status)
        return {"id": stack["id"], "action": action, "status": status}

    def _keep(self, plan: str, work_dir: str, status: str) -> None:
        """The stack finished: from now on it replaces the pre-deploy dump whatever
        fails later, and the status record says so (for a failure's message)."""
        with contextlib.suppress(FileNotFoundError):
            (HeatDir(work_dir).root / PRE_DEPLOY_DUMP).unlink()
        _record_stack_status(self.context.store, plan, status)

    def revert(self, *args: Any, **kwargs: Any) -> None:
        """Nothing: the stack lives in the ephemeral Heat, whose launch revert dumps and
        drops it (a failed stack stays in the dump for debugging, a finished one stays
        the current stack)."""


class KeptStack(Action):
    """Check that the work dir holds a stack kept by an earlier deploy (its dump and
    stack request), for re-running the steps after the stack without changing it.

    Provides the stack request of the deploy that made the stack, so the outputs and
    environment saved next describe that stack.
    """

    rerun = Rerun.READS
    default_provides = names.STACK_REQUEST

    def execute(self, plan: str, work_dir: WorkDir) -> dict[str, Any]:
        PlanRepository(self.context.store).require(plan)
        heat = HeatDir(work_dir)
        request = Path(work_dir) / REQUEST_FILE
        if not heat.dump_file.exists() or not request.exists():
            raise exceptions.NoKeptStack(plan, str(work_dir))
        return _pointer(request, request.read_bytes())

    def revert(self, *args: Any, **kwargs: Any) -> None:
        """Nothing: only read."""


class CheckKeptStack(Action):
    """The restored stack must be the plan's finished stack (CREATE or UPDATE COMPLETE).

    It records the stack's status in the running deployment's status record (as
    :class:`DeployStack` does): run again, it records the same.
    """

    rerun = Rerun.CONVERGES
    default_provides = names.STACK

    def execute(self, plan: str, heat: dict[str, Any]) -> dict[str, Any]:
        stack = HeatClient(heat["endpoint"]).find_stack(plan)
        status = str((stack or {}).get("stack_status", "missing"))
        if stack is None or status not in ("CREATE_COMPLETE", "UPDATE_COMPLETE"):
            raise exceptions.StackNotFinished(plan, status)
        _record_stack_status(self.context.store, plan, status)
        return {"id": stack["id"], "action": status.split("_")[0], "status": status}

    def revert(self, *args: Any, **kwargs: Any) -> None:
        """Nothing: the recorded status describes the kept stack, which stays."""


class SaveStackOutputs(Action):
    """Save the stack outputs, the servers' deployments and network configs (the software
    configs the outputs name, :mod:`~tripleo_flow.core.network_config`) and the
    environment in the work dir.

    The result points at ``outputs.yaml`` (they hold passwords) and names the
    private copies of the files it replaced.
    """

    rerun = Rerun.CONVERGES
    default_provides = names.STACK_OUTPUTS

    def execute(self, plan: str, work_dir: WorkDir, heat: dict[str, Any],
                stack_request: dict[str, Any]) -> dict[str, Any]:
        stack_request = load_request(stack_request)
        client = live_heat(self.context, plan, work_dir, heat, need_stack=True)
        outputs = client.outputs(plan)
        configs: dict[str, dict[str, Any]] = {}
        deployments: dict[str, list[dict[str, Any]]] = {}
        def config(cid: str) -> dict[str, Any]:
            if cid not in configs:
                configs[cid] = client.software_config(cid)
            return configs[cid]

        servers = config_download.servers_from_outputs(outputs)
        for server in servers:  # deployments on real servers (the sample plan's)
            deployments[server.name] = [
                {"name": config(dep["config_id"]).get("name") or dep["id"], "id": dep["id"],
                 "config": config(dep["config_id"]).get("config"),
                 "group": config(dep["config_id"]).get("group", "script"),
                 "inputs": dep.get("input_values") or {}}
                for dep in client.deployments(server.server_id)]
        stack = client.find_stack(plan) or {}
        stubs = client.resources(plan, stack["id"], core_deployments.NESTED_DEPTH,
                                 with_detail=True, resource_name=core_deployments.RESOURCE_NAME
                                 ) if stack.get("id") else []
        for found in core_deployments.found_in(stubs, {s.server_id: s.name for s in servers}):
            cfg = config(found.config_id) if found.config_id else {}
            deployments[found.server].append(
                {"name": found.name, "id": found.deployment_id, "kind": found.kind,
                 "config": cfg.get("config"), "group": cfg.get("group", "script"),
                 "options": cfg.get("options") or {}, "inputs": dict(found.inputs)})
        network_configs = {cid: config(cid).get("config")
                           for cid in network_config.config_ids(outputs)}
        environment = {"parameters": requests.effective_parameters(stack_request),
                       "environment_files": stack_request["environment_files"]}
        saved = {OUTPUTS_FILE: planenv.dump_yaml({"outputs": outputs,
                                                  "deployments": deployments,
                                                  "network_configs": network_configs}),
                 ENVIRONMENT_FILE: planenv.dump_yaml(environment)}
        backup = private_files.write(Path(work_dir), saved)
        return {**_pointer(Path(work_dir) / OUTPUTS_FILE, saved[OUTPUTS_FILE]),
                "servers": sorted(deployments), "backup": backup}

    def revert(self, work_dir: str, result: Any = None, **kwargs: Any) -> None:
        """Nothing: saved, the outputs describe the finished stack, which is kept (a
        failure while saving them replaced nothing: each file is written atomically)."""


def _connection(conf: Any, ssh_user: str | None,
                ssh_key: str | None) -> config_download.Connection:
    """The SSH user and key of the inventory: the deploy's, else ``[ansible]``'s."""
    user = ssh_user or (conf.ansible.ssh_user if conf is not None else None)
    key = ssh_key or (conf.ansible.ssh_private_key if conf is not None else None)
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
    default_provides = names.CONFIG_DOWNLOAD

    def execute(self, plan: str, work_dir: WorkDir, stack_outputs: dict[str, Any],
                overcloud_ssh_user: str | None = None,
                overcloud_ssh_key: InputPath | None = None) -> dict[str, Any]:
        connection = _connection(self.context.conf, overcloud_ssh_user, overcloud_ssh_key)
        if "file" in stack_outputs:  # a pointer to outputs.yaml (older results held them)
            stack_outputs = planenv.load_yaml(_read(stack_outputs), OUTPUTS_FILE)
        deployments = {server: [config_download.Deployment(**d) for d in deps]
                       for server, deps in stack_outputs["deployments"].items()}
        files = config_download.render(plan, stack_outputs["outputs"], deployments,
                                       connection=connection,
                                       network_configs=stack_outputs.get("network_configs"))
        repo = git_dir.GitDir(Path(work_dir) / CONFIG_DIR)
        if repo.path.exists() and not repo.path.is_dir():
            raise exceptions.InvalidInput(
                f"{repo.path} is not a directory, so config-download cannot be written "
                "there: move it away and re-run.")
        previous = repo.head()
        repo.replace_files(files)
        commit = repo.commit(f"Deployment of plan {plan} at {_now()}")
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


class FinishDeployment(Action):
    """Record the plan's deployment status DEPLOY_SUCCESS."""

    rerun = Rerun.CONVERGES
    default_provides = names.DEPLOY_FINISHED

    def execute(self, plan: str, work_dir: WorkDir, heat_type: str,
                config_download: dict[str, Any]) -> dict[str, Any]:
        kept = PlanRepository(self.context.store).deployment_status(plan) or {}
        status = {"deployment_status": "DEPLOY_SUCCESS", "updated_at": _now(),
                  "work_dir": work_dir, "heat_type": heat_type, "message": "",
                  "failures": [], "config_download": config_download["path"],
                  "commit": config_download["commit"],
                  "stack_status": kept.get("stack_status", "")}
        PlanRepository(self.context.store).set_deployment_status(plan, status)
        return status
