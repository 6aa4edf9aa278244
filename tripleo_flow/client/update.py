"""Minor update and major upgrade operations of the Python API (``client.updates`` and
``client.upgrades``, one :class:`LifecycleManager` each): ``overcloud update prepare|run|converge``,
``overcloud upgrade prepare|run|converge``, ``external-update run`` and
``external-upgrade run``, each one named workflow (``workbooks/update.yaml``,
``workbooks/upgrade.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.client.base import Manager
from tripleo_flow.client.deploy import stack_progress_events
from tripleo_flow.core.deploy import run_options, update
from tripleo_flow.core.deploy.progress import ProgressListener
from tripleo_flow.plans.plan import check_plan_name

if TYPE_CHECKING:
    from tripleo_flow.client.deploy import DeploymentManager
    from tripleo_flow.client.session import Session
    pass

#: The workflows of each kind: prepare, run, converge, external run.
_WORKFLOWS = {
    "update": (workbooks.UPDATE_PREPARE, workbooks.UPDATE_RUN, workbooks.UPDATE_CONVERGE,
               workbooks.EXTERNAL_UPDATE_RUN),
    "upgrade": (workbooks.UPGRADE_PREPARE, workbooks.UPGRADE_RUN,
                workbooks.UPGRADE_CONVERGE, workbooks.EXTERNAL_UPGRADE_RUN),
}


def _read_local(path: str) -> str:
    """An ``-e @FILE`` of the caller's machine (read here, never by a workflow)."""
    try:
        return Path(path).expanduser().read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise exceptions.InvalidInput(f"Cannot read extra vars file {path!r}: {exc}") from exc


def _run_options(forks: int | None, ssh_user: str | None,
                 static_inventory: str | Path | None,
                 verbosity: int | None = None) -> dict[str, Any]:
    """The run's Ansible options as workflow inputs, checked before anything runs."""
    inventory = (str(Path(static_inventory).expanduser().absolute())
                 if static_inventory else None)
    return {"ansible_forks": run_options.check_forks(forks),
            "ansible_verbosity": run_options.check_verbosity(verbosity),
            "ssh_user": run_options.check_ssh_user(ssh_user),
            "static_inventory": inventory}


