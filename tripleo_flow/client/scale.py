"""Scale-down operations of the Python API (mixed into :class:`tripleo_flow.client.Client`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.client.deploy import read_baremetal, stack_progress_events
from tripleo_flow.core.deploy.progress import ProgressListener
from tripleo_flow.plans.plan import check_plan_name

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.runner import Listener
    from tripleo_flow.engine.store.executions import Execution

DELETE_NODES = workbooks.DELETE_NODES


class ScaleMixin:
    """Remove chosen servers from a deployment."""

    data_dir: Path

    if TYPE_CHECKING:
        def deployment_status(self, plan: str) -> dict[str, Any]: ...

        def run_operation(self, name: str, inputs: Mapping[str, Any],
                          listeners: Iterable[Listener] = (),
                          interruptible: str | None = None) -> Execution: ...

    def deployment_servers(self, plan: str) -> dict[str, list[str]]:
        """The servers of ``plan``'s last deployment: host names by role, as
        :meth:`delete_overcloud_nodes` takes them (read from the work dir the deploy
        recorded, else ``<data_dir>/deployments/<plan>``).

        :raises NoKeptStack: the plan has no deployment kept there.
        """
        from tripleo_flow.actions.scale import kept_servers

        check_plan_name(plan)
        recorded = self.deployment_status(plan).get("work_dir")
        work = Path(recorded) if recorded else self.data_dir / "deployments" / plan
        return kept_servers(work, plan)

    def delete_overcloud_nodes(self, plan: str, hosts: Sequence[str] = (),
                               baremetal_deployment: str | os.PathLike[str] | None = None,
                               work_dir: str | Path | None = None,
                               heat_type: str | None = None,
                               run_ansible: bool = True, ansible_connection: str | None = None,
                               progress: ProgressListener | None = None) -> dict[str, Any]:
        """Remove the servers ``hosts`` (host names) from the deployment of ``plan``, as
        TripleO's ``overcloud node delete``.

        Runs the workflow ``tripleo.scale.delete_nodes`` (a named execution, persisted;
        ``execution resume`` continues one a crash left behind): each host's member of
        its role's ResourceGroup is found in the deployment kept in ``work_dir``, the
        scale-down playbook runs on those servers only (``run_ansible``), the plan gets
        ``{Role}Count``, ``{Role}RemovalPolicies`` (merged with earlier ones) and
        ``{Role}RemovalPoliciesMode: append``, and the plan is deployed again.

        :param baremetal_deployment: instead of ``hosts``, TripleO's baremetal
            deployment file (a path, or its YAML text): the servers to remove are its
            instances marked ``provisioned: false`` (an Ironic node of a managed one is
            not undeployed here: ``unprovision_nodes`` does that).
        :param work_dir: the deployment's work dir (default:
            ``<data_dir>/deployments/<plan>``, as :meth:`deploy`).
        :returns: ``deployment`` (the DEPLOY_SUCCESS status record), ``removed`` (host
            name -> role and group member) and ``parameters`` (what was set).
        :raises ServersNotInStack: a host is not a server of the stack; nothing changed.
        """
        check_plan_name(plan)
        if isinstance(hosts, str) or bool(hosts) == (baremetal_deployment is not None):
            raise exceptions.InvalidInput(
                "Name the servers to delete: a list of host names, or a baremetal "
                "deployment file (its instances marked provisioned: false), not both.")
        work = Path(work_dir) if work_dir else self.data_dir / "deployments" / plan
        inputs = {"plan": plan, "hosts": list(hosts) or None, "heat_type": heat_type,
                  "baremetal_deployment": (None if baremetal_deployment is None
                                           else read_baremetal(baremetal_deployment)),
                  "work_dir": str(work.expanduser().absolute()), "run_ansible": run_ansible,
                  "ansible_connection": ansible_connection}
        listeners = [] if progress is None else [stack_progress_events(progress)]
        execution = self.run_operation(DELETE_NODES, inputs, listeners,
                                       interruptible=f"Scale-down of plan {plan!r}")
        output = dict(execution.output or {})
        return {"deployment": dict(output["deployment"]), "removed": dict(output["removed"]),
                "parameters": dict(output["parameters"])}


__all__ = ["ScaleMixin"]
