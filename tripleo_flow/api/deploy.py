"""Deployment operations of the Python API (mixed into :class:`tripleo_flow.api.Client`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.actions.deploy import PROGRESS_LISTENER
from tripleo_flow.core import validations as core_validations
from tripleo_flow.core.progress import ProgressListener
from tripleo_flow.flows import names
from tripleo_flow.flows import plan as plan_flows
from tripleo_flow.flows.deploy import config_download_only as cd_only_flow
from tripleo_flow.flows.deploy import deploy_plan
from tripleo_flow.flows.run import run_flow
from tripleo_flow.plans.plan import PlanRepository, check_plan_name
from tripleo_flow.workspace import owner
from tripleo_flow.workspace.interrupt import Interruption

if TYPE_CHECKING:
    from tripleo_flow.actions.base import ActionContext
    from tripleo_flow.api.environments import EnvironmentSource
    from tripleo_flow.flows.runner import Listener
    from tripleo_flow.plans.store import PlanStore


class DeployMixin:
    """Deploy a plan; read its deployment status and failures."""

    context: ActionContext
    store: PlanStore
    data_dir: Path

    if TYPE_CHECKING:
        def set_environments(self, name: str,
                             environments: Sequence[EnvironmentSource]) -> list[str]: ...

        def run_validations(self, validations: Sequence[str] | None = None,
                            group: str | None = None, plan: str | None = None,
                            inventory: str | Path | None = None,
                            extra_vars: Mapping[str, Any] | None = None,
                            require_passed: bool = False,
                            listeners: Iterable[Listener] | None = None) -> dict[str, Any]: ...

    def deploy(self, plan: str, heat_type: str = "native",
               work_dir: str | Path | None = None,
               progress: ProgressListener | None = None, run_ansible: bool = False,
               ansible_connection: str | None = None,
               environments: Sequence[EnvironmentSource] | None = None,
               baremetal_deployment: str | Path | None = None,
               config_download_only: bool = False, ansible_tags: str | None = None,
               ansible_skip_tags: str | None = None,
               ansible_limit: str | None = None, overcloud_ssh_user: str | None = None,
               overcloud_ssh_key: str | Path | None = None,
               run_validations: bool = False) -> dict[str, Any]:
        """Deploy ``plan`` with an ephemeral Heat of ``heat_type``.

        :param work_dir: where Heat's dump, the outputs and config-download go
            (default: ``<data_dir>/deployments/<plan>``).
        :param progress: called on each look at the stack while it is followed, with a
            :class:`~tripleo_flow.core.progress.StackProgress` (resources complete/total
            and the events since the last call).
        :param run_ansible: after config-download, run its deploy steps playbook with
            ansible-playbook (needs the ``ansible`` extra); its output goes to
            ``<work_dir>/ansible.log``.
        :param ansible_connection: give every inventory host this Ansible connection
            (``local`` runs the playbook on this machine, as for the sample plan).
        :param ansible_tags: run only the tasks with these tags (``ansible-playbook
            --tags``, comma-separated), as ``ansible_skip_tags`` (``--skip-tags``) and
            ``ansible_limit`` (``--limit``, hosts or groups) select what runs.
        :param overcloud_ssh_user: the user Ansible logs in to the servers as, named by
            config-download's inventory and ``ansible.cfg`` (default: ``[ansible]
            ssh_user``, ``tripleo-admin``).
        :param overcloud_ssh_key: the private key file it logs in with (default:
            ``[ansible] ssh_private_key``, else none named: Ansible's own); its path
            goes into the project, never its content.
        :param environments: when given, they first become the plan's user environments
            (a plan change with history, as :meth:`set_environments`; nothing changes
            when they are those already stored).
        :param baremetal_deployment: TripleO's baremetal deployment file (a path, or its
            YAML text) describing pre-provisioned servers (``managed: false``): first
            the plan's deployed-servers environment is generated from it (addresses
            on the ``[ctlplane]`` subnet, kept across redeploys; VIP; host names;
            role counts) as :meth:`update_deployed_servers` does.
        :param config_download_only: neither create nor update the stack: restore the
            stack an earlier deploy kept in the work dir, save its outputs, write
            config-download (and run Ansible with ``run_ansible``). This re-runs what
            failed after a finished stack; the plan is not read, so ``environments``
            and ``baremetal_deployment`` are refused with it.
:param run_validations: first run the ``pre-deployment`` validations group on this
            machine (workflow ``tripleo.validations.run``, results kept with the plan);
            a failed validation stops the deployment before anything changes.
        :returns: the DEPLOY_SUCCESS status record.
        :raises StackFailed: the stack failed (each failed resource listed);
            like any other failure, everything was reverted and the status is
            DEPLOY_FAILED with the reason.