class LifecycleManager(Manager):
    """The minor update (``client.updates``) or the major upgrade (``client.upgrades``)
    of a deployment: prepare, run, converge, external run."""

    def __init__(self, session: Session, kind: str, deployments: DeploymentManager) -> None:
        super().__init__(session)
        self._kind = kind
        self._deployments = deployments

    def _work(self, plan: str, work_dir: str | Path | None) -> str:
        check_plan_name(plan)
        work = Path(work_dir) if work_dir else self._session.data_dir / "deployments" / plan
        return str(work.expanduser().absolute())

    def _deploy_stage(self, kind: str, stage: int, plan: str, inputs: dict[str, Any],
                      progress: ProgressListener | None) -> dict[str, Any]:
        """Run the prepare (``stage`` 0) or converge (2) workflow of ``kind``; its
        deploy's DEPLOY_SUCCESS status record."""
        name = _WORKFLOWS[update.lifecycle(kind).kind][stage]
        listeners = [] if progress is None else [stack_progress_events(progress)]
        what = "prepare" if stage == 0 else "converge"
        execution = self._session.run_operation(name, inputs, listeners,
                                                interruptible=f"{kind.capitalize()} {what} of plan "
                                                f"{plan!r}")
        return dict((execution.output or {})["deployment"])

    def _playbooks_run(self, kind: str, plan: str, inputs: dict[str, Any],
                       external: bool) -> dict[str, Any]:
        """Run the run (or external run) workflow of ``kind``: the playbooks it ran, the
        limit as ansible-playbook got it, and the runs."""
        name = _WORKFLOWS[update.lifecycle(kind).kind][3 if external else 1]
        what = f"External {kind} run" if external else f"{kind.capitalize()} run"
        execution = self._session.run_operation(name, inputs,
                                                interruptible=f"{what} of plan {plan!r}")
        output = dict(execution.output or {})
        return {"playbooks": list(output["playbooks"]), "limit": output["limit"],
                "runs": list(output.get("runs") or [])}

    def prepare(self, plan: str, work_dir: str | Path | None = None,
                heat_type: str | None = None,
                progress: ProgressListener | None = None,
                **deploy: Any) -> dict[str, Any]:
        """The prepare of this kind (``overcloud update|upgrade prepare``).  ``deploy``:
        tripleoclient's deploy options it takes, the keyword arguments of
        :meth:`DeploymentManager.options <tripleo_flow.client.deploy.DeploymentManager.options>`
        (as :meth:`~tripleo_flow.client.deploy.DeploymentManager.create` takes them):
        ``environments`` (``-e``; with ``environment_directories``,
        ``--environment-directory``, whose files come first: they become the plan's
        user environments), ``baremetal_deployment``, ``run_validations``,
        ``overcloud_ssh_user`` and ``overcloud_ssh_key``.  The others are refused
        (:mod:`tripleo_flow.core.deploy.lifecycle_options`)."""
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir),
                  "heat_type": heat_type, **self._deployments.options(**deploy)}
        return self._deploy_stage(self._kind, 0, plan, inputs, progress)

    def run(self, plan: str, limit: str,
            playbooks: Sequence[str] | None = None,
            work_dir: str | Path | None = None, ansible_tags: str | None = None,
            ansible_skip_tags: str | None = None,
            ansible_connection: str | None = None,
            ansible_forks: int | None = None, ssh_user: str | None = None,
            static_inventory: str | Path | None = None,
            ansible_verbosity: int | None = None) -> dict[str, Any]:
        """The run of this kind (``overcloud update|upgrade run``).

        tripleoclient's options: ``ansible_forks`` (``--ansible-forks``), ``ssh_user``
        (``--ssh-user``: who Ansible logs in as; default the inventory's user),
        ``static_inventory`` (``--static-inventory``: an inventory file used in place of
        the config-download project's) and ``ansible_verbosity`` (ansible-playbook's
        ``-v`` count, 0 to 6: tripleoclient gives its own ``-v`` level).
        """
        update.parse_limit(limit)
        chosen = update.playbooks(list(playbooks) if playbooks is not None else None, self._kind)
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir), "limit": limit,
                  "playbooks": chosen, "ansible_tags": ansible_tags,
                  "ansible_skip_tags": ansible_skip_tags,
                  "ansible_connection": ansible_connection,
                  **_run_options(ansible_forks, ssh_user, static_inventory,
                                 ansible_verbosity)}
        return self._playbooks_run(self._kind, plan, inputs, external=False)

    def external_run(self, plan: str, limit: str | None = None,
                     work_dir: str | Path | None = None, ansible_tags: str | None = None,
                     ansible_skip_tags: str | None = None,
                     ansible_connection: str | None = None,
                     ansible_forks: int | None = None, ssh_user: str | None = None,
                     static_inventory: str | Path | None = None,
                     extra_vars: Sequence[str] | Mapping[str, Any] | None = None,
                     ansible_verbosity: int | None = None) -> dict[str, Any]:
        """Run the external steps of ``kind``, as TripleO's ``overcloud external-update
        run`` (``kind`` update: ``external_update_steps_playbook.yaml``) or
        ``external-upgrade run`` (upgrade: ``external_upgrade_steps_playbook.yaml``),
        on the hosts or roles ``limit`` when given; workflow
        ``tripleo.<kind>.external_run``.  ``extra_vars``: tripleoclient's ``-e`` values
        (``key=value`` pairs, a YAML/JSON object, or ``@FILE``, a file of this machine)
        or a mapping, merged and handed to ansible-playbook as an extra-vars file; the
        other options are those of :meth:`lifecycle_run`.

        :returns: ``playbooks``, ``limit`` (as ansible-playbook got it, or None) and
            ``runs``.
        :raises UpdateNotPrepared: no prepare of ``kind`` since the last converge.
        :raises InvalidInput: a bad option, or an ``@FILE`` that cannot be read.
        """
        update.parse_limit(limit, required=False)
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir), "limit": limit,
                  "ansible_tags": ansible_tags, "ansible_skip_tags": ansible_skip_tags,
                  "ansible_connection": ansible_connection,
                  **_run_options(ansible_forks, ssh_user, static_inventory,
                                 ansible_verbosity),
                  "extra_vars": run_options.parse_extra_vars(extra_vars, _read_local)}
        return self._playbooks_run(self._kind, plan, inputs, external=True)

    def converge(self, plan: str, work_dir: str | Path | None = None,
                 heat_type: str | None = None, run_ansible: bool = True,
                 ansible_connection: str | None = None,
                 ansible_tags: str | None = None,
                 ansible_skip_tags: str | None = None,
                 ansible_limit: str | None = None,
                 progress: ProgressListener | None = None,
                 ansible_forks: int | None = None,
                 ansible_verbosity: int | None = None,
                 **deploy: Any) -> dict[str, Any]:
        """The converge of this kind (``overcloud update|upgrade converge``;
        ``ansible_forks``: tripleoclient's ``--ansible-forks`` of its deploy;
        ``ansible_verbosity``: ansible-playbook's ``-v`` count; ``deploy``: the deploy
        options of :meth:`prepare`)."""
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir),
                  "heat_type": heat_type, "run_ansible": run_ansible,
                  "ansible_connection": ansible_connection, "ansible_tags": ansible_tags,
                  "ansible_skip_tags": ansible_skip_tags, "ansible_limit": ansible_limit,
                  "ansible_forks": run_options.check_forks(ansible_forks),
                  "ansible_verbosity": run_options.check_verbosity(ansible_verbosity),
                  **self._deployments.options(**deploy)}
        return self._deploy_stage(self._kind, 2, plan, inputs, progress)


__all__ = ["LifecycleManager"]
