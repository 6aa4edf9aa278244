"""Minor update actions (:mod:`tripleo_flow.core.update`): put a plan in the prepare or
converge stage (its lifecycle environment in the ``environments`` list), and check
that an update is prepared before ``update run``.

The stack update is the deploy workflow and the playbooks are ``deploy.run_ansible``:
the workflows of ``workbooks/update.yaml`` compose them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tripleo_flow import exceptions
from tripleo_flow.actions.base import Action, Rerun
from tripleo_flow.actions.deploy import CONFIG_DIR
from tripleo_flow.actions.paths import WorkDir
from tripleo_flow.core import names, update
from tripleo_flow.plans.plan import PlanRepository


class SetUpdateStage(Action):
    """Make the lifecycle environment of ``stage`` (prepare or converge) part of the
    plan, before the operator's environments, and the other stage's not.

    Refused, with nothing changed, when the plan's templates lack update-prepare.yaml.
    """

    rerun = Rerun.CONVERGES
    default_provides = names.UPDATE_STAGE

    def execute(self, plan: str, stage: str) -> dict[str, Any]:
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        with self.context.locks.hold(plan):
            env = repo.environment(plan)
            current = list(env.get("environments") or [])
            files = self.context.store.list_objects(plan, prefix="environments/lifecycle/")
            wanted = update.with_stage(current, stage, files)
            # A re-run (a resumed job) keeps the first run's list to put back.
            record = self.context.undo_record(lambda: {"previous": current})
            if wanted != current:
                env["environments"] = wanted
                repo.save_environment(plan, env)
        return {**record, "stage": stage, "environments": wanted}

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
    """Check that a minor update is prepared for the plan (``update prepare`` ran and
    no ``converge`` since) and that its config-download project is in ``work_dir``;
    return the project, the playbooks to run and the Ansible limit.

    :raises UpdateNotPrepared: no update is prepared (run update prepare first).
    """

    rerun = Rerun.READS
    default_provides = names.UPDATE_RUN

    def execute(self, plan: str, work_dir: WorkDir, limit: str | None = None,
                playbooks: list[str] | None = None) -> dict[str, Any]:
        parsed_limit = update.parse_limit(limit)
        chosen = update.playbooks(playbooks)
        repo = PlanRepository(self.context.store)
        repo.require(plan)
        if not update.is_prepared(repo.environment(plan).get("environments") or []):
            raise exceptions.UpdateNotPrepared(plan)
        project = Path(work_dir) / CONFIG_DIR
        missing = [p for p in chosen if not (project / p).is_file()]
        if missing:
            raise exceptions.InvalidInput(
                f"The config-download project {str(project)!r} of plan {plan!r} has no "
                f"{', '.join(missing)}: run update prepare again (it writes the project), "
                "or name playbooks it has.")
        return {"config_download": {"path": str(project)}, "playbooks": chosen,
                "limit": parsed_limit}
