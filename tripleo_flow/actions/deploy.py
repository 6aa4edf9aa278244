"""Deployment actions: the deployment's status record (start, finish) and its work dir.

The steps between: the ephemeral Heat is :mod:`tripleo_flow.actions.deploy_heat`; the
plan check and the stack, :mod:`tripleo_flow.actions.deploy_stack`; the outputs and
config-download, :mod:`tripleo_flow.actions.deploy_outputs`.

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

import datetime
import hashlib
import logging
from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.core.deploy import run_options, update
from tripleo_flow.engine.lang.action import WorkDir
from tripleo_flow.heat import resolve_type
from tripleo_flow.plans.plan import PlanRepository, check_plan_name
from tripleo_flow.workspace import owner

LOG = logging.getLogger(__name__)
OUTPUTS_FILE = "outputs.yaml"
ENVIRONMENT_FILE = "environment.yaml"
REQUEST_FILE = "stack-request.json"
CONFIG_DIR = "config-download"


def timestamp() -> str:
    """Now, as an ISO 8601 UTC timestamp to the second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def pointer(path: Path, data: bytes) -> dict[str, str]:
    """What a result keeps of a work-dir file that holds secrets: where it is, its digest."""
    return {"file": str(path), "sha256": hashlib.sha256(data).hexdigest()}


def read_pointer(ref: dict[str, Any]) -> bytes:
    """The content of a :func:`pointer` file, checked against its digest."""
    path = Path(ref["file"])
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    if hashlib.sha256(data).hexdigest() != ref["sha256"]:
        raise exceptions.InvalidInput(
            f"{path} is missing or changed since this deployment wrote it; "
            "deploy again instead of resuming.")
    return data


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


class CheckDeployInputs(Action):
    """Refuse a deployment whose inputs contradict each other, before anything changes.

    The first task of both deploy workflows: the CLI, the Python API, the HTTP API
    and the GUI start the same workflow, so the rules hold whichever starts it.
    """

    rerun = Rerun.READS

    def execute(self, plan: str, run_ansible: bool = False, ansible_tags: str | None = None,
                ansible_skip_tags: str | None = None,
                ansible_limit: str | None = None,
                lifecycle: str | None = None,
                ansible_forks: int | None = None,
                ansible_verbosity: int | None = None,
                config_download_only: bool = False,
                user_environments: list[Any] | None = None,
                baremetal_deployment: str | None = None) -> dict[str, Any]:
        """:param config_download_only: the workflow re-renders the kept stack without
            reading the plan (``tripleo.deploy.config_download_only``): user
            environments or a baremetal deployment given to it are refused."""
        check_plan_name(plan)
        run_options.check_forks(ansible_forks)
        run_options.check_verbosity(ansible_verbosity)
        if lifecycle is not None:
            update.lifecycle(lifecycle)  # update or upgrade
        if not run_ansible and (ansible_tags or ansible_skip_tags or ansible_limit):
            raise exceptions.InvalidInput(
                "Ansible tags, skipped tags and limit select what the playbook runs: "
                "give them with --run-ansible (run_ansible: true).")
        if config_download_only and (user_environments or baremetal_deployment is not None):
            raise exceptions.InvalidInput(
                "--config-download-only re-renders the kept stack without reading the "
                "plan: leave out -e, --environment-directory and --baremetal-deployment "
                "(or deploy without --config-download-only to apply them).")
        return {"plan": plan}


class StartDeployment(Action):
    """Record the plan's deployment status DEPLOYING (refused while one runs).

    The record names this process (host, pid, start time): a DEPLOYING record
    whose process is gone (a crashed run) no longer blocks a new deployment.

    Run again while the process that recorded DEPLOYING lives, it refuses
    (DeploymentRunning); once that process is gone it records DEPLOYING again.
    """

    rerun = Rerun.REFUSES

    def execute(self, plan: str, work_dir: WorkDir,
                heat_type: str | None = None) -> dict[str, Any]:
        """:param heat_type: none: the type the deployment in ``work_dir`` was made with
            (:func:`tripleo_flow.heat.resolve_type`), else ``[heat] heat_type``; the
            result's ``heat_type`` is the one used (the workflow publishes it)."""
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        if repo.update_unfinished(plan):  # a mixed or unrendered tree must not reach Heat
            raise exceptions.PlanUpdateUnfinished(plan)
        previous = repo.deployment_status(plan)
        if previous and previous.get("deployment_status") == "DEPLOYING":
            recorded = previous.get("owner")
            if owner.liveness(recorded) != owner.GONE:
                raise exceptions.DeploymentRunning(plan, owner.describe(recorded))
            LOG.warning("Plan %s was left DEPLOYING by %s, which is gone; deploying again.",
                        plan, owner.describe(recorded))
        deployed = (previous.get("heat_type") if previous
                    and previous.get("work_dir") == work_dir else None)
        conf = self.context.conf
        heat_type = resolve_type(conf, heat_type, work_dir, deployed)
        repo.set_deployment_status(plan, {
            "deployment_status": "DEPLOYING", "updated_at": timestamp(), "work_dir": work_dir,
            "heat_type": heat_type, "message": "", "failures": [],
            "owner": owner.current()})
        return {"previous": previous, "heat_type": heat_type}

    def revert(self, plan: str, work_dir: str, heat_type: str | None = None,
               result: Any = None, flow_failures: Any = None, **kwargs: Any) -> None:
        """Record DEPLOY_FAILED with the failing task's reason (and failed resources)."""
        if not isinstance(result, dict):
            return
        reason, failures = _reason(flow_failures)
        repo = PlanRepository(self.context.store)
        status = {"deployment_status": "DEPLOY_FAILED", "updated_at": timestamp(),
                  "work_dir": work_dir, "heat_type": result.get("heat_type", heat_type),
                  "message": reason,
                  "failures": failures}
        kept = (repo.deployment_status(plan) or {}).get("stack_status")
        if kept:  # recorded by DeployStack when this run's stack finished
            status["stack_status"] = kept
            # kept as text, in the CLI's words (a status has no hints)
            status["message"] = f"{reason}. The stack is {kept} and was kept with its " \
                "outputs: re-run only the steps after it with:" + exceptions.Hint(
                    "", "deploy.config_download_only", {"plan": plan}).words()
        repo.set_deployment_status(plan, status)


class FinishDeployment(Action):
    """Record the plan's deployment status DEPLOY_SUCCESS."""

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, work_dir: WorkDir, heat_type: str | None,
                config_download: dict[str, Any]) -> dict[str, Any]:
        kept = PlanRepository(self.context.store).deployment_status(plan) or {}
        status = {"deployment_status": "DEPLOY_SUCCESS", "updated_at": timestamp(),
                  "work_dir": work_dir, "heat_type": heat_type, "message": "",
                  "failures": [], "config_download": config_download["path"],
                  "commit": config_download["commit"],
                  "stack_status": kept.get("stack_status", "")}
        PlanRepository(self.context.store).set_deployment_status(plan, status)
        return status
