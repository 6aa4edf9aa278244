"""Minor update and major upgrade operations of the Python API (mixed into
:class:`tripleo_flow.client.Client`): ``overcloud update prepare|run|converge``,
``overcloud upgrade prepare|run|converge``, ``external-update run`` and
``external-upgrade run``, each one named workflow (``workbooks/update.yaml``,
``workbooks/upgrade.yaml``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tripleo_flow import exceptions
from tripleo_flow.client import workbooks
from tripleo_flow.client.deploy import stack_progress_events
from tripleo_flow.core.deploy import run_options, update
from tripleo_flow.core.deploy.progress import ProgressListener
from tripleo_flow.plans.plan import check_plan_name

if TYPE_CHECKING:
    from tripleo_flow.engine.compile.runner import Listener
    from tripleo_flow.engine.store.executions import Execution

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


class UpdateMixin:
    """Prepare, run and converge a minor update or a major upgrade of a deployment."""

    data_dir: Path
    deploy_options: Callable[..., dict[str, Any]]  # DeployMixin's

    if TYPE_CHECKING:
        def run_operation(self, name: str, inputs: Mapping[str, Any],
                          listeners: Iterable[Listener] = (),
                          interruptible: str | None = None) -> Execution: ...

    def _work(self, plan: str, work_dir: str | Path | None) -> str:
        check_plan_name(plan)
        work = Path(work_dir) if work_dir else self.data_dir / "deployments" / plan
        return str(work.expanduser().absolute())

    def _deploy_stage(self, kind: str, stage: int, plan: str, inputs: dict[str, Any],
                      progress: ProgressListener | None) -> dict[str, Any]:
        """Run the prepare (``stage`` 0) or converge (2) workflow of ``kind``; its
        deploy's DEPLOY_SUCCESS status record."""
        name = _WORKFLOWS[update.lifecycle(kind).kind][stage]
        listeners = [] if progress is None else [stack_progress_events(progress)]
        what = "prepare" if stage == 0 else "converge"
        execution = self.run_operation(name, inputs, listeners,
                                       interruptible=f"{kind.capitalize()} {what} of plan "
                                                     f"{plan!r}")
        return dict((execution.output or {})["deployment"])

    def _playbooks_run(self, kind: str, plan: str, inputs: dict[str, Any],
                       external: bool) -> dict[str, Any]:
        """Run the run (or external run) workflow of ``kind``: the playbooks it ran, the
        limit as ansible-playbook got it, and the runs."""
        name = _WORKFLOWS[update.lifecycle(kind).kind][3 if external else 1]
        what = f"External {kind} run" if external else f"{kind.capitalize()} run"
        execution = self.run_operation(name, inputs,
                                       interruptible=f"{what} of plan {plan!r}")
        output = dict(execution.output or {})
        return {"playbooks": list(output["playbooks"]), "limit": output["limit"],
                "runs": list(output.get("runs") or [])}

    def update_prepare(self, plan: str, work_dir: str | Path | None = None,
                       heat_type: str | None = None,
                       progress: ProgressListener | None = None,
                       **options: Any) -> dict[str, Any]:
        """Prepare a minor update of ``plan``'s deployment, as TripleO's ``overcloud
        update prepare``: the workflow ``tripleo.update.prepare`` (named, persisted,
        resumable) puts THT's ``environments/lifecycle/update-prepare.yaml`` in the plan
        before the operator's environments and deploys the plan (stack update,
        outputs, config-download; no playbook); ``options``: the deploy options of
        :meth:`lifecycle_prepare`.

        :returns: the DEPLOY_SUCCESS status record of the deploy.
        :raises InvalidInput: the plan's templates have no update-prepare.yaml.
        """
        return self.lifecycle_prepare("update", plan, work_dir, heat_type, progress,
                                      **options)

    def upgrade_prepare(self, plan: str, work_dir: str | Path | None = None,
                        heat_type: str | None = None,
                        progress: ProgressListener | None = None,
                        **options: Any) -> dict[str, Any]:
        """Prepare a major upgrade of ``plan``'s deployment, as TripleO's ``overcloud
        upgrade prepare``: the workflow ``tripleo.upgrade.prepare`` puts THT's
        ``environments/lifecycle/upgrade-prepare.yaml`` in the plan before the
        operator's environments (in place of an update's) and deploys the plan
        (``options``: the deploy options of :meth:`lifecycle_prepare`).  Unlike
        tripleoclient's, it creates no SSH user on the servers (no ``enable_ssh_admin``):
        Ansible logs in as ``overcloud_ssh_user`` with ``overcloud_ssh_key``, which must
        already work, as for :meth:`deploy`.

        :returns: the DEPLOY_SUCCESS status record of the deploy.
        :raises InvalidInput: the plan's templates have no upgrade-prepare.yaml.
        """
        return self.lifecycle_prepare("upgrade", plan, work_dir, heat_type, progress,
                                      **options)

    def lifecycle_prepare(self, kind: str, plan: str, work_dir: str | Path | None = None,
                          heat_type: str | None = None,
                          progress: ProgressListener | None = None,
                          **deploy: Any) -> dict[str, Any]:
        """The prepare of ``kind`` (update or upgrade): :meth:`update_prepare`,
        :meth:`upgrade_prepare`.  ``deploy``: tripleoclient's deploy options it takes,
        the keyword arguments of :meth:`deploy_options` (as :meth:`deploy` takes them):
        ``environments`` (``-e``; with ``environment_directories``,
        ``--environment-directory``, whose files come first: they become the plan's
        user environments), ``baremetal_deployment``, ``run_validations``,
        ``overcloud_ssh_user`` and ``overcloud_ssh_key``.  The others are refused
        (:mod:`tripleo_flow.core.deploy.lifecycle_options`)."""
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir),
                  "heat_type": heat_type, **self.deploy_options(**deploy)}
        return self._deploy_stage(kind, 0, plan, inputs, progress)

    def update_run(self, plan: str, limit: str, playbooks: Sequence[str] | None = None,
                   **options: Any) -> dict[str, Any]:
        """Run the minor update playbooks of ``plan`` on the hosts or roles ``limit``
        (required), as TripleO's ``overcloud update run``: config-download's
        ``update_steps_playbook.yaml``, or ``playbooks`` one after another
        (``options``: those of :meth:`lifecycle_run`).

        :returns: ``playbooks``, ``limit`` (as ansible-playbook got it) and ``runs``.
        :raises UpdateNotPrepared: no update prepare since the last converge.
        :raises InvalidInput: no limit, or a playbook that is not a file name.
        """
        return self.lifecycle_run("update", plan, limit, playbooks, **options)

    def upgrade_run(self, plan: str, limit: str, playbooks: Sequence[str] | None = None,
                    **options: Any) -> dict[str, Any]:
        """Run the major upgrade playbooks of ``plan`` on the hosts or roles ``limit``
        (required), as TripleO's ``overcloud upgrade run``: config-download's
        ``upgrade_steps_playbook.yaml``, ``deploy_steps_playbook.yaml`` and
        ``post_upgrade_steps_playbook.yaml``, or ``playbooks``, one after another
        (``options``: those of :meth:`lifecycle_run`).

        :returns: ``playbooks``, ``limit`` (as ansible-playbook got it) and ``runs``.
        :raises UpdateNotPrepared: no upgrade prepare since the last converge.
        :raises InvalidInput: no limit, or a playbook that is not a file name.
        """
        return self.lifecycle_run("upgrade", plan, limit, playbooks, **options)

    def lifecycle_run(self, kind: str, plan: str, limit: str,
                      playbooks: Sequence[str] | None = None,
                      work_dir: str | Path | None = None, ansible_tags: str | None = None,
                      ansible_skip_tags: str | None = None,
                      ansible_connection: str | None = None,
                      ansible_forks: int | None = None, ssh_user: str | None = None,
                      static_inventory: str | Path | None = None,
                      ansible_verbosity: int | None = None) -> dict[str, Any]:
        """The run of ``kind``: :meth:`update_run`, :meth:`upgrade_run`.

        tripleoclient's options: ``ansible_forks`` (``--ansible-forks``), ``ssh_user``
        (``--ssh-user``: who Ansible logs in as; default the inventory's user),
        ``static_inventory`` (``--static-inventory``: an inventory file used in place of
        the config-download project's) and ``ansible_verbosity`` (ansible-playbook's
        ``-v`` count, 0 to 6: tripleoclient gives its own ``-v`` level).
        """
        update.parse_limit(limit)
        chosen = update.playbooks(list(playbooks) if playbooks is not None else None, kind)
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir), "limit": limit,
                  "playbooks": chosen, "ansible_tags": ansible_tags,
                  "ansible_skip_tags": ansible_skip_tags,
                  "ansible_connection": ansible_connection,
                  **_run_options(ansible_forks, ssh_user, static_inventory,
                                 ansible_verbosity)}
        return self._playbooks_run(kind, plan, inputs, external=False)

    def external_run(self, kind: str, plan: str, limit: str | None = None,
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
        return self._playbooks_run(kind, plan, inputs, external=True)

    def update_converge(self, plan: str, work_dir: str | Path | None = None,
                        **options: Any) -> dict[str, Any]:
        """Converge a minor update of ``plan``, as TripleO's ``overcloud update
        converge``: the workflow ``tripleo.update.converge`` takes update-prepare.yaml
        out of the plan (update-converge.yaml in its place where the templates have
        it) and deploys the plan [running the deploy steps playbook] (``options``:
        those of :meth:`lifecycle_converge`).

        :returns: the DEPLOY_SUCCESS status record of the deploy.
        """
        return self.lifecycle_converge("update", plan, work_dir, **options)

    def upgrade_converge(self, plan: str, work_dir: str | Path | None = None,
                         **options: Any) -> dict[str, Any]:
        """Converge a major upgrade of ``plan``, as TripleO's ``overcloud upgrade
        converge``: the workflow ``tripleo.upgrade.converge`` takes upgrade-prepare.yaml
        out of the plan (upgrade-converge.yaml in its place where the templates have
        it) and deploys the plan [running the deploy steps playbook] (``options``:
        those of :meth:`lifecycle_converge`).

        :returns: the DEPLOY_SUCCESS status record of the deploy.
        """
        return self.lifecycle_converge("upgrade", plan, work_dir, **options)

    def lifecycle_converge(self, kind: str, plan: str, work_dir: str | Path | None = None,
                           heat_type: str | None = None, run_ansible: bool = True,
                           ansible_connection: str | None = None,
                           ansible_tags: str | None = None,
                           ansible_skip_tags: str | None = None,
                           ansible_limit: str | None = None,
                           progress: ProgressListener | None = None,
                           ansible_forks: int | None = None,
                           ansible_verbosity: int | None = None,
                           **deploy: Any) -> dict[str, Any]:
        """The converge of ``kind``: :meth:`update_converge`, :meth:`upgrade_converge`
        (``ansible_forks``: tripleoclient's ``--ansible-forks`` of its deploy;
        ``ansible_verbosity``: ansible-playbook's ``-v`` count; ``deploy``: the deploy
        options of :meth:`lifecycle_prepare`)."""
        inputs = {"plan": plan, "work_dir": self._work(plan, work_dir),
                  "heat_type": heat_type, "run_ansible": run_ansible,
                  "ansible_connection": ansible_connection, "ansible_tags": ansible_tags,
                  "ansible_skip_tags": ansible_skip_tags, "ansible_limit": ansible_limit,
                  "ansible_forks": run_options.check_forks(ansible_forks),
                  "ansible_verbosity": run_options.check_verbosity(ansible_verbosity),
                  **self.deploy_options(**deploy)}
        return self._deploy_stage(kind, 2, plan, inputs, progress)


__all__ = ["UpdateMixin"]
