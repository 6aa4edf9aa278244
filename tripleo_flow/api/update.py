"""Minor update operations of the Python API (mixed into :class:`tripleo_flow.api.Client`):
``overcloud update prepare``, ``run`` and ``converge``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow.api import workbooks
from tripleo_flow.api.deploy import stack_progress_events
from tripleo_flow.core import update
from tripleo_flow.core.progress import ProgressListener
from tripleo_flow.plans.plan import check_plan_name

if TYPE_CHECKING:
    from tripleo_flow.flows.executions import Execution
    from tripleo_flow.flows.runner import Listener


class UpdateMixin:
    """Prepare, run and converge a minor update of a deployment."""

    data_dir: Path

    if TYPE_CHECKING:
        def run_operation(self, name: str, inputs: Mapping[str, Any],
                          listeners: Iterable[Listener] = (),
                          interruptible: str | None = None) -> Execution: ...

    def _work(self, plan: str, work_dir: str | Path | None) -> str:
        check_plan_name(plan)
        work = Path(work_dir) if work_dir else self.data_dir / "deployments" / plan
        return str(work.expanduser().absolute())

    def update_prepare(self, plan: str, work_dir: str | Path | None = None,
                       heat_type: str = "native",
                       progress: ProgressListener | None = None) -> dict[str, Any]:
        """Prepare a minor update of ``plan``'s deployment, as TripleO's ``overcloud
        update prepare``: the workflow ``tripleo.update.prepare`` (named, persisted,
        resumable) puts THT's ``environments/lifecycle/update-prepare.yaml`` in the plan
        before the operator's environments and deploys the plan (stack update,
        outputs, config-download; no playbook).

        :returns: the DEPLOY_SUCCESS status record of the deploy.
        :raises InvalidInput: the plan's templates have no update-prepare.yaml.
        """
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir),
                  "heat_type": heat_type}
        listeners = [] if progress is None else [stack_progress_events(progress)]
        execution = self.run_operation(workbooks.UPDATE_PREPARE, inputs, listeners,
                                       interruptible=f"Update prepare of plan {plan!r}")
        return dict((execution.output or {})["deployment"])

    def update_run(self, plan: str, limit: str, playbooks: Sequence[str] | None = None,
                   work_dir: str | Path | None = None, ansible_tags: str | None = None,
                   ansible_skip_tags: str | None = None,
                   ansible_connection: str | None = None) -> dict[str, Any]:
        """Run the minor update playbooks of ``plan`` on the hosts or roles ``limit``
        (required), as TripleO's ``overcloud update run``: config-download's
        ``update_steps_playbook.yaml``, or ``playbooks`` one after another.

        :returns: ``playbooks``, ``limit`` (as ansible-playbook got it) and ``runs``.
        :raises UpdateNotPrepared: no update prepare since the last converge.
        :raises InvalidInput: no limit, or a playbook that is not a file name.
        """
        update.parse_limit(limit)
        chosen = update.playbooks(list(playbooks) if playbooks is not None else None)
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir), "limit": limit,
                  "playbooks": chosen, "ansible_tags": ansible_tags,
                  "ansible_skip_tags": ansible_skip_tags,
                  "ansible_connection": ansible_connection}
        execution = self.run_operation(workbooks.UPDATE_RUN, inputs,
                                       interruptible=f"Update run of plan {plan!r}")
        output = dict(execution.output or {})
        return {"playbooks": list(output["playbooks"]), "limit": output["limit"],
                "runs": list(output.get("runs") or [])}

    def update_converge(self, plan: str, work_dir: str | Path | None = None,
                        heat_type: str = "native", run_ansible: bool = True,
                        ansible_connection: str | None = None,
                        ansible_tags: str | None = None,
                        ansible_skip_tags: str | None = None,
                        ansible_limit: str | None = None,
                        progress: ProgressListener | None = None) -> dict[str, Any]:
        """Converge a minor update of ``plan``, as TripleO's ``overcloud update
        converge``: the workflow ``tripleo.update.converge`` takes update-prepare.yaml
        out of the plan (update-converge.yaml in its place where the templates have
        it) and deploys the plan [running the deploy steps playbook].

        :returns: the DEPLOY_SUCCESS status record of the deploy.
        """
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir),
                  "heat_type": heat_type, "run_ansible": run_ansible,
                  "ansible_connection": ansible_connection, "ansible_tags": ansible_tags,
                  "ansible_skip_tags": ansible_skip_tags, "ansible_limit": ansible_limit}
        listeners = [] if progress is None else [stack_progress_events(progress)]
        execution = self.run_operation(workbooks.UPDATE_CONVERGE, inputs, listeners,
                                       interruptible=f"Update converge of plan {plan!r}")
        return dict((execution.output or {})["deployment"])


__all__ = ["UpdateMixin"]
