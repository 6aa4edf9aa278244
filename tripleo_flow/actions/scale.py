"""Scale-down action: which servers leave and the parameters that remove them
(:mod:`tripleo_flow.core.deploy.scale`), read from the deployment kept in the work dir.

The playbook run on the leaving servers is ``deploy.run_ansible``; the parameters are
set with ``parameters.update``; the stack update is the deploy workflow: the
workflow ``tripleo.scale.delete_nodes`` composes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.actions.deploy import CONFIG_DIR, ENVIRONMENT_FILE, OUTPUTS_FILE
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.deploy import scale
from tripleo_flow.engine.lang.action import WorkDir
from tripleo_flow.plans.plan import PlanRepository
from tripleo_flow.workspace import owner


def _saved(work: Path, name: str, plan: str) -> dict[str, Any]:
    path = work / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise exceptions.NoKeptStack(plan, str(work)) from None
    return dict(safe_yaml.load_yaml(data, str(path)) or {})


def kept_servers(work: Path, plan: str) -> dict[str, list[str]]:
    """The host names, by role, of the deployment kept in ``work`` (its outputs).

    :raises NoKeptStack: nothing was deployed there.
    """
    return scale.stack_servers(_saved(work, OUTPUTS_FILE, plan).get("outputs") or {})


class SelectServers(Action):
    """Find the role group members of the servers to delete (by host name, or those a
    baremetal deployment file marks ``provisioned: false``) in the deployment kept in
    ``work_dir``, and the parameters that remove them.

    Refused, with nothing changed, when the plan is being deployed, nothing was
    deployed in ``work_dir``, or a host is not a server of the stack.
    """

    rerun = Rerun.READS

    def execute(self, plan: str, work_dir: WorkDir, hosts: list[str] | None = None,
                baremetal_deployment: str | None = None) -> dict[str, Any]:
        if (hosts is None) == (baremetal_deployment is None):
            raise exceptions.InvalidInput(
                "Name the servers to delete either by host name or with a baremetal "
                "deployment file (its instances marked provisioned: false), not both.")
        if baremetal_deployment is not None:
            hosts = scale.unprovisioned_hosts(
                safe_yaml.load_yaml(baremetal_deployment.encode(), "baremetal deployment"))
            if not hosts:
                raise exceptions.InvalidInput(
                    "No instance of the baremetal deployment file is marked provisioned: "
                    "false: there is nothing to delete.")
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            raise exceptions.InvalidInput("hosts must be a list of host names.")
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        status = repo.deployment_status(plan) or {}
        if status.get("deployment_status") == "DEPLOYING":
            recorded = status.get("owner")
            if owner.liveness(recorded) != owner.GONE:
                raise exceptions.DeploymentRunning(plan, owner.describe(recorded))
        work = Path(work_dir)
        outputs = _saved(work, OUTPUTS_FILE, plan).get("outputs") or {}
        parameters = _saved(work, ENVIRONMENT_FILE, plan).get("parameters") or {}
        members = scale.select(hosts, outputs, parameters, plan)
        return {"hosts": [m.hostname for m in members],
                "members": {m.hostname: {"role": m.role, "resource": m.resource}
                            for m in members},
                "parameters": scale.removal_parameters(members, outputs, parameters),
                "limit": scale.ansible_limit(members),
                "config_download": {"path": str(work / CONFIG_DIR)}}
