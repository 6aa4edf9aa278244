"""Minor update and major upgrade actions (:mod:`tripleo_flow.core.deploy.update`): put a plan in
the prepare or converge stage of a kind (its lifecycle environment in the
``environments`` list), and check that one is prepared before ``update run``,
``upgrade run`` or an external run.

The stack update is the deploy workflow and the playbooks are ``update.run_playbook``:
the workflows of ``workbooks/update.yaml`` and ``workbooks/upgrade.yaml`` compose them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.actions.deploy import CONFIG_DIR
from tripleo_flow.common import safe_yaml
from tripleo_flow.core.deploy import run_options, update
from tripleo_flow.engine.lang.action import InputPath, WorkDir
from tripleo_flow.plans.plan import PlanRepository


class SetUpdateStage(Action):
    """Make the lifecycle environment of ``stage`` (prepare or converge) of ``kind``
    (update or upgrade) part of the plan, before the operator's environments, and every
    other lifecycle environment not.

    Refused, with nothing changed, when the plan's templates lack the prepare environment.
    """

    rerun = Rerun.CONVERGES

    def execute(self, plan: str, stage: str, kind: str = "update") -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.hold_plan(plan):
            env = repo.environment(plan)
            current = list(env.get("environments") or [])
            files = self.context.store.list_objects(plan, prefix="environments/lifecycle/")
            wanted = update.with_stage(current, stage, files, kind)
            if stage == "converge":
                update.check_converge(self._documents(plan, env, wanted, kind), kind)
            # A re-run (a resumed job) keeps the first run's list to put back.
            record = self.context.undo_record(lambda: {"previous": current})
            if wanted != current:
                env["environments"] = wanted
                repo.save_environment(plan, env)
        return {**record, "stage": stage, "kind": kind, "environments": wanted}

    def _documents(self, plan: str, env: dict[str, Any], entries: list[Any],
                   kind: str) -> list[tuple[str, Any]]:
        """The environments the converge deploy sends (the plan's own parameters
        first), loaded, for :func:`~tripleo_flow.core.deploy.update.check_converge`."""
        documents: list[tuple[str, Any]] = [("plan parameters", env)]
        if update.lifecycle(kind).kind != "upgrade":
            return documents
        for entry in update.sent_environments(entries, kind):
            path = entry.get("path") if isinstance(entry, dict) else None
            if isinstance(entry, dict) and "data" in entry:
                documents.append((path or "inline environment", entry["data"]))
            elif path:
                try:
                    data = self.context.store.get_object(plan, path)
                except exceptions.ObjectNotFound:
                    continue  # the deploy names it missing
                documents.append((path, safe_yaml.load_yaml(data, path)))
        return documents

    def revert(self, plan: str, result: Any, **kwargs: Any) -> None:
        """Put back the plan's environments list as it was before.  Safe to run twice."""
        if not isinstance(result, dict) or "previous" not in result:
            return
        repo = PlanRepository(self.context.store)
        if not repo.exists(plan):
            return
        with self.context.locks.hold(plan):
            repo.set_environments(plan, result["previous"])


class CheckUpdatePrepared(Action):
    """Check that a prepare of ``kind`` (update or upgrade) is in place for the plan (its
    prepare ran and no converge since) and that its config-download project is in
    ``work_dir``; return the project, the playbooks to run and the Ansible limit.

    ``external``: the kind's external steps playbook (``external-<kind> run``), whose
    limit is optional and whose playbook is fixed, as tripleoclient's.

    The run's Ansible options (:mod:`tripleo_flow.core.deploy.run_options`) are checked here,
    before anything runs: ``extra_vars`` only for an external run, as tripleoclient.

    :raises UpdateNotPrepared: nothing of that kind is prepared (run its prepare first).
    :raises InvalidInput: a bad option, or a ``static_inventory`` that is not a file.
    """

    rerun = Rerun.READS

    def execute(self, plan: str, work_dir: WorkDir, limit: str | None = None,
                playbooks: list[str] | None = None, kind: str = "update",
                external: bool = False, ansible_forks: int | None = None,
                extra_vars: dict[str, Any] | None = None, ssh_user: str | None = None,
                static_inventory: InputPath | None = None,
                ansible_verbosity: int | None = None) -> dict[str, Any]:
        of = update.lifecycle(kind)
        parsed_limit = update.parse_limit(limit, required=not external)
        chosen = list(of.external) if external else update.playbooks(playbooks, kind)
        run_options.check_forks(ansible_forks)
        run_options.check_ssh_user(ssh_user)
        run_options.check_verbosity(ansible_verbosity)
        if run_options.check_extra_vars(extra_vars) and not external:
            raise exceptions.InvalidInput(
                f"extra_vars are for the external {kind} run only, as tripleoclient's "
                f"{kind} run takes none.")
        if static_inventory is not None and not Path(static_inventory).is_file():
            raise exceptions.InvalidInput(
                f"Static inventory {static_inventory!r} is not a file: give an existing "
                "Ansible inventory, or none for the config-download project's.")
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        if not update.is_prepared(repo.environment(plan).get("environments") or [], kind):
            raise exceptions.UpdateNotPrepared(plan, kind)
        project = Path(work_dir) / CONFIG_DIR
        missing = [p for p in chosen if not (project / p).is_file()]
        if missing:
            raise exceptions.InvalidInput(
                f"The config-download project {str(project)!r} of plan {plan!r} has no "
                f"{', '.join(missing)}: run {kind} prepare again (it writes the project), "
                "or name playbooks it has.")
        return {"config_download": {"path": str(project)}, "playbooks": chosen,
                "limit": parsed_limit}