:raises WorkflowFailed: with ``run_validations``, a validation failed (each one's
            reasons in the message); nothing was deployed.
        :raises Interrupted: SIGINT or SIGTERM arrived (called from the main thread):
            the running task failed with it, so everything was reverted as above.
        """
        check_plan_name(plan)
        if not run_ansible and (ansible_tags or ansible_skip_tags or ansible_limit):
            raise exceptions.InvalidInput(
                "Ansible tags, skipped tags and limit select what the playbook runs: "
                "give them with --run-ansible.")
        if config_download_only and (baremetal_deployment is not None or environments):
            raise exceptions.InvalidInput(
                "--config-download-only re-renders the kept stack without reading the "
                "plan: leave out -e and --baremetal-deployment (or deploy without "
                "--config-download-only to apply them).")
        if run_validations:
            self.run_validations(group=core_validations.PRE_DEPLOYMENT, plan=plan,
                                 inventory=core_validations.LOCALHOST, require_passed=True)
        if baremetal_deployment is not None:
            self.update_deployed_servers(plan, baremetal_deployment)
        if environments:
            self.set_environments(plan, environments)
        work = Path(work_dir) if work_dir else self.data_dir / "deployments" / plan
        work = work.expanduser().absolute()
        context = self.context
        if progress is not None:
            context = dataclasses.replace(
                context, extras={**context.extras, PROGRESS_LISTENER: progress})
        ssh_key = (str(Path(overcloud_ssh_key).expanduser().absolute())
                   if overcloud_ssh_key else None)
        make = cd_only_flow if config_download_only else deploy_plan
        flow = make(context, run_ansible=run_ansible)
        interruption = Interruption(f"Deployment of plan {plan!r}")
        interruption.guard(flow)
        with interruption.installed():
            results = run_flow(flow, {
                names.PLAN: plan, names.WORK_DIR: str(work), names.HEAT_DIR: str(work),
                names.HEAT_TYPE: heat_type, names.ANSIBLE_CONNECTION: ansible_connection,
                names.ANSIBLE_TAGS: ansible_tags, names.ANSIBLE_SKIP_TAGS: ansible_skip_tags,
                names.ANSIBLE_LIMIT: ansible_limit,
                names.OVERCLOUD_SSH_USER: overcloud_ssh_user,
                names.OVERCLOUD_SSH_KEY: ssh_key})
        finished: dict[str, Any] = results[names.DEPLOY_FINISHED]
        return finished

    def update_deployed_servers(self, plan: str,
                                baremetal_deployment: str | Path) -> dict[str, Any]:
        """Generate the plan's deployed-servers environment from a baremetal deployment
        file (a local path, or the file's YAML text) and enable it.

        :returns: ``path``, ``counts`` (servers per role), ``hosts`` and ``changed``.
        """
        check_plan_name(plan)
        text = read_baremetal(baremetal_deployment)
        results = run_flow(plan_flows.update_deployed_servers(self.context),
                           {names.PLAN: plan, names.BAREMETAL_DEPLOYMENT: text})
        done: dict[str, Any] = results[names.DEPLOYED_SERVERS]
        return {k: done[k] for k in ("path", "counts", "hosts", "changed")}

    def deployment_status(self, plan: str) -> dict[str, Any]:
        """The plan's last deployment status (``deployment_status`` is NONE if never).

        While DEPLOYING, ``process`` names the deploying process and whether it is
        ``running``, ``gone`` or ``unknown`` (another host's).  A record left
        DEPLOYING by a process that is gone (killed, crashed) is shown as
        ``DEPLOY_INTERRUPTED``: nothing runs it any more, and a new deploy is allowed
        (it also stops the Heat such a run may have left).
        """
        repo = PlanRepository(self.store)
        repo.require(plan)
        status = repo.deployment_status(plan)
        if status is None:
            return {"plan": plan, "deployment_status": "NONE", "message": "", "updated_at": ""}
        shown = {"plan": plan, **{k: v for k, v in status.items()
                                  if k not in ("failures", "owner")}}
        if status.get("deployment_status") == "DEPLOYING":
            recorded = status.get("owner")
            state = owner.liveness(recorded)
            shown["process"] = f"{owner.describe(recorded)} ({state})"
            if state == owner.GONE:
                shown["deployment_status"] = "DEPLOY_INTERRUPTED"
                shown["message"] = ("The process deploying this plan is gone (it crashed or "
                                    "was killed); deploy again to replace this deployment.")
        return shown

    def deployment_failures(self, plan: str) -> list[dict[str, str]]:
        """The resources that failed in the plan's last deployment, with their reasons."""
        repo = PlanRepository(self.store)
        repo.require(plan)
        status = repo.deployment_status(plan) or {}
        failures = list(status.get("failures") or [])
        if not failures and status.get("deployment_status") == "DEPLOY_FAILED":
            failures = [{"stack": plan, "resource": "", "type": "",
                         "status": "DEPLOY_FAILED", "reason": str(status.get("message", ""))}]
        return failures


__all__ = ["DeployMixin"]


def read_baremetal(source: str | os.PathLike[str]) -> str:
    """A baremetal deployment file's text: ``source`` is a path, or YAML text
    (several lines, or a YAML list)."""
    if isinstance(source, str) and ("\n" in source or source.lstrip().startswith("-")):
        return source
    path = Path(source).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise exceptions.InvalidInput(
            f"Cannot read the baremetal deployment file {str(path)!r}: {why}.") from exc
